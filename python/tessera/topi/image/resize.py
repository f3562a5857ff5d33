"""topi.image.resize2d: an image resized by nearest-neighbour or bilinear interpolation, with
TVM's coordinate transformation and rounding modes (the same index formulas, so the functions
create_prim_func makes equal TVM's)."""

from ... import _core
from ...error import TesseraValueError
from ...te import compute
from ...tir import expr_ops
from .. import tag

_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn")
_ROUNDING = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _te():
    from ... import te

    return te


def _const_int(e):
    if isinstance(e, int):
        return e
    return e.value if isinstance(e, _core.IntImm) else None


def _int_ratio(image, target):
    """Whether target / image is a whole number small enough that x // (target // image) finds
    the nearest source pixel (asymmetric nearest-neighbour resizing): TVM's int-division path."""
    t, i = _const_int(target), _const_int(image)
    if t is None or i is None or i == 0 or t % i:
        return False
    return t // i <= 1 / (1e-5 * i + 1e-5)


def _source_coordinate(x, image, target, mode, int_div):
    te = _te()
    if int_div:
        return te.div(x, te.div(target, image))
    scale = te.div(image.astype("float32"), target.astype("float32"))
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "align_corners":
        return (image - 1).astype("float32") / (target - 1) * x
    if mode == "asymmetric":
        return scale * x
    if mode == "pytorch_half_pixel":
        return te.if_then_else(target > 1, (x + 0.5) * scale - 0.5, 0.0)
    return (x + 0.5) * scale  # tf_half_pixel_for_nn


def _nearest(c, rounding, int_div):
    te = _te()
    if int_div:
        return c.astype("int32")
    if rounding == "round":
        return te.round(c).astype("int32")
    if rounding == "round_prefer_floor":
        return te.ceil(c - 0.5).astype("int32")
    if rounding == "round_prefer_ceil":
        return te.floor(c + 0.5).astype("int32")
    if rounding == "floor":
        return te.floor(c + 1e-5).astype("int32")
    return te.ceil(c - 1e-5).astype("int32")


def resize2d(data, roi, size, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="",
             bicubic_alpha=-0.5, bicubic_exclude=0, extrapolation_value=0.0, out_dtype=None,
             output_shape=None):
    """``data`` (NCHW or NHWC) resized to ``size = (height, width)`` (ints or expressions).

    ``method`` is "nearest_neighbor" or "linear"; ``coordinate_transformation_mode`` one of
    half_pixel, align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn;
    ``rounding_method`` (nearest only) one of round, round_prefer_floor, round_prefer_ceil,
    floor, ceil (default: round for align_corners, else floor). Source coordinates are clamped
    to the image. ``roi`` is unused by these modes.
    """
    te = _te()
    method = method.lower()
    if method not in ("nearest_neighbor", "linear"):
        raise TesseraValueError(f"topi.image.resize2d: method '{method}' is not supported "
                                "(nearest_neighbor and linear are)")
    mode = coordinate_transformation_mode
    if mode not in _MODES:
        raise TesseraValueError(f"topi.image.resize2d: coordinate_transformation_mode '{mode}' is "
                                f"not supported (one of {', '.join(_MODES)})")
    if layout == "NCHW":
        n_, c_, in_h, in_w = data.shape
    elif layout == "NHWC":
        n_, in_h, in_w, c_ = data.shape
    else:
        raise TesseraValueError(f"topi.image.resize2d: layout '{layout}' is not supported (NCHW or NHWC)")
    size = [expr_ops.const(s, "int32") if isinstance(s, int) else s for s in size]
    if len(size) != 2:
        raise TesseraValueError(f"topi.image.resize2d: size must be (height, width), got {size!r}")
    if output_shape is None:
        output_shape = [n_, c_, size[0], size[1]] if layout == "NCHW" else [n_, size[0], size[1], c_]
    if method == "nearest_neighbor" and not rounding_method:
        rounding_method = "round" if mode == "align_corners" else "floor"
    if method == "nearest_neighbor" and rounding_method not in _ROUNDING:
        raise TesseraValueError(f"topi.image.resize2d: rounding_method '{rounding_method}' is not "
                                f"supported (one of {', '.join(_ROUNDING)})")
    int_div_h = int_div_w = False
    if method == "nearest_neighbor" and mode == "asymmetric":
        int_div_h, int_div_w = _int_ratio(in_h, size[0]), _int_ratio(in_w, size[1])

    def pixel(n, c, y, x):
        y = te.max(te.min(y, in_h - 1), 0)
        x = te.max(te.min(x, in_w - 1), 0)
        value = data(n, c, y, x) if layout == "NCHW" else data(n, y, x, c)
        return value.astype("float32")

    def fcompute(*indices):
        if layout == "NCHW":
            n, c, y, x = indices
        else:
            n, y, x, c = indices
        in_y = _source_coordinate(y, in_h, size[0], mode, int_div_h)
        in_x = _source_coordinate(x, in_w, size[1], mode, int_div_w)
        if method == "nearest_neighbor":
            value = pixel(n, c, _nearest(in_y, rounding_method, int_div_h),
                          _nearest(in_x, rounding_method, int_div_w))
        else:
            y0, x0 = te.floor(in_y).astype("int32"), te.floor(in_x).astype("int32")
            ty, tx = in_y - y0, in_x - x0

            def lerp(a, b, t):
                return a * (1.0 - t) + b * t

            top = lerp(pixel(n, c, y0, x0), pixel(n, c, y0, x0 + 1), tx)
            bottom = lerp(pixel(n, c, y0 + 1, x0), pixel(n, c, y0 + 1, x0 + 1), tx)
            value = lerp(top, bottom, ty)
        return value.astype(out_dtype or data.dtype)

    return compute(output_shape, fcompute, name="resize", tag=tag.INJECTIVE)
