// tir.SortRows: on the host, a function that carries no schedule gets topi.sort / argsort / topk
// over the last axis as one call a row of the code generator's row sort
// (tessera/target/sort_rows.h) instead of their quadratic rank-and-gather blocks.
//
// topi's sort is target-independent (topi/sort.py): a rank block counting, for each element, the
// elements before it in the stable order, then one gather block per output picking, for each
// output position, the element of that rank:
//
//   K[l.., i]  = K[l.., i] + select(A[l.., j] < A[l.., i]                          init: 0
//                                   or A[l.., j] == A[l.., i] and j < i, 1, 0)
//                (`>` for descending, either operand order of each comparison)
//   O[l.., p]  = max(O[l.., p], select(K[l.., i] == p, V, lo))                     init: lo
//                V = A[l.., i] (the values) or cast(i) (the indices)
//
// The pass recognizes that form by its structure, not its names: A a parameter buffer (compact,
// constant shape, n = its last extent, 2 <= n < 2^31, a type the row sort takes) that no block
// writes; K an int32 buffer of A's shape allocated by the root block, written by the rank block
// and read only by the one or two gather blocks that directly follow it (at most one of values
// and one of indices, all of the same length p < L <= n); the outputs parameter buffers. The rank
// block and its gathers become
//
//   T.call_extern("int32", "tessera_sort_row_<order>_<dtype>_<outputs>", T.address_of(A[l.., 0]),
//                 T.int64(n), [T.address_of(V[l.., 0]),] [T.address_of(I[l.., 0]),]
//                 T.int64(L), A[l.., n - 1])
//
// in one block a row, reading A[l.., 0:n] (the last element is passed only for that region) and
// writing the outputs' rows [0, L); K goes. The results are the blocks', and numpy's where those
// are undefined: a float row's NaN sort after every number (the blocks give NaN no rank of its
// own, so ranks collide).
//
// In the pipeline it runs just before tir.AutoSchedule, on the functions that pass schedules (no
// schedule of their own, a host target), and only when it runs: a function scheduled by hand
// keeps its blocks, and so does every CUDA build.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "block_nest.h"
#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/sort_row_names.h"

namespace tessera {
namespace transform {
namespace {

/*! \brief A root block of the pristine form: its loops (one per iterator, in order). */
using Nest = BlockNest;

/*! \brief A reduction block `X[s..] = C(X[s..], value)`, `X[s..] = init`, over one iterator
 *  after the spatial ones. */
struct Reduction {
  const BufferNode* out = nullptr;
  std::vector<const VarNode*> spatial;
  std::vector<int64_t> extents;  // of the spatial iterators
  const VarNode* reduce = nullptr;
  int64_t reduce_extent = 0;
  NodeKind combiner = NodeKind::kAdd;
  Expr value, init;
};

std::optional<Reduction> AsReduction(const BlockNode* b) {
  Reduction r;
  for (const IterVar& iv : b->iter_vars) {
    int64_t extent = *AsConstInt(iv->dom->extent);
    if (iv->iter_type == IterVarType::kDataPar && !r.reduce) {
      r.spatial.push_back(iv->var.get());
      r.extents.push_back(extent);
    } else if (iv->iter_type == IterVarType::kCommReduce && !r.reduce) {
      r.reduce = iv->var.get();
      r.reduce_extent = extent;
    } else {
      return std::nullopt;
    }
  }
  auto* store = AsPtr<BufferStoreNode>(b->body);
  auto* init = b->init ? AsPtr<BufferStoreNode>(b->init) : nullptr;
  if (!store || !init || !r.reduce || store->predicate || init->predicate ||
      store->buffer.get() != init->buffer.get() || store->indices.size() != r.spatial.size()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < r.spatial.size(); ++i) {
    if (AsPtr<VarNode>(store->indices[i]) != r.spatial[i] ||
        AsPtr<VarNode>(init->indices[i]) != r.spatial[i]) {
      return std::nullopt;
    }
  }
  auto* c = AsPtr<BinaryNode>(store->value);
  if (!c) return std::nullopt;
  if (!StructuralEqual(c->a, Expr(BufferLoadNode::Make(store->buffer, store->indices)))) {
    return std::nullopt;
  }
  r.out = store->buffer.get();
  r.combiner = c->kind;
  r.value = c->b;
  r.init = init->value;
  return r;
}

/*! \brief Whether `e` loads `buffer` at `vars` then at `last` (a variable). */
bool IsLoadAt(const Expr& e, const BufferNode* buffer, const std::vector<const VarNode*>& vars,
              const VarNode* last) {
  auto* load = AsPtr<BufferLoadNode>(e);
  if (!load || load->buffer.get() != buffer || load->predicate ||
      load->indices.size() != vars.size() + 1) {
    return false;
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    if (AsPtr<VarNode>(load->indices[i]) != vars[i]) return false;
  }
  return AsPtr<VarNode>(load->indices.back()) == last;
}

/*! \brief `x OP y` for the comparison `less` (kLT) in either operand order (kGT flipped). */
bool IsLess(const Expr& e, const std::function<bool(const Expr&)>& x,
            const std::function<bool(const Expr&)>& y) {
  auto* c = AsPtr<BinaryNode>(e);
  if (!c) return false;
  if (c->kind == NodeKind::kLT) return x(c->a) && y(c->b);
  if (c->kind == NodeKind::kGT) return y(c->a) && x(c->b);
  return false;
}

bool IsEqualOf(const Expr& e, const std::function<bool(const Expr&)>& x,
               const std::function<bool(const Expr&)>& y) {
  auto* c = AsPtr<BinaryNode>(e);
  return c && c->kind == NodeKind::kEQ && ((x(c->a) && y(c->b)) || (y(c->a) && x(c->b)));
}

bool IsVar(const Expr& e, const VarNode* v) { return AsPtr<VarNode>(e) == v; }

/*! \brief `e` without an outer cast. */
Expr Uncast(const Expr& e) {
  auto* cast = AsPtr<CastNode>(e);
  return cast ? cast->value : e;
}

struct Match {
  size_t rank = 0;
  size_t gathers = 0;  // the nests rank + 1 .. rank + gathers
  const BufferNode* K = nullptr;
  Stmt nest;
};

class Matcher {
 public:
  Matcher(const PrimFuncNode* func, const std::vector<std::optional<Nest>>& nests,
          const BlockNode* root)
      : func_(func), nests_(nests), root_(root) {}

  std::optional<Match> Try(size_t at) {
    if (!nests_[at]) return std::nullopt;
    auto R = AsReduction(nests_[at]->block);
    if (!R || R->combiner != NodeKind::kAdd || !IsConstInt(R->init, 0) ||
        R->init->dtype != DataType::Int(32) || R->spatial.empty()) {
      return std::nullopt;
    }
    const BufferNode* K = R->out;
    const size_t lead = R->spatial.size() - 1;
    const std::vector<const VarNode*> l(R->spatial.begin(), R->spatial.begin() + lead);
    const VarNode* i = R->spatial.back();
    const VarNode* j = R->reduce;
    // select(before or (equal and j < i), 1, 0)
    auto* sel = AsPtr<SelectNode>(R->value);
    if (!sel || !IsConstInt(sel->true_value, 1) || !IsConstInt(sel->false_value, 0)) {
      return std::nullopt;
    }
    auto* either = AsPtr<BinaryNode>(sel->condition);
    if (!either || either->kind != NodeKind::kOr) return std::nullopt;
    auto* both = AsPtr<BinaryNode>(either->b);
    if (!both || both->kind != NodeKind::kAnd) return std::nullopt;
    auto* any =
        AsPtr<BufferLoadNode>(AsPtr<BinaryNode>(both->a) ? AsPtr<BinaryNode>(both->a)->a : Expr());
    if (!any || !IsParam(any->buffer.get())) return std::nullopt;
    const BufferNode* A = any->buffer.get();
    auto is_a = [&](const Expr& e) { return IsLoadAt(e, A, l, i); };
    auto is_b = [&](const Expr& e) { return IsLoadAt(e, A, l, j); };
    auto is_i = [&](const Expr& e) { return IsVar(e, i); };
    auto is_j = [&](const Expr& e) { return IsVar(e, j); };
    bool ascending = true;
    if (IsLess(either->a, is_b, is_a)) {
      ascending = true;
    } else if (IsLess(either->a, is_a, is_b)) {
      ascending = false;
    } else {
      return std::nullopt;
    }
    if (!IsEqualOf(both->a, is_a, is_b) || !IsLess(both->b, is_j, is_i)) return std::nullopt;
    // A: a compact parameter row of a type the sort takes; K: A's shape, int32, the root's
    const std::string dtype = A->dtype.ToString();
    if (!codegen::SortRowDtypeSupported(dtype) || !A->strides.empty() ||
        !A->axis_separators.empty() || A->shape.size() != lead + 1 ||
        K->dtype != DataType::Int(32) || K->shape.size() != lead + 1 || !IsAllocated(K)) {
      return std::nullopt;
    }
    std::vector<int64_t> shape;
    for (size_t d = 0; d <= lead; ++d) {
      auto c = AsConstInt(A->shape[d]);
      auto k = AsConstInt(K->shape[d]);
      if (!c || !k || *c != *k || R->extents[d] != *c) return std::nullopt;
      shape.push_back(*c);
    }
    const int64_t n = shape.back();
    if (n < 2 || n >= (int64_t{1} << 31) || R->reduce_extent != n) return std::nullopt;
    // the gathers that directly follow
    Match m;
    m.rank = at;
    m.K = K;
    const BufferNode* V = nullptr;
    const BufferNode* I = nullptr;
    const Nest* first = nullptr;
    int64_t length = -1;
    for (size_t g = at + 1; g < nests_.size() && g <= at + 2; ++g) {
      if (!nests_[g]) break;
      auto G = AsReduction(nests_[g]->block);
      if (!G || G->combiner != NodeKind::kMax || G->spatial.size() != lead + 1 ||
          G->reduce_extent != n) {
        break;
      }
      const std::vector<const VarNode*> gl(G->spatial.begin(), G->spatial.begin() + lead);
      const VarNode* p = G->spatial.back();
      const VarNode* gi = G->reduce;
      auto* pick = AsPtr<SelectNode>(G->value);
      if (!pick || !StructuralEqual(pick->false_value, G->init)) break;
      auto is_k = [&](const Expr& e) { return IsLoadAt(e, K, gl, gi); };
      auto is_p = [&](const Expr& e) {
        return IsVar(Uncast(e), p) && e->dtype == DataType::Int(32);
      };
      if (!IsEqualOf(pick->condition, is_k, is_p)) break;
      bool values = IsLoadAt(pick->true_value, A, gl, gi);
      bool indices = !values && IsVar(Uncast(pick->true_value), gi) &&
                     codegen::SortRowIndexDtypeSupported(pick->true_value->dtype.ToString());
      const BufferNode* O = G->out;
      if ((!values && !indices) || (values && V) || (indices && I) || !IsParam(O) ||
          !O->strides.empty() || !O->axis_separators.empty() || O->shape.size() != lead + 1 ||
          O->dtype != pick->true_value->dtype) {
        break;
      }
      bool same = true;
      for (size_t d = 0; d < lead; ++d) {
        same = same && G->extents[d] == shape[d] && AsConstInt(O->shape[d]) &&
               *AsConstInt(O->shape[d]) == shape[d];
      }
      const int64_t L = G->extents[lead];
      if (!same || L < 1 || L > n || !AsConstInt(O->shape[lead]) ||
          *AsConstInt(O->shape[lead]) != L || (length >= 0 && L != length)) {
        break;
      }
      length = L;
      (values ? V : I) = O;
      if (!first) first = &*nests_[g];
      m.gathers = g - at;
    }
    if (m.gathers == 0) return std::nullopt;
    // A is read, never written; K is the rank block's and its gathers' alone
    for (size_t s = 0; s < nests_.size(); ++s) {
      if (s >= at && s <= at + m.gathers) {
        if (s > at && (Writes(s, A) || Writes(s, K))) return std::nullopt;
        continue;
      }
      if (Touches(s, K) || Writes(s, A)) return std::nullopt;
    }
    if (Writes(at, A)) return std::nullopt;
    codegen::SortRow row;
    row.ascending = ascending;
    row.dtype = dtype;
    row.values = V != nullptr;
    if (I) row.index_dtype = I->dtype.ToString();
    m.nest = Rewrite(*first, lead, ParamBuffer(A), n, ParamBuffer(V), ParamBuffer(I), length,
                     codegen::SortRowName(row));
    return m;
  }

 private:
  bool IsParam(const BufferNode* b) const { return b && ParamBuffer(b) != nullptr; }
  Buffer ParamBuffer(const BufferNode* b) const {
    if (!b) return nullptr;
    for (const auto& [var, buf] : func_->buffer_map) {
      if (buf.get() == b) return buf;
    }
    return nullptr;
  }
  bool IsAllocated(const BufferNode* b) const {
    for (const Buffer& buf : root_->alloc_buffers) {
      if (buf.get() == b) return true;
    }
    return false;
  }
  // A statement of the root that is not a pristine nest counts as touching everything.
  bool Writes(size_t s, const BufferNode* buffer) const {
    if (!nests_[s]) return true;
    const BlockNode* b = nests_[s]->block;
    bool writes = false;
    for (const BufferRegion& r : b->writes) writes = writes || r->buffer.get() == buffer;
    PostOrderVisit(b->body, [&](const ObjectRef& node) {
      if (auto* st = AsPtr<BufferStoreNode>(node)) writes = writes || st->buffer.get() == buffer;
    });
    return writes;
  }
  bool Touches(size_t s, const BufferNode* buffer) const {
    if (!nests_[s]) return true;
    bool touches = false;
    PostOrderVisit(nests_[s]->realize->block, [&](const ObjectRef& node) {
      if (auto* ld = AsPtr<BufferLoadNode>(node)) touches = touches || ld->buffer.get() == buffer;
      if (auto* st = AsPtr<BufferStoreNode>(node)) touches = touches || st->buffer.get() == buffer;
      if (auto* r = AsPtr<BufferRegionNode>(node)) touches = touches || r->buffer.get() == buffer;
    });
    return touches;
  }

  /*! \brief One block a row (the first gather's lead loops and iterators) calling `name`. */
  static Stmt Rewrite(const Nest& gather, size_t lead, const Buffer& A, int64_t n, const Buffer& V,
                      const Buffer& I, int64_t length, const std::string& name) {
    const BlockNode* b = gather.block;
    std::vector<IterVar> iters(b->iter_vars.begin(), b->iter_vars.begin() + lead);
    auto row_of = [&](const Buffer& buf, int64_t at) {
      std::vector<Expr> idx;
      for (const IterVar& iv : iters) idx.push_back(iv->var);
      DataType t = buf->shape.back()->dtype;
      idx.push_back(MakeConst(t, at));
      return idx;
    };
    auto region = [&](const Buffer& buf, int64_t extent) {
      std::vector<Range> r;
      for (const IterVar& iv : iters) {
        r.push_back(RangeNode::Make(iv->var, MakeConst(iv->var->dtype, int64_t{1})));
      }
      DataType t = buf->shape.back()->dtype;
      r.push_back(RangeNode::Make(MakeConst(t, int64_t{0}), MakeConst(t, extent)));
      return BufferRegionNode::Make(buf, r);
    };
    auto address = [&](const Buffer& buf) -> Expr {
      return CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                            {BufferLoadNode::Make(buf, row_of(buf, 0))});
    };
    std::vector<Expr> args = {StringImmNode::Make(name), address(A),
                              IntImmNode::Make(DataType::Int(64), n)};
    std::vector<BufferRegion> writes;
    for (const Buffer& out : {V, I}) {
      if (!out) continue;
      args.push_back(address(out));
      writes.push_back(region(out, length));
    }
    args.push_back(IntImmNode::Make(DataType::Int(64), length));
    args.push_back(BufferLoadNode::Make(A, row_of(A, n - 1)));
    Expr call = CallNode::Make(DataType::Int(32), OpNode::Get("tir.call_extern"), args);
    Block block =
        BlockNode::Make(iters, {region(A, n)}, writes, b->name_hint, EvaluateNode::Make(call),
                        nullptr, {}, {}, b->annotations, b->span);
    std::vector<Expr> values(gather.realize->iter_values.begin(),
                             gather.realize->iter_values.begin() + lead);
    Stmt s = BlockRealizeNode::Make(values, gather.realize->predicate, block, gather.realize->span);
    for (size_t d = lead; d-- > 0;) {
      const ForNode* loop = gather.loops[d];
      s = ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, s, nullptr,
                        loop->annotations, loop->span);
    }
    return s;
  }

  const PrimFuncNode* func_;
  const std::vector<std::optional<Nest>>& nests_;
  const BlockNode* root_;
};

PrimFunc RewriteFunction(const PrimFunc& func) {
  auto* root_realize = AsPtr<BlockRealizeNode>(func->body);
  if (!root_realize) return func;
  const BlockNode* root = root_realize->block.get();
  auto* seq = AsPtr<SeqStmtNode>(root->body);
  if (!seq || root->init || !root->match_buffers.empty()) return func;
  std::vector<std::optional<Nest>> nests;
  for (const Stmt& s : seq->seq) nests.push_back(AsBlockNest(s));
  std::vector<Match> matches;
  for (size_t i = 0; i < nests.size(); ++i) {
    Matcher matcher(func.get(), nests, root);
    auto m = matcher.Try(i);
    if (!m) continue;
    matches.push_back(*m);
    i += m->gathers;
  }
  if (matches.empty()) return func;
  std::vector<Stmt> body;
  std::unordered_set<const BufferNode*> gone_buffers;
  size_t next = 0;
  for (size_t i = 0; i < seq->seq.size(); ++i) {
    if (next < matches.size() && matches[next].rank == i) {
      body.push_back(matches[next].nest);
      gone_buffers.insert(matches[next].K);
      i += matches[next].gathers;
      ++next;
      continue;
    }
    body.push_back(seq->seq[i]);
  }
  return WithRootBody(func, root_realize, body, seq->span, gone_buffers);
}

IRModule SortRowsModule(IRModule mod, const PassContext& ctx) {
  return RewriteUnscheduledHostFunctions(mod, RewriteFunction);
}

}  // namespace

Pass SortRows() { return CreateModulePass(SortRowsModule, 0, "tir.SortRows"); }
TESSERA_REGISTER_PASS("tir.SortRows", SortRows);

}  // namespace transform
}  // namespace tessera
