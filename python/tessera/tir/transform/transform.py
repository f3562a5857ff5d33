"""TIR passes as Python objects: ``tessera.tir.transform.FlattenBuffer()(mod)``.

Each factory returns a :class:`Pass` that runs the registered C++ pass ``"tir.<Name>"`` under
the current :class:`tessera.transform.PassContext`:

>>> from tessera.tir import transform as tt
>>> flat = tt.FlattenBuffer()(mod)
>>> with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}}):
...     unrolled = tt.UnrollLoop()(flat)
"""

import enum

from ... import _core  # noqa: F401
from ...transform import Pass, _python_pass


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
        from ...error import TesseraTypeError

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
          "FlattenBuffer", "UnrollLoop", "RemoveNoOp", "ReduceBranchingThroughOvercompute",
          "SkipAssert", "RemoveAssume", "RemoveStoreUndef",
          "ForceNarrowIndexToInt32", "InlinePrivateFunctions", "ConvertSSA",
          "AnnotateDeviceRegions", "CombineContextCall", "ConvertForLoopsToSerial",
          "DecorateDeviceScope", "RewriteUnsafeSelect",
          "MakePackedAPI", "MakeUnpackedAPI", "AnnotateIrregularLoop",
          "AnnotateEntryFunc", "LowerTVMBuiltin", "LowerIntrin", "InjectPrefetch", "InjectDoubleBuffer", "PointerValueTypeRewrite",
          "HoistExpression",
          "LoopPartition", "StatementCSE", "HoistSharedVectorLoads", "InstrumentBoundCheckers",
          "LegalizeVectorLanes", "BF16ComputeLegalize", "BF16StorageLegalize", "FP8StorageLegalize",
          # GPU passes of the "cuda" target
          "UnifyThreadBinding", "VerifyMemory", "ThreadSync", "SplitHostDevice",
          "LowerDeviceKernelLaunch", "LowerCrossThreadReduction", "LowerThreadAllreduce",
          "InjectVirtualThread",
          "InjectSoftwarePipeline", "InjectPTXAsyncCopy")

for _short in _NAMES:
    globals()[_short] = _factory(_short)


def CompactBufferAllocation(is_strict=True):  # noqa: N802 - TVM's name
    """Each allocation shrinks to the region its body touches. ``is_strict`` (TVM's option): the
    compacted shape never exceeds the original one; with ``is_strict=False`` a dimension becomes
    the touched region even where that is larger (a padded tile over a buffer too small)."""
    return Pass("tir.CompactBufferAllocation" if is_strict else "tir.CompactBufferAllocationNonStrict")


def CommonSubexprElimTIR(enable_cse_tir=True, identify_equiv_terms=False):  # noqa: N802 - TVM's name
    """TVM's common subexpression elimination: a computation done more than once by a statement
    and the statements under it is bound once to a ``cse_v<n>`` variable, as deep as covers its
    uses (an ``if`` branch or loop body that alone repeats it); calls and buffer loads are never
    bound. ``identify_equiv_terms``: equivalent terms (``(y + z) * x`` and ``x * y + x * z``) are
    one computation. ``enable_cse_tir=False``: the pass changes nothing. (The build runs
    ``tir.StatementCSE`` on the host, which also binds loads within one statement.)"""
    return Pass._wrap(_core.common_subexpr_elim_tir_pass(bool(enable_cse_tir),
                                                         bool(identify_equiv_terms)))


def FP8ComputeLegalize(promote_dtype="float32"):  # noqa: N802 - TVM's name
    """float8 arithmetic done in ``promote_dtype`` ("float32" or "float16"): loads of float8
    values are widened and stores narrowed back (round half to even), unless the function's CUDA
    target has float8 natively (sm_89, sm_90 and later)."""
    name = getattr(promote_dtype, "name", promote_dtype)
    if name == "float32":
        return Pass("tir.FP8ComputeLegalize")
    if name == "float16":
        return Pass("tir.FP8ComputeLegalizeF16")
    from ...error import TesseraValueError

    raise TesseraValueError(f"tir.FP8ComputeLegalize: float8 arithmetic can be promoted to "
                            f"\"float16\" or \"float32\", not {promote_dtype!r}")


def HoistIfThenElse(variant=None):  # noqa: N802 - TVM's name
    """Loop-invariant `if` conditions move out of the loops (TVM v0.23's pass: HoistExpression
    restricted to if-statement conditions). ``variant="basic"`` never hoists a condition using
    a thread variable, nor past one; the default does where the ``"tir.HoistIfThenElse"`` record
    sets ``support_block_scope_hoisting``."""
    if variant is None:
        return Pass("tir.HoistIfThenElse")
    if variant == "basic":
        return Pass("tir.HoistIfThenElseBasic")
    from ...error import TesseraValueError

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
        from ...error import TesseraTypeError

        raise TesseraTypeError(f"tir.ThreadSync takes a storage scope name, got {storage_scope!r}")
    return Pass._wrap(_core.thread_sync_pass(storage_scope))


def VectorizeLoop(enable_vectorize=True):  # noqa: N802 - TVM's name
    """Each ``T.vectorized`` loop becomes one vector of its extent (Ramp indices, Broadcast
    operands); a statement that cannot be vectorized keeps a serial loop over the lanes.
    ``enable_vectorize=False`` (or the ``tir.disable_vectorize`` option) makes them serial loops."""
    if not isinstance(enable_vectorize, (bool, int)):
        from ...error import TesseraTypeError

        raise TesseraTypeError(f"tir.VectorizeLoop takes enable_vectorize=True/False, got {enable_vectorize!r}")
    return Pass._wrap(_core.vectorize_loop_pass(bool(enable_vectorize)))


def SplitVectorizedLoops():  # noqa: N802
    """tessera's step before VectorizeLoop in a build: vectorized loops longer than the target's
    vector width become serial loops over vectorized chunks of that width (the ``tir.VectorizeLoop``
    option ``max_vector_bits``, else the host's for a host target, else 16 lanes); loops whose
    body the host cannot run as vector code become serial."""
    return Pass("tir.SplitVectorizedLoops")


def BindTarget(target):  # noqa: N802 - TVM's name
    """Functions without a "target" attribute get one: public functions ``target`` (its host
    included), private functions the host where host code calls them and the target without
    its host where device code does (a function called from both is copied as ``<name>_host``
    for the host). A public function whose target lacks a host gets ``target``'s host."""
    from ...script.tir.frames import to_attr
    from ...target import Target

    if isinstance(target, (str, dict)):
        target = Target(target)
    if not isinstance(target, Target):
        from ...error import TesseraTypeError

        raise TesseraTypeError(f"tir.BindTarget takes a Target, got {target!r}")
    return Pass._wrap(_core.bind_target_pass(to_attr(target)))


def DefaultGPUSchedule():  # noqa: N802 - TVM's name
    """Each function of a GPU target (its "target" attribute, else the current target) gets
    its innermost blocks' data-parallel loops fused, split and bound to blockIdx.x/threadIdx.x
    (at most the target's max_num_threads threads a block); all functions are then marked
    "tir.is_scheduled"."""
    from ...script.tir.frames import to_attr
    from ...target import Target
    from ...transform import module_pass

    def run(mod, ctx):
        current = Target.current(allow_none=True)
        target = None if current is None else to_attr(current)
        return _core.default_gpu_schedule_pass(target)(mod)

    return module_pass(run, opt_level=0, name="tir.DefaultGPUSchedule")


def _memory_info(scope):
    """(unit_bits, head_address) of the MemoryInfo registered as "tvm.info.mem.<scope>"."""
    from ...error import TesseraTypeError
    from ...runtime import get_global_func
    from ...target import MemoryInfo

    fn = get_global_func("tvm.info.mem." + scope, allow_missing=True)
    if fn is None:
        return None
    info = fn()
    if info is None:
        return None
    if not isinstance(info, MemoryInfo):
        raise TesseraTypeError(f"the function \"tvm.info.mem.{scope}\" returned {info!r}, "
                               "not a MemoryInfo")
    return (info.unit_bits, info.head_address)


def _memory_limits(scope):
    """(max_simd_bits, max_num_bits) of the MemoryInfo registered as "tvm.info.mem.<scope>"."""
    from ...error import TesseraTypeError
    from ...runtime import get_global_func
    from ...target import MemoryInfo

    fn = get_global_func("tvm.info.mem." + scope, allow_missing=True)
    info = None if fn is None else fn()
    if info is None:
        return None
    if not isinstance(info, MemoryInfo):
        raise TesseraTypeError(f"the function \"tvm.info.mem.{scope}\" returned {info!r}, "
                               "not a MemoryInfo")
    return (info.max_simd_bits, info.max_num_bits)


def StorageRewrite():  # noqa: N802 - TVM's name
    """Allocations whose lifetimes do not overlap share storage. In a special memory (a tagged
    scope such as ``"local.L0A"``), buffers of any type share, and all of the scope's storage is
    one allocation, laid out with the alignment and capacity of the MemoryInfo registered as
    ``"tvm.info.mem.<scope>"``."""
    return Pass._wrap(_core.storage_rewrite_pass(_memory_limits))


def LowerDeviceStorageAccessInfo():  # noqa: N802 - TVM's name
    """Allocations in tagged storage scopes ("global.vtcm") are bound to the head address of
    their memory (the MemoryInfo registered as ``"tvm.info.mem.<scope>"``), or dropped where
    the host cannot address it; ``T.tvm_access_ptr`` becomes ``T.address_of``."""
    return Pass._wrap(_core.lower_device_storage_access_info_pass(_memory_info))


def Filter(fcond):  # noqa: N802 - TVM's name
    """A pass keeping the functions ``f`` of the module for which ``fcond(f)`` is true."""
    if not callable(fcond):
        from ...error import TesseraTypeError

        raise TesseraTypeError(f"tir.Filter takes a function of a PrimFunc, got {fcond!r}")
    return Pass._wrap(_core.filter_pass(fcond))


def NarrowDataType(target_bits):  # noqa: N802 - TVM's name
    """Loop, block and thread variables of each function's body, with the constants and casts of
    its indices, become ``target_bits``-bit integers where their bounds provably fit that width
    (a loop of ``T.int64(16)`` iterations gets an int32 variable under ``NarrowDataType(32)``)."""
    if isinstance(target_bits, bool) or not isinstance(target_bits, int):
        from ...error import TesseraTypeError

        raise TesseraTypeError(f"tir.NarrowDataType takes a number of bits, got {target_bits!r}")
    return Pass._wrap(_core.narrow_datatype_pass(target_bits))


__all__ = ["Apply", "BindTarget", "CommonSubexprElimTIR", "DefaultGPUSchedule", "Filter", "FP8ComputeLegalize", "HoistIfThenElse",
           "HoistedConditionals", "HoistedLetBindings", "LowerDeviceStorageAccessInfo", "NarrowDataType", "Pass",
           "StorageRewrite",
           "SplitVectorizedLoops", "VectorizeLoop", "prim_func_pass"] + list(_NAMES)
