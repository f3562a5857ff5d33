// PointerAccessExtents: how far into each pointer argument a kernel provably reaches.
#include <map>
#include <optional>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int64_t kUnknown = -1;

int64_t Merge(int64_t a, int64_t b) { return (a == kUnknown || b == kUnknown) ? kUnknown : std::max(a, b); }

class ExtentCollector : public StmtExprVisitor {
 public:
  ExtentCollector(const IRModule& mod, const PrimFunc& func,
                  std::map<const PrimFuncNode*, std::vector<int64_t>>* memo)
      : mod_(mod), func_(func), memo_(memo) {
    for (size_t i = 0; i < func->params.size(); ++i) index_[func->params[i].get()] = i;
    extents_.assign(func->params.size(), 0);
  }
  std::vector<int64_t> Run() {
    VisitStmt(func_->body);
    return extents_;
  }

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitExpr_(const BufferLoadNode* op) override {
    Record(op->buffer, op->indices, op->predicate);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Record(op->buffer, op->indices, op->predicate);
    StmtExprVisitor::VisitStmt_(op);
  }
  // A pointer variable bound to an argument's address (``vp = a.as_ptr("i32x8")``, ``(c + 7)``
  // seen as vectors): what is accessed through it is accessed in the argument, from the
  // variable's byte offset on.
  void VisitStmt_(const LetStmtNode* op) override {
    if (op->var->pointer) {
      const Expr& value = op->value;
      if (auto* v = AsPtr<VarNode>(value)) {
        if (index_.count(v) || alias_.count(v)) BindAlias(op->var.get(), v, 0);
      } else if (auto* call = AsPtr<CallNode>(value)) {
        auto* load = call->is_op("tir.address_of") ? AsPtr<BufferLoadNode>(call->args[0]) : nullptr;
        const VarNode* base = load ? load->buffer->data.get() : nullptr;
        if (base && (index_.count(base) || alias_.count(base))) {
          auto c =
              load->indices.size() == 1 ? AsConstInt(SimplifyExpr(load->indices[0])) : std::nullopt;
          int64_t bytes = ElementBytes(load->buffer->dtype);
          BindAlias(op->var.get(), base, (c && *c >= 0 && bytes > 0) ? *c * bytes : kUnknown);
        }
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const CallNode* op) override {
    if (auto* gv = AsPtr<GlobalVarNode>(op->op)) {
      PrimFunc callee = mod_->Lookup(gv->name_hint);
      if (callee) {
        std::vector<int64_t> inner = Of(mod_, callee, memo_);
        for (size_t i = 0; i < op->args.size() && i < inner.size(); ++i) {
          const VarNode* param = i < callee->params.size() ? callee->params[i].get() : nullptr;
          int64_t unit = param && param->pointer ? ScalarBytes(param) : 0;
          Forward(op->args[i], inner[i], unit);
        }
      }
      for (const Expr& a : op->args) {
        if (!IsInstance<VarNode>(a.get())) VisitExpr(a);
      }
      return;
    }
    StmtExprVisitor::VisitExpr_(op);
  }

  static std::vector<int64_t> Of(const IRModule& mod, const PrimFunc& f,
                                 std::map<const PrimFuncNode*, std::vector<int64_t>>* memo) {
    auto it = memo->find(f.get());
    if (it != memo->end()) return it->second;
    (*memo)[f.get()] = std::vector<int64_t>(f->params.size(), kUnknown);  // guards cycles
    std::vector<int64_t> r = ExtentCollector(mod, f, memo).Run();
    (*memo)[f.get()] = r;
    return r;
  }

 private:
  // An argument reaching a callee parameter accessed `inner` elements deep, elements of
  // `unit` bytes (the callee parameter's pointee; 0: the argument's own pointee).
  void Forward(const Expr& arg, int64_t inner, int64_t unit) {
    if (inner == 0) return;
    if (auto* v = AsPtr<VarNode>(arg)) {
      Add(v, inner, unit);
      return;
    }
    auto* call = AsPtr<CallNode>(arg);
    if (call && call->is_op("tir.address_of")) {
      if (auto* load = AsPtr<BufferLoadNode>(call->args[0])) {
        auto c = AsConstInt(SimplifyExpr(load->indices.back()));
        if (!c || inner == kUnknown) return Add(load->buffer->data.get(), kUnknown);
        // In bytes: the element the address names, then what the callee reaches from it.
        int64_t from = *c * ElementBytes(load->buffer->dtype);
        int64_t reach = inner * (unit > 0 ? unit : ElementBytes(load->buffer->dtype));
        Add(load->buffer->data.get(), from + reach, 1);
      }
    }
  }

  // Lanes past the last one a constant predicate enables are not accessed (the padding of a
  // vector split to native width); -1 when no lane is, the lane count when unknown.
  static int LastActiveLane(const Expr& pred, int lanes) {
    if (!pred) return lanes - 1;
    if (auto* call = AsPtr<CallNode>(pred)) {
      if (call->is_op("dsl.const_mask")) {
        int last = -1;
        for (size_t i = 0; i < call->args.size(); ++i) {
          if (!IsConstInt(call->args[i], 0)) last = static_cast<int>(i);
        }
        return last;
      }
    }
    if (auto* both = AsPtr<AndNode>(pred)) {
      return std::min(LastActiveLane(both->a, lanes), LastActiveLane(both->b, lanes));
    }
    return lanes - 1;
  }

  void Record(const Buffer& buf, const std::vector<Expr>& indices, const Expr& pred = nullptr) {
    if (indices.size() != 1) return Add(buf->data.get(), kUnknown);
    Expr idx = SimplifyExpr(indices[0]);
    // Counted in the buffer's own elements: a vector view of a scalar pointer indexes lanes.
    const int64_t unit = ElementBytes(buf->dtype);
    if (auto c = AsConstInt(idx)) return Add(buf->data.get(), *c + 1, unit);
    if (auto* ramp = AsPtr<RampNode>(idx)) {
      if (ramp->lanes < 0) return Add(buf->data.get(), kUnknown);  // vscale * k lanes
      auto base = AsConstInt(ramp->base), stride = AsConstInt(ramp->stride);
      int last = LastActiveLane(pred, ramp->lanes);
      if (last < 0) return;
      if (base && stride) {
        return Add(buf->data.get(), std::max(*base, *base + last * *stride) + 1, unit);
      }
    }
    Add(buf->data.get(), kUnknown);
  }

  static int64_t ElementBytes(DataType t) {
    return t.is_void() ? 1 : (static_cast<int64_t>(t.bits()) * t.lanes() + 7) / 8;
  }
  static int64_t PointeeBytes(const VarNode* v) { return ElementBytes(v->pointer->element); }
  // A parameter's extent counts scalars: the lanes of a pointer to vectors, as the array holds.
  static int64_t ScalarBytes(const VarNode* v) {
    return ElementBytes(v->pointer->element.element_of());
  }

  struct Alias {
    const Object* param;
    int64_t byte_offset;  // kUnknown when not a constant
    int64_t element_bytes;
  };

  // `var` points `byte_offset` bytes into what `base` (a parameter or an alias of one) points to.
  void BindAlias(const VarNode* var, const VarNode* base, int64_t byte_offset) {
    Alias a{base, byte_offset, PointeeBytes(var)};
    auto it = alias_.find(base);
    if (it != alias_.end()) {
      a.param = it->second.param;
      a.byte_offset = (it->second.byte_offset == kUnknown || byte_offset == kUnknown)
                          ? kUnknown
                          : it->second.byte_offset + byte_offset;
    }
    alias_[var] = a;
  }

  // `extent` elements of `unit_bytes` bytes each; 0 means elements of the variable's pointee.
  void Add(const Object* var, int64_t extent, int64_t unit_bytes = 0) {
    auto al = alias_.find(var);
    if (al != alias_.end()) {
      const Alias& a = al->second;
      auto p = index_.find(a.param);
      if (extent == kUnknown || a.byte_offset == kUnknown || a.element_bytes <= 0) {
        return Add(a.param, extent == 0 ? 0 : kUnknown);
      }
      if (extent == 0) return;
      // The extent is counted in the parameter's scalars (a void pointer is an int8 one).
      int64_t unit = ScalarBytes(func_->params[p->second].get());
      int64_t bytes = a.byte_offset + extent * (unit_bytes > 0 ? unit_bytes : a.element_bytes);
      return Add(a.param, (bytes + unit - 1) / unit, unit);
    }
    auto it = index_.find(var);
    if (it == index_.end()) return;
    // A parameter's extent is counted in its scalars (the lanes of a pointer to vectors);
    // an access in other units (vectors, a scalar view of another type, a callee's) is converted.
    auto* param = static_cast<const VarNode*>(var);
    if (param->pointer && extent > 0) {
      int64_t own = ScalarBytes(param);
      int64_t unit = unit_bytes > 0 ? unit_bytes : PointeeBytes(param);
      if (unit != own && own > 0) extent = (extent * unit + own - 1) / own;
    }
    extents_[it->second] = Merge(extents_[it->second], extent);
  }

  const IRModule& mod_;
  PrimFunc func_;
  std::map<const PrimFuncNode*, std::vector<int64_t>>* memo_;
  std::map<const Object*, size_t> index_;
  std::vector<int64_t> extents_;
  std::map<const Object*, Alias> alias_;  // pointer variables into a parameter
};

// Which parameters a function may write through (see PointerWrites).
class WriteCollector : public StmtExprVisitor {
 public:
  WriteCollector(const IRModule& mod, const PrimFunc& func,
                 std::map<const PrimFuncNode*, std::vector<bool>>* memo)
      : mod_(mod), func_(func), memo_(memo) {
    for (size_t i = 0; i < func->params.size(); ++i) index_[func->params[i].get()] = i;
    written_.assign(func->params.size(), false);
  }

  static std::vector<bool> Of(const IRModule& mod, const PrimFunc& f,
                              std::map<const PrimFuncNode*, std::vector<bool>>* memo) {
    auto it = memo->find(f.get());
    if (it != memo->end()) return it->second;
    (*memo)[f.get()] = std::vector<bool>(f->params.size(), true);  // guards cycles
    WriteCollector c(mod, f, memo);
    c.VisitStmt(f->body);
    (*memo)[f.get()] = c.written_;
    return c.written_;
  }

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const BufferStoreNode* op) override {
    Mark(op->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  // A pointer used as a value escapes the analysis: count it as written.
  void VisitExpr_(const VarNode* op) override { Mark(op); }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.address_of") && !op->args.empty()) {
      if (auto* load = AsPtr<BufferLoadNode>(op->args[0])) Mark(load->buffer->data.get());
    }
    auto* gv = AsPtr<GlobalVarNode>(op->op);
    PrimFunc callee = gv ? mod_->Lookup(gv->name_hint) : PrimFunc();
    if (!callee) return StmtExprVisitor::VisitExpr_(op);
    std::vector<bool> inner = Of(mod_, callee, memo_);
    for (size_t i = 0; i < op->args.size(); ++i) {
      auto* v = AsPtr<VarNode>(op->args[i]);
      if (v && i < inner.size()) {
        if (inner[i]) Mark(v);
      } else {
        VisitExpr(op->args[i]);
      }
    }
  }

 private:
  void Mark(const Object* var) {
    auto it = index_.find(var);
    if (it != index_.end()) written_[it->second] = true;
  }

  const IRModule& mod_;
  PrimFunc func_;
  std::map<const PrimFuncNode*, std::vector<bool>>* memo_;
  std::map<const Object*, size_t> index_;
  std::vector<bool> written_;
};

}  // namespace

std::vector<bool> PointerWrites(const IRModule& mod, const std::string& entry) {
  PrimFunc f = mod->Lookup(entry);
  if (!f) return {};
  std::map<const PrimFuncNode*, std::vector<bool>> memo;
  return WriteCollector::Of(mod, f, &memo);
}

std::vector<int64_t> PointerAccessExtents(const IRModule& mod, const std::string& entry) {
  PrimFunc f = mod->Lookup(entry);
  if (!f) return {};
  std::map<const PrimFuncNode*, std::vector<int64_t>> memo;
  return ExtentCollector::Of(mod, f, &memo);
}

}  // namespace transform
}  // namespace tessera
