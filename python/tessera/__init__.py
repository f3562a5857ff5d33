"""tessera: a tensor-kernel compiler."""

from . import _core

__version__ = _core.__version__
