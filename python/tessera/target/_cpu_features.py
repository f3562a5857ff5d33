"""The CPU features a target string implies, without LLVM: a built-in table of the features of
common x86, AArch64/Arm and RISC-V CPUs (``-mcpu``), the architecture's baseline (``-mtriple``)
and the ``-mattr`` additions and removals, closed under the implications between features
(``avx512bw`` needs ``avx512f`` needs ``avx2`` ...; removing one removes what needs it).

tessera has no LLVM, so this table is the whole knowledge: a CPU not in it has only its
architecture's baseline features, and the queries that only LLVM can answer (its version, its
compiled-in backends, the host CPU's name) raise :class:`LLVMNotAvailableError` instead.
"""

import re

from ..error import TesseraRuntimeError


class LLVMNotAvailableError(TesseraRuntimeError):
    """A query only LLVM can answer (tessera is built without LLVM)."""


def _levels(*steps):
    """Cumulative feature sets: each (name(s), "features") step adds to the one before."""
    table, acc = {}, set()
    for names, feats in steps:
        acc = acc | set(feats.split())
        for name in names.split():
            table[name] = set(acc)
    return table


_X86_BASE = "64bit cx8 fxsr mmx sse sse2"
_X86 = _levels(
    ("x86-64 generic", _X86_BASE),
    ("core2", "sse3 ssse3 cx16 sahf"),
    ("penryn", "sse4.1"),
    ("nehalem corei7 x86-64-v2", "sse4.2 popcnt"),
    ("westmere", "aes pclmul"),
    ("sandybridge corei7-avx", "avx xsave xsaveopt"),
    ("ivybridge core-avx-i", "f16c rdrnd fsgsbase"),
    ("haswell core-avx2", "avx2 fma bmi bmi2 lzcnt movbe invpcid"),
    ("broadwell", "adx rdseed prfchw"),
    ("skylake", "clflushopt xsavec xsaves"),
    ("skylake-avx512 skx", "avx512f avx512cd avx512bw avx512dq avx512vl clwb pku"),
    ("cascadelake", "avx512vnni"),
    ("cooperlake", "avx512bf16"),
)
_X86.update(_levels(
    ("cannonlake", " ".join(sorted(_X86["skylake-avx512"])) + " avx512ifma avx512vbmi sha"),
    ("icelake-client rocketlake", "avx512vbmi2 avx512bitalg avx512vpopcntdq avx512vnni vaes "
                                  "vpclmulqdq gfni rdpid"),
    ("icelake-server", "pconfig wbnoinvd"),
    ("sapphirerapids", "amx-tile amx-int8 amx-bf16 avx512fp16 avx512bf16 avxvnni serialize "
                       "movdiri movdir64b"),
))
_X86["tigerlake"] = _X86["icelake-client"] | {"avx512vp2intersect", "movdiri", "movdir64b", "shstk"}
_X86["x86-64-v3"] = _X86["x86-64-v2"] | {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt",
                                         "movbe", "xsave"}
_X86["x86-64-v4"] = _X86["x86-64-v3"] | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
_X86["alderlake"] = (_X86["skylake"] | {"avxvnni", "gfni", "vaes", "vpclmulqdq", "sha", "movdiri",
                                         "movdir64b", "serialize", "rdpid", "shstk"})
_X86["knl"] = _X86["haswell"] | {"adx", "rdseed", "prfchw", "avx512f", "avx512cd", "avx512er",
                                 "avx512pf", "prefetchwt1"}
_X86["knm"] = _X86["knl"] | {"avx512vpopcntdq", "avx5124fmaps", "avx5124vnniw"}
_X86.update(_levels(
    ("silvermont slm", " ".join(sorted(_X86["westmere"])) + " movbe rdrnd prfchw"),
    ("goldmont", "sha rdseed xsave xsaveopt xsavec xsaves clflushopt fsgsbase"),
    ("goldmont-plus", "rdpid sgx"),
    ("tremont", "clwb gfni"),
))
_X86.update(_levels(
    ("btver2", _X86_BASE + " sse3 ssse3 sse4.1 sse4.2 sse4a popcnt cx16 sahf aes pclmul avx f16c "
               "bmi lzcnt movbe xsave xsaveopt prfchw"),
))
_X86.update(_levels(
    ("bdver1", _X86_BASE + " sse3 ssse3 sse4.1 sse4.2 sse4a popcnt cx16 sahf aes pclmul avx xop "
               "fma4 lzcnt xsave prfchw"),
    ("bdver2", "fma f16c bmi tbm"),
    ("bdver3", "fsgsbase xsaveopt"),
    ("bdver4", "avx2 bmi2 movbe"),
))
_X86.update(_levels(
    ("znver1", " ".join(sorted(_X86["broadwell"])) + " sse4a clflushopt xsavec xsaves sha "
               "clzero mwaitx"),
    ("znver2", "clwb rdpid wbnoinvd"),
    ("znver3", "vaes vpclmulqdq pku"),
))

# Feature -> the features it needs (transitively closed below).
_NEEDS = {
    "sse2": "sse", "sse3": "sse2", "ssse3": "sse3", "sse4.1": "ssse3", "sse4.2": "sse4.1",
    "sse4a": "sse3", "avx": "sse4.2", "avx2": "avx", "fma": "avx", "f16c": "avx", "xop": "fma4",
    "fma4": "avx sse4a", "avx512f": "avx2 f16c fma", "avxvnni": "avx2", "vaes": "aes avx",
    "vpclmulqdq": "avx pclmul", "aes": "sse2", "pclmul": "sse2", "gfni": "sse2",
    "amx-int8": "amx-tile", "amx-bf16": "amx-tile",
    # AArch64 / Arm
    "sve": "fullfp16", "sve2": "sve", "sme": "bf16", "fullfp16": "fp-armv8", "dotprod": "neon",
    "i8mm": "neon", "neon": "fp-armv8",
}
for _f in ("avx512cd avx512bw avx512dq avx512vl avx512er avx512pf avx512vnni avx512bf16 "
           "avx512ifma avx512vbmi avx512vbmi2 avx512bitalg avx512vpopcntdq avx512vp2intersect "
           "avx512fp16 avx5124fmaps avx5124vnniw").split():
    _NEEDS[_f] = "avx512f"
_NEEDS = {k: set(v.split()) for k, v in _NEEDS.items()}

# AArch64: the baseline and the CPUs in the table.
_AARCH64_BASE = {"neon", "fp-armv8"}
_AARCH64_V82 = _AARCH64_BASE | {"crc", "lse", "rdm", "ras", "fullfp16", "dotprod", "rcpc"}
_AARCH64 = {
    "generic": _AARCH64_BASE,
    "cortex-a53": _AARCH64_BASE | {"crc"}, "cortex-a57": _AARCH64_BASE | {"crc"},
    "cortex-a72": _AARCH64_BASE | {"crc"}, "cortex-a73": _AARCH64_BASE | {"crc"},
    "thunderxt88": _AARCH64_BASE | {"crc", "lse"}, "carmel": _AARCH64_BASE | {"crc", "lse", "rdm", "fullfp16"},
    "cortex-a55": _AARCH64_V82, "cortex-a75": _AARCH64_V82, "cortex-a76": _AARCH64_V82,
    "cortex-a77": _AARCH64_V82, "cortex-a78": _AARCH64_V82, "neoverse-n1": _AARCH64_V82,
    "neoverse-v1": _AARCH64_V82 | {"sve", "i8mm", "bf16"},
    "neoverse-n2": _AARCH64_V82 | {"sve", "sve2", "i8mm", "bf16"},
    "cortex-a710": _AARCH64_V82 | {"sve", "sve2", "i8mm", "bf16"},
}
# Arm (32-bit A-profile): the CPUs of the table have the DSP extension besides their AArch64 set.
_ARM_DSP = {"dsp"}
# -mattr=+vX.Ya adds the features the architecture version makes mandatory.
_ARCH_VERSION = [(8.1, {"crc", "lse", "rdm"}), (8.2, {"ras"}), (8.3, {"rcpc"}), (8.4, {"dotprod"}),
                 (8.6, {"i8mm", "bf16"}), (9.0, {"sve", "sve2"})]

# RISC-V: vector register width (bits) of vendor cores with the V extension.
_RISCV_VLEN = {"sifive-x280": 512, "sifive-p670": 128, "spacemit-x60": 256}
_RISCV_VECTOR_CPUS = set(_RISCV_VLEN)


def arch_of(target):
    """"x86_64", "aarch64", "arm", "riscv32", "riscv64" or "" from the target's -mtriple (an
    x86 -mcpu without a triple counts as x86_64)."""
    triple = target.attrs.get("mtriple", "") if hasattr(target, "attrs") else target.get("mtriple", "")
    triple = triple if isinstance(triple, str) else ""
    head = triple.split("-")[0]
    if head in ("x86_64", "amd64", "i386", "i686"):
        return "x86_64"
    if head.startswith(("aarch64", "arm64")):
        return "aarch64"
    if head.startswith(("arm", "thumb")):
        return "arm"
    if head.startswith("riscv"):
        return head[:7]
    mcpu = target.attrs.get("mcpu", "") if hasattr(target, "attrs") else target.get("mcpu", "")
    if not triple and mcpu in _X86:
        return "x86_64"
    return ""


def _close(features):
    out, todo = set(features), list(features)
    while todo:
        for need in _NEEDS.get(todo.pop(), ()):
            if need not in out:
                out.add(need)
                todo.append(need)
    return out


def _attrs(target):
    return target.attrs if hasattr(target, "attrs") else target


def cpu_features(target):
    """The set of features (LLVM's names, without +) that ``target`` has."""
    attrs = _attrs(target)
    arch = arch_of(target)
    mcpu = attrs.get("mcpu") or "generic"
    mattr = [a for a in attrs.get("mattr") or [] if isinstance(a, str)]
    if arch == "x86_64":
        features = set(_X86.get(mcpu, _X86["generic"]))
    elif arch in ("aarch64", "arm"):
        features = set(_AARCH64.get(mcpu, _AARCH64_BASE if arch == "aarch64" else set()))
        if arch == "arm" and mcpu in _AARCH64 and mcpu != "generic":
            features |= _ARM_DSP
        for attr in mattr:
            match = re.fullmatch(r"\+v(\d+(?:\.\d+)?)a", attr)
            if match:
                for version, implied in _ARCH_VERSION:
                    if float(match.group(1)) >= version:
                        features |= implied
    elif arch.startswith("riscv"):
        features = {"64bit"} if arch == "riscv64" else set()
        if mcpu in _RISCV_VECTOR_CPUS:
            features |= {"v"}
    else:
        features = set()
    features = _close(features)
    for attr in mattr:
        if attr.startswith("+"):
            features |= _close({attr[1:]})
        elif attr.startswith("-"):
            gone = attr[1:]
            features = {f for f in features if f != gone and gone not in _close({f}) - {f}}
    return features


def has_feature(target, feature):
    return feature in cpu_features(target)


def vector_width(target):
    """The widest vector register in bits: RISC-V from the V extension (``+zvlNNNb``, else the
    core's, else 128); x86 512/256/128 by AVX-512/AVX; Arm 128 (scalable vectors count as 128)."""
    attrs = _attrs(target)
    arch = arch_of(target)
    features = cpu_features(target)
    if arch.startswith("riscv"):
        widths = [int(m.group(1)) for a in attrs.get("mattr") or []
                  for m in [re.fullmatch(r"\+zvl(\d+)b", a)] if m]
        width = max(widths + [_RISCV_VLEN.get(attrs.get("mcpu", ""), 128)])
        return max(width, 128)
    if arch == "x86_64":
        return 512 if "avx512f" in features else 256 if "avx" in features else 128
    return 128


def cpu_archlist(target):
    """The CPU names the table knows for the target's architecture."""
    arch = arch_of(target)
    if arch == "x86_64":
        return sorted(_X86)
    if arch in ("aarch64", "arm"):
        return sorted(_AARCH64)
    if arch.startswith("riscv"):
        return sorted(_RISCV_VECTOR_CPUS | {"generic-rv32", "generic-rv64", "sifive-u54", "sifive-u74",
                                            "sifive-e31", "sifive-e76"})
    return []


def aprofile_features(config):
    """The features TVM's Arm A-profile parser records, from the table."""
    arch = arch_of(config)
    features = cpu_features(config)
    return {"is_aarch64": arch == "aarch64", "has_asimd": "neon" in features,
            "has_sve": "sve" in features, "has_dotprod": "dotprod" in features,
            "has_matmul_i8": "i8mm" in features, "has_fp16_simd": "fullfp16" in features,
            "has_sme": "sme" in features}
