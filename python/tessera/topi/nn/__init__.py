"""Neural-network operators of the operator library (TVM's ``topi.nn``)."""

from .batch_matmul import batch_matmul  # noqa: F401
from .batch_norm import batch_norm  # noqa: F401
from .conv2d import (conv2d, conv2d_NCHWc, conv2d_nchw, conv2d_nhwc,  # noqa: F401
                     group_conv2d_nchw, group_conv2d_nhwc)
from .dense import dense, matmul  # noqa: F401
from .depthwise_conv2d import depthwise_conv2d_nchw, depthwise_conv2d_nhwc  # noqa: F401
from .elemwise import leaky_relu, prelu, relu  # noqa: F401
from .layer_norm import layer_norm  # noqa: F401
from .pad import pad  # noqa: F401
from .pooling import adaptive_pool, global_pool, pool2d  # noqa: F401
from .softmax import log_softmax, softmax  # noqa: F401
from .utils import get_pad_tuple  # noqa: F401
