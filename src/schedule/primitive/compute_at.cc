// compute_at, reverse_compute_at: move a producer (consumer) under a loop, with loops that
// cover exactly the region its consumers (producers) there use.
#include <algorithm>

#include "../utils.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief Per block iterator, the range required of it (null: its whole domain). */
using IterRanges = std::unordered_map<const VarNode*, Range>;

/*! \brief The regions of `buffers` that `blocks` access (reads or writes), in terms of the loops
 *  at or above `loop`: bindings substituted, loops below `loop` relaxed, and so are the
 *  thread-bound loops above it whose threads share the buffer (SharedThreadDomains). */
std::unordered_map<const BufferNode*, BufferRegion> RegionsUnder(
    const ScheduleState& state, const std::vector<StmtSRef>& blocks, const StmtSRef& loop,
    const std::unordered_set<const BufferNode*>& buffers, bool writes) {
  std::unordered_map<const BufferNode*, BufferRegion> out;
  for (const StmtSRef& b : blocks) {
    const BlockNode* block = b->block();
    BlockRealize realize = GetBlockRealize(state, b.get());
    VarMap bindings;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      bindings[block->iter_vars[i]->var.get()] = realize->iter_values[i];
    }
    DomMap dom = LoopDomainsBetween(loop.get(), b.get());
    for (const BufferRegion& r : writes ? block->writes : block->reads) {
      if (!buffers.count(r->buffer.get())) continue;
      DomMap relax = dom;
      for (const auto& [var, range] : SharedThreadDomains(loop.get(), r->buffer->scope()))
        relax[var] = range;
      BufferRegion relaxed = RelaxRegion(Substitute(r, bindings), relax);
      auto it = out.find(r->buffer.get());
      out[r->buffer.get()] = it == out.end() ? relaxed : UnionRegion(it->second, relaxed);
    }
  }
  return out;
}

/*! \brief An interval [min, max] of integers; a null end is unbounded; `nothing` is empty. */
struct IntSet {
  bool nothing = true;
  Expr min, max;
  static IntSet Interval(Expr lo, Expr hi) { return {false, std::move(lo), std::move(hi)}; }
  bool bounded() const { return !nothing && min && max; }
};

Expr MinOf(const Expr& a, const Expr& b, bool is_min) {
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) return (is_min ? *ca <= *cb : *ca >= *cb) ? a : b;
  if (StructuralEqual(a, b)) return a;
  Expr c = CastTo(a->dtype, b);
  return is_min ? Expr(MinNode::Make(a, c)) : Expr(MaxNode::Make(a, c));
}

IntSet Union(const IntSet& a, const IntSet& b) {
  if (a.nothing) return b;
  if (b.nothing) return a;
  return IntSet::Interval(a.min && b.min ? MinOf(a.min, b.min, true) : nullptr,
                          a.max && b.max ? MinOf(a.max, b.max, false) : nullptr);
}

IntSet Intersect(const IntSet& a, const IntSet& b) {
  if (a.nothing || b.nothing) return {};
  Expr lo = a.min && b.min ? MinOf(a.min, b.min, false) : a.min ? a.min : b.min;
  Expr hi = a.max && b.max ? MinOf(a.max, b.max, true) : a.max ? a.max : b.max;
  return IntSet::Interval(lo, hi);
}

bool ProveEqual(arith::Analyzer& ana, const Expr& a, const Expr& b) {
  if (!a || !b) return !a && !b;
  return ana.CanProveEqual(a, CastTo(a->dtype, b));
}

/*! \brief The iterations of a block iterator that cover what is required (`dom`), and the
 *  bound (`bound`) beyond which they must not run, which becomes a predicate when it cuts
 *  `dom` (TVM's BlockVarDomainInfo). */
struct VarDomain {
  IntSet dom, bound;
  void Union(const VarDomain& o) {
    dom = schedule::Union(dom, o.dom);
    bound = schedule::Union(bound, o.bound);
  }
  void Simplify(arith::Analyzer& ana) {
    auto simplified = [&](const IntSet& set) {
      if (set.nothing) return set;
      return IntSet::Interval(set.min ? ana.Simplify(set.min) : nullptr,
                              set.max ? ana.Simplify(set.max) : nullptr);
    };
    if (dom.nothing) {
      if (bound.bounded()) {
        dom = simplified(bound);
        bound = IntSet();
      }
      return;
    }
    dom = simplified(dom);
    bound = simplified(bound);
    IntSet meet = simplified(Intersect(dom, bound));
    if (meet.nothing) return;
    if (ProveEqual(ana, dom.min, meet.min) && ProveEqual(ana, dom.max, meet.max)) {
      bound = IntSet();
    } else if (ProveEqual(ana, bound.min, meet.min) && ProveEqual(ana, bound.max, meet.max)) {
      dom = bound;
      bound = IntSet();
    } else if (meet.min && meet.max && AsConstInt(meet.min) && AsConstInt(meet.max)) {
      dom = meet;
      bound = IntSet();
    }
  }
};
using VarDomains = std::unordered_map<const VarNode*, VarDomain>;

// Whether `e` >= 0 wherever the moved block runs: a sum of products whose factors are each
// provably non-negative or the extent of a loop around the block (the body of a loop runs only
// where its extent is at least 1). TVM proves such lower bounds with its symbolic-bound proof
// (`i * ((n + 3) // 4) + j >= 0` under loops i and j of extents 4 and (n + 3) // 4) and then
// leaves them out of the block predicate.
bool NonNegativeInside(const Expr& e, arith::Analyzer& ana, const std::vector<Expr>& extents) {
  if (ana.CanProveGreaterEqual(e, 0)) return true;
  for (const Expr& x : extents) {
    if (StructuralEqual(e, x)) return true;
  }
  if (const auto* add = AsPtr<AddNode>(e)) {
    return NonNegativeInside(add->a, ana, extents) && NonNegativeInside(add->b, ana, extents);
  }
  if (const auto* mul = AsPtr<MulNode>(e)) {
    return NonNegativeInside(mul->a, ana, extents) && NonNegativeInside(mul->b, ana, extents);
  }
  return false;
}

Expr PlusOne(const Expr& e) {
  if (auto c = AsConstInt(e)) return IntConst(e->dtype, *c + 1);
  return AddNode::Make(e, IntConst(e->dtype, 1));
}

[[noreturn]] void FailPattern(const StmtSRef& block_sref, const BufferNode* buffer) {
  Fail("The block's access region cannot be solved for its iterators",
       "The block {0} accesses " + buffer->name +
           " at indices the primitive cannot solve for the block's iterators (each dimension "
           "should be an affine map of the iterators or a single iterator, possibly scaled, "
           "divided or taken modulo a constant)",
       {block_sref->stmt});
}

/*! \brief One dimension: the iterator and its domain that make `provided` cover `required`. */
std::optional<std::pair<Var, VarDomain>> SolveDim(const IntSet& provided, const IntSet& required,
                                                  const Expr& dim_max, arith::Analyzer& ana) {
  if (!provided.bounded() || required.nothing || !required.min) return std::nullopt;
  Expr pmin = ana.Simplify(provided.min), pmax = ana.Simplify(provided.max);
  Expr rmin = ana.Simplify(required.min);
  Expr rmax = required.max ? ana.Simplify(required.max) : nullptr;
  if (auto* mul = AsPtr<MulNode>(pmin)) {
    const VarNode* v = AsPtr<VarNode>(mul->a);
    Expr e = mul->b;
    if (!v) {
      v = AsPtr<VarNode>(mul->b);
      e = mul->a;
    }
    if (v && rmax) {
      VarDomain d;
      d.dom = IntSet::Interval(FloorDivE(rmin, e), FloorDivE(rmax, e));
      d.bound = IntSet::Interval(IntConst(e->dtype, 0), FloorDivE(dim_max, e));
      return std::make_pair(GetRef(v), d);
    }
  }
  if (!ProveEqual(ana, pmin, pmax)) return std::nullopt;
  if (auto* v = AsPtr<VarNode>(pmin)) {
    VarDomain d;
    d.dom = IntSet::Interval(rmin, rmax);
    d.bound = IntSet::Interval(IntConst(pmin->dtype, 0), dim_max);
    return std::make_pair(GetRef(v), d);
  }
  if (auto* div = AsPtr<FloorDivNode>(pmin)) {
    Expr f = div->b;
    if (!rmax || !ana.CanProveGreaterEqual(f, 1)) return std::nullopt;
    Expr lo = MulE(rmin, f);
    Expr hi = ana.Simplify(SubE(AddE(MulE(rmax, f), f), IntConst(f->dtype, 1)));
    if (auto* v = AsPtr<VarNode>(div->a)) {
      VarDomain d;
      d.dom = IntSet::Interval(lo, hi);
      d.bound = IntSet::Interval(
          IntConst(f->dtype, 0),
          ana.Simplify(SubE(AddE(MulE(dim_max, f), f), IntConst(f->dtype, 1))));
      return std::make_pair(GetRef(v), d);
    }
    return SolveDim(IntSet::Interval(div->a, div->a), IntSet::Interval(lo, hi), dim_max, ana);
  }
  if (auto* mod = AsPtr<FloorModNode>(pmin)) {
    if (auto* v = AsPtr<VarNode>(mod->a)) return std::make_pair(GetRef(v), VarDomain());
    if (ana.CanProveGreaterEqual(mod->a, 1) && ana.CanProveGreaterEqual(mod->b, 1) &&
        ana.CanProveGreaterEqual(rmin, 0)) {
      return SolveDim(IntSet::Interval(mod->a, mod->a), IntSet::Interval(rmin, nullptr), dim_max,
                      ana);
    }
  }
  return std::nullopt;
}

/*! \brief The block iterators' domains from a provided region that is a bijective affine map
 *  of them (one point per execution), by inverting it at the required region's corners. */
bool SolveAffine(const BlockNode* block, const std::vector<IntSet>& provided,
                 const std::vector<IntSet>& required, const BufferNode* buffer,
                 arith::Analyzer& ana, VarDomains* doms) {
  std::vector<Expr> indices;
  for (const IntSet& p : provided) {
    if (!p.bounded() || !ProveEqual(ana, p.min, p.max)) return false;
    indices.push_back(p.min);
  }
  std::vector<arith::IterDomain> iters;
  for (const IterVar& iv : block->iter_vars) {
    auto min = AsConstInt(iv->dom->min), extent = AsConstInt(iv->dom->extent);
    if (!min || !extent) return false;
    iters.push_back({iv->var, *min, *extent});
  }
  auto map = arith::DetectIterMap(indices, iters);
  if (!map || !arith::IsBijective(*map, iters)) return false;
  std::vector<Expr> lo, hi, zero, last;
  for (size_t d = 0; d < required.size(); ++d) {
    if (!required[d].bounded()) return false;
    lo.push_back(required[d].min);
    hi.push_back(required[d].max);
    const Expr& extent = buffer->shape[d];
    zero.push_back(IntConst(extent->dtype, 0));
    last.push_back(MinOf(SubE(extent, IntConst(extent->dtype, 1)), IntConst(extent->dtype, 0),
                         false));
  }
  auto at_lo = arith::InverseAffineIterMap(*map, lo);
  auto at_hi = arith::InverseAffineIterMap(*map, hi);
  auto at_zero = arith::InverseAffineIterMap(*map, zero);
  auto at_last = arith::InverseAffineIterMap(*map, last);
  if (!at_lo || !at_hi || !at_zero || !at_last) return false;
  auto find = [](const std::vector<std::pair<Var, Expr>>& m, const VarNode* v) -> Expr {
    for (const auto& [var, e] : m)
      if (var.get() == v) return e;
    return nullptr;
  };
  for (const auto& [var, a] : *at_lo) {
    Expr b = find(*at_hi, var.get()), z = find(*at_zero, var.get()), l = find(*at_last, var.get());
    if (!b || !z || !l) return false;
    VarDomain d;
    d.dom = IntSet::Interval(ana.Simplify(MinOf(a, b, true)), ana.Simplify(MinOf(a, b, false)));
    d.bound = IntSet::Interval(ana.Simplify(MinOf(z, l, true)), ana.Simplify(MinOf(z, l, false)));
    (*doms)[var.get()].Union(d);
  }
  return true;
}

/*! \brief Per block iterator, the domain covering the region the related blocks require
 *  (TVM's CalculateBlockVarDomain): affine inversion when the block accesses each buffer at
 *  one bijective point, else dimension by dimension. */
std::vector<VarDomain> SolveIterDomains(
    const StmtSRef& block_sref, const std::vector<BufferRegion>& access,
    const std::unordered_map<const BufferNode*, BufferRegion>& required_regions,
    const VarMap& unit_loops, arith::Analyzer& ana) {
  const BlockNode* block = block_sref->block();
  VarDomains doms;
  // The provided region per buffer, in the order of first access.
  std::vector<const BufferNode*> order;
  std::unordered_map<const BufferNode*, BufferRegion> provided_regions;
  for (const BufferRegion& r : access) {
    auto it = provided_regions.find(r->buffer.get());
    if (it == provided_regions.end()) {
      order.push_back(r->buffer.get());
      provided_regions[r->buffer.get()] = r;
    } else {
      it->second = UnionRegion(it->second, r);
    }
  }
  auto to_sets = [&](const BufferRegion& r, bool substitute) {
    std::vector<IntSet> sets;
    for (const Range& range : r->region) {
      Expr lo = substitute ? Substitute(range->min, unit_loops) : range->min;
      Expr extent = substitute ? Substitute(range->extent, unit_loops) : range->extent;
      Expr hi = IsConstInt(extent, 1) ? lo : SubE(AddE(lo, extent), IntConst(extent->dtype, 1));
      sets.push_back(IntSet::Interval(lo, hi));
    }
    return sets;
  };
  for (const BufferNode* buffer : order) {
    auto req = required_regions.find(buffer);
    if (req == required_regions.end()) continue;
    std::vector<IntSet> provided = to_sets(provided_regions[buffer], false);
    std::vector<IntSet> required = to_sets(req->second, true);
    if (SolveAffine(block, provided, required, buffer, ana, &doms)) continue;
    for (size_t d = 0; d < provided.size(); ++d) {
      const IntSet& p = provided[d];
      if (ProveEqual(ana, p.min, p.max) && AsConstInt(p.min)) continue;
      const Expr& extent = buffer->shape[d];
      Expr dim_max = MinOf(SubE(extent, IntConst(extent->dtype, 1)), IntConst(extent->dtype, 0),
                           false);
      auto solved = SolveDim(p, required[d], dim_max, ana);
      if (!solved) FailPattern(block_sref, buffer);
      auto it = doms.find(solved->first.get());
      bool is_iter = false;
      for (const IterVar& iv : block->iter_vars) is_iter = is_iter || iv->var.get() == solved->first.get();
      if (!is_iter) continue;
      if (it == doms.end()) {
        doms[solved->first.get()] = solved->second;
      } else {
        it->second.Union(solved->second);
      }
    }
  }
  std::vector<VarDomain> result;
  for (const IterVar& iv : block->iter_vars) {
    VarDomain info = doms[iv->var.get()];
    Expr dom_max = SubE(AddE(iv->dom->min, iv->dom->extent), IntConst(iv->dom->min->dtype, 1));
    IntSet own = IntSet::Interval(iv->dom->min, Simplify(dom_max));
    info.bound = info.bound.nothing ? own : Intersect(info.bound, own);
    info.Simplify(ana);
    result.push_back(info);
  }
  return result;
}

void ComputeAtImpl(ScheduleState& state, const StmtSRef& block_sref, const StmtSRef& loop_sref,
                   bool preserve_unit_loops, int index, bool reverse) {
  const BlockNode* block = BlockOf(block_sref);
  const ForNode* loop = LoopOf(loop_sref);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("Cannot move the root block", "", {block_sref->stmt});
  if (GetScopeRoot(state, loop_sref.get()) != scope_root) {
    Fail("the block and the loop are not in the same block scope",
         "the block {0} and the loop {1} are not in the same block scope: the loop must be in "
         "the scope whose root holds the block",
         {block_sref->stmt, loop_sref->stmt});
  }
  if (IsAncestor(loop_sref.get(), block_sref.get())) {
    Fail("the loop is an ancestor of the block",
         "the loop {1} is an ancestor of block {0}: the primitive moves a block under a loop of "
         "another loop nest, not within its own",
         {block_sref->stmt, loop_sref->stmt});
  }
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  if (state.enable_check()) CheckCompleteOrReduction(state, block_sref, scope_root, scope);
  // As TVM's stage pipeline: no write-after-read dependency in the scope (several writers of
  // one buffer, e.g. two halves of an output, are allowed).
  for (const Dependency& dep : scope.deps) {
    if (dep.kind == DepKind::kWAR) CheckStagePipeline(state, scope_root, scope);
  }
  if (!reverse) CheckNotOutputBlock(state, block_sref);

  // Producers must stay before the block and consumers after it.
  std::vector<StmtSRef> producers = scope.Producers(block_sref.get());
  std::vector<StmtSRef> consumers = scope.Consumers(block_sref.get());
  const std::vector<StmtSRef>& related = reverse ? producers : consumers;
  std::vector<StmtSRef> related_under;
  std::vector<ObjectRef> outside;
  for (const StmtSRef& b : related) {
    if (IsAncestor(loop_sref.get(), b.get())) {
      related_under.push_back(b);
    } else {
      outside.push_back(b->stmt);
    }
  }
  if (!outside.empty()) {
    std::string relation = reverse ? "producers" : "consumers";
    std::string detail = std::string(reverse ? "reverse_compute_at" : "compute_at") +
                         " requires all the " + relation +
                         " of the block {0} to be under the loop {1}, but " +
                         std::to_string(outside.size()) + " of them are not:";
    std::vector<ObjectRef> locs = {block_sref->stmt, loop_sref->stmt};
    for (size_t i = 0; i < outside.size(); ++i) {
      detail += (i ? ", {" : " {") + std::to_string(i + 2) + "}";
      locs.push_back(outside[i]);
    }
    Fail(std::string("some ") + relation + " of the block are outside the loop", detail, locs);
  }
  if (related_under.empty()) {
    Fail(reverse ? "The block has no producer under the loop"
                 : "The block has no consumer under the loop",
         std::string("The block {0} has no ") + (reverse ? "producer" : "consumer") +
             " under the loop {1}",
         {block_sref->stmt, loop_sref->stmt});
  }
  int64_t items = static_cast<int64_t>(BodyItems(loop->body).size());
  int64_t lower = 0, upper = items;
  for (const StmtSRef& p : producers) {
    if (IsAncestor(loop_sref.get(), p.get()))
      lower = std::max(lower, ChildIndex(loop_sref.get(), p.get()) + 1);
  }
  for (const StmtSRef& c : consumers) {
    if (IsAncestor(loop_sref.get(), c.get()))
      upper = std::min(upper, ChildIndex(loop_sref.get(), c.get()));
  }
  if (lower > upper) {
    Fail("No valid position to insert the block",
         "No position under {1} puts the block {0} after its producers and before its consumers",
         {block_sref->stmt, loop_sref->stmt});
  }
  int64_t position = index == -1 ? upper : index == -2 ? lower : index;
  if (position < lower || position > upper) {
    Fail("The index is not a valid insertion point",
         "The index " + std::to_string(index) +
             " is not a valid insertion point under {0}: valid "
             "ones are " +
             std::to_string(lower) + " to " + std::to_string(upper),
         {loop_sref->stmt});
  }

  // The region the related blocks under the loop use, and the block iterators covering it.
  std::unordered_set<const BufferNode*> buffers;
  for (const BufferRegion& r : reverse ? block->reads : block->writes)
    buffers.insert(r->buffer.get());
  auto required = RegionsUnder(state, related_under, loop_sref, buffers, /*writes=*/reverse);

  arith::Analyzer ana;
  // As TVM's analyzer, a loop of extent 1 above the block is its start in the new bindings.
  VarMap unit_loops;
  std::vector<Expr> extents;  // of the loops around the moved block
  for (const auto& [var, range] : LoopDomainsBetween(scope_root.get(), loop_sref.get())) {
    ana.Bind(GetRef(var), range);
    extents.push_back(range->extent);
    if (IsConstInt(range->extent, 1)) unit_loops[var] = range->min;
  }
  ana.Bind(loop->loop_var, RangeNode::Make(loop->min, loop->extent));
  extents.push_back(loop->extent);
  if (IsConstInt(loop->extent, 1)) unit_loops[loop->loop_var.get()] = loop->min;
  std::vector<VarDomain> doms = SolveIterDomains(
      block_sref, reverse ? block->reads : block->writes, required, unit_loops, ana);
  // The loops over the domains (TVM's MakeNewLoop), a predicate where a bound cuts them.
  std::vector<For> loops;
  std::vector<Expr> values;
  Expr predicate;
  VarMap unit_axes;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    DataType t = iv->var->dtype;
    const VarDomain& info = doms[i];
    Range r = iv->dom;
    if (info.dom.bounded()) {
      arith::Analyzer plain;
      r = RangeNode::Make(
          CastTo(t, plain.Simplify(info.dom.min)),
          CastTo(t, plain.Simplify(SubE(AddE(info.dom.max, IntConst(info.dom.max->dtype, 1)),
                                        info.dom.min))));
    }
    Expr value;
    if (preserve_unit_loops || !IsConstInt(r->extent, 1)) {
      Var ax = NewVar("ax" + std::to_string(loops.size()), t);
      Expr extent = CastTo(t, ana.Simplify(r->extent));
      loops.push_back(ForNode::Make(ax, IntConst(t, 0), extent, ForKind::kSerial, Evaluate0()));
      value = IsConstInt(r->min, 0) ? Expr(ax) : Expr(AddNode::Make(r->min, ax));
      ana.Bind(ax, RangeNode::Make(IntConst(t, 0), extent));
      extents.push_back(extent);
      // As TVM's analyzer binds a variable of one value: a unit loop is 0 in the predicate.
      if (IsConstInt(extent, 1)) unit_axes[ax.get()] = IntConst(t, 0);
    } else {
      value = r->min;
    }
    values.push_back(value);
    if (!info.bound.nothing) {
      if (info.bound.min) {
        Expr lower = GENode::Make(value, CastTo(t, info.bound.min));
        bool proven = ana.CanProve(lower) ||
                      NonNegativeInside(ana.Simplify(SubE(value, CastTo(t, info.bound.min))), ana,
                                        extents);
        if (!proven) predicate = AndE(predicate, lower);
      }
      if (info.bound.max) {
        Expr upper = LTNode::Make(value, CastTo(t, PlusOne(info.bound.max)));
        if (!ana.CanProve(upper)) predicate = AndE(predicate, upper);
      }
    }
  }
  if (predicate) predicate = ana.Simplify(Substitute(predicate, unit_axes));
  Stmt nest = MakeLoopNest(
      loops, BlockRealizeNode::Make(values, predicate ? predicate : Bool(true), GetRef(block)));

  StmtEditor editor;
  editor.replace[LeafToRemove(state, block_sref)] = nullptr;
  editor.insert[loop].emplace_back(position, nest);
  const BlockNode* root = scope_root->block();
  Block result = As<BlockNode>(editor.VisitStmt(scope_root->stmt));
  BlockReuse reuse = editor.reuse;
  reuse[root] = result;
  state.Replace(scope_root.get(), root, result, reuse);
}

}  // namespace

void ComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
               bool preserve_unit_loops, int index) {
  ComputeAtImpl(state, block, loop, preserve_unit_loops, index, /*reverse=*/false);
}

void ReverseComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
                      bool preserve_unit_loops, int index) {
  ComputeAtImpl(state, block, loop, preserve_unit_loops, index, /*reverse=*/true);
}

}  // namespace schedule
}  // namespace tessera
