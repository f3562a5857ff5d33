#!/usr/bin/env python3
"""Checks the C++ layer order of ARCHITECTURE.md: a layer includes only the layers below it.

Every file under src/<layer>/ and include/tessera/<layer>/ is read; each `#include "tessera/<other>/..."`
must name a layer at or below its own. The order, lowest first, is the table of ARCHITECTURE.md with
the driver (stage table, per-target pipelines, build and load) above target and runtime, and the
nanobind layer (src/bindings) on top. A folder that is not a known layer is an error too, so that a
new layer is placed in the order on purpose.

Usage: python tests/check_layers.py [--counts] [ROOT]   (exit status 1 on a violation)
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

LAYERS = [
    "support",
    "ir",
    "arith",
    "te",
    "schedule",
    "autoschedule",
    "transform",
    "target",
    "runtime",
    "driver",
    "bindings",
]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s*"tessera/([A-Za-z0-9_]+)/')
SOURCE_SUFFIXES = (".cc", ".h", ".cpp", ".hpp")


def source_files(root: str):
    """(layer, path) for every C++ file of src/ and include/tessera/."""
    for top in (os.path.join(root, "src"), os.path.join(root, "include", "tessera")):
        if not os.path.isdir(top):
            continue
        for dirpath, _dirs, files in os.walk(top):
            rel = os.path.relpath(dirpath, top)
            if rel == ".":
                continue
            layer = rel.split(os.sep)[0]
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield layer, os.path.join(dirpath, name)


def check(root: str):
    """(violations, counts): violations are messages; counts maps (from, to) to include counts."""
    violations: list[str] = []
    counts: collections.Counter = collections.Counter()
    unknown: set[str] = set()
    for layer, path in source_files(root):
        if layer not in RANK:
            unknown.add(layer)
            continue
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                counts[(layer, target)] += 1
                rel = os.path.relpath(path, root)
                if target not in RANK:
                    violations.append(f"{rel}:{lineno}: includes unknown layer '{target}'")
                elif RANK[target] > RANK[layer]:
                    violations.append(
                        f"{rel}:{lineno}: layer '{layer}' includes the higher layer '{target}': "
                        f"{line.strip()}"
                    )
    for layer in sorted(unknown):
        violations.append(
            f"folder '{layer}' is not a layer of tests/check_layers.py (add it to LAYERS in the "
            f"order of ARCHITECTURE.md)"
        )
    return violations, counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    parser.add_argument("--counts", action="store_true",
                        help="print the include counts between layers")
    args = parser.parse_args(argv)
    violations, counts = check(args.root)
    if args.counts:
        for (src, dst), n in sorted(counts.items(), key=lambda kv: (RANK.get(kv[0][0], 99),
                                                                     RANK.get(kv[0][1], 99))):
            print(f"{n:5d}  {src} -> {dst}")
    for v in violations:
        print(v, file=sys.stderr)
    if violations:
        print(f"check_layers: {len(violations)} include(s) against the layer order "
              f"({' < '.join(LAYERS)})", file=sys.stderr)
        return 1
    print(f"check_layers: ok ({sum(counts.values())} includes, layer order "
          f"{' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
