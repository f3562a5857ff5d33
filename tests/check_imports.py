#!/usr/bin/env python3
"""Checks that the modules of python/tessera import each other without circles.

Every module is read with ast; its module-level imports (also those under module-level `if`,
`try` and `with`, but not those inside functions or classes, and not those under
`if TYPE_CHECKING:`) are edges to the modules they name: `from . import x` and `from .a import x`
name the submodule x when there is one, else the module a; `import a.b` names a.b. An import
inside a function runs when the function is called, after every module has loaded; it is the
way to reach a higher layer, and is not an edge. A circle among the edges (a strongly connected
component of more than one module, or a module importing itself) is an error.

Usage: python tests/check_imports.py [--graph] [ROOT]   (exit status 1 on a circle)
"""

from __future__ import annotations

import argparse
import ast
import os
import sys


EXTENSIONS = ("tessera._core",)


def modules(package_dir: str, package: str) -> dict[str, str]:
    """Module name -> file, for every .py file under package_dir."""
    found = {}
    root = os.path.dirname(package_dir)
    for dirpath, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        if "__init__.py" not in files:
            dirs[:] = []
            continue
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            found[".".join(rel)] = os.path.join(dirpath, name)
    assert any(m == package for m in found), f"{package_dir} is not a package"
    # Compiled extensions (tessera._core) are modules too, and import nothing of the package;
    # named even before a build has made them.
    for ext in EXTENSIONS:
        found.setdefault(ext, "")
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(body):
    """The Import/ImportFrom statements that run when the module is imported."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _module_level_imports(part)
            for handler in node.handlers:
                yield from _module_level_imports(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level_imports(node.body)


def edges(name: str, path: str, known: dict[str, str]) -> list[tuple[str, int]]:
    """(imported module, line) for the module-level imports of `name` that stay inside the package."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_package = os.path.basename(path) == "__init__.py"
    out = []
    for node in _module_level_imports(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    out.append((alias.name, node.lineno))
            continue
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in known:
                out.append((sub, node.lineno))
            elif target in known:
                out.append((target, node.lineno))
    return out


def circles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components with a circle (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted({t for t, _ in graph[start]})))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted({t for t, _ in graph.get(child, [])}))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                self_loop = any(t == node for t, _ in graph.get(node, []))
                if len(component) > 1 or self_loop:
                    result.append(sorted(component))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--graph", action="store_true", help="print every edge")
    args = parser.parse_args(argv)
    package_dir = os.path.join(args.root, "python", "tessera")
    known = modules(package_dir, "tessera")
    graph = {name: edges(name, path, known) if path else [] for name, path in known.items()}
    if args.graph:
        for name in sorted(graph):
            for target, line in graph[name]:
                print(f"{name}:{line} -> {target}")
    found = circles(graph)
    for component in found:
        members = set(component)
        print(f"import circle among {len(component)} modules:", file=sys.stderr)
        for name in component:
            for target, line in graph[name]:
                if target in members:
                    print(f"  {os.path.relpath(known[name], args.root)}:{line}: {name} -> {target}",
                          file=sys.stderr)
    if found:
        print("break each circle: move what both sides need into a lower module, or import "
              "inside the function that needs it", file=sys.stderr)
        return 1
    print(f"no import circles among {len(known)} modules of python/tessera")
    return 0


if __name__ == "__main__":
    sys.exit(main())
