"""The Target object as TVM v0.23 defines it: a kind, keys, typed attributes, an optional host
target and the features a kind's parser derives.

A target is written three ways, all giving the same object:

- a string: ``"llvm -mcpu=cortex-m55 -mattr=+nomve"``: the kind, then options ``-key=value``,
  ``--key value`` or a bare ``-flag`` (true); a value with spaces is quoted
  (``-device_name='Name of GPU'``), a list is comma-separated (``-libs=cublas,cudnn``);
- a tag, the name of a device (``"nvidia/nvidia-a100"``; see :mod:`tessera.target.tag`);
- a config dict or its JSON text: ``{"kind": "cuda", "arch": "sm_80", "host": "llvm"}``.

``str(target)`` gives it back in TVM's canonical order: the kind, ``-keys=...``, then the
attributes sorted by name (empty values left out). Every mistake in a target raises a
``ValueError`` naming the target and the offending option, as TVM does.
"""

import copy
import json
import re

from ..error import InternalError, TesseraValueError

# ---------------------------------------------------------------------------------------------
# Kinds: their DLPack device type, default keys and options (name -> (type, default)).
# Types: "str", "int", "bool", "array" (of strings), "target", "targets" (an array of targets).

_TYPE_KEYS = {"str": "ffi.String", "int": "int", "bool": "bool", "array": "ffi.Array",
              "target": "target.Target", "targets": "ffi.Array"}

# Options every kind has.
_COMMON = {"keys": "array", "tag": "str", "device": "str", "model": "str", "libs": "array",
           "host": "target", "from_device": "int", "target_device_type": "int"}


def _opts(*groups, **defaults):
    """An option table: ``groups`` are (type, "name name ...") pairs; ``defaults`` their values
    (a name's dashes written as underscores)."""
    table = {}
    for typ, names in groups:
        for name in names.split():
            table[name] = (typ, defaults.get(name.replace("-", "_")))
    return table


_LLVM = _opts(("array", "mattr cl-opt"),
              ("str", "mcpu mtriple mfloat-abi mabi jit"),
              ("int", "num-cores opt-level vector-width"),
              ("bool", "fast-math fast-math-nnan fast-math-ninf fast-math-nsz fast-math-arcp "
                       "fast-math-contract fast-math-reassoc"))
_GPU_LIMITS = "max_num_threads max_threads_per_block thread_warp_size max_shared_memory_per_block"

_KIND_TABLE = {
    # name: (device type, default keys, options)
    "llvm": (1, ["cpu"], _LLVM),
    "c": (1, ["cpu"], _opts(("str", "mcpu march"),
                            ("int", "workspace-byte-alignment constants-byte-alignment"))),
    "cuda": (2, ["cuda", "gpu"],
             _opts(("str", "mcpu arch"),
                   ("int", _GPU_LIMITS + " registers_per_block l2_cache_size_bytes"),
                   max_num_threads=1024, thread_warp_size=32)),
    "nvptx": (2, ["cuda", "gpu"], _opts(("str", "mcpu mtriple"),
                                        ("int", "max_num_threads thread_warp_size"),
                                        max_num_threads=1024, thread_warp_size=32)),
    "rocm": (10, ["rocm", "gpu"], _opts(("str", "mcpu mtriple"), ("array", "mattr"),
                                        ("int", _GPU_LIMITS), max_num_threads=256,
                                        max_threads_per_block=256,
                                        max_shared_memory_per_block=65536, thread_warp_size=64)),
    "opencl": (4, ["opencl", "gpu"],
               _opts(("int", _GPU_LIMITS + " texture_spatial_limit texture_depth_limit "
                             "max_function_args image_base_address_alignment"),
                     max_threads_per_block=256, max_shared_memory_per_block=16384,
                     max_num_threads=256, thread_warp_size=1, texture_spatial_limit=16384,
                     texture_depth_limit=2048, max_function_args=128,
                     image_base_address_alignment=64)),
    "metal": (8, ["metal", "gpu"],
              _opts(("int", _GPU_LIMITS + " max_function_args"), max_num_threads=256,
                    max_threads_per_block=256, max_shared_memory_per_block=32768,
                    thread_warp_size=16, max_function_args=31)),
    "vulkan": (7, ["vulkan", "gpu"],
               _opts(("array", "mattr"),
                     ("bool", "supports_float16 supports_float32 supports_float64 supports_int8 "
                              "supports_int16 supports_int32 supports_int64 supports_8bit_buffer "
                              "supports_16bit_buffer supports_storage_buffer_storage_class "
                              "supports_push_descriptor supports_dedicated_allocation "
                              "supports_integer_dot_product supports_cooperative_matrix"),
                     ("int", "supported_subgroup_operations max_num_threads max_threads_per_block "
                             "thread_warp_size max_block_size_x max_block_size_y max_block_size_z "
                             "max_push_constants_size max_uniform_buffer_range "
                             "max_storage_buffer_range max_per_stage_descriptor_storage_buffer "
                             "max_shared_memory_per_block driver_version vulkan_api_version "
                             "max_spirv_version"),
                     ("str", "device_type device_name driver_name"),
                     supports_float32=True, supports_int32=True, max_num_threads=256,
                     max_threads_per_block=256, thread_warp_size=1)),
    "webgpu": (15, ["webgpu", "gpu"], _opts(("int", "max_num_threads"), max_num_threads=256)),
    "hexagon": (16, ["hexagon", "cpu"], _opts(("array", "mattr llvm-options"),
                                              ("str", "mcpu mtriple"),
                                              ("int", "num-cores vtcm-capacity"))),
    "ext_dev": (12, [], {}),
    "composite": (1, [], _opts(("targets", "devices"))),
    "test": (1, [], {}),
}


class TargetKind:
    """The kind of a target (``Target("cuda").kind.name == "cuda"``): its device type, default
    keys and the options it takes."""

    def __init__(self, name, device_type, default_keys, options):
        self.name = name
        self.default_device_type = device_type
        self.default_keys = list(default_keys)
        self._options = dict({k: (t, None) for k, t in _COMMON.items()}, **options)
        self._defaults = {k: v for k, (_, v) in self._options.items() if v is not None}

    @property
    def options(self):
        """The options of this kind, name -> the type TVM gives it ("int", "bool",
        "ffi.String", "ffi.Array", "target.Target")."""
        return {name: _TYPE_KEYS[typ] for name, (typ, _) in self._options.items()}

    @staticmethod
    def options_from_name(kind_name):
        """The options of the kind called ``kind_name`` (as :attr:`options`)."""
        return _kind(kind_name).options

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"TargetKind({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, TargetKind) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


_KINDS = {name: TargetKind(name, *spec) for name, spec in _KIND_TABLE.items()}


def list_kinds():
    """The names of the known target kinds."""
    return sorted(_KINDS)


def _kind(name):
    if name not in _KINDS:
        raise TesseraValueError(f"unknown target kind '{name}'; known kinds: {', '.join(list_kinds())}")
    return _KINDS[name]


# ---------------------------------------------------------------------------------------------
# Strings: quotes (') group words, a backslash escapes the next character.

def _split(text, sep):
    """``text`` cut at ``sep`` outside quotes; quotes and escapes stay in the words."""
    words, word, quoted, i = [], [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == sep and not quoted:
            if word:
                words.append("".join(word))
            word = []
        elif ch == "\\" and i + 1 < len(text):
            word.append(text[i:i + 2])
            i += 1
        else:
            if ch == "'":
                quoted = not quoted
            word.append(ch)
        i += 1
    if quoted:
        raise TesseraValueError(f"unbalanced quote (') in '{text}'")
    if word:
        words.append("".join(word))
    return words


def _is_quoted(text):
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        return False
    escaping = False
    for ch in text[1:-1]:
        if escaping:
            escaping = False
        elif ch == "\\":
            escaping = True
        elif ch == "'":
            return False
    return not escaping


def _unquote(text):
    """The value a written word stands for: enclosing quotes dropped, escapes outside quotes
    resolved (inside an inner quoted part they are kept for the next level)."""
    if _is_quoted(text):
        text = text[1:-1]
    out, inside, escaping = [], False, False
    for ch in text:
        if escaping:
            escaping = False
        elif ch == "\\":
            escaping = True
            if not inside:
                continue
        elif ch == "'":
            inside = not inside
        out.append(ch)
    return "".join(out)


def _escape(text):
    return re.sub(r"(['\\])", r"\\\1", text)


def _parse_word(text, typ, key):
    """The value of option ``key`` (of type ``typ``) written as ``text``."""
    text = _unquote(text)
    if typ in ("int", "bool"):
        match = re.match(r"\s*([+-]?\d+)", text)
        if match:
            value = int(match.group(1))
        elif text.lower() in ("true", "false"):
            value = int(text.lower() == "true")
        else:
            raise TesseraValueError(f"option '{key}' takes {'an integer' if typ == 'int' else 'true or false'}, "
                                    f"got '{text}'")
        return bool(value) if typ == "bool" else value
    if typ == "str":
        return text.strip(" ")
    if typ == "target":
        return Target(text)
    if typ in ("array", "targets"):
        element = "str" if typ == "array" else "target"
        return [_parse_word(word, element, f"{key}[{i}]") for i, word in enumerate(_split(text, ","))]
    raise AssertionError(typ)


def _parse_string(text):
    """The config dict a target string (not a tag, not JSON) stands for."""
    words = _split(text, " ")
    if not words:
        raise TesseraValueError("a target string cannot be empty")
    kind = _kind(words[0])
    config = {"kind": words[0]}
    i = 1
    while i < len(words):
        word = words[i]
        name = word.lstrip("-")
        if name == word:
            raise TesseraValueError(f"target option '{word}' must look like -key=value (or --key value)")
        if not name:
            raise TesseraValueError(f"'{word}' is not a target option")
        if "=" in name:
            key, _, value = name.partition("=")
            if not key or not value:
                raise TesseraValueError(f"target option '{word}' has an empty name or value")
            i += 1
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            key, value = name, words[i + 1]
            i += 2
        else:
            key, value = name, "1"
            i += 1
        if key in config:
            raise TesseraValueError(f"target option '{key}' is given more than once")
        config[key] = _parse_word(value, _option_type(kind, key), key)
    return config


def _option_type(kind, key):
    if key not in kind._options:
        raise TesseraValueError(f"target kind '{kind.name}' has no option '{key}'; its options: "
                                f"{', '.join(sorted(kind._options))}")
    return kind._options[key][0]


def _check_value(value, typ, key):
    """A config dict's value for option ``key``, checked against the option's type."""
    from .. import _core

    value = _python(value)
    if typ == "int":
        if isinstance(value, int):
            return int(value)
        raise TesseraValueError(f"option '{key}' takes an integer, got {value!r}")
    if typ == "bool":
        if isinstance(value, int):
            return bool(value)
        raise TesseraValueError(f"option '{key}' takes a bool, got {value!r}")
    if typ == "str":
        if isinstance(value, str):
            return value
        raise TesseraValueError(f"option '{key}' takes a string, got {value!r}")
    if typ == "target":
        return value if isinstance(value, Target) else Target(value)
    if isinstance(value, (list, tuple, _core.Array)):
        element = "str" if typ == "array" else "target"
        return [_check_value(v, element, f"{key}[{i}]") for i, v in enumerate(value)]
    raise TesseraValueError(f"option '{key}' takes a list, got {value!r}")


def _python(value):
    """A value as plain Python (IR strings and numbers, Maps and Arrays of them)."""
    from .. import _core

    if isinstance(value, Target):
        return value
    if isinstance(value, (_core.Map, dict)):
        return {_python(k): _python(v) for k, v in value.items()}
    if isinstance(value, (_core.Array, list, tuple)):
        return [_python(v) for v in value]
    if isinstance(value, _core.StringImm):
        return value.value
    if isinstance(value, _core.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, _core.FloatImm):
        return float(value.value)
    if isinstance(value, str):
        return str(value)
    return value


# ---------------------------------------------------------------------------------------------
# The parsers some kinds run on their config before it is checked.

_MPROFILE_BASE = ("cortex-m0", "cortex-m3")
_MPROFILE_DSP = ("cortex-m55", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p", "cortex-m85")
_MPROFILE_MVE = ("cortex-m55", "cortex-m85")


def _merge_arm_keys(config):
    keys = list(config.get("keys") or [])
    config["keys"] = keys + [k for k in ("arm_cpu", "cpu") if k not in keys]


def _parse_cpu(config):
    """llvm and c: an Arm M-profile CPU (``-mcpu=cortex-m*``) gets the features has_dsp/has_mve;
    an Arm A-profile triple (arm*, aarch64*) the features the CPU table knows; both get the keys
    arm_cpu, cpu."""
    mcpu = config.get("mcpu")
    mcpu = mcpu if isinstance(mcpu, str) else None
    triple = config.get("mtriple")
    triple = triple if isinstance(triple, str) else None
    if mcpu and mcpu.startswith(_MPROFILE_BASE + _MPROFILE_DSP):
        mattr = [a for a in (config.get("mattr") or []) if isinstance(a, str)]
        flags = [mcpu] + mattr
        nomve = any("+nomve" in f for f in flags)
        nodsp = any("+nodsp" in f for f in flags)
        mve = mcpu.startswith(_MPROFILE_MVE) and not nomve and not nodsp
        dsp = mve or (mcpu.startswith(_MPROFILE_DSP) and not nodsp)
        config["features"] = {"has_dsp": dsp, "has_mve": mve}
        _merge_arm_keys(config)
    elif triple and (triple.startswith("aarch64") or triple.startswith("arm")):
        if config["kind"] == "llvm":
            from . import _cpu_features

            config["features"] = _cpu_features.aprofile_features(config)
        _merge_arm_keys(config)
    return config


def _cuda_arch_default():
    """(sm_XY of the first CUDA GPU, True), or ("sm_50", False) when there is none (TVM's
    default when it cannot ask a GPU)."""
    try:
        from .. import _core

        if _core.cuda_driver_status()[0]:
            major, minor = _core.cuda_compute_capability(0)
            return f"sm_{major}{minor}", True
    except Exception:  # noqa: BLE001 - no driver, no device: the default below
        pass
    return "sm_50", False


def _parse_cuda(config):
    arch = config.get("arch")
    if arch is not None:
        if not isinstance(arch, str) or not arch.startswith("sm_"):
            raise TesseraValueError(f"a CUDA target's -arch is sm_XY (e.g. sm_80), got '{arch}'")
    else:
        config["arch"], _ = _cuda_arch_default()
        config["__arch_implied__"] = True
    return config


def _set_or_check(config, key, value, kind):
    if key in config and config[key] != value:
        raise TesseraValueError(f"a {kind} target's -{key} is '{value}', got '{config[key]}'")
    config[key] = value


def _parse_nvptx(config):
    _set_or_check(config, "mtriple", "nvptx64-nvidia-cuda", "nvptx")
    mcpu = config.get("mcpu")
    if mcpu is not None:
        if not isinstance(mcpu, str) or not mcpu.startswith("sm_"):
            raise TesseraValueError(f"an nvptx target's -mcpu is sm_XY (e.g. sm_80), got '{mcpu}'")
    else:
        config["mcpu"], _ = _cuda_arch_default()
    return config


def _parse_rocm(config):
    _set_or_check(config, "mtriple", "amdgcn-amd-amdhsa-hcc", "rocm")
    mcpu = config.get("mcpu")
    if mcpu is not None:
        if not isinstance(mcpu, str) or not re.match(r"gfx[0-9a-zA-Z]+", mcpu):
            raise TesseraValueError(f"a ROCm target's -mcpu is gfxNNN (e.g. gfx908), got '{mcpu}'")
    else:
        config["mcpu"] = "gfx900"
    return config


def _parse_test(config):
    config["features"] = {"is_test": True}
    return config


_PARSERS = {"llvm": _parse_cpu, "c": _parse_cpu, "cuda": _parse_cuda, "nvptx": _parse_nvptx,
            "rocm": _parse_rocm, "test": _parse_test}


def _from_config(config):
    """(kind, tag, keys, host, attrs, features, arch implied) of a config dict, checked."""
    if "features" in config:
        raise TesseraValueError("a target's 'features' come from its kind's parser; "
                                "they cannot be given")
    if "kind" not in config:
        raise TesseraValueError(f"a target config needs a 'kind', got the fields {sorted(map(str, config))}")
    if not isinstance(config["kind"], str):
        raise TesseraValueError(f"a target's 'kind' is a string, got {config['kind']!r}")
    kind = _kind(config["kind"])
    if kind.name in _PARSERS:
        config = _PARSERS[kind.name](config)
    features = config.pop("features", {})
    arch_implied = config.pop("__arch_implied__", False)
    config.pop("kind")
    tag = config.pop("tag", "")
    if not isinstance(tag, str):
        raise TesseraValueError(f"a target's 'tag' is a string, got {tag!r}")
    user_keys = "keys" in config
    keys = []
    if user_keys:
        raw = config.pop("keys")
        if not isinstance(raw, (list, tuple)) or not all(isinstance(k, str) for k in raw):
            raise TesseraValueError(f"a target's 'keys' is a list of strings, got {raw!r}")
        keys = list(raw)
    if isinstance(config.get("device"), str):
        keys.append(config["device"])
    if not user_keys:
        keys += kind.default_keys
    keys = list(dict.fromkeys(keys))
    host = config.pop("host", None)
    if host is not None:
        host = host if isinstance(host, Target) else Target(host)
    attrs = {}
    for key, value in config.items():
        attrs[key] = _check_value(value, _option_type(kind, key), key)
    # -from_device asks TVM's runtime for the device's limits; tessera keeps the kind's defaults.
    attrs.pop("from_device", None)
    for key, value in kind._defaults.items():
        attrs.setdefault(key, value)
    return kind, tag, keys, host, attrs, features, arch_implied


class TargetFeatures:
    """``target.features.has_dsp``: the features the kind's parser found (None when it has not
    got the feature)."""

    def __init__(self, target):
        self.target = target

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.target._features.get(name)

    def __bool__(self):
        return True

    def __repr__(self):
        return f"TargetFeatures({self.target._features!r})"


_current = []


class NoCurrentTargetError(InternalError, ValueError):
    """``Target.current(allow_none=False)`` (and the queries that need a target) outside every
    ``with Target(...):``. An InternalError, as TVM raises it; also a ValueError."""


class Target:
    """A compilation target: a kind, its keys and attributes, and an optional host target."""

    def __init__(self, target, host=None):
        from .. import _core

        if isinstance(target, _core.StringImm):
            target = target.value
        if isinstance(host, _core.StringImm):
            host = host.value
        if isinstance(target, Target):
            self.__dict__.update({k: copy.copy(v) for k, v in target.__dict__.items() if k != "_core"})
        elif isinstance(target, str) or isinstance(target, (dict, _core.Map)):
            self._build(target)
        else:
            raise TesseraValueError(f"a Target is made from a string, a dict or a Target, "
                                    f"got {type(target).__name__} {target!r}")
        if host is not None:
            if not isinstance(host, (str, dict, _core.Map, Target)):
                raise TesseraValueError(f"a target's host is a string, a dict or a Target, "
                                        f"got {type(host).__name__} {host!r}")
            self.host = host if isinstance(host, Target) else Target(host)

    def _build(self, target):
        from . import tag as _tag

        described = target if isinstance(target, str) else "config dict"
        try:
            if isinstance(target, str):
                config = _tag._tag_config(target)
                if config is None and target.startswith("{"):
                    try:
                        config = json.loads(target)
                    except json.JSONDecodeError as err:
                        raise TesseraValueError(f"the target is not valid JSON: {err}") from None
                    if not isinstance(config, dict):
                        raise TesseraValueError("a JSON target is an object ({...})")
                if config is None:
                    config = _parse_string(target)
            else:
                config = _python(target)
                described = repr(config)
            (self.kind, self.tag, self.keys, self.host, self._attrs, self._features,
             self._arch_implied) = _from_config(dict(config))
        except TesseraValueError as err:
            raise TesseraValueError(f"{err} (in target {described})") from None

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
        if kind is not None and name in kind._options:
            return {"array": [], "str": ""}.get(kind._options[name][0])
        raise AttributeError(f"'Target' object has no attribute '{name}'")

    @property
    def features(self):
        """The features the kind's parser derived (``target.features.has_dsp``)."""
        return TargetFeatures(self)

    @property
    def mattr(self):
        """``-mattr`` features of a CPU target (a list)."""
        return list(self._attrs.get("mattr", []))

    @property
    def mcpu(self):
        """``-mcpu`` of the target ("" when not set)."""
        return str(self._attrs.get("mcpu", ""))

    @property
    def arch(self):
        """The GPU architecture (``sm_80``); "" when not set."""
        return str(self._attrs.get("arch", ""))

    @property
    def max_num_threads(self):
        """Threads per block the target allows (GPU kinds); None for CPUs."""
        return self._attrs.get("max_num_threads")

    @property
    def thread_warp_size(self):
        return self._attrs.get("thread_warp_size", 1)

    @property
    def max_shared_memory_per_block(self):
        return self._attrs.get("max_shared_memory_per_block")

    @property
    def max_block_size_x(self):
        return self._attrs.get("max_block_size_x")

    @property
    def max_block_size_y(self):
        return self._attrs.get("max_block_size_y")

    @property
    def max_function_args(self):
        return int(self._attrs.get("max_function_args", 0))

    @property
    def vtcm_capacity(self):
        return int(self._attrs.get("vtcm-capacity", 0))

    @property
    def l2_cache_size_bytes(self):
        return int(self._attrs.get("l2_cache_size_bytes", 0))

    @property
    def device_name(self):
        """``-device`` ("" when not set)."""
        return str(self._attrs.get("device", ""))

    @property
    def model(self):
        return str(self._attrs.get("model", "unknown"))

    @property
    def libs(self):
        return list(self._attrs.get("libs", []))

    @property
    def supports_integer_dot_product(self):
        if self._attrs.get("supports_integer_dot_product"):
            return True
        if self.kind.name == "cuda" and self.arch.startswith("sm_"):
            return int(re.sub(r"\D", "", self.arch) or 0) >= 61
        return False

    @property
    def supports_cooperative_matrix(self):
        return bool(self._attrs.get("supports_cooperative_matrix", False))

    def get_target_device_type(self):
        """The DLPack device type of the target (1 CPU, 2 CUDA, 4 OpenCL, ...)."""
        return int(self._attrs.get("target_device_type", self.kind.default_device_type))

    def has_gpu(self):
        return "gpu" in self.keys

    def with_host(self, host=None):
        """A copy with ``host`` as its host target."""
        out = Target(self)
        out.host = None if host is None else (host if isinstance(host, Target) else Target(host))
        return out

    def without_host(self):
        return self.with_host(None)

    def export(self):
        """The target as a config dict (``Target(t.export()) == t``)."""
        out = {"kind": self.kind.name, "tag": self.tag, "keys": list(self.keys)}
        if self.host is not None:
            out["host"] = self.host.export()
        for key, value in self._attrs.items():
            if isinstance(value, list):
                value = [v.export() if isinstance(v, Target) else v for v in value]
            out[key] = value
        return out

    @staticmethod
    def _stringify(value):
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, Target):
            value = str(value)
        text = _escape(value)
        return f"'{text}'" if " " in text and not _is_quoted(text) else text

    def __str__(self):
        parts = [self.kind.name]
        if self.keys:
            parts.append("-keys=" + ",".join(self.keys))
        for key in sorted(self._attrs):
            value = self._attrs[key]
            if isinstance(value, list):
                items = []
                for item in value:
                    text = _escape(self._stringify(item))
                    items.append(f"'{text}'" if "," in text and not _is_quoted(text) else text)
                text = ",".join(items)
            else:
                text = self._stringify(value)
            if text:
                parts.append(f"-{key}={text}")
        return " ".join(parts)

    def __repr__(self):
        return f"Target({json.dumps(self.export(), default=str)})" if self.host else f"Target({str(self)!r})"

    def __eq__(self, other):
        from .. import _core

        if isinstance(other, (str, _core.Map, dict)):  # a function's "target" attribute
            try:
                other = Target(other)
            except ValueError:
                return False
        return isinstance(other, Target) and self.export() == other.export()

    def __hash__(self):
        return hash(json.dumps(self.export(), sort_keys=True, default=str))

    # ---- tessera's builds ----

    def _tessera_target_string(self):
        """The target string ts.build understands ("cuda -arch=sm_80", "llvm", "c"); the CUDA
        architecture only where it was given (else the build takes the GPU's own)."""
        if self.kind.name in ("cuda", "nvptx"):
            arch = self.arch if self.kind.name == "cuda" else self.mcpu
            return "cuda" + (f" -arch={arch}" if arch and not self._arch_implied else "")
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

        >>> Target("llvm").facts["vector_bits"] in (128, 256, 512)
        True
        """
        return dict(self._core_target().facts)

    # ---- the current target ----

    def __enter__(self):
        from . import _set_vscale_context

        _current.append(self)
        _set_vscale_context()
        return self

    def __exit__(self, *exc):
        from . import _set_vscale_context

        _current.pop()
        _set_vscale_context()
        return False

    @staticmethod
    def current(allow_none=True):
        """The target of the innermost ``with Target(...):``; None outside (or, with
        ``allow_none=False``, an error)."""
        if _current:
            return _current[-1]
        if not allow_none:
            raise NoCurrentTargetError("no target is set: this needs a target, given as an argument "
                                       "or by `with Target(...):`")
        return None

    @staticmethod
    def target_or_current(target):
        """``target``, or the current target when it is None (an error when both are None)."""
        target = Target.current() if target is None else target
        if target is None:
            raise TesseraValueError("no target given and none is current (`with Target(...):`)")
        return target

    @staticmethod
    def from_device(device):
        """The target of a device present on this machine: "cpu" gives the host's llvm target,
        "cuda" the GPU's (its architecture read from the driver)."""
        from ..runtime import device as _device

        dev = _device(device) if isinstance(device, str) else device
        if dev.device_type == 1:
            return Target("llvm")
        if dev.device_type == 2:
            arch, found = _cuda_arch_default()
            if not found:
                raise TesseraValueError("Target.from_device: there is no CUDA device on this machine")
            return Target(f"cuda -arch={arch}")
        raise TesseraValueError(f"Target.from_device: tessera detects only cpu and cuda devices, got {device!r}")

    @staticmethod
    def list_kinds():
        return list_kinds()

    # ---- canonical forms of target arguments ----

    @staticmethod
    def canon_target(target):
        """None, or the Target a target-like value (string, dict, Target) stands for."""
        if target is None:
            return None
        return target if isinstance(target, Target) else Target(target)

    @staticmethod
    def canon_target_and_host(target, target_host=None):
        """(target with its host, the host) from a target and an optional host."""
        target = Target.canon_target(target)
        if target is None:
            assert target_host is None, "Target host is not empty when target is empty."
            return None, None
        if target.host is None and target_host is not None:
            target = target.with_host(Target.canon_target(target_host))
        return target, target.host

    @staticmethod
    def canon_multi_target(multi_targets):
        """A list of Targets from one target-like value, a list of them, or a dict whose values
        are targets (the keys, device types, are ignored)."""
        from .. import _core

        if multi_targets is None:
            return None
        if isinstance(multi_targets, (dict, _core.Map)) and "kind" not in multi_targets:
            return Target.canon_multi_target(list(multi_targets.values()))
        if isinstance(multi_targets, (list, tuple, _core.Array)):
            return [Target.canon_target(t) for t in multi_targets]
        return [Target.canon_target(multi_targets)]

    @staticmethod
    def canon_multi_target_and_host(target, target_host=None):
        """canon_multi_target, each given ``target_host`` where it has no host."""
        targets = Target.canon_multi_target(target)
        assert targets, "no target given"
        if targets[0].host is None and target_host is not None:
            host = Target.canon_target(target_host)
            targets = [t.with_host(host) for t in targets]
        return targets

    @staticmethod
    def canon_target_map_and_host(target_map, target_host=None):
        """(dict Target -> value, the host) from a dict whose keys are target-like; every Target
        gets the host of the first that has one, or ``target_host``."""
        out, host = {}, None
        for target, value in target_map.items():
            target = Target.canon_target(target)
            assert target is not None, "a target map's key is None"
            if host is None:
                host = target.host if target.host is not None else Target.canon_target(target_host)
            if target.host is None and host is not None:
                target = target.with_host(host)
            out[target] = value
        return out, host
