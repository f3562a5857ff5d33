"""numpy implementations of the DSL's operators and intrinsics, keyed by IR op name.

Each handler takes (interpreter, call node, evaluated args) and returns the value.
"""

import math

import numpy as np

from ... import _core
from .memory import Pointer, PySimError, PySimIndexError, PySimZeroDivisionError, np_dtype, split_type


def _info(dtype):
    return np.iinfo(np_dtype(dtype))


def _is_float(dtype):
    d = np_dtype(dtype)
    return d.kind == "f" or d.name == "bfloat16"


def _wrap(values, dtype):
    """int64 values wrapped into ``dtype``."""
    return np.asarray(values, dtype=np.int64).astype(np_dtype(dtype))


def _out(values, dtype):
    """A result of ``dtype``: a scalar for 1 lane, else an array."""
    _, lanes = split_type(dtype)
    arr = np.asarray(values)
    if arr.dtype != np_dtype(dtype):
        arr = arr.astype(np_dtype(dtype))
    if lanes == 1:
        return arr.reshape(-1)[0] if arr.ndim else arr[()]
    return arr.reshape(-1)


def _i64(x):
    return np.asarray(x).astype(np.int64)


def _f64(x):
    return np.asarray(x).astype(np.float64)


# ---- casts ------------------------------------------------------------------------------------


def cast(value, src, dst):
    dt = np_dtype(dst)
    if isinstance(value, Pointer):
        return value
    x = np.asarray(value)
    if dt == np.bool_:
        return _out(x != 0, dst)
    if _is_float(dst):
        if x.dtype.kind in "iub":
            x = x.astype(np.float64)
        return _out(x.astype(np.float32).astype(dt) if dt.name == "bfloat16" else x.astype(dt), dst)
    if _is_float(src):
        f = x.astype(np.float64)
        f = np.where(np.isnan(f), 0.0, f)
        f = np.clip(np.trunc(f), -2147483648.0, 2147483647.0)
        return _out(f.astype(np.int64).astype(dt), dst)
    return _out(_i64(x).astype(dt), dst)


# ---- binary nodes -------------------------------------------------------------------------------

BINARY = {k: k for k in ("Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
                         "EQ", "NE", "LT", "LE", "GT", "GE")}

_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
        "GT": np.greater, "GE": np.greater_equal}


def binary(kind, a, b, dtype, error):
    if isinstance(a, Pointer) or isinstance(b, Pointer):
        if kind in ("EQ", "NE"):
            same = (isinstance(a, Pointer) and isinstance(b, Pointer) and a.region is b.region
                    and a.offset == b.offset)
            return np.bool_(same if kind == "EQ" else not same)
        return np.bool_(_CMP[kind](a.offset, b.offset))
    if kind in _CMP:
        return _out(_CMP[kind](a, b), dtype)
    elem, lanes = split_type(dtype)
    if _is_float(dtype):
        x, y = np.asarray(a), np.asarray(b)
        wide = np.float32 if np_dtype(dtype).itemsize < 4 else np_dtype(dtype)
        x, y = x.astype(wide), y.astype(wide)
        if kind == "Add":
            r = x + y
        elif kind == "Sub":
            r = x - y
        elif kind == "Mul":
            r = x * y
        elif kind == "Div":
            r = x / y
        elif kind == "Mod":
            r = np.fmod(x, y)
        elif kind == "FloorDiv":
            r = np.floor(x / y)
        elif kind == "FloorMod":
            r = x - np.floor(x / y) * y
        elif kind == "Min":
            r = np.where(x < y, x, y)
        else:
            r = np.where(x > y, x, y)
        return _out(r, dtype)
    x, y = _i64(a), _i64(b)
    info = _info(dtype)
    if kind == "Add":
        r = x + y
    elif kind == "Sub":
        r = x - y
    elif kind == "Mul":
        r = x * y
    elif kind in ("Div", "Mod", "FloorDiv", "FloorMod"):
        zero = y == 0
        # A scalar quotient by zero is an error; a remainder by zero is 0 (numpy's fmod, as
        # Compass's references compute it), as every lane of a vector division by zero.
        if lanes == 1 and zero.any() and kind in ("Div", "FloorDiv"):
            raise error("integer division by zero", PySimZeroDivisionError)
        safe = np.where(zero, 1, y)
        q = np.abs(x) // np.abs(safe)
        q = np.where((x < 0) != (safe < 0), -q, q)
        if kind in ("FloorDiv", "FloorMod"):
            q = np.where((q * safe != x) & ((x < 0) != (safe < 0)), q - 1, q)
        if kind in ("Div", "FloorDiv"):
            r = np.where(zero, 0, q)
            if lanes > 1:
                r = np.minimum(r, info.max)
        else:
            r = np.where(zero | ((safe == -1) & (info.min < 0) & (lanes > 1)), 0, x - q * safe)
    elif kind == "Min":
        r = np.minimum(x, y)
    else:
        r = np.maximum(x, y)
    return _out(_wrap(r, dtype), dtype)


# ---- calls ------------------------------------------------------------------------------------

CALLS = {}


def handler(*names):
    def register(fn):
        for n in names:
            CALLS[n] = fn
        return fn

    return register


def _lanes_of(dtype):
    return split_type(dtype)[1]


@handler("tir.likely")
def _likely(it, e, a):
    return a[0]


_ADDRESS_BASE = 0x10000  # the first region's address; 4 KiB apart, 64-byte aligned


def _addresses(it):
    """The 32-bit addresses of the launch's regions that kernels turned into integers: shared by
    the TECs of one launch (regions get one when first converted)."""
    table = it.shared.get("<addresses>")
    if table is None:  # dict.setdefault is atomic: every TEC gets the same table
        table = it.shared.setdefault("<addresses>", {"lock": __import__("threading").Lock(),
                                                     "regions": [], "next": _ADDRESS_BASE})
    return table


def _pointer_as_address(it, e, ptr):
    """S.reinterpret(ptr, "uint32"): the address of ``ptr`` on a 32-bit NPU, as PySim lays out
    the regions it converted (the compiled kernel's integers differ; pointers do not)."""
    if ptr.region is None:
        return 0
    table = _addresses(it)
    with table["lock"]:
        for base, region in table["regions"]:
            if region is ptr.region:
                break
        else:
            base = table["next"]
            table["regions"].append((base, ptr.region))
            table["next"] = (base + ptr.region.data.size + 4096 + 63) // 64 * 64
            if table["next"] >= 1 << 32:
                raise it.error(e, "the regions turned into 32-bit addresses need more than 4 GiB",
                               PySimError)
    return base + ptr.offset


def _address_as_pointer(it, e, value):
    """S.reinterpret(addr, "type *"): the pointer at a 32-bit address that _pointer_as_address
    gave (or one past the end of its region)."""
    v = int(value) & 0xFFFFFFFF
    table = _addresses(it)
    with table["lock"]:
        for base, region in table["regions"]:
            if base <= v <= base + region.data.size:
                return Pointer(region, v - base)
    raise it.error(e, f"S.reinterpret of the integer {v:#x} as a pointer: no pointer was turned "
                      f"into that address (S.reinterpret(ptr, \"uint32\")) in this launch",
                   PySimError)


@handler("tir.reinterpret")
def _reinterpret(it, e, a):
    x = a[0]
    if isinstance(x, Pointer):
        return x if e.dtype == "handle" else _out(np.array([_pointer_as_address(it, e, x)])
                                                  .astype(np_dtype(e.dtype)), e.dtype)
    if e.dtype == "handle":
        return _address_as_pointer(it, e, np.asarray(x).reshape(-1)[0])
    arr = np.atleast_1d(np.asarray(x)).copy()
    return _out(arr.view(np_dtype(e.dtype)), e.dtype)


def _bitwise(fn):
    def impl(it, e, a):
        if e.dtype.startswith("bool"):
            return _out(fn(np.asarray(a[0], bool), np.asarray(a[1], bool)), e.dtype)
        return _out(fn(np.asarray(a[0]).astype(np_dtype(e.dtype)), np.asarray(a[1]).astype(np_dtype(e.dtype))), e.dtype)
    return impl


CALLS["tir.bitwise_and"] = _bitwise(np.bitwise_and)
CALLS["tir.bitwise_or"] = _bitwise(np.bitwise_or)
CALLS["tir.bitwise_xor"] = _bitwise(np.bitwise_xor)


@handler("tir.bitwise_not")
def _not(it, e, a):
    if e.dtype.startswith("bool"):
        return _out(np.logical_not(a[0]), e.dtype)
    return _out(np.invert(np.asarray(a[0]).astype(np_dtype(e.dtype))), e.dtype)


def _counts(s, dtype):
    """Shift counts read as unsigned."""
    bits = np_dtype(dtype).itemsize * 8
    return _i64(s) & ((1 << bits) - 1)


@handler("tir.shift_left")
def _shl(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    c = _counts(a[1], e.dtype)
    x = _i64(a[0])
    return _out(_wrap(np.where(c >= bits, 0, x << np.minimum(c, 63)), e.dtype), e.dtype)


@handler("tir.shift_right")
def _shr(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    c = _counts(a[1], e.dtype)
    x = _i64(a[0])
    r = np.where(c >= bits, np.where(x < 0, -1, 0), x >> np.minimum(c, bits - 1))
    return _out(_wrap(r, e.dtype), e.dtype)


def _float_fn(fn):
    def impl(it, e, a):
        x = np.asarray(a[0]).astype(np.float32)
        return _out(fn(x).astype(np.float32), e.dtype)
    return impl


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _rsqrt(x):
    return np.float32(1.0) / np.sqrt(x)


_MATH = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
         "sqrt": np.sqrt, "rsqrt": _rsqrt, "floor": np.floor, "ceil": np.ceil,
         "erf": lambda x: _erf(x).astype(np.float32), "exp2": np.exp2, "fabs": np.abs,
         "nearbyint": np.rint, "rint": np.rint}
# The TIR math ops; S.floor's tir.floor comes from its table entry (below).
_TABLE_TIR_OPS = {d["plain_op"] for d in _core.dsl_intrinsics() if not d["op"]}
for _n, _f in _MATH.items():
    if f"tir.{_n}" not in _TABLE_TIR_OPS:
        CALLS[f"tir.{_n}"] = _float_fn(_f)


@handler("tir.pow")
def _pow(it, e, a):
    return _out(np.power(np.asarray(a[0], np.float32), np.asarray(a[1], np.float32)), e.dtype)


def _classify(fn):
    def impl(it, e, a):
        r = fn(np.asarray(a[0]).astype(np.float32))
        if len(a) > 1:
            r = r & np.asarray(a[1], bool)
        return _out(r, e.dtype)
    return impl


_CLASSES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
for _n, _f in _CLASSES.items():
    CALLS[f"tir.{_n}"] = _classify(_f)


def _clz_values(x, dtype):
    bits = np_dtype(dtype).itemsize * 8
    u = _i64(x) & ((1 << bits) - 1)
    out = np.full(u.shape, bits, np.int64)
    for b in range(bits - 1, -1, -1):
        hit = ((u >> b) & 1 == 1) & (out == bits)
        out = np.where(hit, bits - 1 - b, out)
    return out


@handler("tir.clz")
def _clz(it, e, a):
    return _out(_wrap(_clz_values(a[0], e.dtype), e.dtype), e.dtype)


def _cls(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    u = _i64(a[0]) & ((1 << bits) - 1)
    neg = (u >> (bits - 1)) & 1 == 1
    u = np.where(neg, ~u & ((1 << bits) - 1), u)
    return _out(_wrap(_clz_values(u, e.dtype) - 1, e.dtype), e.dtype)


@handler("tir.popcount")
def _pcnt(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    u = _i64(a[0]) & ((1 << bits) - 1)
    return _out(_wrap(sum((u >> b) & 1 for b in range(bits)), e.dtype), e.dtype)


def _brevs(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    u = _i64(a[0]) & ((1 << bits) - 1)
    r = sum(((u >> b) & 1) << (bits - 1 - b) for b in range(bits))
    return _out(_wrap(r, e.dtype), e.dtype)


def _ror(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    full = (1 << bits) - 1
    u = _i64(a[0]) & full
    c = _counts(a[1], e.dtype) % bits
    r = ((u >> c) | (u << (bits - c))) & full
    return _out(_wrap(r, e.dtype), e.dtype)


def _clamp(r, dtype):
    info = _info(dtype)
    return np.clip(r, info.min, info.max).astype(np_dtype(dtype))


def _saturating(fn):
    def impl(it, e, a):
        return _clamp(fn(_i64(a[0]), _i64(a[1])), e.dtype)
    return impl


def _round_shift(x, c, bits):
    """x >> c rounding to nearest, ties to even (c read as unsigned, capped)."""
    c = np.minimum(c, bits + 1)
    q = x >> np.maximum(c, 0)
    rem = x - (q << c)
    half = np.where(c > 0, 1 << np.maximum(c - 1, 0), 0)
    up = (c > 0) & ((rem > half) | ((rem == half) & (q & 1 == 1)))
    return np.where(c == 0, x, q + up)


def _asrr(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    return _out(_wrap(_round_shift(_i64(a[0]), _counts(a[1], e.dtype), bits), e.dtype), e.dtype)


def _lsls(it, e, a):
    bits = np_dtype(e.dtype).itemsize * 8
    info = _info(e.dtype)
    x, c = _i64(a[0]), _counts(a[1], e.dtype)
    big = np.where(x < 0, info.min, info.max)
    r = np.where(c >= bits, big, np.clip(x << np.minimum(c, bits - 1), info.min, info.max))
    r = np.where(x == 0, 0, r)
    return _out(r.astype(np.int64), e.dtype)


def _abs(it, e, a):
    if _is_float(e.dtype):
        return _out(np.abs(np.asarray(a[0])), e.dtype)
    r = np.abs(_i64(a[0]))
    if bool(a[1]):
        return _clamp(r, e.dtype)
    return _out(_wrap(r, e.dtype), e.dtype)


_PATTERN = np.random.default_rng(0x7E55E8A).integers(0, 256, 64, dtype=np.uint8)


@handler("dsl.cast_no_zip")
def _cast_no_zip(it, e, a):
    # S.tag "no_zip" changes only the compiled lane order: PySim converts in order, as Compass's.
    return cast(a[0], e.args[0].dtype, e.dtype)


@handler("dsl.undef_inactive")
def _undef(it, e, a):
    x, m = np.asarray(a[0]), np.asarray(a[1], bool)
    # The garbage of inactive lanes: the pattern repeated over vectors of any width.
    fill = np.resize(_PATTERN, x.nbytes).view(x.dtype)[:x.size].reshape(x.shape)
    return np.where(m, x, fill).astype(x.dtype)


def _perm(it, e, a):
    x, y = np.asarray(a[0]), np.asarray(a[1])
    n = x.size
    table = np.concatenate([x, y, np.zeros(1, x.dtype)])
    idx = _i64(a[2])
    idx = np.where((idx < 0) | (idx >= 2 * n), 2 * n, idx)
    return table[idx].astype(x.dtype)


def _compc(it, e, a):
    x, y, m = np.asarray(a[0]), np.asarray(a[1]), np.asarray(a[2], bool)
    packed = x[m]
    return np.concatenate([packed, y[:x.size - packed.size]]).astype(x.dtype)


def _compt(it, e, a):
    x, m = np.asarray(a[0]), np.asarray(a[1], bool)
    return _compc(it, e, [x, np.zeros_like(x), m])


def _rpadd(it, e, a):
    # A multiple-width x sums each native part, then adds the part sums in order (as
    # dsl.AlignVectorWidth splits it).
    x, m = np.asarray(a[0]), np.asarray(a[1], bool)
    out = np.zeros(_lanes_of(e.dtype), np_dtype(e.dtype))
    part = 256 // (x.dtype.itemsize * 8)
    if _is_float(e.dtype):
        # Each part in the order of the NPU's adder tree, as Compass gives it (its PySim:
        # numpy's pairwise sum): inactive lanes 0; 16 lanes added in pairs i, i + 8 first; the 8
        # values t then as ((t0 + t1) + (t2 + t3)) + ((t4 + t5) + (t6 + t7)), added to 0.
        total = None
        for j in range(0, x.size, part):
            t = np.where(m[j:j + part], x[j:j + part].astype(np.float32), np.float32(0))
            if t.size == 16:
                t = t[:8] + t[8:]
            t = t[0::2] + t[1::2]
            t = t[0::2] + t[1::2]
            acc = np.float32(0) + (t[0] + t[1])
            total = acc if total is None else np.float32(total + acc)
        out[0] = total
    else:
        out[0] = _wrap(_i64(x[m]).sum(), e.dtype)
    return out


def _reduce_ext(better):
    def impl(it, e, a):
        x, m, with_index = np.asarray(a[0]), np.asarray(a[1], bool), bool(a[2])
        out = np.zeros_like(x)
        vals = x.astype(np.float64) if _is_float(e.dtype) else _i64(x)
        best = -1
        for i in range(x.size):
            if m[i] and (best < 0 or better(vals[i], vals[best])):
                best = i
        if best >= 0:
            out[0] = x[best]
        if with_index:
            # Float vectors hold the index's integer bits, as Compass (5 -> the float of bits 5).
            index = np.array([max(best, 0)], dtype=f"uint{x.dtype.itemsize * 8}")
            out[1:2] = index.view(x.dtype)
        return out
    return impl




def _widen(high):
    def impl(it, e, a):
        x, y = _i64(a[0]), _i64(a[1])
        n = x.size
        bits = np.asarray(a[0]).dtype.itemsize * 8
        part = slice(n // 2, n) if high else slice(0, n // 2)
        if bits == 32:
            half = slice(4, 8) if high else slice(0, 4)
            prod = [int(p) for p in (x[half] * y[half])] if np.asarray(a[0]).dtype == np.int32 else \
                [int(p) for p in (x[half].astype(object) * y[half].astype(object))]
            words = []
            for p in prod:
                u = p & 0xFFFFFFFFFFFFFFFF
                words += [u & 0xFFFFFFFF, u >> 32]
            return np.array(words, np.uint64).astype(np.uint32).view(np_dtype(e.dtype))
        return _out(_wrap(x[part] * y[part], e.dtype), e.dtype)
    return impl




def _pairwise(fn, saturate):
    def impl(it, e, a):
        x, y = np.asarray(a[0]), np.asarray(a[1])
        if _is_float(e.dtype):
            xs, ys = x.astype(np.float32), y.astype(np.float32)
        else:
            xs, ys = _i64(x), _i64(y)
        r = np.concatenate([fn(xs[0::2], xs[1::2]), fn(ys[0::2], ys[1::2])])
        if _is_float(e.dtype):
            return _out(r, e.dtype)
        return _clamp(r, e.dtype) if saturate else _out(_wrap(r, e.dtype), e.dtype)
    return impl


def _dot(group, saturate):
    def impl(it, e, a):
        if _is_float(str(np.asarray(a[0]).dtype)) or np.asarray(a[0]).dtype.name == "bfloat16":
            # As Compass's PySim: the products summed in float64, rounded to float32 once, in
            # the even lanes (the compiled bf16 form models the NPU's adder instead, see
            # intrin.h): float dsl.vqdpa of a zero accumulator.
            return _float_qdpa([np.zeros(np.asarray(a[0]).size // 2, np.float32), *a])
        x, y, m = _i64(a[0]), _i64(a[1]), np.asarray(a[2], bool)
        p = np.where(m, x * y, 0).reshape(-1, group).sum(axis=1)
        return _clamp(p, e.dtype) if saturate else _out(_wrap(p, e.dtype), e.dtype)
    return impl




def _vdpa(it, e, a):
    if _is_float(str(np.asarray(a[0]).dtype)):
        return _float_qdpa(a)
    acc, x, y, m = _i64(a[0]), _i64(a[1]), _i64(a[2]), np.asarray(a[3], bool)
    return _clamp(acc + np.where(m, x * y, 0).reshape(-1, 2).sum(axis=1), e.dtype)


def _float_qdpa(a):
    """Float dsl.vqdpa, as Compass computes it: each even lane of the float32 acc plus the active
    products of its 4 lanes, added one by one in float64 (the float16/bfloat16 products are
    exact there) and rounded to float32 once; odd lanes keep acc."""
    total = np.asarray(a[0]).astype(np.float64)
    x, y = np.asarray(a[1]).astype(np.float64), np.asarray(a[2]).astype(np.float64)
    m = np.asarray(a[3], bool)
    prod, m = (x * y).reshape(-1, 4), m.reshape(-1, 4)
    even = total[0::2]
    for k in range(4):  # an inactive lane adds nothing (not even 0.0: acc -0.0 stays -0.0)
        even = np.where(m[:, k], even + prod[:, k], even)
    total[0::2] = even
    return total.astype(np.float32)


def _fma(it, e, a):
    """dsl.vfma: acc + x * y rounded to float32 once, as a fused multiply-add (the compiled
    kernel's fmaf). The product of two float32 is exact in float64 and the float64 sum's error
    exact by TwoSum; rounding the sum to float32 is then right unless it lies exactly halfway
    between two float32 and its error is not zero: the error then picks the side."""
    acc, x, y = (np.asarray(v).astype(np.float64) for v in a[:3])
    prod = x * y
    with np.errstate(all="ignore"):
        total = acc + prod
        back = total - acc
        err = (acc - (total - back)) + (prod - back)
        r = total.astype(np.float32)
        side = np.nextafter(r, np.where(total > r, np.float32(np.inf), np.float32(-np.inf)))
        halfway = (r.astype(np.float64) + side.astype(np.float64)) / 2 == total
        toward = np.isfinite(total) & halfway & (err != 0) & ((err > 0) == (side > r))
    return _out(np.where(toward, side, r).astype(np.float32), e.dtype)


def _fma_half(odd):
    def impl(it, e, a):
        acc = np.asarray(a[0], np.float32)
        x, y = np.asarray(a[1]).astype(np.float32), np.asarray(a[2]).astype(np.float32)
        m = np.asarray(a[3], bool)
        prod = x[int(odd)::2] * y[int(odd)::2]
        return np.where(m, acc + prod, acc).astype(np.float32)
    return impl




def _nsr(it, e, a):
    x, m = _i64(a[0]), np.asarray(a[2], bool)
    sat, rnd, signed = bool(a[3]), bool(a[4]), bool(a[5])
    src_bits = np.asarray(a[0]).dtype.itemsize * 8
    c = _counts(a[1], str(np.asarray(a[0]).dtype))
    q = _round_shift(x, c, src_bits) if rnd else np.where(
        c >= src_bits, np.where(x < 0, -1, 0), x >> np.minimum(c, src_bits - 1))
    rtype = e.dtype
    rbits = np_dtype(rtype).itemsize * 8
    if sat:
        lo, hi = (-(1 << (rbits - 1)), (1 << (rbits - 1)) - 1) if signed else (0, (1 << rbits) - 1)
        q = np.clip(q, lo, hi)
    n = _lanes_of(rtype)
    out = np.zeros(n, np.int64)
    step = n // x.size
    out[::step] = np.where(m, q, 0)
    return _out(_wrap(out, rtype), rtype)


def _matrix(accumulate):
    """The matrix form (dsl.vmml, dsl.vmma): a 4x4 product written (added) through a pointer."""
    def impl(it, e, a):
        ptr = a[0]
        x = np.asarray(a[1]).astype(np.float32).reshape(4, 4)
        y = np.asarray(a[2]).astype(np.float32).reshape(4, 4)  # column-major: row j = column j
        # The compiled kernel's order: the accumulator (or 0) first, then the products by k, each
        # product and sum rounded to float32.
        prod = it.access_ptr(e, ptr, "float32", np.arange(16)).reshape(4, 4).astype(np.float32) \
            if accumulate else np.zeros((4, 4), np.float32)
        for k in range(4):
            prod = prod + x[:, k:k + 1] * y[:, k][None, :]
        it.access_ptr(e, ptr, "float32", np.arange(16), value=prod.reshape(-1).astype(np.float32))
    return impl


def _const_mask(it, e, a):
    return np.array([bool(v) for v in a], bool)


def _tail_mask(it, e, a):
    return np.arange(_lanes_of(e.dtype)) < int(a[0])


def _vcvt(it, e, a):
    x = np.asarray(a[0])
    first, stride = int(a[1]), int(a[2])
    n = _lanes_of(e.dtype)
    src = str(e.args[0].dtype)
    out = np.zeros(n, np_dtype(e.dtype))
    idx = [first + k * stride for k in range(n)]
    ok = [i for i in range(n) if idx[i] < x.size]
    if ok:
        out[ok] = cast(x[[idx[i] for i in ok]], src.split("x")[0] if "x" in src else src, e.dtype)
    return out


def _barrier(it, e, a):
    if it.barrier is None:
        raise it.error(e, "S.barrier() under TESSERA_PYSIM_SINGLE_THREAD=1: the TECs run one after "
                          "another, so a barrier would never be reached")
    it.barrier.wait()


# The tec form: the interpreter runs one thread per TEC (it.tec, it.barrier).
_TEC = {"local_id": lambda it, e, a: np.int32(it.tec),
        "local_size": lambda it, e, a: np.int32(4), "barrier": _barrier}


# The intrinsics of the declarative table (tessera/target/dsl_intrinsics.h), by form and lane
# function.
LANE_FNS = {"add": np.add, "sub": np.subtract, "max": np.maximum, "min": np.minimum}
_REDUCE = {"add": _rpadd, "max": _reduce_ext(lambda a, b: a > b),
           "min": _reduce_ext(lambda a, b: a < b)}
_SHIFTS = {"asr_round": _asrr, "lsl_saturate": _lsls, "ror": _ror}
_BITS = {"clz": _clz, "cls": _cls, "popcount": _pcnt, "brevs": _brevs}
_FORMS = {"pairwise": lambda d: _pairwise(LANE_FNS[d["lane_fn"]], d["saturate"]),
          "math": lambda d: _float_fn(_MATH[d["lane_fn"]]),
          "bits": lambda d: _BITS[d["lane_fn"]],
          "classify": lambda d: _classify(_CLASSES[d["lane_fn"]]),
          "reduce": lambda d: _REDUCE[d["lane_fn"]],
          "shift": lambda d: _SHIFTS[d["lane_fn"]],
          "arith": lambda d: _saturating(_SATURATING[d["lane_fn"]]),
          "narrow": lambda d: _nsr,
          "widen": lambda d: _widen(d["lane_fn"] == "mul_high"),
          "dot": lambda d: _dot(_DOT_GROUPS[d["lane_fn"]], d["saturate"]),
          "dot_acc": lambda d: _vdpa,
          "fma_half": lambda d: _fma_half(d["lane_fn"] == "fma_odd"),
          "unary": lambda d: {"abs": _abs, "rint": _float_fn(np.rint)}[d["lane_fn"]],
          "fma": lambda d: _fma,
          "matrix": lambda d: _matrix(d["lane_fn"] == "matmul_acc"),
          "mask_reduce": lambda d: _MASK_REDUCE[d["lane_fn"]],
          "const_mask": lambda d: _const_mask, "tail_mask": lambda d: _tail_mask,
          "power": lambda d: _pow, "rotate": lambda d: _perm, "lookup": lambda d: _perm,
          "compress": lambda d: {"zeros": _compt, "concat": _compc}[d["lane_fn"]],
          "cast": lambda d: _vcvt, "extend": lambda d: _vcvt, "gather": lambda d: _gather,
          "scatter": lambda d: _scatter, "dma_copy": lambda d: _dma_copy,
          "events": lambda d: _alloc_event if d["lane_fn"] == "alloc" else _wait_event,
          "dma_memset": lambda d: _dma_memset, "dma_transpose2d": lambda d: _dma_transpose,
          "dma_upsample": lambda d: _dma_upsample, "flush_cache": lambda d: _noop,
          "tec": lambda d: _TEC[d["lane_fn"]], "perf_tick": lambda d: _noop}
_MASK_REDUCE = {"all": lambda it, e, a: np.bool_(np.all(a[0])),
                "any": lambda it, e, a: np.bool_(np.any(a[0]))}
_DOT_GROUPS = {"dot2": 2, "dot4": 4}
_SATURATING = {"add_saturate": np.add, "sub_saturate": np.subtract}


# ---- masks, lanes, conversions --------------------------------------------------------------


@handler("dsl.vmake")
def _vmake(it, e, a):
    return np.array(a).astype(np_dtype(e.dtype))


@handler("dsl.get_lane")
def _get_lane(it, e, a):
    return np.asarray(a[0])[int(a[1])]


@handler("dsl.vreplic")
def _vreplic(it, e, a):
    x, index = np.asarray(a[0]), int(a[1])
    if not 0 <= index < x.size:
        raise it.error(e, f"S.vreplic: the lane index {index} is not a lane of the {x.size}-lane "
                          f"vector (expected 0 to {x.size - 1})", PySimIndexError)
    return np.full(x.size, x[index], dtype=x.dtype)


@handler("dsl.set_lane")
def _set_lane(it, e, a):
    v = np.array(a[0], copy=True)
    v[int(a[1])] = a[2]
    return v


@handler("dsl.vcvt_into")
def _vcvt_into(it, e, a):
    acc, x, first = np.array(a[0], copy=True), np.asarray(a[1]), int(a[2])
    src = str(e.args[1].dtype)
    conv = np.atleast_1d(cast(x, src, str(e.dtype).split("x")[0] + f"x{x.size}"))
    end = min(acc.size, first + conv.size)
    if end > first:
        acc[first:end] = conv[:end - first]
    return acc


@handler("dsl.nullptr")
def _nullptr(it, e, a):
    return Pointer(None, 0)


@handler("dsl.is_nullptr")
def _is_null(it, e, a):
    return np.bool_(not isinstance(a[0], Pointer) or a[0].region is None)


# ---- memory: gathers, matrices, DMA ------------------------------------------------------------


def pointer_element(node):
    """The element type a pointer expression points to."""
    name = type(node).__name__
    if name in ("Var", "SizeVar"):
        return str(node.pointer_element)
    if name == "Call" and node.op_name == "tir.address_of":
        return str(node.args[0].buffer.dtype)
    if name == "Call" and node.op_name == "tir.reinterpret":
        return pointer_element(node.args[0])
    raise TypeError(f"not a pointer expression: {name}")


def _scalar_elem(node):
    return pointer_element(node).split("x")[0] if not pointer_element(node).startswith("bool") else "bool"


def _gather(it, e, a):
    ptr, idx, m = a[0], _i64(a[1]), np.asarray(a[2], bool)
    out = it.access_ptr(e, ptr, _scalar_elem(e.args[0]), idx, predicate=m)
    return np.where(m, out, 0).astype(np_dtype(e.dtype))


def _scatter(it, e, a):
    v, ptr, idx, m = np.asarray(a[0]), a[1], _i64(a[2]), np.asarray(a[3], bool)
    for i in range(v.size):  # in lane order: a later lane wins on a repeated index
        if m[i]:
            it.access_ptr(e, ptr, _scalar_elem(e.args[1]), [idx[i]], value=v[i:i + 1])


_PRINTF_SPEC = __import__("re").compile(r"%([-+ #0]*)(\d*)(?:\.(\d*))?(?:hh|hl|h|l)*([diouxXfFeEgGcsp%])")


def _printf_field(body, lead, width, flags):
    """``body`` (its first ``lead`` characters a sign or prefix) padded to ``width``."""
    pad = max(0, width - len(body))
    if "-" in flags:
        return body + " " * pad
    if "0" in flags:
        return body[:lead] + "0" * pad + body[lead:]
    return " " * pad + body


def _printf_conversion(flags, width, precision, conv, v):
    """One conversion as the NPU's printf prints it (the rules of tessera/dsl/printf.h)."""
    sign = "+" if "+" in flags else " " if " " in flags else ""
    lead = 0
    if isinstance(v, Pointer):
        return "%p"  # PySim has no addresses: the conversion is printed as written
    v = v.item() if hasattr(v, "item") else v
    if conv in "di":
        body = ("%" + sign + "d") % int(v)
        lead = int(v < 0 or sign != "")
    elif conv == "u":
        body = "%d" % (int(v) & 0xFFFFFFFF)
    elif conv == "o":
        body, lead = "0%o" % (int(v) & 0xFFFFFFFF), 1
    elif conv in "xX":
        body, lead = ("0x%" + conv) % (int(v) & 0xFFFFFFFF), 2
    elif conv == "c":
        body, flags = chr(int(v) & 0xFF), flags.replace("0", "")
    elif conv in "fF":
        digits = 6 if precision is None else precision
        body = ("%" + sign + ".%d" % (digits + 6) + conv) % float(v)
        if body[-1].isdigit():
            body = body[:-6 - (digits == 0)]  # truncated toward zero, not rounded
        lead = int(body[:1] in "-+ ")
    else:  # e E g G
        body = ("%" + sign + ".%d" % (6 if precision is None else precision) + conv) % float(v)
        lead = int(body[:1] in "-+ ")
    return _printf_field(body, lead, width, flags)


@handler("dsl.printf")
def _printf(it, e, a):
    """The NPU's printf (tessera/dsl/printf.h gives the rules; the parser normalised the
    arguments): %o/%x/%X with their 0/0x prefix, %f truncated to its decimals. One call prints at
    once, so the lines of different TECs do not mix."""
    values = list(a[1:])
    parts, pos, k = [], 0, 0
    fmt = a[0]
    for m in _PRINTF_SPEC.finditer(fmt):
        parts.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, precision, conv = m.groups()
        if conv == "%":
            parts.append("%")
            continue
        v = values[k]
        k += 1
        parts.append(_printf_conversion(flags, int(width or 0),
                                        None if precision is None else int(precision or 0), conv, v))
    parts.append(fmt[pos:])
    print("".join(parts), end="", flush=True)


def _noop(it, e, a):
    return None


def _copy(it, e, dst, src, dnode, snode, width, src_stride, times, dst_stride):
    elem = _scalar_elem(snode)
    # Rows that follow each other in both places, between different buffers: one copy of all
    # of them (the same elements as row by row; a DMA of 16M elements in 600k rows took minutes).
    if (times > 1 and width == src_stride == dst_stride and isinstance(src, Pointer)
            and isinstance(dst, Pointer) and src.region is not dst.region):
        n = np.arange(width * times)
        it.access_ptr(e, dst, _scalar_elem(dnode), n, value=it.access_ptr(e, src, elem, n))
        return
    for t in range(times):
        row = it.access_ptr(e, src, elem, np.arange(width) + t * src_stride)
        it.access_ptr(e, dst, _scalar_elem(dnode), np.arange(width) + t * dst_stride, value=row)


def _dma1d(it, e, a):
    ddr, sram, count, direction = a
    if int(direction) == 1:
        _copy(it, e, sram, ddr, e.args[1], e.args[0], int(count), 0, 1, 0)
    else:
        _copy(it, e, ddr, sram, e.args[0], e.args[1], int(count), 0, 1, 0)


def _dma_copy(it, e, a):
    dst, src, width, src_stride, times, dst_stride = a[:6]
    _copy(it, e, dst, src, e.args[0], e.args[1], int(width), int(src_stride), int(times),
          int(dst_stride))


def _dma_memset(it, e, a):
    ptr, value, num = a
    elem = _scalar_elem(e.args[0])
    it.access_ptr(e, ptr, elem, np.arange(int(num)),
                  value=np.full(int(num), value, dtype=np_dtype(elem)))


def _dma_transpose(it, e, a):
    dst, src, row, col, dst_stride, src_stride = [a[0], a[1]] + [int(v) for v in a[2:]]
    elem = _scalar_elem(e.args[1])
    for i in range(row):
        vals = it.access_ptr(e, src, elem, np.arange(col) + i * src_stride)
        it.access_ptr(e, dst, _scalar_elem(e.args[0]), np.arange(col) * dst_stride + i, value=vals)


def _dma_upsample(it, e, a):
    dst, src = a[0], a[1]
    h_scale, w_scale, c, w, src_c_stride, dst_c_stride, dst_w_stride = [int(v) for v in a[2:]]
    elem = _scalar_elem(e.args[1])
    for x in range(w):
        vals = it.access_ptr(e, src, elem, np.arange(c) + x * src_c_stride)
        for hs in range(h_scale):
            for ws in range(w_scale):
                base = (hs * dst_w_stride + x * w_scale + ws) * dst_c_stride
                it.access_ptr(e, dst, _scalar_elem(e.args[0]), np.arange(c) + base, value=vals)


def _alloc_event(it, e, a):
    it.events = getattr(it, "events", 0) + 1
    return np.int32(it.events - 1)


def _wait_event(it, e, a):
    return None


# The table's ops, dispatched by form (below every handler a form names). Entries without an
# op build TIR only (their plain_op): a TIR op of CALLS, a node of BINARY or the interpreter's;
# the TIR op of a math entry (S.floor: tir.floor) is dispatched by its form, as `op` would be.
for _d in _core.dsl_intrinsics():
    if _d["op"]:
        CALLS[_d["op"]] = _FORMS[_d["form"]](_d)
    elif _d["form"] == "math":
        CALLS[_d["plain_op"]] = _FORMS["math"](_d)
    if _d["variant_op"]:  # narrow's to_h=True: the lane function of `op`; dma_copy's one row
        CALLS[_d["variant_op"]] = {"narrow": CALLS[_d["op"]], "dma_copy": _dma1d}[_d["form"]]
