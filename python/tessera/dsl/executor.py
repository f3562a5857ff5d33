"""Executor: runs a built DSL kernel on numpy arrays and scalars.

The kernel's library exports a packed entry point (tessera's calling convention, the one
TensorIR functions use) whose generated code checks every argument: count, kind, dtype, null
pointers, read-only arrays the kernel writes, layout and the elements the kernel accesses. A bad
argument raises TypeError / ValueError naming the parameter. An array whose dtype differs from
its pointer parameter's is the one exception: as in Compass, it is logged as a warning (logger
``tessera.dsl``) and its memory is read as the parameter's type, without conversion."""

import logging
import time

import numpy as np

from .. import _core
from ..error import ArgumentCountError, ArgumentValueError, TesseraValueError
from ..runtime.module import _call


class Executor:
    """A compiled kernel. Call it with one argument per parameter: numpy arrays for pointers
    (used in place, without copies; ``None`` passes a null pointer), numbers for scalars."""

    def __init__(self, module, entry, check_bounds=False, void_params=(), buffer_shapes=()):
        """``buffer_shapes``: (parameter index, dims) of the buffers a TensorIR-style kernel
        matches on its pointer parameters, each dim an int or ("param", index) of the scalar
        parameter that gives it; a smaller array is refused before the call."""
        self._buffer_shapes = tuple(buffer_shapes)
        self._module = module
        self._void_params = frozenset(void_params)  # S.ptr("void") parameters: any dtype
        self.check_bounds = bool(check_bounds)
        self.name = entry

    @property
    def c_code(self):
        """The generated OpenCL-C-style source. A scalar broadcast to a vector is shown as
        OpenCL C's cast `(int8)x`, and an unmasked bfloat16 vector +, - or * as the operator
        `(a + b)`, as Compass prints them; see :attr:`compiled_source`."""
        return self._module.source

    @property
    def compiled_source(self):
        """The kernel source the C compiler got: :attr:`c_code` with each splat spelled
        `(int8)__vbcast(x)` (GCC refuses a cast from a scalar to a vector) and each bfloat16
        vector operator as tessera/dsl.h's call, `__vadd(a, b, ALL_TRUE_h)` (C has no operators
        for its bfloat16x16 struct; the call rounds each lane once, as the operator does),
        nothing else changed."""
        return self._module.compiled_source

    @property
    def lib_path(self):
        return self._module.lib_path

    def __call__(self, *args):
        self._check_count(args)
        self._check_buffer_sizes(args)
        args = [_strided_view_window(a, lambda i=i: self._describe_param(i), self.check_bounds)
                for i, a in enumerate(args)]
        params = self._pointer_params()
        args = [reinterpret_pointer_argument(a, params[i], lambda i=i: self._describe_param(i))
                if i < len(params) and params[i] is not None else a for i, a in enumerate(args)]
        if self.check_bounds:
            # BuildManager(check_bounds=True): each array copied between guard pages for the
            # call, so an access outside it raises instead of corrupting memory.
            _call(self._module, "", args,
                  run=lambda handles: _core.host_call_checked(self._module, "", handles, self.name))
        else:
            _call(self._module, "", args)

    run = __call__

    def _check_count(self, args):
        """The wrong number of arguments is an ArgumentCountError (a TypeError, and an
        AssertionError as Compass raises it), found before any argument is converted."""
        for entry in _core.host_functions(self._module):
            if entry[0] == self.name and len(args) != len(entry[-1]):
                names = ", ".join(p[-1] for p in entry[-1])
                raise ArgumentCountError(f"{self.name}() takes {len(entry[-1])} arguments ({names}) "
                                         f"but {len(args)} were given")

    def _check_buffer_sizes(self, args):
        for index, dims in self._buffer_shapes:
            arg = args[index]
            if arg is None or not hasattr(arg, "size"):
                continue  # not an array: the entry point's own checks report it
            need = 1
            for d in dims:
                if isinstance(d, tuple):
                    value = args[d[1]]
                    if not isinstance(value, (int, np.integer)):
                        need = None
                        break
                    d = int(value)
                need *= max(d, 0)
            if need is not None and arg.size < need:
                shape = tuple(d if isinstance(d, int) else int(args[d[1]]) for d in dims)
                raise ArgumentValueError(f"{self._describe_param(index)} has {arg.size} elements; "
                                         f"the kernel's buffer on it has shape {shape}")

    def _pointer_params(self):
        """The element type of each parameter that is a pointer (None for the others)."""
        if getattr(self, "_pointer_dtypes", None) is None:
            dtypes = []
            for entry in _core.host_functions(self._module):
                if entry[0] == self.name:
                    dtypes = [p[1] if p[0] == "handle" and p[2] not in self._void_params else None
                              for p in entry[-1]]
            self._pointer_dtypes = dtypes
        return self._pointer_dtypes

    def _describe_param(self, index):
        """"argument 'a' of f()" for the parameter at ``index``."""
        for entry in _core.host_functions(self._module):
            if entry[0] == self.name and index < len(entry[-1]):
                return f"argument '{entry[-1][index][-1]}' of {self.name}()"
        return f"argument {index} of {self.name}()"

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

        lib = ctypes.CDLL(self.lib_path)  # the loaded library: dlopen gives the same handle
        read = getattr(lib, "__tessera_perf_read")
        read.restype = ctypes.c_int32
        read.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_int32,
                         ctypes.POINTER(ctypes.c_int64)]
        getattr(lib, "__tessera_perf_clear")()
        start = time.perf_counter_ns()
        self(*args)
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


_LOGGER = logging.getLogger("tessera.dsl")


def _element_dtype(dtype):
    """The numpy element type of a pointer parameter's type (``int8x32`` -> ``int8``); None
    for ``void``."""
    from .pysim.memory import np_dtype

    name = str(dtype)
    if name in ("", "void", "handle"):
        return None
    try:
        return np_dtype(name)
    except TypeError:
        return None


def reinterpret_pointer_argument(arg, param_dtype, describe):
    """``arg`` as the kernel reads it through a pointer to ``param_dtype``. As Compass does, an
    array of another dtype is not refused nor converted: a warning is logged and the kernel
    sees the array's bytes as ``param_dtype`` elements (a view sharing the array's memory, so
    what the kernel writes lands in the caller's array). Anything else returns unchanged."""
    if not isinstance(arg, np.ndarray) or arg.dtype.hasobject:
        return arg
    want = _element_dtype(param_dtype)
    if want is None or arg.dtype == want:
        return arg
    _LOGGER.warning("%s points to %s elements but got an array of %s; its memory is read as %s "
                    "without conversion (pass arr.astype(%s) to convert the values)",
                    describe(), want, arg.dtype, want, want)
    if not arg.flags.c_contiguous:
        return arg  # PySim refuses it; a built kernel's window is contiguous already
    if arg.dtype.itemsize == want.itemsize and arg.ndim > 0:
        return arg.view(want)
    raw = arg.reshape(-1).view(np.uint8)
    return raw[:raw.size // want.itemsize * want.itemsize].view(want)


def _strided_view_window(arg, describe, checked=False):
    """A numpy view that is not C-contiguous (``a[::-1, :]``, ``a[:, ::2]``) reaches the kernel
    as Compass passes it: a pointer to the view's first element inside the array it views, the
    kernel walking it with strides it is given. The pointer comes from a contiguous 1-D window
    of the viewed array, from that element to the array's end (the extent the argument checks
    see); the elements before it are the viewed array's too. Other arguments pass unchanged."""
    if not isinstance(arg, np.ndarray) or arg.flags.c_contiguous:
        return arg
    if checked:
        # The checked mode copies each array between guard pages; the elements of a view's array
        # before the view's first one would not be copied.
        raise TesseraValueError(f"{describe()} is a strided view; the checked mode "
                                f"(check_bounds=True) takes C-contiguous arrays only: pass "
                                f"np.ascontiguousarray(view) and its strides, or build unchecked")
    root = arg
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        raise TesseraValueError(f"{describe()} is a view of an array that is not one block of "
                                f"memory; pass a C-contiguous array")
    start = arg.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if root.size == 0 or arg.size == 0:
        return np.ascontiguousarray(arg)
    if start < 0 or start % arg.itemsize or root.nbytes - start < arg.itemsize:
        raise TesseraValueError(f"{describe()}: the view's first element is not an element of the "
                                f"array it views; pass a C-contiguous array")
    raw = root.reshape(-1, order="A").view(np.uint8)
    window = raw[start:start + (root.nbytes - start) // arg.itemsize * arg.itemsize].view(arg.dtype)
    if not arg.flags.writeable:
        window.flags.writeable = False
    return window


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
