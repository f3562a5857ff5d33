// tir.VectorizeLoop: a T.vectorized loop becomes vector code (Ramp indices, Broadcast
// operands); a body that cannot be vectorized keeps a serial loop.
#include <unordered_map>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/target.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// The most lanes of a vector; longer loops are split into chunks of the chosen width.
constexpr int kMaxLanes = 16;

}  // namespace

// The host's facts are detected once, in ir/target.cc.
int HostVectorBits() { return HostFacts().vector_bits; }

namespace {

struct NotVectorizable {};

// Rewrites a loop body for `lanes` consecutive values of the loop variable at once.
class Vectorizer : public StmtExprMutator {
 public:
  Vectorizer(const Var& var, Expr ramp, int lanes) : lanes_(lanes) {
    vmap_[var.get()] = std::move(ramp);
  }
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // Math intrinsics that tir.LowerIntrin lowers lane by lane.
  static bool IsLaneWiseMath(const CallNode* op) {
    auto* callee = AsPtr<OpNode>(op->op);
    if (!callee || callee->effect != CallEffect::kPure || !op->dtype.is_float()) return false;
    const std::string& n = callee->name;
    return !callee->GetStrAttr("c.name").empty() || n == "tir.rsqrt" || n == "tir.sigmoid" ||
           n == "tir.abs";
  }

  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

#define TESSERA_VECTORIZE_BINARY(name)               \
  Expr VisitExpr_(const name##Node* op) override {   \
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b); \
    if (a == op->a && b == op->b) return GetRef(op); \
    Widen(&a, &b);                                   \
    return name##Node::Make(a, b, op->span);         \
  }
  TESSERA_BINARY_NODES(TESSERA_VECTORIZE_BINARY)
#undef TESSERA_VECTORIZE_BINARY

  Expr VisitExpr_(const CastNode* op) override {
    Expr v = VisitExpr(op->value);
    if (v == op->value) return GetRef(op);
    return CastNode::Make(op->dtype.with_lanes(v->dtype.lanes()), v, op->span);
  }
  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition), t = VisitExpr(op->true_value),
         f = VisitExpr(op->false_value);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    Widen(&t, &f);
    if (c->dtype.is_vector()) {
      t = Broadcast(t);
      f = Broadcast(f);
    }
    return SelectNode::Make(c, t, f, op->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    if (op->predicate || op->buffer->dtype.is_bool() || op->buffer->dtype.is_vector()) {
      return Invariant(GetRef(op));
    }
    std::vector<Expr> idx;
    bool changed = false;
    for (size_t i = 0; i < op->indices.size(); ++i) {
      Expr e = VisitExpr(op->indices[i]);
      changed = changed || e != op->indices[i];
      if (e->dtype.is_vector() && i + 1 != op->indices.size()) throw NotVectorizable();
      idx.push_back(e->dtype.is_vector() ? SimplifyExpr(e) : e);
    }
    if (!changed) return GetRef(op);
    return BufferLoadNode::Make(op->buffer, std::move(idx), nullptr, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    if (!IsLaneWiseMath(op)) return Invariant(GetRef(op));
    std::vector<Expr> args;
    bool changed = false, vector = false;
    for (const Expr& a : op->args) {
      args.push_back(VisitExpr(a));
      changed = changed || args.back() != a;
      vector = vector || args.back()->dtype.is_vector();
    }
    if (!changed) return GetRef(op);
    if (vector) {
      for (Expr& a : args) a = Broadcast(a);
    }
    return CallNode::Make(op->dtype.with_lanes(vector ? lanes_ : 1), op->op, args, op->span);
  }
  Expr VisitExpr_(const LetNode* op) override { return Invariant(GetRef(op)); }
  Expr VisitExpr_(const RampNode* op) override { return Invariant(GetRef(op)); }
  Expr VisitExpr_(const BroadcastNode* op) override { return Invariant(GetRef(op)); }
  Expr VisitExpr_(const ShuffleNode* op) override { return Invariant(GetRef(op)); }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (op->predicate || op->buffer->dtype.is_bool() || op->buffer->dtype.is_vector()) {
      if (UsesVectorVar(GetRef(op))) throw NotVectorizable();
      return GetRef(op);
    }
    Expr value = VisitExpr(op->value);
    std::vector<Expr> idx;
    bool changed = value != op->value;
    for (size_t i = 0; i < op->indices.size(); ++i) {
      Expr e = VisitExpr(op->indices[i]);
      changed = changed || e != op->indices[i];
      if (e->dtype.is_vector() && i + 1 != op->indices.size()) throw NotVectorizable();
      idx.push_back(e->dtype.is_vector() ? SimplifyExpr(e) : e);
    }
    if (!changed) return GetRef(op);
    // A vector value stored at one place is a reduction across lanes: not done here.
    if (!idx.back()->dtype.is_vector()) throw NotVectorizable();
    if (value->dtype.is_scalar()) value = BroadcastNode::Make(value, lanes_);
    return BufferStoreNode::Make(op->buffer, value, std::move(idx), nullptr, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (value->dtype.is_vector()) {
      if (value->dtype.is_bool()) throw NotVectorizable();
      Var v = VarNode::Make(op->var->name, value->dtype, op->var->span);
      vmap_[op->var.get()] = v;
      Stmt body = VisitStmt(op->body);
      return LetStmtNode::Make(v, value, body, op->span);
    }
    Stmt body = VisitStmt(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }
  Stmt VisitStmt_(const EvaluateNode* op) override {
    // break, continue and other calls with effects act once per iteration, not per lane.
    if (auto* call = AsPtr<CallNode>(op->value)) {
      auto* callee = AsPtr<OpNode>(call->op);
      if (!callee || callee->effect != CallEffect::kPure) throw NotVectorizable();
    }
    return Fallback(op);
  }
  Stmt VisitStmt_(const ForNode* op) override { return Fallback(op); }
  Stmt VisitStmt_(const WhileNode* op) override { return Fallback(op); }
  Stmt VisitStmt_(const IfThenElseNode* op) override { return Fallback(op); }
  Stmt VisitStmt_(const AllocateNode* op) override { return Fallback(op); }
  Stmt VisitStmt_(const AssertStmtNode* op) override { return Fallback(op); }
  Stmt VisitStmt_(const AttrStmtNode* op) override { return Fallback(op); }

 private:
  Expr Lookup(const VarNode* op) {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  bool UsesVectorVar(const Stmt& s) {
    return UsesVar(s, [this](const VarNode* v) { return vmap_.count(v) != 0; });
  }
  bool UsesVectorVar(const Expr& e) {
    return UsesVar(e, [this](const VarNode* v) { return vmap_.count(v) != 0; });
  }
  // Expressions we do not vectorize are fine as long as they do not vary across lanes.
  Expr Invariant(const Expr& e) {
    if (UsesVectorVar(e)) throw NotVectorizable();
    return e;
  }
  Stmt Fallback(const StmtNode* op) {
    Stmt s = GetRef(op);
    if (UsesVectorVar(s)) throw NotVectorizable();
    return s;
  }
  Expr Broadcast(const Expr& e) {
    return e->dtype.is_scalar() ? Expr(BroadcastNode::Make(e, lanes_)) : e;
  }
  void Widen(Expr* a, Expr* b) {
    if ((*a)->dtype.is_vector() || (*b)->dtype.is_vector()) {
      *a = Broadcast(*a);
      *b = Broadcast(*b);
    }
  }

  int lanes_;
  VarMap vmap_;
};

class LoopVectorizer : public StmtMutator {
 public:
  // `vector_bits` > 0: a chunk is at most that many bits of the widest element type the loop
  // stores or loads; 0: at most kMaxLanes lanes whatever the type.
  LoopVectorizer(bool disabled, int vector_bits) : disabled_(disabled), vector_bits_(vector_bits) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind != ForKind::kVectorized) return s;
    auto extent = AsConstInt(loop->extent);
    if (!disabled_ && extent && *extent > 1) {
      if (Stmt v = Vectorize(loop, *extent)) return v;
    }
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body,
                         nullptr, loop->annotations, loop->span);
  }

 private:
  int MaxLanes(const Stmt& body) const {
    if (vector_bits_ <= 0) return kMaxLanes;
    int bits = 8;
    PostOrderVisit(body, [&bits](const ObjectRef& n) {
      if (auto* st = AsPtr<BufferStoreNode>(n)) bits = std::max(bits, st->buffer->dtype.bits());
      if (auto* ld = AsPtr<BufferLoadNode>(n)) bits = std::max(bits, ld->buffer->dtype.bits());
    });
    return std::max(2, std::min(kMaxLanes, vector_bits_ / bits));
  }

  static int ChooseLanes(int64_t extent, int max_lanes) {
    for (int lanes = max_lanes; lanes >= 2; lanes /= 2) {
      if (extent % lanes == 0) return lanes;
    }
    return 0;
  }

  Stmt Vectorize(const ForNode* loop, int64_t extent) {
    int lanes = ChooseLanes(extent, MaxLanes(loop->body));
    if (lanes == 0) return nullptr;
    // A body that does not depend on the variable runs `extent` times: keep the loop.
    const VarNode* var = loop->loop_var.get();
    if (!UsesVar(loop->body, [var](const VarNode* v) { return v == var; })) return nullptr;
    DataType t = loop->loop_var->dtype;
    Var outer;
    Expr base = loop->min;
    if (lanes < extent) {
      outer = VarNode::Make(loop->loop_var->name + "_outer", t, loop->loop_var->span);
      base = SimplifyExpr(
          AddNode::Make(loop->min, MulNode::Make(outer, MakeConst(t, int64_t(lanes)))));
    }
    Stmt body;
    try {
      body =
          Vectorizer(loop->loop_var, RampNode::Make(base, MakeConst(t, int64_t(1)), lanes), lanes)
              .VisitStmt(loop->body);
    } catch (const NotVectorizable&) {
      return nullptr;
    }
    if (!outer) return body;
    return ForNode::Make(outer, MakeConst(t, int64_t(0)), MakeConst(t, extent / lanes),
                         ForKind::kSerial, body, nullptr, loop->annotations, loop->span);
  }

  bool disabled_;
  int vector_bits_;
};

PrimFunc VectorizeLoopFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  // The vector width: the "tir.VectorizeLoop" option max_vector_bits, else the host CPU's
  // (AVX-512: 512, AVX2: 256, else 128) for functions bound to a host target, else up to
  // kMaxLanes lanes (functions not bound to a target yet, as in unit tests).
  int bits = static_cast<int>(ctx.GetRecordInt("tir.VectorizeLoop", "max_vector_bits", 0));
  std::string target = f->GetStrAttr("target", "");
  if (bits <= 0 && (target == "c" || target == "llvm" || target.rfind("c ", 0) == 0 ||
                    target.rfind("llvm ", 0) == 0)) {
    bits = HostVectorBits();
  }
  Stmt body = LoopVectorizer(ctx.GetBool("tir.disable_vectorize", false), bits).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass VectorizeLoop() { return CreatePrimFuncPass(VectorizeLoopFunc, 0, "tir.VectorizeLoop"); }
TESSERA_REGISTER_PASS("tir.VectorizeLoop", VectorizeLoop);

}  // namespace transform
}  // namespace tessera
