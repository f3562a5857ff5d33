"""Compilation targets as TVM describes them: ``Target("llvm -mcpu=skylake")``,
``Target("cuda -arch=sm_80")``, ``Target({"kind": "cuda", "arch": "sm_80"})``.

A Target is accepted wherever a target string is (``ts.build(mod, target=Target("cuda"))``);
``with Target(...):`` makes it :meth:`Target.current`.

>>> t = Target("cuda -arch=sm_80", host="llvm")
>>> t.kind.name, t.arch, t.max_num_threads, t.keys, t.host.kind.name
('cuda', 'sm_80', 1024, ['cuda', 'gpu'], 'llvm')
"""

import json
import shlex

from ..error import TesseraTypeError, TesseraValueError

__all__ = ["MemoryInfo", "Target", "TargetKind", "list_kinds"]


class MemoryInfo:
    """The facts of a special memory a target offers (TVM's ``target.MemoryInfo``): the unit of
    addressing in bits, the widest vector access and the capacity in bits, and the address the
    host sees (``head_address``, an expression; None when the host cannot address it). A target
    registers one per storage scope as the global function ``"tvm.info.mem.<scope>"``, which
    tir.LowerDeviceStorageAccessInfo calls."""

    def __init__(self, unit_bits, max_simd_bits, max_num_bits, head_address=None):
        from .. import _core

        for name, value in (("unit_bits", unit_bits), ("max_simd_bits", max_simd_bits),
                            ("max_num_bits", max_num_bits)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise TesseraValueError(f"MemoryInfo: {name} must be a positive number of bits, "
                                        f"got {value!r}")
        if head_address is not None and not isinstance(head_address, _core.PrimExpr):
            raise TesseraTypeError(f"MemoryInfo: head_address must be an expression or None, "
                                   f"got {head_address!r}")
        self.unit_bits = unit_bits
        self.max_simd_bits = max_simd_bits
        self.max_num_bits = max_num_bits
        self.head_address = head_address

    def __repr__(self):
        return (f"MemoryInfo(unit_bits={self.unit_bits}, max_simd_bits={self.max_simd_bits}, "
                f"max_num_bits={self.max_num_bits}, head_address={self.head_address!r})")


def _is_attr_map(value):
    from .. import _core

    return isinstance(value, _core.Map)


def _attr_to_python(value):
    """A target in its attribute form (what T.func_attr stores) as plain Python values."""
    from .. import _core

    if isinstance(value, _core.Map):
        return {k: _attr_to_python(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: _attr_to_python(v) for k, v in value.items()}
    if isinstance(value, (_core.Array, list, tuple)):
        return [_attr_to_python(v) for v in value]
    if isinstance(value, _core.StringImm):
        return value.value
    if isinstance(value, _core.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, _core.FloatImm):
        return float(value.value)
    return value


class TargetKind:
    """The kind of a target (``Target("cuda").kind.name == "cuda"``)."""

    def __init__(self, name, keys, defaults, types):
        self.name = name
        self.default_keys = list(keys)
        self._defaults = dict(defaults)
        self._types = dict(types)

    @property
    def options(self):
        """Option names with their types, as TVM lists them."""
        return {k: t.__name__ for k, t in self._types.items()}

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"TargetKind({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TargetKind) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


_CPU_OPTIONS = {"mcpu": str, "mtriple": str, "mattr": list, "mabi": str, "num-cores": int,
                "opt-level": int, "fast-math": bool, "model": str, "libs": list, "tag": str,
                "device": str, "system-lib": bool, "runtime": str, "link-params": bool,
                "vector-width": int, "jit": str}
_GPU_OPTIONS = {"arch": str, "max_num_threads": int, "max_threads_per_block": int,
                "thread_warp_size": int, "max_shared_memory_per_block": int,
                "registers_per_block": int, "max_block_size_x": int, "max_block_size_y": int,
                "max_block_size_z": int, "model": str, "libs": list, "tag": str, "mcpu": str,
                "mtriple": str, "device": str}

_KINDS = {
    "llvm": TargetKind("llvm", ["cpu"], {}, _CPU_OPTIONS),
    "c": TargetKind("c", ["cpu"], {}, _CPU_OPTIONS),
    "cuda": TargetKind("cuda", ["cuda", "gpu"],
                       {"max_num_threads": 1024, "thread_warp_size": 32}, _GPU_OPTIONS),
    "nvptx": TargetKind("nvptx", ["cuda", "gpu"],
                        {"max_num_threads": 1024, "thread_warp_size": 32}, _GPU_OPTIONS),
    "rocm": TargetKind("rocm", ["rocm", "gpu"],
                       {"max_num_threads": 256, "thread_warp_size": 64}, _GPU_OPTIONS),
    "opencl": TargetKind("opencl", ["opencl", "gpu"],
                         {"max_num_threads": 256, "thread_warp_size": 1}, _GPU_OPTIONS),
    "vulkan": TargetKind("vulkan", ["vulkan", "gpu"],
                         {"max_num_threads": 256, "thread_warp_size": 1}, _GPU_OPTIONS),
    "metal": TargetKind("metal", ["metal", "gpu"],
                        {"max_num_threads": 256, "thread_warp_size": 16}, _GPU_OPTIONS),
    "webgpu": TargetKind("webgpu", ["webgpu", "gpu"], {"max_num_threads": 256}, _GPU_OPTIONS),
    "hexagon": TargetKind("hexagon", ["hexagon"], {}, _CPU_OPTIONS),
    "ext_dev": TargetKind("ext_dev", ["ext_dev"], {}, _CPU_OPTIONS),
}
_ALIASES = {"nvidia/geforce-rtx-3090": ("cuda", {"arch": "sm_86"}),
            "nvidia/geforce-rtx-3090-ti": ("cuda", {"arch": "sm_86"}),
            "nvidia/geforce-rtx-3070": ("cuda", {"arch": "sm_86"}),
            "nvidia/geforce-rtx-2080-ti": ("cuda", {"arch": "sm_75"}),
            "apple/m1-gpu": ("metal", {"max_threads_per_block": 1024,
                                       "max_shared_memory_per_block": 32768,
                                       "thread_warp_size": 32}),
            "nvidia/nvidia-a100": ("cuda", {"arch": "sm_80"}),
            "nvidia/nvidia-h100": ("cuda", {"arch": "sm_90a"})}

_current = []


def _vscale_values(target):
    """The values ``T.vscale()`` can take on ``target``: powers of two up to 16 (2048-bit
    vectors) on a CPU target with scalable vectors (``-mattr=+sve``/``+sve2``/``+sme`` on
    AArch64, ``+v`` on RISC-V), else none. The analyzer proves conditions on vscale with them."""
    if target is None or target.kind.name not in ("llvm", "c"):
        return []
    features = set(target.mattr)
    triple = target.mtriple if isinstance(target.mtriple, str) else ""
    if features & {"+sve", "+sve2", "+sme"} or (triple.startswith("riscv") and "+v" in features):
        return [1, 2, 4, 8, 16]
    return []


def _set_vscale_context():
    """Tells the C++ analyzer what vscale can be on the current target (see _vscale_values)."""
    from .. import _core

    target = _current[-1] if _current else None
    _core.set_vscale_context(_vscale_values(target), "None" if target is None else str(target))


def list_kinds():
    """The names of the known target kinds."""
    return sorted(_KINDS)


def _kind(name):
    if name not in _KINDS:
        raise TesseraValueError(f"unknown target kind '{name}'; known kinds: {', '.join(list_kinds())}")
    return _KINDS[name]


def _option_value(kind, key, text):
    """A ``-key=value`` option's value in the option's type."""
    typ = kind._types.get(key)
    if typ is None:
        raise TesseraValueError(f"target kind '{kind.name}' has no option '{key}'; "
                                f"its options: {', '.join(sorted(kind._types))}")
    if typ is bool:
        if text in ("", "true", "1", "True"):
            return True
        if text in ("false", "0", "False"):
            return False
        raise TesseraValueError(f"target option -{key} takes true or false, got '{text}'")
    if typ is int:
        try:
            return int(text)
        except ValueError:
            raise TesseraValueError(f"target option -{key} takes an integer, got '{text}'") from None
    if typ is list:
        return [v for v in text.split(",") if v]
    return text


def _parse_string(text):
    words = shlex.split(text)
    if not words:
        raise TesseraValueError("empty target string")
    name, words = words[0], words[1:]
    attrs = {}
    if name in _ALIASES:
        name, attrs = _ALIASES[name][0], dict(_ALIASES[name][1])
    kind = _kind(name)
    keys = None
    for word in words:
        if not word.startswith("-"):
            raise TesseraValueError(f"target option '{word}' of '{text}' must look like -key=value")
        key, _, value = word.lstrip("-").partition("=")
        if key == "keys":
            keys = [k for k in value.split(",") if k]
        else:
            if key not in kind._types and key.replace("-", "_") in kind._types:
                key = key.replace("-", "_")
            attrs[key] = _option_value(kind, key, value)
    return kind, keys, attrs


def _parse_dict(config):
    config = dict(config)
    if "kind" not in config:
        raise TesseraValueError(f"a target dict needs a 'kind', got {sorted(config)}")
    kind = _kind(config.pop("kind"))
    keys = config.pop("keys", None)
    host = config.pop("host", None)
    config.pop("tag", None)
    attrs = {}
    for key, value in config.items():
        typ = kind._types.get(key)
        if typ is None:
            raise TesseraValueError(f"target kind '{kind.name}' has no option '{key}'")
        if typ is list:
            value = [value] if isinstance(value, str) else list(value)
        elif not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise TesseraTypeError(f"target option '{key}' takes a {typ.__name__}, got {value!r}")
        attrs[key] = value
    return kind, keys, attrs, host


class Target:
    """A compilation target: a kind, its keys and attributes, and an optional host target."""

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            self.kind, self.keys, self._attrs = target.kind, list(target.keys), dict(target._attrs)
            self.host = target.host
        elif isinstance(target, str):
            kind, keys, attrs = _parse_string(target)
            self._init(kind, keys, attrs, None)
        elif isinstance(target, dict) or _is_attr_map(target):
            kind, keys, attrs, dict_host = _parse_dict(_attr_to_python(target))
            self._init(kind, keys, attrs, dict_host)
        else:
            raise TesseraTypeError(f"Target takes a string, a dict or a Target, got {target!r}")
        if host is not None:
            self.host = host if isinstance(host, Target) else Target(host)

    def _init(self, kind, keys, attrs, host):
        self.kind = kind
        self.keys = list(keys) if keys is not None else list(kind.default_keys)
        merged = dict(kind._defaults)
        merged.update(attrs)
        self._attrs = merged
        self.host = None if host is None else (host if isinstance(host, Target) else Target(host))

    # ---- attributes ----

    @property
    def attrs(self):
        """The target's attributes (defaults of its kind included)."""
        return dict(self._attrs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        attrs = self.__dict__.get("_attrs", {})
        if name in attrs:
            return attrs[name]
        kind = self.__dict__.get("kind")
        if kind is not None and name in kind._types:
            return [] if kind._types[name] is list else ("" if kind._types[name] is str else None)
        raise AttributeError(f"'Target' object has no attribute '{name}'")

    @property
    def mattr(self):
        """``-mattr`` features of a CPU target (a list)."""
        return list(self._attrs.get("mattr", []))

    @property
    def mcpu(self):
        """``-mcpu`` of the target ("" when not set)."""
        return self._attrs.get("mcpu", "")

    @property
    def arch(self):
        """The GPU architecture (``sm_80``); "" when not set."""
        return self._attrs.get("arch", "")

    @property
    def max_num_threads(self):
        """Threads per block the target allows (GPU kinds); None for CPUs."""
        return self._attrs.get("max_num_threads")

    @property
    def thread_warp_size(self):
        return self._attrs.get("thread_warp_size", 1)

    @property
    def model(self):
        return self._attrs.get("model", "unknown")

    @property
    def libs(self):
        return list(self._attrs.get("libs", []))

    def get_target_device_type(self):
        """The DLPack device type code of the target (1 CPU, 2 CUDA, ...)."""
        return {"cuda": 2, "nvptx": 2, "opencl": 4, "vulkan": 7, "metal": 8, "rocm": 10,
                "webgpu": 15, "hexagon": 16, "ext_dev": 12}.get(self.kind.name, 1)

    def has_gpu(self):
        return "gpu" in self.keys

    def with_host(self, host=None):
        """A copy with ``host`` as its host target."""
        return Target(self, host)

    def export(self):
        """The target as a dict (``Target(t.export())`` is ``t``)."""
        out = {"kind": self.kind.name, "tag": "", "keys": list(self.keys)}
        out.update({k: (list(v) if isinstance(v, list) else v) for k, v in self._attrs.items()})
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    def _script_options(self):
        parts = [self.kind.name, "-keys=" + ",".join(self.keys)]
        for key in sorted(self._attrs):
            value = self._attrs[key]
            if isinstance(value, list):
                value = ",".join(value)
            elif isinstance(value, bool):
                value = "true" if value else "false"
            parts.append(f"-{key}={value}")
        return " ".join(parts)

    def _tessera_target_string(self):
        """The target string ts.build understands ("cuda -arch=sm_80", "llvm", "c")."""
        if self.kind.name in ("cuda", "nvptx"):
            return "cuda" + (f" -arch={self.arch}" if self.arch else "")
        if self.kind.name in ("llvm", "c"):
            return self.kind.name
        raise TesseraValueError(f"tessera cannot build for the '{self.kind.name}' target; "
                                "use 'c', 'llvm' or 'cuda'")

    def _core_target(self):
        """The C++ Target (``tessera._core.Target``) that builds use, made once on first use from
        the kind and arch tessera builds for; ts.build, ts.lower and the automatic schedule read
        the target from it."""
        core = self.__dict__.get("_core")
        if core is None:
            from .. import _core

            core = self.__dict__["_core"] = _core.Target(self._tessera_target_string())
        return core

    @property
    def facts(self):
        """The target's facts as the compiler uses them (``vector_bits``, ``cores``, cache sizes;
        for CUDA the thread and shared-memory limits): the host's are detected once.

        >>> Target("llvm").facts["vector_bits"]
        256
        """
        return dict(self._core_target().facts)

    def __str__(self):
        return self._script_options()

    def __repr__(self):
        return f"Target({json.dumps(self.export())})" if self.host else f"Target({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, str) or _is_attr_map(other):  # a function's "target" attribute
            other = Target(other)
        return isinstance(other, Target) and self.export() == other.export()

    def __hash__(self):
        return hash(json.dumps(self.export(), sort_keys=True))

    # ---- the current target ----

    def __enter__(self):
        _current.append(self)
        _set_vscale_context()
        return self

    def __exit__(self, *exc):
        _current.pop()
        _set_vscale_context()
        return False

    @staticmethod
    def current(allow_none=True):
        """The target of the innermost ``with Target(...):``; None (or an error) outside."""
        if _current:
            return _current[-1]
        if not allow_none:
            raise TesseraValueError("no target is set: use `with Target(...):`")
        return None

    @staticmethod
    def list_kinds():
        return list_kinds()

    @staticmethod
    def canon_target(target):
        return None if target is None else (target if isinstance(target, Target) else Target(target))


def create(target):
    """``Target(target)``, as TVM's older ``tvm.target.create``."""
    return target if isinstance(target, Target) else Target(target)
