"""A scalar broadcast to a vector: `.c_code` spells it as OpenCL C's cast `(int8)x`, as Compass
prints it, while the compiler gets `(int8)__vbcast(x)`, which GCC's vector extension accepts.
A splat among an intrinsic's operands keeps `__vbcast` in both texts (Compass broadcasts those
through its vbcast call). The two texts must differ in exactly that: removing each `__vbcast(`
and its closing parenthesis from both gives the same text. The kernels are built with each C compiler found
(gcc, clang) and their results checked against numpy."""

import shutil

import numpy as np
import pytest

from tessera import _core
from tessera.error import BuildError
from tessera.dsl import BuildManager, script as S


def shown_from_compiled(text):
    """`text` with every `__vbcast(` removed together with the parenthesis that closes it, except
    where it is not preceded by a cast to a vector type (bfloat16x16 is a struct, which C does
    not cast, so its splat stays `__vbcast(x)` in both texts)."""
    out, closers, i = [], [], 0
    depth = 0
    while i < len(text):
        if text.startswith("__vbcast(", i) and out and out[-1] == ")":
            closers.append(depth)
            i += len("__vbcast(")
            depth += 1
            continue
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if closers and closers[-1] == depth:
                closers.pop()
                i += 1
                continue
        out.append(ch)
        i += 1
    assert not closers, "unbalanced __vbcast( in the compiled text"
    return "".join(out)


def test_shown_from_compiled_removes_only_the_wrapper():
    assert shown_from_compiled("x = (int8)__vbcast((a + f(b)));") == "x = (int8)(a + f(b));"
    assert shown_from_compiled("(short16)__vbcast((short)(n * 2)) + g(1)") == \
        "(short16)(short)(n * 2) + g(1)"
    assert shown_from_compiled("y = __vbcast(b);") == "y = __vbcast(b);"


@S.prim_func
def splats(a: S.ptr("int32", "global"), f: S.ptr("float32", "global"),
           h: S.ptr("int16", "global"), out: S.ptr("int32", "global"),
           fout: S.ptr("float32", "global"), hout: S.ptr("int16", "global"), n: S.i32):
    zero = S.int32x8(0)
    S.vstore(zero, out + 16)
    S.vstore(S.vload(a) + 10, out)
    S.vstore(S.vload(a + 8) * n, out + 8)
    S.vstore(S.vload(f) + 3.0, fout)
    S.vstore(S.vload(f + 8) * f[0], fout + 8)
    S.vstore(S.vload(h) + h[1] * 2, hout)


def _splats_expected(a, f, h, n):
    out = np.concatenate([a[:8] + 10, a[8:16] * n, np.zeros(8, "int32")]).astype("int32")
    fout = np.concatenate([f[:8] + np.float32(3.0), f[8:16] * f[0]]).astype("float32")
    hout = (h[:16] + np.int16(h[1] * 2)).astype("int16")
    return out, fout, hout


@S.prim_func
def _probe(a: S.ptr("int32", "global")):
    a[0] = 1


def _usable(compiler):
    """Whether `compiler` builds tessera/dsl.h at all (clang before 15 lacks the _Float16 that
    the header's half type needs on x86)."""
    if not shutil.which(compiler):
        return False
    try:
        BuildManager().build(_probe)
    except BuildError as err:
        if "_Float16" in str(err) or "half" in str(err):
            return False
        raise
    return True


def test_splats_are_shown_as_opencl_casts():
    ex = BuildManager().build(splats)
    code = ex.c_code
    for piece in ("__vstore((int8)0, ", "(int8)10", "(int8)n", "(short16)(short)(h[1] * ",
                  "(float8)0x1.8p+1f/*3.000000e+00*/", "(float8)f[0]"):
        assert piece in code, code
    assert "__vbcast" not in code, code


def test_shown_text_is_the_compiled_text_without_vbcast():
    bm = BuildManager()
    compiled = bm.generated_source(splats)
    assert "(int8)__vbcast(0)" in compiled and "(float8)__vbcast(f[0])" in compiled, compiled
    ex = bm.build(splats)
    shown = ex.c_code
    assert shown != compiled[:len(shown)]
    assert shown_from_compiled(compiled).startswith(shown + "\n")
    # What the build compiled is the generated unit's kernel part.
    assert compiled.startswith(ex.compiled_source + "\n")
    assert shown_from_compiled(ex.compiled_source) == shown


@S.prim_func
def splat_operands(a: S.ptr("int16", "global"), out: S.ptr("int16", "global")):
    x = S.vload(a)
    S.vstore(S.vmul(x, 8, mask="16T"), out)  # becomes __vlsl(x, <splat of 3>)
    S.vstore(x * 3, out + 16)


def test_a_splat_among_an_intrinsics_operands_keeps_vbcast():
    # Compass broadcasts an intrinsic's scalar operand through its vbcast call, and a vector
    # constructor or an operator's operand as a Broadcast (OpenCL C's cast): both texts keep the
    # first spelling, and the two texts still agree once both are normalized.
    bm = BuildManager()
    ex = bm.build(splat_operands)
    code = ex.c_code
    assert "__vlsl(x, (short16)__vbcast((short)3))" in code, code
    assert "(x * (short16)(short)3)" in code, code
    assert shown_from_compiled(ex.compiled_source) == shown_from_compiled(code)
    a = np.arange(-16, 16, dtype="int16")
    out = np.zeros(32, "int16")
    ex(a, out)
    np.testing.assert_array_equal(out[:16], (a[:16] * 8).astype("int16"))
    np.testing.assert_array_equal(out[16:], (a[:16] * 3).astype("int16"))


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_splat_kernel_builds_and_runs_with_each_compiler(compiler, monkeypatch, tmp_path):
    monkeypatch.setenv("CC", compiler)
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path))
    if not _usable(compiler):
        pytest.skip(f"{compiler} is missing or cannot compile tessera/dsl.h here")
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, 16).astype("int32")
    f = rng.uniform(-4, 4, 16).astype("float32")
    h = rng.integers(-1000, 1000, 16).astype("int16")
    out, fout, hout = np.zeros(24, "int32"), np.zeros(16, "float32"), np.zeros(16, "int16")
    ex = BuildManager().build(splats)
    assert "(int8)10" in ex.c_code
    ex(a, f, h, out, fout, hout, 7)
    want = _splats_expected(a, f, h, 7)
    np.testing.assert_array_equal(out, want[0])
    np.testing.assert_allclose(fout, want[1], rtol=1e-6)
    np.testing.assert_array_equal(hout, want[2])
    # PySim agrees.
    out2, fout2, hout2 = np.zeros(24, "int32"), np.zeros(16, "float32"), np.zeros(16, "int16")
    splats(a, f, h, out2, fout2, hout2, 7)
    np.testing.assert_array_equal(out2, want[0])
    np.testing.assert_array_equal(hout2, want[2])


def test_bfloat16_splat_keeps_vbcast():
    @S.prim_func
    def bf(a: S.ptr("bfloat16", "global"), o: S.ptr("bfloat16", "global")):
        S.vstore(S.vload(a) + a[0], o)

    bm = BuildManager()
    code = bm.build(bf).c_code
    assert "__vbcast(a[0])" in code, code
    # The bfloat16 + itself is shown as the operator and compiled as the header's call
    # (test_bf16_vector_operators.py); the splat operand is `__vbcast(a[0])` in both.
    load = "__vload((__global bfloat16x16*)a, ALL_TRUE_h)"
    compiled = bm.generated_source(bf)
    assert f"__vadd({load}, __vbcast(a[0]), ALL_TRUE_h)" in compiled, compiled
    compiled = compiled.replace(f"__vadd({load}, __vbcast(a[0]), ALL_TRUE_h)",
                                f"({load} + __vbcast(a[0]))")
    assert shown_from_compiled(compiled).startswith(code + "\n")


def test_codegen_dsl_shown_binding_matches_c_code():
    bm = BuildManager()
    lw, ctx, entry = bm._lowerer(splats, None)
    with ctx:
        lw.run_to("legalize")
    assert _core.codegen_dsl_shown(lw.mod, entry) == bm.build(splats).c_code
