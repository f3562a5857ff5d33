"""TIR passes as Python objects: ``tessera.tir.transform.FlattenBuffer()(mod)``.

Each factory returns a :class:`Pass` that runs the registered C++ pass ``"tir.<Name>"`` under
the current :class:`tessera.transform.PassContext`:

>>> from tessera.tir import transform as tt
>>> flat = tt.FlattenBuffer()(mod)
>>> with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}):
...     unrolled = tt.UnrollLoop()(flat)
"""

from .. import _core


class Pass:
    """A registered pass, applied to an IRModule (or a PrimFunc, wrapped as "main")."""

    def __init__(self, name):
        if not _core.pass_exists(name):
            raise ValueError(f"unknown pass '{name}'")
        self.name = name

    def __call__(self, mod):
        if isinstance(mod, _core.PrimFunc):
            mod = _core.IRModule.from_func(mod, "main")
        return _core.apply_pass(self.name, mod)

    def __repr__(self):
        return f"<tessera.tir.transform.Pass {self.name}>"


def _factory(short):
    def make():
        return Pass("tir." + short)

    make.__name__ = short
    make.__doc__ = f"The pass tir.{short}."
    return make


_NAMES = ("CanonicalizeLoop", "LowerInitBlock", "ConvertBlocksToOpaque", "CompactBufferAllocation",
          "PlanAndUpdateBufferAllocationLocation", "LowerMatchBuffer", "Simplify", "LowerOpaqueBlock",
          "FlattenBuffer", "VectorizeLoop", "StorageRewrite", "UnrollLoop", "RemoveNoOp",
          "SkipAssert", "MakePackedAPI", "LowerIntrin", "InjectPrefetch", "HoistIfThenElse",
          "LoopPartition", "CommonSubexprElimTIR",
          # GPU passes of the "cuda" target
          "UnifyThreadBinding", "VerifyMemory", "ThreadSync", "SplitHostDevice",
          "LowerDeviceKernelLaunch", "LowerCrossThreadReduction", "LowerThreadAllreduce")

for _short in _NAMES:
    globals()[_short] = _factory(_short)

__all__ = ["Pass"] + list(_NAMES)
