"""Shared builds for the operator tests: many PrimFuncs compile as one C module.

``TESSERA_TOPI_TARGET=cuda`` (with ``TESSERA_CUDA_EMULATOR=1`` on a machine without a GPU) builds
the same kernels for "cuda" instead, with no schedule, and runs them on the GPU or the emulator:
the sweep of the operator library for the CUDA automatic schedule. `make test` runs the folder
both ways: for "c", and for "cuda" on the emulator.
"""

import os

import numpy as np

import tessera as ts
from tessera import _core, te


TARGET = os.environ.get("TESSERA_TOPI_TARGET", "c")


class Kernels:
    """Collects te computations under names; ``run(name, *inputs)`` builds them all once
    (one compile) and returns the outputs as numpy arrays."""

    def __init__(self):
        self._funcs = {}
        self._lib = None
        self._errors = {}

    def add(self, name, inputs, outputs):
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        assert name not in self._funcs, name
        assert self._lib is None, "add every kernel before the first run"
        func = te.create_prim_func(list(inputs) + outputs).with_attr(
            "global_symbol", _core.StringImm(name)
        )
        self._funcs[name] = (func, outputs)
        return name

    def _build(self):
        if self._lib is not None:
            return
        mod = None
        for name, (func, _) in self._funcs.items():
            if mod is None:
                mod = _core.IRModule.from_func(func, name)
            else:
                mod = mod.with_function(_core.GlobalVar(name), func)
        try:
            self._lib = {"all": ts.build(mod, target=TARGET)}
        except Exception:  # one bad kernel: build each alone to tell which
            self._lib = {}
            for name, (func, _) in self._funcs.items():
                try:
                    self._lib[name] = ts.build(func, target=TARGET)
                except Exception as e:  # noqa: BLE001
                    self._errors[name] = e

    def run(self, name, *inputs):
        self._build()
        if name in self._errors:
            raise self._errors[name]
        lib = self._lib.get("all") or self._lib[name]
        _, outputs = self._funcs[name]
        outs = [
            np.zeros([getattr(s, "value", s) for s in t.shape], dtype=_np_dtype(t.dtype))
            for t in outputs
        ]
        if TARGET == "c":
            lib[name](*[np.ascontiguousarray(x) for x in inputs], *outs)
        else:
            dev = ts.device(TARGET, 0)
            args = [ts.nd.array(np.array(x, order="C"), device=dev) for x in list(inputs) + outs]
            lib[name](*args)
            outs = [a.numpy() for a in args[len(inputs):]]
        return outs[0] if len(outs) == 1 else outs


def _np_dtype(dtype):
    return np.dtype("bool" if dtype == "bool" else dtype)


def random(shape, dtype, low=-2.0, high=2.0, seed=0):
    """Random data of ``dtype``: uniform floats, integers in a small range, random bools."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        lo = 0 if dtype.startswith("uint") else int(low) * 4
        return rng.integers(lo, int(high) * 4 + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def tol(dtype):
    """Tolerances for comparing with numpy. float32 sums are reordered by the automatic schedule
    (vector-wide partial sums), so a result near zero after cancellation may differ from numpy's
    by a few units of 1e-6."""
    return {"float16": dict(rtol=2e-3, atol=2e-3), "float64": dict(rtol=1e-10, atol=1e-12)}.get(
        dtype, dict(rtol=1e-5, atol=1e-5)
    )
