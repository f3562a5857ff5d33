"""te graphs in JSON: tessera.ir.save_json / load_json of a te Tensor or Operation.

A document holds the operations the object depends on, inputs first, each with its shape, its
axes and its body as a tree of expression nodes. Loading rebuilds the graph with te.placeholder,
te.compute and te.scan, so the loaded tensors are ordinary te tensors (with fresh variables of
the same names and types). A te.extern (whose body is a statement) is not stored.

>>> C2 = tessera.ir.load_json(tessera.ir.save_json(C))
>>> assert str(C2) == str(C)
"""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError

_te = _core.te
FORMAT = "tessera-te"

_BINARY = ("Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE",
           "LT", "LE", "GT", "GE", "And", "Or")


class _Writer:
    def __init__(self):
        self.ops = []          # the encoded operations, inputs first
        self.op_index = {}     # id(operation) -> its index in ops
        self.vars = []         # encoded variables
        self.var_index = {}    # id(var) -> its index in vars
        self.keep = []         # the objects whose ids are keys, kept alive

    # -- expressions --
    def var(self, v, kind=None):
        key = id(v)
        if key not in self.var_index:
            self.keep.append(v)
            if kind is None:
                kind = "size" if type(v).__name__ == "SizeVar" else "var"
            self.var_index[key] = len(self.vars)
            self.vars.append({"name": v.name, "dtype": str(v.dtype), "kind": kind})
        return self.var_index[key]

    def expr(self, e):
        if e is None:
            return None
        kind = type(e).__name__
        if kind in ("Var", "SizeVar"):
            return ["Var", self.var(e)]
        if kind == "IntImm":
            return ["Int", str(e.dtype), int(e.value)]
        if kind == "FloatImm":
            return ["Float", str(e.dtype), float(e.value)]
        if kind == "StringImm":
            return ["Str", e.value]
        if kind in _BINARY:
            return [kind, self.expr(e.a), self.expr(e.b)]
        if kind == "Not":
            return ["Not", self.expr(e.a)]
        if kind == "Select":
            return ["Select", self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)]
        if kind == "Cast":
            return ["Cast", str(e.dtype), self.expr(e.value)]
        if kind == "Let":
            return ["Let", self.var(e.var), self.expr(e.value), self.expr(e.body)]
        if kind == "Broadcast":
            return ["Broadcast", self.expr(e.value), int(e.lanes)]
        if kind == "Ramp":
            return ["Ramp", self.expr(e.base), self.expr(e.stride), int(e.lanes)]
        if kind == "Call" and isinstance(e.op, _core.Op):
            return ["Call", str(e.dtype), e.op.name, [self.expr(a) for a in e.args]]
        if kind == "BufferLoad" and isinstance(e.buffer, _te.Tensor) and e.predicate is None:
            return ["Load", self.tensor(e.buffer), [self.expr(i) for i in e.indices]]
        raise TesseraTypeError(f"save_json: cannot store the expression {e!r} ({kind}) of a te graph")

    def attr(self, value):
        if isinstance(value, _core.Array):
            return ["Array", [self.attr(v) for v in value.items]]
        if isinstance(value, _core.PrimExpr):
            return self.expr(value)
        raise TesseraTypeError(f"save_json: cannot store the attribute value {value!r}")

    def rng(self, r):
        return [self.expr(r.min), self.expr(r.extent)]

    # -- operations --
    def tensor(self, t):
        return [self.op(t.op), int(t.value_index)]

    def op(self, op):
        key = id(op)
        if key in self.op_index:
            return self.op_index[key]
        self.keep.append(op)
        common = {"name": op.name, "tag": op.tag,
                  "attrs": {k: self.attr(v) for k, v in op.attrs.items()}}
        if isinstance(op, _te.PlaceholderOp):
            doc = {"type": "placeholder", "shape": [self.expr(s) for s in op.shape],
                   "dtype": str(op.dtype)}
        elif isinstance(op, _te.ComputeOp):
            for t in op.input_tensors:
                self.op(t.op)
            doc = {"type": "compute", "shape": [self.expr(s) for s in op.shape],
                   "axis": [self.var(iv.var, "axis") for iv in op.axis]}
            if op.reduce is None:
                doc["bodies"] = [self.expr(b) for b in op.bodies]
            else:
                r = op.reduce
                c = r.combiner
                axes = [{"var": self.var(iv.var, "axis"), "dom": self.rng(iv.dom)} for iv in r.axis]
                doc["reduce"] = {
                    "combiner": {"name": c.name, "lhs": [self.var(v) for v in c.lhs],
                                 "rhs": [self.var(v) for v in c.rhs],
                                 "result": [self.expr(x) for x in c.result],
                                 "identity": [self.expr(x) for x in c.identity_element]},
                    "axis": axes, "sources": [self.expr(s) for s in r.sources],
                    "condition": self.expr(r.condition),
                    "inits": [] if r.init is None else [self.expr(r.init)] if len(r.sources) == 1
                    else None}
                if doc["reduce"]["inits"] is None:
                    raise TesseraTypeError("save_json: cannot store the init= values of a tuple reduction")
        elif isinstance(op, _te.ScanOp):
            for t in list(op.init) + list(op.update) + list(op.state_placeholder) + list(op.inputs):
                self.op(t.op)
            doc = {"type": "scan", "init": [self.tensor(t) for t in op.init],
                   "update": [self.tensor(t) for t in op.update],
                   "state": [self.tensor(t) for t in op.state_placeholder],
                   "inputs": [self.tensor(t) for t in op.inputs]}
        else:
            raise TesseraTypeError(f"save_json: cannot store the te operation '{op.name}' "
                                   f"({type(op).__name__}); te.extern bodies are statements")
        doc.update(common)
        self.op_index[key] = len(self.ops)
        self.ops.append(doc)
        return self.op_index[key]


def dump(node):
    """The JSON-ready document of a te Tensor or Operation."""
    w = _Writer()
    if isinstance(node, _te.Tensor):
        root = {"tensor": w.tensor(node)}
    elif isinstance(node, _te.Operation):
        root = {"op": w.op(node)}
    else:
        raise TesseraTypeError(f"save_json: not a te Tensor or Operation: {node!r}")
    return {"format": FORMAT, "version": 1, "root": root, "vars": w.vars, "ops": w.ops}


class _Reader:
    def __init__(self, doc):
        self.doc = doc
        self.vars = {}
        self.ops = []

    def fail(self, what):
        raise TesseraValueError(f"load_json: a malformed te document ({what})")

    def var(self, index):
        if index not in self.vars:
            try:
                v = self.doc["vars"][index]
            except (IndexError, TypeError, KeyError):
                self.fail(f"no variable {index!r}")
            if v.get("kind") == "axis":
                self.fail(f"axis '{v.get('name')}' used outside its compute")
            make = _core.SizeVar if v.get("kind") == "size" else _core.Var
            self.vars[index] = make(str(v["name"]), str(v["dtype"]))
        return self.vars[index]

    def expr(self, e):
        if e is None:
            return None
        if not isinstance(e, list) or not e:
            self.fail(f"expression {e!r}")
        kind, args = e[0], e[1:]
        if kind == "Var":
            return self.var(args[0])
        if kind == "Int":
            return _core.IntImm(args[0], args[1])
        if kind == "Float":
            return _core.FloatImm(args[0], args[1])
        if kind == "Str":
            return _core.StringImm(args[0])
        if kind in _BINARY:
            return getattr(_core, kind)(self.expr(args[0]), self.expr(args[1]))
        if kind == "Not":
            return _core.Not(self.expr(args[0]))
        if kind == "Select":
            return _core.Select(*(self.expr(a) for a in args))
        if kind == "Cast":
            return _core.Cast(args[0], self.expr(args[1]))
        if kind == "Let":
            return _core.Let(self.var(args[0]), self.expr(args[1]), self.expr(args[2]))
        if kind == "Broadcast":
            return _core.Broadcast(self.expr(args[0]), args[1])
        if kind == "Ramp":
            return _core.Ramp(self.expr(args[0]), self.expr(args[1]), args[2])
        if kind == "Call":
            return _core.Call(args[0], _core.Op.get(args[1]), [self.expr(a) for a in args[2]])
        if kind == "Load":
            return self.tensor(args[0]).load([self.expr(i) for i in args[1]])
        self.fail(f"unknown expression kind {kind!r}")

    def attr(self, value):
        if isinstance(value, list) and value and value[0] == "Array":
            return _core.Array([self.attr(v) for v in value[1]])
        return self.expr(value)

    def tensor(self, ref):
        try:
            op, index = ref
            return self.ops[op].output(index)
        except (ValueError, TypeError, IndexError):
            self.fail(f"tensor reference {ref!r}")

    def bind_axis(self, index, var):
        self.vars[index] = var

    def op(self, d):
        kind = d.get("type")
        name, tag = str(d["name"]), str(d.get("tag", ""))
        attrs = {str(k): self.attr(v) for k, v in d.get("attrs", {}).items()}
        if kind == "placeholder":
            return _te.placeholder([self.expr(s) for s in d["shape"]], d["dtype"], name).op
        if kind == "compute":
            names = [self.doc["vars"][i]["name"] for i in d["axis"]]

            def body(axes):
                for i, v in zip(d["axis"], axes):
                    self.bind_axis(i, v)
                if "bodies" in d:
                    values = [self.expr(b) for b in d["bodies"]]
                    return values[0] if len(values) == 1 else values
                r = d["reduce"]
                axes = []
                for a in r["axis"]:
                    lo, extent = (self.expr(x) for x in a["dom"])
                    iv = _te.reduce_axis(_core.Range.from_min_extent(lo, extent),
                                         self.doc["vars"][a["var"]]["name"])
                    self.bind_axis(a["var"], iv.var)
                    axes.append(iv)
                c = r["combiner"]
                combiner = _te.CommReducer.tuple(
                    c["name"], [self.var(i) for i in c["lhs"]], [self.var(i) for i in c["rhs"]],
                    [self.expr(x) for x in c["result"]], [self.expr(x) for x in c["identity"]])
                return _te.Reduce.tuple(combiner, [self.expr(s) for s in r["sources"]], axes,
                                        self.expr(r["condition"]), [self.expr(x) for x in r["inits"]])

            shape = [self.expr(s) for s in d["shape"]]
            return _te.compute(shape, body, name, tag, attrs, names).op
        if kind == "scan":
            return _te.scan_op(name, tag, attrs, [self.tensor(t) for t in d["init"]],
                               [self.tensor(t) for t in d["update"]],
                               [self.tensor(t) for t in d["state"]],
                               [self.tensor(t) for t in d["inputs"]])
        self.fail(f"unknown operation type {kind!r}")


def load(doc):
    """The te Tensor or Operation of a document made by :func:`dump`."""
    reader = _Reader(doc)
    try:
        for d in doc["ops"]:
            reader.ops.append(reader.op(d))
        root = doc["root"]
        if "tensor" in root:
            return reader.tensor(root["tensor"])
        return reader.ops[root["op"]]
    except (KeyError, TypeError, IndexError) as err:
        reader.fail(f"{type(err).__name__}: {err}")


# ---- Values: expressions and the containers that hold them ----
# (tessera.ir.save_json of a PrimExpr, an Array, a Map, a Python list/dict/str/number)

VALUE_FORMAT = "tessera-value"


def _encode_value(w, value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return ["Py", value]
    if isinstance(value, (list, tuple)):
        return ["Array", [_encode_value(w, v) for v in value]]
    if isinstance(value, _core.Array):
        return ["Array", [_encode_value(w, v) for v in value.items]]
    if isinstance(value, (dict, _core.Map)):
        items = list(value.items())
        if all(isinstance(k, str) for k, _ in items):
            return ["Map", [[k, _encode_value(w, v)] for k, v in items]]
        # Keys that are IR objects (variables, constants): each key a value of its own.
        for k, _ in items:
            if not isinstance(k, (str, _core.PrimExpr)):
                raise TesseraTypeError("save_json: a map's keys must be strings or expressions, "
                                       f"got {type(k).__name__} {k!r}")
        return ["ObjMap", [[_encode_value(w, k), _encode_value(w, v)] for k, v in items]]
    if isinstance(value, _core.PrimExpr):
        return ["Expr", w.expr(value)]
    raise TesseraTypeError(f"save_json: cannot store {type(value).__name__} {value!r} (a value is "
                           "an expression, an Array or Map of values, a string or a number)")


def dump_value(value):
    """The JSON-ready document of an expression or a container of values."""
    w = _Writer()
    root = _encode_value(w, value)
    return {"format": VALUE_FORMAT, "version": 1, "root": root, "vars": w.vars, "ops": w.ops}


def load_value(doc):
    """The value of a document made by :func:`dump_value`: variables shared within it are one
    variable (fresh, of the same name and type)."""
    reader = _Reader(doc)

    def decode(e):
        if not isinstance(e, list) or len(e) != 2:
            reader.fail(f"value {e!r}")
        kind, body = e
        if kind == "Py":
            return body
        if kind == "Array":
            return _core.Array([_as_object(decode(v)) for v in body])
        if kind == "Map":
            return _core.Map({str(k): _as_object(decode(v)) for k, v in body})
        if kind == "ObjMap":
            return _core.Map({_map_key(decode(k)): _as_object(decode(v)) for k, v in body})
        if kind == "Expr":
            return reader.expr(body)
        reader.fail(f"unknown value kind {kind!r}")

    try:
        for d in doc["ops"]:
            reader.ops.append(reader.op(d))
        return decode(doc["root"])
    except (KeyError, TypeError, IndexError, ValueError) as err:
        reader.fail(f"{type(err).__name__}: {err}")


def _map_key(key):
    # A map key as stored: a str stays a str (keys are by value), an expression is the key.
    return key if isinstance(key, str) else _as_object(key)


def _as_object(value):
    # An item of an Array or Map is an IR object: Python numbers and strings as constants.
    if isinstance(value, str):
        return _core.StringImm(value)
    if isinstance(value, (bool, int, float)):
        from ..tir.expr_ops import convert

        return convert(value)
    return value
