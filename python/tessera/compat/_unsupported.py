"""Modules of TVM that tessera does not implement but that TVM's test files import (and name
at their top) for a few tests: ``from tvm.script import relax as R``, ``tvm.script.parser.relax
.entry.TensorProxy``. Importing and naming work, so the file's other tests run; calling or
using anything fails with an error that says what is missing."""

import types

_WHY = ("is not part of tessera (tessera implements TensorIR, te and the vector DSL; see the "
        "README, 'Running TVM code: tessera.compat')")


class Missing:
    """A name inside a missing feature: naming it (and its attributes) works, using it fails."""

    def __init__(self, path, feature):
        self.__name__ = self.__qualname__ = path.rsplit(".", 1)[-1]
        self._path, self._feature = path, feature

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._path}.{attr}", self._feature)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self._path}: {self._feature} {_WHY}")

    def __getitem__(self, key):
        raise NotImplementedError(f"{self._path}: {self._feature} {_WHY}")

    def __repr__(self):
        return f"<missing {self._path}: {self._feature} is not part of tessera>"


class UnsupportedModule(types.ModuleType):
    """A module whose every attribute is a :class:`Missing` name of the feature tessera lacks."""

    def __init__(self, name, feature):
        super().__init__(name, f"{feature} {_WHY}")
        self.__feature = feature

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self.__name__}.{attr}", self.__feature)


relax = UnsupportedModule("tvm.script.relax", "Relax (TVM's graph-level IR)")
