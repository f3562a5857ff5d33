// tir.MakePackedAPI: each public function becomes a packed entry point that checks every
// argument (tensorir.md §10) before running the body (marked, as in TVM, by a "compute_scope"
// attribute named "<symbol>_compute_"); a target with a host becomes that host. Private
// functions take raw pointers.
#include "tessera/ir/buffer_strides.h"
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/runtime_abi.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

Expr Intrin(DataType t, const char* name, std::vector<Expr> args) {
  return CallNode::Make(t, OpNode::Get(name), std::move(args));
}
Expr I64(int64_t v) { return IntImmNode::Make(DataType::Int(64), v); }
Expr I32(int64_t v) { return Int32(v); }
Expr AsI64(const Expr& e) {
  return e->dtype == DataType::Int(64) ? e : Expr(CastNode::Make(DataType::Int(64), e));
}
Expr And(const Expr& a, const Expr& b) { return a ? Expr(AndNode::Make(a, b)) : b; }
Expr Or(const Expr& a, const Expr& b) { return a ? Expr(OrNode::Make(a, b)) : b; }

// The DLPack type code of a buffer element type.
int DLCode(DataType t) {
  switch (t.code()) {
    case DataType::kInt:
      return TESSERA_DL_INT;
    case DataType::kUInt:
      return TESSERA_DL_UINT;
    case DataType::kFloat:
      return TESSERA_DL_FLOAT;
    case DataType::kBFloat:
      return TESSERA_DL_BFLOAT;
    case DataType::kBool:
      return TESSERA_DL_BOOL;
    default:
      return t.is_float8() ? static_cast<int>(t.code()) : -1;
  }
}

// Builds a packed entry: a list of checks and bindings wrapped around the original body.
class PackedEntryBuilder {
 public:
  PackedEntryBuilder(std::string name, PrimFunc func)
      : name_(std::move(name)), func_(std::move(func)) {}

  PrimFunc Build() {
    Var args = VarNode::Make("args", DataType::Handle());
    Var type_codes = VarNode::MakePointer("arg_type_ids", DataType::Int(32), "global");
    Var num_args = VarNode::Make("num_args", DataType::Int(32));
    ret_value_ = VarNode::Make("out_ret_value", DataType::Handle());
    ret_code_ = VarNode::MakePointer("out_ret_tcode", DataType::Int(32), "global");

    size_t n = func_->params.size();
    // The count and the type code of every argument, checked by one call of the runtime
    // (tessera_check_args), which names the first wrong one: one letter per parameter, 'p' a
    // pointer (array, handle or None), 'f' a float (or an int), 'i' an int.
    std::string kinds;
    for (size_t i = 0; i < n; ++i) {
      const Var& p = func_->params[i];
      if (func_->GetBuffer(p) || p->dtype.is_handle()) {
        kinds += 'p';
      } else if (p->dtype.is_float()) {
        kinds += 'f';
      } else if (p->dtype.is_int_or_bool()) {
        kinds += 'i';
      } else {
        TESSERA_THROW_KIND(p->span, ErrorKind::kBuild)
            << "parameter " << p->name << " of " << name_ << " has type " << p->dtype
            << ", which a packed call cannot pass";
      }
    }
    Check(Intrin(DataType::Bool(), "tessera.check_args",
                 {type_codes, num_args, StringImmNode::Make(name_), StringImmNode::Make(kinds)}),
          name_ + ": the arguments do not match the parameters");
    // Scalars first, so that buffers whose shapes use them are checked against their values.
    for (size_t i = 0; i < n; ++i) {
      const Var& p = func_->params[i];
      Expr code = Intrin(DataType::Int(32), "tessera.packed_type_code", {type_codes, I32(i)});
      auto code_is = [&](int c) { return Expr(EQNode::Make(code, I32(c))); };
      if (func_->GetBuffer(p) || p->dtype.is_handle()) {
        // A buffer's handle is read where its checks begin, so that a function of thousands
        // of buffers does not keep thousands of handles live across the other bindings.
        Expr handle = Intrin(DataType::Handle(), "tessera.packed_arg", {args, I32(i)});
        if (func_->GetBuffer(p)) {
          handles_[p.get()] = handle;
        } else if (p->pointer) {
          // A typed pointer given an array (a DLTensor) points at the array's data, not at
          // the DLTensor struct.
          Expr data = Intrin(DataType::Handle(), "tessera.dltensor_get",
                             {handle, I32(TESSERA_DLT_DATA)});
          Bind(p, Intrin(DataType::Handle(), "tir.if_then_else",
                         {code_is(TESSERA_ARG_DLTENSOR), data, handle}));
        } else {
          Bind(p, handle);
        }
      } else if (p->dtype.is_float()) {
        Expr as_float = Intrin(DataType::Float(64), "tessera.packed_arg", {args, I32(i)});
        Expr as_int = CastNode::Make(
            DataType::Float(64), Intrin(DataType::Int(64), "tessera.packed_arg", {args, I32(i)}));
        Expr v = Intrin(DataType::Float(64), "tir.if_then_else",
                        {code_is(TESSERA_ARG_FLOAT), as_float, as_int});
        Bind(p, p->dtype == DataType::Float(64) ? v : Expr(CastNode::Make(p->dtype, v)));
      } else {
        Expr v = Intrin(DataType::Int(64), "tessera.packed_arg", {args, I32(i)});
        if (p->dtype.is_bool()) {
          Bind(p, NENode::Make(v, I64(0)));
        } else {
          Bind(p, p->dtype == DataType::Int(64) ? v : Expr(CastNode::Make(p->dtype, v)));
        }
      }
    }
    // Buffers in parameter order; a run of kTableMinBuffers or more whose shapes are all
    // constant is checked by one call over a static table (tessera_check_dltensor_table).
    std::vector<size_t> buffers;
    for (size_t i = 0; i < n; ++i) {
      if (func_->GetBuffer(func_->params[i])) buffers.push_back(i);
    }
    for (size_t k = 0; k < buffers.size();) {
      size_t end = k;
      while (end < buffers.size() &&
             FullCheckForm(func_->GetBuffer(func_->params[buffers[end]])) != 0) {
        ++end;
      }
      if (end - k >= kTableMinBuffers) {
        CheckTable(args, buffers, k, end);
        k = end;
        continue;
      }
      const Var& p = func_->params[buffers[k]];
      Bind(p, handles_.at(p.get()));
      BindBuffer(p, func_->GetBuffer(p));
      ++k;
    }

    Stmt body = ReturnRewriter(ret_value_, ret_code_).VisitStmt(func_->body);
    // The function's own body, after the argument checks, is marked as TVM marks it.
    body = AttrStmtNode::Make(I32(0), "compute_scope", StringImmNode::Make(name_ + "_compute_"),
                              body);
    body = SeqStmtNode::Flatten(
        {body, EvaluateNode::Make(Intrin(DataType::Int(32), "tir.ret", {I32(0)}))});
    // Checks between two bindings form one flat sequence of asserts (with no-op bodies), so
    // that a function of thousands of parameters nests only as deep as its bindings.
    std::vector<Stmt> checks;
    auto flush = [&] {
      if (checks.empty()) return;
      std::reverse(checks.begin(), checks.end());
      checks.push_back(body);
      body = SeqStmtNode::Flatten(checks);
      checks.clear();
    };
    for (size_t i = items_.size(); i-- > 0;) {
      const Item& it = items_[i];
      if (it.var) {
        flush();
        body = LetStmtNode::Make(it.var, it.value, body);
      } else {
        checks.push_back(AssertStmtNode::Make(it.cond, it.message, EvaluateNode::Make(I32(0))));
      }
    }
    flush();
    AttrMap attrs = func_->attrs;
    attrs["calling_conv"] = StringImmNode::Make("packed");
    // The entry runs on the host: a target with a host becomes that host.
    if (auto it = attrs.find("target"); it != attrs.end()) {
      if (auto* target = AsPtr<MapNode>(it->second)) {
        if (auto host = target->items.find("host"); host != target->items.end()) {
          it->second = host->second;
        }
      }
    }
    attrs["tessera.ret_type"] = StringImmNode::Make(ReturnType().ToString());
    // What the runtime needs to name parameters in its own errors: "kind:dtype:name".
    std::vector<ObjectRef> params;
    for (const Var& p : func_->params) {
      Buffer b = func_->GetBuffer(p);
      std::string kind = b                      ? "buffer"
                         : p->dtype.is_handle() ? "handle"
                         : p->dtype.is_float()  ? "float"
                         : p->dtype.is_bool()   ? "bool"
                                                : "int";
      std::string dtype = b ? b->dtype.ToString() : p->dtype.ToString();
      params.push_back(StringImmNode::Make(kind + ":" + dtype + ":" + p->name));
    }
    attrs["tessera.params"] = ArrayNode::Make(std::move(params));
    return PrimFuncNode::Make({args, type_codes, num_args, ret_value_, ret_code_}, {}, body,
                              DataType::Int(32), attrs, func_->span);
  }

 private:
  // The declared return type; for a function declared void that returns a value with tir.ret
  // (a PrimFunc built by hand, TVM's PrimFunc([...], Evaluate(ret(x)))), the returned value's.
  DataType ReturnType() const {
    if (!func_->ret_type.is_void()) return func_->ret_type;
    DataType found = func_->ret_type;
    PostOrderVisit(func_->body, [&](const ObjectRef& node) {
      auto* call = AsPtr<CallNode>(node);
      if (found.is_void() && call && call->is_op("tir.ret") && call->args.size() == 1) {
        found = call->args[0]->dtype;
      }
    });
    return found;
  }

  struct Item {
    Var var;
    Expr value;
    Expr cond, message;
  };

  // `return x` stores x in the packed return slot and returns 0 (success).
  class ReturnRewriter : public StmtMutator {
   public:
    ReturnRewriter(Var value, Var code) : value_(std::move(value)), code_(std::move(code)) {}
    using StmtMutator::VisitStmt_;
    Stmt VisitStmt_(const EvaluateNode* op) override {
      auto* call = AsPtr<CallNode>(op->value);
      if (!call || !call->is_op("tir.ret")) return GetRef(op);
      Stmt ret = EvaluateNode::Make(Intrin(DataType::Int(32), "tir.ret", {I32(0)}), op->span);
      Stmt set = EvaluateNode::Make(
          Intrin(DataType::Int(32), "tessera.set_return", {value_, code_, call->args[0]}),
          op->span);
      return SeqStmtNode::Make({set, ret}, op->span);
    }

   private:
    Var value_, code_;
  };

  void Check(Expr cond, const std::string& message) {
    items_.push_back({nullptr, nullptr, std::move(cond), StringImmNode::Make(message)});
  }
  void CheckFormat(Expr cond, const std::string& format, std::vector<Expr> values) {
    values.insert(values.begin(), StringImmNode::Make(format));
    items_.push_back({nullptr, nullptr, std::move(cond),
                      Intrin(DataType::Handle(), "tessera.format", std::move(values))});
  }
  void Bind(const Var& v, Expr value) {
    defined_.insert(v.get());
    items_.push_back({v, std::move(value), nullptr, nullptr});
  }
  bool Defined(const Expr& e) {
    return !UsesVar(e, [this](const VarNode* v) { return defined_.count(v) == 0; });
  }

  // `expected` (a buffer field) against `actual` (the int64 value passed): a variable not yet
  // seen is bound to it; anything else is checked.
  void BindOrCheck(const Expr& expected, const Expr& actual, const std::string& where,
                   const std::string& what) {
    auto* var = AsPtr<VarNode>(expected);
    if (var && !defined_.count(var)) {
      Var v = GetRef(var);
      Bind(v, v->dtype == DataType::Int(64) ? actual : Expr(CastNode::Make(v->dtype, actual)));
      return;
    }
    if (!Defined(expected)) {
      TESSERA_THROW_KIND(func_->span, ErrorKind::kBuild)
          << where << " is " << AsScript(expected)
          << ", whose variables no earlier parameter defines; bind them through a scalar "
             "parameter or an earlier buffer dimension";
    }
    CheckFormat(EQNode::Make(AsI64(expected), actual),
                "Argument " + EscapeFormat(where) + " has an unsatisfied constraint: " +
                    EscapeFormat(AsScript(expected)) + " == " + EscapeFormat(what) + " (got %lld)",
                {actual});
  }

  // The form of the runtime's check of a buffer argument (tessera_check_dltensor): 1 or 2
  // (int32 or int64 extents) when it checks everything, because every extent is a constant,
  // strides are compact and the element offset is 0; else 0 (pointer, ndim and dtype only).
  static int FullCheckForm(const Buffer& buf) {
    if (!LoweringStrides(buf).empty() || !IsConstInt(buf->elem_offset, 0)) return 0;
    int form = 0;
    for (const Expr& e : buf->shape) {
      auto v = AsConstInt(e);
      if (!v || *v < 0) return 0;
      int f = e->dtype == DataType::Int(32) ? 1 : e->dtype == DataType::Int(64) ? 2 : 0;
      if (f == 0 || (form != 0 && f != form)) return 0;
      form = f;
    }
    return form == 0 ? 1 : form;
  }

  // Fewer consecutive buffers are checked one call each (as small functions always were).
  static constexpr size_t kTableMinBuffers = 32;

  // One check of the buffer parameters buffers[begin, end) (indices into the parameters),
  // all of whose shapes are constant (FullCheckForm), then their bindings.
  void CheckTable(const Var& args, const std::vector<size_t>& buffers, size_t begin, size_t end) {
    int64_t device_type = func_->GetIntAttr("tessera.device_type", TESSERA_DEVICE_CPU);
    std::vector<Expr> call_args = {args, I32(device_type), I32(end - begin)};
    for (size_t k = begin; k < end; ++k) {
      const Var& p = func_->params[buffers[k]];
      Buffer buf = func_->GetBuffer(p);
      DataType t = buf->dtype;
      std::vector<Expr> entry = {I32(buffers[k]),
                                 StringImmNode::Make(name_ + "." + p->name),
                                 StringImmNode::Make(p->name),
                                 StringImmNode::Make(t.ToString()),
                                 I32(buf->shape.size()),
                                 I32(t.is_bool() ? TESSERA_DL_BOOL : DLCode(t)),
                                 I32(t.is_bool() ? 8 : t.bits()),
                                 I32(t.lanes()),
                                 I32(FullCheckForm(buf))};
      for (const Expr& e : buf->shape) entry.push_back(I64(*AsConstInt(e)));
      call_args.insert(call_args.end(), entry.begin(), entry.end());
    }
    Check(Intrin(DataType::Bool(), "tessera.check_dltensor_table", std::move(call_args)),
          name_ + ": the buffer arguments do not match their declarations");
    for (size_t k = begin; k < end; ++k) {
      const Var& p = func_->params[buffers[k]];
      Buffer buf = func_->GetBuffer(p);
      Bind(p, handles_.at(p.get()));
      if (!defined_.count(buf->data.get())) {
        Bind(buf->data,
             Intrin(DataType::Handle(), "tessera.dltensor_get", {p, I32(TESSERA_DLT_DATA)}));
      }
    }
  }

  void BindBuffer(const Var& param, const Buffer& buf) {
    std::string arg = name_ + "." + param->name;
    auto get = [&](DataType t, int field) {
      return Intrin(t, "tessera.dltensor_get", {param, I32(field)});
    };
    size_t ndim = buf->shape.size();
    DataType t = buf->dtype;
    int64_t device_type = func_->GetIntAttr("tessera.device_type", TESSERA_DEVICE_CPU);
    // One call of the runtime's check instead of a dozen inline asserts per buffer: the C
    // compiler's time on a function of thousands of buffer parameters was mostly these.
    int full = FullCheckForm(buf);
    std::vector<Expr> call_args = {param,
                                   StringImmNode::Make(arg),
                                   StringImmNode::Make(param->name),
                                   StringImmNode::Make(t.ToString()),
                                   I32(ndim),
                                   I32(t.is_bool() ? TESSERA_DL_BOOL : DLCode(t)),
                                   I32(t.is_bool() ? 8 : t.bits()),
                                   I32(t.lanes()),
                                   I32(full),
                                   I32(device_type)};
    if (full) {
      for (const Expr& e : buf->shape) call_args.push_back(I64(*AsConstInt(e)));
    }
    Check(Intrin(DataType::Bool(), "tessera.check_dltensor", std::move(call_args)),
          arg + " does not match its declaration");
    if (full) {
      if (!defined_.count(buf->data.get()))
        Bind(buf->data, get(DataType::Handle(), TESSERA_DLT_DATA));
      return;
    }

    std::vector<Expr> shape;
    for (size_t k = 0; k < ndim; ++k) {
      shape.push_back(Intrin(DataType::Int(64), "tessera.dltensor_shape", {param, I32(k)}));
    }
    for (size_t k = 0; k < ndim; ++k) {
      std::string dim = "[" + std::to_string(k) + "]";
      BindOrCheck(buf->shape[k], shape[k], arg + ".shape" + dim, param->name + ".shape" + dim);
    }
    // An array with a 0 dimension has no elements: its strides and data pointer do not matter.
    Expr empty;
    for (size_t k = 0; k < ndim; ++k) empty = Or(empty, EQNode::Make(shape[k], I64(0)));
    // Strides: none declared means compact row-major; size-1 dimensions may have any stride.
    Expr strides_null = Intrin(DataType::Bool(), "tessera.isnullptr",
                               {get(DataType::Handle(), TESSERA_DLT_STRIDES)});
    std::vector<Expr> compact(ndim);
    Expr expect = I64(1);
    for (size_t k = ndim; k-- > 0;) {
      compact[k] = expect;
      expect = MulNode::Make(expect, shape[k]);
    }
    std::vector<Expr> buf_strides = LoweringStrides(buf);
    if (buf_strides.empty()) {
      Expr ok;
      for (size_t k = 0; k < ndim; ++k) {
        Expr stride = Intrin(DataType::Int(64), "tessera.dltensor_stride", {param, I32(k)});
        ok =
            And(ok, OrNode::Make(EQNode::Make(shape[k], I64(1)), EQNode::Make(stride, compact[k])));
      }
      if (ok) {
        Expr cond = OrNode::Make(strides_null, ok);
        if (empty) cond = OrNode::Make(empty, cond);
        Check(cond, arg + ".strides: expected to be compact array");
      }
    } else {
      for (size_t k = 0; k < ndim; ++k) {
        Expr stride =
            Intrin(DataType::Int(64), "tir.if_then_else",
                   {strides_null, compact[k],
                    Intrin(DataType::Int(64), "tessera.dltensor_stride", {param, I32(k)})});
        std::string dim = "[" + std::to_string(k) + "]";
        BindOrCheck(buf_strides[k], stride, arg + ".strides" + dim,
                    param->name + ".strides" + dim);
      }
    }
    // The element offset: 0 means the data starts at byte_offset; a variable is bound to it.
    Expr byte_offset =
        CastNode::Make(DataType::Int(64), get(DataType::UInt(64), TESSERA_DLT_BYTE_OFFSET));
    Expr data = get(DataType::Handle(), TESSERA_DLT_DATA);
    if (!IsConstInt(buf->elem_offset, 0)) {
      int64_t bytes = std::max(1, t.bytes());
      Check(EQNode::Make(FloorModNode::Make(byte_offset, I64(bytes)), I64(0)),
            arg + ".byte_offset is expected to be a multiple of the element size");
      BindOrCheck(buf->elem_offset, FloorDivNode::Make(byte_offset, I64(bytes)),
                  arg + ".elem_offset", param->name + ".elem_offset");
      data = get(DataType::Handle(), TESSERA_DLT_RAW_DATA);
    }
    // Host targets take CPU arrays; the host part of a GPU build takes arrays on its device.
    CheckFormat(
        EQNode::Make(get(DataType::Int(32), TESSERA_DLT_DEVICE_TYPE), I32(device_type)),
        "Argument " + arg + ".device_type has an unsatisfied constraint: " +
            std::to_string(device_type) + " == " + param->name + ".device_type (got %lld)",
        {CastNode::Make(DataType::Int(64), get(DataType::Int(32), TESSERA_DLT_DEVICE_TYPE))});
    Expr has_data = NotNode::Make(Intrin(DataType::Bool(), "tessera.isnullptr",
                                         {get(DataType::Handle(), TESSERA_DLT_RAW_DATA)}));
    Check(empty ? Expr(OrNode::Make(has_data, empty)) : has_data, arg + " has a NULL data pointer");
    if (!defined_.count(buf->data.get())) Bind(buf->data, data);
  }

  std::string name_;
  PrimFunc func_;
  Var ret_value_, ret_code_;
  std::vector<Item> items_;
  std::unordered_set<const VarNode*> defined_;
  std::unordered_map<const VarNode*, Expr> handles_;  // buffer parameter -> its packed_arg
};

// Private functions take the data pointer of each buffer parameter instead of the buffer.
PrimFunc Unpack(const PrimFunc& f) {
  if (f->buffer_map.empty()) return f;
  std::vector<Var> params;
  for (const Var& p : f->params) {
    Buffer b = f->GetBuffer(p);
    params.push_back(b ? b->data : p);
  }
  return PrimFuncNode::Make(params, {}, f->body, f->ret_type, f->attrs, f->span);
}

class CallRedirector : public StmtExprMutator {
 public:
  explicit CallRedirector(const std::unordered_set<std::string>& names) : names_(names) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* gv = AsPtr<GlobalVarNode>(call->op);
    if (!gv || !names_.count(gv->name_hint)) return e;
    return CallNode::Make(call->dtype, GlobalVarNode::Make(gv->name_hint + "_impl"), call->args,
                          call->span);
  }

 private:
  const std::unordered_set<std::string>& names_;
};

bool IsPacked(const PrimFunc& f) { return f->GetStrAttr("calling_conv") == "packed"; }

IRModule MakePackedAPIModule(IRModule mod, const PassContext&) {
  // Public functions that other functions call keep an unpacked copy for those calls.
  std::unordered_set<std::string> called;
  for (const auto& [gv, f] : mod->functions) {
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      auto* call = AsPtr<CallNode>(n);
      auto* callee = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
      if (!callee) return;
      PrimFunc target = mod->Lookup(callee->name_hint);
      if (target && IsPublic(target) && !IsPacked(target)) called.insert(callee->name_hint);
    });
  }
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    if (IsPacked(f)) {
      out.emplace_back(gv, f);
      continue;
    }
    PrimFunc g = f;
    if (!called.empty()) {
      Stmt body = CallRedirector(called).VisitStmt(f->body);
      if (body != f->body) g = f->WithBody(body);
    }
    if (IsPublic(g)) {
      if (called.count(gv->name_hint)) {
        AttrMap attrs = g->attrs;
        attrs.erase("global_symbol");
        PrimFunc impl =
            PrimFuncNode::Make(g->params, g->buffer_map, g->body, g->ret_type, attrs, g->span);
        out.emplace_back(GlobalVarNode::Make(gv->name_hint + "_impl"), Unpack(impl));
      }
      out.emplace_back(gv, PackedEntryBuilder(SymbolName(gv, g), g).Build());
      changed = true;
    } else {
      PrimFunc u = Unpack(g);
      changed = changed || u != f;
      out.emplace_back(gv, u);
    }
  }
  if (!changed) return mod;
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass MakePackedAPI() { return CreateModulePass(MakePackedAPIModule, 0, "tir.MakePackedAPI"); }
TESSERA_REGISTER_PASS("tir.MakePackedAPI", MakePackedAPI);

}  // namespace transform
}  // namespace tessera
