"""``tvm.compass.relax`` under ``tessera.compat``: only its ``testing`` helpers for test inputs.

tessera has no Relax; Compass's DSL tests import ``tvm.compass.relax.testing`` only to make an
input image (``get_imagenet_input``). Importing anything else of ``tvm.compass.relax`` raises
an ImportError that names it.
"""

from . import testing

__all__ = ["testing"]
