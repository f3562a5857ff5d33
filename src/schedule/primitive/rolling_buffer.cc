// rolling_buffer: a buffer that a tiled producer writes in overlapping windows along one axis
// becomes a circular buffer of the window's size on that axis (indices modulo the window); the
// producer skips the overlap it computed in the previous tile.
#include <cmath>

#include "../utils.h"
#include "tessera/ir/block_access.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

struct RollingInfo {
  Buffer old_buffer, new_buffer;
  int axis = 0;
  Expr extent;
  std::vector<int64_t> overlaps;
  std::vector<Var> iter_vars;  // per dimension; null where the dimension does not roll
};

/*! \brief The loop variable and stride of a window start `v * s`, `floordiv(v * s, d)` or `v`. */
bool MatchStart(const Expr& e, Var* var, int64_t* stride) {
  auto var_times = [](const Expr& x, Var* v, int64_t* s) {
    if (auto* p = AsPtr<VarNode>(x)) {
      *v = GetRef(p);
      *s = 1;
      return true;
    }
    if (auto* m = AsPtr<MulNode>(x)) {
      auto* a = AsPtr<VarNode>(m->a);
      auto c = AsConstInt(m->b);
      if (a && c && AsPtr<IntImmNode>(m->b)) {
        *v = GetRef(a);
        *s = *c;
        return true;
      }
    }
    return false;
  };
  if (auto* d = AsPtr<FloorDivNode>(e)) {
    auto divisor = AsConstInt(d->b);
    if (divisor && AsPtr<MulNode>(d->a) && var_times(d->a, var, stride)) {
      *stride = static_cast<int64_t>(
          std::ceil(static_cast<float>(*stride) / static_cast<float>(*divisor)));
      return true;
    }
    return false;
  }
  if (AsPtr<MulNode>(e)) return var_times(e, var, stride);
  if (AsPtr<VarNode>(e)) return var_times(e, var, stride);
  return false;
}

bool CollectInfo(const ScheduleState& state, const StmtSRef& block_sref, const BufferRegion& region,
                 RollingInfo* info) {
  std::vector<Var> vars;
  std::vector<int64_t> overlaps;
  for (const Range& r : region->region) {
    Var v;
    int64_t stride = 0;
    int64_t overlap = 0;
    if (MatchStart(r->min, &v, &stride)) {
      auto extent = AsConstInt(r->extent);
      if (!extent) return false;
      overlap = *extent - stride;
      if (overlap <= 0) v = nullptr;
    } else if (!AsConstInt(r->min)) {
      return false;
    }
    vars.push_back(v);
    overlaps.push_back(overlap);
  }
  int axis = -1;
  for (const StmtSRef& loop : GetLoopsAbove(state, block_sref.get())) {
    for (size_t d = 0; d < vars.size(); ++d) {
      if (vars[d] && vars[d].get() == loop->loop()->loop_var.get()) {
        axis = static_cast<int>(d);
        break;
      }
    }
    if (axis != -1) break;
  }
  if (axis == -1) return false;
  const Buffer& b = region->buffer;
  std::vector<Expr> shape = b->shape;
  shape[axis] = region->region[axis]->extent;
  info->old_buffer = b;
  info->new_buffer = BufferNode::Make(b->data, b->dtype, shape, b->strides, b->elem_offset,
                                      b->name, b->data_alignment, b->offset_factor, b->span);
  info->axis = axis;
  info->extent = region->region[axis]->extent;
  info->overlaps = overlaps;
  info->iter_vars = vars;
  return true;
}

class RollingRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  RollingRewriter(const BlockNode* root, const RollingInfo& info) : root_(root), info_(info) {}
  BlockReuse reuse;

  std::vector<Expr> Indices(const std::vector<Expr>& indices) const {
    std::vector<Expr> out = indices;
    Expr& e = out[info_.axis];
    e = FloorModNode::Make(e, CastTo(e->dtype, info_.extent));
    return out;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer != info_.old_buffer) return s;
    rewrite_predicate_ = true;
    return BufferStoreNode::Make(info_.new_buffer, store->value, Indices(store->indices),
                                 store->predicate, store->span);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer != info_.old_buffer) return e;
    return BufferLoadNode::Make(info_.new_buffer, Indices(load->indices), load->predicate,
                                load->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    Block block = CopyBlock(AsPtr<BlockNode>(s));
    if (op == root_) {
      for (Buffer& b : block->alloc_buffers) {
        if (b == info_.old_buffer) b = info_.new_buffer;
      }
    } else {
      if (info_.axis < static_cast<int>(block->iter_vars.size())) {
        // Every iteration of the rolling axis depends on the previous ones: an opaque iterator
        // keeps later passes from compacting the loops inside it.
        IterVar& iv = block->iter_vars[info_.axis];
        iv = IterVarNode::Make(iv->dom, iv->var, IterVarType::kOpaque, iv->thread_tag, iv->span);
      }
      auto [reads, writes] = InferBlockAccessRegions(block.get());
      auto inferred = [&](const std::vector<BufferRegion>& regions) -> BufferRegion {
        for (const BufferRegion& r : regions) {
          if (r->buffer == info_.new_buffer) return r;
        }
        return nullptr;
      };
      auto rewrite = [&](std::vector<BufferRegion>& regions, const BufferRegion& by) {
        for (BufferRegion& r : regions) {
          if (r->buffer == info_.old_buffer) {
            r = by ? by
                   : BufferRegionNode::Make(info_.new_buffer, r->region, r->span);
          }
        }
      };
      rewrite(block->reads, inferred(reads));
      rewrite(block->writes, inferred(writes));
    }
    reuse[op] = block;
    return block;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    if (!rewrite_predicate_) return s;
    rewrite_predicate_ = false;
    auto* realize = AsPtr<BlockRealizeNode>(s);
    Expr condition = realize->predicate;
    arith::Analyzer ana;
    for (size_t d = 0; d < info_.iter_vars.size(); ++d) {
      const Var& v = info_.iter_vars[d];
      if (!v || info_.overlaps[d] <= 0 || d >= op->iter_values.size()) continue;
      Expr start = ana.Simplify(Substitute(op->iter_values[d], VarMap{{v.get(), IntConst(v->dtype, 0)}}));
      Expr keep = OrNode::Make(LTNode::Make(v, IntConst(v->dtype, 1)),
                               GENode::Make(start, IntConst(start->dtype, info_.overlaps[d])));
      condition = ana.Simplify(AndNode::Make(condition, keep));
    }
    return BlockRealizeNode::Make(realize->iter_values, condition, realize->block, realize->span);
  }

 private:
  const BlockNode* root_;
  const RollingInfo& info_;
  bool rewrite_predicate_ = false;
};

}  // namespace

void RollingBuffer(ScheduleState& state, const StmtSRef& block_sref, int write_buffer_index) {
  const BlockNode* block = BlockOf(block_sref);
  if (write_buffer_index < 0 || static_cast<size_t>(write_buffer_index) >= block->writes.size()) {
    Fail("the write buffer index is out of range",
         "the write buffer index " + std::to_string(write_buffer_index) +
             " is out of range: the block {0} has " + std::to_string(block->writes.size()) +
             " write buffers",
         {block_sref->stmt});
  }
  const BufferRegion& region = block->writes[write_buffer_index];
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("The root block cannot be a rolling buffer's producer", "", {block_sref->stmt});
  CheckNotOutputBlock(state, block_sref);
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  for (const Dependency& dep : scope.deps) {
    if ((dep.src == block_sref || dep.dst == block_sref) && dep.kind != DepKind::kRAW) {
      Fail("rolling_buffer: the block has a dependency other than read-after-write",
           "rolling_buffer accepts only read-after-write dependencies on the block {0}",
           {block_sref->stmt});
    }
  }
  // The loops between the block and the LCA of it and its consumers are relaxed.
  std::vector<StmtSRef> consumers = scope.Consumers(block_sref.get());
  const StmtSRefNode* lca = block_sref.get();
  if (!consumers.empty()) {
    std::vector<const StmtSRefNode*> nodes = {block_sref.get()};
    for (const StmtSRef& c : consumers) nodes.push_back(c.get());
    lca = LowestCommonAncestor(nodes);
  }
  if (!lca || !lca->loop()) {
    Fail("rolling_buffer: the block and its consumers meet at no loop",
         "rolling_buffer needs a loop above the block {0} and all readers of " +
             region->buffer->name + "; tile the block first so that they share one",
         {block_sref->stmt});
  }
  BufferRegion relaxed = RelaxRegion(RegionInLoops(state, block_sref.get(), region),
                                     LoopDomainsBetween(lca, block_sref.get()));
  RollingInfo info;
  if (!CollectInfo(state, block_sref, relaxed, &info)) {
    std::string text;
    for (size_t d = 0; d < relaxed->region.size(); ++d) {
      text += (d ? ", " : "") + AsScript(relaxed->region[d]->min) + ":" +
              AsScript(Simplify(AddE(relaxed->region[d]->min, relaxed->region[d]->extent)));
    }
    Fail("rolling_buffer: no dimension of the region slides with an outer loop",
         "rolling_buffer found no dimension of " + region->buffer->name + "[" + text +
             "] whose start moves with an outer loop (a start like hh.outer * stride + "
             "hh.inner)",
         {block_sref->stmt});
  }
  RollingRewriter rewriter(scope_root->block(), info);
  Stmt new_root = rewriter.VisitStmt(scope_root->stmt);
  state.Replace(scope_root.get(), scope_root->stmt.get(), new_root, rewriter.reuse);
}

}  // namespace schedule
}  // namespace tessera
