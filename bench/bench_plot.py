"""Plots for the benchmarks: a grouped bar chart of tessera beside its same-run reference.

Each benchmark saves ``bench/<name>.png`` next to the table it prints (matplotlib, from
bench/requirements.txt, which ``make bench`` installs); without matplotlib it says so and
saves nothing."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def save_bars(name, title, labels, series, ylabel, log=False):
    """Save ``bench/<name>.png``: for each label one bar per series (name -> values; NaN or
    None values are left out). Returns the path, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -r bench/requirements.txt): no plot")
        return None
    path = os.path.join(HERE, f"{name}.png")
    n = len(series)
    width = 0.8 / max(n, 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(labels) + 2), 4.2))
    for k, (sname, values) in enumerate(series.items()):
        xs, ys = [], []
        for i, v in enumerate(values):
            if v is None or v != v:
                continue
            xs.append(i + (k - (n - 1) / 2) * width)
            ys.append(v)
        ax.bar(xs, ys, width=width, label=sname)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot saved to {path}")
    return path


def save_ratio_bars(rows, path, title, xlabel, log=False):
    """Save a horizontal bar per row of ``rows`` (dicts with name, threads, ref, ratio and an
    optional target): tessera / reference, green where the ratio reaches the target (1.0 by
    default). Rows without a ratio are left out."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -r bench/requirements.txt): no plot")
        return None
    rows = [r for r in rows if r.get("ratio") is not None]
    labels = [f"{r['name']} [{r['threads']}t]\nvs {r['ref']}" for r in rows]
    ratios = [r["ratio"] for r in rows]
    colors = ["tab:green" if x >= (r.get("target") or 1.0) else "tab:orange" for x, r in zip(ratios, rows)]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.5))
    ax.barh(range(len(rows)), ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot saved to {path}")
    return path
