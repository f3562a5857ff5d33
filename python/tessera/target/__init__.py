"""Compilation targets as TVM describes them: ``Target("llvm -mcpu=skylake")``,
``Target("cuda -arch=sm_80")``, ``Target({"kind": "cuda", "arch": "sm_80"})``.

A Target is accepted wherever a target string is (``ts.build(mod, target=Target("cuda"))``);
``with Target(...):`` makes it :meth:`Target.current`.

>>> t = Target("cuda -arch=sm_80", host="llvm")
>>> t.kind.name, t.arch, t.max_num_threads, t.keys, t.host.kind.name
('cuda', 'sm_80', 1024, ['cuda', 'gpu'], 'llvm')
"""

import re
import warnings

from ..error import TesseraTypeError, TesseraValueError
from . import codegen, tag, x86
from .tag import list_tags, register_tag
from .target import NoCurrentTargetError, Target, TargetFeatures, TargetKind, _current, list_kinds
from .virtual_device import VirtualDevice

__all__ = ["MemoryInfo", "NoCurrentTargetError", "Target", "TargetFeatures", "TargetKind",
           "VirtualDevice", "adreno", "arm_cpu", "bifrost", "create", "cuda", "hexagon",
           "intel_graphics", "list_kinds", "list_tags", "mali", "rasp", "register_tag",
           "riscv_cpu", "rocm", "stm32"]


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


def _vscale_values(target):
    """The values ``T.vscale()`` can take on ``target``: powers of two up to 16 (2048-bit
    vectors) on a CPU target with scalable vectors (``-mattr=+sve``/``+sve2``/``+sme`` on
    AArch64, ``+v`` on RISC-V), else none. The analyzer proves conditions on vscale with them."""
    if target is None or target.kind.name not in ("llvm", "c"):
        return []
    features = set(target.mattr)
    triple = target.attrs.get("mtriple", "")
    if features & {"+sve", "+sve2", "+sme"} or (triple.startswith("riscv") and "+v" in features):
        return [1, 2, 4, 8, 16]
    return []


def _set_vscale_context():
    """Tells the C++ analyzer what vscale can be on the current target (see _vscale_values)."""
    from .. import _core

    target = _current[-1] if _current else None
    _core.set_vscale_context(_vscale_values(target), "None" if target is None else str(target))




# ---- constructors of common targets (TVM's tvm.target.cuda(), arm_cpu("rk3399"), ...) ----

def _with_options(opts, options):
    """``opts`` followed by the words of ``options`` (a string or a list) it does not have."""
    extra = options.split() if isinstance(options, str) else list(options or [])
    return opts + [o for o in extra if o not in opts]


def cuda(model="unknown", arch=None, options=None):
    """A CUDA target: ``cuda(arch="sm_80")``."""
    opts = _with_options(["-model=%s" % model], options)
    if arch:
        opts = _with_options(["-arch=%s" % arch], opts)
    return Target(" ".join(["cuda"] + opts))


def rocm(model="unknown", options=None):
    """A ROCm (AMD GPU) target."""
    return Target(" ".join(["rocm"] + _with_options(["-model=%s" % model], options)))


def mali(model="unknown", options=None):
    """An Arm Mali GPU target (OpenCL)."""
    return Target(" ".join(["opencl"] + _with_options(["-device=mali", "-model=%s" % model], options)))


def intel_graphics(model="unknown", options=None):
    """An Intel GPU target (OpenCL, warps of 16)."""
    opts = ["-device=intel_graphics", "-model=%s" % model, "-thread_warp_size=16"]
    return Target(" ".join(["opencl"] + _with_options(opts, options)))


def bifrost(model="unknown", options=None):
    """An Arm Mali Bifrost GPU target (OpenCL)."""
    return Target(" ".join(["opencl"] + _with_options(["-device=bifrost", "-model=%s" % model], options)))


# Boards and phones arm_cpu(model) knows: (SoC model, triple, mattr, mcpu or None).
_ARM_BOARDS = {
    "pixel2": ("snapdragon835", "arm64-linux-android", "+neon", None),
    "mate10": ("kirin970", "arm64-linux-android", "+neon", None),
    "mate10pro": ("kirin970", "arm64-linux-android", "+neon", None),
    "p20": ("kirin970", "arm64-linux-android", "+neon", None),
    "p20pro": ("kirin970", "arm64-linux-android", "+neon", None),
    "rasp3b": ("bcm2837", "armv7l-linux-gnueabihf", "+neon", None),
    "rasp4b": ("bcm2711", "armv8l-linux-gnueabihf", "+neon", "cortex-a72"),
    "rasp4b64": ("bcm2711", "aarch64-linux-gnu", "+neon", "cortex-a72"),
    "rk3399": ("rk3399", "aarch64-linux-gnu", "+neon", None),
    "pynq": ("pynq", "armv7a-linux-eabi", "+neon", None),
    "ultra96": ("ultra96", "aarch64-linux-gnu", "+neon", None),
    "beagleai": ("beagleai", "armv7a-linux-gnueabihf", "+neon,+vfp4,+thumb2", "cortex-a15"),
    "stm32mp1": ("stm32mp1", "armv7a-linux-gnueabihf", "+neon,+vfp4,+thumb2", "cortex-a7"),
    "thunderx": ("thunderx", "aarch64-linux-gnu", "+neon,+crc,+lse", "thunderxt88"),
}


def arm_cpu(model="unknown", options=None):
    """An Arm CPU target (llvm, keys arm_cpu and cpu) for a board or phone (``arm_cpu("rk3399")``);
    an unknown model is only recorded as ``-model``."""
    if model in _ARM_BOARDS:
        soc, triple, mattr, mcpu = _ARM_BOARDS[model]
        board = [f"-model={soc}", f"-mtriple={triple}", f"-mattr={mattr}"] + ([f"-mcpu={mcpu}"] if mcpu else [])
    else:
        board = [f"-model={model}"]
    opts = _with_options(["-keys=arm_cpu,cpu", "-device=arm_cpu"] + board, options)
    return Target(" ".join(["llvm"] + opts))


def rasp(options=None):
    """A Raspberry Pi 3b target (``arm_cpu("rasp3b")``)."""
    warnings.warn('tvm.target.rasp() is deprecated: use arm_cpu("rasp3b")', DeprecationWarning, stacklevel=2)
    return arm_cpu("rasp3b", options)


# RISC-V CPUs riscv_cpu(model) knows: their options.
_RISCV_CPUS = {
    "sifive-e31": "-model=sifive-e31 -mtriple=riscv32-unknown-linux-gnu -mcpu=sifive-e31 -mabi=ilp32",
    "sifive-e76": "-model=sifive-e76 -mtriple=riscv32-unknown-linux-gnu -mcpu=sifive-e76 -mabi=ilp32",
    "sifive-u54": "-model=sifive-u54 -mtriple=riscv64-unknown-linux-gnu -mcpu=sifive-u54 -mabi=lp64d",
    "sifive-u74": "-model=sifive-u74 -mtriple=riscv64-unknown-linux-gnu -mcpu=sifive-u74 -mabi=lp64d",
    "licheepi3a": "-num-cores=8 -mtriple=riscv64-unknown-linux-gnu -mcpu=spacemit-x60 "
                  "-mfloat-abi=hard -mabi=lp64d",
}


def riscv_cpu(model="sifive-u54", options=None):
    """A RISC-V CPU target (llvm) for a known core (``riscv_cpu("sifive-u74")``)."""
    board = _RISCV_CPUS[model].split() if model in _RISCV_CPUS else [f"-model={model}"]
    opts = _with_options(["-keys=arm_cpu,cpu", "-device=arm_cpu"] + board, options)
    return Target(" ".join(["llvm"] + opts))


_HEXAGON_VERSIONS = ("v65", "v66", "v67", "v67t", "v68", "v69", "v71", "v73", "v75")
_HEXAGON_VTCM_KB = {"v65": 256, "v66": 256, "v68": 4096, "v69": 8192, "v73": 8192, "v75": 8192}


def hexagon(cpu_ver="v68", **kwargs):
    """A Hexagon DSP target: ``hexagon("v69", hvx=128, num_cores=4)``. Keywords: ``hvx`` (vector
    bytes, 0/64/128), ``llvm_options``, ``use_qfloat``, ``use_ieee_fp``, ``num_cores``,
    ``vtcm_capacity``."""
    version = cpu_ver[cpu_ver.find("v"):].lower() if "v" in cpu_ver else cpu_ver
    if version not in _HEXAGON_VERSIONS:
        raise TesseraValueError(f"'{cpu_ver}' is not a Hexagon version; the versions are "
                                f"{', '.join(_HEXAGON_VERSIONS)}")
    arch = int(re.match(r"v(\d+)", version).group(1))
    config = {"hvx": 128, "llvm_options": kwargs.get("llvm_args"), "use_qfloat": arch >= 68,
              "use_ieee_fp": False, "vtcm_capacity": _HEXAGON_VTCM_KB.get(version, 0) * 1024}
    config.update(kwargs)
    if config["hvx"] not in (0, 64, 128):
        raise TesseraValueError(f"hexagon: hvx is 0, 64 or 128 (bytes), got {config['hvx']}")
    if config["hvx"]:
        features = [f"+hvx{version}", f"+hvx-length{config['hvx']}b"]
    else:
        features = ["-hvx"]
    if arch >= 68:
        features += [("+" if config["use_qfloat"] else "-") + "hvx-qfloat",
                     ("+" if config["use_ieee_fp"] else "-") + "hvx-ieee-fp"]
    words = ["hexagon", "-mtriple=hexagon", f"-mcpu=hexagon{version}", "-mattr=" + ",".join(features)]
    llvm_options = config["llvm_options"] or ""
    if arch == 68:
        llvm_options += " -force-hvx-float"
    if llvm_options.strip():
        words.append("--llvm-options=" + ",".join(w.replace("=", "@") for w in llvm_options.split()))
    words += [f"--num-cores={kwargs.get('num_cores', 4)}", f"--vtcm-capacity={config['vtcm_capacity']}"]
    return Target(" ".join(words))


# STM32 series stm32(series) knows: their Cortex-M core (and -march where it is given).
_STM32_SERIES = {
    "stm32H7xx": "-mcpu=cortex-m7 -march=armv7e-m", "stm32F7xx": "-mcpu=cortex-m7",
    "stm32F4xx": "-mcpu=cortex-m4", "stm32F2xx": "-mcpu=cortex-m3", "stm32G0xx": "-mcpu=cortex-m0+",
    "stm32F0xx": "-mcpu=cortex-m0", "stm32F1xx": "-mcpu=cortex-m3", "stm32G4xx": "-mcpu=cortex-m4",
    "stm32F3xx": "-mcpu=cortex-m4", "stm32U5xx": "-mcpu=cortex-m33", "stm32L5xx": "-mcpu=cortex-m33",
    "stm32L4xx": "-mcpu=cortex-m4", "stm32L1xx": "-mcpu=cortex-m3", "stm32L0xx": "-mcpu=cortex-m0+",
}


def stm32(series="unknown", options=None):
    """An STM32 microcontroller target (c) for a series: ``stm32("stm32F4xx")``."""
    if series not in _STM32_SERIES:
        raise TesseraValueError(f"stm32: unknown series '{series}'; the series are {', '.join(_STM32_SERIES)}")
    opts = ["-keys=arm_cpu,cpu", "-device=arm_cpu"] + _STM32_SERIES[series].split()
    return Target(" ".join(["c"] + _with_options(opts, options)))


def adreno(model="unknown", options=None, cfg=None, backend="opencl"):
    """A Qualcomm Adreno GPU target over OpenCL or Vulkan (``backend``); ``cfg`` adds a key."""
    if backend not in ("opencl", "vulkan"):
        raise TesseraValueError(f"adreno: backend is 'opencl' or 'vulkan', got '{backend}'")
    keys = f"adreno,{backend},gpu" + (f",{cfg}" if cfg else "")
    opts = _with_options(["-device=adreno", f"--keys={keys}", f"-model={model}"], options)
    return Target(" ".join([backend] + opts))


def create(target):
    """``Target(target)``, as TVM's older ``tvm.target.create``."""
    return target if isinstance(target, Target) else Target(target)
