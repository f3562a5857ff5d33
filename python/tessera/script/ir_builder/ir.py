"""The I names of the imperative IR builder (``from tessera.script.ir_builder import ir as I``)."""

from ..tir.frames import Frame


class IRModuleFrame(Frame):
    """``with I.ir_module():``: each ``T.prim_func()`` inside becomes a function of the module,
    under the name ``T.func_name`` gave it."""

    def enter(self, builder, node, name):
        builder.begin_module()

    def exit(self, builder):
        builder.end_module()


def ir_module():
    """``with I.ir_module():``: open an IRModule."""
    return IRModuleFrame()


__all__ = ["ir_module", "IRModuleFrame"]
