"""The intrinsics declared in C++'s table (tessera/target/dsl_intrinsics.h): the pairwise S.vaddh,
S.vsubh, S.vmaxh, S.vminh; the math functions S.exp, S.log, S.tanh, S.sin, S.cos, S.rsqrt, S.sqrt,
S.ceil, S.floor, S.erf, S.exp2; the bit counts S.vcls, S.clz, S.vbrevs, S.vpcnt; the classes
S.isnan, S.isinf, S.isfinite; the reductions S.vrpadd, S.vrpmax, S.vrpmin; the shifts S.vsr, S.vsl,
S.vror; the comparisons S.vceq, S.vcneq, S.vcge, S.vcgt, S.vcle, S.vclt, S.max, S.min; the logic
S.vand, S.vor, S.vxor, S.vinv; the arithmetic S.vadd, S.vsub, S.vmul, S.vdiv, S.vmod; the narrowing
shifts S.vnsr, S.vnsrsr; the widening products S.vmull, S.vmulh; the dot products S.vdot, S.vqdot,
S.vdpa, S.vqdpa; the fused multiply-adds S.fma, S.vfmae, S.vfmao; S.abs, S.rint, S.clip and S.vsel;
the matrix products S.vmml, S.vmma; the masks S.vall, S.vany, S.const_mask, S.tail_mask; S.pow;
S.ceildiv; the permutations S.vconcat, S.vsplit, S.vzip, S.vrevs, S.vreplic, S.vsldl, S.vshfl,
S.vtbl, S.vcompt, S.vcompc, S.vbcast; the conversions S.cast, S.i, S.u, S.reinterpret, S.vxtl,
S.vxth; the loads and stores S.vload, S.vstore, S.vload_gather, S.vstore_scatter; the DMA
S.dma_copy, S.async_dma_copy, S.alloc_events, S.wait_events, S.free_events, S.dma_memset,
S.dma_transpose2d, S.dma_upsample, S.flush_cache; the TEC intrinsics S.get_local_id,
S.get_local_size, S.barrier; the profiling markers S.perf_tick_begin, S.perf_tick_end.
Each entry's argument checks come from its form, element types, mask rule and keywords; the op
registry and PySim's dispatch are derived from the same entry."""

import ast

from ... import _core
from ._registry import intrinsic
from ._util import call
from .arith import (_abs, _accumulate, _arith, _clip, _dot, _fma, _fma_half, _matrix, _pairwise,
                    _rint, _select, _sum_lanes, _widening)
from .bitwise import _invert, _logic, _narrow, _shift, _unary_count, _unary_scalar
from .compare import _classify, _compare, _extreme, _extreme_lane
from .conversion import _cast, _extend, _reinterpret, _same_bits
from .dma import (_alloc_events, _async_dma_copy, _dma_copy, _dma_memset, _dma_transpose2d,
                  _dma_upsample, _each_event, _flush_cache)
from .mathfuncs import _ceildiv, _math_arg, _pow
from .memory import _vload, _vload_gather, _vstore, _vstore_scatter
from .misc import _tick
from .tec import _barrier, _tec_value
from .permutation import (_vbcast, _vcompc, _vcompt, _vconcat, _vreplic, _vrevs, _vshfl, _vsldl,
                          _vsplit, _vtbl, _vzip)
from .predicate import _const_mask, _mask_reduce, _tail_mask


def _pairwise_form(entry, name, op, elements):
    def impl(p, node, x, y):
        return _pairwise(p, node, op.split(".", 1)[1], x, y, elements)
    return impl


def _math_form(entry, name, op, elements):
    scalars = tuple(entry["scalar_elements"])

    def impl(p, node, x):
        x = _math_arg(p, node, name, x, elements, scalars)
        # A scalar too: dsl.AlignVectorWidth computes it in lane 0 of a vector ("dsl.scalar");
        # an entry without op (S.floor) is the TIR op plain_op.
        return call(p, node, x.dtype, op or entry["plain_op"], [x])
    return impl


def _bits_form(entry, name, op, elements):
    scalars = tuple(entry["scalar_elements"])

    def count(p, node, x, mask, out_sign):
        if scalars:
            scalar = _unary_scalar(p, node, name, op, x, scalars)
            if scalar is not None:
                return scalar
        return _unary_count(p, node, name, op, x, mask, out_sign, elements)

    if "out_sign" in entry["keywords"]:
        def impl(p, node, x, mask=None, out_sign=None):
            return count(p, node, x, mask, out_sign)
    else:
        def impl(p, node, x, mask=None):
            return count(p, node, x, mask, None)
    return impl


def _classify_form(entry, name, op, elements):
    def impl(p, node, x, mask=None):
        return _classify(p, node, name, op, x, mask, elements)
    return impl


def _reduce_form(entry, name, op, elements):
    if "return_idx" in entry["keywords"]:
        def impl(p, node, x, mask=None, return_idx=False):
            return _extreme_lane(p, node, name, op, x, mask, return_idx, elements)
    elif entry["lane_fn"] == "add":
        multiple = entry["split"] == "sum"

        def impl(p, node, x, mask=None):
            return _sum_lanes(p, node, name, op, x, mask, elements, multiple)
    else:
        raise NotImplementedError(f"S.{name}: a reduction by {entry['lane_fn']!r} without "
                                  f"return_idx")
    return impl


def _shift_form(entry, name, op, elements):
    plain, keywords = entry["plain_op"], entry["keywords"]
    if "with_round" in keywords:
        def impl(p, node, x, shift, mask=None, with_round=False, r=None):
            return _shift(p, node, name, op, plain, with_round, "with_round", x, shift, mask, r,
                          elements)
    elif "saturate" in keywords:
        def impl(p, node, x, shift, mask=None, saturate=False, r=None):
            return _shift(p, node, name, op, plain, saturate, "saturate", x, shift, mask, r,
                          elements)
    elif not plain and not keywords:
        def impl(p, node, x, shift, mask=None):
            return _shift(p, node, name, op, "", True, None, x, shift, mask, None, elements)
    else:
        raise NotImplementedError(f"S.{name}: a shift with the keywords {keywords!r}")
    return impl


# The Python operator of each TIR node or op an entry builds (its plain_op).
_AST = {"EQ": ast.Eq, "NE": ast.NotEq, "GE": ast.GtE, "GT": ast.Gt, "LE": ast.LtE, "LT": ast.Lt,
        "Add": ast.Add, "Sub": ast.Sub, "Mul": ast.Mult, "Div": ast.Div, "Mod": ast.Mod,
        "tir.bitwise_and": ast.BitAnd, "tir.bitwise_or": ast.BitOr,
        "tir.bitwise_xor": ast.BitXor}


def _compare_form(entry, name, op, elements):
    node = _AST[entry["plain_op"]]

    def impl(p, node_, x, y, mask=None):
        return _compare(p, node_, name, node(), x, y, mask, elements)
    return impl


def _minmax_form(entry, name, op, elements):
    which = entry["plain_op"]

    def impl(p, node, x, y, mask=None, r=None):
        return _extreme(p, node, name, which, x, y, mask, r)
    return impl


def _logic_form(entry, name, op, elements):
    node = _AST[entry["plain_op"]]

    def impl(p, node_, x, y, mask=None):
        return _logic(p, node_, name, node(), x, y, mask, elements)
    return impl


def _invert_form(entry, name, op, elements):
    def impl(p, node, x, mask=None):
        return _invert(p, node, name, x, mask, elements)
    return impl


def _arith_form(entry, name, op, elements):
    node, keywords = _AST[entry["plain_op"]], entry["keywords"]
    if "saturate" in keywords:
        def impl(p, node_, x, y, mask=None, saturate=False, out_sign=None, r=None):
            return _arith(p, node_, name, node(), op, x, y, mask, saturate, out_sign, r, elements)
    elif "out_sign" in keywords:
        def impl(p, node_, x, y, mask=None, out_sign=None, r=None):
            return _arith(p, node_, name, node(), "", x, y, mask, False, out_sign, r, elements)
    elif not keywords:
        def impl(p, node_, x, y, mask=None):
            return _arith(p, node_, name, node(), "", x, y, mask, False, None, None, elements)
    else:
        raise NotImplementedError(f"S.{name}: arithmetic with the keywords {keywords!r}")
    return impl


def _narrow_form(entry, name, op, elements):
    ops = (op, entry["variant_op"])  # the op of to_h=True
    if entry["saturate"]:  # S.vnsrsr: always saturating and rounding
        def impl(p, node, x, shift, mask=None, out_sign=None, to_h=False):
            return _narrow(p, node, name, ops, x, shift, mask, True, out_sign, True, to_h,
                           elements)
    else:
        def impl(p, node, x, shift, mask=None, saturate=False, out_sign=None, with_round=False,
                 to_h=False):
            return _narrow(p, node, name, ops, x, shift, mask, saturate, out_sign, with_round,
                           to_h, elements)
    return impl


def _widen_form(entry, name, op, elements):
    high = entry["lane_fn"] == "mul_high"

    def impl(p, node, x, y, mask=None, out_sign=None, r=None):
        return _widening(p, node, name, op, high, x, y, mask, out_sign, r, elements)
    return impl


def _dot_form(entry, name, op, elements):
    quad = entry["lane_fn"] == "dot4"

    def impl(p, node, x, y, mask=None):
        return _dot(p, node, name, op, x, y, mask, quad, elements)
    return impl


def _dot_acc_form(entry, name, op, elements):
    # The entry of the dot product it adds: lane function "dot2_acc" adds "dot2".
    dot = next(d for d in _core.dsl_intrinsics() if d["lane_fn"] == entry["lane_fn"][:-4])
    quad = dot["lane_fn"] == "dot4"
    dot = (dot["name"], dot["op"], tuple(dot["elements"]))

    def impl(p, node, acc, x, y, mask=None):
        return _accumulate(p, node, name, op, acc, x, y, mask, quad, dot)
    return impl


def _fma_half_form(entry, name, op, elements):
    def impl(p, node, acc, x, y, mask=None):
        return _fma_half(p, node, name, op, acc, x, y, mask, elements)
    return impl


def _unary_form(entry, name, op, elements):
    if entry["lane_fn"] == "abs":
        def impl(p, node, x, mask=None, saturate=False):
            return _abs(p, node, name, op, x, mask, saturate, elements)
    elif entry["lane_fn"] == "rint":
        def impl(p, node, x, mask=None):
            return _rint(p, node, name, op, x, mask, elements)
    else:
        raise NotImplementedError(f"S.{name}: the unary lane function {entry['lane_fn']!r}")
    return impl


def _fma_form(entry, name, op, elements):
    def impl(p, node, acc, x, y, mask=None):
        return _fma(p, node, name, op, acc, x, y, mask, elements)
    return impl


def _clip_form(entry, name, op, elements):
    def impl(p, node, x, min_val, max_val, mask=None):
        return _clip(p, node, name, x, min_val, max_val, mask, elements)
    return impl


def _select_form(entry, name, op, elements):
    def impl(p, node, x, y, mask=None):
        return _select(p, node, name, x, y, mask, elements)
    return impl


def _matrix_form(entry, name, op, elements):
    if entry["lane_fn"] == "matmul_acc":
        def impl(p, node, acc_ptr, x, y):
            _matrix(p, node, name, op, acc_ptr, x, y, elements)
    else:
        def impl(p, node, ptr, x, y):
            _matrix(p, node, name, op, ptr, x, y, elements)
    return impl


def _mask_reduce_form(entry, name, op, elements):
    every = {"all": True, "any": False}[entry["lane_fn"]]

    def impl(p, node, mask):
        return _mask_reduce(p, node, name, op, every, mask)
    return impl


def _const_mask_form(entry, name, op, elements):
    def impl(p, node, x):
        return _const_mask(p, node, name, x)
    return impl


def _tail_mask_form(entry, name, op, elements):
    def impl(p, node, n, lanes):
        return _tail_mask(p, node, name, op, n, lanes)
    return impl


def _power_form(entry, name, op, elements):
    scalars = tuple(entry["scalar_elements"])

    def impl(p, node, x, exponent):
        return _pow(p, node, name, op, x, exponent, elements, scalars)
    return impl


def _ceildiv_form(entry, name, op, elements):
    scalars = tuple(entry["scalar_elements"])

    def impl(p, node, x, y):
        return _ceildiv(p, node, name, x, y, scalars)
    return impl


def _concat_form(entry, name, op, elements):
    def impl(p, node, inps, part="all"):
        return _vconcat(p, node, name, inps, part)
    return impl


def _split_form(entry, name, op, elements):
    def impl(p, node, x):
        return _vsplit(p, node, name, x)
    return impl


def _zip_form(entry, name, op, elements):
    def impl(p, node, x, y, part="all"):
        return _vzip(p, node, name, x, y, part)
    return impl


def _reverse_form(entry, name, op, elements):
    def impl(p, node, x):
        return _vrevs(p, node, name, x)
    return impl


def _replicate_form(entry, name, op, elements):
    def impl(p, node, x, index=0):
        return _vreplic(p, node, name, x, index)
    return impl


def _slide_form(entry, name, op, elements):
    def impl(p, node, x, y, shift):
        return _vsldl(p, node, name, x, y, shift)
    return impl


def _rotate_form(entry, name, op, elements):
    def impl(p, node, x, shift):
        return _vshfl(p, node, name, op, x, shift)
    return impl


def _lookup_form(entry, name, op, elements):
    def impl(p, node, table, indices):
        return _vtbl(p, node, name, op, table, indices)
    return impl


def _compress_form(entry, name, op, elements):
    if entry["lane_fn"] == "zeros":  # S.vcompt: zeros above the packed lanes
        def impl(p, node, x, mask):
            return _vcompt(p, node, name, op, x, mask)
    else:  # S.vcompc: y's lanes above them
        def impl(p, node, x, y, mask):
            return _vcompc(p, node, name, op, x, y, mask)
    return impl


def _broadcast_form(entry, name, op, elements):
    def impl(p, node, x, mask=None, lanes=None):
        return _vbcast(p, node, name, x, mask, lanes)
    return impl


def _cast_form(entry, name, op, elements):
    def impl(p, node, x, dtype, part="all", saturate=None):
        return _cast(p, node, name, op, x, dtype, part, saturate)
    return impl


def _same_bits_form(entry, name, op, elements):
    signed = {"signed": True, "unsigned": False}[entry["lane_fn"]]
    plain = entry["plain_op"]

    def impl(p, node, x):
        return _same_bits(p, node, name, plain, x, signed)
    return impl


def _reinterpret_form(entry, name, op, elements):
    plain = entry["plain_op"]

    def impl(p, node, x, dtype):
        return _reinterpret(p, node, name, plain, x, dtype)
    return impl


def _extend_form(entry, name, op, elements):
    part = entry["lane_fn"]  # "low", "high"

    def impl(p, node, x):
        return _extend(p, node, name, op, x, part)
    return impl


def _load_form(entry, name, op, elements):
    def impl(p, node, ptr, mask=None, lanes=None, stride=1):
        return _vload(p, node, name, ptr, mask, lanes, stride)
    return impl


def _store_form(entry, name, op, elements):
    def impl(p, node, value, ptr, mask=None, stride=1):
        return _vstore(p, node, name, value, ptr, mask, stride)
    return impl


def _gather_form(entry, name, op, elements):
    def impl(p, node, ptr, indices, mask=None):
        return _vload_gather(p, node, name, op, ptr, indices, mask)
    return impl


def _scatter_form(entry, name, op, elements):
    def impl(p, node, value, ptr, indices, mask=None):
        return _vstore_scatter(p, node, name, op, value, ptr, indices, mask)
    return impl


def _dma_copy_form(entry, name, op, elements):
    if entry["lane_fn"] == "async":
        def impl(p, node, dst, src, width, src_stride=None, times=1, dst_stride=None, event=None):
            return _async_dma_copy(p, node, name, op, dst, src, width, src_stride, times,
                                   dst_stride, event)
    else:
        row_op = entry["variant_op"]  # one plain row between DDR and SRAM

        def impl(p, node, dst, src, width, src_stride=None, times=1, dst_stride=None):
            return _dma_copy(p, node, name, op, row_op, dst, src, width, src_stride, times,
                             dst_stride)
    return impl


def _events_form(entry, name, op, elements):
    if entry["lane_fn"] == "alloc":
        def impl(p, node, count):
            return _alloc_events(p, node, name, op, count)
    else:  # "wait", "free"
        def impl(p, node, *events):
            return _each_event(p, node, name, op, events)
    return impl


def _dma_memset_form(entry, name, op, elements):
    def impl(p, node, ptr, value, num):
        return _dma_memset(p, node, name, op, ptr, value, num)
    return impl


def _dma_transpose2d_form(entry, name, op, elements):
    def impl(p, node, dst, src, row, col, dst_stride=None, src_stride=None):
        return _dma_transpose2d(p, node, name, op, dst, src, row, col, dst_stride, src_stride)
    return impl


def _dma_upsample_form(entry, name, op, elements):
    def impl(p, node, dst, src, h_scale, w_scale, c, w, src_c_stride=None, dst_c_stride=None,
             dst_w_stride=None):
        return _dma_upsample(p, node, name, op, dst, src, h_scale, w_scale, c, w, src_c_stride,
                             dst_c_stride, dst_w_stride)
    return impl


def _flush_cache_form(entry, name, op, elements):
    def impl(p, node, invalidate=True):
        return _flush_cache(p, node, name, op, invalidate)
    return impl


def _tec_form(entry, name, op, elements):
    if entry["lane_fn"] == "barrier":
        def impl(p, node):
            return _barrier(p, node, name, op)
    else:  # "local_id", "local_size"
        def impl(p, node):
            return _tec_value(p, node, name, op)
    return impl


def _perf_tick_form(entry, name, op, elements):
    def impl(p, node, cid):
        return _tick(p, node, name, op, cid)
    return impl


_FORMS = {"pairwise": _pairwise_form, "math": _math_form, "bits": _bits_form,
          "classify": _classify_form, "reduce": _reduce_form, "shift": _shift_form,
          "compare": _compare_form, "minmax": _minmax_form, "logic": _logic_form,
          "invert": _invert_form, "arith": _arith_form, "narrow": _narrow_form,
          "widen": _widen_form, "dot": _dot_form, "dot_acc": _dot_acc_form,
          "fma_half": _fma_half_form, "unary": _unary_form, "fma": _fma_form, "clip": _clip_form,
          "select": _select_form, "matrix": _matrix_form, "mask_reduce": _mask_reduce_form,
          "const_mask": _const_mask_form, "tail_mask": _tail_mask_form, "power": _power_form,
          "ceildiv": _ceildiv_form, "concat": _concat_form, "split": _split_form, "zip": _zip_form,
          "reverse": _reverse_form, "replicate": _replicate_form, "slide": _slide_form,
          "rotate": _rotate_form, "lookup": _lookup_form, "compress": _compress_form,
          "broadcast": _broadcast_form, "cast": _cast_form, "same_bits": _same_bits_form,
          "reinterpret": _reinterpret_form, "extend": _extend_form, "load": _load_form,
          "store": _store_form, "gather": _gather_form, "scatter": _scatter_form,
          "dma_copy": _dma_copy_form, "events": _events_form, "dma_memset": _dma_memset_form,
          "dma_transpose2d": _dma_transpose2d_form, "dma_upsample": _dma_upsample_form,
          "flush_cache": _flush_cache_form, "tec": _tec_form, "perf_tick": _perf_tick_form}
# The mask rule each form implements.
_MASKS = {"pairwise": "all", "math": "all", "bits": "undefined", "classify": "false",
          "reduce": "excluded", "shift": "undefined", "compare": "false", "minmax": "undefined",
          "logic": "undefined_masks_false", "invert": "undefined_masks_false", "arith": "undefined",
          "narrow": "undefined", "widen": "undefined", "dot": "excluded", "dot_acc": "excluded",
          "fma_half": "keep", "unary": "undefined", "fma": "keep", "clip": "keep",
          "select": "select", "matrix": "all", "mask_reduce": "operand", "const_mask": "all",
          "tail_mask": "all", "power": "all", "ceildiv": "all", "concat": "all", "split": "all",
          "zip": "all", "reverse": "all", "replicate": "all", "slide": "all", "rotate": "all",
          "lookup": "all", "compress": "packed", "broadcast": "undefined", "cast": "all",
          "same_bits": "all", "reinterpret": "all", "extend": "all", "load": "zero",
          "store": "skip", "gather": "zero", "scatter": "skip", "dma_copy": "all", "events": "all",
          "dma_memset": "all", "dma_transpose2d": "all", "dma_upsample": "all",
          "flush_cache": "all", "tec": "all", "perf_tick": "all"}


def _define(entry):
    name, op, elements = entry["name"], entry["op"], tuple(entry["elements"])
    form = _FORMS.get(entry["form"])
    if form is None:
        raise NotImplementedError(f"intrinsic form {entry['form']!r} of S.{name}")
    if entry["mask"] != _MASKS[entry["form"]]:
        raise NotImplementedError(f"S.{name}: mask rule {entry['mask']!r} of the form "
                                  f"{entry['form']!r}")
    impl = form(entry, name, op, elements)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = entry["doc"]
    intrinsic(impl, name=name)


for _entry in _core.dsl_intrinsics():
    _define(_entry)
