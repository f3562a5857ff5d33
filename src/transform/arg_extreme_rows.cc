// tir.ArgExtremeRows: on the host, a function that carries no schedule gets its argmax / argmin
// rows as one call a row of the code generator's one-pass search, and its argmax / argmin of a
// whole tensor as one call of the flat search (tessera/target/arg_extreme.h).
//
// topi.argmax / argmin (first index) over the last axis of a row of int32, int64 or float64 of
// at least 512 elements is, target-independently, four blocks (topi/reduction.py,
// _arg_by_blocks): P, the extreme of each block of `size` elements lane by lane; E, the row's
// extreme (the maximum of P); W, the first block whose lanes reach E; R, the first element of
// block W no worse than E. The pass recognizes that chain by its structure, not its names:
//
//   P[l.., b, lane] = C(P[l.., b, lane], V(A[l.., k * width + min(b * size, n - size) + lane]))
//                     init: the identity of C (the type's lowest / highest, -inf / +inf)
//   E[l..]          = C(E[l..], P[l.., b, lane])                      init: the same
//   W[l..]          = min(W[l..], select(worse(P[l.., b, lane], E[l..]), 2^31-1, b))
//   R[l..(, 0)]     = min(R, select(worse(A[l.., at], E[l..]), 2^31-1, at)),
//                     at = min(W[l..] * size, n - size) + j
//
// with C max (argmax) or min (argmin), V a float NaN read as the extreme's infinity, worse `<`
// (argmax) or `>` (argmin), A a parameter buffer (contiguous, written by no block), P, E and W
// buffers of the root block that nothing else touches, written in that order, lanes * steps ==
// size, blocks * size >= n >= size, n >= 2. R's block then becomes
//
//   R[l..] = T.call_extern("int32", "tessera_arg{max,min}_row_<dtype>",
//                          T.address_of(A[l.., 0]), T.int64(n), A[l.., n - 1])
//
// reading A[l.., 0:n] (the last element is passed only for that region), and P, E, W and their
// blocks go. The results are the chain's, except that a float row holding the extreme's infinity
// before its first NaN gives the NaN's index (numpy's; the chain gives the infinity's).
//
// A 1-d A (lead empty) is a whole tensor: R becomes a call of the flat search,
// "tessera_arg{max,min}_flat_<dtype>" (of 8- to 64-bit integers, float32 and float64). So does
// topi's two-pass argmax / argmin over every axis of a tensor (`_arg`; see Matcher::TryFlat):
// the tensor read as one row, the index a flat one.
//
// In the pipeline it runs just before tir.AutoSchedule, on the functions that pass schedules
// (no schedule of their own, a host target), and only when it runs: a function scheduled by
// hand keeps its blocks, and so does every CUDA build (its cross-thread reductions).
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "block_nest.h"
#include "tessera/arith/analyzer.h"
#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int64_t kNone = 2147483647;  // topi's "no index" (int32 max)

/*! \brief A statement of the root block: a block of the pristine form and its loops (one per
 *  iterator, in order), or another statement (`block` null), which only the checks of buffer
 *  use see. */
struct Nest {
  size_t position = 0;  // in the root's SeqStmt
  Stmt stmt;
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = nullptr;
  const BlockNode* block = nullptr;
};

std::optional<Nest> AsNest(const Stmt& s, size_t position) {
  std::optional<BlockNest> b = AsBlockNest(s);
  if (!b) return std::nullopt;
  Nest nest;
  nest.position = position;
  nest.stmt = s;
  nest.loops = std::move(b->loops);
  nest.realize = b->realize;
  nest.block = b->block;
  return nest;
}

/*! \brief A reduction block `X[s..] = C(X[s..], value)` with `X[s..] = init`. */
struct Reduction {
  const BufferNode* out = nullptr;
  std::vector<const VarNode*> spatial, reduce;  // the iterators' variables, in order
  std::vector<int64_t> spatial_extents, reduce_extents;
  NodeKind combiner = NodeKind::kAdd;  // kMax or kMin
  Expr value, init;
  std::vector<Expr> indices;  // of the store
};

std::optional<Reduction> AsReduction(const BlockNode* b) {
  Reduction r;
  bool reducing = false;
  for (const IterVar& iv : b->iter_vars) {
    int64_t extent = *AsConstInt(iv->dom->extent);
    if (iv->iter_type == IterVarType::kDataPar && !reducing) {
      r.spatial.push_back(iv->var.get());
      r.spatial_extents.push_back(extent);
    } else if (iv->iter_type == IterVarType::kCommReduce) {
      reducing = true;
      r.reduce.push_back(iv->var.get());
      r.reduce_extents.push_back(extent);
    } else {
      return std::nullopt;
    }
  }
  auto* store = AsPtr<BufferStoreNode>(b->body);
  auto* init = b->init ? AsPtr<BufferStoreNode>(b->init) : nullptr;
  if (!store || !init || r.reduce.empty() || store->predicate || init->predicate ||
      store->buffer.get() != init->buffer.get() || store->indices.size() != r.spatial.size()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < r.spatial.size(); ++i) {
    if (AsPtr<VarNode>(store->indices[i]) != r.spatial[i] ||
        AsPtr<VarNode>(init->indices[i]) != r.spatial[i]) {
      return std::nullopt;
    }
  }
  const BinaryNode* c = AsPtr<BinaryNode>(store->value);
  if (!c || (c->kind != NodeKind::kMax && c->kind != NodeKind::kMin)) return std::nullopt;
  auto* acc = AsPtr<BufferLoadNode>(c->a);
  if (!acc || acc->buffer.get() != store->buffer.get() || acc->predicate ||
      !StructuralEqual(Expr(c->a), BufferLoadNode::Make(store->buffer, store->indices))) {
    return std::nullopt;
  }
  r.out = store->buffer.get();
  r.combiner = c->kind;
  r.value = c->b;
  r.init = init->value;
  r.indices = store->indices;
  return r;
}

/*! \brief Whether `e` is a load of `buffer` at the variables `vars` (then the `extra` indices). */
bool IsLoadAt(const Expr& e, const BufferNode* buffer, const std::vector<const VarNode*>& vars,
              size_t count, std::vector<Expr>* extra = nullptr) {
  auto* load = AsPtr<BufferLoadNode>(e);
  if (!load || load->buffer.get() != buffer || load->predicate || load->indices.size() < count) {
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    if (AsPtr<VarNode>(load->indices[i]) != vars[i]) return false;
  }
  if (extra) extra->assign(load->indices.begin() + count, load->indices.end());
  return extra ? true : load->indices.size() == count;
}

bool IsFloatConst(const Expr& e, double v) {
  auto* f = AsPtr<FloatImmNode>(e);
  return f && f->value == v;
}

/*! \brief topi's float extremes read `select(x != x, inf, x)` (a NaN is the extreme's infinity,
 *  -inf for a minimum): sets `*x` to x and returns true, or returns false for any other form. */
bool UnwrapNanAsInfinity(Expr* x, bool is_max) {
  auto* s = AsPtr<SelectNode>(*x);
  auto* ne = s ? AsPtr<BinaryNode>(s->condition) : nullptr;
  if (!s || !ne || ne->kind != NodeKind::kNE || !StructuralEqual(ne->a, ne->b) ||
      !StructuralEqual(ne->a, s->false_value) ||
      !IsFloatConst(s->true_value, is_max ? HUGE_VAL : -HUGE_VAL)) {
    return false;
  }
  *x = s->false_value;
  return true;
}

bool IsIntConst(const Expr& e, int64_t v) {
  auto c = AsConstInt(e);
  return c && *c == v;
}

/*! \brief `worse(x, best)`: x < best (argmax) or x > best (argmin), in either operand order. */
bool IsWorse(const Expr& e, bool is_max, const std::function<bool(const Expr&)>& is_x,
             const std::function<bool(const Expr&)>& is_best) {
  auto* c = AsPtr<BinaryNode>(e);
  if (!c) return false;
  NodeKind x_first = is_max ? NodeKind::kLT : NodeKind::kGT;
  NodeKind best_first = is_max ? NodeKind::kGT : NodeKind::kLT;
  if (c->kind == x_first) return is_x(c->a) && is_best(c->b);
  if (c->kind == best_first) return is_best(c->a) && is_x(c->b);
  return false;
}

/*! \brief `select(cond, 2^31 - 1, index)` (int32): cond and index, or nothing. */
bool AsFirstIndex(const Expr& e, Expr* cond, Expr* index) {
  auto* s = AsPtr<SelectNode>(e);
  if (!s || e->dtype != DataType::Int(32) || !IsIntConst(s->true_value, kNone)) return false;
  *cond = s->condition;
  *index = s->false_value;
  if (auto* cast = AsPtr<CastNode>(*index)) *index = cast->value;
  return true;
}

bool Mentions(const Stmt& s, const BufferNode* buffer) {
  bool touches = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* l = AsPtr<BufferLoadNode>(n)) touches = touches || l->buffer.get() == buffer;
    if (auto* st = AsPtr<BufferStoreNode>(n)) touches = touches || st->buffer.get() == buffer;
    if (auto* r = AsPtr<BufferRegionNode>(n)) touches = touches || r->buffer.get() == buffer;
  });
  return touches;
}

/*! \brief Whether the flat search takes `t`: 8- to 64-bit integers, float32, float64 (as
 *  tessera/target/arg_extreme.h's IsArgExtremeFlatType). */
bool IsFlatType(DataType t) {
  if (t.lanes() != 1) return false;
  if (t.is_float()) return t.bits() == 32 || t.bits() == 64;
  return (t.is_int() || t.is_uint()) &&
         (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64);
}

/*! \brief The chain ending in the nest `red`, rewritten; or nothing. */
struct Match {
  size_t red = 0;
  std::vector<size_t> gone;                     // the nests of P, E and W
  std::vector<const BufferNode*> gone_buffers;  // P, E, W
  Stmt nest;                                    // R's new nest
};

class Matcher {
 public:
  Matcher(const PrimFuncNode* func, const std::vector<Nest>& nests, const BlockNode* root)
      : func_(func), nests_(nests), root_(root) {}

  std::optional<Match> Try(size_t red_at) {
    const Nest& red = nests_[red_at];
    if (!red.block) return std::nullopt;
    auto R = AsReduction(red.block);
    if (!R || R->reduce.size() != 1 || R->combiner != NodeKind::kMin ||
        !IsIntConst(R->init, kNone) || R->init->dtype != DataType::Int(32)) {
      return std::nullopt;
    }
    Expr cond, at;
    if (!AsFirstIndex(R->value, &cond, &at)) return std::nullopt;
    // worse(A[l.., at], E[l..]): the comparison tells the extreme, its loads A and E
    auto* cmp = AsPtr<BinaryNode>(cond);
    if (!cmp || (cmp->kind != NodeKind::kLT && cmp->kind != NodeKind::kGT)) return std::nullopt;
    const BufferLoadNode* a_load = nullptr;
    const BufferLoadNode* e_load = nullptr;
    bool is_max = false;
    for (bool a_first : {true, false}) {
      auto* x = AsPtr<BufferLoadNode>(a_first ? cmp->a : cmp->b);
      auto* y = AsPtr<BufferLoadNode>(a_first ? cmp->b : cmp->a);
      if (x && y && IsParam(x->buffer.get())) {
        a_load = x;
        e_load = y;
        is_max = (cmp->kind == NodeKind::kLT) == a_first;
      }
    }
    if (!a_load) return std::nullopt;
    const BufferNode* A = a_load->buffer.get();
    const BufferNode* E = e_load->buffer.get();
    const DataType t = A->dtype;
    if (A->shape.empty() || !A->strides.empty() || !A->axis_separators.empty()) {
      return std::nullopt;
    }
    // a 1-d tensor is the whole tensor: the flat search, which takes more types
    const size_t lead = A->shape.size() - 1;
    if (lead == 0
            ? !IsFlatType(t)
            : !(t == DataType::Int(32) || t == DataType::Int(64) || t == DataType::Float(64))) {
      return std::nullopt;
    }
    std::vector<int64_t> shape;
    for (const Expr& d : A->shape) {
      auto c = AsConstInt(d);
      if (!c) return std::nullopt;
      shape.push_back(*c);
    }
    const int64_t n = shape.back();
    // (a row of one element would make the call's two loads one, which common-subexpression
    // elimination would take out of address_of)
    if (n < 2) return std::nullopt;
    // R: the lead iterators (then a unit one with keepdims) over A's leading dims
    if (R->spatial.size() != lead &&
        !(R->spatial.size() == lead + 1 && R->spatial_extents.back() == 1)) {
      return std::nullopt;
    }
    for (size_t i = 0; i < lead; ++i) {
      if (R->spatial_extents[i] != shape[i]) return std::nullopt;
    }
    const std::vector<const VarNode*> l(R->spatial.begin(), R->spatial.begin() + lead);
    std::vector<Expr> a_rest;
    if (!IsLoadAt(LoadOf(a_load), A, l, lead, &a_rest) || a_rest.size() != 1 ||
        !IsLoadAt(LoadOf(e_load), E, l, lead)) {
      return std::nullopt;
    }
    // W: the first block reaching E
    const BufferLoadNode* w_load = FindLoadIn(a_rest[0], A, E);
    if (!w_load || !IsLoadAt(LoadOf(w_load), w_load->buffer.get(), l, lead)) return std::nullopt;
    const BufferNode* W = w_load->buffer.get();
    const int64_t size = R->reduce_extents[0];
    if (size > n || size < 1) return std::nullopt;
    const Var j = VarOf(red.block, R->reduce[0]);
    const Expr width_t = MakeConst(a_rest[0]->dtype, size);
    Expr start = MinNode::Make(MulNode::Make(CastTo(LoadOf(w_load), a_rest[0]->dtype), width_t),
                               MakeConst(a_rest[0]->dtype, n - size));
    if (!ProveEqual(a_rest[0], AddNode::Make(start, CastTo(j, a_rest[0]->dtype))) ||
        (!StructuralEqual(at, a_rest[0]) && !ProveEqual(at, CastTo(a_rest[0], at->dtype)))) {
      return std::nullopt;
    }
    // the producers of E and W, then of P
    auto e_nest = Writer(E), w_nest = Writer(W);
    if (!e_nest || !w_nest || *e_nest >= *w_nest || *w_nest >= red_at) return std::nullopt;
    auto Eb = AsReduction(nests_[*e_nest].block);
    auto Wb = AsReduction(nests_[*w_nest].block);
    const NodeKind extreme = is_max ? NodeKind::kMax : NodeKind::kMin;
    if (!Eb || !Wb || Eb->spatial.size() != lead || Wb->spatial.size() != lead ||
        Eb->reduce.size() != 2 || Wb->reduce.size() != 2 || Eb->combiner != extreme ||
        Wb->combiner != NodeKind::kMin || !IsIntConst(Wb->init, kNone) ||
        Wb->init->dtype != DataType::Int(32) || E->dtype != t) {
      return std::nullopt;
    }
    const int64_t blocks = Eb->reduce_extents[0], width = Eb->reduce_extents[1];
    if (Wb->reduce_extents != Eb->reduce_extents || blocks < 1 || width < 1 || size % width != 0 ||
        blocks * size < n) {
      return std::nullopt;
    }
    // E = C(E, P[l.., b, lane])
    std::vector<Expr> p_rest;
    auto* p_load = AsPtr<BufferLoadNode>(Eb->value);
    if (!p_load || !IsLoadAt(Eb->value, p_load->buffer.get(), Eb->spatial, lead, &p_rest) ||
        p_rest.size() != 2 || AsPtr<VarNode>(p_rest[0]) != Eb->reduce[0] ||
        AsPtr<VarNode>(p_rest[1]) != Eb->reduce[1]) {
      return std::nullopt;
    }
    const BufferNode* P = p_load->buffer.get();
    if (!IsIdentity(Eb->init, t, is_max) || P->dtype != t) return std::nullopt;
    // W = min(W, select(worse(P[l.., b, lane], E[l..]), none, b))
    Expr w_cond, w_index;
    if (!AsFirstIndex(Wb->value, &w_cond, &w_index) || AsPtr<VarNode>(w_index) != Wb->reduce[0]) {
      return std::nullopt;
    }
    auto is_p = [&](const Expr& e) {
      std::vector<Expr> rest;
      return IsLoadAt(e, P, Wb->spatial, lead, &rest) && rest.size() == 2 &&
             AsPtr<VarNode>(rest[0]) == Wb->reduce[0] && AsPtr<VarNode>(rest[1]) == Wb->reduce[1];
    };
    auto is_e = [&](const Expr& e) { return IsLoadAt(e, E, Wb->spatial, lead); };
    if (!IsWorse(w_cond, is_max, is_p, is_e)) return std::nullopt;
    // P = C(P, V(A[l.., k * width + min(b * size, n - size) + lane]))
    auto p_nest = Writer(P);
    if (!p_nest || *p_nest >= *e_nest || *p_nest >= *w_nest) return std::nullopt;
    auto Pb = AsReduction(nests_[*p_nest].block);
    if (!Pb || Pb->spatial.size() != lead + 2 || Pb->reduce.size() != 1 ||
        Pb->combiner != extreme || !IsIdentity(Pb->init, t, is_max) ||
        Pb->spatial_extents[lead] != blocks || Pb->spatial_extents[lead + 1] != width ||
        Pb->reduce_extents[0] * width != size) {
      return std::nullopt;
    }
    for (size_t i = 0; i < lead; ++i) {
      if (Pb->spatial_extents[i] != shape[i] || Eb->spatial_extents[i] != shape[i] ||
          Wb->spatial_extents[i] != shape[i]) {
        return std::nullopt;
      }
    }
    Expr x = Pb->value;
    if (t.is_float() && !UnwrapNanAsInfinity(&x, is_max)) return std::nullopt;
    std::vector<Expr> x_rest;
    if (!IsLoadAt(x, A, Pb->spatial, lead, &x_rest) || x_rest.size() != 1) return std::nullopt;
    {
      const DataType it = x_rest[0]->dtype;
      const Block& pblock = nests_[*p_nest].realize->block;
      Var b = VarOf(pblock.get(), Pb->spatial[lead]);
      Var lane = VarOf(pblock.get(), Pb->spatial[lead + 1]);
      Var k = VarOf(pblock.get(), Pb->reduce[0]);
      Expr want = AddNode::Make(
          AddNode::Make(MulNode::Make(CastTo(k, it), MakeConst(it, width)),
                        MinNode::Make(MulNode::Make(CastTo(b, it), MakeConst(it, size)),
                                      MakeConst(it, n - size))),
          CastTo(lane, it));
      if (!ProveEqual(x_rest[0], want)) return std::nullopt;
    }
    // A is read, never written; P, E and W are the chain's alone
    const std::set<size_t> chain = {*p_nest, *e_nest, *w_nest, red_at};
    for (size_t i = 0; i < nests_.size(); ++i) {
      if (Writes(nests_[i].stmt, A)) return std::nullopt;
      if (chain.count(i)) continue;
      for (const BufferNode* own : {P, E, W}) {
        if (Touches(nests_[i].stmt, own)) return std::nullopt;
      }
      // a statement of another form may reach A through an alias (match_buffer): not at all
      if (!nests_[i].block && Touches(nests_[i].stmt, A)) return std::nullopt;
    }
    if (Writes(nests_[red_at].stmt, P) || Writes(nests_[red_at].stmt, E) ||
        Writes(nests_[red_at].stmt, W) || !IsAllocated(P) || !IsAllocated(E) || !IsAllocated(W) ||
        !IsParamOrAllocated(R->out) || P == E || E == W || P == W) {
      return std::nullopt;
    }
    Match m;
    m.red = red_at;
    m.gone = {*p_nest, *e_nest, *w_nest};
    m.gone_buffers = {P, E, W};
    m.nest = Rewrite(red, *R, lead, ParamBuffer(A), n, is_max, a_rest[0]->dtype, lead == 0);
    return m;
  }

  /*! \brief topi's two passes over a whole tensor A (every axis reduced, `_arg`), ending in
   *  the nest `red`:
   *
   *    E[u..] = C(E[u..], V(A[k..]))      init: the identity of C
   *    R[u..] = min(R[u..], select(worse(A[k..], E[0..]), 2^31-1, flat))
   *          or min(R[u..], select(A[k..] == E[0..], flat, 2^31-1))      (integers)
   *
   *  u.. iterators of extent 1 (none, or A's rank with keepdims), k.. one a dimension of A in
   *  order, flat the row-major index of k.. in A, C and V as in the row chain. R's block becomes
   *  `R[u..] = tessera_arg{max,min}_flat_<dtype>(&A[0..], n, A[last])`, n = A's size (2 to
   *  2^31 - 1), and E goes. The results are the chain's, but for a float tensor holding the
   *  extreme's infinity before its first NaN (the NaN's index, numpy's). */
  std::optional<Match> TryFlat(size_t red_at) {
    const Nest& red = nests_[red_at];
    if (!red.block) return std::nullopt;
    auto R = AsReduction(red.block);
    if (!R || R->combiner != NodeKind::kMin || !IsIntConst(R->init, kNone) ||
        R->init->dtype != DataType::Int(32) || R->value->dtype != DataType::Int(32)) {
      return std::nullopt;
    }
    for (int64_t e : R->spatial_extents) {
      if (e != 1) return std::nullopt;
    }
    auto* sel = AsPtr<SelectNode>(R->value);
    auto* cmp = sel ? AsPtr<BinaryNode>(sel->condition) : nullptr;
    if (!cmp) return std::nullopt;
    const bool equal = cmp->kind == NodeKind::kEQ;
    Expr index;
    if (equal && IsIntConst(sel->false_value, kNone)) {
      index = sel->true_value;
    } else if ((cmp->kind == NodeKind::kLT || cmp->kind == NodeKind::kGT) &&
               IsIntConst(sel->true_value, kNone)) {
      index = sel->false_value;
    } else {
      return std::nullopt;
    }
    const BufferLoadNode* a_load = nullptr;
    const BufferLoadNode* e_load = nullptr;
    bool a_first = false;
    for (bool first : {true, false}) {
      auto* x = AsPtr<BufferLoadNode>(first ? cmp->a : cmp->b);
      auto* y = AsPtr<BufferLoadNode>(first ? cmp->b : cmp->a);
      if (!a_load && x && y && IsParam(x->buffer.get()) && !IsParam(y->buffer.get())) {
        a_load = x;
        e_load = y;
        a_first = first;
      }
    }
    if (!a_load || a_load->predicate || e_load->predicate) return std::nullopt;
    const Buffer A = ParamBuffer(a_load->buffer.get());
    const BufferNode* E = e_load->buffer.get();
    const DataType t = A->dtype;
    if (!IsFlatType(t) || (equal && t.is_float()) || E->dtype != t || A->shape.empty() ||
        !A->strides.empty() || !A->axis_separators.empty()) {
      return std::nullopt;
    }
    const size_t rank = A->shape.size();
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const Expr& d : A->shape) {
      auto c = AsConstInt(d);
      if (!c || *c < 1) return std::nullopt;
      shape.push_back(*c);
      n *= *c;
      if (n > kNone) return std::nullopt;
    }
    // (one element would make the call's two loads one, which common-subexpression elimination
    // would take out of address_of)
    if (n < 2 || R->reduce.size() != rank || R->reduce_extents != shape ||
        !IsLoadAt(LoadOf(a_load), A.get(), R->reduce, rank)) {
      return std::nullopt;
    }
    for (const Expr& i : e_load->indices) {
      if (!IsIntConst(i, 0)) return std::nullopt;
    }
    // flat: sum of k_i * stride_i, as int32 (or wider, cast)
    if (auto* cast = AsPtr<CastNode>(index)) index = cast->value;
    if (!index->dtype.is_int() || index->dtype.lanes() != 1) return std::nullopt;
    {
      const DataType it = index->dtype;
      Expr want = MakeConst(it, int64_t{0});
      for (size_t i = 0; i < rank; ++i) {
        want = AddNode::Make(MulNode::Make(want, MakeConst(it, shape[i])),
                             CastTo(VarOf(red.block, R->reduce[i]), it));
      }
      if (!ProveEqual(index, want)) return std::nullopt;
    }
    // E: the extreme of A, from C's identity
    auto e_nest = Writer(E);
    if (!e_nest || *e_nest >= red_at) return std::nullopt;
    auto Eb = AsReduction(nests_[*e_nest].block);
    if (!Eb || (Eb->combiner != NodeKind::kMax && Eb->combiner != NodeKind::kMin) ||
        Eb->reduce.size() != rank || Eb->reduce_extents != shape ||
        Eb->spatial.size() != E->shape.size()) {
      return std::nullopt;
    }
    for (int64_t e : Eb->spatial_extents) {
      if (e != 1) return std::nullopt;
    }
    const bool is_max = Eb->combiner == NodeKind::kMax;
    if (!equal && is_max != ((cmp->kind == NodeKind::kLT) == a_first)) return std::nullopt;
    if (!IsIdentity(Eb->init, t, is_max)) return std::nullopt;
    Expr x = Eb->value;
    if (t.is_float() && !UnwrapNanAsInfinity(&x, is_max)) return std::nullopt;
    if (!IsLoadAt(x, A.get(), Eb->reduce, rank)) return std::nullopt;
    // A is read, never written; E is the two blocks' alone
    for (size_t i = 0; i < nests_.size(); ++i) {
      if (Writes(nests_[i].stmt, A.get())) return std::nullopt;
      if (i == *e_nest || i == red_at) continue;
      if (Touches(nests_[i].stmt, E)) return std::nullopt;
      if (!nests_[i].block && Touches(nests_[i].stmt, A.get())) return std::nullopt;
    }
    if (Writes(nests_[red_at].stmt, E) || !IsAllocated(E) || !IsParamOrAllocated(R->out) ||
        R->out == E) {
      return std::nullopt;
    }
    std::vector<Expr> first, last;
    std::vector<Range> region;
    for (size_t i = 0; i < rank; ++i) {
      const DataType it = a_load->indices[i]->dtype;
      first.push_back(MakeConst(it, int64_t{0}));
      last.push_back(MakeConst(it, shape[i] - 1));
      region.push_back(RangeNode::Make(MakeConst(it, int64_t{0}), MakeConst(it, shape[i])));
    }
    Match m;
    m.red = red_at;
    m.gone = {*e_nest};
    m.gone_buffers = {E};
    m.nest = CallNest(red, *R, "flat", A, is_max, n, first, last, region);
    return m;
  }

 private:
  // ---- helpers over the function ----
  bool IsParam(const BufferNode* b) const {
    for (const auto& [var, buf] : func_->buffer_map) {
      if (buf.get() == b) return true;
    }
    return false;
  }
  bool IsAllocated(const BufferNode* b) const {
    for (const Buffer& buf : root_->alloc_buffers) {
      if (buf.get() == b) return true;
    }
    return false;
  }
  bool IsParamOrAllocated(const BufferNode* b) const { return IsParam(b) || IsAllocated(b); }
  Buffer ParamBuffer(const BufferNode* b) const {
    for (const auto& [var, buf] : func_->buffer_map) {
      if (buf.get() == b) return buf;
    }
    return nullptr;
  }
  /*! \brief Whether `s` stores to `buffer` or has a block declaring it written. */
  static bool Writes(const Stmt& s, const BufferNode* buffer) {
    bool writes = false;
    PostOrderVisit(s, [&](const ObjectRef& n) {
      if (auto* st = AsPtr<BufferStoreNode>(n)) writes = writes || st->buffer.get() == buffer;
      if (auto* b = AsPtr<BlockNode>(n)) {
        for (const BufferRegion& r : b->writes) writes = writes || r->buffer.get() == buffer;
      }
    });
    return writes;
  }
  /*! \brief Whether `s` uses `buffer` or its data pointer at all. */
  static bool Touches(const Stmt& s, const BufferNode* buffer) {
    const VarNode* data = buffer->data.get();
    return Mentions(s, buffer) || UsesVar(s, [data](const VarNode* v) { return v == data; });
  }
  /*! \brief The one statement that writes `b`, a block of the pristine form. */
  std::optional<size_t> Writer(const BufferNode* b) const {
    std::optional<size_t> found;
    for (size_t i = 0; i < nests_.size(); ++i) {
      if (!Writes(nests_[i].stmt, b)) continue;
      if (found || !nests_[i].block) return std::nullopt;
      found = i;
    }
    return found;
  }
  static Var VarOf(const BlockNode* b, const VarNode* v) {
    for (const IterVar& iv : b->iter_vars) {
      if (iv->var.get() == v) return iv->var;
    }
    return nullptr;
  }
  static Expr LoadOf(const BufferLoadNode* load) {
    return BufferLoadNode::Make(load->buffer, load->indices);
  }
  static Expr CastTo(const Expr& e, DataType t) {
    return e->dtype == t ? e : Expr(CastNode::Make(t, e));
  }
  /*! \brief The load of a buffer other than `a` and `e` in `index` (W[l..]). */
  static const BufferLoadNode* FindLoadIn(const Expr& index, const BufferNode* a,
                                          const BufferNode* e) {
    const BufferLoadNode* found = nullptr;
    int count = 0;
    PostOrderVisit(index, [&](const ObjectRef& n) {
      auto* l = AsPtr<BufferLoadNode>(n);
      if (!l) return;
      ++count;
      if (l->buffer.get() != a && l->buffer.get() != e) found = l;
    });
    return count == 1 ? found : nullptr;
  }
  static bool ProveEqual(const Expr& a, const Expr& b) {
    if (a->dtype != b->dtype) return false;
    arith::Analyzer ana;
    return ana.CanProveEqual(a, b);
  }
  /*! \brief The identity of max (argmax) or min (argmin) that topi starts from. */
  static bool IsIdentity(const Expr& init, DataType t, bool is_max) {
    if (init->dtype != t) return false;
    if (t.is_float()) return IsFloatConst(init, is_max ? -HUGE_VAL : HUGE_VAL);
    const int bits = t.bits();
    if (bits < 8 || bits > 64 || !(t.is_int() || t.is_uint())) return false;
    if (t.is_uint()) {
      // (the highest uint64, 2^64 - 1, is the constant's bits read as int64: -1)
      const int64_t highest = bits == 64 ? -1 : (int64_t{1} << bits) - 1;
      return IsIntConst(init, is_max ? 0 : highest);
    }
    const int64_t highest = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
    return IsIntConst(init, is_max ? -highest - 1 : highest);
  }

  /*! \brief R's nest with one call a row, its reduction loop gone (`flat`: A is 1-d, the flat
   *  search's call). */
  Stmt Rewrite(const Nest& red, const Reduction& R, size_t lead, const Buffer& A, int64_t n,
               bool is_max, DataType index_type, bool flat) const {
    const BlockNode* b = red.block;
    std::vector<Expr> first, last;
    std::vector<Range> row;
    for (size_t i = 0; i < lead; ++i) {
      const Var& v = b->iter_vars[i]->var;
      first.push_back(v);
      last.push_back(v);
      row.push_back(RangeNode::Make(v, MakeConst(v->dtype, int64_t{1})));
    }
    first.push_back(MakeConst(index_type, int64_t{0}));
    last.push_back(MakeConst(index_type, n - 1));
    row.push_back(RangeNode::Make(MakeConst(index_type, int64_t{0}), MakeConst(index_type, n)));
    return CallNest(red, R, flat ? "flat" : "row", A, is_max, n, first, last, row);
  }

  /*! \brief R's nest storing "tessera_arg{max,min}_<kind>_<dtype>"(&A[first], n, A[last]) in
   *  place of its reduction, reading `region` of A; its spatial iterators and loops kept. */
  Stmt CallNest(const Nest& red, const Reduction& R, const std::string& kind, const Buffer& A,
                bool is_max, int64_t n, const std::vector<Expr>& first,
                const std::vector<Expr>& last, const std::vector<Range>& region) const {
    const BlockNode* b = red.block;
    std::vector<IterVar> iters(b->iter_vars.begin(), b->iter_vars.begin() + R.spatial.size());
    const std::string name = std::string("tessera_arg") + (is_max ? "max" : "min") + "_" + kind +
                             "_" + A->dtype.ToString();
    Expr address = CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                                  {BufferLoadNode::Make(A, first)});
    Expr call =
        CallNode::Make(DataType::Int(32), OpNode::Get("tir.call_extern"),
                       {StringImmNode::Make(name), address, IntImmNode::Make(DataType::Int(64), n),
                        BufferLoadNode::Make(A, last)});
    auto* store = AsPtr<BufferStoreNode>(b->body);
    Stmt body = BufferStoreNode::Make(store->buffer, call, store->indices);
    std::vector<Range> out_region;
    for (const Expr& index : store->indices) {
      out_region.push_back(RangeNode::Make(index, MakeConst(index->dtype, int64_t{1})));
    }
    Block block = BlockNode::Make(iters, {BufferRegionNode::Make(A, region)},
                                  {BufferRegionNode::Make(store->buffer, out_region)}, b->name_hint,
                                  body, nullptr, {}, {}, b->annotations, b->span);
    std::vector<Expr> values(red.realize->iter_values.begin(),
                             red.realize->iter_values.begin() + iters.size());
    Stmt s = BlockRealizeNode::Make(values, red.realize->predicate, block, red.realize->span);
    for (size_t i = iters.size(); i-- > 0;) {
      const ForNode* loop = red.loops[i];
      s = ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, s, nullptr,
                        loop->annotations, loop->span);
    }
    return s;
  }

  const PrimFuncNode* func_;
  const std::vector<Nest>& nests_;
  const BlockNode* root_;
};

PrimFunc RewriteFunction(const PrimFunc& func) {
  auto* root_realize = AsPtr<BlockRealizeNode>(func->body);
  if (!root_realize) return func;
  const BlockNode* root = root_realize->block.get();
  auto* seq = AsPtr<SeqStmtNode>(root->body);
  if (!seq || root->init || !root->match_buffers.empty()) return func;
  std::vector<Nest> nests;
  for (size_t i = 0; i < seq->seq.size(); ++i) {
    auto nest = AsNest(seq->seq[i], i);
    if (!nest) {
      nest = Nest();
      nest->position = i;
      nest->stmt = seq->seq[i];
    }
    nests.push_back(*nest);
  }
  std::vector<Match> matches;
  std::set<size_t> taken;
  for (size_t i = 0; i < nests.size(); ++i) {
    Matcher matcher(func.get(), nests, root);
    auto m = matcher.Try(i);
    if (!m) m = matcher.TryFlat(i);
    if (!m) continue;
    bool overlap = taken.count(m->red);
    for (size_t g : m->gone) overlap = overlap || taken.count(g);
    if (overlap) continue;
    taken.insert(m->red);
    taken.insert(m->gone.begin(), m->gone.end());
    matches.push_back(*m);
  }
  if (matches.empty()) return func;
  std::vector<Stmt> body;
  std::unordered_set<const BufferNode*> gone_buffers;
  std::set<size_t> gone;
  std::vector<const Match*> at(seq->seq.size(), nullptr);
  for (const Match& m : matches) {
    gone.insert(m.gone.begin(), m.gone.end());
    gone_buffers.insert(m.gone_buffers.begin(), m.gone_buffers.end());
    at[m.red] = &m;
  }
  for (size_t i = 0; i < seq->seq.size(); ++i) {
    if (gone.count(i)) continue;
    body.push_back(at[i] ? at[i]->nest : seq->seq[i]);
  }
  return WithRootBody(func, root_realize, body, seq->span, gone_buffers);
}

IRModule ArgExtremeRowsModule(IRModule mod, const PassContext& ctx) {
  return RewriteUnscheduledHostFunctions(mod, RewriteFunction);
}

}  // namespace

Pass ArgExtremeRows() { return CreateModulePass(ArgExtremeRowsModule, 0, "tir.ArgExtremeRows"); }
TESSERA_REGISTER_PASS("tir.ArgExtremeRows", ArgExtremeRows);

}  // namespace transform
}  // namespace tessera
