"""The ``tessera`` command: build, lower, dump and explore kernels written in Python files.

::

    tessera build kernels.py::add --target c -o add.so      # compile; export the library
    tessera build kernels.py --emit c                      # print the generated source
    tessera lower kernels.py::add --stage flatten          # the IR after a stage
    tessera dump kernels.py::add --out ir/                 # the IR after every pass, as files
    tessera explore kernels.py::add -o add.html            # the same as one HTML page
    tessera bench                                          # the repository's benchmarks

Also ``python -m tessera``. Exit status: 0 on success, 1 when the kernel has an error (the
located diagnostic is printed), 2 for a wrong command line or a file without the named kernel.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Any, List, Optional, Sequence

from .kernels import CommandError, Kernel, default_target, lower_with_passes, pick_kernel

_STAGES = ("begin", "normalize", "flatten", "loop", "cleanup", "legalize", "split", "finalize", "end")
_EMITS = ("c", "cuda", "ptx", "asm", "tvmscript")


def _build(kernel: Kernel, target: str) -> Any:
    if kernel.dialect == "dsl":
        from ..dsl import BuildManager

        return BuildManager(target=target).build(kernel.obj)
    from .. import driver

    return driver.build(kernel.obj, target=target)


def _emit(kernel: Kernel, built: Any, fmt: str) -> str:
    if fmt == "tvmscript":
        if kernel.dialect == "dsl":
            from ..dsl.build_manager import collect_module

            return collect_module(kernel.obj)[0].script()
        return kernel.obj.script()
    if kernel.dialect == "dsl":
        if fmt == "c":
            return built.c_code
        raise CommandError(f"--emit {fmt} is not available for a vector DSL kernel; use c or tvmscript")
    if fmt in ("cuda", "ptx"):
        devices = built.imported_modules
        if not devices:
            raise CommandError(f"--emit {fmt} needs a CUDA build: add --target cuda")
        return devices[0].get_source("" if fmt == "cuda" else "ptx")
    return built.get_source(fmt)


def cmd_build(args: argparse.Namespace) -> int:
    kernel = pick_kernel(args.file)
    target = args.target or default_target(kernel)
    built = _build(kernel, target)
    if args.emit:
        text = _emit(kernel, built, args.emit)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if args.output:
        out = os.path.abspath(args.output)
        if kernel.dialect == "dsl":
            shutil.copyfile(built.lib_path, out)
            os.chmod(out, 0o644)
        else:
            built.export_library(out)
        print(f"wrote {out}", file=sys.stderr if args.emit else sys.stdout)
    if not args.emit and not args.output:
        print(f"built {kernel.name} for {target}: {built.lib_path}")
    return 0


def cmd_lower(args: argparse.Namespace) -> int:
    kernel = pick_kernel(args.file)
    target = args.target or default_target(kernel)
    if kernel.dialect == "dsl":
        from ..dsl import BuildManager

        bm = BuildManager(target=target)
        lw, ctx, _ = bm._lowerer(kernel.obj, None)
        with ctx:
            lw.run_to(args.stage)
        mod = lw.mod
    else:
        from .. import driver

        mod = driver.lower(kernel.obj, target=target, stage=args.stage, auto_schedule=True)
    sys.stdout.write(mod.script().rstrip("\n") + "\n")
    return 0


def cmd_dump(args: argparse.Namespace) -> int:
    kernel = pick_kernel(args.file)
    target = args.target or default_target(kernel)
    lowering = lower_with_passes(kernel, target)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for step in lowering.steps:
        if step.index and not step.changed and not args.all:
            continue
        name = "000_input.py" if step.index == 0 else f"{step.index:03d}_{step.stage}_{step.name}.py"
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(step.text)
        written.append(name)
    if lowering.source:
        name = f"{len(lowering.steps):03d}_{lowering.source_name}"
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(lowering.source)
        written.append(name)
    with open(os.path.join(args.out, "passes.tsv"), "w", encoding="utf-8") as f:
        f.write("index\tstage\tpass\tms\tchanged\tskipped\n")
        for s in lowering.steps[1:]:
            f.write(f"{s.index}\t{s.stage}\t{s.name}\t{s.seconds * 1e3:.4f}\t{int(s.changed)}\t{int(s.skipped)}\n")
    print(f"wrote {len(written)} files and passes.tsv to {os.path.abspath(args.out)}")
    return 0


def cmd_explore(args: argparse.Namespace) -> int:
    from .explorer import render

    kernel = pick_kernel(args.file)
    target = args.target or default_target(kernel)
    lowering = lower_with_passes(kernel, target)
    out = os.path.abspath(args.output or f"{kernel.name}.html")
    with open(out, "w", encoding="utf-8") as f:
        f.write(render(lowering))
    changed = sum(1 for s in lowering.steps[1:] if s.changed)
    print(f"wrote {out} ({len(lowering.steps) - 1} passes, {changed} changed); open it in a browser")
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    try:
        from .. import tune as tune_mod  # noqa: F401
    except ImportError:
        raise CommandError("tessera tune needs the tuner (tessera.tune), which this version of "
                           "tessera does not have yet; `tessera build` uses the default schedule")
    kernel = pick_kernel(args.file)
    if kernel.dialect != "tir":
        raise CommandError("tessera tune tunes TensorIR kernels (@T.prim_func or IRModules)")
    result = tune_mod.tune(kernel.obj, target=args.target or "c", trials=args.trials,
                           database=args.database, plot=args.plot)
    print(result)
    print("\n".join(result.trace.as_python()))
    if args.database:
        print(f"records in {os.path.abspath(args.database)}; build with them: "
              f"with tessera.tune.apply({args.database!r}): tessera.build(...)")
    return 0


def _bench_dir() -> Optional[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.join(os.getcwd(), "bench"),
              os.path.normpath(os.path.join(here, "..", "..", "..", "bench"))):
        if os.path.isdir(d):
            return d
    return None


def cmd_bench(args: argparse.Namespace) -> int:
    d = _bench_dir()
    if d is None:
        raise CommandError("no bench/ folder found: run `tessera bench` from a tessera source tree")
    names = sorted(f for f in os.listdir(d) if f.startswith("bench_") and f.endswith(".py"))
    if args.list:
        for n in names:
            print(n[len("bench_"):-3])
        return 0
    chosen = names
    if args.names:
        chosen = []
        for want in args.names:
            fname = want if want.endswith(".py") else f"bench_{want}.py"
            if fname not in names:
                raise CommandError(f"no benchmark '{want}'; benchmarks: "
                                   + ", ".join(n[len('bench_'):-3] for n in names))
            chosen.append(fname)
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    status = 0
    for n in chosen:
        print(f"== {n}", flush=True)
        rc = subprocess.call([sys.executable, os.path.join(d, n)], env=env)
        status = status or rc
    return status


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera",
        description="Build, lower, dump and explore tessera kernels. FILE is a Python file "
                    "defining @S.prim_func (vector DSL) or @T.prim_func / @I.ir_module (TensorIR) "
                    "kernels; FILE::NAME picks one.")
    p.add_argument("--version", action="version", version=f"tessera {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def kernel_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("file", metavar="FILE[::NAME]", help="a Python file and, optionally, a kernel in it")
        sp.add_argument("--target", "-t", default=None,
                        help="c, llvm, cuda (TensorIR; default c) or a vector target such as X2_1204 "
                             "(DSL; default X2_1204)")

    sp = sub.add_parser("build", help="compile a kernel; print its code or export the library",
                        description="Compile a kernel. With --emit, print the generated code; with -o, "
                                    "write the compiled library.")
    kernel_args(sp)
    sp.add_argument("-o", "--output", help="write the compiled shared library here")
    sp.add_argument("--emit", choices=_EMITS, help="print the generated code in this form")
    sp.set_defaults(run=cmd_build)

    sp = sub.add_parser("lower", help="print the IR after a stage of the pipeline")
    kernel_args(sp)
    sp.add_argument("--stage", "-s", default="cleanup", choices=_STAGES, help="stop after this stage (default cleanup)")
    sp.set_defaults(run=cmd_lower)

    sp = sub.add_parser("dump", help="write the IR after every pass to a folder")
    kernel_args(sp)
    sp.add_argument("--out", "-o", required=True, help="the folder to write")
    sp.add_argument("--all", action="store_true", help="also write the passes that changed nothing")
    sp.set_defaults(run=cmd_dump)

    sp = sub.add_parser("explore", help="write an HTML page showing the IR after every pass")
    kernel_args(sp)
    sp.add_argument("-o", "--output", help="the page to write (default NAME.html)")
    sp.set_defaults(run=cmd_explore)

    sp = sub.add_parser("tune", help="tune a TensorIR kernel (needs tessera.tune)")
    kernel_args(sp)
    sp.add_argument("--trials", type=int, default=64)
    sp.add_argument("--database", default=None, help="a SQLite file of tuning records")
    sp.add_argument("--plot", default=None, help="save the best time against trials to this PNG")
    sp.set_defaults(run=cmd_tune)

    sp = sub.add_parser("bench", help="run the repository's benchmarks (bench/bench_*.py)")
    sp.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    sp.add_argument("--list", action="store_true", help="list the benchmarks")
    sp.set_defaults(run=cmd_bench)
    return p


def _version() -> str:
    try:
        from .. import __version__

        return __version__
    except Exception:  # pragma: no cover - an unbuilt tree
        return "unknown"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; returns the exit status."""
    parser = make_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    from ..error import TesseraError

    try:
        return int(args.run(args) or 0)
    except CommandError as e:
        print(f"tessera {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (TesseraError, TypeError, ValueError, RuntimeError, SyntaxError, NameError,
            AttributeError, ImportError) as e:
        # Kernel errors: the message already shows file:line, the line and a caret.
        print(f"tessera {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def entry_point() -> None:
    """The console script."""
    sys.exit(main())


__all__: List[str] = ["main", "entry_point", "make_parser"]
