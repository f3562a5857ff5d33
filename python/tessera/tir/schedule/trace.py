"""The trace of a schedule in TVM's form: instructions (kind, inputs, attrs, outputs) and the
decisions of the sampling instructions; printed as Python, written as JSON, replayed.

>>> print(sch.trace)
# from tvm import tir
def apply_trace(sch: tir.Schedule) -> None:
  b0 = sch.get_block(name="B", func_name="main")
  l1, = sch.get_loops(block=b0)
>>> Trace.apply_json_to_schedule(sch.trace.as_json(), fresh_schedule)
"""

import inspect
import json

from ... import _core
from ...error import TesseraTypeError, TesseraValueError
from .instruction import Instruction, InstructionKind


class Trace:
    """Instructions in order and the decisions of the sampling ones (``{instruction: value}``).

    >>> trace = Trace(insts=[...], decisions={})
    >>> trace.apply_to_schedule(sch, remove_postproc=False)
    """

    def __init__(self, insts=None, decisions=None):
        if insts is not None and not isinstance(insts, (list, tuple)):
            raise TesseraTypeError(f"Trace(insts, decisions): insts must be a list of Instructions, "
                                   f"got {type(insts).__name__}")
        self.insts = list(insts or [])
        for inst in self.insts:
            if not isinstance(inst, Instruction):
                raise TesseraTypeError(f"Trace: not an Instruction: {inst!r}")
        self.decisions = dict(decisions or {})

    @classmethod
    def _from_core(cls, core_trace, cache=None):
        """The Trace of a schedule's recorded instructions. With ``cache`` (a list the schedule
        keeps), an instruction still in the trace is the same Instruction object in each
        snapshot, so that one snapshot's instructions index another's ``decisions``, as in TVM."""
        trace = cls()
        rows = _core.trace_instructions(core_trace)
        if cache is not None:
            del cache[len(rows):]
        for i, (method, args, outputs, _, decision) in enumerate(rows):
            kind = InstructionKind._of_method(method, args)
            inputs, attrs = kind.split_args(args)
            inst = None
            if cache is not None and i < len(cache):
                old = cache[i]
                if (old.kind == kind and len(old.outputs) == len(outputs)
                        and all(a is b or a.same_as(b) for a, b in zip(old.outputs, outputs))):
                    inst = old
                else:
                    del cache[i:]
            if inst is None:
                inst = Instruction(kind, inputs, attrs, outputs)
                if cache is not None:
                    cache.append(inst)
            trace.insts.append(inst)
            if decision is not None:
                trace.decisions[inst] = _decision_object(decision)
        return trace

    def _active(self, remove_postproc):
        for inst in self.insts:
            if remove_postproc and inst.kind.name == "EnterPostproc":
                break
            yield inst

    def _to_core(self, remove_postproc=False, decisions=None):
        decisions = self.decisions if decisions is None else decisions
        rows = []
        for inst in self._active(remove_postproc):
            args = inst.kind.join_args(inst.inputs, inst.attrs)
            rows.append((inst.kind.method, args, list(inst.outputs), inst.kind.returns_list,
                         _plain_decision(decisions.get(inst))))
        return _core.trace_from_instructions(rows)

    # ---- reading and editing ----

    def get_decision(self, inst):
        """The decision of ``inst`` (None when it has none)."""
        return self.decisions.get(inst)

    def append(self, inst, decision=None):
        """Add an instruction at the end (with its decision)."""
        if not isinstance(inst, Instruction):
            raise TesseraTypeError(f"Trace.append expects an Instruction, got {type(inst).__name__}")
        self.insts.append(inst)
        if decision is not None:
            self.decisions[inst] = decision

    def pop(self):
        """Remove and return the last instruction (None when the trace is empty)."""
        if not self.insts:
            return None
        inst = self.insts.pop()
        self.decisions.pop(inst, None)
        return inst

    def with_decision(self, inst, decision, remove_postproc):
        """A copy with ``inst``'s decision replaced (removed when ``decision`` is None)."""
        insts = list(self._active(remove_postproc))
        decisions = {i: d for i, d in self.decisions.items() if i in insts}
        if inst not in insts:
            raise TesseraValueError("with_decision: the instruction is not in the trace")
        if decision is None:
            decisions.pop(inst, None)
        else:
            decisions[inst] = decision
        return Trace(insts, decisions)

    def simplified(self, remove_postproc):
        """A copy without the pure instructions (lookups, sampling) whose outputs nothing uses."""
        insts = list(self._active(remove_postproc))
        used = set()
        kept = []
        for inst in reversed(insts):
            if inst.kind.is_pure and not any(id(o) in used for o in inst.outputs):
                continue
            kept.append(inst)
            for value in inst.inputs:
                _collect_rvs(value, used)
        kept.reverse()
        return Trace(kept, {i: d for i, d in self.decisions.items() if i in kept})

    @property
    def kinds(self):
        """The schedule method of each instruction ("get_block", "split", ...)."""
        return [inst.kind.method for inst in self.insts]

    def __len__(self):
        return len(self.insts)

    # ---- Python ----

    def as_python(self, remove_postproc=False):
        """The calls as Python lines, handles named ``b0``, ``l1``, ``v2`` (block, loop,
        expression); executed with ``sch`` bound to a fresh schedule of the module, they replay
        the trace."""
        return self._to_core(remove_postproc).as_python().splitlines()

    def __str__(self):
        lines = self.as_python()
        body = "\n".join("  " + line for line in lines) if lines else "  pass"
        return "# from tvm import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n" + body

    def show(self, style=None, black_format=False):
        """Print the trace as a Python function."""
        print(str(self))

    def __repr__(self):
        return f"<Trace of {len(self)} instructions>"

    # ---- replay ----

    def apply_to_schedule(self, sch, remove_postproc=False, decision_provider=None):
        """Replay the instructions on ``sch``. ``decision_provider(inst, inputs, attrs,
        decision)`` may replace the decision of each sampling instruction."""
        decisions = dict(self.decisions)
        if decision_provider is not None:
            for inst in self._active(remove_postproc):
                if inst.kind.has_decision:
                    decisions[inst] = decision_provider(inst, inst.inputs, inst.attrs, decisions.get(inst))
        self._to_core(remove_postproc, decisions).apply_to_schedule(sch._sch, False)

    # ---- JSON ----

    def as_json(self, remove_postproc=False):
        """TVM's JSON form: ``[[[kind, inputs, attrs, outputs], ...], [[index, decision], ...]]``
        with handles as their names ("b0", "l1", "v2")."""
        names = {}
        insts = []
        decisions = []
        for index, inst in enumerate(self._active(remove_postproc)):
            inputs = [_to_json(v, names, inst.kind.name) for v in inst.inputs]
            attrs = [_to_json(v, names, inst.kind.name) for v in inst.attrs]
            outputs = [_name(o, names) for o in inst.outputs]
            insts.append([inst.kind.name, inputs, attrs, outputs])
            if inst in self.decisions:
                decisions.append([index, _to_json(self.decisions[inst], names, inst.kind.name)])
        return [insts, decisions]

    @staticmethod
    def apply_json_to_schedule(json_obj, sch):
        """Replay a trace written by :meth:`as_json` (the object or its JSON text) on ``sch``."""
        if isinstance(json_obj, str):
            json_obj = json.loads(json_obj)
        if isinstance(json_obj, dict):  # the keyword form of tessera's C++ trace
            _core.Trace.apply_json_to_schedule(json.dumps(json_obj), sch._sch)
            return
        if not isinstance(json_obj, (list, tuple)) or len(json_obj) != 2:
            raise TesseraValueError("a trace in JSON is [instructions, decisions]")
        rvs = {}
        insts = []
        for row in json_obj[0]:
            if not isinstance(row, (list, tuple)) or len(row) != 4:
                raise TesseraValueError(f"malformed instruction in the trace: {row!r}")
            kind_name, inputs, attrs, outputs = row
            kind = InstructionKind.get(kind_name)
            inputs = [_from_json(v, rvs, resolve=True) for v in inputs]
            attrs = [_from_json(v, rvs, resolve=False) for v in attrs]
            outs = []
            for name in outputs:
                rv = _new_rv(name)
                rvs[name] = rv
                outs.append(rv)
            insts.append(Instruction(kind, inputs, attrs, outs))
        decisions = {}
        for index, value in json_obj[1]:
            decisions[insts[int(index)]] = _from_json(value, rvs, resolve=False)
        Trace(insts, decisions).apply_to_schedule(sch)


def _decision_object(value):
    """A decision as TVM gives it: an int as an int32 IntImm (``decision.value``), lists item-wise."""
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple)):
        return value
    if isinstance(value, int):
        return _core.IntImm("int32", value) if -2**31 <= value < 2**31 else _core.IntImm("int64", value)
    return [_decision_object(v) for v in value]


def _plain_decision(value):
    if isinstance(value, _core.IntImm):
        return int(value.value)
    if isinstance(value, (list, tuple)):
        return [_plain_decision(v) for v in value]
    return value


def _collect_rvs(value, out):
    if isinstance(value, _core.ScheduleRV):
        out.add(id(value))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect_rvs(v, out)


_PREFIX = ((_core.BlockRV, "b"), (_core.LoopRV, "l"))


def _name(rv, names):
    key = id(rv)
    if key not in names:
        prefix = next((p for cls, p in _PREFIX if isinstance(rv, cls)), "v")
        names[key] = (f"{prefix}{len(names)}", rv)
    return names[key][0]


class _Float32(float):
    """A float32 constant of a trace's JSON: a number to ``json.dumps``, and shown as TVM shows
    the FloatImm its JSON holds (``T.float32(1.0)``) when the JSON object is printed."""

    def __repr__(self):
        return f"T.float32({float(self)!r})"

    __str__ = __repr__


def _to_json(value, names, where):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, _core.ScheduleRV):
        if id(value) not in names:
            raise TesseraValueError(f"{where}: a handle is used before an instruction defines it")
        return names[id(value)][0]
    if isinstance(value, (list, tuple)):
        return [_to_json(v, names, where) for v in value]
    if isinstance(value, _core.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, _core.FloatImm) and value.dtype == "float32":
        return _Float32(value.value)
    if isinstance(value, dict):
        return {"dict": [[str(k), _to_json(v, names, where)] for k, v in sorted(value.items())]}
    if isinstance(value, _core.IndexMap):
        return {"index_map": value.as_python()}
    if isinstance(value, _core.PrimExpr):
        return {"expr": value.script()}
    if isinstance(value, _core.Object):
        return {"expr": value.script()}
    raise TesseraTypeError(f"{where}: cannot write a {type(value).__name__} into a trace's JSON")


def _from_json(value, rvs, resolve):
    if isinstance(value, str):
        return rvs[value] if resolve and value in rvs else value
    if isinstance(value, list):
        return [_from_json(v, rvs, resolve) for v in value]
    if isinstance(value, dict):
        if "dict" in value:
            return {k: _from_json(v, rvs, resolve) for k, v in value["dict"]}
        if "index_map" in value:
            return _index_map_from_text(value["index_map"])
        if "expr" in value:
            from ...script import tir as T

            return eval(value["expr"], {"T": T})  # noqa: S307 - text this module wrote
        raise TesseraValueError(f"unknown value in a trace's JSON: {value!r}")
    return value


def _index_map_from_text(text):
    from ...script import tir as T

    func = eval(text, {"T": T})  # noqa: S307 - text IndexMap.as_python wrote
    names = list(inspect.signature(func).parameters)
    from ...tir.expr_ops import convert

    def build(dtype):
        variables = [_core.Var(n, dtype) for n in names]
        result = func(*variables)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return variables, [e if isinstance(e, _core.PrimExpr) else convert(e, dtype) for e in result]

    # The text does not say the indices' type: int32 unless int32 indices would be widened to
    # int64 by the map's own constants (a map over int64 indices, printed without casts).
    variables, final = build("int32")
    if any(f'T.Cast("int64", {n})' in str(e) for e in final for n in names):
        variables, final = build("int64")
    return _core.IndexMap(variables, final)


def _new_rv(name):
    if name.startswith("b"):
        return _core.BlockRV()
    if name.startswith("l"):
        return _core.LoopRV()
    return _core.ExprRV()


__all__ = ["Instruction", "InstructionKind", "Trace"]

