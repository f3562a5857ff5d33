// fuse_reduction_epilogue: an epilogue (bias add, bias + ReLU, clipping) of a reduction's result
// moves into the reduction: its init starts from the epilogue and the reduction writes the
// epilogue's output.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

enum class Epilogue { kBias, kBiasReLU, kClipping };

bool IsZero(const Expr& e) {
  if (auto c = AsConstInt(e)) return *c == 0;
  if (auto* f = AsPtr<FloatImmNode>(e)) return f->value == 0.0;
  return false;
}

Expr Zero(DataType t) {
  if (t.is_float()) return FloatImmNode::Make(t, 0.0);
  return IntConst(t, 0);
}

struct Pattern {
  Epilogue kind = Epilogue::kBias;
  Expr addend, lower, upper;
};

/*! \brief Matches the epilogue's value against the supported forms over a load of `buffer`. */
bool MatchEpilogue(const Expr& value, const Buffer& buffer, Pattern* p) {
  auto is_target = [&](const Expr& e) {
    auto* load = AsPtr<BufferLoadNode>(e);
    return load && load->buffer == buffer;
  };
  // One operand is the reduction's result: returns the other.
  auto other_of = [&](const Expr& a, const Expr& b, Expr* other) {
    if (is_target(a)) return *other = b, true;
    if (is_target(b)) return *other = a, true;
    return false;
  };
  if (value->kind == NodeKind::kAdd) {
    auto* add = static_cast<const BinaryNode*>(value.get());
    if (is_target(add->a) != is_target(add->b)) {
      p->kind = Epilogue::kBias;
      p->addend = is_target(add->a) ? add->b : add->a;
      return true;
    }
  }
  if (value->kind == NodeKind::kMin) {  // min(max(x, lower), upper)
    auto* mn = static_cast<const BinaryNode*>(value.get());
    for (int side = 0; side < 2; ++side) {
      const Expr& inner = side ? mn->b : mn->a;
      if (inner->kind != NodeKind::kMax) continue;
      auto* mx = static_cast<const BinaryNode*>(inner.get());
      if (other_of(mx->a, mx->b, &p->lower)) {
        p->kind = Epilogue::kClipping;
        p->upper = side ? mn->a : mn->b;
        return true;
      }
      break;
    }
  }
  if (value->kind == NodeKind::kMax) {
    auto* mx = static_cast<const BinaryNode*>(value.get());
    for (int side = 0; side < 2; ++side) {  // max(min(x, upper), lower)
      const Expr& inner = side ? mx->b : mx->a;
      if (inner->kind != NodeKind::kMin) continue;
      auto* mn = static_cast<const BinaryNode*>(inner.get());
      if (other_of(mn->a, mn->b, &p->upper)) {
        p->kind = Epilogue::kClipping;
        p->lower = side ? mx->a : mx->b;
        return true;
      }
      break;
    }
    // max(x + bias, 0) or max(x, 0).
    const Expr* candidate = IsZero(mx->a) ? &mx->b : IsZero(mx->b) ? &mx->a : nullptr;
    if (candidate) {
      if ((*candidate)->kind == NodeKind::kAdd) {
        auto* add = static_cast<const BinaryNode*>(candidate->get());
        if (is_target(add->a) != is_target(add->b)) {
          p->kind = Epilogue::kBiasReLU;
          p->addend = is_target(add->a) ? add->b : add->a;
          return true;
        }
      } else if (is_target(*candidate)) {
        p->kind = Epilogue::kBiasReLU;
        p->addend = Zero((*candidate)->dtype);
        return true;
      }
    }
  }
  return false;
}

int CountLoads(const Expr& e, const Buffer& buffer) {
  int n = 0;
  PostOrderVisit(e, [&](const ObjectRef& node) {
    auto* load = AsPtr<BufferLoadNode>(node);
    if (load && load->buffer == buffer) ++n;
  });
  return n;
}

/*! \brief The reduction's stores to `old` go to `out`, with the epilogue applied per step. */
class ResultRedirect : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  ResultRedirect(const Buffer& old, const Buffer& out, const Pattern& p, const VarMap& vmap)
      : old_(old), out_(out), p_(p), vmap_(vmap) {}
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer != old_) return s;
    Expr value = store->value;
    if (p_.kind == Epilogue::kBiasReLU) {
      value = MaxNode::Make(value, Zero(out_->dtype));
    } else if (p_.kind == Epilogue::kClipping) {
      value = MinNode::Make(MaxNode::Make(value, Substitute(p_.lower, vmap_)),
                            Substitute(p_.upper, vmap_));
    }
    return BufferStoreNode::Make(out_, value, store->indices, store->predicate, store->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer != old_) return e;
    return BufferLoadNode::Make(out_, load->indices, load->predicate, load->span);
  }

 private:
  const Buffer& old_;
  const Buffer& out_;
  const Pattern& p_;
  const VarMap& vmap_;
};

}  // namespace

void FuseReductionEpilogue(ScheduleState& state, const StmtSRef& reduction_sref,
                           const StmtSRef& epilogue_sref) {
  const BlockNode* reduction = BlockOf(reduction_sref);
  const BlockNode* epilogue = BlockOf(epilogue_sref);
  StmtSRef scope_root = GetScopeRoot(state, epilogue_sref.get());
  if (!scope_root) Fail("fuse_reduction_epilogue: the block has no enclosing block");
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  CheckStagePipeline(state, scope_root, scope);
  if (reduction->writes.size() != 1) {
    Fail("the reduction block must write exactly one buffer region",
         "the reduction block {0} must write exactly one buffer region, but it writes " +
             std::to_string(reduction->writes.size()),
         {reduction_sref->stmt});
  }
  Buffer result = reduction->writes[0]->buffer;
  std::string why = WhyNotReduction(state, reduction_sref.get(), scope);
  if (!why.empty()) {
    Fail("fuse_reduction_epilogue needs a reduction block",
         "fuse_reduction_epilogue needs a reduction block, and {0} is not one: " + why,
         {reduction_sref->stmt});
  }
  why = WhyNotComplete(state, epilogue_sref.get(), scope);
  if (!why.empty()) {
    Fail("fuse_reduction_epilogue needs a complete epilogue block",
         "fuse_reduction_epilogue needs a complete epilogue block, and {0} is not one: " + why,
         {epilogue_sref->stmt});
  }
  CheckNotOutputBlock(state, reduction_sref);

  BlockRealize epilogue_realize = GetBlockRealize(state, epilogue_sref.get());
  auto* store = AsPtr<BufferStoreNode>(epilogue->body);
  Pattern pattern;
  if (!IsConstInt(epilogue_realize->predicate, 1) || !store ||
      CountLoads(store->value, result) != 1 || !MatchEpilogue(store->value, result, &pattern)) {
    Fail("the epilogue block is not a bias add, a bias + ReLU or a clipping of the reduction",
         "The epilogue block {0} must be a bias add (`out = x + bias`), a bias + ReLU "
         "(`out = max(x + bias, 0)`) or a clipping (`out = min(max(x, lower), upper)`) of the "
         "reduction's result x",
         {epilogue_sref->stmt});
  }
  // The epilogue's spatial iterators, in order, are the reduction's.
  std::vector<Var> red_vars, epi_vars;
  for (const IterVar& iv : reduction->iter_vars)
    if (iv->iter_type == IterVarType::kDataPar) red_vars.push_back(iv->var);
  for (const IterVar& iv : epilogue->iter_vars)
    if (iv->iter_type == IterVarType::kDataPar) epi_vars.push_back(iv->var);
  if (red_vars.size() != epi_vars.size()) {
    Fail("The reduction and the epilogue have different numbers of spatial iterators",
         "the reduction {0} and the epilogue {1} must have as many spatial iterators as each "
         "other",
         {reduction_sref->stmt, epilogue_sref->stmt});
  }
  VarMap vmap;
  for (size_t i = 0; i < red_vars.size(); ++i) vmap[epi_vars[i].get()] = red_vars[i];
  const Buffer& out = store->buffer;
  std::vector<Expr> out_indices;
  for (const Expr& e : store->indices) out_indices.push_back(Substitute(e, vmap));
  Expr init_value;
  switch (pattern.kind) {
    case Epilogue::kBias:
      init_value = Substitute(pattern.addend, vmap);
      break;
    case Epilogue::kBiasReLU: {
      Expr addend = Substitute(pattern.addend, vmap);
      init_value = MaxNode::Make(addend, Zero(addend->dtype));
      break;
    }
    case Epilogue::kClipping:
      init_value = MinNode::Make(MaxNode::Make(Zero(out->dtype), Substitute(pattern.lower, vmap)),
                                 Substitute(pattern.upper, vmap));
      break;
  }
  Block fused = CopyBlock(reduction);
  fused->init = BufferStoreNode::Make(out, init_value, out_indices);
  fused->body = ResultRedirect(result, out, pattern, vmap).VisitStmt(reduction->body);
  for (BufferRegion& w : fused->writes) {
    if (w->buffer != result) continue;
    for (const BufferRegion& ew : epilogue->writes) {
      if (ew->buffer == out) w = Substitute(BufferRegionNode::Make(out, ew->region), vmap);
    }
  }
  std::vector<BufferRegion> reads;
  if (auto* load = AsPtr<BufferLoadNode>(pattern.addend)) {
    for (const BufferRegion& r : epilogue->reads) {
      if (r->buffer == load->buffer) {
        reads.push_back(Substitute(r, vmap));
        break;
      }
    }
  }
  for (const BufferRegion& r : reduction->reads) {
    if (r->buffer == result) continue;
    bool seen = false;
    for (const BufferRegion& x : reads) seen = seen || x->buffer == r->buffer;
    if (!seen) reads.push_back(r);
  }
  fused->reads = reads;

  BlockRealize reduction_realize = GetBlockRealize(state, reduction_sref.get());
  StmtEditor editor;
  editor.replace[reduction_realize.get()] = BlockRealizeNode::Make(
      reduction_realize->iter_values, reduction_realize->predicate, fused, reduction_realize->span);
  editor.replace[LeafToRemove(state, epilogue_sref)] = nullptr;
  // As in TVM, the allocation of the reduction's buffer stays (other blocks may still use it).
  Stmt new_root = editor.VisitStmt(scope_root->stmt);
  BlockReuse reuse = editor.reuse;
  reuse[reduction] = fused;
  state.Replace(scope_root.get(), scope_root->stmt.get(), new_root, reuse);
}

}  // namespace schedule
}  // namespace tessera
