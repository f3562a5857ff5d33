// cache_index: precompute the index expressions a block evaluates into buffers, one loop nest
// per expression before the block, and read them from there.
//
// Which expressions: the largest pure sub-expressions of the block's stores (no buffer load, no
// call with an effect, more than one node, no ramp or broadcast) that are evaluated at least
// `cse_thresh` times, counting an expression as evaluated once more each time a larger
// expression holding it is not itself cached. Expressions equal after simplification count as
// one. The cached ones come in decreasing size (number of nodes), ties in the order in which
// the store's value first evaluates them.
#include <algorithm>

#include "../utils.h"
#include "tessera/ir/op.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief The number of expression nodes in `e` (TVM's expression complexity). */
size_t Complexity(const Expr& e) {
  size_t n = 0;
  PostOrderVisit(e, [&n](const ObjectRef& node) {
    if (IsExprKind(node->kind)) ++n;
  });
  return n;
}

/*! \brief Whether evaluating `e` reads memory or has an effect. */
bool ReadsOrWrites(const Expr& e) {
  bool effect = false;
  PostOrderVisit(e, [&effect](const ObjectRef& node) {
    if (AsPtr<BufferLoadNode>(node)) {
      effect = true;
    } else if (auto* call = AsPtr<CallNode>(node)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure) effect = true;
    }
  });
  return effect;
}

bool Eligible(const Expr& e) {
  return !AsPtr<RampNode>(e) && !AsPtr<BroadcastNode>(e) && Complexity(e) > 1 && !ReadsOrWrites(e);
}

/*! \brief The direct children of an expression node, in evaluation order. */
std::vector<Expr> Children(const Expr& e) {
  std::vector<Expr> out;
  class Collector : public ExprVisitor {
   public:
    explicit Collector(std::vector<Expr>* out) : out_(out) {}
    void VisitExpr(const Expr& x) override {
      if (depth_ == 1) {
        out_->push_back(x);
        return;
      }
      ++depth_;
      ExprVisitor::VisitExpr(x);
      --depth_;
    }

   private:
    std::vector<Expr>* out_;
    int depth_ = 0;
  };
  Collector collector(&out);
  collector.VisitExpr(e);
  return out;
}

/*! \brief A candidate computation: its first seen form, simplified form and count. */
struct Candidate {
  Expr expr, normal;
  size_t size;
  size_t count;
};

class CandidateTable {
 public:
  /*! \brief Adds `count` to the class of `e`, inserting it (sorted by decreasing size, after
   *  the equal sizes) when new. */
  void Add(const Expr& e, size_t count) {
    Expr normal = Simplify(e);
    for (Candidate& c : items) {
      if (StructuralEqual(c.normal, normal)) {
        c.count += count;
        return;
      }
    }
    size_t size = Complexity(e);
    auto pos = std::find_if(items.begin(), items.end(),
                            [size](const Candidate& c) { return c.size < size; });
    items.insert(pos, Candidate{e, normal, size, count});
  }
  std::vector<Candidate> items;
};

/*! \brief The largest eligible sub-expressions of `e` (e itself if eligible). */
void LargestEligible(const Expr& e, std::vector<Expr>* out) {
  if (AsConstInt(e) || AsPtr<FloatImmNode>(e) || AsPtr<StringImmNode>(e) || AsPtr<VarNode>(e))
    return;
  if (Eligible(e)) {
    out->push_back(e);
    return;
  }
  for (const Expr& c : Children(e)) LargestEligible(c, out);
}

/*! \brief The largest eligible strict sub-expressions of `e`. */
std::vector<Expr> DirectSubexpressions(const Expr& e) {
  std::vector<Expr> out;
  for (const Expr& c : Children(e)) LargestEligible(c, &out);
  return out;
}

/*! \brief The expressions to cache for one store, in the order of the cache buffers. */
void CollectForStore(const BufferStoreNode* store, size_t thresh, std::vector<Expr>* exprs,
                     std::vector<Expr>* normals) {
  CandidateTable table;
  std::vector<Expr> found;
  LargestEligible(store->value, &found);
  for (const Expr& i : store->indices) LargestEligible(i, &found);
  // Seen in the order of evaluation; the table sorts them by size.
  for (const Expr& e : found) table.Add(e, 1);
  // A candidate seen fewer than `thresh` times is not cached: what it evaluates is evaluated
  // as often as it is. Larger ones come first, so a count is complete when it is looked at.
  for (size_t i = 0; i < table.items.size(); ++i) {
    if (table.items[i].count >= thresh) continue;
    size_t count = table.items[i].count;
    for (const Expr& sub : DirectSubexpressions(table.items[i].expr)) table.Add(sub, count);
  }
  std::vector<const Candidate*> chosen;
  for (const Candidate& c : table.items) {
    if (c.count >= thresh) chosen.push_back(&c);
  }
  if (chosen.empty()) return;
  // In the order in which the value evaluates them (children first), then by decreasing size.
  std::vector<Expr> ordered, ordered_normals;
  PostOrderVisit(store->value, [&](const ObjectRef& node) {
    if (!IsExprKind(node->kind)) return;
    Expr e = As<ExprNode>(node);
    if (AsConstInt(e) || AsPtr<VarNode>(e) || AsPtr<FloatImmNode>(e)) return;
    Expr normal;
    for (const Candidate* c : chosen) {
      if (!normal) normal = Simplify(e);
      if (!StructuralEqual(normal, c->normal)) continue;
      bool known = false;
      for (const Expr& n : ordered_normals) known = known || StructuralEqual(n, c->normal);
      if (!known) {
        ordered.push_back(c->expr);
        ordered_normals.push_back(c->normal);
      }
    }
  });
  for (size_t i = 0; i < ordered.size(); ++i) {
    bool known = false;
    for (const Expr& n : *normals) known = known || StructuralEqual(n, ordered_normals[i]);
    if (known) continue;
    exprs->push_back(ordered[i]);
    normals->push_back(ordered_normals[i]);
  }
  std::vector<size_t> order(exprs->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return Complexity((*exprs)[a]) > Complexity((*exprs)[b]);
  });
  std::vector<Expr> e2, n2;
  for (size_t i : order) {
    e2.push_back((*exprs)[i]);
    n2.push_back((*normals)[i]);
  }
  *exprs = std::move(e2);
  *normals = std::move(n2);
}

/*! \brief The stores of the block (its init and body), not those of nested blocks. */
std::vector<const BufferStoreNode*> BlockStores(const BlockNode* block) {
  std::vector<const BufferStoreNode*> out;
  class Finder : public StmtVisitor {
   public:
    explicit Finder(std::vector<const BufferStoreNode*>* out) : out_(out) {}
    void VisitStmt_(const BufferStoreNode* op) override { out_->push_back(op); }
    void VisitStmt_(const BlockNode* op) override {}

   private:
    std::vector<const BufferStoreNode*>* out_;
  };
  Finder finder(&out);
  if (block->init) finder.VisitStmt(block->init);
  finder.VisitStmt(block->body);
  return out;
}

/*! \brief Replaces the sub-expressions equal (after simplification) to `normal` by `load`,
 *  the outermost first. */
class ExprReplacer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  ExprReplacer(Expr normal, Expr load) : normal_(std::move(normal)), load_(std::move(load)) {}
  Expr VisitExpr(const Expr& e) override {
    if (!AsConstInt(e) && !AsPtr<VarNode>(e) && !AsPtr<FloatImmNode>(e) &&
        e->dtype == normal_->dtype && StructuralEqual(Simplify(e), normal_)) {
      return load_;
    }
    return StmtExprMutator::VisitExpr(e);
  }
  Stmt VisitStmt_(const BlockNode* op) override { return GetRef(op); }  // nested blocks stay

 private:
  Expr normal_, load_;
};

/*! \brief The store of a block body rewritten to read the cached expressions. */
class StoreRewriter : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  StoreRewriter(const std::vector<Expr>& normals, const std::vector<Expr>& loads)
      : normals_(normals), loads_(loads) {}
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = GetRef(op);
    for (size_t i = 0; i < normals_.size(); ++i) {
      ExprReplacer replacer(normals_[i], loads_[i]);
      s = replacer.VisitStmt(s);
    }
    return s;
  }
  Stmt VisitStmt_(const BlockNode* op) override { return GetRef(op); }

 private:
  const std::vector<Expr>& normals_;
  const std::vector<Expr>& loads_;
};

/*! \brief The variables of `e` in the order it first evaluates them. */
std::vector<Var> VarsOf(const Expr& e) {
  std::vector<Var> out;
  PostOrderVisit(e, [&out](const ObjectRef& node) {
    auto* v = AsPtr<VarNode>(node);
    if (!v) return;
    for (const Var& o : out) {
      if (o.get() == v) return;
    }
    out.push_back(GetRef(v));
  });
  return out;
}

}  // namespace

std::vector<StmtSRef> CacheIndex(ScheduleState& state, const StmtSRef& block_sref,
                                 const std::string& storage_scope, int cse_thresh) {
  const BlockNode* block = BlockOf(block_sref);
  if (cse_thresh < 0) {
    Fail("cse_thresh must be 0 or more",
         "cse_thresh must be 0 or more, but it is " + std::to_string(cse_thresh));
  }
  if (!IsValidScope(storage_scope)) {
    Fail("Invalid storage scope '" + storage_scope + "'",
         "Invalid storage scope '" + storage_scope +
             "': expected \"global\", \"shared\", \"shared.dyn\", "
             "\"local\", \"warp\", \"lsram\", \"gsram\", "
             "or global/shared/local/warp with a tag (\"global.vtcm\")");
  }
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("The root block has no scope to cache in", "", {block_sref->stmt});
  BlockRealize realize = GetBlockRealize(state, block_sref.get());

  // Step 1. The expressions to cache. Only those over the block's iterators can be computed
  // in a loop nest of their own.
  std::unordered_map<const VarNode*, Expr> binding;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    binding[block->iter_vars[i]->var.get()] = realize->iter_values[i];
  std::vector<Expr> exprs, normals;
  for (const BufferStoreNode* store : BlockStores(block))
    CollectForStore(store, static_cast<size_t>(cse_thresh), &exprs, &normals);
  {
    std::vector<Expr> e2, n2;
    for (size_t i = 0; i < exprs.size(); ++i) {
      bool over_iters = true;
      PostOrderVisit(exprs[i], [&](const ObjectRef& node) {
        if (auto* v = AsPtr<VarNode>(node)) over_iters = over_iters && binding.count(v);
      });
      if (!over_iters) continue;
      e2.push_back(exprs[i]);
      n2.push_back(normals[i]);
    }
    exprs = std::move(e2);
    normals = std::move(n2);
  }
  if (exprs.empty()) return {};

  // Step 2. One buffer and one loop nest per expression.
  DomMap loop_dom = LoopDomainsBetween(scope_root.get(), block_sref.get());
  arith::Analyzer ana;
  for (const auto& [var, range] : loop_dom) ana.Bind(GetRef(var), range);
  std::vector<Buffer> buffers;
  std::vector<Stmt> stages;
  std::vector<Block> stage_blocks;
  std::vector<Expr> loads;
  for (size_t k = 0; k < exprs.size(); ++k) {
    const Expr& expr = exprs[k];
    std::vector<Var> block_vars = VarsOf(expr);
    // The loops the bindings of those iterators use, in order.
    std::vector<Var> loop_vars;
    for (const Var& bv : block_vars) {
      for (const Var& lv : VarsOf(binding.at(bv.get()))) {
        bool known = false;
        for (const Var& o : loop_vars) known = known || o == lv;
        if (!known && loop_dom.count(lv.get())) loop_vars.push_back(lv);
      }
    }
    std::vector<Expr> shape;
    for (const Var& bv : block_vars) {
      const Expr& value = binding.at(bv.get());
      auto bounds = EvalBounds(value, loop_dom);
      Expr extent;
      if (bounds) extent = Simplify(AddE(bounds->second, IntConst(value->dtype, 1)));
      if (!extent || !AsConstInt(extent)) {
        arith::ConstIntBound b = ana.GetConstIntBound(value);
        if (b.max_value != arith::ConstIntBound::kPosInf)
          extent = IntConst(value->dtype, b.max_value + 1);
      }
      if (!extent) {
        Fail("The index expression's range cannot be bounded",
             "cache_index: the range of the iterator " + bv->name + " of the block {0} (bound to " +
                 AsScript(value) + ") cannot be bounded",
             {block_sref->stmt});
      }
      shape.push_back(extent);
    }
    std::string name = "index_var_" + std::to_string(k);
    Var data = VarNode::MakePointer(name, expr->dtype, storage_scope);
    Buffer buffer = BufferNode::Make(data, expr->dtype, shape, {Int32(1)}, Int32(0), name, 64, 1);
    buffers.push_back(buffer);
    // Loops ax0, ax1, ... replace the loops of the bindings.
    VarMap loop_map;
    std::vector<For> loops;
    for (size_t j = 0; j < loop_vars.size(); ++j) {
      const Range& r = loop_dom.at(loop_vars[j].get());
      arith::ConstIntBound b = ana.GetConstIntBound(loop_vars[j]);
      DataType t = loop_vars[j]->dtype;
      if (b.min_value >= INT32_MIN && b.max_value <= INT32_MAX) t = DataType::Int(32);
      Var ax = NewVar("ax" + std::to_string(j), t);
      loop_map[loop_vars[j].get()] = AddE(CastTo(loop_vars[j]->dtype, ax), r->min);
      loops.push_back(ForNode::Make(ax, IntConst(t, 0), Simplify(CastTo(t, r->extent)),
                                    ForKind::kSerial, Evaluate0()));
    }
    std::vector<IterVar> iters;
    std::vector<Expr> values, indices;
    std::vector<Range> region;
    VarMap iter_map;
    for (size_t i = 0; i < block_vars.size(); ++i) {
      const Var& bv = block_vars[i];
      Var v = NewVar("v" + std::to_string(i), bv->dtype);
      iters.push_back(
          IterVarNode::Make(RangeNode::Make(IntConst(bv->dtype, 0), CastTo(bv->dtype, shape[i])), v,
                            IterVarType::kDataPar));
      values.push_back(Simplify(Substitute(binding.at(bv.get()), loop_map)));
      indices.push_back(v);
      region.push_back(RangeNode::Make(v, IntConst(bv->dtype, 1)));
      iter_map[bv.get()] = v;
    }
    std::string block_name = "index_" + std::to_string(k);
    Block stage_block =
        BlockNode::Make(iters, {}, {BufferRegionNode::Make(buffer, region)}, block_name,
                        BufferStoreNode::Make(buffer, Substitute(expr, iter_map), indices));
    stage_blocks.push_back(stage_block);
    stages.push_back(MakeLoopNest(loops, BlockRealizeNode::Make(values, Bool(true), stage_block)));
    std::vector<Expr> load_indices(block_vars.begin(), block_vars.end());
    loads.push_back(BufferLoadNode::Make(buffer, load_indices));
  }

  // Step 3. The block reads the caches; the stages go right before the statement of the scope
  // that holds it, the buffers into the scope's allocations.
  Block new_block = CopyBlock(block);
  StoreRewriter rewriter(normals, loads);
  new_block->body = rewriter.VisitStmt(block->body);
  if (block->init) new_block->init = rewriter.VisitStmt(block->init);
  StmtEditor editor;
  editor.replace[realize.get()] =
      BlockRealizeNode::Make(realize->iter_values, realize->predicate, new_block, realize->span);
  editor.reuse[block] = new_block;
  int64_t position = ChildIndex(scope_root.get(), block_sref.get());
  for (size_t k = 0; k < stages.size(); ++k)
    editor.insert[scope_root->stmt.get()].emplace_back(position, stages[k]);
  const BlockNode* old_root = scope_root->block();
  Block root = CopyBlock(As<BlockNode>(editor.VisitStmt(scope_root->stmt)).get());
  for (const Buffer& b : buffers) root->alloc_buffers.push_back(b);
  BlockReuse reuse = editor.reuse;
  reuse[old_root] = root;
  state.Replace(scope_root.get(), old_root, root, reuse);
  std::vector<StmtSRef> out;
  for (const Block& b : stage_blocks) out.push_back(state.GetSRef(b.get()));
  return out;
}

}  // namespace schedule
}  // namespace tessera
