// tir.VectorizeLoop (TVM v0.23's rules): a T.vectorized loop becomes one vector of its extent
// (Ramp indices, Broadcast operands); a statement that cannot be vectorized keeps a serial loop
// over the lanes. tir.SplitVectorizedLoops, run before it in the host and DSL pipelines, splits
// long loops at the target's vector width (and makes serial those the host cannot vectorize).
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/const_fold.h"
#include "tessera/arith/vscale.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/target.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// The most lanes of a vector; longer loops are split into chunks of the chosen width. With the
// target's vector width known, a chunk is at most that wide and at most kMaxLanes lanes; a loop
// that stores only into accumulators (buffers of the function's own, or buffers it also reads:
// a reduction's) fills the vector up to kLocalMaxLanes (one AVX-512 vector of int8: 64; with 16
// lanes, 128 bits, the int8 sums, minima and argmax of bench_topi ran at 0.45-0.9x numpy, with
// 64 at 0.96-1.2x), and so does a loop that only copies data (CopiesData: int8 copies in
// 16-byte steps ran at 0.5-0.7x numpy); other loops keep 16 (64 lanes made elementwise int8
// maximum 10-30% slower, and float16 ones of 32 lanes, 1024-bit float32 temporaries, several
// times slower), or as many as fill kMinChunkBits where that is more: a loop of bytes only
// takes 32 lanes, one 256-bit vector (with 16, 128 bits, an int8 sign or abs, a compare and a
// blend per 16 bytes, ran at 0.6-0.7x numpy, with 32 at 1.1x, as fast as with 64). Without the
// width, kMaxLanes whatever the type.
constexpr int kMaxLanes = 16;
constexpr int kLocalMaxLanes = 64;
constexpr int kMinChunkBits = 256;

}  // namespace

// The host's facts are detected once, in ir/target.cc.
int HostVectorBits() { return HostFacts().vector_bits; }

namespace {

struct NotVectorizable {};

namespace lanes {

// floormod(e, c) as floormod(e0, c) + (var - first) and floordiv(e, c) as floordiv(e0, c), where
// e = e0 + (var - first) and e0, e at the first lane, cannot cross a multiple of c within the
// lanes (its divisibility says how far below the next multiple it is at least): the indices of
// a fused loop split by the vector, floormod(i * 16 + v, 384) for v in [0, 16), become linear.
class LaneDivMod : public ExprMutator {
 public:
  LaneDivMod(arith::Analyzer* ana, const Var& var, const Expr& first, int64_t lanes)
      : ana_(ana), var_(var), first_(first), lanes_(lanes) {}
  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const FloorModNode* op) override {
    if (Expr e0 = Within(op)) {
      return AddNode::Make(FloorModNode::Make(e0, op->b), SubNode::Make(var_, first_));
    }
    return ExprMutator::VisitExpr_(op);
  }
  Expr VisitExpr_(const FloorDivNode* op) override {
    if (Expr e0 = Within(op)) return FloorDivNode::Make(e0, op->b);
    return ExprMutator::VisitExpr_(op);
  }

 private:
  template <typename Node>
  Expr Within(const Node* op) {
    std::optional<int64_t> c = AsConstInt(op->b);
    if (!c || *c <= 0 || !UsesVar(op->a, var_.get())) return nullptr;
    VarMap m;
    m[var_.get()] = first_;
    Expr e0 = ana_->Simplify(Substitute(op->a, m));
    Expr rest = SubNode::Make(SubNode::Make(op->a, e0), SubNode::Make(var_, first_));
    std::optional<int64_t> zero = AsConstInt(ana_->Simplify(rest));
    if (!zero || *zero != 0) return nullptr;
    arith::ModularSet mod = ana_->GetModularSet(e0);
    int64_t h = mod.coeff == 0 ? 0 : std::gcd(mod.coeff, *c);
    int64_t offset = h == 0 ? arith::FloorMod(mod.base, *c) : arith::FloorMod(mod.base, h);
    int64_t room = h == 0 ? *c : h;
    return offset + lanes_ - 1 < room ? e0 : nullptr;
  }

  arith::Analyzer* ana_;
  Var var_;
  Expr first_;
  int64_t lanes_;
};

// Whether the `lanes` lanes of `var` from its first value (`at_first`: e with var replaced by
// it) decide `e` alike.
bool Uniform(arith::Analyzer* ana, const Expr& e, const Var& var, const Expr& first,
             int64_t lanes) {
  if (!UsesVar(e, var.get())) return true;
  if (auto* n = AsPtr<NotNode>(e)) return Uniform(ana, n->a, var, first, lanes);
  auto* bin = AsPtr<BinaryNode>(e);
  if (!bin) return false;
  if (bin->kind == NodeKind::kAnd || bin->kind == NodeKind::kOr) {
    return Uniform(ana, bin->a, var, first, lanes) && Uniform(ana, bin->b, var, first, lanes);
  }
  DataType t = bin->a->dtype;
  if (!t.is_scalar() || !t.is_int() || t.bits() < 32 || var->dtype != t) return false;
  // As d < 0 over the integers: a < b is a - b < 0, a <= b is a - b - 1 < 0, and so on.
  Expr one = MakeConst(t, int64_t{1}), d;
  switch (bin->kind) {
    case NodeKind::kLT:
      d = SubNode::Make(bin->a, bin->b);
      break;
    case NodeKind::kLE:
      d = SubNode::Make(SubNode::Make(bin->a, bin->b), one);
      break;
    case NodeKind::kGT:
      d = SubNode::Make(bin->b, bin->a);
      break;
    case NodeKind::kGE:
      d = SubNode::Make(SubNode::Make(bin->b, bin->a), one);
      break;
    default:
      return false;
  }
  d = ana->Simplify(LaneDivMod(ana, var, first, lanes).VisitExpr(d));
  auto at = [&](const Expr& value) {
    VarMap m;
    m[var.get()] = value;
    return ana->Simplify(Substitute(d, m));
  };
  Expr d0 = at(first);
  std::optional<int64_t> step =
      AsConstInt(ana->Simplify(SubNode::Make(at(AddNode::Make(first, one)), d0)));
  if (!step || *step == 0) return false;
  // Linear in the variable: d == d0 + step * (var - first).
  Expr rest = SubNode::Make(SubNode::Make(d, d0),
                            MulNode::Make(MakeConst(t, *step), SubNode::Make(var, first)));
  std::optional<int64_t> zero = AsConstInt(ana->Simplify(rest));
  if (!zero || *zero != 0) return false;
  // The lanes disagree exactly when d0 lies in [lo, hi].
  int64_t span = std::abs(*step) * (lanes - 1);
  int64_t lo = *step > 0 ? -span : 0, hi = *step > 0 ? -1 : span - 1;
  arith::ConstIntBound bound = ana->GetConstIntBound(d0);
  if (bound.max_value < lo || bound.min_value > hi) return true;
  arith::ModularSet mod = ana->GetModularSet(d0);
  if (mod.coeff == 0) return mod.base < lo || mod.base > hi;
  return lo + arith::FloorMod(mod.base - lo, mod.coeff) > hi;
}

}  // namespace lanes

// A condition that every lane of a vector over `var` (from `first`, `lanes` lanes) decides
// alike, as the first lane's (a scalar), so that if_then_else picks one vector instead of
// running lane by lane: comparisons of integers linear in the variable that cannot change sign
// within the vector, and their and/or/not. Concatenate's `i * 64 + v < 2048` for v in [0, 64)
// is one: i * 64 - 2048 is a multiple of 64, never in [-63, -1], where the lanes would
// disagree. Null when that cannot be shown, or when the condition reads a variable `rebound`
// says stands for a vector (let-bound values of the loop variable are not followed).
Expr FirstLaneCondition(const Expr& cond, const Var& var, const Expr& first, int64_t lanes,
                        const std::function<bool(const VarNode*)>& rebound) {
  if (lanes < 2 || !cond->dtype.is_bool() || !cond->dtype.is_scalar()) return nullptr;
  if (UsesVar(cond, rebound)) return nullptr;
  arith::Analyzer ana;  // the variable over the lanes, so floormod(i * 16 + v, 384) is linear
  ana.Bind(var, RangeNode::Make(first, MakeConst(var->dtype, lanes)));
  if (!lanes::Uniform(&ana, cond, var, first, lanes)) return nullptr;
  VarMap m;
  m[var.get()] = first;
  return arith::Analyzer().Simplify(Substitute(cond, m));
}

/*! \brief Whether `op` is isnan, isinf or isfinite of a float. */
bool IsClassification(const CallNode* op) {
  return (op->is_op("tir.isnan") || op->is_op("tir.isinf") || op->is_op("tir.isfinite")) &&
         op->args.size() == 1 && op->args[0]->dtype.is_float();
}

/*! \brief The classification `op` of the vector `x`, as the comparisons it is: x != x,
 *  |x| == inf, |x| < inf. C's classification macros have no vector form, so a loop of them
 *  stayed scalar (bench_topi isnan, 2048 x 2048 float32: a sixth of numpy's speed). */
Expr ClassifyLanes(const CallNode* op, const Expr& x) {
  if (op->is_op("tir.isnan")) return NENode::Make(x, x, op->span);
  Expr abs = CallNode::Make(x->dtype, OpNode::Get("tir.fabs"), {x}, op->span);
  Expr inf = BroadcastNode::Make(
      MakeConst(x->dtype.element_of(), std::numeric_limits<double>::infinity(), op->span),
      x->dtype.lanes(), op->span);
  if (op->is_op("tir.isinf")) return EQNode::Make(abs, inf, op->span);
  return LTNode::Make(abs, inf, op->span);
}

// The host rule of what a vectorized loop may hold (tir.SplitVectorizedLoops): a body this
// rewrites for `lanes` consecutive values without throwing NotVectorizable gets vector code on
// the host; any other loop runs serially there.
class NativeVectorizer : public StmtExprMutator {
 public:
  NativeVectorizer(const Var& var, Expr ramp, int lanes) : var_(var), lanes_(lanes) {
    first_ = AsPtr<RampNode>(ramp)->base;
    vmap_[var.get()] = std::move(ramp);
  }
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // Math intrinsics that tir.LowerIntrin lowers lane by lane.
  static bool IsLaneWiseMath(const CallNode* op) {
    auto* callee = AsPtr<OpNode>(op->op);
    if (!callee || callee->effect != CallEffect::kPure) return false;
    // An integer abs: tir.LowerIntrin makes it a select of the negation, lane by lane.
    if (op->dtype.is_int() && op->is_op("tir.abs")) return true;
    if (!op->dtype.is_float()) return false;
    const std::string& n = callee->name;
    return !callee->GetStrAttr("c.name").empty() || n == "tir.rsqrt" || n == "tir.sigmoid" ||
           n == "tir.abs";
  }
  // Bitwise operations and shifts of integers, and reinterpretations between types of one
  // width: C's operators and casts apply to the host's vector types lane by lane.
  static bool IsLaneWiseBits(const CallNode* op) {
    if (!(op->dtype.is_int() || op->dtype.is_uint() || op->dtype.is_float())) return false;
    if (op->is_op("tir.reinterpret")) {
      return op->args.size() == 1 && op->args[0]->dtype.bits() == op->dtype.bits() &&
             (op->args[0]->dtype.is_int() || op->args[0]->dtype.is_uint() ||
              op->args[0]->dtype.is_float());
    }
    if (!(op->dtype.is_int() || op->dtype.is_uint())) return false;
    return op->is_op("tir.bitwise_and") || op->is_op("tir.bitwise_or") ||
           op->is_op("tir.bitwise_xor") || op->is_op("tir.bitwise_not") ||
           op->is_op("tir.shift_left") || op->is_op("tir.shift_right");
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
    if (op->is_op("tir.if_then_else")) return IfThenElse(op);
    if (IsClassification(op)) {
      Expr x = VisitExpr(op->args[0]);
      if (x->dtype.is_vector()) return ClassifyLanes(op, x);
      return x == op->args[0] ? GetRef(op) : CallNode::Make(op->dtype, op->op, {x}, op->span);
    }
    if (!IsLaneWiseMath(op) && !IsLaneWiseBits(op)) return Invariant(GetRef(op));
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
  // One vector or the other where all the lanes agree on the condition.
  Expr IfThenElse(const CallNode* op) {
    Expr cond = VisitExpr(op->args[0]);
    if (cond->dtype.is_vector()) {
      Expr first = FirstLaneCondition(op->args[0], var_, first_, lanes_, [this](const VarNode* v) {
        return v != var_.get() && vmap_.count(v);
      });
      if (!first) throw NotVectorizable();
      cond = first;
    }
    Expr t = VisitExpr(op->args[1]), f = VisitExpr(op->args[2]);
    if (cond == op->args[0] && t == op->args[1] && f == op->args[2]) return GetRef(op);
    Widen(&t, &f);
    t = Broadcast(t);
    f = Broadcast(f);
    return CallNode::Make(op->dtype.with_lanes(lanes_), op->op, {cond, t, f}, op->span);
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

  Var var_;
  Expr first_;
  int lanes_;
  VarMap vmap_;
};

// ---------------------------------------------------------------------------------------------
// tir.VectorizeLoop as TVM v0.23 defines it: the loop variable of a vectorized loop of constant
// extent n (or vscale * k on a target with scalable vectors) becomes Ramp(min, 1, n), one
// vector of the loop's extent, and every expression that uses it widens to n lanes. A statement
// that cannot be widened (a vector condition, a call that is not lane-wise, ...) keeps a serial
// loop of its own over the lanes (`for i_s in range(n)`), the rest of the body stays vector code.

// Calls that apply lane by lane, so a vector argument gives a vector call (TVM's TVectorizable
// ops, and the math intrinsics tessera lowers lane by lane).
bool IsVectorizableCall(const CallNode* op) {
  auto* callee = AsPtr<OpNode>(op->op);
  if (!callee) return false;
  static const std::unordered_set<std::string> kOps = {"tir.pow",
                                                       "tir.fabs",
                                                       "tir.floor",
                                                       "tir.ceil",
                                                       "tir.round",
                                                       "tir.trunc",
                                                       "tir.exp",
                                                       "tir.exp2",
                                                       "tir.exp10",
                                                       "tir.erf",
                                                       "tir.tanh",
                                                       "tir.sigmoid",
                                                       "tir.sqrt",
                                                       "tir.rsqrt",
                                                       "tir.log",
                                                       "tir.log2",
                                                       "tir.log1p",
                                                       "tir.log10",
                                                       "tir.tan",
                                                       "tir.cos",
                                                       "tir.cosh",
                                                       "tir.sin",
                                                       "tir.sinh",
                                                       "tir.likely",
                                                       "tir.bitwise_and",
                                                       "tir.bitwise_or",
                                                       "tir.bitwise_xor",
                                                       "tir.bitwise_not",
                                                       "tir.shift_left",
                                                       "tir.shift_right",
                                                       "tir.popcount",
                                                       "tir.q_multiply_shift",
                                                       "tir.q_multiply_shift_per_axis",
                                                       "tir.call_llvm_pure_intrin"};
  if (kOps.count(callee->name)) return true;
  return NativeVectorizer::IsLaneWiseMath(op);
}

// Whether `target` (a "target" attribute: the dict of a Target's settings, or its string) has
// scalable vectors: a CPU target with +sve/+sve2/+sme (AArch64) or +v (RISC-V).
bool TargetHasScalableVectors(const ObjectRef& target) {
  std::string kind, triple;
  std::vector<std::string> features;
  if (auto* map = AsPtr<MapNode>(target)) {
    auto str = [&](const char* key) {
      auto it = map->items.find(key);
      auto* s = it == map->items.end() ? nullptr : AsPtr<StringImmNode>(it->second);
      return s ? s->value : std::string();
    };
    kind = str("kind");
    triple = str("mtriple");
    auto it = map->items.find("mattr");
    if (it != map->items.end()) {
      if (auto* arr = AsPtr<ArrayNode>(it->second)) {
        for (const ObjectRef& a : arr->items) {
          if (auto* s = AsPtr<StringImmNode>(a)) features.push_back(s->value);
        }
      }
    }
  } else if (auto* s = AsPtr<StringImmNode>(target)) {
    std::istringstream in(s->value);
    in >> kind;
    for (std::string word; in >> word;) {
      if (word.rfind("-mtriple=", 0) == 0) triple = word.substr(9);
      if (word.rfind("-mattr=", 0) == 0) {
        std::istringstream attrs(word.substr(7));
        for (std::string f; std::getline(attrs, f, ',');) features.push_back(f);
      }
    }
  } else {
    return false;
  }
  if (kind != "llvm" && kind != "c") return false;
  for (const std::string& f : features) {
    if (f == "+sve" || f == "+sve2" || f == "+sme") return true;
    if (f == "+v" && triple.rfind("riscv", 0) == 0) return true;
  }
  return false;
}

struct VectorContext {
  bool scalable_target = false;  // the target has scalable vectors
  bool predicate = false;        // buffer-level predication of `if lane < limit` bodies
  // The vector DSL's form of that predication: the lanes of the condition mask every contiguous
  // access of the body, whatever its base (the tail of a loop split by the vector width,
  // `if v < 3: B[v + 32] = A[v + 32] + 3`, is one masked load and store of 8 lanes).
  bool mask_any_base = false;
  // A loop annotated "tessera.mask_tail" (a scheduled tile whose last vector is predicated by
  // the split of its columns, so that its first lane is always active): the masked body may
  // also read scalars (a broadcast factor), read once whatever the lanes.
  bool scalar_loads = false;
};

// Sets the `predicate` of the loads and stores of a vectorized `if` body whose condition is
// Ramp(base, ...) < Broadcast(limit): each access whose first index is a Ramp from `base` reads
// or writes only the lanes where base + lane < limit (T.get_active_lane_mask). All accesses
// must be of that form, else the body is left as it was.
class PredicateBufferAccesses : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  static Stmt Run(const Stmt& body, Expr condition, bool any_base, bool scalar_loads = false) {
    if (auto* likely = AsPtr<CallNode>(condition);
        any_base && likely && likely->is_op("tir.likely")) {
      condition = likely->args[0];
    }
    auto* lt = AsPtr<LTNode>(condition);
    if (!lt) return nullptr;
    auto* ramp = AsPtr<RampNode>(lt->a);
    auto* limit = AsPtr<BroadcastNode>(lt->b);
    if (!ramp || !limit) return nullptr;
    // The lane mask counts lanes from the base one by one.
    if (any_base && !IsConstInt(ramp->stride, 1)) return nullptr;
    if (any_base && !OnlyStores(body)) return nullptr;
    PredicateBufferAccesses p(ramp->base, limit->value, any_base ? ramp->dtype.lanes() : 0);
    p.scalar_loads_ = scalar_loads;
    Stmt out = p.VisitStmt(body);
    // A body that reads and writes the padded register tile only (the tile's init: zeros
    // stored into a row's last vector) runs unmasked: its inactive lanes write the padding.
    if (p.seen_ == 0 && p.padded_ > 0 && OnlyStores(body)) return out;
    if (p.seen_ == 0 || p.seen_ != p.rewritten_) return nullptr;
    return out;
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (scalar_loads_ && !load->dtype.is_vector() && !load->predicate) return e;
    if (PaddedTile(load->buffer)) {
      ++padded_;
      return e;
    }
    Expr mask = Mask(load->indices, load->predicate);
    if (!mask) return e;
    return BufferLoadNode::Make(load->buffer, load->indices, mask, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (PaddedTile(store->buffer)) {
      ++padded_;
      return s;
    }
    Expr mask = Mask(store->indices, store->predicate);
    if (!mask) return s;
    return BufferStoreNode::Make(store->buffer, store->value, store->indices, mask, store->span);
  }

 private:
  // `any_base_lanes` > 0: any contiguous or strided access of that many lanes takes the mask.
  PredicateBufferAccesses(Expr base, Expr limit, int any_base_lanes)
      : base_(std::move(base)), limit_(std::move(limit)), any_base_lanes_(any_base_lanes) {}

  // Under "tessera.mask_tail", the register tile's local buffer: the rule pads its rows to whole
  // vectors (storage_align), so its accesses stay unmasked (the C compiler keeps the tile in
  // registers; the padding lanes are computed and never written back).
  bool PaddedTile(const Buffer& buffer) const {
    return scalar_loads_ && buffer->scope() == "local";
  }

  // Whether `body` does nothing but compute and store (no call, loop or branch that the
  // condition would stop running on the inactive lanes).
  static bool OnlyStores(const Stmt& body) {
    if (AsPtr<BufferStoreNode>(body)) return true;
    if (auto* let = AsPtr<LetStmtNode>(body)) return OnlyStores(let->body);
    if (auto* decl = AsPtr<DeclBufferNode>(body)) return OnlyStores(decl->body);
    if (auto* seq = AsPtr<SeqStmtNode>(body)) {
      return std::all_of(seq->seq.begin(), seq->seq.end(), OnlyStores);
    }
    return false;
  }

  Expr Mask(const std::vector<Expr>& indices, const Expr& predicate) {
    ++seen_;
    if (indices.empty()) return nullptr;
    auto* ramp = AsPtr<RampNode>(indices[0]);
    if (any_base_lanes_ > 0) {
      // Only the last index of a flattened access is a Ramp; an access already masked keeps
      // its mask (and the body its `if`).
      ramp = AsPtr<RampNode>(indices.back());
      if (predicate || !ramp || ramp->dtype.is_scalable_vector() ||
          ramp->dtype.lanes() != any_base_lanes_) {
        return nullptr;
      }
    } else if (!ramp || !StructuralEqual(ramp->base, base_)) {
      return nullptr;
    }
    ++rewritten_;
    DataType mask_type = DataType::UInt(1).with_lanes_or_vscale_factor(
        ramp->dtype.lanes_or_vscale_factor(), ramp->dtype.is_scalable_vector());
    return CallNode::Make(mask_type, OpNode::Get("tir.get_active_lane_mask"), {base_, limit_});
  }

  Expr base_, limit_;
  int any_base_lanes_ = 0;
  bool scalar_loads_ = false;
  int seen_ = 0, rewritten_ = 0, padded_ = 0;
};

// The accesses of the buffers over `data` inside a vectorized loop of `lanes` lanes, each lane
// with its own part of the storage: the last dimension grows by the lanes and an access at k
// takes k * lanes + var.
class PerLaneAllocation : public StmtExprMutator {
 public:
  PerLaneAllocation(const VarNode* data, Var var, int lanes)
      : data_(data), var_(std::move(var)), lanes_(lanes) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer->data.get() != data_ || load->indices.empty()) return e;
    return BufferLoadNode::Make(Widened(load->buffer), Indices(load->indices), load->predicate,
                                load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer->data.get() != data_ || store->indices.empty()) return s;
    return BufferStoreNode::Make(Widened(store->buffer), store->value, Indices(store->indices),
                                 store->predicate, store->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt body = VisitStmt(op->body);
    if (op->buffer->data.get() != data_) {
      return body == op->body ? GetRef(op) : DeclBufferNode::Make(op->buffer, body, op->span);
    }
    return DeclBufferNode::Make(Widened(op->buffer), body, op->span);
  }

 private:
  Buffer Widened(const Buffer& b) {
    auto it = widened_.find(b.get());
    if (it != widened_.end()) return it->second;
    std::vector<Expr> shape = b->shape;
    if (!shape.empty()) {
      shape.back() = arith::FoldBinary(NodeKind::kMul, shape.back(),
                                       MakeConst(shape.back()->dtype, int64_t{lanes_}));
    }
    Buffer w = BufferNode::Make(b->data, b->dtype, std::move(shape), {}, b->elem_offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
    widened_[b.get()] = w;
    return w;
  }
  std::vector<Expr> Indices(std::vector<Expr> idx) const {
    Expr& last = idx.back();
    Expr v = var_;
    if (v->dtype != last->dtype) v = CastNode::Make(last->dtype, v);
    last = arith::FoldBinary(
        NodeKind::kAdd,
        arith::FoldBinary(NodeKind::kMul, last, MakeConst(last->dtype, int64_t{lanes_})), v);
    return idx;
  }

  const VarNode* data_;
  Var var_;
  int lanes_;
  std::unordered_map<const BufferNode*, Buffer> widened_;
};

class Vectorizer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  // `lanes` > 1: a fixed vector; -k: vscale * k lanes.
  Vectorizer(const ForNode* loop, int lanes, VectorContext ctx)
      : var_(loop->loop_var), min_(loop->min), extent_(loop->extent), lanes_(lanes), ctx_(ctx) {
    ramp_ = RampNode::Make(min_, MakeConst(var_->dtype, int64_t{1}), lanes, loop->span);
  }

  Stmt VisitStmt(const Stmt& s) override {
    bool outer = need_scalarize_;
    need_scalarize_ = false;
    Stmt out = StmtMutator::VisitStmt(s);
    if (need_scalarize_) out = Scalarize(s);
    need_scalarize_ = outer;
    return out;
  }

  // ---- expressions
  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

  Expr VisitExpr_(const AddNode* op) override { return AddSub(op, true); }
  Expr VisitExpr_(const SubNode* op) override { return AddSub(op, false); }
  Expr VisitExpr_(const MulNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a == op->a && b == op->b) return GetRef(op);
    if (a->dtype.is_vector() || b->dtype.is_vector()) {
      auto* ra = AsPtr<RampNode>(a);
      auto* rb = AsPtr<RampNode>(b);
      // A ramp times a positive scalar is a ramp.
      if (ra && b->dtype.is_scalar() && Positive(b)) {
        return RampNode::Make(Fold(NodeKind::kMul, ra->base, b),
                              Fold(NodeKind::kMul, ra->stride, b), ra->lanes, op->span);
      }
      if (rb && a->dtype.is_scalar() && Positive(a)) {
        return RampNode::Make(Fold(NodeKind::kMul, rb->base, a),
                              Fold(NodeKind::kMul, rb->stride, a), rb->lanes, op->span);
      }
    }
    Widen(&a, &b);
    return MulNode::Make(a, b, op->span);
  }
#define TESSERA_VECTORIZE_BINARY(name)               \
  Expr VisitExpr_(const name##Node* op) override {   \
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b); \
    if (a == op->a && b == op->b) return GetRef(op); \
    Widen(&a, &b);                                   \
    return name##Node::Make(a, b, op->span);         \
  }
  TESSERA_VECTORIZE_BINARY(Div)
  TESSERA_VECTORIZE_BINARY(Mod)
  TESSERA_VECTORIZE_BINARY(FloorDiv)
  TESSERA_VECTORIZE_BINARY(FloorMod)
  TESSERA_VECTORIZE_BINARY(Min)
  TESSERA_VECTORIZE_BINARY(Max)
  TESSERA_VECTORIZE_BINARY(EQ)
  TESSERA_VECTORIZE_BINARY(NE)
  TESSERA_VECTORIZE_BINARY(LT)
  TESSERA_VECTORIZE_BINARY(LE)
  TESSERA_VECTORIZE_BINARY(GT)
  TESSERA_VECTORIZE_BINARY(GE)
  TESSERA_VECTORIZE_BINARY(And)
  TESSERA_VECTORIZE_BINARY(Or)
#undef TESSERA_VECTORIZE_BINARY

  Expr VisitExpr_(const NotNode* op) override {
    Expr a = VisitExpr(op->a);
    if (a == op->a) return GetRef(op);
    return NotNode::Make(a, op->span);
  }
  Expr VisitExpr_(const CastNode* op) override {
    Expr v = VisitExpr(op->value);
    if (v == op->value) return GetRef(op);
    return CastNode::Make(op->dtype.with_lanes_or_vscale_factor(v->dtype.lanes_or_vscale_factor(),
                                                                v->dtype.is_scalable_vector()),
                          v, op->span);
  }
  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition), t = VisitExpr(op->true_value),
         f = VisitExpr(op->false_value);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    int lanes = std::max({Lanes(c), Lanes(t), Lanes(f)});
    bool scalable = Scalable(c) || Scalable(t) || Scalable(f);
    return SelectNode::Make(BroadcastTo(c, lanes, scalable), BroadcastTo(t, lanes, scalable),
                            BroadcastTo(f, lanes, scalable), op->span);
  }
  Expr VisitExpr_(const RampNode* op) override {
    Expr base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    if (base == op->base && stride == op->stride) return GetRef(op);
    if (op->dtype.is_scalable_vector()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.VectorizeLoop: this ramp of T.vscale() lanes varies with the vectorized loop "
             "around it; a scalable vector cannot be widened further (make the loop serial)";
    }
    if (base->dtype.is_scalable_vector() || stride->dtype.is_scalable_vector()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.VectorizeLoop: this ramp varies with a loop vectorized over T.vscale() lanes; "
             "a ramp of ramps cannot be a scalable vector (make the loop serial)";
    }
    // Ramp(Ramp(b, s * n, m), s, n) is Ramp(b, s, n * m): consecutive ramps join.
    auto* inner = AsPtr<RampNode>(base);
    if (inner && stride->dtype.is_scalar() &&
        analyzer_.CanProveEqual(
            inner->stride,
            Fold(NodeKind::kMul, stride, MakeConst(stride->dtype, int64_t{op->lanes})))) {
      return RampNode::Make(inner->base, stride, op->lanes * inner->lanes, op->span);
    }
    need_scalarize_ = true;
    return GetRef(op);
  }
  Expr VisitExpr_(const BroadcastNode* op) override {
    Expr v = VisitExpr(op->value);
    if (v == op->value) return GetRef(op);
    need_scalarize_ = true;  // a broadcast of a vector: no single vector form
    return GetRef(op);
  }
  Expr VisitExpr_(const ShuffleNode* op) override {
    if (UsesVectorVar(GetRef(op))) need_scalarize_ = true;
    return GetRef(op);
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    if (value->dtype.lanes_or_vscale_factor() != op->value->dtype.lanes_or_vscale_factor()) {
      Var v = VarNode::Make(op->var->name, value->dtype, op->var->span);
      vmap_[op->var.get()] = v;
      return LetNode::Make(v, value, VisitExpr(op->body), op->span);
    }
    vmap_.erase(op->var.get());
    Expr body = VisitExpr(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetNode::Make(op->var, value, body, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.if_then_else")) return IfThenElseExpr(op);
    if (op->is_op("tir.reinterpret")) return Reinterpret(op);
    if (Expr e = Classify(op)) return e;
    if (!IsVectorizableCall(op) || op->dtype.is_scalable_vector()) {
      std::vector<Expr> args;
      bool changed = false;
      for (const Expr& a : op->args) {
        args.push_back(VisitExpr(a));
        if (args.back()->dtype.is_vector()) {
          need_scalarize_ = true;
          return GetRef(op);
        }
        changed = changed || args.back() != a;
      }
      if (!changed) return GetRef(op);
      return CallNode::Make(op->dtype, op->op, std::move(args), op->span);
    }
    // call_llvm_pure_intrin's first argument names the intrinsic: it stays as it is.
    size_t first = op->is_op("tir.call_llvm_pure_intrin") ? 1 : 0;
    std::vector<Expr> args(op->args.begin(), op->args.begin() + std::min(first, op->args.size()));
    bool changed = false, scalable = false;
    int lanes = 1;
    for (size_t i = first; i < op->args.size(); ++i) {
      args.push_back(VisitExpr(op->args[i]));
      changed = changed || args.back() != op->args[i];
      lanes = std::max(lanes, Lanes(args.back()));
      scalable = scalable || Scalable(args.back());
    }
    if (!changed) return GetRef(op);
    for (size_t i = first; i < args.size(); ++i) args[i] = BroadcastTo(args[i], lanes, scalable);
    return CallNode::Make(op->dtype.with_lanes_or_vscale_factor(lanes, scalable), op->op,
                          std::move(args), op->span);
  }
  Expr Classify(const CallNode* op) {
    if (!IsClassification(op)) return Expr();
    Expr x = VisitExpr(op->args[0]);
    return x->dtype.is_fixed_length_vector() ? ClassifyLanes(op, x) : Expr();
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    std::vector<Expr> idx;
    bool changed = false;
    for (const Expr& i : op->indices) {
      idx.push_back(VisitExpr(i));
      changed = changed || idx.back() != i;
    }
    if (!changed) return GetRef(op);
    if (!Accessible(op->buffer, idx) || (op->predicate && UsesVectorVar(op->predicate))) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    return BufferLoadNode::Make(op->buffer, std::move(idx), op->predicate, op->span);
  }

  // ---- statements
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    std::vector<Expr> idx;
    bool changed = false;
    for (const Expr& i : op->indices) {
      idx.push_back(VisitExpr(i));
      changed = changed || idx.back() != i;
    }
    Expr value = VisitExpr(op->value);
    if (!changed && value == op->value) return GetRef(op);
    if (need_scalarize_) return GetRef(op);
    if (op->buffer->dtype.is_scalable_vector()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.VectorizeLoop: buffer " << op->buffer->name
          << " holds scalable vectors; a loop over its elements cannot be vectorized";
    }
    if (!Accessible(op->buffer, idx) || (op->predicate && UsesVectorVar(op->predicate))) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    // The lanes stored: the buffer's element lanes times the last index's, or the value's when
    // it has more (a scalar index is then broadcast).
    int elem_lanes = op->buffer->dtype.lanes_or_vscale_factor();
    const Expr& last = idx.back();
    bool scalable = Scalable(last) || Scalable(value);
    int total = std::max(elem_lanes * Lanes(last), Lanes(value));
    if (total % elem_lanes != 0) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    idx.back() = BroadcastTo(last, total / elem_lanes, scalable);
    return BufferStoreNode::Make(op->buffer, BroadcastTo(value, total, scalable), std::move(idx),
                                 op->predicate, op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    if (min->dtype.is_vector() || extent->dtype.is_vector()) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    Stmt body = VisitStmt(op->body);
    if (min == op->min && extent == op->extent && body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span, op->step);
  }
  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Expr cond = VisitExpr(op->condition);
    if (cond->dtype.is_vector() && !need_scalarize_) {
      if (Expr first = UniformCondition(op->condition)) cond = VisitExpr(first);
    }
    bool cond_scalarize = need_scalarize_;
    need_scalarize_ = false;
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case ? VisitStmt(op->else_case) : nullptr;
    if (ctx_.predicate && cond->dtype.is_vector() && !else_case && !cond_scalarize) {
      if (Stmt s = PredicateBufferAccesses::Run(then_case, cond, ctx_.mask_any_base,
                                                ctx_.scalar_loads)) {
        // A "tessera.mask_tail" tile: the masked body under the scalar condition of its first
        // lane, so that the vectors of a partial tile with no active lane (a tile's vectors
        // past the columns, unrolled) simplify away instead of running fully masked.
        if (ctx_.scalar_loads) {
          VarMap first;
          first[var_.get()] = min_;
          return IfThenElseNode::Make(Substitute(op->condition, first), s, nullptr, op->span);
        }
        return s;
      }
    }
    if (cond_scalarize || cond->dtype.is_vector()) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    if (cond == op->condition && then_case == op->then_case && else_case == op->else_case) {
      return GetRef(op);
    }
    return IfThenElseNode::Make(cond, then_case, else_case, op->span);
  }
  Stmt VisitStmt_(const WhileNode* op) override {
    if (UsesVectorVar(GetRef(op))) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.VectorizeLoop: this while loop depends on the variable of the vectorized loop "
             "around it, which cannot be vectorized; make that loop serial";
    }
    return GetRef(op);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (need_scalarize_) return GetRef(op);
    if (value->dtype.lanes_or_vscale_factor() != op->value->dtype.lanes_or_vscale_factor()) {
      Var v = VarNode::Make(op->var->name, value->dtype, op->var->span);
      vmap_[op->var.get()] = v;
      return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
    }
    vmap_.erase(op->var.get());
    Stmt body = VisitStmt(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    // Each lane gets its own copy of the allocation: the last extent grows by the lanes and an
    // access at index k of the last dimension takes k * lanes + lane (TVM's rule). One that
    // does not depend on the lanes stays as it is.
    if (!UsesVectorVar(GetRef(op))) return GetRef(op);
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) {
      extents.push_back(VisitExpr(e));
      if (extents.back()->dtype.is_vector()) need_scalarize_ = true;
    }
    Expr cond = op->condition ? VisitExpr(op->condition) : nullptr;
    if (need_scalarize_ || (cond && cond->dtype.is_vector()) || lanes_ < 0 || extents.empty()) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    DataType t = extents.back()->dtype;
    extents.back() = Fold(NodeKind::kMul, extents.back(), MakeConst(t, int64_t{lanes_}));
    Stmt body = PerLaneAllocation(op->buffer_var.get(), var_, lanes_).VisitStmt(op->body);
    return AllocateNode::Make(op->buffer_var, op->dtype, std::move(extents), cond, VisitStmt(body),
                              op->annotations, op->span);
  }
  Stmt VisitStmt_(const AssertStmtNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    if (auto* a = AsPtr<AssertStmtNode>(s); a && a->condition->dtype.is_vector()) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    return s;
  }

 private:
  Expr Lookup(const VarNode* op) {
    if (op == var_.get()) return ramp_;
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  bool UsesVectorVar(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return v == var_.get() || vmap_.count(v); });
  }
  bool UsesVectorVar(const Stmt& s) const {
    return UsesVar(s, [this](const VarNode* v) { return v == var_.get() || vmap_.count(v); });
  }
  // Only the last index of a buffer access may be a vector.
  static bool Accessible(const Buffer& buffer, const std::vector<Expr>& idx) {
    if (idx.empty()) return false;
    for (size_t i = 0; i + 1 < idx.size(); ++i) {
      if (idx[i]->dtype.is_vector()) return false;
    }
    return !(buffer->dtype.is_vector() && idx.back()->dtype.is_scalable_vector());
  }
  static int Lanes(const Expr& e) { return e->dtype.lanes_or_vscale_factor(); }
  static bool Scalable(const Expr& e) { return e->dtype.is_scalable_vector(); }
  bool Positive(const Expr& e) {
    return analyzer_.CanProve(GTNode::Make(e, MakeConst(e->dtype, int64_t{0})));
  }
  static Expr Fold(NodeKind kind, const Expr& a, const Expr& b) {
    return arith::FoldBinary(kind, a, b);
  }
  // `e` as a vector of `lanes` lanes (vscale * lanes when `scalable`): a scalar or a broadcast
  // is broadcast again; a vector of other lanes cannot be.
  Expr BroadcastTo(const Expr& e, int lanes, bool scalable) {
    if (Lanes(e) == lanes && Scalable(e) == scalable) return e;
    int n = scalable ? -lanes : lanes;
    if (auto* b = AsPtr<BroadcastNode>(e); b && Scalable(e) == scalable && lanes % Lanes(e) == 0) {
      return BroadcastNode::Make(b->value, n, b->span);
    }
    if (!e->dtype.is_scalar()) {
      TESSERA_THROW_KIND(e->span, ErrorKind::kValue)
          << "tir.VectorizeLoop: cannot widen a value of type " << e->dtype.ToString() << " to "
          << (scalable ? "vscale * " : "") << lanes << " lanes";
    }
    return BroadcastNode::Make(e, n, e->span);
  }
  void Widen(Expr* a, Expr* b) {
    int lanes = std::max(Lanes(*a), Lanes(*b));
    bool scalable = Scalable(*a) || Scalable(*b);
    *a = BroadcastTo(*a, lanes, scalable);
    *b = BroadcastTo(*b, lanes, scalable);
  }
  template <typename T>
  Expr AddSub(const T* op, bool add) {
    NodeKind kind = add ? NodeKind::kAdd : NodeKind::kSub;
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a == op->a && b == op->b) return GetRef(op);
    auto* ra = AsPtr<RampNode>(a);
    auto* rb = AsPtr<RampNode>(b);
    // A scalar plus or minus a ramp is a ramp.
    // One node for one operation on the same operands (a DAG, as the body was before).
    // (The operands are kept with the result, so their addresses are never reused meanwhile.)
    auto [memo, fresh] = ramps_.try_emplace({kind, a.get(), b.get()});
    if (!fresh) return memo->second.result;
    memo->second.a = a;
    memo->second.b = b;
    if (a->dtype.is_scalar() && rb) {
      Expr stride =
          add ? rb->stride
              : Fold(NodeKind::kSub, MakeConst(rb->stride->dtype, int64_t{0}), rb->stride);
      return memo->second.result =
                 RampNode::Make(Fold(kind, a, rb->base), stride, rb->lanes, op->span);
    }
    if (b->dtype.is_scalar() && ra) {
      return memo->second.result =
                 RampNode::Make(Fold(kind, ra->base, b), ra->stride, ra->lanes, op->span);
    }
    ramps_.erase(memo);
    Widen(&a, &b);
    if (add) return AddNode::Make(a, b, op->span);
    return SubNode::Make(a, b, op->span);
  }
  Expr IfThenElseExpr(const CallNode* op) {
    Expr cond = VisitExpr(op->args[0]);
    if (cond->dtype.is_vector()) {
      if (Expr first = UniformCondition(op->args[0])) cond = VisitExpr(first);
    }
    if (cond->dtype.is_vector()) {
      need_scalarize_ = true;
      return GetRef(op);
    }
    Expr t = VisitExpr(op->args[1]), f = VisitExpr(op->args[2]);
    if (cond == op->args[0] && t == op->args[1] && f == op->args[2]) return GetRef(op);
    int lanes = std::max(Lanes(t), Lanes(f));
    bool scalable = Scalable(t) || Scalable(f);
    t = BroadcastTo(t, lanes, scalable);
    f = BroadcastTo(f, lanes, scalable);
    return CallNode::Make(op->dtype.with_lanes_or_vscale_factor(lanes, scalable), op->op,
                          {cond, t, f}, op->span);
  }
  Expr Reinterpret(const CallNode* op) {
    Expr v = VisitExpr(op->args[0]);
    if (v == op->args[0]) return GetRef(op);
    DataType t = op->dtype;
    if (Scalable(v)) {
      t = t.with_scalable_vscale_factor(Lanes(v));
    } else {
      t = t.with_lanes(v->dtype.bits() * v->dtype.lanes() / t.bits());
    }
    return CallNode::Make(t, op->op, {v}, op->span);
  }
  Expr UniformCondition(const Expr& cond) {
    std::optional<int64_t> extent = AsConstInt(extent_);
    if (!extent) return nullptr;
    return FirstLaneCondition(cond, var_, min_, *extent,
                              [this](const VarNode* v) { return vmap_.count(v) != 0; });
  }
  // The statement run once per lane: `for <var>_s in range(lanes): stmt`.
  Stmt Scalarize(const Stmt& stmt) {
    Var idx = VarNode::Make(var_->name + "_s", var_->dtype, var_->span);
    VarMap vmap;
    vmap[var_.get()] = idx;
    return ForNode::Make(idx, min_, extent_, ForKind::kSerial, Substitute(stmt, vmap), nullptr, {},
                         stmt->span);
  }

  Var var_;
  Expr min_, extent_, ramp_;
  int lanes_;
  VectorContext ctx_;
  bool need_scalarize_ = false;
  VarMap vmap_;  // let-bound variables rebound to vector ones
  // The ramps built for (operation, scalar, ramp) operands, shared between their uses.
  struct SharedRamp {
    Expr a, b, result;
  };
  std::map<std::tuple<NodeKind, const Object*, const Object*>, SharedRamp> ramps_;
  arith::Analyzer analyzer_;
};

}  // namespace

namespace {

// The lanes of the chunks a vectorized loop is split into: the widest power of two (at most
// `max_lanes`) dividing the extent, 0 when none does.
int ChooseLanes(int64_t extent, int max_lanes) {
  for (int lanes = max_lanes; lanes >= 2; lanes /= 2) {
    if (extent % lanes == 0) return lanes;
  }
  return 0;
}

// The loop a copy is checked over: its variable from `first`, `extent` values.
struct CopyLoop {
  arith::Analyzer* ana;
  Var var;
  Expr first;
  int64_t extent;
};

// Whether `index` is `var` plus terms without it (unit stride) or has no `var` at all, over the
// loop's values (tile's `floormod(o * 64 + v, 1024)` for v in [0, 64): LaneDivMod).
bool UnitOrUniform(const Expr& index, const CopyLoop& loop) {
  const Var& var = loop.var;
  if (!UsesVar(index, var.get())) return true;
  Expr linear = lanes::LaneDivMod(loop.ana, var, loop.first, loop.extent).VisitExpr(index);
  return !UsesVar(loop.ana->Simplify(SubNode::Make(linear, var)), var.get());
}

// Whether a value stored by a copy loop only moves data of `bits`-wide elements: loads at
// unit-stride or lane-uniform indices, constants, variables other than `var`, casts between
// types of one width, bitwise operations (their lanes need no wider temporaries).
bool MovesData(const Expr& e, const CopyLoop& loop, int bits) {
  const Var& var = loop.var;
  if (AsPtr<IntImmNode>(e) || AsPtr<FloatImmNode>(e)) return true;
  if (auto* v = AsPtr<VarNode>(e)) return v != var.get();
  if (auto* ld = AsPtr<BufferLoadNode>(e)) {
    if (ld->predicate || ld->buffer->dtype.bits() != bits || ld->buffer->dtype.is_bool() ||
        ld->buffer->dtype.is_vector()) {
      return false;
    }
    for (size_t k = 0; k < ld->indices.size(); ++k) {
      const bool last = k + 1 == ld->indices.size();
      if (last ? !UnitOrUniform(ld->indices[k], loop) : UsesVar(ld->indices[k], var.get())) {
        return false;
      }
    }
    return true;
  }
  if (auto* c = AsPtr<CastNode>(e)) {
    return c->dtype.bits() == bits && c->value->dtype.bits() == bits && !c->dtype.is_bool() &&
           MovesData(c->value, loop, bits);
  }
  if (auto* b = AsPtr<BroadcastNode>(e)) return MovesData(b->value, loop, bits);
  if (auto* call = AsPtr<CallNode>(e)) {
    // (not the shifts: GCC has no 8-bit vector shift and widens their lanes)
    if (!NativeVectorizer::IsLaneWiseBits(call) || call->dtype.bits() != bits ||
        call->is_op("tir.shift_left") || call->is_op("tir.shift_right")) {
      return false;
    }
    for (const Expr& a : call->args) {
      if (!MovesData(a, loop, bits)) return false;
    }
    return true;
  }
  return false;
}

// Whether the body of the loop over `var` copies data (stores of MovesData values at unit
// stride into buffers of one element width, `*bits`): such a loop takes the target's whole
// vector width, whatever the element type. Its vectors are loads and stores only, which the
// C compiler moves one register at a time; the 16-lane cap of other loops would cut an int8
// copy into 16-byte steps (bench_topi --all, 2048^2 int8, one thread: copies at 0.5-0.7x
// numpy's memcpy-like loops).
bool CopiesData(const ForNode* loop, int* bits) {
  const Stmt& body = loop->body;
  const Var& var = loop->loop_var;
  auto extent = AsConstInt(loop->extent);
  if (!extent || *extent < 1) return false;
  arith::Analyzer ana;
  ana.Bind(var, RangeNode::Make(loop->min, loop->extent));
  const CopyLoop scope{&ana, var, loop->min, *extent};
  std::vector<const BufferStoreNode*> stores;
  bool other = false;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (auto* st = AsPtr<BufferStoreNode>(n)) {
      stores.push_back(st);
    } else if (IsStmtKind(n->kind) && !AsPtr<SeqStmtNode>(n)) {
      other = true;  // a loop, a branch, a let, an allocation: not a plain copy
    }
  });
  if (other || stores.empty()) return false;
  // a buffer both read and written (an in-place shift) keeps the narrower vectors
  bool reads_stored = false;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    auto* ld = AsPtr<BufferLoadNode>(n);
    for (const BufferStoreNode* st : stores) {
      reads_stored = reads_stored || (ld && ld->buffer->data.get() == st->buffer->data.get());
    }
  });
  if (reads_stored) return false;
  *bits = stores[0]->buffer->dtype.bits();
  for (const BufferStoreNode* st : stores) {
    DataType t = st->buffer->dtype;
    if (st->predicate || t.bits() != *bits || t.is_bool() || t.is_vector() || st->indices.empty()) {
      return false;
    }
    for (size_t k = 0; k + 1 < st->indices.size(); ++k) {
      if (UsesVar(st->indices[k], var.get())) return false;
    }
    const Expr& last = st->indices.back();
    if (!UsesVar(last, var.get()) || !UnitOrUniform(last, scope)) return false;
    if (!MovesData(st->value, scope, *bits)) return false;
  }
  return true;
}

// `vector_bits` > 0: a chunk is at most that many bits of the widest element type the loop
// stores or loads, and at most kMaxLanes lanes or kMinChunkBits of that type, whichever is more
// (kLocalMaxLanes where every buffer stored is in `local` or read by the loop too: an
// accumulator; the whole width where the loop copies data, CopiesData); 0: at most kMaxLanes
// lanes whatever the type.
int MaxLanes(const ForNode* loop, int vector_bits,
             const std::unordered_set<const VarNode*>& local) {
  if (vector_bits <= 0) return kMaxLanes;
  const Stmt& body = loop->body;
  if (int bits = 0; CopiesData(loop, &bits) && bits > 0 && bits <= vector_bits) {
    return std::max(2, vector_bits / bits);
  }
  int bits = 8;
  bool bools = false;
  std::unordered_set<const VarNode*> stored, loaded;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (auto* st = AsPtr<BufferStoreNode>(n)) {
      bits = std::max(bits, st->buffer->dtype.bits());
      bools = bools || st->buffer->dtype.is_bool();
      stored.insert(st->buffer->data.get());
    }
    if (auto* ld = AsPtr<BufferLoadNode>(n)) {
      bits = std::max(bits, ld->buffer->dtype.bits());
      bools = bools || ld->buffer->dtype.is_bool();
      loaded.insert(ld->buffer->data.get());
    }
    if (auto* cast = AsPtr<CastNode>(n)) {  // a bool stored in a byte, read or written
      bools = bools || cast->dtype.is_bool() || cast->value->dtype.is_bool();
    }
  });
  bool accumulates = true;
  for (const VarNode* v : stored) accumulates = accumulates && (local.count(v) || loaded.count(v));
  // Bools (stored in bytes: read and written through casts) are computed as 32-bit lane
  // masks: 32 of them took 1024-bit vectors (logical_xor, concatenate and stack of bools ran
  // 7-10x slower than with 16).
  int most = accumulates ? kLocalMaxLanes : std::max(kMaxLanes, bools ? 0 : kMinChunkBits / bits);
  return std::max(2, std::min(most, vector_bits / bits));
}

// The most lanes of a chunk on a target whose vectors have `native_bits` bits (the vector DSL's:
// 256, whose dsl.AlignVectorWidth splits wider vectors): kMaxLanes, or one native vector of the
// widest element type `body` loads or stores where that has more (32 lanes of int8).
int NativeLanes(const Stmt& body, int native_bits) {
  int bits = 8;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (auto* st = AsPtr<BufferStoreNode>(n)) bits = std::max(bits, st->buffer->dtype.bits());
    if (auto* ld = AsPtr<BufferLoadNode>(n)) bits = std::max(bits, ld->buffer->dtype.bits());
  });
  return std::max(kMaxLanes, native_bits / bits);
}

For Serial(const ForNode* loop) {
  return ForNode::Make(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body,
                       nullptr, loop->annotations, loop->span);
}

// tir.SplitVectorizedLoops: prepares vectorized loops for a target's vector registers before
// tir.VectorizeLoop. A loop whose body the host can run as vector code and whose extent is a
// multiple of a vector width becomes a serial loop over vectorized chunks of that width
// (`for i_outer: for i in T.vectorized(lanes)`); any other vectorized loop becomes serial.
class VectorLoopSplitter : public StmtMutator {
 public:
  // `native_bits` > 0: the vector DSL's rules (chunks of one native vector; masked tails).
  VectorLoopSplitter(int vector_bits, int native_bits)
      : vector_bits_(vector_bits), native_bits_(native_bits), mask_tails_(native_bits > 0) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    local_.insert(op->buffer_var.get());
    return StmtMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind != ForKind::kVectorized) return s;
    auto extent = AsConstInt(loop->extent);
    if (!extent || *extent <= 1) return Serial(loop);
    int lanes = ChooseLanes(*extent, native_bits_ > 0 ? NativeLanes(loop->body, native_bits_)
                                                      : MaxLanes(loop, vector_bits_, local_));
    const VarNode* var = loop->loop_var.get();
    // A body that does not depend on the variable runs `extent` times: a serial loop.
    if (lanes == 0 || !UsesVar(loop->body, [var](const VarNode* v) { return v == var; })) {
      return Serial(loop);
    }
    DataType t = loop->loop_var->dtype;
    try {
      NativeVectorizer(loop->loop_var, RampNode::Make(loop->min, MakeConst(t, int64_t{1}), lanes),
                       lanes)
          .VisitStmt(MaskedTailBody(loop));
    } catch (const NotVectorizable&) {
      return Serial(loop);
    }
    if (lanes == *extent) return s;
    Var outer = VarNode::Make(loop->loop_var->name + "_outer", t, loop->loop_var->span);
    Var inner = VarNode::Make(loop->loop_var->name, t, loop->loop_var->span);
    VarMap vmap;
    vmap[var] = AddNode::Make(
        SimplifyExpr(AddNode::Make(loop->min, MulNode::Make(outer, MakeConst(t, int64_t(lanes))))),
        inner);
    Stmt chunk =
        ForNode::Make(inner, MakeConst(t, int64_t{0}), MakeConst(t, int64_t(lanes)),
                      ForKind::kVectorized, Substitute(loop->body, vmap), nullptr, {}, loop->span);
    return ForNode::Make(outer, MakeConst(t, int64_t{0}), MakeConst(t, *extent / lanes),
                         ForKind::kSerial, chunk, nullptr, loop->annotations, loop->span);
  }

  // With `mask_tails`, the body of `if var + k < limit: body` (tir.VectorizeLoop masks its
  // accesses instead of branching), else the loop's body.
  Stmt MaskedTailBody(const ForNode* loop) const {
    auto* branch = AsPtr<IfThenElseNode>(loop->body);
    const bool mask = mask_tails_ || loop->annotations.count("tessera.mask_tail");
    if (!mask || !branch || branch->else_case) return loop->body;
    Expr cond = branch->condition;
    if (auto* likely = AsPtr<CallNode>(cond); likely && likely->is_op("tir.likely")) {
      cond = likely->args[0];
    }
    auto* lt = AsPtr<LTNode>(cond);
    const VarNode* var = loop->loop_var.get();
    auto uses = [var](const Expr& e) {
      return UsesVar(e, [var](const VarNode* v) { return v == var; });
    };
    if (!lt || uses(lt->b)) return loop->body;
    Expr a = lt->a;
    if (auto* add = AsPtr<AddNode>(a)) {
      if (AsPtr<VarNode>(add->a) == var && !uses(add->b)) a = add->a;
      if (AsPtr<VarNode>(add->b) == var && !uses(add->a)) a = add->b;
    }
    return AsPtr<VarNode>(a) == var ? branch->then_case : loop->body;
  }

 private:
  int vector_bits_;
  int native_bits_;
  bool mask_tails_;
  std::unordered_set<const VarNode*> local_;  // buffers allocated in the function
};

// Vectorizes the T.vectorized loops of a function (innermost first); `target` is the function's
// "target" attribute (null: the current target), replaced inside a T.attr(target, "target").
class LoopVectorizer : public StmtMutator {
 public:
  LoopVectorizer(bool scalable_target, std::optional<bool> predicate, bool mask_any_base)
      : scalable_(scalable_target), predicate_(predicate), mask_any_base_(mask_any_base) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind != ForKind::kVectorized) return s;
    int lanes = 0;
    if (auto extent = AsConstInt(loop->extent); extent && *extent > 1 && *extent <= 32767) {
      lanes = static_cast<int>(*extent);
    } else if (auto k = MatchScalableLanes(loop->extent); k && scalable_) {
      lanes = -*k;
    }
    // Extent 1, or one known only at run time: the loop runs serially.
    if (lanes == 0) return Serial(loop);
    VectorContext ctx{scalable_, predicate_.value_or(scalable_) || mask_any_base_, mask_any_base_};
    if (loop->annotations.count("tessera.mask_tail")) {
      ctx.predicate = ctx.mask_any_base = ctx.scalar_loads = true;
    }
    return Vectorizer(loop, lanes, ctx).VisitStmt(loop->body);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "target") return StmtMutator::VisitStmt_(op);
    bool outer = scalable_;
    scalable_ = TargetHasScalableVectors(op->node);
    Stmt s = StmtMutator::VisitStmt_(op);
    scalable_ = outer;
    return s;
  }

 private:
  bool scalable_;
  std::optional<bool> predicate_;
  bool mask_any_base_;
};

// The vector width a host build splits vectorized loops at: the "tir.VectorizeLoop" option
// max_vector_bits, else the host CPU's (AVX-512: 512, AVX2: 256, else 128) for functions bound
// to a host target, else 0 (at most kMaxLanes lanes).
int SplitBits(const PrimFunc& f, const PassContext& ctx) {
  int bits = static_cast<int>(ctx.GetRecordInt("tir.VectorizeLoop", "max_vector_bits", 0));
  std::string target = f->GetStrAttr("target", "");
  if (bits <= 0 && (target == "c" || target == "llvm" || target.rfind("c ", 0) == 0 ||
                    target.rfind("llvm ", 0) == 0)) {
    bits = HostVectorBits();
  }
  return bits;
}

PrimFunc SplitVectorizedLoopsFunc(PrimFunc f, const PassContext& ctx, int native_bits) {
  if (ctx.GetBool("tir.disable_vectorize", false)) return f;
  Stmt body = VectorLoopSplitter(SplitBits(f, ctx), native_bits).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

class VectorizeSkipper : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    return loop->for_kind == ForKind::kVectorized ? Serial(loop) : s;
  }
};

PrimFunc VectorizeLoopFunc(PrimFunc f, const PassContext& ctx, bool enable, bool mask_tails) {
  Stmt body = f->body;
  if (!enable || ctx.GetBool("tir.disable_vectorize", false)) {
    body = VectorizeSkipper().VisitStmt(body);
    return body == f->body ? f : f->WithBody(body);
  }
  // tessera's option: max_vector_bits splits long loops into chunks of that width first.
  if (ctx.GetRecordInt("tir.VectorizeLoop", "max_vector_bits", 0) > 0) {
    body = VectorLoopSplitter(SplitBits(f, ctx), 0).VisitStmt(body);
  }
  auto it = f->attrs.find("target");
  bool scalable = it != f->attrs.end() ? TargetHasScalableVectors(it->second)
                                       : !arith::CurrentVScaleContext().values.empty();
  std::optional<bool> predicate;
  if (ctx.config.count("tir.enable_buffer_level_predication")) {
    predicate = ctx.GetBool("tir.enable_buffer_level_predication", false);
  }
  body = LoopVectorizer(scalable, predicate, mask_tails).VisitStmt(body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass VectorizeLoop(bool enable_vectorize, bool mask_tails) {
  return CreatePrimFuncPass(
      [enable_vectorize, mask_tails](PrimFunc f, IRModule, const PassContext& ctx) {
        return VectorizeLoopFunc(std::move(f), ctx, enable_vectorize, mask_tails);
      },
      0, "tir.VectorizeLoop");
}
TESSERA_REGISTER_PASS("tir.VectorizeLoop", [] { return VectorizeLoop(true); });

Pass SplitVectorizedLoops(int native_vector_bits) {
  return CreatePrimFuncPass(
      [native_vector_bits](PrimFunc f, IRModule, const PassContext& ctx) {
        return SplitVectorizedLoopsFunc(std::move(f), ctx, native_vector_bits);
      },
      0, "tir.SplitVectorizedLoops");
}
TESSERA_REGISTER_PASS("tir.SplitVectorizedLoops", [] { return SplitVectorizedLoops(0); });

}  // namespace transform
}  // namespace tessera
