"""Target tags: names of real devices (``Target("nvidia/nvidia-a100")``) that stand for a full
target configuration, as TVM v0.23 registers them. ``list_tags()`` gives every tag with its
Target; ``register_tag(name, config)`` adds one.

The CUDA table below is data (architecture and per-block limits of each NVIDIA product, the facts
TVM's tag registry records); every CUDA tag has 48 KiB of shared memory and 1024 threads per block
and a warp of 32 threads.
"""

from ..error import TesseraValueError

__all__ = ["list_tags", "register_tag"]

# (arch, registers per block in Ki) -> the NVIDIA product names (without "nvidia/") of that kind.
_CUDA_TAGS = {
    ("sm_20", 32): (
        "geforce-gtx-465 geforce-gtx-470 geforce-gtx-480 geforce-gtx-480m geforce-gtx-570 "
        "geforce-gtx-580 geforce-gtx-590 quadro-plex-7000 tesla-c2050 tesla-c2070 tesla-c2075 "
    ),
    ("sm_21", 32): (
        "geforce-410m geforce-610m geforce-705m geforce-710m geforce-800m geforce-820m "
        "geforce-gt-415m geforce-gt-420m geforce-gt-430 geforce-gt-435m geforce-gt-440 "
        "geforce-gt-445m geforce-gt-520 geforce-gt-520m geforce-gt-520mx geforce-gt-525m "
        "geforce-gt-540m geforce-gt-550m geforce-gt-555m geforce-gt-610 geforce-gt-620 "
        "geforce-gt-620m geforce-gt-625m geforce-gt-630 geforce-gt-630m geforce-gt-635m "
        "geforce-gt-640-gddr3 geforce-gt-720m geforce-gt-730-ddr3,128bit geforce-gts-450 "
        "geforce-gtx-460 geforce-gtx-460m geforce-gtx-470m geforce-gtx-485m "
        "geforce-gtx-550-ti geforce-gtx-560-ti geforce-gtx-560m geforce-gtx-570m "
        "geforce-gtx-580m geforce-gtx-670m geforce-gtx-675m nvidia-nvs-310 nvidia-nvs-315 "
        "nvs-4200m nvs-5200m nvs-5400m "
    ),
    ("sm_30", 64): (
        "geforce-gt-640m geforce-gt-640m-le geforce-gt-645m geforce-gt-650m geforce-gt-730m "
        "geforce-gt-735m geforce-gt-740 geforce-gt-740m geforce-gt-745m geforce-gt-750m "
        "geforce-gt-755m geforce-gtx-650 geforce-gtx-650-ti geforce-gtx-650-ti-boost "
        "geforce-gtx-660 geforce-gtx-660-ti geforce-gtx-660m geforce-gtx-670 "
        "geforce-gtx-670mx geforce-gtx-675mx geforce-gtx-680 geforce-gtx-680m "
        "geforce-gtx-680mx geforce-gtx-690 geforce-gtx-760 geforce-gtx-760m geforce-gtx-765m "
        "geforce-gtx-770 geforce-gtx-770m geforce-gtx-780m geforce-gtx-860m-sm-30 "
        "geforce-gtx-870m geforce-gtx-880m nvidia-nvs-510 quadro-410 quadro-k1100m "
        "quadro-k2000 quadro-k2000d quadro-k2100m quadro-k2200m quadro-k3100m quadro-k4000 "
        "quadro-k4100m quadro-k420 quadro-k4200 quadro-k4200m quadro-k5000 quadro-k500m "
        "quadro-k5100m quadro-k5200m quadro-k600 quadro-k6000m tesla-k10 "
    ),
    ("sm_35", 64): (
        "geforce-920m geforce-gt-640-gddr5 geforce-gt-705 geforce-gt-720 geforce-gt-730 "
        "geforce-gtx-780 geforce-gtx-780-ti geforce-gtx-titan geforce-gtx-titan-black "
        "geforce-gtx-titan-z quadro-k510m quadro-k5200 quadro-k6000 quadro-k610m tesla-k20 "
        "tesla-k40 "
    ),
    ("sm_37", 64): (
        "tesla-k80 "
    ),
    ("sm_50", 64): (
        "geforce-830m geforce-840m geforce-930m geforce-940m geforce-gtx-750 "
        "geforce-gtx-750-ti geforce-gtx-850m geforce-gtx-860m-sm-50 geforce-gtx-950m "
        "geforce-gtx-960m nvidia-nvs-810 quadro-k1200 quadro-k2200 quadro-k620 quadro-k620m "
        "quadro-m1000m quadro-m1200 quadro-m2000m quadro-m3000m quadro-m4000m quadro-m5000m "
        "quadro-m500m quadro-m520 quadro-m600m "
    ),
    ("sm_52", 64): (
        "geforce-910m geforce-gtx-950 geforce-gtx-960 geforce-gtx-965m geforce-gtx-970 "
        "geforce-gtx-970m geforce-gtx-980 geforce-gtx-980-ti geforce-gtx-980m "
        "geforce-gtx-titan-x quadro-m2000 quadro-m2200 quadro-m4000 quadro-m5000 "
        "quadro-m5500m quadro-m6000 quadro-m6000-24gb quadro-m620 tesla-m40 tesla-m60 "
    ),
    ("sm_53", 32): (
        "jetson-nano jetson-tx1 tegra-x1 "
    ),
    ("sm_60", 64): (
        "quadro-gp100 tesla-p100 "
    ),
    ("sm_61", 64): (
        "geforce-gtx-1050 geforce-gtx-1060 geforce-gtx-1070 geforce-gtx-1070-ti "
        "geforce-gtx-1080 geforce-gtx-1080-ti nvidia-titan-x nvidia-titan-xp p520 p620 "
        "quadro-p1000 quadro-p2000 quadro-p2200 quadro-p3000 quadro-p3200 quadro-p400 "
        "quadro-p4000 quadro-p4200 quadro-p500 quadro-p5000 quadro-p5200 quadro-p600 "
        "quadro-p6000 quadro-p620 tesla-p4 tesla-p40 "
    ),
    ("sm_62", 32): (
        "jetson-tx2 "
    ),
    ("sm_70", 64): (
        "nvidia-titan-v nvidia-v100 quadro-gv100 "
    ),
    ("sm_75", 64): (
        "geforce-rtx-2060 geforce-rtx-2070 geforce-rtx-2080 geforce-rtx-2080-ti nvidia-t4 "
        "nvidia-titan-rtx quadro-rtx-4000 quadro-rtx-5000 quadro-rtx-6000 quadro-rtx-8000 "
        "rtx-3000 rtx-4000 rtx-5000 t1000 t2000 "
    ),
    ("sm_80", 64): (
        "nvidia-a100 nvidia-a30 "
    ),
    ("sm_86", 64): (
        "geforce-rtx-3060 geforce-rtx-3070 geforce-rtx-3070-ti geforce-rtx-3080 "
        "geforce-rtx-3080-ti geforce-rtx-3090 geforce-rtx-3090-ti nvidia-a10 nvidia-a10g "
        "nvidia-a16 nvidia-a2 nvidia-a40 rtx-a6000 "
    ),
    ("sm_89", 64): (
        "geforce-rtx-4090 "
    ),
    ("sm_90a", 64): (
        "nvidia-h100 "
    ),
    ("sm_100a", 64): (
        "nvidia-b100 "
    ),
    ("sm_120", 64): (
        "geforce-rtx-5060-ti "
    ),
}
# L2 cache sizes in MiB where TVM's table records one.
_CUDA_L2_MIB = {"nvidia-a100": 40, "nvidia-h100": 50, "nvidia-b100": 50, "geforce-rtx-4090": 72,
                "geforce-rtx-5060-ti": 32}


def _arm_host(mcpu, cores, **extra):
    return dict({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": mcpu, "num-cores": cores},
                **extra)


def _builtin_tags():
    tags = {}
    for (arch, regs_k), names in _CUDA_TAGS.items():
        for name in "".join(names).split():
            config = {"kind": "cuda", "keys": ["cuda", "gpu"], "arch": arch,
                      "max_shared_memory_per_block": 48 * 1024, "max_threads_per_block": 1024,
                      "thread_warp_size": 32, "registers_per_block": regs_k * 1024}
            if name in _CUDA_L2_MIB:
                config["l2_cache_size_bytes"] = _CUDA_L2_MIB[name] * 1024 * 1024
            tags["nvidia/" + name] = config
    # Jetson modules with their Arm host.
    for name, arch, host_cpu, cores in (("jetson-agx-xavier", "sm_72", "carmel", 8),
                                        ("jetson-orin-nano", "sm_87", "carmel", 6),
                                        ("jetson-agx-orin-32gb", "sm_87", "cortex-a78", 8),
                                        ("jetson-agx-orin-64gb", "sm_87", "cortex-a78", 12)):
        tags["nvidia/" + name] = {"kind": "cuda", "arch": arch, "max_shared_memory_per_block": 49152,
                                  "max_threads_per_block": 1024, "thread_warp_size": 32,
                                  "registers_per_block": 65536, "host": _arm_host(host_cpu, cores)}
    tags["nvidia/gtx1080ti"] = {"kind": "cuda", "arch": "sm_61"}
    pi = _arm_host("cortex-a72", 4, mattr=["+neon"])
    tags["raspberry-pi/4b-aarch64"] = dict(pi, host=dict(pi))
    # AWS C5 instances (Intel Xeon): cores and CPU.
    for size, cores, cpu in (("large", 1, "skylake-avx512"), ("xlarge", 2, "skylake-avx512"),
                             ("2xlarge", 4, "skylake-avx512"), ("4xlarge", 8, "skylake-avx512"),
                             ("9xlarge", 18, "skylake-avx512"), ("12xlarge", 24, "cascadelake"),
                             ("18xlarge", 36, "skylake-avx512"), ("24xlarge", 48, "cascadelake")):
        tags[f"aws/cpu/c5.{size}"] = {"kind": "llvm", "keys": ["x86", "cpu"], "mcpu": cpu,
                                      "num-cores": cores}
    # Apple GPUs (Metal) with their macOS host.
    for name, threads in (("m1-gpu", 1024), ("m1-gpu-restricted", 256), ("m2-gpu", 1024)):
        tags["apple/" + name] = {"kind": "metal", "max_threads_per_block": threads,
                                 "max_shared_memory_per_block": 32768, "thread_warp_size": 32,
                                 "host": {"kind": "llvm", "mtriple": "arm64-apple-macos",
                                          "mcpu": "apple-latest"}}
    return tags


_TAGS = _builtin_tags()


def _tag_config(name):
    """The config dict of tag ``name`` (a copy), or None."""
    import copy

    config = _TAGS.get(name)
    return None if config is None else copy.deepcopy(config)


def list_tags():
    """Every registered tag, as a dict from its name to its Target."""
    from . import Target

    return {name: Target(name) for name in sorted(_TAGS)}


def register_tag(name, config, override=False):
    """Registers tag ``name`` for the target ``config`` (a dict as ``Target`` takes) and returns
    its Target. A tag that exists is replaced only with ``override=True``."""
    from . import Target

    if not isinstance(name, str) or not name:
        raise TesseraValueError(f"register_tag: a tag name is a non-empty string, got {name!r}")
    if name in _TAGS and not override:
        raise TesseraValueError(f"register_tag: tag '{name}' is already registered (as {_TAGS[name]}); "
                                "pass override=True to replace it")
    target = Target(dict(config))  # checks the config before it is registered
    _TAGS[name] = dict(config)
    return target
