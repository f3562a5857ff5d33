"""Executable: what ``tvm.compile`` returns in TVM v0.23 (``tessera.tir.build.compile``)."""

from __future__ import annotations

from typing import Any

from .module import Module


class Executable(Module):
    """A built module as ``tvm.compile`` returns it: callable and indexable like the
    :class:`Module` it is, with TVM's ``mod`` (the runtime module) and ``jit()`` (the module
    ready to run; tessera's host and CUDA builds are linked and loaded already, so it is ``mod``).

    >>> exe = tvm.compile(func, target="c")
    >>> exe(a, b); exe.mod.inspect_source()
    """

    def __init__(self, mod: Any) -> None:
        if isinstance(mod, Module):
            mod = mod._mod
        super().__init__(mod)

    @property
    def mod(self) -> Module:
        """The runtime module."""
        return Module(self._mod)

    def jit(self, *, fcompile: Any = None, addons: Any = None, force_recompile: bool = False,
            **kwargs: Any) -> Module:
        """The module ready to run (tessera links and loads at build time): ``mod``. Options that
        ask for another compiler (``fcompile``, ``addons``) are refused."""
        if fcompile is not None or addons:
            raise NotImplementedError("Executable.jit: tessera links host code with its own C compiler "
                                      "at build time; fcompile and addons are not supported")
        del force_recompile, kwargs
        return self.mod

    def __repr__(self) -> str:
        return f"<tessera.runtime.Executable {self.type_key} functions={self.function_names}>"
