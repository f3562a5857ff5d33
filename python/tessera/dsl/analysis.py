"""Analyses of lowered DSL modules (``tvm.compass.dsl.analysis``)."""

from .. import _core
from ..tir.stmt_functor import post_order_visit

_TICKS = ("dsl.perf_tick_begin", "dsl.perf_tick_end")


def _functions(ir_mod):
    if isinstance(ir_mod, _core.PrimFunc):
        return [ir_mod]
    if isinstance(ir_mod, _core.IRModule):
        return [func for _gv, func in ir_mod.functions]
    raise TypeError(f"has_perf_record_tick expects an IRModule or a PrimFunc, got "
                    f"{type(ir_mod).__name__}")


def has_perf_record_tick(ir_mod):
    """Whether any function of ``ir_mod`` (an IRModule, e.g. ``BuildManager().lower(f)``, or a
    PrimFunc) contains ``S.perf_tick_begin`` or ``S.perf_tick_end``."""
    found = []

    def visit(node):
        if isinstance(node, _core.Call) and getattr(node.op, "name", None) in _TICKS:
            found.append(node)

    for func in _functions(ir_mod):
        post_order_visit(func.body, visit)
        if found:
            return True
    return False


# Intrinsics that write memory through a pointer argument: the index of the destination argument.
_WRITERS = {"dsl.dma_copy": 0, "dsl.async_dma_copy": 0, "dsl.dma_memset": 0,
            "dsl.dma_transpose2d": 0, "dsl.dma_upsample": 0, "dsl.vstore_scatter": 1}


class ParamInfo:
    """One parameter of a kernel: its name, dtype (the pointee for pointers) and category:
    "input_tensor" (a pointer the kernel only reads through), "output_tensor" (a pointer it
    writes through, directly, through pointers derived from it, or in the functions it calls),
    "const_tensor" (a pointer to constant memory) or "attr" (a scalar). ``tensor_idx`` numbers
    the inputs (const tensors included) and the outputs separately, in parameter order."""

    def __init__(self, name, dtype, category, tensor_idx=None):
        self.name = name
        self.dtype = dtype
        self.category = category
        self.tensor_idx = tensor_idx

    is_input_tensor = property(lambda self: self.category == "input_tensor")
    is_output_tensor = property(lambda self: self.category == "output_tensor")
    is_const_tensor = property(lambda self: self.category == "const_tensor")
    is_attr = property(lambda self: self.category == "attr")
    is_descriptor = property(lambda self: False)  # AIFF descriptors are not part of tessera
    is_tensor = property(lambda self: self.category.endswith("_tensor"))

    def __repr__(self):
        return f"{self.name}:{self.category},{self.dtype}"


class PrimFuncInfo:
    """What extract_prim_func_info finds about a kernel: its name and one ParamInfo a parameter."""

    def __init__(self, name, param_infos):
        self.name = name
        self.param_infos = param_infos


class _Flow:
    """Which pointer parameters of one function each handle variable may point into, which of
    them the function writes through and which its returned pointer may point into."""

    def __init__(self, func, callee_flow):
        self.params = list(func.params)
        self.lets = []  # (var, value) of every let binding and pointer store, to resolve lazily
        self.stores, self.calls, self.returns = [], [], []
        self.callee_flow = callee_flow
        post_order_visit(func.body, self._collect)
        self._alias = {}
        self._resolve()
        self.written = set()
        for data in self.stores:
            self.written |= self.alias_of_expr(data)
        for call in self.calls:
            self.written |= self._written_by(call)
        self.returned = set()
        for value in self.returns:
            self.returned |= self.alias_of_expr(value)

    def _collect(self, node):
        if isinstance(node, _core.LetStmt):
            self.lets.append((node.var, node.value))
        elif isinstance(node, _core.BufferStore):
            if str(node.buffer.dtype) == "handle":
                # A pointer variable re-pointed in a loop or a branch: its storage may hold
                # any address stored into it.
                self.lets.append((node.buffer.data, node.value))
            else:
                self.stores.append(node.buffer.data)
        elif isinstance(node, _core.Call):
            if isinstance(node.op, _core.GlobalVar) or getattr(node.op, "name", None) in _WRITERS \
                    or getattr(node.op, "name", None) == "dsl.dma1d":
                self.calls.append(node)
            elif getattr(node.op, "name", None) == "tir.ret" and node.args:
                self.returns.append(node.args[0])

    def _resolve(self):
        """The parameters each bound handle may point into: the union over the values bound to
        it, to a fixed point (a pointer variable's storage may be given an address derived from
        its own earlier value)."""
        changed = True
        while changed:
            changed = False
            for bound, value in self.lets:
                found = self.alias_of_expr(value)
                current = self.alias_of_var(bound)
                if not found <= current:
                    current |= found
                    changed = True

    def alias_of_var(self, var):
        for i, param in enumerate(self.params):
            if param.same_as(var):
                return {i}
        for key, value in self._alias.items():
            if key.same_as(var):
                return value
        self._alias[var] = set()
        return self._alias[var]

    def alias_of_expr(self, expr):
        found = set()

        def visit(node):
            if isinstance(node, _core.Var) and node.dtype == "handle":
                found.update(self.alias_of_var(node))
            elif isinstance(node, _core.BufferLoad):
                found.update(self.alias_of_var(node.buffer.data))
            elif isinstance(node, _core.Call) and isinstance(node.op, _core.GlobalVar):
                callee = self.callee_flow(node.op.name_hint)
                for j in callee.returned if callee is not None else range(len(node.args)):
                    found.update(self.alias_of_expr(node.args[j]))

        if isinstance(expr, _core.Var):
            return set(self.alias_of_var(expr))
        post_order_visit(expr, visit)
        return found

    def _written_by(self, call):
        name = getattr(call.op, "name", None)
        if isinstance(call.op, _core.GlobalVar):
            callee = self.callee_flow(call.op.name_hint)
            indices = callee.written if callee is not None else range(len(call.args))
            return set().union(*[self.alias_of_expr(call.args[j]) for j in indices])
        if name == "dsl.dma1d":  # (ddr, sram, size, into_sram)
            into_sram = isinstance(call.args[3], _core.IntImm) and call.args[3].value == 1
            return self.alias_of_expr(call.args[1] if into_sram else call.args[0])
        return self.alias_of_expr(call.args[_WRITERS[name]])


def extract_prim_func_info(ir_mod):
    """The ParamInfo of each parameter of the entry kernel of ``ir_mod`` (an IRModule from
    ``BuildManager().lower(f)``, or a PrimFunc): whether each pointer is an input or an output
    tensor, following the pointers derived from it, the pointers that sub-functions return and
    the writes of the sub-functions it calls."""
    funcs = {}
    if isinstance(ir_mod, _core.IRModule):
        for gv, func in ir_mod.functions:
            funcs[gv.name_hint] = func
        entry = _entry_name(ir_mod, funcs)
    elif isinstance(ir_mod, _core.PrimFunc):
        entry = "main"
        funcs[entry] = ir_mod
    else:
        raise TypeError(f"extract_prim_func_info expects an IRModule or a PrimFunc, got "
                        f"{type(ir_mod).__name__}")
    flows = {}

    def flow_of(name):
        if name not in funcs:
            return None
        if name not in flows:
            flows[name] = None  # recursion is refused by the DSL; be safe anyway
            flows[name] = _Flow(funcs[name], flow_of)
        return flows[name]

    flow = flow_of(entry)
    infos, n_in, n_out = [], 0, 0
    for i, param in enumerate(funcs[entry].params):
        if param.dtype != "handle":
            infos.append(ParamInfo(param.name, param.dtype, "attr"))
            continue
        element, scope = str(param.pointer_element), param.scope
        if i in flow.written:
            infos.append(ParamInfo(param.name, element, "output_tensor", n_out))
            n_out += 1
        else:
            infos.append(ParamInfo(param.name, element, "const_tensor" if scope == "constant"
                                   else "input_tensor", n_in))
            n_in += 1
    return PrimFuncInfo(entry, infos)


def _entry_name(ir_mod, funcs):
    """The kernel that the DSL marked as the entry (``tessera.is_entry``), else the first."""
    for name, func in funcs.items():
        if func.attrs and "tessera.is_entry" in dict(func.attrs):
            return name
    return next(iter(funcs))


__all__ = ["has_perf_record_tick", "extract_prim_func_info", "ParamInfo", "PrimFuncInfo"]
