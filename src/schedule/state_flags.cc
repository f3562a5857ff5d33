// The cached flags of a block (affine binding, region cover, stage pipeline) as TVM's
// ScheduleState reports them.
#include "tessera/schedule/primitive.h"
#include "utils.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief Whether `produced` holds `consumed`, dimension by dimension. */
bool Covers(const BufferRegion& produced, const BufferRegion& consumed, arith::Analyzer* ana) {
  for (size_t d = 0; d < produced->region.size() && d < consumed->region.size(); ++d) {
    const Range& p = produced->region[d];
    const Range& c = consumed->region[d];
    if (!ana->CanProve(LENode::Make(p->min, CastTo(p->min->dtype, c->min)))) return false;
    Expr c_end = AddE(c->min, c->extent), p_end = AddE(p->min, p->extent);
    if (!ana->CanProve(LENode::Make(CastTo(p_end->dtype, c_end), p_end))) return false;
  }
  return true;
}

/*! \brief A part of the union of `a` and `b` (TVM's lower-bound union): per dimension, the hull
 *  of the two ranges when they provably overlap or touch, else `a`'s range. */
BufferRegion UnionLowerBound(const BufferRegion& a, const BufferRegion& b, arith::Analyzer* ana) {
  std::vector<Range> out;
  bool changed = false;
  for (size_t d = 0; d < a->region.size() && d < b->region.size(); ++d) {
    const Range &ra = a->region[d], &rb = b->region[d];
    Expr a_end = AddE(ra->min, ra->extent);
    Expr b_end = AddE(rb->min, rb->extent);
    bool touch = ana->CanProve(LENode::Make(CastTo(a_end->dtype, rb->min), a_end)) &&
                 ana->CanProve(LENode::Make(CastTo(b_end->dtype, ra->min), b_end));
    if (!touch) {
      out.push_back(ra);
      continue;
    }
    BufferRegion hull = UnionRegion(BufferRegionNode::Make(a->buffer, {ra}),
                                    BufferRegionNode::Make(a->buffer, {rb}));
    out.push_back(hull->region[0]);
    changed = true;
  }
  return changed ? BufferRegionNode::Make(a->buffer, out, a->span) : a;
}

/*! \brief The loops between `lca` (excluded) and `block`, plus, for a buffer that the threads of
 *  a block or warp share, the thread-bound loops at or above `lca` whose threads share it (as
 *  TVM's region cover, which relaxes them for every scope but global). */
DomMap CoverDomains(const StmtSRefNode* lca, const StmtSRefNode* block, const Buffer& buffer) {
  DomMap dom = LoopDomainsBetween(lca, block);
  int rank = StorageRank(buffer->scope());
  if (rank == 0 || rank == 3) return dom;
  for (auto& [var, range] : SharedThreadDomains(lca, buffer->scope())) dom.emplace(var, range);
  return dom;
}

/*!
 * \brief Whether the producers of `consumer` in `scope` write what it reads first: for each
 *  lowest common ancestor of the consumer and some producers, the union of what those
 *  producers write under it holds what the consumer reads under it.
 */
bool RegionCover(const ScheduleState& state, const StmtSRef& consumer, const BlockScope& scope) {
  std::vector<std::pair<const StmtSRefNode*, std::vector<StmtSRef>>> by_lca;
  for (const Dependency& dep : scope.deps) {
    if (dep.dst != consumer || dep.kind != DepKind::kRAW) continue;
    const StmtSRefNode* lca = LowestCommonAncestor({dep.src.get(), consumer.get()});
    auto it = std::find_if(by_lca.begin(), by_lca.end(),
                           [&](const auto& entry) { return entry.first == lca; });
    if (it == by_lca.end()) it = by_lca.insert(by_lca.end(), {lca, {}});
    it->second.push_back(dep.src);
  }
  const BlockNode* block = consumer->block();
  for (const auto& [lca, producers] : by_lca) {
    arith::Analyzer ana;
    BindLoops(&ana, lca, /*inclusive=*/true);
    std::unordered_map<const BufferNode*, BufferRegion> produced;
    for (const StmtSRef& p : producers) {
      for (const BufferRegion& w : p->block()->writes) {
        DomMap dom = CoverDomains(lca, p.get(), w->buffer);
        BufferRegion region = RelaxRegion(RegionInLoops(state, p.get(), w), dom);
        auto it = produced.find(w->buffer.get());
        if (it == produced.end()) {
          produced.emplace(w->buffer.get(), region);
        } else {
          it->second = UnionLowerBound(it->second, region, &ana);
        }
      }
    }
    for (const BufferRegion& r : block->reads) {
      auto it = produced.find(r->buffer.get());
      if (it == produced.end()) continue;
      DomMap dom = CoverDomains(lca, consumer.get(), r->buffer);
      BufferRegion consumed = RelaxRegion(RegionInLoops(state, consumer.get(), r), dom);
      if (!Covers(it->second, consumed, &ana)) return false;
    }
  }
  return true;
}

}  // namespace

CachedFlags GetCachedFlags(const ScheduleState& state, const StmtSRef& block_sref) {
  const BlockNode* block = BlockOf(block_sref);
  CachedFlags flags;
  flags.affine_binding =
      block_sref->parent ? IsAffineBinding(state, block_sref.get()) : block->iter_vars.empty();
  if (block_sref->parent) {
    StmtSRef root = GetScopeRoot(state, block_sref.get());
    if (root)
      flags.region_cover = RegionCover(state, block_sref, ComputeBlockScope(state, root.get()));
  }
  BlockScope scope = ComputeBlockScope(state, block_sref.get());
  for (const Dependency& dep : scope.deps) {
    if (dep.kind == DepKind::kWAR) flags.stage_pipeline = false;
  }
  for (const StmtSRef& child : scope.blocks) {
    if (!flags.stage_pipeline) break;
    flags.stage_pipeline = RegionCover(state, child, scope);
  }
  return flags;
}

std::vector<BlockDependency> GetBlockDependencies(const ScheduleState& state,
                                                  const StmtSRef& scope_block) {
  BlockOf(scope_block);  // checks it is a block
  std::vector<BlockDependency> out;
  for (const Dependency& dep : ComputeBlockScope(state, scope_block.get()).deps) {
    int kind = dep.kind == DepKind::kRAW ? 0 : dep.kind == DepKind::kWAW ? 1 : 2;
    out.push_back({dep.src, dep.dst, kind});
  }
  return out;
}

}  // namespace schedule
}  // namespace tessera
