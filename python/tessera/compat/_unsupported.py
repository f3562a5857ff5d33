"""Modules of TVM that tessera does not implement but that TVM's test files import at their top
for a few tests (``from tvm.script import relax as R``): importing works, so the file's other
tests run; using any name fails with an error that says what is missing."""

import types


class UnsupportedModule(types.ModuleType):
    """A module whose every attribute is an error naming the TVM feature tessera lacks."""

    def __init__(self, name, feature):
        super().__init__(name, f"{feature} is not part of tessera")
        self.__feature = feature

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(f"{self.__name__}.{attr}: {self.__feature} is not part of tessera "
                             "(tessera implements TensorIR, te and the vector DSL; see the README, "
                             "'Running TVM code: tessera.compat')")


relax = UnsupportedModule("tvm.script.relax", "Relax (TVM's graph-level IR)")
