"""``tessera.ir.transform``: the pass infrastructure under the name TVM code also uses for it
(``tvm.ir.transform.Sequential``); the same objects as :mod:`tessera.transform`."""

from ..transform import *  # noqa: F401,F403
from ..transform import __all__  # noqa: F401
