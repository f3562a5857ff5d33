"""PySim: runs a DSL kernel in Python on numpy arrays.

The kernel is parsed and checked as for ``lower``; then its IR (as the parser built it, before
the target passes) is interpreted, one Python thread per TEC, with a numpy implementation of
every intrinsic (:mod:`.ops`). Pointers are (region, byte offset) pairs over the caller's
arrays, and every access is bounds-checked and reported at its source line.

>>> kernel(a, out)                          # calling an @S.prim_func runs PySim
>>> TESSERA_PYSIM_SINGLE_THREAD=1           # TECs one after another (a barrier then fails)
"""

import os
import threading

import numpy as np

from ... import _core
from ...error import ArgumentCountError, DiagnosticError
from .interpreter import (Interpreter, Region, Pointer, PySimError, PySimIndexError, PySimZeroDivisionError,
                          np_dtype)

NUM_TECS = 4


class TecBarrier:
    """A barrier of the TECs still running: a TEC that returns no longer counts, so the others
    do not wait for it (as in tessera/dsl/tec.h)."""

    def __init__(self, parties):
        self.cond = threading.Condition()
        self.running = parties
        self.arrived = 0
        self.generation = 0
        self.broken = False

    def _open(self):
        self.arrived = 0
        self.generation += 1
        self.cond.notify_all()

    def wait(self):
        with self.cond:
            gen = self.generation
            self.arrived += 1
            if self.arrived == self.running:
                self._open()
                return
            while gen == self.generation and not self.broken:
                self.cond.wait(timeout=0.5)
            if self.broken:
                raise threading.BrokenBarrierError

    def leave(self):
        with self.cond:
            self.running -= 1
            if self.arrived and self.arrived == self.running:
                self._open()

    def abort(self):
        with self.cond:
            self.broken = True
            self.cond.notify_all()


def _arg_value(name, ann, arg, func_name):
    from ..types import PtrType

    if isinstance(ann, PtrType):
        if arg is None or (isinstance(arg, int) and not isinstance(arg, bool) and arg == 0):
            return Pointer(None, 0)
        if not isinstance(arg, np.ndarray):
            raise TypeError(f"argument '{name}' must be a numpy array, got {type(arg).__name__}")
        from ..executor import reinterpret_pointer_argument

        # An array of another dtype: warned about, and its bytes read as the parameter's type
        # (PySim's regions are bytes already), as Compass does and as a built kernel does.
        reinterpret_pointer_argument(arg, ann.element, lambda: f"argument '{name}' of {func_name}()")
        if not arg.flags.c_contiguous:
            # As Compass's PySim: a pointer argument is the array's memory in C order, so a view
            # in another order (a transpose, a step) is refused rather than read differently.
            # (A built kernel takes such a view: see executor._strided_view_window.)
            from ...error import PySimArgumentError
            from ..types import _located_at_caller

            raise _located_at_caller(
                PySimArgumentError, f"argument '{name}' of {func_name}() is not a C-contiguous "
                                    f"array (a transposed or strided view); PySim reads a pointer "
                                    f"argument's memory in C order: pass np.ascontiguousarray(...)",
                needle=f"{func_name}(")
        return Pointer(Region.of_array(arg, name), 0)
    if isinstance(arg, np.ndarray) and arg.ndim == 0:
        arg = arg.item()
    elif isinstance(arg, np.generic):
        arg = arg.item()
    return np_dtype(ann.name).type(arg) if ann.name != "bool" else np.bool_(arg)


def run(pfunc, args, kwargs=None):
    """Run ``pfunc`` (an @S.prim_func) on ``args`` under PySim."""
    from ..build_manager import collect_module

    if kwargs:
        raise TypeError(f"{pfunc.name}() takes its arguments by position under PySim")
    if not getattr(pfunc, "_pysim_checked", False):
        # The first call reports what lower would (memory limits, target features, widths).
        from ..build_manager import BuildManager

        # PySim models no particular target: X3 features are allowed, as on an X3 target.
        BuildManager(disabled_pass=["dsl.VerifyTargetFeatures"]).lower(pfunc)
        pfunc._pysim_checked = True
    mod, entry = collect_module(pfunc)
    funcs = {}
    for gv, f in mod.functions:
        funcs[gv] = f
    params, _ = pfunc.signature()
    if len(args) != len(params):
        names = ", ".join(p[0] for p in params)
        raise ArgumentCountError(f"{pfunc.name}() takes {len(params)} arguments ({names}) but "
                                 f"{len(args)} were given")
    values = [_arg_value(name, ann, a, pfunc.name) for (name, ann, _), a in zip(params, args)]
    regions = [v.region for v in values if isinstance(v, Pointer) and v.region is not None]
    single = os.environ.get("TESSERA_PYSIM_SINGLE_THREAD", "") not in ("", "0")
    shared = {}
    barrier = None if single else TecBarrier(NUM_TECS)
    interp = [Interpreter(funcs, entry, tec, barrier, shared) for tec in range(NUM_TECS)]
    if single:
        for it in interp:
            it.run_entry(values)
    else:
        errors = [None] * NUM_TECS

        def work(i):
            try:
                interp[i].run_entry(values)
                barrier.leave()
            except BaseException as err:  # noqa: BLE001  (re-raised in the caller)
                errors[i] = err
                barrier.abort()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(NUM_TECS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        real = [e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)]
        if real:
            raise real[0]
        if any(e is not None for e in errors):
            raise errors[[e is not None for e in errors].index(True)]
    for r in regions:
        r.write_back()


__all__ = ["run", "PySimError", "PySimIndexError", "PySimZeroDivisionError", "DiagnosticError", "NUM_TECS"]
_ = _core
