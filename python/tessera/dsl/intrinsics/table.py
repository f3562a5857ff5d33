"""The intrinsics declared in C++'s table (tessera/target/dsl_intrinsics.h): the pairwise S.vaddh,
S.vsubh, S.vmaxh, S.vminh; the math functions S.exp, S.log, S.tanh, S.sin, S.cos, S.rsqrt,
S.sqrt, S.ceil, S.erf, S.exp2; the bit counts S.vcls, S.clz, S.vbrevs, S.vpcnt; the classes
S.isnan, S.isinf, S.isfinite; the reductions S.vrpadd, S.vrpmax, S.vrpmin; the shifts S.vsr,
S.vsl, S.vror. Each entry's argument checks come from its form, element types, mask rule and
keywords; the op registry and PySim's dispatch are derived from the same entry."""

from ... import _core
from .. import types as T
from ._registry import intrinsic
from ._util import call
from .arith import _pairwise, _sum_lanes
from .bitwise import _shift, _unary_count, _unary_scalar
from .compare import _classify, _extreme_lane
from .mathfuncs import _math_arg


def _pairwise_form(entry, name, op, elements):
    def impl(p, node, x, y):
        return _pairwise(p, node, op.split(".", 1)[1], x, y, elements)
    return impl


def _math_form(entry, name, op, elements):
    scalars = tuple(entry["scalar_elements"])

    def impl(p, node, x):
        x = _math_arg(p, node, name, x, elements, scalars)
        # A scalar too: dsl.AlignVectorWidth computes it in lane 0 of a vector ("dsl.scalar").
        return call(p, node, x.dtype, op, [x])
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


_FORMS = {"pairwise": _pairwise_form, "math": _math_form, "bits": _bits_form,
          "classify": _classify_form, "reduce": _reduce_form, "shift": _shift_form}
# The mask rule each form implements.
_MASKS = {"pairwise": "all", "math": "all", "bits": "undefined", "classify": "false",
          "reduce": "excluded", "shift": "undefined"}


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
