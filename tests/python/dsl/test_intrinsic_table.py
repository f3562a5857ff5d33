"""The declarative intrinsic table (tessera/target/dsl_intrinsics.h): S.<name>, the op registry
and PySim's dispatch all come from one entry."""

import inspect

import numpy as np
import pytest

from tessera import _core
from tessera.dsl import BuildManager
from tessera.dsl import script as S
from tessera.dsl.intrinsics import REGISTRY
from tessera.dsl.pysim.ops import CALLS
from tessera.error import DiagnosticError

TABLE = _core.dsl_intrinsics()
BY_NAME = {d["name"]: d for d in TABLE}
MATH = ["exp", "log", "tanh", "sin", "cos", "rsqrt", "sqrt", "ceil", "floor", "erf", "exp2"]


def test_table_entries_are_registered_everywhere():
    from tessera.dsl.pysim.interpreter import Interpreter
    from tessera.dsl.pysim.ops import BINARY

    assert [d["name"] for d in TABLE] == (["vaddh", "vsubh", "vmaxh", "vminh"] + MATH
                                          + ["vcls", "clz", "vbrevs", "vpcnt",
                                             "isnan", "isinf", "isfinite",
                                             "vrpadd", "vrpmax", "vrpmin",
                                             "vsr", "vsl", "vror",
                                             "vceq", "vcneq", "vcge", "vcgt", "vcle", "vclt",
                                             "max", "min", "vand", "vor", "vxor", "vinv",
                                             "vadd", "vsub", "vmul", "vdiv", "vmod",
                                             "vnsr", "vnsrsr", "vmull", "vmulh", "vdot",
                                             "vqdot", "vdpa", "vqdpa", "vfmae", "vfmao",
                                             "abs", "rint", "fma", "clip", "vsel",
                                             "vmml", "vmma", "vall", "vany", "const_mask",
                                             "tail_mask", "vconcat", "vsplit", "vzip", "vrevs",
                                             "vreplic", "vsldl", "vshfl", "vtbl", "vcompt",
                                             "vcompc", "vbcast", "cast", "i", "u",
                                             "reinterpret", "vxtl", "vxth", "vload", "vstore",
                                             "vload_gather", "vstore_scatter", "dma_copy",
                                             "async_dma_copy", "alloc_events", "wait_events",
                                             "free_events", "dma_memset", "dma_transpose2d",
                                             "dma_upsample", "flush_cache", "get_local_id",
                                             "get_local_size", "barrier", "perf_tick_begin",
                                             "perf_tick_end", "pow", "ceildiv"])
    masks = {"pairwise": "all", "math": "all", "bits": "undefined", "classify": "false",
             "reduce": "excluded", "shift": "undefined", "compare": "false",
             "minmax": "undefined", "logic": "undefined_masks_false",
             "invert": "undefined_masks_false", "arith": "undefined", "narrow": "undefined",
             "widen": "undefined", "dot": "excluded", "dot_acc": "excluded", "fma_half": "keep",
             "unary": "undefined", "fma": "keep", "clip": "keep", "select": "select",
             "matrix": "all", "mask_reduce": "operand", "const_mask": "all", "tail_mask": "all",
             "power": "all", "ceildiv": "all", "concat": "all", "split": "all", "zip": "all", "reverse": "all",
             "replicate": "all", "slide": "all", "rotate": "all", "lookup": "all",
             "compress": "packed", "broadcast": "undefined", "cast": "all", "same_bits": "all",
             "reinterpret": "all", "extend": "all", "load": "zero", "store": "skip",
             "gather": "zero", "scatter": "skip", "dma_copy": "all", "events": "all",
             "dma_memset": "all", "dma_transpose2d": "all", "dma_upsample": "all",
             "flush_cache": "all", "tec": "all", "perf_tick": "all"}
    effects = {"pure": 0, "reads_memory": 1, "writes_memory": 2, "opaque": 3}
    for d in TABLE:
        assert REGISTRY[d["name"]].__doc__ == d["doc"]
        assert d["mask"] == masks[d["form"]]
        # S.<name>'s parameters follow the form's mask rule and the entry's keywords.
        params = list(inspect.signature(REGISTRY[d["name"]].impl).parameters)[2:]
        assert ("mask" in params) == (d["mask"] != "all")
        assert ("out_sign" in params) == ("out_sign" in d["keywords"])
        assert ("return_idx" in params) == ("return_idx" in d["keywords"])
        assert ("r" in params) == ("r" in d["keywords"])
        assert ("saturate" in params) == ("saturate" in d["keywords"])
        # The TIR an entry builds instead of its op: a TIR op PySim handles or a node it
        # evaluates; the table registers no op for it.
        if d["plain_op"].startswith("tir."):
            assert d["plain_op"] in CALLS
        elif d["plain_op"]:
            assert d["plain_op"] in BINARY or hasattr(Interpreter, "expr_" + d["plain_op"]) or \
                hasattr(Interpreter, "stmt_" + d["plain_op"])
        if not d["op"]:
            assert d["plain_op"] and not d["c_name"]
            continue
        op = _core.Op.get(d["op"])
        assert op.get_attr("dsl.name") == d["c_name"]
        # The op's effect and argument count are the entry's.
        assert op.effect == effects[d["effect"]] and op.num_inputs == d["num_inputs"]
        assert d["op"] in CALLS
        if d["variant_op"]:  # S.vnsr(to_h=True), S.dma_copy's one row: registered, dispatched
            variant = _core.Op.get(d["variant_op"])
            assert d["variant_op"] in CALLS and variant.get_attr("dsl.name")
            assert variant.effect == op.effect
        # The width split the table names is the op's "dsl.split" (dsl.AlignVectorWidth).
        assert op.get_attr("dsl.split") == d["split"]
        # Entries with scalar operands are computed in lane 0 by dsl.AlignVectorWidth.
        want = "" if not d["scalar_elements"] else "lane0_mask" if d["mask"] == "false" else "lane0"
        assert op.get_attr("dsl.scalar") == want


def _lower_error(kernel):
    with pytest.raises(DiagnosticError) as info:
        BuildManager().lower(kernel)
    return str(info.value)


@pytest.mark.parametrize("name", ["vaddh", "vsubh", "vmaxh", "vminh"])
def test_element_checks_come_from_the_table(name):
    elements = BY_NAME[name]["elements"]

    @S.prim_func
    def k(a: S.ptr("bfloat16", "global")):
        v = S.vload(a)
        S.vstore(getattr(S, name)(v, v), a)  # noqa: B023

    if "bfloat16" in elements:  # vmaxh, vminh
        BuildManager().lower(k)
    else:  # vaddh, vsubh: the message lists the table's element types, in its order
        with pytest.raises(DiagnosticError, match=f'S.{name}: the arg "x" has unsupported type '
                                                  f'"bfloat16x16"; expected elements of '
                                                  f'{", ".join(elements)}'):
            BuildManager().lower(k)


def test_math_checks_come_from_the_table():
    d = BY_NAME["exp"]
    assert d["elements"] == ("float16", "float32", "bfloat16")
    assert d["scalar_elements"] == ("float16", "float32")

    @S.prim_func
    def vec_int(a: S.ptr("int32", "global")):
        S.vstore(S.exp(S.vload(a)), a)

    assert ('S.exp: the arg "x" has unsupported type "int32x8"; expected elements of '
            'float16, float32, bfloat16') in _lower_error(vec_int)

    @S.prim_func
    def scalar_bf16(a: S.ptr("bfloat16", "global")):
        a[0] = S.sqrt(a[0])

    assert ('S.sqrt: the arg "x" has unsupported type "bfloat16"; expected elements of '
            'float16, float32') in _lower_error(scalar_bf16)


def test_bits_checks_come_from_the_table():
    @S.prim_func
    def cls_unsigned(a: S.ptr("uint16", "global")):
        S.vstore(S.vcls(S.vload(a)), a)

    assert ('S.vcls: the arg "x" has unsupported type "uint16x16"; expected elements of '
            'int8, int16, int32') in _lower_error(cls_unsigned)

    @S.prim_func
    def brevs_scalar(a: S.ptr("int32", "global")):
        a[0] = S.vbrevs(a[0])  # no scalar elements: vectors only

    assert 'S.vbrevs: the arg "x" must be a vector' in _lower_error(brevs_scalar)

    @S.prim_func
    def brevs_sign(a: S.ptr("int32", "global")):
        S.vstore(S.vbrevs(S.vload(a), out_sign="u"), a)  # no out_sign keyword

    assert "S.vbrevs(" in _lower_error(brevs_sign)


def test_table_ops_run_in_pysim_and_compiled():
    from _util import run_both

    @S.prim_func
    def k(a: S.ptr("fp32", "global"), b: S.ptr("int32", "global"), fo: S.ptr("fp32", "global"),
          io: S.ptr("int32", "global")):
        S.vstore(S.exp2(S.vload(a)), fo)
        fo[8] = S.ceil(a[9])
        S.vstore(S.vpcnt(S.vload(b)), io)
        io[8] = S.clz(b[9])
        if S.isfinite(a[10]):
            io[9] = 2

    a = np.array([0.5, 1, 2, 3, -1, -2, 0.25, 4, 0, 2.5, np.inf], np.float32)
    b = np.array([0, 1, 3, 7, -1, 255, 256, 1023, 0, 1, 0], np.int32)
    fo, io = np.zeros(9, np.float32), np.ones(10, np.int32)
    (_, _, cf, ci), (_, _, sf, si) = run_both(k, a, b, fo, io)
    want_f = np.concatenate([np.exp2(a[:8]), [3.0]]).astype(np.float32)
    want_i = [bin(int(v) & 0xFFFFFFFF).count("1") for v in b[:8]] + [31, 1]  # inf: not finite
    for got_f, got_i in ((cf, ci), (sf, si)):
        np.testing.assert_allclose(got_f, want_f, rtol=1e-6)
        assert got_i.tolist() == want_i


def test_reduce_checks_come_from_the_table():
    assert BY_NAME["vrpadd"]["split"] == "sum" and BY_NAME["vrpmax"]["split"] == ""

    @S.prim_func
    def max_of_two_parts(a: S.ptr("int32", "global")):
        S.vstore(S.vrpmax(S.vload(a, lanes=16)), a)  # no split: native widths only

    assert ('S.vrpmax on "int32x16": it works on vectors of the native width only'
            in _lower_error(max_of_two_parts))

    # A multiple width takes a mask, as Compass's S.vrpadd does: each native part sums its
    # active lanes, and lane 0 holds the parts' sums added.
    @S.prim_func
    def masked_sum_of_parts(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = S.vrpadd(S.vload(a, lanes=24), mask="5T3F2T6F7T1F")[0]

    a = np.arange(1, 25, dtype="int32")
    mask = np.array([True] * 5 + [False] * 3 + [True] * 2 + [False] * 6 + [True] * 7 + [False])
    for run in (BuildManager().build(masked_sum_of_parts), masked_sum_of_parts):
        out = np.zeros(1, "int32")
        run(a, out)
        assert out[0] == a[mask].sum()

    @S.prim_func
    def sum_of_mask(a: S.ptr("int32", "global")):
        S.vstore(S.vrpadd(S.vload(a) > 0), a)

    assert 'S.vrpadd: the arg "x" must be a vector' in _lower_error(sum_of_mask)


def test_shift_checks_and_ops_come_from_the_table():
    assert BY_NAME["vsr"]["plain_op"] == "tir.shift_right" and BY_NAME["vsr"]["op"] == "dsl.vasrr"
    assert BY_NAME["vror"]["plain_op"] == ""

    @S.prim_func
    def float_shift(a: S.ptr("fp32", "global")):
        S.vstore(S.vror(S.vload(a), 1), a)

    assert ('S.vror: the arg "x" has unsupported type "float32x8"; expected elements of '
            'int8, uint8, int16, uint16, int32, uint32') in _lower_error(float_shift)

    # The flag keyword picks the entry's op over its plain TIR shift.
    ir = BuildManager().lower(reduce_and_shift).script()
    assert ir.count("T.shift_right(") == 1, ir
    assert ir.count('"dsl.vasrr"') == 1 and ir.count('"dsl.vlsls"') == 1, ir
    assert ir.count('"dsl.vror"') == 1, ir


@S.prim_func
def reduce_and_shift(a: S.ptr("int16", "global"), h: S.ptr("fp16", "global"),
                     b: S.ptr("int16", "global"), f: S.ptr("fp32", "global")):
    x = S.vload(a)
    S.vstore(S.vsr(x, 3), b)
    S.vstore(S.vsr(x, 3, with_round=True), b + 16)
    S.vstore(S.vsl(x, S.vload(b + 64), saturate=True, mask="4T12F", r=x), b + 32)
    S.vstore(S.vror(x, 17), b + 48)
    S.vstore(S.vrpmax(x, mask="8T8F"), b + 80)
    S.vstore(S.vrpmin(x), b + 96)
    S.vstore(S.vrpadd(x, mask="4F12T"), b + 112)
    S.vstore(S.vrpadd(S.vload(h)), f)


def test_table_reductions_and_shifts_run_in_pysim_and_compiled():
    from _util import run_both

    a = np.array([1000, -1000, 7, -7, 12, -12, 32767, -32768, 5, 6, 7, 8, 9, 10, 11, 12],
                 np.int16)
    h = (np.arange(16) * 0.5).astype(np.float16)
    b, f = np.full(128, 3, np.int16), np.full(8, 3, np.float32)
    b[64:80] = [1, 2, 15, 16, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0]  # vsl's counts
    (_, _, cb, cf), (_, _, sb, sf) = run_both(reduce_and_shift, a, h, b, f)
    x = a.astype(np.int64)
    rounded = np.array([(v + 4) >> 3 if (v & 7) != 4 else ((v >> 3) + ((v >> 3) & 1))
                        for v in x])
    counts = b[64:68].astype(np.int64)
    sat = np.clip(x[:4] << np.minimum(counts, 15), -32768, 32767)
    sat = np.where(counts >= 16, np.where(x[:4] < 0, -32768, 32767), sat)
    u = x & 0xFFFF
    ror = (((u >> 1) | (u << 15)) & 0xFFFF).astype(np.uint16).view(np.int16)
    for got, got_f in ((cb, cf), (sb, sf)):
        assert got[:16].tolist() == (x >> 3).tolist()
        assert got[16:32].tolist() == rounded.tolist()
        assert got[32:36].tolist() == sat.tolist() and got[36:48].tolist() == a[4:].tolist()
        assert got[48:64].tolist() == ror.tolist()
        # Reductions: lane 0, the other lanes zero; the int16 sum wraps.
        assert got[80] == 32767 and got[96] == -32768
        assert got[112] == np.array(x[4:].sum()).astype(np.int16)
        assert not got[81:96].any() and not got[97:112].any() and not got[113:].any()
        assert got_f[0] == np.float32(h.astype(np.float32).sum()) and not got_f[1:].any()


def test_compare_logic_and_arith_checks_come_from_the_table():
    assert BY_NAME["vadd"]["op"] == "dsl.vadds" and BY_NAME["vadd"]["plain_op"] == "Add"
    assert BY_NAME["vmul"]["op"] == "" and BY_NAME["vceq"]["plain_op"] == "EQ"
    assert BY_NAME["vand"]["plain_op"] == "tir.bitwise_and"

    @S.prim_func
    def div_half(a: S.ptr("fp16", "global")):
        v = S.vload(a)
        S.vstore(S.vdiv(v, v), a)

    assert ('S.vdiv: the arg "x" has unsupported type "float16x16"; expected elements of '
            'int8, uint8, int16, uint16, int32, uint32, float32') in _lower_error(div_half)

    @S.prim_func
    def and_float(a: S.ptr("fp32", "global")):
        v = S.vload(a)
        S.vstore(S.vand(v, v), a)

    assert ('S.vand: the arg "x" has unsupported type "float32x8"; expected elements of '
            'int8, uint8, int16, uint16, int32, uint32') in _lower_error(and_float)

    @S.prim_func
    def compare_scalars(a: S.ptr("int32", "global")):
        if S.vcgt(a[0], a[1]):
            a[2] = 1

    assert "S.vcgt expects vector operands, got int32" in _lower_error(compare_scalars)


@S.prim_func
def compare_logic_arith(a: S.ptr("int8", "global"), b: S.ptr("int8", "global"),
                        o: S.ptr("int8", "global")):
    x, y = S.vload(a), S.vload(b)
    S.vstore(S.vadd(x, y, saturate=True), o)
    S.vstore(S.vsub(x, y, mask="16T16F", r=x), o + 32)
    S.vstore(S.vsel(S.vinv(x), y, S.vand(S.vcgt(x, y), S.vcneq(y, 0))), o + 64)
    S.vstore(S.max(x, y, mask="8F24T", r=y), o + 96)
    S.vstore(S.vxor(S.vdiv(x, 3), S.vmod(x, 7)), o + 128)


def test_compare_logic_and_arith_run_in_pysim_and_compiled():
    from _util import run_both

    rng = np.random.default_rng(19)
    a = rng.integers(-128, 128, 32).astype(np.int8)
    b = rng.integers(-128, 128, 32).astype(np.int8)
    b[:4] = 0
    o = np.zeros(160, np.int8)
    (_, _, co), (_, _, so) = run_both(compare_logic_arith, a, b, o)
    x, y = a.astype(np.int64), b.astype(np.int64)
    want_sub = np.where(np.arange(32) < 16, x - y, x).astype(np.int8)
    pick = (x > y) & (y != 0)
    want_sel = np.where(pick, ~x, y).astype(np.int8)
    want_max = np.where(np.arange(32) >= 8, np.maximum(x, y), y).astype(np.int8)
    want_xor = (np.trunc(x / 3).astype(np.int8) ^ np.fmod(x, 7).astype(np.int8)).astype(np.int8)
    for got in (co, so):
        assert got[:32].tolist() == np.clip(x + y, -128, 127).tolist()
        assert got[32:64].tolist() == want_sub.tolist()
        assert got[64:96].tolist() == want_sel.tolist()
        assert got[96:128].tolist() == want_max.tolist()
        assert got[128:].tolist() == want_xor.tolist()


def test_matrix_mask_and_power_checks_come_from_the_table():
    assert BY_NAME["vmml"]["effect"] == "writes_memory" and BY_NAME["vall"]["effect"] == "pure"
    assert BY_NAME["pow"]["elements"] == ("float16", "float32", "bfloat16")
    assert _core.Op.get("dsl.vpow").get_attr("dsl.scalar_operands") == "2"

    @S.prim_func
    def matrix_int(a: S.ptr("int16", "global"), o: S.ptr("fp32", "global")):
        v = S.vload(a)
        S.vmml(o, v, v)

    assert ('S.vmml: Argument type mismatch: expects two float16x16 or bfloat16x16 operands, '
            'got "int16x16" and "int16x16"') in _lower_error(matrix_int)

    @S.prim_func
    def pow_int(a: S.ptr("int32", "global")):
        S.vstore(S.pow(S.vload(a), 2), a)

    assert ('S.pow: the arg "x" has unsupported type "int32x8"; expected elements of float16, '
            'float32, bfloat16') in _lower_error(pow_int)

    @S.prim_func
    def vall_int(a: S.ptr("int32", "global")):
        if S.vall(3):
            a[0] = 1

    assert "expects a mask, got" in _lower_error(vall_int)


@S.prim_func
def matrix_mask_power(a: S.ptr("fp16", "global"), f: S.ptr("fp32", "global"),
                      o: S.ptr("fp32", "global"), n: S.int32):
    x = S.vload(a)
    S.vmml(o, x, x)
    if S.get_local_id() == 0:  # every TEC runs the kernel: accumulate once
        S.vmma(o + 16, x, x)
    m = S.tail_mask(n, 8)
    if S.vany(m):
        o[32] = 1.0
    if S.vall(m):
        o[33] = 1.0
    S.vstore(S.pow(S.vload(f), 2.0), o + 40, mask=S.const_mask("4T4F"))


def test_matrix_mask_and_power_run_in_pysim_and_compiled():
    from _util import run_both

    a = (np.arange(16) % 5 - 2).astype(np.float16)
    f = np.linspace(-2, 2, 8).astype(np.float32)
    o = np.zeros(48, np.float32)
    o[16:32] = 1.0
    (_, _, co, _), (_, _, so, _) = run_both(matrix_mask_power, a, f, o, 5)
    x = a.astype(np.float32).reshape(4, 4)
    prod = (x @ x.T).reshape(-1)  # y is read column-major: column j is y's row j
    want = np.zeros(48, np.float32)
    want[:16], want[16:32], want[32] = prod, prod + 1.0, 1.0
    want[40:44] = f[:4] ** 2
    for got in (co, so):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_permutation_checks_come_from_the_table():
    assert BY_NAME["vshfl"]["op"] == "dsl.vperm" and BY_NAME["vshfl"]["plain_op"] == "Shuffle"
    assert BY_NAME["vtbl"]["op"] == "dsl.vperm" and BY_NAME["vconcat"]["op"] == ""
    assert BY_NAME["vcompt"]["mask"] == "packed" and "bool" in BY_NAME["vzip"]["elements"]

    @S.prim_func
    def compc_mismatch(a: S.ptr("int32", "global"), b: S.ptr("uint32", "global")):
        S.vstore(S.vcompc(S.vload(a), S.vload(b), "4T4F"), a)

    assert ('S.vcompc: Argument type mismatch: "int32x8" vs. "uint32x8"'
            in _lower_error(compc_mismatch))


@S.prim_func
def permutations(a: S.ptr("int32", "global"), o: S.ptr("int32", "global"), n: S.int32):
    x, y = S.vload(a), S.vload(a + 8)
    S.vstore(S.vzip(x, y, "low"), o)
    S.vstore(S.vsldl(x, y, 3), o + 8)
    S.vstore(S.vrevs(S.vshfl(x, n)), o + 16)
    S.vstore(S.vcompc(x, y, "2T2F2T2F"), o + 24)
    lo, hi = S.vsplit(S.vconcat((y, x)))
    S.vstore(S.vtbl((lo, hi), S.vreplic(S.vcompt(x, "4F4T"), 1)), o + 32)
    S.vstore(S.vbcast(a[n]), o + 40)


def test_permutations_run_in_pysim_and_compiled():
    from _util import run_both

    a = np.array([3, 9, 1, 12, 5, 15, 2, 7, 100, 101, 102, 103, 104, 105, 106, 107], np.int32)
    o = np.zeros(48, np.int32)
    (_, co, _), (_, so, _) = run_both(permutations, a, o, 3)
    x, y = a[:8], a[8:]
    want = np.concatenate([
        np.stack([x[:4], y[:4]], 1).reshape(-1),
        np.concatenate([x[3:], y[:3]]),
        np.roll(x, -3)[::-1],
        np.concatenate([x[[0, 1, 4, 5]], y[:4]]),
        np.full(8, np.concatenate([y, x])[x[5]]),  # vcompt(x, "4F4T")[1] is x[5] = 15
        np.full(8, a[3]),
    ])
    for got in (co, so):
        assert got.tolist() == want.tolist()


def test_conversion_checks_come_from_the_table():
    assert BY_NAME["cast"]["op"] == "dsl.vcvt" and BY_NAME["cast"]["plain_op"] == "Cast"
    assert BY_NAME["vxtl"]["op"] == "dsl.vcvt" and BY_NAME["u"]["plain_op"] == "tir.reinterpret"
    assert _core.Op.get("dsl.vcvt").num_inputs == 3

    @S.prim_func
    def extend_float(a: S.ptr("fp16", "global"), o: S.ptr("fp32", "global")):
        S.vstore(S.cast(S.vxth(S.vload(a)), "float32"), o)

    assert "expects an 8- or 16-bit integer vector" in _lower_error(extend_float)

    @S.prim_func
    def reinterpret_bits(a: S.ptr("int32", "global")):
        S.vstore(S.reinterpret(S.vload(a), "int16x8"), a)

    assert 'S.reinterpret: "int32x8" has 256 bits but "int16x8" has 128' in _lower_error(
        reinterpret_bits)


def test_memory_checks_and_effects_come_from_the_table():
    assert BY_NAME["vload"]["plain_op"] == "BufferLoad" and BY_NAME["vstore"]["mask"] == "skip"
    assert _core.Op.get("dsl.vload_gather").effect == 1  # reads memory
    assert _core.Op.get("dsl.vstore_scatter").effect == 2  # writes memory

    @S.prim_func
    def scatter_mismatch(a: S.ptr("int32", "global"), o: S.ptr("fp32", "global")):
        S.vstore_scatter(S.vload(a), o, S.vload(a.as_ptr("int16")))

    assert ('S.vstore_scatter: Argument type mismatch: expects a vector of "float32"'
            in _lower_error(scatter_mismatch))


@S.prim_func
def gather_scatter(a: S.ptr("int32", "global"), idx: S.ptr("int16", "global"),
                   o: S.ptr("int32", "global")):
    i = S.vload(idx, lanes=8)
    v = S.vload_gather(a, i, mask="6T2F")
    S.vstore(v, o, stride=2)
    S.vstore_scatter(v, o + 1, i, mask="2F6T")


def test_memory_ops_run_in_pysim_and_compiled():
    from _util import run_both

    a = np.arange(100, 116, dtype=np.int32)
    idx = np.array([7, 0, 3, 3, 15, 8, 1, 2], np.int16)
    o = np.full(20, -1, np.int32)
    (_, _, co), (_, _, so) = run_both(gather_scatter, a, idx, o)
    v = np.where(np.arange(8) < 6, a[idx], 0)
    want = np.full(20, -1, np.int32)
    want[0:16:2] = v
    for lane in range(2, 8):  # in lane order: a later lane wins on a repeated index
        want[1 + idx[lane]] = v[lane]
    for got in (co, so):
        assert got.tolist() == want.tolist()


def test_dma_entries_are_opaque_ops_of_fixed_arity():
    dma = [d for d in TABLE if d["form"] in ("dma_copy", "events", "dma_memset",
                                              "dma_transpose2d", "dma_upsample", "flush_cache")]
    assert len(dma) == 9 and all(d["effect"] == "opaque" for d in dma)
    assert _core.Op.get("dsl.dma_upsample").num_inputs == 9
    assert _core.Op.get("dsl.alloc_event").num_inputs == 0
    # The one-row DDR <-> SRAM copy S.dma_copy picks: the entry's variant op.
    assert BY_NAME["dma_copy"]["variant_op"] == "dsl.dma1d"
    assert _core.Op.get("dsl.dma1d").num_inputs == 4
    assert _core.Op.get("dsl.dma1d").get_attr("dsl.name") == "DMA1D"


def test_floor_and_ceildiv_come_from_the_table():
    # S.floor: a math entry without op, TIR's floor, dispatched by PySim from its form.
    floor, ceildiv = BY_NAME["floor"], BY_NAME["ceildiv"]
    assert (floor["op"], floor["plain_op"], floor["form"]) == ("", "tir.floor", "math")
    assert "tir.floor" in CALLS
    assert (ceildiv["op"], ceildiv["plain_op"]) == ("", "Div")
    assert ceildiv["scalar_elements"] == ("int8", "uint8", "int16", "uint16", "int32", "uint32")

    @S.prim_func
    def k(a: S.ptr("fp32", "global"), q: S.ptr("int32", "global"), n: S.i32):
        a[0] = S.floor(a[0])
        S.vstore(S.floor(S.vload(a + 8)), a + 8)
        q[0] = S.ceildiv(n, 4)
        q[1] = S.ceildiv(-7, 2)

    a = np.array([-1.5] + [0.0] * 7 + [2.5, -0.5, 3.0, -3.25, 0.75, -7.5, 9.99, -0.01], "float32")
    want_a, want_q = np.floor(a), [3, -3]  # (9 + 3) / 4; (-7 + 1) / 2, truncating
    for run in (BuildManager().build(k), k):  # compiled, PySim
        got_a, got_q = a.copy(), np.zeros(2, np.int32)
        run(got_a, got_q, 9)
        assert got_a.tolist() == want_a.tolist() and got_q.tolist() == want_q

    @S.prim_func
    def bad(a: S.ptr("fp32", "global")):
        a[0] = S.ceildiv(a[0], a[1])

    assert 'S.ceildiv expects integer scalars, got "float32"' in _lower_error(bad)
