"""TIR passes as Python objects: ``tessera.tir.transform.FlattenBuffer()(mod)``.

Each factory returns a :class:`Pass` that runs the registered C++ pass ``"tir.<Name>"`` under
the current :class:`tessera.transform.PassContext`:

>>> from tessera.tir import transform as tt
>>> flat = tt.FlattenBuffer()(mod)
>>> with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}):
...     unrolled = tt.UnrollLoop()(flat)
"""

import enum

from .. import _core  # noqa: F401
from ..transform import Pass, _python_pass


def prim_func_pass(pass_func=None, opt_level=0, name=None):
    """A pass written in Python, applied to each PrimFunc: ``pass_func(func, mod, ctx) -> PrimFunc``.

    >>> @ts.tir.transform.prim_func_pass(opt_level=0)
    ... def double_stores(func, mod, ctx):
    ...     return func.with_body(...)
    >>> with ts.transform.PassContext(config={"tir.add_lower_pass": [(1, double_stores)]}):
    ...     lib = ts.build(mod, target="c")

    A decorated class with a ``transform_function(self, func, mod, ctx)`` method becomes a pass
    factory.
    """
    return _python_pass("prim_func_pass", "transform_function", pass_func, opt_level, name)


def Apply(ftransform):  # noqa: N802 - TVM's name
    """A pass that replaces each PrimFunc ``f`` of the module by ``ftransform(f)``.

    >>> tag = ts.tir.transform.Apply(lambda f: f.with_attr("tir.noalias", True))
    >>> mod = tag(mod)
    """
    if not callable(ftransform):
        from ..error import TesseraTypeError

        raise TesseraTypeError(f"tir.transform.Apply takes a function of a PrimFunc, got {ftransform!r}")
    return prim_func_pass(lambda func, mod, ctx: ftransform(func), opt_level=0, name="tir.Apply")


def _factory(short):
    def make():
        return Pass("tir." + short)

    make.__name__ = short
    make.__doc__ = f"The pass tir.{short}."
    return make


_NAMES = ("CanonicalizeLoop", "LowerInitBlock", "ConvertBlocksToOpaque", "CompactBufferAllocation",
          "PlanAndUpdateBufferAllocationLocation", "LowerMatchBuffer", "Simplify", "LowerOpaqueBlock",
          "FlattenBuffer", "VectorizeLoop", "StorageRewrite", "UnrollLoop", "RemoveNoOp",
          "SkipAssert", "RemoveAssume", "RemoveStoreUndef",
          "ForceNarrowIndexToInt32", "InlinePrivateFunctions", "ConvertSSA",
          "AnnotateDeviceRegions", "CombineContextCall", "ConvertForLoopsToSerial",
          "DecorateDeviceScope", "RewriteUnsafeSelect",
          "MakePackedAPI", "LowerTVMBuiltin", "LowerIntrin", "InjectPrefetch", "HoistExpression",
          "LoopPartition", "CommonSubexprElimTIR", "HoistSharedVectorLoads", "InstrumentBoundCheckers",
          # GPU passes of the "cuda" target
          "UnifyThreadBinding", "VerifyMemory", "ThreadSync", "SplitHostDevice",
          "LowerDeviceKernelLaunch", "LowerCrossThreadReduction", "LowerThreadAllreduce",
          "InjectSoftwarePipeline", "InjectPTXAsyncCopy")

for _short in _NAMES:
    globals()[_short] = _factory(_short)


def CompactBufferAllocation(is_strict=True):  # noqa: N802 - TVM's name
    """Each allocation shrinks to the region its body touches. ``is_strict`` (TVM's option): the
    compacted shape never exceeds the original one; with ``is_strict=False`` a dimension becomes
    the touched region even where that is larger (a padded tile over a buffer too small)."""
    return Pass("tir.CompactBufferAllocation" if is_strict else "tir.CompactBufferAllocationNonStrict")


def HoistIfThenElse(variant=None):  # noqa: N802 - TVM's name
    """Loop-invariant `if` conditions move out of the loops (TVM v0.23's pass: HoistExpression
    restricted to if-statement conditions). ``variant="basic"`` never hoists a condition using
    a thread variable, nor past one; the default does where the ``"tir.HoistIfThenElse"`` record
    sets ``support_block_scope_hoisting``."""
    if variant is None:
        return Pass("tir.HoistIfThenElse")
    if variant == "basic":
        return Pass("tir.HoistIfThenElseBasic")
    from ..error import TesseraValueError

    raise TesseraValueError(f"tir.HoistIfThenElse: unknown variant {variant!r} "
                            "(None or \"basic\")")


class HoistedConditionals(enum.Flag):
    """Which conditions tir.HoistExpression moves out of loops: the bits of the
    ``"hoisted_conditionals"`` field of the ``"tir.HoistExpression"`` config record."""

    Never = 0
    IfElseStmt = 1  # the condition of an `if` statement
    IfElseExpr = 2  # the condition of T.if_then_else
    BooleanExpression = 4  # each operand of `and` / `or`
    UsingBlockVar = 8  # conditions using a thread variable, and hoisting past one
    All = IfElseStmt | IfElseExpr | BooleanExpression | UsingBlockVar


class HoistedLetBindings(enum.Flag):
    """Which let bindings tir.HoistExpression moves out of loops: the bits of the
    ``"hoisted_let_bindings"`` field of the ``"tir.HoistExpression"`` config record."""

    Never = 0
    RequiredByConditional = 1  # bindings a hoisted condition uses
    LetStmt = 2  # `x = value` statements
    LetExpr = 4  # T.Let expressions
    All = RequiredByConditional | LetStmt | LetExpr


def ThreadSync(storage_scope="shared"):  # noqa: N802 - TVM's name
    """Barriers (T.tvm_storage_sync) between the threads' conflicting accesses to memory of
    ``storage_scope`` ("shared" covers "shared.dyn", the same memory)."""

    if not isinstance(storage_scope, str):
        from ..error import TesseraTypeError

        raise TesseraTypeError(f"tir.ThreadSync takes a storage scope name, got {storage_scope!r}")
    return Pass._wrap(_core.thread_sync_pass(storage_scope))


def NarrowDataType(target_bits):  # noqa: N802 - TVM's name
    """Loop, block and thread variables of each function's body, with the constants and casts of
    its indices, become ``target_bits``-bit integers where their bounds provably fit that width
    (a loop of ``T.int64(16)`` iterations gets an int32 variable under ``NarrowDataType(32)``)."""
    if isinstance(target_bits, bool) or not isinstance(target_bits, int):
        from ..error import TesseraTypeError

        raise TesseraTypeError(f"tir.NarrowDataType takes a number of bits, got {target_bits!r}")
    return Pass._wrap(_core.narrow_datatype_pass(target_bits))


__all__ = ["Apply", "HoistIfThenElse", "HoistedConditionals", "HoistedLetBindings", "NarrowDataType",
           "Pass", "prim_func_pass"] + list(_NAMES)
