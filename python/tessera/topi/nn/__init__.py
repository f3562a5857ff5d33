"""Neural-network operators of the operator library (TVM's ``topi.nn``)."""

from .batch_matmul import batch_matmul
from .batch_norm import batch_norm
from .conv1d import conv1d, conv1d_ncw, conv1d_nwc, group_conv1d_ncw, group_conv1d_nwc
from .conv2d import (
    conv2d,
    conv2d_NCHWc,
    conv2d_nchw,
    conv2d_nhwc,
    group_conv2d_nchw,
    group_conv2d_nhwc,
)
from .conv2d_transpose import conv2d_transpose_nchw, group_conv2d_transpose_nchw
from .dense import dense, matmul
from .depthwise_conv2d import (
    depthwise_conv2d_NCHWc,
    depthwise_conv2d_nchw,
    depthwise_conv2d_nhwc,
)
from .elemwise import leaky_relu, prelu, relu
from .flatten import flatten
from .group_norm import group_norm, instance_norm
from .layer_norm import layer_norm
from .pad import pad
from .pooling import adaptive_pool, adaptive_pool1d, adaptive_pool3d, global_pool, pool2d
from .rms_norm import rms_norm
from .softmax import log_softmax, softmax
from .utils import get_pad_tuple

__all__ = [
    "batch_matmul", "batch_norm", "conv2d", "conv2d_NCHWc", "conv2d_nchw", "conv2d_nhwc",
    "group_conv2d_nchw", "group_conv2d_nhwc", "dense", "matmul", "depthwise_conv2d_nchw",
    "depthwise_conv2d_nhwc", "depthwise_conv2d_NCHWc", "leaky_relu", "prelu", "relu", "layer_norm", "pad", "adaptive_pool",
    "adaptive_pool1d", "adaptive_pool3d", "global_pool", "pool2d", "log_softmax", "softmax",
    "get_pad_tuple", "conv1d", "conv1d_ncw",
    "conv1d_nwc", "group_conv1d_ncw", "group_conv1d_nwc", "flatten", "rms_norm",
    "conv2d_transpose_nchw", "group_conv2d_transpose_nchw", "group_norm", "instance_norm",
]  # fmt: skip
