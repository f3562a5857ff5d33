"""IR containers and comparisons: IRModule, GlobalVar, structural equality and hashing."""

from .. import _core
from ..error import TesseraValueError

IRModule = _core.IRModule
GlobalVar = _core.GlobalVar
Op = _core.Op
Span = _core.Span
Range = _core.Range
PrimType, PointerType = _core.PrimType, _core.PointerType
PrimExpr = _core.PrimExpr  # the base of every TIR expression (TVM's tvm.ir.PrimExpr)


def _type_script_method(text):
    def script(self, **options):
        """TVMScript of the type (``T.float32``, ``T.handle("int32", "global")``); the printing
        options of ``Object.script`` are accepted and change nothing here."""
        return text(self)

    return script


if not hasattr(PrimType, "_script_text"):
    for _cls in (PrimType, PointerType):
        _cls._script_text = _cls.script
        _cls.script = _type_script_method(_cls._script_text)
from .dtype import DataType, DataTypeCode  # noqa: E402,F401


class TupleType:
    """TVM's ``ir.TupleType``: the type of a tuple of values (``TupleType([])`` is the unit
    type, a function that returns nothing). tessera's TIR has no tuple values; the type is
    printed (``T.Tuple(T.float32, T.int32)``) and compared."""

    def __init__(self, fields):
        self.fields = list(fields)

    def script(self, **options):
        """``T.Tuple(...)`` of the field types."""
        return "T.Tuple(" + ", ".join(f.script(**options) for f in self.fields) + ")"

    __str__ = __repr__ = script

    def __eq__(self, other):
        return isinstance(other, TupleType) and self.fields == other.fields

    def __hash__(self):
        return hash(tuple(str(f) for f in self.fields))


def _as_node(value):
    """Python lists and tuples of IR objects compare as IR arrays (``block.reads`` vs ``[...]``)."""
    if hasattr(value, "_structural_node"):  # Python-held values (arith.IntConstraints, ShapeTuple)
        return value._structural_node()
    if isinstance(value, (list, tuple)):
        return _core.Array([_as_node(v) for v in value])
    if isinstance(value, str):  # a string (runtime.String) compares as a StringImm
        return _core.StringImm(value)
    return value


def _is_tensor(value):
    from ..runtime.ndarray import NDArray

    return isinstance(value, NDArray)


def _iter_map_equal(a, b):
    """Iterator-map nodes (tessera.arith.IterSumExpr, ...) compare by their own equality;
    None when neither side is one."""
    if hasattr(a, "_iter_map_equal"):
        return a._iter_map_equal(b)
    if hasattr(b, "_iter_map_equal"):
        return b._iter_map_equal(a)
    return None


def structural_equal(a, b, map_free_vars=False):
    """Whether two IR objects are the same program up to the names of bound variables. Two
    runtime tensors (NDArrays) are equal when their dtype, shape and contents are, as in TVM.
    As in TVM, a buffer used without a definition (a free buffer of a statement or expression)
    pairs with its counterpart at first use, data pointer and symbolic shape included."""
    iter_equal = _iter_map_equal(a, b)
    if iter_equal is not None:
        return iter_equal
    if _is_tensor(a) or _is_tensor(b):
        if not (_is_tensor(a) and _is_tensor(b)):
            return False
        return (a.dtype == b.dtype and a.shape == b.shape
                and a.numpy().tobytes() == b.numpy().tobytes())
    return _core.structural_equal(_as_node(a), _as_node(b), map_free_vars, bind_free_buffers=True)


def structural_hash(node, map_free_vars=False):
    """A hash consistent with :func:`structural_equal`."""
    if _is_tensor(node):
        return hash((str(node.dtype), node.shape, node.numpy().tobytes())) & (2**63 - 1)
    return _core.structural_hash(node, map_free_vars)


def assert_structural_equal(a, b, map_free_vars=False):
    """Raise ValueError naming the first difference when ``a`` and ``b`` differ.

    >>> assert_structural_equal(mod_after_pass, expected_mod)
    """
    iter_equal = _iter_map_equal(a, b)
    if iter_equal is not None:
        if not iter_equal:
            raise TesseraValueError(f"StructuralEqual check failed: {a!r} differs from {b!r}")
        return
    a, b = _as_node(a), _as_node(b)
    mismatch = _core.structural_equal_mismatch(a, b, map_free_vars, bind_free_buffers=True)
    if mismatch is None:
        return
    reason, steps = mismatch
    message = _mismatch_message(a, b, steps)
    if message is None:
        why = _core.structural_equal_failure(a, b, map_free_vars, bind_free_buffers=True)
        message = "StructuralEqual check failed: " + why + "\n--- lhs ---\n" + str(a) + "\n--- rhs ---\n" + str(b)
    raise TesseraValueError(message)


def _mismatch_paths(steps):
    """The AccessPath of each side from the steps of ``_core.structural_equal_mismatch``."""
    from .access_path import AccessPath

    paths = [AccessPath.root(), AccessPath.root()]
    for step in steps:
        kind = step[0]
        for side in (0, 1):
            if kind == "attr":
                paths[side] = paths[side].attr(step[1])
            elif kind == "array_item":
                paths[side] = paths[side].array_item(step[1])
            elif kind == "array_item_missing":
                lacks = step[2] == side + 1
                paths[side] = (paths[side].array_item_missing if lacks else paths[side].array_item)(step[1])
            elif kind == "map_item_missing":
                lacks = step[2] == side + 1
                paths[side] = (paths[side].map_item_missing if lacks else paths[side].map_item)(step[1])
            else:
                key = step[1] if isinstance(step[1], str) else step[1 + side]
                paths[side] = paths[side].map_item(key)
    return paths


def _mismatch_message(a, b, steps):
    """TVM's message: each side's path to the first mismatch and its script with that object
    underlined (None where a side does not print as a script)."""
    paths = _mismatch_paths(steps)
    try:
        texts = [x.script(path_to_underline=[p], syntax_sugar=False) for x, p in zip((a, b), paths)]
    except (ValueError, TypeError, AttributeError):  # a path the printer cannot follow
        return None
    return (f"StructuralEqual check failed, caused by lhs at {paths[0]}:\n{texts[0]}\n"
            f"and rhs at {paths[1]}:\n{texts[1]}")


_script = _core.Object.script


def _object_script(self, *, show_meta=False, ir_prefix="I", tir_prefix="T", syntax_sugar=True,
                   verbose_expr=False, print_line_numbers=False, path_to_underline=None,
                   obj_to_underline=None, obj_to_annotate=None, path_to_annotate=None,
                   show_object_address=False):
    """TVMScript text of this IR object (every node has a literal form, so there is no metadata
    section). ``verbose_expr`` declares the free variables and buffers of an expression (or
    another object that is not a statement, function or module) above it, as TVM does.

    As TVM: ``path_to_underline`` (AccessPaths, or objects) and ``obj_to_underline`` (objects)
    underline, on the line after, every line a statement, function or module prints and every
    place an expression prints; ``obj_to_annotate`` (statement -> tag) and ``path_to_annotate``
    (AccessPath -> tag) end the statement's line with ``# tag`` (a line ``# tag`` above a
    compound statement). Marked text does not parse back. ``show_object_address`` suffixes
    every name with ``_0x<address>``.
    """
    for what, prefix in (("ir_prefix", ir_prefix), ("tir_prefix", tir_prefix)):
        if not isinstance(prefix, str) or not prefix.isidentifier():
            raise TesseraValueError(f"script(): {what} must be a Python identifier, got {prefix!r}")
    if path_to_underline is not None and not isinstance(path_to_underline, (list, tuple)):
        path_to_underline = [path_to_underline]
    # AccessPaths (tessera.ir.access_path) name the objects inside this one.
    if path_to_underline is not None:
        path_to_underline = [_path_target(self, p) for p in path_to_underline]
    if obj_to_underline:
        path_to_underline = list(path_to_underline or []) + list(obj_to_underline)
    annotate = list(obj_to_annotate.items()) if obj_to_annotate else []
    if path_to_annotate:
        annotate += [(_path_target(self, p), tag) for p, tag in path_to_annotate.items()]
    annotate = annotate or None
    return _script(self, ir_prefix=ir_prefix, tir_prefix=tir_prefix, syntax_sugar=syntax_sugar,
                   show_meta=show_meta, print_line_numbers=print_line_numbers,
                   verbose_expr=bool(verbose_expr),
                   path_to_underline=path_to_underline, obj_to_annotate=annotate,
                   show_object_address=bool(show_object_address))


def _path_target(root, path):
    """The IR object an AccessPath (or an object itself) names: the last object along the path
    (a path may end in a plain field such as an IntImm's value)."""
    from .access_path import AccessPath

    if not isinstance(path, AccessPath):
        return path
    while path is not None:
        target = path.resolve(root)
        if isinstance(target, _core.Object):
            return target
        path = path.get_parent()
    return root


def _object_show(self, style=None, black_format=False, **kwargs):
    """Print the TVMScript text of this IR object (``mod.show()``), highlighted when Pygments is
    installed (``style``: "light", "dark", "ansi" or a Pygments style; see
    :func:`tessera.script.highlight.cprint`)."""
    from ..script.highlight import cprint

    cprint(_object_script(self, **kwargs), style=style, black_format=black_format)


def _module_getitem(self, name):
    """``mod["main"]``: the function named ``name``."""
    func = self.lookup(name if isinstance(name, str) else name.name_hint)
    if func is None:
        raise KeyError(name)
    return func


class FunctionMap(list):
    """``mod.functions``: the (GlobalVar, PrimFunc) pairs in order, also readable as TVM's
    map (``.items()``, ``.keys()``, ``.values()``, ``functions[gv]`` or ``functions["f"]``).

    As TVM's map it has an identity: that of the module's function table. It holds the module,
    so a schedule state that replaces a function while it is held copies the module (the map
    read before keeps the old functions). Two maps are equal when they are of one module."""

    def __init__(self, pairs=(), mod=None):
        super().__init__(pairs)
        self._mod = mod

    def __hash__(self):
        return hash(("functions", self._mod.__hash__())) if self._mod is not None else id(self)

    def __eq__(self, other):
        if isinstance(other, FunctionMap) and self._mod is not None:
            return self._mod.same_as(other._mod) if other._mod is not None else NotImplemented
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def items(self):
        return list(self)

    def keys(self):
        return [gv for gv, _ in self]

    def values(self):
        return [f for _, f in self]

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return list.__getitem__(self, key)
        name = key if isinstance(key, str) else key.name_hint
        for gv, f in self:
            if gv.name_hint == name:
                return f
        raise KeyError(name)

    def __contains__(self, key):
        if isinstance(key, (str, _core.GlobalVar)):
            name = key if isinstance(key, str) else key.name_hint
            return any(gv.name_hint == name for gv, _ in self)
        return list.__contains__(self, key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


_module_functions = _core.IRModule.functions


def _functions(self):
    return FunctionMap(_module_functions.__get__(self), self)


def _get_global_vars(self):
    """The module's GlobalVars, in order."""
    return [gv for gv, _ in _module_functions.__get__(self)]


def _array_contains(self, value):
    # As TVM's Array: a str is found by value among the strings, an IR object by identity.
    for item in self.items:
        if isinstance(value, str):
            if isinstance(item, _core.StringImm) and item.value == value:
                return True
        elif isinstance(value, _core.Object):
            if item.same_as(value):
                return True
        elif isinstance(value, (int, float)) and isinstance(item, (_core.IntImm, _core.FloatImm)):
            if item.value == value:
                return True
    return False


def _map_get(self, key, default=None):
    return self[key] if key in self else default


if not getattr(_core.Object.script, "_tessera_wrapped", False):
    _core.Map.get = _map_get
    # As TVM's Array: indexable and iterable like a Python sequence.
    _core.Array.__getitem__ = lambda self, i: self.items[i]
    _core.Array.__iter__ = lambda self: iter(self.items)
    _core.Map.values = lambda self: [v for _, v in self.items()]
    _core.Map.__iter__ = lambda self: iter(self.keys())
    _core.Array.__contains__ = _array_contains
    _core.IRModule.functions = property(_functions, doc=FunctionMap.__doc__)
    _core.Stmt.__setstate__ = _core.Stmt._setstate
    _core.IRModule.get_global_vars = _get_global_vars
    _object_script._tessera_wrapped = True
    _core.Object.script = _object_script
    _core.Object.show = _object_show
    _core.IRModule.__getitem__ = _module_getitem
    # As TVM: a module's or a function's repr is its TVMScript.
    _core.IRModule.__repr__ = _core.PrimFunc.__repr__ = lambda self: str(self)


_JSON_FORMAT = "tessera-tvmscript"


def save_json(node):
    """A JSON document holding ``node`` (a PrimFunc, an IRModule, a Target, or a te Tensor or
    Operation with the graph it depends on), for :func:`load_json`.

    The program is stored as its TVMScript, which parses back to a structurally equal program
    (the printer's round-trip guarantee); the document is tessera's own, not TVM's node graph.

    >>> assert_structural_equal(load_json(save_json(mod)), mod)
    """
    import json

    if isinstance(node, _core.IRModule):
        kind = "IRModule"
    elif isinstance(node, _core.PrimFunc):
        kind = "PrimFunc"
    elif type(node).__name__ == "Target" and hasattr(node, "export"):  # a tessera.target.Target
        return json.dumps({"format": "tessera-target", "version": 1, "config": node.export()})
    elif isinstance(node, (_core.te.Tensor, _core.te.Operation)):
        # A te graph: its operations with their bodies as expression trees (te/serialize.py).
        from ..te import serialize

        return json.dumps(serialize.dump(node))
    elif isinstance(node, (_core.PrimExpr, _core.Array, _core.Map, list, tuple, dict, str, int,
                           float)) or node is None:
        # An expression or a container of values (te/serialize.py's value documents).
        from ..te import serialize

        return json.dumps(serialize.dump_value(node))
    else:
        from ..error import TesseraTypeError

        raise TesseraTypeError("save_json stores a PrimFunc, an IRModule, a Target, a te Tensor "
                               "or Operation, an expression or an Array/Map of values, got "
                               f"{type(node).__name__}")
    return json.dumps({"format": _JSON_FORMAT, "version": 1, "type": kind, "script": node.script()})


def load_json(text):
    """The PrimFunc, IRModule, te graph or value of a document written by :func:`save_json`."""
    import json

    from ..error import TesseraValueError as _ValueError
    from ..script import from_source

    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as err:
        raise _ValueError(f"load_json: not a JSON document: {err}") from None
    if isinstance(doc, dict) and doc.get("format") == "tessera-te":
        from ..te import serialize

        return serialize.load(doc)
    if isinstance(doc, dict) and doc.get("format") == "tessera-value":
        from ..te import serialize

        return serialize.load_value(doc)
    if isinstance(doc, dict) and doc.get("format") == "tessera-metadata":
        return _load_metadata(doc)
    if isinstance(doc, dict) and doc.get("format") == "tessera-target":
        from ..target import Target

        return Target(doc["config"])
    if not isinstance(doc, dict) or doc.get("format") != _JSON_FORMAT or doc.get("type") not in (
            "IRModule", "PrimFunc") or not isinstance(doc.get("script"), str):
        raise _ValueError("load_json: not a document written by tessera.ir.save_json "
                          "(expected a PrimFunc or IRModule in the 'tessera-tvmscript' format)")
    node = from_source(doc["script"])
    expected = _core.IRModule if doc["type"] == "IRModule" else _core.PrimFunc
    if not isinstance(node, expected):
        raise _ValueError(f"load_json: the document says {doc['type']} but holds a {type(node).__name__}")
    return node


def _load_metadata(doc):
    """The metadata section the printer writes with ``show_meta=True``: the objects printed as
    ``metadata["tir.StringImm"][i]`` (strings of several lines), by type key."""
    from ..error import TesseraValueError as _ValueError

    meta = doc.get("metadata")
    strings = meta.get("tir.StringImm") if isinstance(meta, dict) else None
    if not isinstance(strings, list) or not all(isinstance(v, str) for v in strings) or set(meta) != {
            "tir.StringImm"}:
        raise _ValueError("load_json: a malformed metadata section (expected "
                          "{'tir.StringImm': [strings]})")
    return {"tir.StringImm": [_core.StringImm(v) for v in strings]}


def make_node(type_key, **fields):
    """TVM's generic constructor by type key: ``make_node("ir.DictAttrs", key="value")`` is the
    attribute dict of a function; ``"ir.X"``/``"tir.X"`` call the constructor of
    ``tessera.ir.X``/``tessera.tir.X`` with the fields as keyword arguments."""
    if type_key == "ir.DictAttrs":
        from ..script.tir.frames import to_attrs

        return to_attrs(fields)
    namespace, _, name = type_key.rpartition(".")
    if namespace in ("ir", "tir", "target"):
        import importlib

        module = importlib.import_module("tessera." + namespace)
        cls = getattr(module, name, None)
        if callable(cls):
            return cls(**fields)
    raise TesseraValueError(f"make_node: tessera has no node type '{type_key}'")


# Python-side operator attributes (TVM's OpRegistry attribute maps): (op name, key) -> (level, value).
_OP_ATTRS = {}


def register_op_attr(op_name, attr_key, value=None, level=10):
    """Attach ``value`` to the operator ``op_name`` under ``attr_key``, as TVM's
    ``tvm.ir.register_op_attr``; without ``value`` it is a decorator returning its function.
    A higher ``level`` replaces an earlier value, a lower one is ignored, an equal one is an error.

    >>> @register_op_attr("tir.my_intrin", "FLowerIntrinsic")
    ... def lower(x):
    ...     return x
    >>> op_attr("tir.my_intrin", "FLowerIntrinsic") is lower
    True
    """
    if not isinstance(op_name, str) or not op_name or not isinstance(attr_key, str):
        raise TesseraValueError(f"register_op_attr: expected an operator name and an attribute key "
                                f"(strings), got {op_name!r} and {attr_key!r}")

    def register(v):
        old = _OP_ATTRS.get((op_name, attr_key))
        if old is not None and old[0] == level:
            raise TesseraValueError(f"register_op_attr: attribute '{attr_key}' of operator '{op_name}' "
                                    f"is already registered at level {level}; use a higher level to "
                                    "replace it")
        if old is None or level > old[0]:
            _OP_ATTRS[(op_name, attr_key)] = (level, v)
        return v

    return register if value is None else register(value)


def op_attr(op_name, attr_key, default=None):
    """The value registered by ``register_op_attr(op_name, attr_key, ...)``, or ``default``."""
    entry = _OP_ATTRS.get((op_name, attr_key))
    return default if entry is None else entry[1]


from . import base  # noqa: E402,F401  (tvm.ir.base.get_first_structural_mismatch)
from . import module, transform  # noqa: E402,F401  (tvm.ir.module.IRModule, tvm.ir.transform.Sequential)
from . import container, expr  # noqa: E402,F401  (tvm.ir.expr.Range, tvm.container.Array)
