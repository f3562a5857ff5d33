"""The fixed cost of calling a built host function from Python, beside numpy in the same run.

    PYTHONPATH=python python bench/bench_call_overhead.py            # table + bench/call_overhead.png
    PYTHONPATH=python python bench/bench_call_overhead.py --quick    # fewer repeats

Each case is a te kernel of tiny arrays (16 elements), so the time is almost all call overhead:
the conversion of the arguments, the argument checks the packed entry makes, and the kernel.
Beside it, in the same run:

- numpy's ufunc on the same arrays with ``out=`` (``np.multiply(a, b, out=c)``): its own
  dispatch and argument checks, no allocation;
- a ctypes call of the same packed entry point of the same .so (``__tessera_packed_main``) with
  its argument array and DLTensor descriptors built once before the loop: the floor of a call
  from Python that converts nothing per call (the entry still makes all its checks).

Each figure is the best per-call time over ``--repeat`` runs of ``--number`` calls (the machine
may be shared; the load average is printed with the table). The plot needs matplotlib
(pip install -r bench/requirements.txt) and is skipped without it.
"""

import argparse
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def per_call(fn, x, y, z, repeat, number):
    """The least seconds per call of ``fn(x, y, z)`` over ``repeat`` runs of ``number`` calls."""
    fn(x, y, z)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(x, y, z)
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def per_call_ufunc(ufunc, x, y, z, repeat, number):
    """The same for ``ufunc(x, y, out=z)``, written out in the loop (no Python frame between)."""
    ufunc(x, y, out=z)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            ufunc(x, y, out=z)
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def per_call_ctypes(call, repeat, number):
    """The same for a zero-argument ctypes caller."""
    call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Value(ctypes.Union):
    _fields_ = [("v_int64", ctypes.c_int64), ("v_float64", ctypes.c_double),
                ("v_handle", ctypes.c_void_p)]


_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_ARG_INT, _ARG_FLOAT, _ARG_DLTENSOR = 0, 2, 7


def ctypes_caller(lib, args):
    """A zero-argument function calling the packed entry of ``lib`` through ctypes with
    ``args`` (numpy arrays and Python numbers) converted once, up front."""
    dll = ctypes.CDLL(lib.lib_path)
    entry = getattr(dll, "__tessera_packed_" + lib.entry_name)
    entry.restype = ctypes.c_int32
    n = len(args)
    values = (_Value * n)()
    codes = (ctypes.c_int32 * n)()
    keep = []
    for i, a in enumerate(args):
        if isinstance(a, float):
            values[i].v_float64, codes[i] = a, _ARG_FLOAT
        elif isinstance(a, int):
            values[i].v_int64, codes[i] = a, _ARG_INT
        else:
            shape = (ctypes.c_int64 * a.ndim)(*a.shape)
            strides = (ctypes.c_int64 * a.ndim)(*(s // a.itemsize for s in a.strides))
            t = _DLTensor(a.ctypes.data, _Device(1, 0), a.ndim,
                          _DType(_DL_CODES[a.dtype.kind], a.dtype.itemsize * 8, 1),
                          shape, strides, 0)
            keep += [shape, strides, t]
            values[i].v_handle, codes[i] = ctypes.addressof(t), _ARG_DLTENSOR
    ret, ret_code = _Value(), ctypes.c_int32()
    pret, pcode = ctypes.byref(ret), ctypes.byref(ret_code)

    def call():
        if entry(values, codes, n, pret, pcode) != 0:
            raise RuntimeError("the packed entry failed")

    call.keep = keep  # the descriptors live as long as the caller
    return call


def cases(np, ts, te):
    """(name, tessera callable, its args, numpy callable, its args, ctypes caller)."""
    out = []

    def build(dtype, scalar=None):
        a = te.placeholder((16,), dtype, name="A")
        if scalar is None:
            b = te.placeholder((16,), dtype, name="B")
            c = te.compute((16,), lambda i: a[i] * b[i], name="C")
            return ts.build(te.create_prim_func([a, b, c]), target="llvm")
        s = ts.tir.Var("s", scalar)
        c = te.compute((16,), lambda i: a[i] * s, name="C")
        return ts.build(te.create_prim_func([a, s, c]), target="llvm")

    x = np.arange(16, dtype="int8")
    y = np.full(16, 3, dtype="int8")
    z = np.empty(16, dtype="int8")
    lib = build("int8")
    out.append(("3 numpy int8[16]", lib, (x, y, z), np.multiply, (x, y, z), ctypes_caller(lib, (x, y, z))))
    nx, ny, nz = ts.nd.array(x), ts.nd.array(y), ts.nd.array(z)
    out.append(("3 ts.nd int8[16]", lib, (nx, ny, nz), np.multiply, (x, y, z), None))
    fl = build("float32", "float32")
    u = np.arange(16, dtype="float32")
    v = np.empty(16, dtype="float32")
    out.append(("2 numpy float32[16] + float", fl, (u, 2.5, v), np.multiply, (u, 2.5, v),
                ctypes_caller(fl, (u, 2.5, v))))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--number", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="5 repeats")
    opts = parser.parse_args()
    repeat = 5 if opts.quick else opts.repeat

    import numpy as np

    import tessera as ts
    from tessera import te

    load0 = os.getloadavg()[0]
    rows = []
    for name, lib, args, ref, ref_args, raw in cases(np, ts, te):
        lib(*args)
        expect = ref(*ref_args[:2])
        got = args[-1].numpy() if hasattr(args[-1], "numpy") else args[-1]
        np.testing.assert_array_equal(got, expect)
        t_ts = per_call(lib, *args, repeat, opts.number)
        t_np = per_call_ufunc(ref, *ref_args, repeat, opts.number)
        t_raw = per_call_ctypes(raw, repeat, opts.number) if raw else None
        rows.append((name, t_ts, t_np, t_raw))
    load1 = os.getloadavg()[0]

    us = lambda s: "-" if s is None else f"{s * 1e6:.3f}"  # noqa: E731
    print(f"call overhead, best of {repeat} x {opts.number} calls; load average "
          f"{load0:.2f} before / {load1:.2f} after")
    print("| arguments | tessera f(...) us | numpy ufunc out= us | ctypes, prebuilt args us | "
          "tessera / numpy |")
    print("|---|---|---|---|---|")
    for name, t_ts, t_np, t_raw in rows:
        print(f"| {name} | {us(t_ts)} | {us(t_np)} | {us(t_raw)} | {t_ts / t_np:.2f} |")

    from bench_plot import save_bars

    save_bars("call_overhead", "Cost of one call (16-element arrays)", [r[0] for r in rows],
              {"tessera f(...)": [r[1] * 1e6 for r in rows],
               "numpy ufunc, out=": [r[2] * 1e6 for r in rows],
               "ctypes, prebuilt args": [None if r[3] is None else r[3] * 1e6 for r in rows]},
              "microseconds per call")


if __name__ == "__main__":
    main()
