"""TIR passes as Python objects: ``tessera.tir.transform.FlattenBuffer()(mod)``.

The passes are defined in :mod:`tessera.tir.transform.transform` (the module path TVM code
imports them from: ``from tvm.tir.transform.transform import BindTarget``) and re-exported here.
"""

from . import transform  # noqa: F401
from .transform import *  # noqa: F401,F403
from .transform import __all__  # noqa: F401
