"""``tir.Schedule``: TensorIR schedule primitives over an IRModule (a thin layer over C++)."""

import inspect

from ... import _core
from ...error import BufferArgumentError, ScheduleError, TesseraTypeError, TesseraValueError  # noqa: F401 - TVM's import path
from .trace import Trace

BlockRV = _core.BlockRV
LoopRV = _core.LoopRV
ExprRV = _core.ExprRV
IndexMap = _core.IndexMap

_DEBUG_MASKS = {"none": 0, "all": -1}

# An ExprRV takes part in expressions (`j1 * j2`, `i // j1` in an index map) as TVM's, which is
# a Var: each handle stands for one int32 variable here, replaced by the value the schedule drew
# when a primitive receives the expression (`Schedule._resolve_rvs`).
_RV_VARS = {}


def _rv_as_expr(rv):
    var = _RV_VARS.get(rv)
    if var is None:
        var = _core.Var(f"rv_{len(_RV_VARS)}", "int32")
        _RV_VARS[rv] = var
    return var


def _install_rv_arithmetic():
    import operator

    def forward(op):
        return lambda self, other: op(_rv_as_expr(self), other)

    def reflected(op):
        return lambda self, other: op(other, _rv_as_expr(self))

    ExprRV.as_expr = _rv_as_expr
    for name, op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                     ("floordiv", operator.floordiv), ("mod", operator.mod),
                     ("truediv", operator.truediv)):
        setattr(ExprRV, f"__{name}__", forward(op))
        setattr(ExprRV, f"__r{name}__", reflected(op))
    ExprRV.__neg__ = lambda self: operator.neg(_rv_as_expr(self))


_install_rv_arithmetic()


def _forget_rv_vars():
    _RV_VARS.clear()  # before the interpreter tears the bindings down


import atexit  # noqa: E402

atexit.register(_forget_rv_vars)


def _as_module(mod):
    if isinstance(mod, _core.IRModule):
        return mod
    if isinstance(mod, _core.PrimFunc):
        return _core.IRModule.from_func(mod, "main")
    raise TesseraTypeError(f"tir.Schedule expects an IRModule or a PrimFunc, got {type(mod).__name__}")


def _flatten(items):
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        return list(items[0])
    return list(items)


def _const(value, dtype):
    from ...tir.expr_ops import convert

    if isinstance(value, _core.PrimExpr):
        return value
    return convert(value, dtype)


class Schedule:
    """A schedule of an IRModule (or a PrimFunc, scheduled as ``"main"``).

    >>> sch = tir.Schedule(Scale)             # one block "scale" over rows x cols
    >>> rows, cols = sch.get_loops("scale")
    >>> ro, ri = sch.split(rows, factors=[None, 8])
    >>> sch.reorder(ro, cols, ri)
    >>> sch.parallel(ro)
    >>> sch.mod.show()

    Primitives raise :class:`tessera.tir.ScheduleError` when their preconditions do not hold;
    the schedule is then left unchanged. Every successful call is recorded in :attr:`trace`.
    ``error_render_level`` is ``"detail"`` (the program with the culprits marked), ``"fast"``
    (the message alone) or ``"none"``; ``debug_mask="all"`` verifies the schedule's internal
    state after each primitive; ``enable_check=False`` skips the dataflow checks.
    """

    def __init__(self, mod, *, seed=None, debug_mask="none", error_render_level="detail",
                 enable_check=True):
        if isinstance(debug_mask, str):
            if debug_mask not in _DEBUG_MASKS:
                raise TesseraValueError(f"debug_mask must be 'none', 'all' or an int, not {debug_mask!r}")
            debug_mask = _DEBUG_MASKS[debug_mask]
        self._sch = _core.Schedule(_as_module(mod), int(debug_mask), error_render_level, enable_check,
                                   _seed_value(seed))

    @classmethod
    def _wrap(cls, core_sch):
        sch = cls.__new__(cls)
        sch._sch = core_sch
        return sch

    # ---- utilities ----

    @property
    def mod(self):
        """The scheduled IRModule as it is now."""
        return self._sch.mod

    @property
    def trace(self):
        """The instructions recorded so far (a snapshot)."""
        if not hasattr(self, "_trace_insts"):
            self._trace_insts = []
        return Trace._from_core(self._sch.trace, self._trace_insts)

    @property
    def func_working_on(self):
        """The GlobalVar of the function ``get_block`` searches when no ``func_name`` is given
        (None when it is not known), as TVM's."""
        name = self._sch.func_working_on
        return self.mod.get_global_var(name) if name else None

    def work_on(self, func_name):
        """Make ``get_block`` search ``func_name`` by default."""
        self._sch.work_on(func_name)

    def copy(self):
        """An independent copy; the handles of this schedule also work in the copy."""
        return Schedule._wrap(self._sch.copy())

    def _resolve_rvs(self, expr):
        """``expr`` with the variables of ExprRVs (see ``_RV_VARS``) replaced by their values."""
        if not _RV_VARS or not isinstance(expr, _core.PrimExpr):
            return expr
        from ..stmt_functor import post_order_visit, substitute

        found = []
        post_order_visit(expr, lambda node: found.append(node) if isinstance(node, _core.Var) else None)
        vmap = {}
        for rv, var in _RV_VARS.items():
            if any(var.same_as(v) for v in found):
                value = self.get(rv)
                vmap[var] = _const(value, "int32") if isinstance(value, int) else value
        if not vmap:
            return expr
        from ...arith import Analyzer

        return Analyzer().simplify(substitute(expr, vmap))

    def _resolve_map_rvs(self, index_map):
        if not _RV_VARS or not isinstance(index_map, IndexMap):
            return index_map
        final = [self._resolve_rvs(e) for e in index_map.final_indices]
        if all(a.same_as(b) for a, b in zip(final, index_map.final_indices)):
            return index_map
        return IndexMap(list(index_map.initial_indices), final)

    def get(self, rv):
        """The IR node behind a handle (or an sref): a Block, a For, or the int a sampling
        instruction drew."""
        if isinstance(rv, _core.StmtSRef):
            return rv.stmt
        try:
            result = self._sch.get(rv)
        except TesseraValueError as err:
            # As TVM's, a handle the schedule does not know (removed, or of another schedule) is
            # an IndexError; it stays a ValueError too.
            raise _UnknownHandleError(str(err)) from None
        if isinstance(result, _core.IntImm):
            return result.value
        return result

    @property
    def state(self):
        """The :class:`ScheduleState` of the schedule (its module and srefs)."""
        from .state import ScheduleState

        return ScheduleState._wrap(self._sch.state, self)

    def get_sref(self, rand_var_or_stmt):
        """The sref of a block or loop handle, or of a Block or For of the module (None when
        the statement is not in it)."""
        if isinstance(rand_var_or_stmt, (_core.Block, _core.For)):
            return self._sch.state.get_sref(rand_var_or_stmt)
        try:
            return self._sch.get_sref(rand_var_or_stmt)
        except Exception as err:
            # As TVM: a handle the schedule does not hold (made by another schedule, as a copy
            # made before it) is an IndexError.
            if "does not belong to this schedule" in str(err):
                from ...error import TesseraIndexError

                raise TesseraIndexError(
                    f"Cannot find the handle {rand_var_or_stmt!r} in this schedule (it belongs to another one)") from None
            raise

    def show(self, *args, **kwargs):
        """Print the scheduled module as TVMScript."""
        print(self.mod.script(*args, **kwargs))

    # ---- sampling ----

    def seed(self, seed):
        """Reset the random state of the sampling instructions (-1 or None: a random seed).

        A linear congruential engine as TVM's: the same seed gives the same decisions.
        """
        self._sch.seed(_seed_value(seed))

    def fork_seed(self):
        """A new seed drawn from the random state (for another schedule)."""
        return self._sch.fork_seed()

    def sample_categorical(self, candidates, probs, decision=None):
        """One of ``candidates`` drawn with the probabilities ``probs``; returns an ExprRV.

        >>> v = sch.sample_categorical([1, 2, 4], [0.5, 0.25, 0.25])
        >>> sch.get(v)
        2
        """
        candidates = [_int_value(c, "candidates") for c in candidates]
        probs = [float(_number(p)) for p in probs]
        return self._sch.sample_categorical(candidates, probs, _opt_int(decision))

    def sample_perfect_tile(self, loop, n, max_innermost_factor=16, decision=None):
        """``n`` factors (ExprRVs) whose product is the loop's extent, the innermost at most
        ``max_innermost_factor`` (-1: unbounded); on a loop of unknown extent the first is None.

        >>> i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
        """
        rvs = self._sch.sample_perfect_tile(loop, int(n), int(max_innermost_factor),
                                            _opt_ints(decision))
        return [None if self._sch.get(rv).value == -1 else rv for rv in rvs]

    def sample_partitioned_tile(self, loop, n, partition_pos=0, innerpart_factor=1, decision=None):
        """Like :meth:`sample_perfect_tile`, with the product of the factors from
        ``partition_pos`` on divisible by ``innerpart_factor``."""
        rvs = self._sch.sample_partitioned_tile(loop, int(n), int(partition_pos),
                                                int(innerpart_factor), _opt_ints(decision))
        return [None if self._sch.get(rv).value == -1 else rv for rv in rvs]

    def sample_compute_location(self, block, decision=None):
        """A loop ``block`` can be computed at (a LoopRV), drawn uniformly among the candidates;
        ``compute_at`` with it moves the block there, keeps it at the root or inlines it."""
        block = self._block_rv(block)
        return self._sch.sample_compute_location(block, _opt_int(decision))

    def remove_rv(self, rand_var):
        """Forget a handle; using it afterwards fails."""
        self._sch.remove_rv(rand_var)

    def enter_postproc(self):
        """Mark the start of post-processing in the trace."""
        self._sch.enter_postproc()

    # ---- arguments ----

    def _normalize_block_arg(self, block):
        """A block handle from a handle or a block name (``sch.compute_inline("B")``)."""
        if isinstance(block, str):
            return self.get_block(block)
        return block

    def _normalize_buffer_arg(self, block, buffer, required_buffer_type=None):
        """``(kind, index, buffer)`` of a buffer of ``block`` given as an index (of
        ``required_buffer_type``), a ``("read"|"write", index)`` pair, a name or a Buffer."""
        block_obj = self.get(block)
        regions = {"read": block_obj.reads, "write": block_obj.writes}
        if isinstance(buffer, int) and not isinstance(buffer, bool):
            if required_buffer_type is None:
                raise TesseraTypeError("a buffer index needs 'read' or 'write': pass (\"read\", i) or (\"write\", i)")
            buffer = (required_buffer_type, buffer)
        if isinstance(buffer, (str, _core.Buffer)):
            kinds = [required_buffer_type] if required_buffer_type else ["read", "write"]
            found = {}
            for kind in kinds:
                for i, region in enumerate(regions[kind]):
                    b = region.buffer
                    if (b.name == buffer) if isinstance(buffer, str) else b.same_as(buffer):
                        found.setdefault(id(b), (kind, i, b))
            name = buffer if isinstance(buffer, str) else buffer.name
            role = f" {required_buffer_type}" if required_buffer_type else ""
            if not found:
                raise BufferArgumentError(f"Could not find{role} buffer '{name}' in block '{block_obj.name_hint}'")
            if len(found) > 1:
                raise BufferArgumentError(f"Multiple{role} buffers named '{name}' in block '{block_obj.name_hint}'")
            kind, index, buf = next(iter(found.values()))
        elif isinstance(buffer, tuple) and len(buffer) == 2:
            kind, index = buffer
            if kind not in ("read", "write"):
                raise BufferArgumentError(f"buffer_index_type must be 'read' or 'write', not {kind!r}")
            if not 0 <= int(index) < len(regions[kind]):
                raise BufferArgumentError(f"buffer_index {index} is out of range: block {block_obj.name_hint} has "
                                        f"{len(regions[kind])} {kind} buffers")
            index = int(index)
            buf = regions[kind][index].buffer
        else:
            raise TesseraTypeError(f"Invalid type for argument 'buffer': {type(buffer).__name__}")
        if required_buffer_type is not None and kind != required_buffer_type:
            raise TesseraValueError(f"Expected buffer to be a {required_buffer_type} buffer, but {buf.name} is a "
                                    f"{kind} buffer of the block")
        return kind, index, buf

    # ---- lookup ----

    def get_block(self, name, func_name=None):
        """The block named ``name`` (in ``func_name``, or the function worked on)."""
        return self._sch.get_block(name, func_name)

    def get_loops(self, block):
        """The loops above ``block`` up to its enclosing block, outermost first."""
        return self._sch.get_loops(self._normalize_block_arg(block))

    def get_child_blocks(self, block_or_loop):
        """The blocks directly under a block or loop."""
        return self._sch.get_child_blocks(self._normalize_block_arg(block_or_loop))

    def get_producers(self, block):
        """The blocks of the same scope whose output ``block`` reads."""
        return self._sch.get_producers(self._normalize_block_arg(block))

    def get_consumers(self, block):
        """The blocks of the same scope that read ``block``'s output."""
        return self._sch.get_consumers(self._normalize_block_arg(block))

    def get_output_blocks(self, scope_block):
        """The blocks under ``scope_block`` that write buffers allocated outside it."""
        return self._sch.get_output_blocks(self._normalize_block_arg(scope_block))

    # ---- loops ----

    def split(self, loop, factors, preserve_unit_iters=True, disable_predication=False):
        """Split ``loop`` into ``len(factors)`` nested loops; one factor may be ``None``.

        >>> i0, i1 = sch.split(i, factors=[None, 8])
        """
        if not isinstance(factors, (list, tuple)):
            raise TesseraTypeError("split: factors must be a list")
        return self._sch.split(loop, list(factors), preserve_unit_iters, disable_predication)

    def loop_partition(self, loop, factors, preserve_unit_iters=True):
        """Partition ``loop`` into consecutive loops over parts of its range of the sizes in
        ``factors`` (one may be ``None``: the rest; without one the rest is one more part).
        Each part runs in a block ``<block>_<loop><i>_partition`` under a block
        ``<block>_<loop>_common``; returns the loops of the parts.

        >>> i0, i1, i2 = sch.loop_partition(i, factors=[2, 64])
        """
        if not isinstance(factors, (list, tuple)):
            raise TesseraTypeError("loop_partition: factors must be a list")
        return self._sch.loop_partition(loop, list(factors), bool(preserve_unit_iters))

    def fuse(self, *loops, preserve_unit_iters=True):
        """Fuse a chain of nested loops (outermost first) into one."""
        return self._sch.fuse(_flatten(loops), preserve_unit_iters)

    def reorder(self, *ordered_loops):
        """Put the given loops of one chain in the given order."""
        self._sch.reorder(_flatten(ordered_loops))

    def add_unit_loop(self, block_or_loop):
        """Add a loop of extent 1 above a block or loop; returns it."""
        return self._sch.add_unit_loop(self._normalize_block_arg(block_or_loop))

    def parallel(self, loop):
        """Make ``loop`` a parallel loop."""
        self._sch.parallel(loop)

    def vectorize(self, loop):
        """Make ``loop`` a vectorized loop."""
        self._sch.vectorize(loop)

    def unroll(self, loop):
        """Make ``loop`` an unrolled loop."""
        self._sch.unroll(loop)

    def bind(self, loop, thread_axis):
        """Bind ``loop`` to a thread axis (``"threadIdx.x"``, ``"blockIdx.y"``, ...)."""
        self._sch.bind(loop, thread_axis)

    # ---- caches ----

    def _buffer_index(self, block, buffer, kind):
        if isinstance(buffer, int) and not isinstance(buffer, bool):
            return buffer
        return self._normalize_buffer_arg(block, buffer, kind)[1]

    def cache_read(self, block, read_buffer_index, storage_scope, consumer_blocks=None):
        """Read a buffer through a copy in ``storage_scope``; returns the copy block."""
        block = self._normalize_block_arg(block)
        consumers = [self._normalize_block_arg(b) for b in consumer_blocks or []]
        index = self._buffer_index(block, read_buffer_index, "read")
        return self._sch.cache_read(block, index, storage_scope, consumers)

    def cache_write(self, block, write_buffer_index, storage_scope, consumer_blocks=None):
        """Write a buffer through a copy in ``storage_scope``; returns the copy block."""
        block = self._normalize_block_arg(block)
        consumers = [self._normalize_block_arg(b) for b in consumer_blocks or []]
        index = self._buffer_index(block, write_buffer_index, "write")
        return self._sch.cache_write(block, index, storage_scope, consumers)

    def cache_inplace(self, block, read_buffer_index, storage_scope):
        """Route a buffer the block both reads and writes through a cache in ``storage_scope``:
        a copy in right before the block and a copy out right after it. Returns the two copy
        blocks.

        >>> copy_in, copy_out = sch.cache_inplace("ext_call", 0, "local")
        """
        block = self._normalize_block_arg(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return list(self._sch.cache_inplace(block, _int_value(index, "read_buffer_index"), storage_scope))

    def cache_index(self, block, storage_scope, cse_thresh=0):
        """Precompute the index expressions the block evaluates at least ``cse_thresh`` times
        (every pure one for 0) into buffers in ``storage_scope``, each by a loop nest placed
        before the block; the block then reads them. Returns the blocks of those nests.

        >>> index_blocks = sch.cache_index("resize", "global", cse_thresh=4)
        """
        block = self._normalize_block_arg(block)
        thresh = _int_value(cse_thresh, "cse_thresh")
        if thresh < 0:
            raise TesseraValueError(f"cse_thresh must be 0 or more, but it is {thresh}")
        return list(self._sch.cache_index(block, storage_scope, thresh))

    # ---- compute location ----

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1):
        """Move a producer under ``loop``, computing just what the consumers there need."""
        self._sch.compute_at(self._normalize_block_arg(block), loop, preserve_unit_loops, index)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1):
        """Move a consumer under ``loop``, consuming just what the producers there give."""
        self._sch.reverse_compute_at(self._normalize_block_arg(block), loop, preserve_unit_loops, index)

    def compute_inline(self, block):
        """Substitute a block's value into its consumers and remove it."""
        self._sch.compute_inline(self._normalize_block_arg(block))

    def reverse_compute_inline(self, block):
        """Substitute a consumer into its producer and remove it."""
        self._sch.reverse_compute_inline(self._normalize_block_arg(block))

    # ---- reductions ----

    def decompose_reduction(self, block, loop):
        """Move the init of a reduction into a block placed before ``loop``; returns it."""
        return self._sch.decompose_reduction(self._normalize_block_arg(block), loop)

    def rfactor(self, loop, factor_axis):
        """Factorize a reduction over ``loop``; returns the rfactor block."""
        return self._sch.rfactor(loop, factor_axis)

    # ---- buffers ----

    def storage_align(self, block, buffer_index, axis, factor, offset):
        """Pad a written buffer so that ``stride[axis] % factor == offset``."""
        block = self._normalize_block_arg(block)
        index = self._buffer_index(block, buffer_index, "write")
        self._sch.storage_align(block, index, axis, factor, offset)

    def rolling_buffer(self, block, write_buffer_index):
        """Make a buffer the block writes in overlapping windows of a tiled loop a circular
        buffer of the window's size along its rolling axis (indices modulo the window); the
        block then skips the overlap computed in the previous tile (a predicate).

        >>> sch.compute_at(sch.get_block("pool_in"), row_outer)
        >>> sch.rolling_buffer("pool_in", 0)
        """
        block = self._normalize_block_arg(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        self._sch.rolling_buffer(block, _int_value(index, "write_buffer_index"))

    def set_scope(self, block, buffer_index, storage_scope):
        """Move a buffer the block writes to another storage scope (``"shared"``, ``"local"``, ...)."""
        block = self._normalize_block_arg(block)
        index = self._buffer_index(block, buffer_index, "write")
        self._sch.set_scope(block, index, storage_scope)

    def transform_layout(self, block, buffer, index_map, pad_value=None, *,
                         assume_injective_transform=False):
        """Rewrite a buffer's layout with a bijective affine map.

        >>> sch.transform_layout(b, ("write", 0), lambda i, j: (j, i))
        """
        block = self._normalize_block_arg(block)
        if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
            kind, index, target = self._normalize_buffer_arg(block, buffer)
        else:
            kind, index = self._find_buffer(block, buffer)
            target = (self.get(block).reads if kind == "read" else self.get(block).writes)[index].buffer
        separators = []
        if not isinstance(index_map, IndexMap):
            index_map, separators = _index_map_of(index_map, target)
        index_map = self._resolve_map_rvs(index_map)
        pad_value = self._resolve_map_rvs(_pad_value_map(pad_value, index_map, target))
        self._sch.transform_layout(block, kind, index, index_map, pad_value,
                                   bool(assume_injective_transform))
        if separators:
            # As TVM: IndexMap.AXIS_SEPARATOR in the map's result sets the separators after.
            self._sch.set_axis_separator(block, kind, index, separators)

    def set_axis_separator(self, block, buffer, axis_separators):
        """Set the axis separators of a buffer the block reads or writes (``("read", i)``,
        ``("write", i)``, a name or a Buffer): the axes where a new physical axis starts when
        the buffer is flattened. Match buffers over it follow.

        >>> sch.set_axis_separator(sch.get_block("B"), ("write", 0), [1])
        """
        block = self._normalize_block_arg(block)
        if isinstance(buffer, list) and len(buffer) == 2:
            buffer = tuple(buffer)
        if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
            kind, index, _ = self._normalize_buffer_arg(block, buffer)
        else:
            kind, index = self._find_buffer(block, buffer)
        if not isinstance(axis_separators, (list, tuple)):
            raise TesseraTypeError(f"set_axis_separator: axis_separators must be a list of ints, got {axis_separators!r}")
        seps = [_int_value(s, "axis_separators") for s in axis_separators]
        self._sch.set_axis_separator(block, kind, int(index), seps)

    def _find_buffer(self, block, buffer):
        for kind in ("write", "read"):
            try:
                return kind, self._buffer_index(block, buffer, kind)
            except TesseraValueError:
                continue
        raise TesseraValueError(f"the block does not access the buffer {buffer!r}")

    # ---- annotations ----

    def annotate(self, block_or_loop, ann_key, ann_val):
        """Set the annotation ``ann_key`` of a block or loop."""
        self._sch.annotate(self._normalize_block_arg(block_or_loop), ann_key, ann_val)

    def unannotate(self, block_or_loop, ann_key):
        """Remove the annotation ``ann_key`` of a block or loop."""
        self._sch.unannotate(self._normalize_block_arg(block_or_loop), ann_key)

    # ---- blockize ----

    def blockize(self, target, preserve_unit_iters=True):
        """Wrap the subtree of a loop (or consecutive sibling blocks) in a new block."""
        if isinstance(target, (list, tuple)):
            return self._sch.blockize_blocks([self._normalize_block_arg(b) for b in target], preserve_unit_iters)
        return self._sch.blockize(target, preserve_unit_iters)

    def tensorize(self, block_or_loop, tensor_intrin, preserve_unit_iters=True):
        """Replace the computation of a block, or of the subtree of a loop (blockized first), by
        the implementation of the registered tensor intrinsic ``tensor_intrin``; the block must
        compute what the intrinsic's description does (a ScheduleError otherwise).

        >>> i0, i1 = sch.split(sch.get_loops(b)[-1], factors=[None, 8])
        >>> sch.tensorize(i1, "fma_8_f32_avx2")
        """
        from .tensor_intrin import TensorIntrin

        if isinstance(tensor_intrin, TensorIntrin):
            raise TesseraTypeError("tensorize takes the name of a registered TensorIntrin, not the object")
        if not isinstance(tensor_intrin, str):
            raise TesseraTypeError(f"tensor_intrin must be a str, got {type(tensor_intrin).__name__}")
        self._sch.tensorize(self._normalize_block_arg(block_or_loop), tensor_intrin,
                            bool(preserve_unit_iters))

    # ---- primitives of TVM v0.23's surface ----

    def _block_rv(self, block):
        """A block handle, or the block named ``block`` in the function worked on."""
        return self.get_block(block) if isinstance(block, str) else block

    def unsafe_set_dtype(self, block, buffer_index, dtype):
        """Change the element type of a buffer the block writes (allocated in the function):
        stores cast to ``dtype`` and loads cast back. Unsafe: values may lose precision.

        >>> sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
        """
        block = self._block_rv(block)
        self._sch.unsafe_set_dtype(block, _int_value(buffer_index, "buffer_index"), str(dtype))

    def unsafe_hide_buffer_access(self, block, buf_type, buf_index_array):
        """Remove the read (``buf_type="read"``) or write regions at ``buf_index_array`` from
        the block's region lists (e.g. the index buffers of an indirect access, so that tensorize
        can match the rest). Unsafe: dependence analysis no longer sees those accesses.

        >>> sch.unsafe_hide_buffer_access(sch.get_block("B"), "read", [1])
        """
        block = self._block_rv(block)
        if not isinstance(buf_type, str):
            raise TesseraTypeError(f"buf_type must be \"read\" or \"write\", got {type(buf_type).__name__}")
        if not isinstance(buf_index_array, (list, tuple)):
            raise TesseraTypeError(
                f"buf_index_array must be a list of ints, got {type(buf_index_array).__name__}")
        indices = [_int_value(i, "buf_index_array") for i in buf_index_array]
        self._sch.unsafe_hide_buffer_access(block, buf_type, indices)

    def annotate_buffer_access(self, block, buffer_index, buf_type, gen_new_ranges):
        """Set the region the block reads (``buf_type="read"``) or writes of its buffer
        ``buffer_index``: ``gen_new_ranges`` maps the block iterators to one ``(begin, end)``
        pair (or a single index) per dimension. Marks the block ``explicit_read_region`` /
        ``explicit_write_region`` so that later passes keep the region.

        >>> sch.annotate_buffer_access("blur", 0, "read", lambda y, x: ((y - 2, y + 3), (x - 2, x + 3)))
        """
        block = self._block_rv(block)
        from ...tir.expr_ops import convert

        if buf_type not in ("read", "write"):
            raise TesseraValueError(f"Invalid buf_type: {buf_type}. Expected 'read' or 'write'.")
        iter_vars = [iv.var for iv in self.get(block).iter_vars]
        spec = gen_new_ranges(*iter_vars)
        bounds = []
        for rng in spec:
            if isinstance(rng, (tuple, list)):
                if len(rng) != 2:
                    raise TesseraValueError(
                        "a range in gen_new_ranges must be a (begin, end) pair")
                bounds.extend(convert(e, "int32") for e in rng)
            elif isinstance(rng, (_core.PrimExpr, int)):
                begin = convert(rng, "int32")
                bounds.extend([begin, begin + 1])
            else:
                raise TesseraTypeError(f"gen_new_ranges must give a PrimExpr or a (begin, end) pair per dimension, not {type(rng)}")
        self._sch.annotate_buffer_access(block, _int_value(buffer_index, "buffer_index"), buf_type,
                                         IndexMap(iter_vars, bounds))

    def decompose_padding(self, block, loop):
        """Split a padding block (a store of ``if_then_else(in_bound, value, pad)``) into a block
        filling the buffer with the constant pad, placed before ``loop``, and a block computing
        the in-bound part over the in-bound domain only. Returns the constant block.

        >>> sch.decompose_padding(sch.get_block("pad"), sch.get_loops(sch.get_block("pad"))[0])
        """
        block = self._block_rv(block)
        return self._sch.decompose_padding(block, loop)

    def fuse_reduction_epilogue(self, reduction_block, epilogue_block):
        """Fuse an epilogue of a reduction's result into the reduction: a bias add
        (``out = x + bias``), a bias + ReLU (``max(x + bias, 0)``) or a clipping
        (``min(max(x, lower), upper)``). The reduction then starts from the epilogue in its init
        and writes the epilogue's output. For ReLU and clipping the epilogue then applies at
        every reduction step, which changes results where the clamp binds.

        >>> sch.fuse_reduction_epilogue(sch.get_block("matmul"), sch.get_block("bias_add"))
        """
        reduction_block = self._block_rv(reduction_block)
        epilogue_block = self._block_rv(epilogue_block)
        self._sch.fuse_reduction_epilogue(reduction_block, epilogue_block)

    def pad_einsum(self, block, padding):
        """Pad the iteration space of an Einsum block (every access at block iterators) so that
        each iterator's extent is a multiple of its factor in ``padding``: operands that need it
        are first copied into zero-padded ``<name>_pad`` buffers, and the output is written to a
        padded buffer copied back after.

        >>> sch.pad_einsum(sch.get_block("C"), [32, 32, 32])
        """
        block = self._block_rv(block)
        self._sch.pad_einsum(block, [_int_value(p, "padding") for p in padding])

    def read_at(self, loop, block, read_buffer_index, storage_scope):
        """Copy the region of a buffer that the blocks under ``loop`` read in one of its
        iterations into a buffer in ``storage_scope``, by a block (annotated ``auto_copy``)
        placed in the loop body before the first reader; returns the copy block.

        >>> sch.read_at(k0, sch.get_block("C"), 1, "shared")
        """
        block = self._block_rv(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self._sch.read_at(loop, block, index, storage_scope)

    def write_at(self, loop, block, write_buffer_index, storage_scope):
        """Like :meth:`read_at` for a written buffer: the copy back goes after the last writer
        under ``loop``; returns the copy block."""
        block = self._block_rv(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        return self._sch.write_at(loop, block, index, storage_scope)

    def can_decompose_padding(self, block, loop):
        """Whether :meth:`decompose_padding` applies to ``block`` at ``loop`` (the schedule and
        its trace stay as they are)."""
        block = self._block_rv(block)
        return self._sch.can_decompose_padding(block, loop)

    def merge(self, *loops):
        """Merge loop nests of equal extents under one scope into one nest whose innermost
        merged loop runs their bodies in order; returns that loop.

        >>> sch.merge(sch.get_loops(c)[0], sch.get_loops(d)[0])
        """
        return self._sch.merge(_flatten(loops))

    def reindex_cache_read(self, block, read_buffer_index, storage_scope, index_map):
        """Read a buffer (accessed at one point) through a cache in ``storage_scope`` indexed by
        ``index_map`` of the block's iterators; returns the copy block.

        >>> sch.reindex_cache_read(c, 0, "shared", lambda i, j: (j, i // 2, i % 2))
        """
        block = self._block_rv(block)
        index = self._buffer_index(block, read_buffer_index, "read")
        return self._sch.reindex_cache_read(block, index, storage_scope,
                                            self._block_index_map(block, index_map))

    def reindex_cache_write(self, block, write_buffer_index, storage_scope, index_map):
        """Write a buffer (accessed at one point) through a cache in ``storage_scope`` indexed by
        ``index_map`` of the block's iterators; returns the copy block.

        >>> sch.reindex_cache_write(b, 0, "shared", lambda i, j: (j, i))
        """
        block = self._block_rv(block)
        index = self._buffer_index(block, write_buffer_index, "write")
        return self._sch.reindex_cache_write(block, index, storage_scope,
                                             self._block_index_map(block, index_map))

    def _block_index_map(self, block, index_map):
        if isinstance(index_map, IndexMap):
            return index_map
        if not callable(index_map):
            raise TesseraTypeError("index_map must be an IndexMap or a function of the iterators")
        iters = self.get(block).iter_vars
        names = list(inspect.signature(index_map).parameters)
        if len(names) != len(iters):
            variables = [_core.Var(f"i{k}", "int32") for k in range(len(names))]
        else:
            variables = [_core.Var(name, iv.var.dtype) for name, iv in zip(names, iters)]
        result = index_map(*variables)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return IndexMap(variables, [_const(e, "int32") for e in result])

    def transform_block_layout(self, block, index_map):
        """Re-lay a block's iteration space by a bijective affine map of its iterators (each new
        iterator a fusion of old ones); the block gets new iterators and a new loop nest.

        >>> sch.transform_block_layout("relu", lambda row, col: (row * 64 + col,))
        """
        block = self._block_rv(block)
        self._sch.transform_block_layout(
            block, self._resolve_map_rvs(self._block_index_map(block, index_map)))

    def reindex(self, block, buffer):
        """Copy a buffer the block accesses at one index tuple to (``("read", i)``) or from
        (``("write", i)``) a new buffer indexed by the block iterators of that tuple; the block
        then accesses the new buffer at its iterators. Returns the copy block.

        >>> sch.reindex(sch.get_block("B"), ("read", 0))
        """
        block = self._block_rv(block)
        kind, index = self._buffer_kind_index(block, buffer)
        return self._sch.reindex(block, kind, index)

    def _buffer_kind_index(self, block, buffer):
        if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
            return buffer[0], self._buffer_index(block, buffer[1], buffer[0])
        return self._find_buffer(block, buffer)

    def reorder_block_iter_var(self, block, new_order):
        """Permute a block's iterators (and their bindings): ``new_order[i]`` is the old index
        of the new i-th iterator.

        >>> sch.reorder_block_iter_var(sch.get_block("C"), [2, 1, 0])
        """
        block = self._block_rv(block)
        self._sch.reorder_block_iter_var(block, [_int_value(i, "new_order") for i in new_order])


class _UnknownHandleError(TesseraValueError, IndexError):
    """A handle the schedule does not know: both a ValueError and, as TVM's, an IndexError."""


def _seed_value(seed):
    if seed is None:
        return -1
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TesseraTypeError(f"seed must be an int or None, not {type(seed).__name__}")
    if seed < -1:
        raise TesseraValueError("Random seed must be non-negative")
    return seed


def _number(value):
    return value.value if isinstance(value, (_core.IntImm, _core.FloatImm)) else value


def _int_value(value, what):
    value = _number(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TesseraTypeError(f"{what} must be ints, not {type(value).__name__}")
    return value


def _opt_int(decision):
    return None if decision is None else _int_value(decision, "decision")


def _opt_ints(decision):
    return None if decision is None else [_int_value(d, "decision") for d in decision]


def _index_map_params(func, ndim, what):
    """The index names a map function takes for ``ndim`` indices: positional parameters, then
    ``*args`` (as many as the others leave), then keyword-only parameters (as TVM)."""
    positional, var_name, keywords = [], None, []
    for name, p in inspect.signature(func).parameters.items():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(name)
        elif p.kind == p.VAR_POSITIONAL:
            var_name = name
        elif p.kind == p.KEYWORD_ONLY:
            keywords.append(name)
    rest = ndim - len(positional) - len(keywords)
    if var_name is None and rest != 0 or rest < 0:
        raise TesseraValueError(
            f"{what} takes {len(positional) + len(keywords)} indices but the buffer has {ndim} dimensions")
    var_names = [f"{var_name}_{i}" for i in range(rest)] if var_name else []
    return positional, var_names, keywords


def _call_index_func(func, variables, positional, var_names, keywords):
    n, m = len(positional), len(var_names)
    kwargs = dict(zip(keywords, variables[n + m:]))
    return func(*variables[:n + m], **kwargs)


def _index_map_of(func, buffer):
    """An IndexMap from a lambda over the buffer's indices."""
    if not callable(func):
        raise TesseraTypeError("index_map must be an IndexMap or a function of the indices")
    positional, var_names, keywords = _index_map_params(func, len(buffer.shape), "index_map")
    names = positional + var_names + keywords
    variables = [_core.Var(name, shape.dtype) for name, shape in zip(names, buffer.shape)]
    result = _call_index_func(func, variables, positional, var_names, keywords)
    if not isinstance(result, (list, tuple)):
        result = [result]
    final, separators = [], []
    for e in result:
        if e is AXIS_SEPARATOR:
            separators.append(len(final))
        else:
            final.append(_const(e, "int32"))
    return IndexMap(variables, final), separators


def _pad_value_map(pad_value, index_map, buffer):
    """transform_layout's pad_value as an IndexMap over the transformed indices (as TVM): a
    function of them, an IndexMap, or a constant (a Python number takes the buffer's dtype)."""
    if pad_value is None or isinstance(pad_value, IndexMap):
        return pad_value
    out = list(index_map.final_indices)
    dtype = out[0].dtype if out else "int32"
    if callable(pad_value):
        positional, var_names, keywords = _index_map_params(pad_value, len(out), "pad_value")
        names = positional + var_names + keywords
        variables = [_core.Var(name, dtype) for name in names]
        value = _call_index_func(pad_value, variables, positional, var_names, keywords)
        if isinstance(value, (list, tuple)):
            values = [_const(v, buffer.dtype) for v in value]
        else:
            values = [_const(value, buffer.dtype)]
        return IndexMap(variables, values)
    if isinstance(pad_value, bool) or not isinstance(pad_value, (int, float, _core.PrimExpr)):
        raise TesseraTypeError(f"pad_value must be a number, an expression or a function of the "
                               f"transformed indices, got {pad_value!r}")
    if isinstance(pad_value, int) and "float" in buffer.dtype:
        value = _core.IntImm("int32", pad_value)  # TVM: an int for a float buffer mismatches
    else:
        value = _const(pad_value, buffer.dtype)
    variables = [_core.Var(f"i{k}", dtype) for k in range(len(out))]
    return IndexMap(variables, [value])


class _AxisSeparator:
    """``IndexMap.AXIS_SEPARATOR``: put in the result of a transform_layout map to start a new
    physical axis there (``lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j]``)."""

    def __repr__(self):
        return "IndexMap.AXIS_SEPARATOR"


AXIS_SEPARATOR = _AxisSeparator()
IndexMap.AXIS_SEPARATOR = AXIS_SEPARATOR
