"""tessera's operator library, with the names and signatures of TVM's topi.

Every operator returns te tensors computed with no schedule; build them with
``te.create_prim_func`` and ``ts.build``:

>>> from tessera import te, topi
>>> A = te.placeholder((13, 5), "float32", name="A")
>>> B = topi.nn.softmax(topi.exp(A), axis=1)
>>> lib = ts.build(te.create_prim_func([A, B]), target="c")
"""

# In TVM's order: broadcast's left_shift/right_shift (tensor or scalar shift) win over math's.
from .math import *  # noqa: F401,F403
from .tensor import elemwise_sum, eye, full, full_like  # noqa: F401
from .reduction import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403
from .broadcast import *  # noqa: F401,F403
from .scan import cumprod, cumsum  # noqa: F401
from .sort import argsort, sort, topk  # noqa: F401
from . import generic_op_impl, image, nn, tag, utils  # noqa: E402,F401
