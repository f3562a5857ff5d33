"""Finding the kernels of a Python file and lowering them pass by pass, for the ``tessera`` command.

A kernel file is an ordinary Python file that defines ``@S.prim_func`` (vector DSL) or
``@T.prim_func`` functions, ``@I.ir_module`` classes or IRModules. ``FILE::NAME`` picks one of
them by its Python name; without ``::NAME`` the file must define exactly one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import runpy
import sys
import tempfile
from typing import Any, List, Optional, Tuple

from .. import _core


class CommandError(Exception):
    """A mistake in the command line or the kernel file's contents (exit status 2)."""


@dataclasses.dataclass
class Kernel:
    """One kernel of a file: its Python name, its dialect ("dsl" or "tir") and the object."""

    name: str
    dialect: str
    obj: Any
    path: str


def _dialect(obj: Any) -> Optional[str]:
    from ..dsl.function import PrimFuncObject

    if isinstance(obj, PrimFuncObject):
        return "dsl"
    if isinstance(obj, (_core.PrimFunc, _core.IRModule)):
        return "tir"
    return None


def split_spec(spec: str) -> Tuple[str, Optional[str]]:
    """``"file.py::name"`` -> ("file.py", "name"); ``"file.py"`` -> ("file.py", None)."""
    if "::" in spec:
        path, name = spec.rsplit("::", 1)
        if not name:
            raise CommandError(f"'{spec}': no kernel name after '::'")
        return path, name
    return spec, None


def load_kernels(path: str) -> List[Kernel]:
    """Every kernel that running ``path`` defines at module level, in definition order."""
    if not os.path.exists(path):
        raise CommandError(f"no such file: '{path}'")
    if not os.path.isfile(path):
        raise CommandError(f"'{path}' is not a file")
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    try:
        # run_name keeps the file's `if __name__ == "__main__":` block from running.
        # What the file prints goes to stderr, so that `--emit` output stays clean.
        with contextlib.redirect_stdout(sys.stderr):
            namespace = runpy.run_path(path, run_name="__tessera_kernels__")
    finally:
        if added:
            sys.path.remove(directory)
    kernels = []
    for name, obj in namespace.items():
        if name.startswith("__"):
            continue
        dialect = _dialect(obj)
        if dialect is not None:
            kernels.append(Kernel(name, dialect, obj, path))
    return kernels


def pick_kernel(spec: str) -> Kernel:
    """The kernel that ``FILE[::NAME]`` names."""
    path, name = split_spec(spec)
    kernels = load_kernels(path)
    if not kernels:
        raise CommandError(f"'{path}' defines no kernel: no @S.prim_func, @T.prim_func, "
                           "@I.ir_module or IRModule at module level")
    if name is None:
        if len(kernels) > 1:
            kernels = _entry_kernels(kernels)
        if len(kernels) > 1:
            names = ", ".join(k.name for k in kernels)
            raise CommandError(f"'{path}' defines {len(kernels)} kernels ({names}); "
                               f"name one as {path}::NAME")
        return kernels[0]
    for k in kernels:
        if k.name == name:
            return k
    names = ", ".join(k.name for k in kernels)
    raise CommandError(f"'{path}' has no kernel named '{name}'; kernels: {names}")


def _entry_kernels(kernels: List[Kernel]) -> List[Kernel]:
    """Without a name, DSL subroutines (functions another kernel of the file calls) and
    functions not marked ``is_entry`` when one is are not candidates."""
    marked = [k for k in kernels if k.dialect == "dsl" and k.obj.is_entry]
    if len(marked) == 1:
        return marked
    called: set = set()
    for k in kernels:
        if k.dialect == "dsl":
            _, callees = k.obj.parse()
            called.update(id(c) for c in callees)
    return [k for k in kernels if id(k.obj) not in called]


def default_target(kernel: Kernel) -> str:
    return "X2_1204" if kernel.dialect == "dsl" else "c"


@dataclasses.dataclass
class PassStep:
    """The program after one pass (or the input, index 0)."""

    index: int
    stage: str
    name: str
    seconds: float
    changed: bool
    skipped: bool
    text: str


@dataclasses.dataclass
class Lowering:
    """What lowering a kernel to the end produced: the program after every pass, and the
    generated source with its file name."""

    kernel: Kernel
    target: str
    steps: List[PassStep]
    source_name: str
    source: str
    result: Any


def _run_lowerer(kernel: Kernel, target: str, stage: str) -> Any:
    """Lower ``kernel`` for ``target`` through ``stage``; returns (lowerer, result-or-None)."""
    if kernel.dialect == "dsl":
        from ..dsl import BuildManager

        bm = BuildManager(target=target)
        lw, ctx, _ = bm._lowerer(kernel.obj, None)
        with ctx:
            lw.run_to(stage)
        return lw
    from .. import driver

    # The pipeline ts.build runs: the automatic schedule first for a function without one.
    lw = driver._lowerer(kernel.obj, target, auto_schedule=True)
    lw.run_to(stage)
    return lw


def lower_with_passes(kernel: Kernel, target: str, stage: str = "end") -> Lowering:
    """Lower ``kernel`` through ``stage`` recording the program after every pass."""
    from ..transform import PassContext

    with tempfile.TemporaryDirectory(prefix="tessera-explore-") as tmp:
        outer = PassContext.current()
        config = dict(outer.config)
        config["tessera.dump_ir"] = tmp
        config["tessera.dump_ir_unchanged"] = True
        with PassContext(opt_level=outer.opt_level, required_pass=outer.required_pass,
                         disabled_pass=outer.disabled_pass, config=config):
            lw = _run_lowerer(kernel, target, stage)
        folders = [d for d in os.listdir(tmp) if os.path.isdir(os.path.join(tmp, d))]
        if len(folders) != 1:
            raise RuntimeError(f"expected one dump folder, found {folders}")
        folder = os.path.join(tmp, folders[0])
        files = sorted(os.listdir(folder))
        texts = {}
        source_name, source = "", ""
        for f in files:
            with open(os.path.join(folder, f), encoding="utf-8") as fh:
                text = fh.read()
            number = f.split("_", 1)[0]
            if f.endswith(".py") and number.isdigit():
                texts[int(number)] = text
            else:
                source_name, source = f.split("_", 1)[1] if "_" in f else f, text
    steps = [PassStep(0, "input", "input", 0.0, False, False, texts.get(0, ""))]
    previous = steps[0].text
    for i, (st, name, seconds, changed, skipped) in enumerate(lw.timings, start=1):
        text = texts.get(i, previous)
        steps.append(PassStep(i, st, name, float(seconds), bool(changed), bool(skipped), text))
        previous = text
    result = getattr(lw, "result", None)
    return Lowering(kernel, target, steps, source_name, source, result)
