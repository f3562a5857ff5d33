"""Executor: runs a built DSL kernel on numpy arrays and scalars, checking every argument."""

import time

import numpy as np

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from .types import DType, PtrType

_NP_NAMES = {"bfloat16": "bfloat16"}


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name == "void":
        return None
    return np.dtype(name)


class Executor:
    """A compiled kernel. Call it with one argument per parameter: numpy arrays for pointers
    (used in place, without copies; ``None`` passes a null pointer), numbers for scalars."""

    def __init__(self, module, prim_func, entry, check_bounds=False):
        self._module = module
        self.check_bounds = bool(check_bounds)
        self.name = entry
        params, _ = prim_func.signature()
        self._params = []
        kinds = []
        extents = _core.pointer_access_extents(module.ir, entry)
        for (name, ann, _default), extent in zip(params, extents):
            if isinstance(ann, PtrType):
                elem = ann.element
                self._params.append((name, "ptr", elem, _np_dtype(elem.split("x")[0] if "x" in elem and not elem.startswith("bool") else elem), extent))
                kinds.append(-1)
            else:
                t = _core.DataType(ann.name)
                self._params.append((name, "scalar", ann.name, None, extent))
                kinds.append(t.type_code * 256 + t.bits)
        self._kinds = kinds

    @property
    def c_code(self):
        """The generated OpenCL-C-style source."""
        return self._module.source

    @property
    def lib_path(self):
        return self._module.lib_path

    def _check(self, args):
        if len(args) != len(self._params):
            names = ", ".join(p[0] for p in self._params)
            raise TesseraTypeError(f"{self.name}() takes {len(self._params)} arguments ({names}) but {len(args)} were given")
        values = []
        for (name, kind, dtype, np_dtype, extent), arg in zip(self._params, args):
            if kind == "ptr":
                if arg is None or (isinstance(arg, int) and arg == 0):
                    if extent > 0:  # the kernel reads or writes through it: never pass NULL
                        raise TypeError(f"argument '{name}' of {self.name}() must be a numpy array, "
                                        f"got {'None' if arg is None else '0'}: the kernel accesses "
                                        f"{extent} elements through it")
                    values.append(0)
                    continue
                if not isinstance(arg, np.ndarray):
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must be a numpy array, got {type(arg).__name__}")
                if np_dtype is not None and arg.dtype != np_dtype:
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must have dtype {dtype}, got {arg.dtype}")
                if not arg.flags.c_contiguous:
                    raise TesseraValueError(f"argument '{name}' of {self.name}() must be a C-contiguous array")
                if extent > 0 and arg.size * arg.itemsize < extent * (arg.itemsize if np_dtype is None else np_dtype.itemsize):
                    raise TesseraValueError(f"argument '{name}' of {self.name}() has {arg.size} elements but the kernel accesses {extent}")
                values.append(arg.ctypes.data)
            else:
                if isinstance(arg, np.ndarray) and arg.ndim == 0:
                    arg = arg.item()
                elif isinstance(arg, np.generic):
                    arg = arg.item()
                if dtype.startswith(("int", "uint", "bool")):
                    if isinstance(arg, float) or not isinstance(arg, int):
                        raise TesseraTypeError(f"argument '{name}' of {self.name}() must be an integer ({dtype}), got {type(arg).__name__}")
                    info = np.iinfo(dtype) if dtype != "bool" else None
                    if info is not None and not info.min <= arg <= info.max:
                        raise TesseraValueError(f"argument '{name}' of {self.name}() = {arg} is out of range for {dtype}")
                elif not isinstance(arg, (int, float)) or isinstance(arg, bool):
                    raise TesseraTypeError(f"argument '{name}' of {self.name}() must be a number ({dtype}), got {type(arg).__name__}")
                values.append(arg)
        return values

    def __call__(self, *args):
        values = self._check(args)
        if self.check_bounds:
            self._call_checked(args, values)
        else:
            _core.call_dsl(self._module, self._kinds, values)

    def _call_checked(self, args, values):
        """The call with each array copied between guard pages (BuildManager(check_bounds=True)):
        an access outside an array raises instead of corrupting memory."""
        names, sizes, items, back = [], [], [], []
        for (name, kind, _dtype, _np, _extent), arg in zip(self._params, args):
            names.append(name)
            is_array = kind == "ptr" and isinstance(arg, np.ndarray)
            sizes.append(arg.nbytes if is_array else 0)
            items.append(arg.itemsize if is_array else 1)
            back.append(bool(is_array and arg.flags.writeable))
        _core.call_dsl_checked(self._module, self._kinds, values, self.name, names, sizes, items, back)

    run = __call__

    def benchmark(self, *args, repeat=2, number=3, min_repeat_ms=0, limit_zero_time_iterations=100,
                  cooldown_interval_ms=0, repeats_to_cooldown=1):
        """Time the kernel: one discarded warm-up call, then ``repeat`` measurements of
        ``number`` calls each; each measurement is the mean seconds per call.

        >>> r = ex.benchmark(a, out, repeat=5, number=10); print(r.median)
        """
        return time_calls(self, args, repeat, number, min_repeat_ms, limit_zero_time_iterations,
                          cooldown_interval_ms, repeats_to_cooldown)

    def profile(self, *args):
        """Run the kernel once with its ``S.perf_tick_begin(cid)`` / ``S.perf_tick_end(cid)``
        regions timed, and return the ticks of the whole call. Ticks are nanoseconds of the
        host's monotonic clock (tessera runs the TECs as host threads; there are no NPU cycles).
        ``ex.perf_records`` then maps each custom id to ``{"ticks": [per TEC], "count": [per
        TEC]}``: the time spent in that id's regions and how many ended, TEC by TEC.

        >>> total = ex.profile(a, out); ex.perf_records[0]["ticks"]
        """
        import ctypes
        import time

        values = self._check(args)
        lib = ctypes.CDLL(self.lib_path)  # the loaded library: dlopen gives the same handle
        read = getattr(lib, "__tessera_perf_read")
        read.restype = ctypes.c_int32
        read.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_int32,
                         ctypes.POINTER(ctypes.c_int64)]
        getattr(lib, "__tessera_perf_clear")()
        start = time.perf_counter_ns()
        _core.call_dsl(self._module, self._kinds, values)
        total = time.perf_counter_ns() - start
        cap = 4 * 64
        buf = (ctypes.c_int64 * (4 * cap))()
        dropped = ctypes.c_int64(0)
        n = read(buf, cap, ctypes.byref(dropped))
        records = {}
        for i in range(n):
            tec, cid, ticks, count = buf[4 * i:4 * i + 4]
            rec = records.setdefault(cid, {"ticks": [0] * 4, "count": [0] * 4})
            rec["ticks"][tec] += ticks
            rec["count"][tec] += count
        self.perf_records = records
        self.perf_dropped = dropped.value
        return total

    def __repr__(self):
        return f"<Executor {self.name} at {self.lib_path}>"


class BenchmarkResult:
    """Seconds per call of each repeat, with their statistics."""

    def __init__(self, results):
        self.results = tuple(results)
        arr = np.asarray(self.results, dtype=np.float64)
        self.mean = float(arr.mean())
        self.median = float(np.median(arr))
        self.std = float(arr.std())
        self.min = float(arr.min())
        self.max = float(arr.max())

    def __repr__(self):
        return (f"BenchmarkResult(mean={self.mean:.3e}s, median={self.median:.3e}s, "
                f"std={self.std:.3e}s, min={self.min:.3e}s, max={self.max:.3e}s, "
                f"repeats={len(self.results)})")


def time_calls(fn, args, repeat, number, min_repeat_ms=0, limit_zero_time_iterations=100,
               cooldown_interval_ms=0, repeats_to_cooldown=1):
    """Time ``fn(*args)`` as Executor.benchmark describes; ``number`` grows until one repeat
    lasts ``min_repeat_ms``."""
    if repeat < 1 or number < 1:
        raise TesseraValueError("repeat and number must be at least 1")
    converted = fn._check(args) if hasattr(fn, "_check") else None
    if converted is not None:
        call = lambda: _core.call_dsl(fn._module, fn._kinds, converted)  # noqa: E731
    else:
        call = lambda: fn(*args)  # noqa: E731
    call()  # the warm-up call, discarded
    results = []
    zero_runs = 0
    for r in range(repeat):
        n = number
        while True:
            start = time.perf_counter()
            for _ in range(n):
                call()
            elapsed = time.perf_counter() - start
            if elapsed * 1e3 >= min_repeat_ms or n >= number * 1024:
                break
            n *= 2
        if elapsed == 0.0 and zero_runs < limit_zero_time_iterations:
            zero_runs += 1
        results.append(elapsed / n)
        if cooldown_interval_ms > 0 and (r + 1) % repeats_to_cooldown == 0:
            time.sleep(cooldown_interval_ms / 1e3)
    return BenchmarkResult(results)
