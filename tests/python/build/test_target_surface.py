"""tessera.target at TVM v0.23's surface: string/dict/JSON/tag forms, keys, host, features,
canonical string, helper constructors, tags, codegen feature queries, VirtualDevice, errors."""

import json

import pytest

from tessera import error
from tessera.runtime import cuda as cuda_device
from tessera.target import (NoCurrentTargetError, Target, TargetKind, VirtualDevice, arm_cpu, codegen,
                            cuda, hexagon, intel_graphics, list_tags, register_tag, riscv_cpu, stm32, tag)
from tessera.target import _ffi_api


def test_string_forms_and_canonical_order():
    t = Target("vulkan -device_name='GPU with spaces' --supports_float16 true -supports_int8")
    assert t.attrs["device_name"] == "GPU with spaces"
    assert t.attrs["supports_float16"] is True and t.attrs["supports_int8"] is True
    assert str(t) == ("vulkan -keys=vulkan,gpu -device_name='GPU with spaces' -max_num_threads=256 "
                      "-max_threads_per_block=256 -supports_float16=1 -supports_float32=1 "
                      "-supports_int32=1 -supports_int8=1 -thread_warp_size=1")
    assert Target(str(t)) == t
    llvm = Target("llvm -cl-opt='-a=1,-b=2' -num-cores 4 -fast-math")
    assert llvm.attrs["cl-opt"] == ["-a=1", "-b=2"] and llvm.attrs["num-cores"] == 4
    assert llvm.attrs["fast-math"] is True
    assert str(llvm) == "llvm -keys=cpu -cl-opt=-a=1,-b=2 -fast-math=1 -num-cores=4"


def test_dict_json_and_keys():
    config = {"kind": "llvm", "keys": ["arm_cpu", "cpu"], "device": "arm_cpu", "libs": ["cblas"],
              "mfloat-abi": "hard", "mattr": ["+neon"]}
    for form in (config, json.dumps(config)):
        t = Target(form)
        assert t.keys == ["arm_cpu", "cpu"] and t.device_name == "arm_cpu" and t.libs == ["cblas"]
        assert t.attrs["mfloat-abi"] == "hard"
    # -device is added to the kind's default keys; keys are not repeated.
    assert Target("opencl -device=mali").keys == ["mali", "opencl", "gpu"]
    assert Target("llvm -keys=x,cpu,x").keys == ["x", "cpu"]
    assert Target("test").keys == [] and str(Target("test")) == "test"


def test_host_nesting_and_export():
    t = Target({"kind": "cuda", "arch": "sm_80", "host": {"kind": "llvm", "host": "c"}})
    assert t.host.kind.name == "llvm" and t.host.host.kind.name == "c"
    assert Target(t.export()) == t
    assert t.export()["host"]["kind"] == "llvm"
    s = Target("cuda -arch=sm_80 --host nvidia/jetson-nano")
    assert s.host.arch == "sm_53" and s.host.attrs["registers_per_block"] == 32768
    assert Target(s, Target("llvm")).host.kind.name == "llvm"  # the second argument wins
    assert Target(s).host.arch == "sm_53"
    assert s.with_host("c").host.kind.name == "c" and s.host.arch == "sm_53"  # a copy


def test_kind_defaults_and_parsers():
    assert Target("cuda").arch.startswith("sm_")  # the GPU's, or sm_50 when there is none
    assert Target("rocm").attrs["mtriple"] == "amdgcn-amd-amdhsa-hcc" and Target("rocm").mcpu == "gfx900"
    assert Target("nvptx -mcpu=sm_70").attrs["mtriple"] == "nvptx64-nvidia-cuda"
    m55 = Target("c -mcpu=cortex-m55")
    assert m55.keys == ["arm_cpu", "cpu"] and m55.features.has_dsp and m55.features.has_mve
    assert not Target("llvm -mcpu=cortex-m55 -mattr=+nomve").features.has_mve
    assert not Target("llvm -mcpu=cortex-m3").features.has_dsp
    a55 = Target("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a55")
    assert a55.features.is_aarch64 and a55.features.has_dotprod and not a55.features.has_sve
    assert Target("test").features.is_test and Target("cuda").features.is_test is None
    assert TargetKind.options_from_name("cuda")["arch"] == "ffi.String"
    assert Target("llvm").kind.options["mattr"] == "ffi.Array"
    assert Target("composite --host=llvm --devices=cuda,opencl").attrs["devices"][1].kind.name == "opencl"
    assert Target("hexagon").get_target_device_type() == 16


def test_tags():
    a100 = Target("nvidia/nvidia-a100")
    assert (a100.arch, a100.l2_cache_size_bytes, a100.attrs["max_shared_memory_per_block"]) == (
        "sm_80", 40 * 2**20, 49152)
    assert Target("aws/cpu/c5.large").keys == ["x86", "cpu"]
    tags = list_tags()
    assert tags["nvidia/geforce-rtx-2080-ti"].arch == "sm_75"
    assert register_tag("tessera-test/gpu", {"kind": "cuda", "arch": "sm_86"}).arch == "sm_86"
    try:
        assert Target("tessera-test/gpu").arch == "sm_86"
        with pytest.raises(ValueError, match="already registered"):
            register_tag("tessera-test/gpu", {"kind": "cuda"})
    finally:
        tag._TAGS.pop("tessera-test/gpu")


def test_helper_constructors():
    assert str(arm_cpu("rk3399")) == ("llvm -keys=arm_cpu,cpu -device=arm_cpu -mattr=+neon "
                                      "-model=rk3399 -mtriple=aarch64-linux-gnu")
    assert str(cuda(arch="sm_80", options="-libs=cublas")) == (
        "cuda -keys=cuda,gpu -arch=sm_80 -libs=cublas -max_num_threads=1024 -model=unknown "
        "-thread_warp_size=32")
    assert intel_graphics().thread_warp_size == 16 and intel_graphics().device_name == "intel_graphics"
    assert riscv_cpu("sifive-u74").attrs["mabi"] == "lp64d"
    assert stm32("stm32F4xx").mcpu == "cortex-m4"
    h = hexagon("v69", hvx=64)
    assert h.mattr == ["+hvxv69", "+hvx-length64b", "+hvx-qfloat", "-hvx-ieee-fp"]
    assert h.vtcm_capacity == 8 * 2**20
    with pytest.raises(ValueError, match="not a Hexagon version"):
        hexagon("v1")
    with pytest.raises(ValueError, match="unknown series"):
        stm32("stm32X9xx")


def test_current_and_canon_helpers():
    assert Target.current() is None
    with pytest.raises(NoCurrentTargetError, match="no target is set") as info:
        Target.current(allow_none=False)
    assert isinstance(info.value, error.InternalError)
    with Target("llvm") as outer, Target("cuda") as inner:
        assert Target.current() is inner
    assert Target.current() is None and outer.kind.name == "llvm"
    target, host = Target.canon_target_and_host("cuda", "llvm")
    assert target.host == host and host.kind.name == "llvm"
    assert [t.kind.name for t in Target.canon_multi_target_and_host({1: "llvm", 2: "cuda"})] == ["llvm", "cuda"]
    mapping, host = Target.canon_target_map_and_host({"cuda": 1, "llvm": 2}, "c")
    assert host.kind.name == "c" and all(t.host == host for t in mapping)


@pytest.mark.parametrize("text, message", [
    ("nosuchkind", "unknown target kind 'nosuchkind'"),
    ("llvm mcpu", "must look like -key=value"),
    ("llvm -mcpu=a -mcpu=b", "'mcpu' is given more than once"),
    ("llvm -arch=sm_80", "target kind 'llvm' has no option 'arch'"),
    ("llvm -num-cores=four", "option 'num-cores' takes an integer, got 'four'"),
    ("cuda -arch=compute_80", "-arch is sm_XY"),
    ("llvm -mcpu=", "empty name or value"),
    ("llvm -mattr='+neon", "unbalanced quote"),
    ('{"kind": "llvm",', "not valid JSON"),
])
def test_string_errors(text, message):
    with pytest.raises(ValueError, match=message) as info:
        Target(text)
    assert isinstance(info.value, error.TesseraError) and text in str(info.value)


def test_config_errors():
    with pytest.raises(ValueError, match="option 'libs' takes a list"):
        Target({"kind": "llvm", "libs": {"a": "b"}})
    with pytest.raises(ValueError, match="needs a 'kind'"):
        Target({"arch": "sm_80"})
    with pytest.raises(ValueError, match=r"needs a 'kind', got the fields \['1', 'b'\]"):
        Target({1: "a", "b": 2})
    with pytest.raises(ValueError, match="'features' come from its kind's parser"):
        Target({"kind": "llvm", "features": {}})
    with pytest.raises(ValueError, match="option 'num-cores' takes an integer"):
        Target({"kind": "llvm", "num-cores": "4"})
    with pytest.raises(ValueError, match="host is a string, a dict or a Target"):
        Target("cuda", 12.5)


def test_codegen_feature_queries():
    x86 = Target("llvm -mtriple=x86_64-- -mcpu=cascadelake")
    assert codegen.target_has_features(["avx512bw", "avx512vnni", "avx2", "ssse3"], x86)
    assert not codegen.target_has_features("avx512bw", Target("llvm -mtriple=x86_64-- -mcpu=knl"))
    no_f = Target("llvm -mtriple=x86_64-- -mcpu=cascadelake -mattr=-avx512f")
    assert not codegen.target_has_features("avx512bw", no_f) and codegen.target_has_features("avx2", no_f)
    assert codegen.target_has_features("ssse3", Target("llvm -mtriple=x86_64-- -mattr=+sse4.1"))
    assert _ffi_api.llvm_cpu_has_feature("dsp", Target("llvm -mtriple=arm-- -mcpu=cortex-a55"))
    assert not _ffi_api.llvm_cpu_has_feature("dsp", Target("llvm -mtriple=aarch64-- -mcpu=cortex-a55"))
    assert "haswell" in codegen.llvm_get_cpu_archlist(x86)
    with Target("llvm -mtriple=riscv64-linux-gnu -mcpu=generic-rv64 -mattr=+m,+v,+zvl256b"):
        assert codegen.llvm_get_vector_width() == 256
    assert codegen.llvm_get_vector_width(Target("llvm -mtriple=riscv64-- -mcpu=sifive-x280")) == 512
    with pytest.raises(error.InternalError, match="no target is set"):
        codegen.target_has_features("avx2")
    with pytest.raises(RuntimeError, match="tessera is built without LLVM"):
        codegen.llvm_version_major()
    assert codegen.llvm_version_major(allow_none=True) is None


def test_virtual_device():
    vd = VirtualDevice(cuda_device(1), Target("cuda -arch=sm_80"), "global")
    assert (vd.dlpack_device_type(), vd.virtual_device_id, vd.memory_scope) == (2, 1, "global")
    assert vd.target.arch == "sm_80"
    assert VirtualDevice().dlpack_device_type() == -1 and VirtualDevice().target is None


def test_save_and_load_json():
    from tessera.ir import load_json, save_json

    t = Target("cuda -arch=sm_80 -libs=cublas", host="llvm -mcpu=skylake")
    back = load_json(save_json(t))
    assert isinstance(back, Target) and back == t and str(back.host) == "llvm -keys=cpu -mcpu=skylake"


def test_x86_simd_lanes():
    from tessera.target import x86

    for cpu, lanes in (("skylake-avx512", 16), ("haswell", 8), ("nehalem", 4)):
        with Target(f"llvm -mtriple=x86_64-linux-gnu -mcpu={cpu}"):
            assert x86.get_simd_32bit_lanes() == lanes
