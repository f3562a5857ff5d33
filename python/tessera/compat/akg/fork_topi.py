"""``akg.topi`` (and ``topi``): the operator library of AKG's TVM fork on ``tessera.topi``.

The fork's topi is TVM 0.6's: the same operators as ``tessera.topi`` under a few older names and
signatures (``topi.nn.pool`` without dilation, ``topi.util``, ``topi.nn.util``). Its hardware
schedules (``topi.cuda``, ``topi.x86``, ``topi.generic``, ...) and its C++ bindings
(``topi.cpp``) are named but not provided.
"""

import importlib
import types

from .. import _unsupported
from .fork_tvm import NotProvided

_FORK = "AKG's TVM fork"


class _Overlay(types.ModuleType):
    """A module of the fork: its own names, then those of a tessera module, then
    :class:`~tessera.compat._unsupported.Missing` (fails when used)."""

    def __init__(self, name, base, names=None, doc=None):
        super().__init__(name, doc or f"{name} of {_FORK} on {base}")
        self.__path__ = []
        self.__base = base
        if names:
            self.__dict__.update(names)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        base = importlib.import_module(self.__base)
        if hasattr(base, attr):
            return getattr(base, attr)
        return _unsupported.Missing(f"{self.__name__}.{attr}", f"this name of {_FORK}'s topi")


def pool(data, kernel, stride, padding, pool_type, ceil_mode=False, layout="NCHW", count_include_pad=True):
    """TVM 0.6's ``topi.nn.pool``: ``pool2d`` without dilation; ``padding`` is
    ``[top, left, bottom, right]``."""
    from ...topi import nn

    return nn.pool2d(data, kernel, stride, (1, 1), padding, pool_type, ceil_mode=ceil_mode, layout=layout,
                     count_include_pad=count_include_pad)


def global_pool(data, pool_type, layout="NCHW"):
    """TVM 0.6's ``topi.nn.global_pool``: the layout names where H and W are; axes of the input
    after the layout's (the ``c`` of NCHWc data with layout "NCHW") are kept as they are."""
    from ...topi import nn

    letters = [ch for ch in layout if not ch.isdigit()]
    extra = len(data.shape) - len(letters)
    if extra > 0:
        spare = [ch for ch in "cdefgijklmnopqrstuvxyz" if ch not in letters and ch.upper() not in letters]
        spare += [ch for ch in "cdefgijklmnopqrstuvxyz" if ch not in letters and ch not in spare]
        layout = layout + "".join(spare[:extra])
    return nn.global_pool(data, pool_type, layout=layout)


def make_modules(prefix):
    """The fork's topi modules under ``prefix`` (``akg.topi`` or ``topi``): name -> module."""
    top = _Overlay(prefix, "tessera.topi", doc=__doc__)
    nn = _Overlay(f"{prefix}.nn", "tessera.topi.nn", {"pool": pool, "global_pool": global_pool})
    mods = {prefix: top, f"{prefix}.nn": nn}
    top.nn = nn

    def alias(name, target, parent=top, parent_name=prefix):
        full = f"{parent_name}.{name}"
        mods[full] = m = _Overlay(full, target)
        setattr(parent, name, m)
        return m

    alias("util", "tessera.topi.utils")
    alias("utils", "tessera.topi.utils")
    alias("tag", "tessera.topi.tag")
    alias("testing", "tessera.topi.testing")
    alias("math", "tessera.topi.math")
    alias("transform", "tessera.topi.transform")
    alias("reduction", "tessera.topi.reduction")
    alias("broadcast", "tessera.topi.broadcast")
    alias("util", "tessera.topi.nn.utils", nn, f"{prefix}.nn")
    alias("utils", "tessera.topi.nn.utils", nn, f"{prefix}.nn")
    for name in ("cpp", "generic", "cuda", "x86", "arm_cpu", "mali", "bifrost", "opengl", "intel_graphics",
                 "rocm", "hls", "vision", "sparse", "cce"):
        full = f"{prefix}.{name}"
        mods[full] = m = NotProvided(full, f"{_FORK}'s topi.{name}")
        setattr(top, name, m)
    return mods
