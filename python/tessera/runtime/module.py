"""Module: a built (or loaded) host library whose public functions are called from Python."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import tempfile
from typing import Any, Callable, List, NoReturn, Sequence

import numpy as _np

from .. import _core
from ..error import (ArgumentTypeError, ArgumentValueError, TesseraError, TesseraRuntimeError,
                     TesseraTypeError, TesseraValueError)
from .ndarray import NDArray


# host_call reads numpy arrays through the buffer protocol and passes an NDArray's handle itself,
# so the arguments go to it as they were given (no list of handles built per call).
_core._set_call_types(_np.ndarray, NDArray)


# The argument checks that MakePackedAPI compiles into every public function report in these
# words; each becomes a TypeError or a ValueError. Other failures (a T.assert of the
# kernel, a CUDA launch) stay RuntimeErrors.
_ARG_TYPE_ERRORS = re.compile(
    r"^\S+: num_args should be \d+$"
    r"|^\S+: Expect arg\[\d+\] to be \w+$"
    r"|^\S+\.dtype is expected to be \S+$"
    r"|^\S+ is a NULL DLTensor\* pointer$")
_ARG_VALUE_ERRORS = re.compile(
    r"^\S+\.ndim is expected to equal \d+$"
    r"|^Argument \S+\.(shape\[\d+\]|strides\[\d+\]|elem_offset|device_type) has an unsatisfied constraint: "
    r"|^\S+\.strides: expected to be compact array$"
    r"|^\S+\.byte_offset is expected to be a multiple of the element size$"
    r"|^\S+ has a NULL data pointer$")


# The binding itself, looked up once: Module.__call__ and Function.__call__ call it directly,
# without a frame of _call between (a call of a small kernel is ~0.3 us; each frame is ~0.05).
_host_call = _core.host_call


def _call(mod: Any, name: str, args: Sequence[Any], run: Any = None) -> Any:
    """Call a function of a host module (or ``run(args)``); bad arguments raise TypeError /
    ValueError (tessera's ArgumentTypeError / ArgumentValueError)."""
    try:
        if run is not None:
            return run(args)
        return _host_call(mod, name, args)
    except Exception as err:
        _reraise(err, mod, name, args)


def _reraise(err: Exception, mod: Any, name: str, args: Sequence[Any]) -> NoReturn:
    """Raise what a failed call raises in Python, from the ``except`` block that caught ``err``:
    an argument check's failure as ArgumentTypeError / ArgumentValueError, a Python-side
    conversion error as TesseraTypeError / TesseraValueError, anything else as it is."""
    if isinstance(err, TesseraRuntimeError):
        raise _classify(err, mod, name, args) from None
    if isinstance(err, TesseraError):
        raise err
    if isinstance(err, TypeError):  # the Python-side conversion of an argument
        raise TesseraTypeError(str(err)) from None
    if isinstance(err, ValueError):
        raise TesseraValueError(str(err)) from None
    raise err


_DTYPE_ERROR = re.compile(r"^(\S+)\.(\w+)\.dtype is expected to be (\S+)$")


def _got_dtype(mod: Any, name: str, args: Sequence[Any], text: str) -> str:
    """", got int64" for a dtype error: the dtype of the array that was passed."""
    m = _DTYPE_ERROR.match(text)
    if not m:
        return ""
    func, param = m.group(1), m.group(2)
    for entry in _core.host_functions(mod):
        fname, params = entry[0], entry[-1]
        if fname != func:
            continue
        names = [p[-1] for p in params]
        if param in names and names.index(param) < len(args):
            arg = args[names.index(param)]
            dtype = getattr(arg, "dtype", None)
            if dtype is not None:
                return f", got {dtype}"
    return ""


def _classify(err: Any, mod: Any = None, name: str = "", args: Sequence[Any] = ()) -> Any:
    text = str(err)
    cls: type
    if _ARG_TYPE_ERRORS.match(text):
        cls = ArgumentTypeError
        if mod is not None:
            try:
                text += _got_dtype(mod, name, args, text)
            except Exception:  # the message without the detail is still right
                pass
    elif _ARG_VALUE_ERRORS.match(text):
        cls = ArgumentValueError
    else:
        return err
    return cls(text, text, err.file, err.line, err.column)


class BenchmarkResult:
    """Seconds per call of each repeat, with summary statistics."""

    def __init__(self, results: Sequence[float]) -> None:
        self.results = tuple(results)
        self.mean = statistics.fmean(self.results)
        self.median = statistics.median(self.results)
        self.std = statistics.pstdev(self.results)
        self.min = min(self.results)
        self.max = max(self.results)

    def __repr__(self) -> str:
        ms = lambda s: f"{s * 1e3:.4f}"  # noqa: E731
        return (f"BenchmarkResult(mean={ms(self.mean)} ms, median={ms(self.median)} ms, "
                f"std={ms(self.std)} ms, min={ms(self.min)} ms, max={ms(self.max)} ms, "
                f"repeats={len(self.results)})")


class Function:
    """One public function of a module: ``lib["add"](a, b, c)``."""

    def __init__(self, module: "Module", name: str) -> None:
        self.module = module
        self.name = name
        self._mod = module._mod

    def __call__(self, *args: Any) -> Any:
        try:
            return _host_call(self._mod, self.name, args)
        except Exception as err:
            _reraise(err, self._mod, self.name, args)

    def __repr__(self) -> str:
        return f"<tessera.runtime.Function {self.name}>"


class DeviceModule:
    """The device kernels of a "cuda" build: ``get_source()`` is the CUDA C, ``get_source("ptx")``
    the PTX that NVRTC produced."""

    def __init__(self, mod: Any) -> None:
        self._mod = mod

    @property
    def type_key(self) -> str:
        return "cuda"

    def get_source(self, fmt: str = "") -> str:
        """The CUDA C source (``fmt`` "" or "cu"), or the compiled PTX (``fmt="ptx"``)."""
        if fmt in ("", "cu", "cuda"):
            return self._mod.device_source
        if fmt == "ptx":
            ptx = self._mod.device_binary.decode()
            if not ptx:
                raise ValueError("this build has no PTX: it was built under the CUDA emulator "
                                 "(TESSERA_CUDA_EMULATOR=1) on a machine without NVRTC; "
                                 "get_source() gives its CUDA C")
            return ptx
        raise ValueError(f"unknown source format '{fmt}'; use '', 'cu' or 'ptx'")

    def __repr__(self) -> str:
        return "<tessera.runtime.DeviceModule cuda>"


class Module:
    """A host library built by ``ts.build`` or loaded by ``load_module``.

    >>> lib(a, b, c)              # the entry: "main", or the only public function
    >>> lib["add"](a, b, c)       # any public function
    >>> lib.time_evaluator("main", ts.cpu(0), number=10)(a, b, c).mean
    """

    def __init__(self, mod: Any, loaded: bool = False) -> None:
        self._mod = mod
        self._loaded = loaded

    @property
    def kind(self) -> str:
        """TVM's module kind: the target of a build (``"llvm"``, ``"c"``, ``"cuda"``), or
        ``"library"`` for a library loaded with ``load_module``."""
        return "library" if self._loaded else self._mod.target

    @property
    def imports(self) -> List[DeviceModule]:
        """The imported modules (TVM's ``Module.imports``): the device kernels of a "cuda"
        build, else none."""
        return self.imported_modules

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether the module has the public function ``name``."""
        return name in self.function_names

    def is_runnable(self) -> bool:
        """True: a tessera module is compiled and linked when it is built (or loaded)."""
        return True

    def is_compilation_exportable(self) -> bool:
        """Whether ``export_library`` can write this module: a build can, a loaded library
        (already a file of its own) cannot, as in TVM."""
        return not self._loaded

    def is_binary_serializable(self) -> bool:
        """False: a tessera module is a native library, not a serialized blob."""
        return False

    @property
    def entry_name(self) -> str:
        return _core.host_entry(self._mod)

    @property
    def function_names(self) -> List[str]:
        return [f[0] for f in _core.host_functions(self._mod)]

    @property
    def lib_path(self) -> str:
        return self._mod.lib_path

    @property
    def imported_modules(self) -> List[DeviceModule]:
        """Device modules imported by the host module: the CUDA kernels of a "cuda" build."""
        if self._mod.target == "cuda":
            return [DeviceModule(self._mod)]
        return []

    @property
    def type_key(self) -> str:
        return self._mod.target

    def __call__(self, *args: Any) -> Any:
        try:
            return _host_call(self._mod, "", args)
        except Exception as err:
            _reraise(err, self._mod, "", args)

    def __getitem__(self, name: str) -> Function:
        return self.get_function(name)

    def __contains__(self, name: object) -> bool:
        return name in self.function_names

    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """The public function ``name``; AttributeError lists the functions when there is none."""
        if name not in self.function_names:
            raise AttributeError(f"the module has no function '{name}'; functions: " + ", ".join(self.function_names))
        return Function(self, name)

    def get_source(self, fmt: str = "") -> str:
        """The generated code: ``""`` or ``"c"`` the host C, ``"asm"`` (or ``"s"``) the assembly
        the C compiler makes of it with the flags of this build; for a "cuda" build also
        ``"cuda"`` (the kernels' CUDA C) and ``"ptx"``."""
        if fmt in ("", "c"):
            return self._mod.source
        if fmt in ("asm", "s"):
            return _assembly(self._mod)
        if fmt in ("cuda", "cu", "ptx") and self.imported_modules:
            return self.imported_modules[0].get_source(fmt)
        if fmt in ("ll", "llvm", "bc"):
            raise ValueError(f"get_source('{fmt}'): tessera compiles host code with the C compiler, "
                             "so there is no LLVM IR; use 'c' for the C source or 'asm' for the assembly")
        known = "'c', 'asm'" + (", 'cuda', 'ptx'" if self.imported_modules else "")
        raise ValueError(f"unknown source format '{fmt}'; this module has {known}")

    def inspect_source(self, fmt: str = "") -> str:
        """TVM v0.23's name of :meth:`get_source` (same formats)."""
        return self.get_source(fmt)

    def export_library(self, file_name: "str | os.PathLike[str]", *, fcompile: Any = None,
                       addons: Any = None, workspace_dir: Any = None, **kwargs: Any) -> str:
        """Write the compiled library to ``file_name`` (load it with ``ts.runtime.load_module``).

        TVM's keywords: ``workspace_dir`` is accepted (tessera writes no intermediate files:
        the library was compiled and linked when the module was built); ``fcompile``,
        ``addons`` and compiler options are refused, since tessera does not link again."""
        if fcompile is not None or addons or kwargs:
            given = ", ".join(k for k, v in (("fcompile", fcompile), ("addons", addons)) if v)
            given = ", ".join(x for x in (given, ", ".join(kwargs)) if x)
            raise TesseraValueError(
                f"export_library: {given} not supported: tessera compiles and links the library "
                "when it builds the module (with the target's compiler options), and exports "
                "that library as it is")
        file_name = os.path.abspath(os.fspath(file_name))
        directory = os.path.dirname(file_name)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tessera-export-")
        os.close(fd)
        try:
            shutil.copyfile(self._mod.lib_path, tmp)
            # mkstemp makes the file 0600; an exported library is an ordinary file (umask applies).
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o755 & ~umask)
            os.replace(tmp, file_name)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return file_name

    def time_evaluator(self, func_name: str, dev: Any, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: int = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = "") -> Callable[..., BenchmarkResult]:
        """A timer: ``timer(*args)`` returns a :class:`BenchmarkResult` (seconds per call).

        The function runs ``1 + number * repeat`` times; the first call is discarded; each repeat
        averages ``number`` calls, raised until a repeat takes at least ``min_repeat_ms``.
        """
        if func_name not in self.function_names:
            raise AttributeError(f"the module has no function '{func_name}'; functions: " + ", ".join(self.function_names))

        def evaluator(*args: Any) -> BenchmarkResult:
            results = _call(self._mod, func_name, args, lambda handles: _core.host_time(
                self._mod, func_name, handles, int(number), int(repeat), int(min_repeat_ms),
                int(limit_zero_time_iterations), int(cooldown_interval_ms), int(repeats_to_cooldown),
                int(cache_flush_bytes)))
            dev.sync()
            return BenchmarkResult(results)

        return evaluator

    def __repr__(self) -> str:
        return f"<tessera.runtime.Module {self.type_key} functions={self.function_names}>"


def _assembly(mod: Any) -> str:
    """The assembly of ``mod``'s C source, from the compiler and flags that built it."""
    import subprocess

    command = list(mod.compile_command)
    if not command:
        raise ValueError("get_source('asm') needs the build that made this module: a library "
                         "loaded from a file carries no compiler flags; build it again with ts.build")
    argv = command[:1] + ["-S", "-fPIC", "-o", "-", "-x", "c", "-"] + command[1:]
    # The text the compiler got (a DSL module shows its splats in OpenCL C's spelling).
    out = subprocess.run(argv, input=mod.compiled_source, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("the C compiler could not produce assembly (exit status "
                           f"{out.returncode}):\n{out.stderr}")
    return out.stdout


class CSourceModule:
    """C source held as a module (TVM's ``CSourceModuleCreate``): not runnable as it is;
    ``export_library`` compiles it into a shared library with the system C compiler
    (``$CC``, else cc, gcc or clang)."""

    def __init__(self, code: str, fmt: str = "c", func_names: Sequence[str] = ()) -> None:
        if not isinstance(code, str):
            raise TesseraTypeError(f"CSourceModule: the code must be a str, got {type(code).__name__}")
        if fmt not in ("c", "cc", "cpp"):
            raise TesseraValueError(f"CSourceModule: unknown source format '{fmt}'; use 'c', 'cc' or 'cpp'")
        self._code = code
        self.format = fmt
        self.function_names = list(func_names or [])

    @property
    def kind(self) -> str:
        return "c"

    type_key = kind

    @property
    def imports(self) -> List[Any]:
        return []

    def get_source(self, fmt: str = "") -> str:
        return self._code

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        return name in self.function_names

    def is_runnable(self) -> bool:
        return False

    def is_compilation_exportable(self) -> bool:
        return True

    def is_binary_serializable(self) -> bool:
        return True

    def export_library(self, file_name: "str | os.PathLike[str]", *, fcompile: Any = None,
                       addons: Any = None, workspace_dir: Any = None, **kwargs: Any) -> str:
        """Compile the source into the shared library ``file_name``."""
        import subprocess

        if fcompile is not None or addons or kwargs:
            raise TesseraValueError("export_library of a C source module takes no fcompile, "
                                    "addons or compiler options: it compiles with the system C "
                                    "compiler's defaults")
        compiler = os.environ.get("CC") or next(
            (c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
        if compiler is None or shutil.which(compiler) is None:
            raise TesseraRuntimeError("export_library: no C compiler found: install gcc or clang "
                                      "or set CC")
        file_name = os.path.abspath(os.fspath(file_name))
        language = "c" if self.format == "c" else "c++"
        out = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", file_name, "-x", language, "-"],
                             input=self._code, capture_output=True, text=True)
        if out.returncode != 0:
            raise TesseraRuntimeError(f"export_library: the C compiler failed (exit status "
                                      f"{out.returncode}):\n{out.stderr}")
        return file_name

    def __repr__(self) -> str:
        return f"<tessera.runtime.CSourceModule {self.format}, {len(self._code)} characters>"


def load_module(path: "str | os.PathLike[str]") -> Module:
    """Load a library written by ``Module.export_library``; it is called like the original.

    A relative path is taken from the current directory (the dynamic loader would otherwise
    search its library path for a bare file name)."""
    path = os.path.abspath(os.fspath(path))
    return Module(_core.load_module(path), loaded=True)
