#include "known_buffer_values.h"

#include <unordered_set>

#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace transform {
namespace {

constexpr int kMaxLanes = 64;

bool Mentions(const KnownBufferValues::Fact& f, const VarNode* var) {
  auto uses = [var](const Expr& e) { return e && UsesVar(e, var); };
  if (uses(f.cond) || uses(f.value)) return true;
  for (const Expr& p : f.point) {
    if (uses(p)) return true;
  }
  return false;
}

void SplitAnd(const Expr& e, std::vector<Expr>* out) {
  if (auto* a = AsPtr<AndNode>(e)) {
    SplitAnd(a->a, out);
    SplitAnd(a->b, out);
  } else {
    out->push_back(e);
  }
}

void SplitOr(const Expr& e, std::vector<Expr>* out) {
  if (auto* o = AsPtr<OrNode>(e)) {
    SplitOr(o->a, out);
    SplitOr(o->b, out);
  } else {
    out->push_back(e);
  }
}

bool IsScalarLoad(const BufferLoadNode* load) {
  if (!load || load->predicate || !load->dtype.is_scalar()) return false;
  for (const Expr& i : load->indices) {
    if (!i->dtype.is_scalar() || KnownBufferValues::ReadsBuffer(i)) return false;
  }
  return true;
}

std::vector<Var> MakeAxes(const std::vector<Expr>& indices) {
  std::vector<Var> axes;
  for (size_t k = 0; k < indices.size(); ++k) {
    axes.push_back(VarNode::Make("axis" + std::to_string(k), indices[k]->dtype.element_of()));
  }
  return axes;
}

VarMap AxesTo(const KnownBufferValues::Fact& f, const std::vector<Expr>& indices) {
  VarMap m;
  for (size_t k = 0; k < f.axes.size(); ++k) m[f.axes[k].get()] = indices[k];
  return m;
}

class LoadSubstituter : public ExprMutator {
 public:
  explicit LoadSubstituter(const KnownBufferValues* known) : known_(known) {}
  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load) {
      if (Expr v = known_->Lookup(load)) return v;
    }
    return e;
  }

 private:
  const KnownBufferValues* known_;
};

}  // namespace

bool KnownBufferValues::ReadsBuffer(const Expr& e) {
  bool reads = false;
  PostOrderVisit(e, [&reads](const ObjectRef& n) {
    if (AsPtr<BufferLoadNode>(n)) reads = true;
    if (auto* call = AsPtr<CallNode>(n)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure) reads = true;
    }
  });
  return reads;
}

namespace {
bool CallMayWrite(const CallNode* call) {
  if (call->is_op("tir.assume")) return false;
  auto* op = AsPtr<OpNode>(call->op);
  return !op || op->effect > CallEffect::kReadState;
}
}  // namespace

bool KnownBufferValues::MayWriteMemory(const Expr& e) {
  bool writes = false;
  PostOrderVisit(e, [&writes](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n)) writes = writes || CallMayWrite(call);
  });
  return writes;
}

Expr KnownBufferValues::Lookup(const BufferLoadNode* load) const {
  if (!IsScalarLoad(load)) return nullptr;
  for (auto it = facts_.rbegin(); it != facts_.rend(); ++it) {
    const Fact& f = **it;
    if (f.buffer != load->buffer || f.axes.size() != load->indices.size()) continue;
    bool holds = true;
    for (size_t k = 0; k < f.point.size() && holds; ++k) {
      if (f.point[k]) holds = ana_->CanProveEqual(load->indices[k], f.point[k]);
    }
    VarMap m = AxesTo(f, load->indices);
    if (holds && f.cond) holds = ana_->CanProve(Substitute(f.cond, m));
    if (holds) return CastTo(load->dtype, Substitute(f.value, m));
  }
  return nullptr;
}

Expr KnownBufferValues::SubstituteLoads(const Expr& e) const {
  if (facts_.empty() || !ReadsBuffer(e)) return e;
  return LoadSubstituter(this).VisitExpr(e);
}

bool KnownBufferValues::MayOverlap(const Fact& f, const std::vector<Expr>& indices) const {
  for (size_t k = 0; k < f.point.size(); ++k) {
    if (f.point[k] && ana_->CanProve(NENode::Make(indices[k], f.point[k]))) return false;
  }
  if (f.cond && ana_->CanProve(arith::NegateCondition(Substitute(f.cond, AxesTo(f, indices))))) {
    return false;
  }
  return true;
}

void KnownBufferValues::Store(const BufferStoreNode* store) {
  const Buffer& buf = store->buffer;
  // The value it leaves, computed with the facts from before the store.
  Expr value = store->predicate ? nullptr : ana_->Simplify(SubstituteLoads(store->value));
  // The element indices it writes: one tuple per lane of a Ramp in the last dimension.
  std::vector<std::vector<Expr>> lanes;
  bool known_lanes = !store->indices.empty();
  for (size_t k = 0; k + 1 < store->indices.size() && known_lanes; ++k) {
    known_lanes = store->indices[k]->dtype.is_scalar();
  }
  const RampNode* ramp = nullptr;
  if (known_lanes) {
    const Expr& last = store->indices.back();
    ramp = AsPtr<RampNode>(last);
    if (last->dtype.is_scalar()) {
      lanes.push_back(store->indices);
    } else if (ramp && ramp->lanes <= kMaxLanes) {
      for (int l = 0; l < ramp->lanes; ++l) {
        std::vector<Expr> idx = store->indices;
        idx.back() =
            ana_->Simplify(AddE(ramp->base, MulE(ramp->stride, IntConst(ramp->stride->dtype, l))));
        lanes.push_back(idx);
      }
    } else {
      known_lanes = false;
    }
  }
  State kept;
  for (const FactPtr& f : facts_) {
    if (f->buffer->data != buf->data) {
      kept.push_back(f);
      continue;
    }
    bool overlap = !known_lanes || f->buffer != buf;
    std::vector<size_t> overlapping;
    for (size_t l = 0; l < lanes.size() && !(!known_lanes || f->buffer != buf); ++l) {
      if (MayOverlap(*f, lanes[l])) overlapping.push_back(l);
    }
    overlap = overlap || !overlapping.empty();
    if (!overlap) {
      kept.push_back(f);
      continue;
    }
    // A fact over a region (no fixed index) keeps the elements other than those written.
    bool region = known_lanes && f->buffer == buf;
    for (const Expr& p : f->point) region = region && !p;
    for (const Expr& i : store->indices) region = region && !ReadsBuffer(i);
    if (!region || overlapping.size() > 4) continue;
    auto g = std::make_shared<Fact>(*f);
    for (size_t l : overlapping) {
      Expr differs;
      for (size_t k = 0; k < g->axes.size(); ++k) {
        Expr ne = NENode::Make(g->axes[k], CastTo(g->axes[k]->dtype, lanes[l][k]));
        differs = differs ? Expr(OrNode::Make(differs, ne)) : ne;
      }
      g->cond = AndE(g->cond, differs);
    }
    kept.push_back(g);
  }
  facts_ = std::move(kept);
  if (!value || ReadsBuffer(value) || !known_lanes) return;
  for (const Expr& i : store->indices) {
    if (ReadsBuffer(i)) return;
  }
  auto fact = std::make_shared<Fact>();
  fact->buffer = buf;
  fact->axes = MakeAxes(store->indices);
  if (store->indices.back()->dtype.is_scalar() && value->dtype.is_scalar()) {
    fact->point = store->indices;
    fact->value = value;
  } else if (ramp && IsConstInt(ramp->stride, 1)) {
    // buffer[..., x] for base <= x < base + lanes holds lane x - base of the value.
    const Var& x = fact->axes.back();
    fact->point = store->indices;
    fact->point.back() = nullptr;
    Expr lane = SubE(x, ramp->base);
    if (auto* b = AsPtr<BroadcastNode>(value)) {
      fact->value = b->value;
    } else if (auto* r = AsPtr<RampNode>(value)) {
      fact->value = AddE(r->base, MulE(r->stride, CastTo(r->stride->dtype, lane)));
    } else {
      return;
    }
    fact->cond = AndNode::Make(LENode::Make(ramp->base, x),
                               LTNode::Make(x, AddE(ramp->base, IntConst(x->dtype, ramp->lanes))));
  } else {
    return;
  }
  facts_.push_back(fact);
}

void KnownBufferValues::Assume(const Expr& cond) {
  std::vector<Expr> conjuncts;
  SplitAnd(cond, &conjuncts);
  for (const Expr& c : conjuncts) {
    std::vector<Expr> terms;
    SplitOr(c, &terms);
    const BufferLoadNode* load = nullptr;
    Expr value, guard;
    bool usable = true;
    for (const Expr& t : terms) {
      if (!ReadsBuffer(t)) {
        guard = AndE(guard, arith::NegateCondition(t));
        continue;
      }
      auto* eq = AsPtr<EQNode>(t);
      const BufferLoadNode* l = eq ? AsPtr<BufferLoadNode>(eq->a) : nullptr;
      Expr v = eq ? eq->b : nullptr;
      if (eq && !l) {
        l = AsPtr<BufferLoadNode>(eq->b);
        v = eq->a;
      }
      if (load || !IsScalarLoad(l) || ReadsBuffer(v)) {
        usable = false;
        break;
      }
      load = l;
      value = v;
    }
    if (!usable || !load) continue;
    auto fact = std::make_shared<Fact>();
    fact->buffer = load->buffer;
    fact->axes = MakeAxes(load->indices);
    fact->point = load->indices;
    fact->cond = guard;
    fact->value = value;
    facts_.push_back(fact);
  }
}

void KnownBufferValues::Merge(const State& then_end, const State& else_end, const Expr& cond) {
  std::unordered_set<const Fact*> in_then, in_else;
  for (const FactPtr& f : then_end) in_then.insert(f.get());
  for (const FactPtr& f : else_end) in_else.insert(f.get());
  bool guardable = !ReadsBuffer(cond);
  State merged;
  auto add_guarded = [&](const FactPtr& f, const Expr& guard) {
    auto g = std::make_shared<Fact>(*f);
    g->cond = AndE(guard, f->cond);
    merged.push_back(g);
  };
  for (const FactPtr& f : then_end) {
    if (in_else.count(f.get())) {
      merged.push_back(f);
    } else if (guardable) {
      add_guarded(f, cond);
    }
  }
  if (guardable) {
    Expr negated = arith::NegateCondition(cond);
    for (const FactPtr& f : else_end) {
      if (!in_then.count(f.get())) add_guarded(f, negated);
    }
  }
  facts_ = std::move(merged);
}

bool KnownBufferValues::ElementWise(const Stmt& body, const VarNode* loop_var,
                                    const VarNode* data) {
  const Buffer* first_buffer = nullptr;
  const std::vector<Expr>* first = nullptr;
  bool ok = true;
  auto check = [&](const Buffer& b, const std::vector<Expr>& indices) {
    if (b->data.get() != data || !ok) return;
    if (!first) {
      first_buffer = &b;
      first = &indices;
      bool has_var = false;
      for (const Expr& i : indices) has_var = has_var || i.get() == loop_var;
      ok = has_var;
      return;
    }
    ok = b == *first_buffer && indices.size() == first->size();
    for (size_t k = 0; k < indices.size() && ok; ++k) {
      ok = StructuralEqual(indices[k], (*first)[k]);
    }
  };
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (auto* l = AsPtr<BufferLoadNode>(n)) check(l->buffer, l->indices);
    if (auto* s = AsPtr<BufferStoreNode>(n)) check(s->buffer, s->indices);
  });
  return ok;
}

namespace {

/*! \brief The buffers a statement stores to, and whether it holds anything the walk does not
 *  follow (a write through a call, a block, a while loop). */
struct Writes {
  std::unordered_set<const VarNode*> data;
  bool opaque = false;
};

Writes CollectWrites(const Stmt& body) {
  Writes w;
  PostOrderVisit(body, [&w](const ObjectRef& n) {
    if (auto* s = AsPtr<BufferStoreNode>(n)) w.data.insert(s->buffer->data.get());
    if (AsPtr<BlockNode>(n) || AsPtr<BlockRealizeNode>(n) || AsPtr<WhileNode>(n) ||
        AsPtr<BufferRealizeNode>(n) || AsPtr<AllocateConstNode>(n)) {
      w.opaque = true;
    }
    if (auto* call = AsPtr<CallNode>(n)) w.opaque = w.opaque || CallMayWrite(call);
  });
  return w;
}

}  // namespace

KnownBufferValues::State KnownBufferValues::EnterLoop(const Var& loop_var, const Stmt& body) {
  Writes w = CollectWrites(body);
  if (w.opaque) {
    facts_.clear();
    return facts_;
  }
  State kept;
  for (const FactPtr& f : facts_) {
    const VarNode* data = f->buffer->data.get();
    if (!w.data.count(data) || ElementWise(body, loop_var.get(), data)) kept.push_back(f);
  }
  facts_ = std::move(kept);
  return facts_;
}

void KnownBufferValues::ExitLoop(const Var& loop_var, const Expr& min, const Expr& extent,
                                 const Stmt& body, const State& entry) {
  std::unordered_set<const Fact*> old;
  for (const FactPtr& f : entry) old.insert(f.get());
  Writes w = CollectWrites(body);
  const VarNode* v = loop_var.get();
  State out;
  for (const FactPtr& f : facts_) {
    if (old.count(f.get())) {
      out.push_back(f);
      continue;
    }
    const VarNode* data = f->buffer->data.get();
    if (w.opaque || (w.data.count(data) && !ElementWise(body, v, data))) continue;
    if (!Mentions(*f, v)) {
      // Holds after any iteration; whether one ran is what the extent says.
      if (!w.data.count(data) && ana_->CanProveGreaterEqual(extent, 1)) out.push_back(f);
      continue;
    }
    // Element-wise: iteration `v` set buffer[..., v, ...]; no other iteration touches it.
    size_t k = 0;
    while (k < f->point.size() && !(f->point[k] && f->point[k].get() == v)) ++k;
    if (k == f->point.size()) continue;
    auto g = std::make_shared<Fact>(*f);
    const Var& x = g->axes[k];
    VarMap m{{v, CastTo(v->dtype, x)}};
    g->point[k] = nullptr;
    for (Expr& p : g->point) {
      if (p) p = Substitute(p, m);
    }
    Expr x_min = CastTo(x->dtype, min);
    Expr range = AndNode::Make(LENode::Make(x_min, x),
                               LTNode::Make(x, AddE(x_min, CastTo(x->dtype, extent))));
    g->cond = AndE(g->cond ? Substitute(g->cond, m) : nullptr, range);
    g->value = Substitute(g->value, m);
    out.push_back(g);
  }
  facts_ = std::move(out);
}

void KnownBufferValues::ForgetVar(const VarNode* var) {
  State kept;
  for (const FactPtr& f : facts_) {
    if (!Mentions(*f, var)) kept.push_back(f);
  }
  facts_ = std::move(kept);
}

}  // namespace transform
}  // namespace tessera
