"""Schedule instructions in TVM's form: an :class:`InstructionKind` (``"Split"``), ``inputs``
(handles and the values computed from them), ``attrs`` (constants) and ``outputs``.

The schedule records its calls in C++ as keyword arguments (``split(loop=..., factors=...)``);
this module converts between the two forms, kind by kind.

>>> inst = Instruction(InstructionKind.get("GetBlock"), inputs=[], attrs=["B", "main"],
...                    outputs=[BlockRV()])
"""

import re

from ... import _core
from ...error import TesseraTypeError, TesseraValueError

_VARIADIC = object()  # marks an input list spliced into ``inputs`` (split's factors, fuse's loops)


class InstructionKind:
    """A kind of instruction: its TVM name, the schedule method it calls and how its keyword
    arguments divide into inputs and attributes. ``InstructionKind.get("Split")``."""

    _registry = {}
    _by_method = {}

    def __init__(self, name, method, inputs=(), attrs=(), returns_list=False, is_pure=False,
                 has_decision=False, order=None):
        self.name = name
        # The keyword order of the schedule method (the order the trace prints).
        self.order = tuple(order) if order else tuple(k.lstrip("*") for k in (*inputs, *attrs))
        self.method = method
        self.input_keys = tuple(inputs)
        self.attr_keys = tuple(attrs)
        self.returns_list = returns_list
        self.is_pure = is_pure
        self.has_decision = has_decision

    @classmethod
    def register(cls, *args, **kwargs):
        kind = cls(*args, **kwargs)
        cls._registry[kind.name] = kind
        cls._by_method[kind.method] = kind
        return kind

    @classmethod
    def get(cls, name):
        """The kind named ``name`` (TVM's name: "GetBlock", "Split", ...)."""
        if name not in cls._registry:
            raise TesseraValueError(f"unknown instruction kind '{name}'; known kinds: " + ", ".join(sorted(cls._registry)))
        return cls._registry[name]

    @classmethod
    def _of_method(cls, method, args):
        if method in cls._by_method:
            return cls._by_method[method]
        # A primitive without an entry (added in C++ later): handles are inputs, the rest attrs.
        name = "".join(part.capitalize() for part in method.split("_"))
        inputs = [k for k, v in args if _has_rv(v)]
        attrs = [k for k, v in args if not _has_rv(v)]
        kind = cls(name, method, inputs, attrs, order=[k for k, _ in args])
        cls._registry.setdefault(name, kind)
        cls._by_method[method] = kind
        return kind

    def same_as(self, other):
        return self == other

    def __eq__(self, other):
        return isinstance(other, InstructionKind) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"InstructionKind({self.name!r})"

    # ---- conversion to and from keyword arguments ----

    def split_args(self, args):
        """(inputs, attrs) from the recorded keyword arguments."""
        values = dict(args)
        if self.name == "TransformLayout":
            kind, index = values["buffer"]
            return ([values["block"], values["index_map"]],
                    [index, 0 if kind == "read" else 1, values.get("pad_value"),
                     values.get("assume_injective_transform", False)])
        if self.name == "ReIndex":
            kind, index = values["buffer"]
            return [values["block"]], [index, 0 if kind == "read" else 1]
        if self.name == "SetAxisSeparator":
            kind, index = values["buffer"]
            return [values["block"]], [index, 0 if kind == "read" else 1, values["axis_separators"]]
        inputs = []
        for key in self.input_keys:
            if key.startswith("*"):
                inputs.extend(values.get(key[1:]) or [])
            else:
                inputs.append(values.get(key))
        attrs = [values.get(key) for key in self.attr_keys]
        return inputs, attrs

    def join_args(self, inputs, attrs):
        """The keyword arguments of the schedule method, from inputs and attrs."""
        inputs, attrs = list(inputs), [_plain(a) for a in attrs]
        if self.name == "TransformLayout":
            if len(inputs) != 2 or len(attrs) < 3:
                raise TesseraValueError("TransformLayout takes inputs [block, index_map] and attrs "
                                        "[buffer_index, buffer_index_type, pad_value, ...]")
            return [("block", inputs[0]), ("buffer", ["read" if attrs[1] == 0 else "write", attrs[0]]),
                    ("index_map", inputs[1]), ("pad_value", attrs[2]),
                    ("assume_injective_transform", bool(attrs[3]) if len(attrs) > 3 else False)]
        if self.name == "ReIndex":
            if len(inputs) != 1 or len(attrs) != 2:
                raise TesseraValueError("ReIndex takes inputs [block] and attrs [buffer_index, buffer_index_type]")
            return [("block", inputs[0]), ("buffer", ["read" if attrs[1] == 0 else "write", attrs[0]])]
        if self.name == "SetAxisSeparator":
            if len(inputs) != 1 or len(attrs) != 3:
                raise TesseraValueError("SetAxisSeparator takes inputs [block] and attrs "
                                        "[buffer_index, buffer_index_type, axis_separators]")
            return [("block", inputs[0]), ("buffer", ["read" if attrs[1] == 0 else "write", attrs[0]]),
                    ("axis_separators", attrs[2])]
        args = []
        fixed = [k for k in self.input_keys if not k.startswith("*")]
        for i, key in enumerate(self.input_keys):
            if key.startswith("*"):
                args.append((key[1:], inputs[i:]))
                break
            if i >= len(inputs):
                raise TesseraValueError(f"{self.name} takes {len(fixed)} inputs, got {len(inputs)}")
            args.append((key, inputs[i]))
        else:
            if len(inputs) != len(self.input_keys):
                raise TesseraValueError(f"{self.name} takes {len(self.input_keys)} inputs, got {len(inputs)}")
        if len(attrs) != len(self.attr_keys):
            raise TesseraValueError(f"{self.name} takes {len(self.attr_keys)} attrs, got {len(attrs)}")
        args += list(zip(self.attr_keys, attrs))
        rank = {k: i for i, k in enumerate(self.order)}
        args.sort(key=lambda kv: rank.get(kv[0], len(rank)))
        return args


def _has_rv(value):
    if isinstance(value, _core.ScheduleRV):
        return True
    return isinstance(value, (list, tuple)) and any(_has_rv(v) for v in value)


def _plain(value):
    """A constant attribute as the schedule records it: IntImm -> int, T.bool -> bool."""
    if isinstance(value, _core.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class Instruction:
    """One schedule call: ``kind``, ``inputs``, ``attrs``, ``outputs``."""

    def __init__(self, kind, inputs, attrs, outputs):
        if isinstance(kind, str):
            kind = InstructionKind.get(kind)
        if not isinstance(kind, InstructionKind):
            raise TesseraTypeError(f"Instruction kind must be an InstructionKind, got {type(kind).__name__}")
        self.kind = kind
        self.inputs = list(inputs)
        self.attrs = list(attrs)
        self.outputs = list(outputs)

    def same_as(self, other):
        return self is other

    def __str__(self):
        """The call as Python with every handle written ``_``: ``_, _ = sch.get_loops(block=_)``."""
        from .trace import Trace

        line = Trace([self], {}).as_python()[0]
        parts = re.split(r'("(?:[^"\\]|\\.)*")', line)  # leave string literals alone
        return "".join(p if i % 2 else re.sub(r"\b[blv]\d+\b", "_", p) for i, p in enumerate(parts))

    def __repr__(self):
        return (f"Instruction({self.kind.name}, inputs={self.inputs!r}, attrs={self.attrs!r}, "
                f"outputs={len(self.outputs)})")


def _register_all():
    r = InstructionKind.register
    r("GetBlock", "get_block", [], ["name", "func_name"], is_pure=True)
    r("GetLoops", "get_loops", ["block"], returns_list=True, is_pure=True)
    r("GetChildBlocks", "get_child_blocks", ["block_or_loop"], returns_list=True, is_pure=True)
    r("GetProducers", "get_producers", ["block"], returns_list=True, is_pure=True)
    r("GetConsumers", "get_consumers", ["block"], returns_list=True, is_pure=True)
    r("GetOutputBlocks", "get_output_blocks", ["scope_block"], returns_list=True, is_pure=True)
    r("Split", "split", ["loop", "*factors"], ["preserve_unit_iters", "disable_predication"], returns_list=True)
    r("LoopPartition", "loop_partition", ["loop", "*factors"], ["preserve_unit_iters"], returns_list=True)
    r("Fuse", "fuse", ["*loops"], ["preserve_unit_iters"])
    r("Reorder", "reorder", ["*ordered_loops"])
    r("AddUnitLoop", "add_unit_loop", ["block_or_loop"])
    r("Parallel", "parallel", ["loop"])
    r("Vectorize", "vectorize", ["loop"])
    r("Unroll", "unroll", ["loop"])
    r("Bind", "bind", ["loop"], ["thread_axis"])
    r("CacheRead", "cache_read", ["block", "consumer_blocks"], ["read_buffer_index", "storage_scope"],
      order=["block", "read_buffer_index", "storage_scope", "consumer_blocks"])
    r("CacheWrite", "cache_write", ["block", "consumer_blocks"], ["write_buffer_index", "storage_scope"],
      order=["block", "write_buffer_index", "storage_scope", "consumer_blocks"])
    r("CacheInplace", "cache_inplace", ["block"], ["read_buffer_index", "storage_scope"], returns_list=True)
    r("CacheIndex", "cache_index", ["block"], ["storage_scope", "cse_thresh"], returns_list=True)
    r("ComputeAt", "compute_at", ["block", "loop"], ["preserve_unit_loops", "index"])
    r("ReverseComputeAt", "reverse_compute_at", ["block", "loop"], ["preserve_unit_loops", "index"])
    r("ComputeInline", "compute_inline", ["block"])
    r("ReverseComputeInline", "reverse_compute_inline", ["block"])
    r("DecomposeReduction", "decompose_reduction", ["block", "loop"])
    r("RFactor", "rfactor", ["loop"], ["factor_axis"])
    r("StorageAlign", "storage_align", ["block"], ["buffer_index", "axis", "factor", "offset"])
    r("SetScope", "set_scope", ["block"], ["buffer_index", "storage_scope"])
    r("TransformLayout", "transform_layout", ["block", "index_map"],
      ["buffer_index", "buffer_index_type", "pad_value", "assume_injective_transform"])
    r("Annotate", "annotate", ["block_or_loop", "ann_val"], ["ann_key"],
      order=["block_or_loop", "ann_key", "ann_val"])
    r("Unannotate", "unannotate", ["block_or_loop"], ["ann_key"])
    r("Blockize", "blockize", ["target"], ["preserve_unit_iters"])
    r("RollingBuffer", "rolling_buffer", ["block"], ["write_buffer_index"])
    r("Tensorize", "tensorize", ["block_or_loop"], ["tensor_intrin", "preserve_unit_iters"])
    r("EnterPostproc", "enter_postproc")
    r("Merge", "merge", ["*loops"])
    r("ReIndex", "reindex", ["block"], ["buffer_index", "buffer_index_type"])
    r("PadEinsum", "pad_einsum", ["block"], ["padding"])
    r("DecomposePadding", "decompose_padding", ["block", "loop"])
    r("FuseReductionEpilogue", "fuse_reduction_epilogue", ["reduction_block", "epilogue_block"])
    r("ReadAt", "read_at", ["loop", "block"], ["read_buffer_index", "storage_scope"])
    r("WriteAt", "write_at", ["loop", "block"], ["write_buffer_index", "storage_scope"])
    r("ReindexCacheRead", "reindex_cache_read", ["block"], ["read_buffer_index", "storage_scope", "index_map"])
    r("ReindexCacheWrite", "reindex_cache_write", ["block"],
      ["write_buffer_index", "storage_scope", "index_map"])
    r("AnnotateBufferAccess", "annotate_buffer_access", ["block"], ["buffer_index", "buf_type", "gen_new_ranges"])
    r("TransformBlockLayout", "transform_block_layout", ["block"], ["index_map"])
    r("UnsafeSetDType", "unsafe_set_dtype", ["block"], ["buffer_index", "dtype"])
    r("UnsafeHideBufferAccess", "unsafe_hide_buffer_access", ["block", "buf_type", "buf_index_array"])
    r("SetAxisSeparator", "set_axis_separator", ["block"], ["buffer_index", "buffer_index_type", "axis_separators"])
    r("ReorderBlockIterVar", "reorder_block_iter_var", ["block"], ["new_order"])
    r("SampleCategorical", "sample_categorical", [], ["candidates", "probs"], is_pure=True, has_decision=True)
    r("SamplePerfectTile", "sample_perfect_tile", ["loop"], ["n", "max_innermost_factor"], returns_list=True,
      is_pure=True, has_decision=True)
    r("SamplePartitionedTile", "sample_partitioned_tile", ["loop"],
      ["n", "partition_pos", "innerpart_factor"], returns_list=True, is_pure=True, has_decision=True)
    r("SampleComputeLocation", "sample_compute_location", ["block"], is_pure=True, has_decision=True)


_register_all()

__all__ = ["Instruction", "InstructionKind"]
