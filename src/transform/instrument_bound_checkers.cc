// tir.InstrumentBoundCheckers: with "tir.instrument_bound_checkers", every buffer access whose
// index cannot be proven inside the buffer is checked when the program runs. A failing access is
// skipped (never performed) and reported: the statement holding it becomes
//   if (0 <= i && i < n) { stmt } else { tessera.bound_error("...", i, n) }
// and the packed entry returns the first such error when it returns (tessera/runtime.h), so the
// check also works inside parallel loops, where no early return is possible.
//
// What is checked: loads and stores of BufferStore, Evaluate, LetStmt values, IfThenElse
// conditions and For bounds, scalar and Ramp (both end lanes) indices, and broadcast indices.
// Loads that are only evaluated under a condition (the branches of a Select or if_then_else, the
// right operand of && and ||) and loads in While conditions are not checked: hoisting their
// check would report accesses that never happen. Device kernels of GPU targets are not
// instrumented (CUDA prints no host-side error path).
#include <sstream>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// An index as the user wrote it: variable and buffer names as declared (the TVMScript printer
// would rename the flattened buffers), for the error message.
std::string IndexText(const Expr& e) {
  if (auto* v = AsPtr<VarNode>(e)) return v->name;
  if (auto* i = AsPtr<IntImmNode>(e)) return std::to_string(i->value);
  if (auto* c = AsPtr<CastNode>(e)) return IndexText(c->value);
  if (auto* r = AsPtr<RampNode>(e)) {  // the lanes of a vector access
    std::string stride = IsConstInt(r->stride, 1) ? "" : ", step " + IndexText(r->stride);
    std::string last = r->lanes < 0 ? "(T.vscale() * " + std::to_string(-r->lanes) + " - 1)"
                                     : std::to_string(r->lanes - 1);
    return IndexText(r->base) + " .. +" + last + stride;
  }
  if (auto* l = AsPtr<BufferLoadNode>(e)) {
    std::string s = l->buffer->name + "[";
    for (size_t k = 0; k < l->indices.size(); ++k) s += (k ? ", " : "") + IndexText(l->indices[k]);
    return s + "]";
  }
  auto bin = [](const char* sym, const Expr& a, const Expr& b) {
    auto wrap = [](const Expr& x) {
      std::string t = IndexText(x);
      bool simple = AsPtr<VarNode>(x) || AsPtr<IntImmNode>(x) || AsPtr<BufferLoadNode>(x);
      return simple ? t : "(" + t + ")";
    };
    return wrap(a) + " " + sym + " " + wrap(b);
  };
  if (auto* o = AsPtr<AddNode>(e)) return bin("+", o->a, o->b);
  if (auto* o = AsPtr<SubNode>(e)) return bin("-", o->a, o->b);
  if (auto* o = AsPtr<MulNode>(e)) return bin("*", o->a, o->b);
  if (auto* o = AsPtr<FloorDivNode>(e)) return bin("//", o->a, o->b);
  if (auto* o = AsPtr<FloorModNode>(e)) return bin("%", o->a, o->b);
  return AsScript(e);
}

struct Check {
  Expr cond;        // true when the access is inside the buffer
  Expr index;       // the offending index (int64), for the message
  Expr extent;      // the extent it is checked against (int64)
  std::string what;  // "A[i * 8 + j]" and where it is written
};

class BoundChecker : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  bool changed() const { return changed_; }

  Stmt VisitStmt_(const ForNode* op) override {
    // A thread-bound loop (GPU kernels) is not instrumented: its code runs on the device.
    if (op->for_kind == ForKind::kThreadBinding) return GetRef(op);
    std::vector<Check> checks;
    Collect(op->min, &checks);
    Collect(op->extent, &checks);
    ana_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    Stmt body = VisitStmt(op->body);
    ana_.Unbind(op->loop_var);
    Stmt s = body == op->body ? GetRef(op)
                              : ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                                              op->thread_binding, op->annotations, op->span);
    return Guard(s, checks);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    // A thread-bound region (GPU kernels) is not instrumented: its code runs on the device.
    if (op->attr_key == "thread_extent") return GetRef(op);
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    std::vector<Check> checks;
    Collect(op->value, &checks);
    for (const Expr& i : op->indices) Collect(i, &checks);
    AddAccess(op->buffer, op->indices, op->span, &checks);
    return Guard(GetRef(op), checks);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    std::vector<Check> checks;
    Collect(op->value, &checks);
    return Guard(GetRef(op), checks);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    std::vector<Check> checks;
    Collect(op->value, &checks);
    Stmt s = StmtExprMutator::VisitStmt_(op);
    return Guard(s, checks);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    std::vector<Check> checks;
    Collect(op->condition, &checks);
    Stmt s = StmtExprMutator::VisitStmt_(op);
    return Guard(s, checks);
  }

 private:
  // The checks of the loads `e` evaluates unconditionally, inner loads first.
  void Collect(const Expr& e, std::vector<Check>* out) {
    if (!e) return;
    if (auto* load = AsPtr<BufferLoadNode>(e)) {
      for (const Expr& i : load->indices) Collect(i, out);
      AddAccess(load->buffer, load->indices, load->span, out);
      return;
    }
    if (auto* sel = AsPtr<SelectNode>(e)) return Collect(sel->condition, out);
    if (auto* a = AsPtr<AndNode>(e)) return Collect(a->a, out);
    if (auto* o = AsPtr<OrNode>(e)) return Collect(o->a, out);
    if (auto* call = AsPtr<CallNode>(e); call && call->is_op("tir.if_then_else")) {
      return Collect(call->args[0], out);
    }
    // Every other expression evaluates all of its operands: walk the direct children.
    struct Children : ExprVisitor {
      bool top = true;
      std::vector<Expr> kids;
      void VisitExpr(const Expr& c) override {
        if (!top) {
          kids.push_back(c);
          return;
        }
        top = false;
        ExprVisitor::VisitExpr(c);
      }
    } children;
    children.VisitExpr(e);
    for (const Expr& c : children.kids) Collect(c, out);
  }

  void AddAccess(const Buffer& buf, const std::vector<Expr>& indices, const Span& span,
                 std::vector<Check>* out) {
    if (indices.size() != buf->shape.size()) return;  // views the analysis cannot relate
    for (size_t d = 0; d < indices.size(); ++d) {
      std::vector<Expr> ends;
      const Expr& index = indices[d];
      if (auto* ramp = AsPtr<RampNode>(index)) {
        ends.push_back(ramp->base);
        ends.push_back(AddNode::Make(ramp->base, MulNode::Make(ramp->stride, RampLastLane(ramp))));
      } else if (auto* bc = AsPtr<BroadcastNode>(index)) {
        ends.push_back(bc->value);
      } else if (index->dtype.is_scalar()) {
        ends.push_back(index);
      } else {
        continue;  // a gather: no cheap check
      }
      Expr extent = buf->shape[d];
      for (const Expr& i : ends) {
        Expr i64 = i->dtype == DataType::Int(64) ? i : Expr(CastNode::Make(DataType::Int(64), i));
        Expr n64 =
            extent->dtype == DataType::Int(64) ? extent : Expr(CastNode::Make(DataType::Int(64), extent));
        Expr cond = AndNode::Make(LENode::Make(MakeConst(DataType::Int(64), int64_t(0)), i64),
                                  LTNode::Make(i64, n64));
        if (ana_.CanProve(cond)) continue;
        i64 = ana_.Simplify(i64);
        n64 = ana_.Simplify(n64);
        cond = ana_.Simplify(cond);
        std::string what = buf->name + "[";
        for (size_t k = 0; k < indices.size(); ++k) {
          what += (k ? ", " : "") + IndexText(indices[k]);
        }
        what += "]";
        if (indices.size() > 1) what += " (dimension " + std::to_string(d) + ")";
        if (span.defined()) what += " at " + span.ToString();
        out->push_back({cond, i64, n64, what});
      }
    }
  }

  Stmt Guard(Stmt s, const std::vector<Check>& checks) {
    for (auto it = checks.rbegin(); it != checks.rend(); ++it) {
      Expr msg = CallNode::Make(
          DataType::Int(32), OpNode::Get("tessera.bound_error"),
          {StringImmNode::Make("out-of-bounds access " + EscapeFormat(it->what) +
                               ": index %lld is outside [0, %lld) (tir.instrument_bound_checkers)"),
           it->index, it->extent});
      s = IfThenElseNode::Make(it->cond, s, EvaluateNode::Make(msg), s->span);
      changed_ = true;
    }
    return s;
  }

  arith::Analyzer ana_;
  bool changed_ = false;
};

PrimFunc InstrumentFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  if (!ctx.GetBool("tir.instrument_bound_checkers", false)) return f;
  if (f->GetStrAttr("calling_conv") == "device_kernel") return f;
  BoundChecker checker;
  Stmt body = checker.VisitStmt(f->body);
  if (!checker.changed()) return f;
  return f->WithBody(body);
}

}  // namespace

Pass InstrumentBoundCheckers() {
  return CreatePrimFuncPass(InstrumentFunc, 0, "tir.InstrumentBoundCheckers");
}
TESSERA_REGISTER_PASS("tir.InstrumentBoundCheckers", InstrumentBoundCheckers);

}  // namespace transform
}  // namespace tessera
