"""TE workloads as TVM's ``meta_schedule.testing.te_workload`` defines them (same tensors, names
and block names), for running TVM's schedule tests unchanged; each returns the input and output
tensors for ``te.create_prim_func``.

>>> func = te.create_prim_func(matmul(128, 128, 128))
"""

from .... import te, tir, topi


def matmul(n, m, k, in_dtype="float32", out_dtype="float32"):
    """``C[i, j] = sum_k A[i, k] * B[k, j]`` with ``A: (n, k)``, ``B: (k, m)``."""
    a = te.placeholder((n, k), name="A", dtype=in_dtype)
    b = te.placeholder((k, m), name="B", dtype=in_dtype)
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r].astype(out_dtype) * b[r, j].astype(out_dtype), axis=[r]),
                   name="C")
    return (a, b, c)


def matmul_relu(n, m, k, in_dtype="float32", out_dtype="float32"):
    """:func:`matmul` followed by ReLU (``topi.nn.relu``)."""
    a, b, c = matmul(n, m, k, in_dtype, out_dtype)
    return (a, b, topi.nn.relu(c))


def batch_matmul_nkkm(B, N, M, K, in_dtype="float32", out_dtype="float32"):  # noqa: N803 - TVM's names
    """``Z[b, i, j] = sum_k X[b, i, k] * Y[b, k, j]``."""
    x = te.placeholder((B, N, K), name="X", dtype=in_dtype)
    y = te.placeholder((B, K, M), name="Y", dtype=in_dtype)
    r = te.reduce_axis((0, K), name="k")
    z = te.compute((B, N, M),
                   lambda b, i, j: te.sum(x[b][i][r].astype(out_dtype) * y[b][r][j].astype(out_dtype), axis=[r]),
                   name="Z")
    return (x, y, z)


def conv2d_nhwc(N, H, W, CI, CO, kernel_size, stride=1, padding=0, dilation=1, groups=1,  # noqa: N803
                in_dtype="float32", out_dtype="float32"):
    """A grouped 2-D convolution in NHWC layout with an HWIO weight, the input padded by
    ``topi.nn.pad``."""
    inputs = te.placeholder((N, H, W, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, kernel_size, CI // groups, CO), name="weight", dtype=in_dtype)
    per_group = CI // groups
    out_per_group = CO // groups
    out_h = (H + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    out_w = (W + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    rc = te.reduce_axis((0, per_group), name="rc")
    padded = topi.nn.pad(inputs, [0, padding, padding, 0])
    output = te.compute(
        (N, out_h, out_w, CO),
        lambda n, h, w, co: te.sum(
            padded[n, h * stride + rh * dilation, w * stride + rw * dilation,
                   co // out_per_group * per_group + rc].astype(out_dtype)
            * weight[rh, rw, rc, co].astype(out_dtype),
            axis=[rh, rw, rc]),
        name="conv2d_nhwc")
    return (inputs, weight, output)


def conv1d_nlc(N, L, CI, CO, kernel_size, stride=1, padding=0, dilation=1, groups=1,  # noqa: N803
               in_dtype="float32", out_dtype="float32"):
    """A grouped 1-D convolution in NLC layout with a (kernel, CI / groups, CO) weight."""
    inputs = te.placeholder((N, L, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, CI // groups, CO), name="weight", dtype=in_dtype)
    per_group = CI // groups
    out_per_group = CO // groups
    out_len = (L + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    rl = te.reduce_axis((0, kernel_size), name="rl")
    rc = te.reduce_axis((0, per_group), name="rc")
    padded = topi.nn.pad(inputs, [0, padding, 0])
    output = te.compute(
        (N, out_len, CO),
        lambda n, pos, co: te.sum(
            padded[n, pos * stride + rl * dilation, co // out_per_group * per_group + rc].astype(out_dtype)
            * weight[rl, rc, co].astype(out_dtype),
            axis=[rl, rc]),
        name="conv1d_nlc")
    return (inputs, weight, output)


def conv3d_ndhwc(N, D, H, W, CI, CO, kernel_size, stride=1, padding=0, dilation=1, groups=1,  # noqa: N803
                 in_dtype="float32", out_dtype="float32"):
    """A grouped 3-D convolution in NDHWC layout with a DHWIO weight (a cubic kernel)."""
    inputs = te.placeholder((N, D, H, W, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, kernel_size, kernel_size, CI // groups, CO), name="weight",
                            dtype=in_dtype)
    per_group = CI // groups
    out_per_group = CO // groups

    def out_size(size):
        return (size + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1

    rd = te.reduce_axis((0, kernel_size), name="rd")
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    rc = te.reduce_axis((0, per_group), name="rc")
    padded = topi.nn.pad(inputs, [0, padding, padding, padding, 0])
    output = te.compute(
        (N, out_size(D), out_size(H), out_size(W), CO),
        lambda n, d, h, w, co: te.sum(
            padded[n, d * stride + rd * dilation, h * stride + rh * dilation, w * stride + rw * dilation,
                   co // out_per_group * per_group + rc].astype(out_dtype)
            * weight[rd, rh, rw, rc, co].astype(out_dtype),
            axis=[rd, rh, rw, rc]),
        name="conv3d_ndhwc")
    return (inputs, weight, output)


def depthwise_conv2d_nhwc(N, H, W, C, kernel_size, stride=1, padding=0, dilation=1, factor=1,  # noqa: N803
                          in_dtype="float32", out_dtype="float32"):
    """A depthwise 2-D convolution in NHWC layout with a (factor, kh, kw, C) weight; as in TVM,
    only a channel multiplier ``factor`` of 1 is supported."""
    from ....error import TesseraValueError

    if factor != 1:
        raise TesseraValueError(f"depthwise_conv2d_nhwc: only a channel factor of 1 is supported, got {factor}")
    inputs = te.placeholder((N, H, W, C), name="placeholder", dtype=in_dtype)
    weight = te.placeholder((factor, kernel_size, kernel_size, C), name="placeholder", dtype=in_dtype)
    out_h = (H + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    out_w = (W + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    padded = topi.nn.pad(inputs, [0, padding, padding, 0])
    output = te.compute(
        (N, out_h, out_w, C * factor),
        lambda n, h, w, c: te.sum(
            padded[n, h * stride + rh * dilation, w * stride + rw * dilation, c // factor].astype(out_dtype)
            * weight[c % factor, rh, rw, c // factor].astype(out_dtype),
            axis=[rh, rw]),
        name="depth_conv2d_nhwc")
    return (inputs, weight, output)


def conv2d_transpose_nhwc(N, H, W, CI, CO, kernel_size, stride=1, padding=0,  # noqa: N803
                          in_dtype="float32", out_dtype="float32"):
    """A transposed 2-D convolution in NHWC layout: the input, padded by ``kernel - 1 - padding``
    (in input steps), is read as if dilated by ``stride`` (zero off the stride grid) and convolved
    with the spatially flipped HWIO weight."""
    inputs = te.placeholder((N, H, W, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, kernel_size, CI, CO), name="weight", dtype=in_dtype)
    top, left, bottom, right = topi.nn.get_pad_tuple(padding, (kernel_size, kernel_size))
    back_top, back_left = kernel_size - 1 - top, kernel_size - 1 - left
    back_bottom, back_right = kernel_size - 1 - bottom, kernel_size - 1 - right
    padded = topi.nn.pad(
        inputs,
        [0, (back_top + stride - 1) // stride, (back_left + stride - 1) // stride, 0],
        [0, (back_bottom + stride - 1) // stride, (back_right + stride - 1) // stride, 0])
    border_h = (stride - back_top % stride) % stride
    border_w = (stride - back_left % stride) % stride

    def dilated(n, h, w, c):
        # the zero-inserted input, without a stage of its own: zero unless h and w are on the grid
        if stride == 1:
            return padded[n, h, w, c]
        on_grid = te.all(te.indexmod(h, stride) == 0, te.indexmod(w, stride) == 0)
        return te.if_then_else(on_grid, padded[n, te.indexdiv(h, stride), te.indexdiv(w, stride), c],
                               tir.const(0.0, padded.dtype))

    out_h = (H - 1) * stride - top - bottom + kernel_size
    out_w = (W - 1) * stride - left - right + kernel_size
    rc = te.reduce_axis((0, CI), name="rc")
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    output = te.compute(
        (N, out_h, out_w, CO),
        lambda n, h, w, co: te.sum(
            dilated(n, h + rh + border_h, w + rw + border_w, rc).astype(out_dtype)
            * weight[kernel_size - 1 - rh, kernel_size - 1 - rw, rc, co].astype(out_dtype),
            axis=[rh, rw, rc]),
        name="conv2d_transpose_nhwc")
    return (inputs, weight, output)


def conv2d_capsule_nhwijc(N, H, W, CI, CO, kernel_size, stride=1, padding=0, capsule_size=4,  # noqa: N803
                          in_dtype="float32", out_dtype="float32"):
    """A capsule convolution: every pixel holds ``CI`` capsules of ``capsule_size`` squared
    matrices; each output capsule matrix sums the matrix products of the input capsules in the
    window with the weight's matrices."""
    cap = capsule_size
    inputs = te.placeholder((N, H, W, cap, cap, CI), name="inputs", dtype=in_dtype)
    weight = te.placeholder((kernel_size, kernel_size, cap, cap, CI, CO), name="weight", dtype=in_dtype)
    out_h = (H + 2 * padding - kernel_size) // stride + 1
    out_w = (W + 2 * padding - kernel_size) // stride + 1
    rh = te.reduce_axis((0, kernel_size), name="rh")
    rw = te.reduce_axis((0, kernel_size), name="rw")
    cap_k = te.reduce_axis((0, cap), name="cap_k")
    rc = te.reduce_axis((0, CI), name="rc")
    padded = topi.nn.pad(inputs, [0, padding, padding, 0, 0, 0])
    output = te.compute(
        (N, out_h, out_w, cap, cap, CO),
        lambda n, h, w, cap_i, cap_j, co: te.sum(
            padded[n, h * stride + rh, w * stride + rw, cap_i, cap_k, rc].astype(out_dtype)
            * weight[rh, rw, cap_k, cap_j, rc, co].astype(out_dtype),
            axis=[rh, rw, cap_k, rc]),
        name="conv2d_capsule_nhwijc")
    return (inputs, weight, output)


def conv2d_nhwc_bn_relu(N, H, W, CI, CO, kernel_size, strides, padding, dilation=1,  # noqa: N803
                        in_dtype="float32", out_dtype="float32"):
    """A 2-D NHWC convolution (the input padded by ``topi.nn.pad`` as "PaddedInput") followed by a
    bias add, a batch-norm scale and offset, and ReLU; returns
    ``(data, kernel, bias, bn_offset, bn_scale, out)``."""
    data = te.placeholder((N, H, W, CI), name="data", dtype=in_dtype)
    kernel = te.placeholder((kernel_size, kernel_size, CI, CO), name="kernel", dtype=in_dtype)
    bias = te.placeholder((CO,), name="bias")
    bn_scale = te.placeholder((CO,), name="bn_scale")
    bn_offset = te.placeholder((CO,), name="bn_offset")
    dilated_kernel = (kernel_size - 1) * dilation + 1
    top, left, bottom, right = topi.nn.get_pad_tuple(padding, (dilated_kernel, dilated_kernel))
    out_h = (H - dilated_kernel + top + bottom) // strides + 1
    out_w = (W - dilated_kernel + left + right) // strides + 1
    padded = topi.nn.pad(data, [0, top, left, 0], [0, bottom, right, 0], name="PaddedInput")
    rc = te.reduce_axis((0, CI), name="rc")
    ry = te.reduce_axis((0, kernel_size), name="ry")
    rx = te.reduce_axis((0, kernel_size), name="rx")
    conv = te.compute(
        (N, out_h, out_w, CO),
        lambda n, y, x, f: te.sum(
            padded[n, y * strides + ry * dilation, x * strides + rx * dilation, rc].astype(out_dtype)
            * kernel[ry, rx, rc, f].astype(out_dtype),
            axis=[ry, rx, rc]),
        name="Conv2dOutput", tag="conv2d_nhwc")
    shape = (N, out_h, out_w, CO)
    conv = te.compute(shape, lambda i, j, k, c: conv[i, j, k, c] + bias[c], name="bias_add")
    conv = te.compute(shape, lambda i, j, k, c: conv[i, j, k, c] * bn_scale[c], name="bn_mul")
    conv = te.compute(shape, lambda i, j, k, c: conv[i, j, k, c] + bn_offset[c], name="bn_add")
    return (data, kernel, bias, bn_offset, bn_scale, topi.nn.relu(conv))


def norm_bmn(B, M, N):  # noqa: N803 - TVM's names
    """The L2 norm of each of ``B`` matrices: ``D[b] = sqrt(sum_ij A[b, i, j]^2)``."""
    a = te.placeholder((B, M, N), name="A")
    i = te.reduce_axis((0, M), name="i")
    j = te.reduce_axis((0, N), name="j")
    squares = te.compute((B,), lambda b: te.sum(a[b, i, j] * a[b, i, j], axis=[i, j]), name="C")
    norm = te.compute((B,), lambda b: te.sqrt(squares[b]), name="D")
    return (a, norm)


def softmax_mn(m, n):
    """``topi.nn.softmax`` of an ``(m, n)`` matrix along its rows."""
    a = te.placeholder((m, n), name="A")
    return (a, topi.nn.softmax(a, axis=1))


def transpose_batch_matmul(batch, seq_len, n_head, n_dim, in_dtype="float32", out_dtype="float32"):
    """Attention scores: ``C[b, h, i, j] = sum_k query[b, i, h, k] * value[b, j, h, k]``, through
    the transposed copies ``query_T`` (b, h, l, d) and ``value_T`` (b, h, d, l)."""
    query = te.placeholder((batch, seq_len, n_head, n_dim), name="query", dtype=in_dtype)
    value = te.placeholder((batch, seq_len, n_head, n_dim), name="value", dtype=in_dtype)
    query_t = te.compute((batch, n_head, seq_len, n_dim), lambda b, h, l, d: query[b, l, h, d],
                         name="query_T")
    value_t = te.compute((batch, n_head, n_dim, seq_len), lambda b, h, d, l: value[b, l, h, d],
                         name="value_T")
    k = te.reduce_axis((0, n_dim), name="k")
    out = te.compute(
        (batch, n_head, seq_len, seq_len),
        lambda b, h, i, j: te.sum(
            query_t[b, h, i, k].astype(out_dtype) * value_t[b, h, k, j].astype(out_dtype), axis=[k]),
        name="C")
    return (query, value, out)


# TVM's workload names with their shapes (the same lists as TVM's; ResNet-18 convolutions, MobileNet
# depthwise layers, DCGAN transposed convolutions, matrix-capsule layers). SFM is left out:
# softmax_mn is defined, but topi.nn.softmax here computes its stages differently from TVM's
# (5 operations per element to TVM's 4), so it would not be TVM's workload.
CONFIGS = {
    "C1D": (conv1d_nlc, [(1, 256, 64, 128, 3, 2, 1), (1, 128, 128, 256, 1, 2, 0), (1, 64, 256, 256, 5, 1, 2),
                         (1, 32, 512, 512, 3, 1, 1)]),
    "C2D": (conv2d_nhwc, [(1, 224, 224, 3, 64, 7, 2, 3), (1, 56, 56, 64, 64, 1, 1, 0),
                          (1, 14, 14, 256, 256, 3, 1, 1), (1, 7, 7, 512, 512, 3, 1, 1)]),
    "C3D": (conv3d_ndhwc, [(1, 16, 224, 224, 3, 64, 7, 2, 3), (1, 16, 56, 56, 64, 64, 1, 1, 0),
                           (1, 16, 14, 14, 256, 256, 3, 1, 1), (1, 16, 7, 7, 512, 512, 3, 1, 1)]),
    "GMM": (batch_matmul_nkkm, [(1, 128, 128, 128), (1, 512, 32, 512), (1, 512, 512, 512),
                                (1, 1024, 1024, 1024)]),
    # conv2d_nhwc with groups=4 (GRP) and dilation=2 (DIL)
    "GRP": (conv2d_nhwc, [(1, 56, 56, 64, 128, 3, 2, 1, 1, 4), (1, 56, 56, 64, 64, 1, 1, 0, 1, 4),
                          (1, 14, 14, 256, 256, 3, 1, 1, 1, 4), (1, 7, 7, 512, 512, 3, 1, 1, 1, 4)]),
    "DIL": (conv2d_nhwc, [(1, 224, 224, 3, 64, 7, 2, 3, 2), (1, 56, 56, 64, 64, 1, 1, 0, 2),
                          (1, 14, 14, 256, 256, 3, 1, 1, 2), (1, 7, 7, 512, 512, 3, 1, 1, 2)]),
    "DEP": (depthwise_conv2d_nhwc, [(1, 112, 112, 32, 3, 1, 1), (1, 112, 112, 64, 3, 2, 1),
                                    (1, 14, 14, 512, 3, 2, 1), (1, 7, 7, 1024, 3, 1, 1)]),
    "T2D": (conv2d_transpose_nhwc, [(1, 4, 4, 512, 256, 4, 2, 1), (1, 8, 8, 256, 128, 4, 2, 1),
                                    (1, 16, 16, 128, 64, 4, 2, 1), (1, 32, 32, 64, 3, 4, 2, 1)]),
    "CAP": (conv2d_capsule_nhwijc, [(1, 16, 16, 32, 32, 3, 2, 1), (1, 8, 8, 32, 32, 3, 1, 1),
                                    (1, 16, 16, 8, 16, 3, 2, 1), (1, 8, 8, 16, 16, 3, 1, 1)]),
    "NRM": (norm_bmn, [(1, 256, 256), (1, 512, 512), (1, 1024, 1024), (1, 4096, 1024)]),
    "CBR": (conv2d_nhwc_bn_relu, [(1, 224, 224, 3, 64, 7, 2, 3), (1, 56, 56, 64, 128, 3, 2, 1),
                                  (1, 28, 28, 128, 256, 1, 2, 0), (1, 7, 7, 512, 512, 3, 1, 1)]),
    "TBG": (transpose_batch_matmul, [(1, 128, 12, 64), (1, 128, 16, 64), (1, 64, 12, 128), (1, 128, 12, 128)]),
}


def create_te_workload(name, idx):
    """The PrimFunc of workload ``name`` (a key of :data:`CONFIGS`) with its ``idx``-th shape.

    >>> func = create_te_workload("GMM", 0)  # a 1 x 128 x 128 x 128 batch matmul
    """
    from ....error import TesseraValueError

    if name not in CONFIGS:
        raise TesseraValueError(
            f"te workload {name!r} is not available in tessera (available: {', '.join(sorted(CONFIGS))})"
        )
    func, shapes = CONFIGS[name]
    if not 0 <= idx < len(shapes):
        raise TesseraValueError(f"te workload {name!r} has shapes 0..{len(shapes) - 1}, not {idx}")
    return te.create_prim_func(func(*shapes[idx]))


__all__ = ["CONFIGS", "batch_matmul_nkkm", "conv1d_nlc", "conv2d_capsule_nhwijc", "conv2d_nhwc",
           "conv2d_nhwc_bn_relu", "conv2d_transpose_nhwc", "conv3d_ndhwc", "create_te_workload",
           "depthwise_conv2d_nhwc", "matmul", "matmul_relu", "norm_bmn", "softmax_mn", "transpose_batch_matmul"]
