// Helpers shared by the schedule primitives: expressions, sref navigation, IR editing, intervals.
#include "utils.h"

#include <algorithm>

#include "tessera/ir/block_access.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace schedule {

void Fail(const std::string& fast, const std::string& detail, std::vector<ObjectRef> locs) {
  throw ScheduleError(fast, detail.empty() ? fast : detail, std::move(locs));
}

// ---- expressions ----

Expr IntConst(DataType t, int64_t v) { return IntImmNode::Make(t, v); }

namespace {
DataType Wider(const Expr& a, const Expr& b) {
  return a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
}
}  // namespace

Expr CastTo(DataType t, const Expr& e) {
  if (e->dtype == t) return e;
  if (auto c = AsConstInt(e)) return IntImmNode::Make(t, *c);
  return CastNode::Make(t, e);
}

#define TESSERA_SCHEDULE_BINARY(Fn, Node)          \
  Expr Fn(const Expr& a, const Expr& b) {          \
    DataType t = Wider(a, b);                      \
    return Node::Make(CastTo(t, a), CastTo(t, b)); \
  }
TESSERA_SCHEDULE_BINARY(AddE, AddNode)
TESSERA_SCHEDULE_BINARY(SubE, SubNode)
TESSERA_SCHEDULE_BINARY(MulE, MulNode)
TESSERA_SCHEDULE_BINARY(FloorDivE, FloorDivNode)
TESSERA_SCHEDULE_BINARY(FloorModE, FloorModNode)
#undef TESSERA_SCHEDULE_BINARY

Expr AndE(const Expr& a, const Expr& b) {
  if (!a || IsConstInt(a, 1)) return b;
  if (!b || IsConstInt(b, 1)) return a;
  return AndNode::Make(a, b);
}

Expr Simplify(const Expr& e) {
  arith::Analyzer ana;
  return ana.Simplify(e);
}

void BindLoops(arith::Analyzer* ana, const StmtSRefNode* sref, bool inclusive) {
  for (const StmtSRefNode* p = inclusive ? sref : sref->parent; p; p = p->parent) {
    if (auto* loop = p->loop()) ana->Bind(loop->loop_var, RangeNode::Make(loop->min, loop->extent));
  }
}

namespace {
class BindingSimplifier : public StmtMutator {
 public:
  BindingSimplifier(arith::Analyzer* ana, const VarMap& unit_vars, Expr predicate)
      : ana_(ana), unit_vars_(unit_vars), predicate_(std::move(predicate)) {}
  Stmt VisitStmt_(const ForNode* op) override {
    ana_->Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    return StmtMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    std::vector<Expr> values;
    for (const Expr& v : op->iter_values)
      values.push_back(ana_->Simplify(Substitute(v, unit_vars_)));
    Expr predicate = Substitute(op->predicate, unit_vars_);
    if (predicate_) predicate = AndE(predicate, predicate_);
    predicate = ana_->Simplify(predicate);
    return BlockRealizeNode::Make(values, predicate, op->block, op->span);
  }

 private:
  arith::Analyzer* ana_;
  const VarMap& unit_vars_;
  Expr predicate_;
};
}  // namespace

Stmt SimplifyBindings(const Stmt& s, arith::Analyzer* ana, const VarMap& unit_vars,
                      const Expr& extra_predicate) {
  return BindingSimplifier(ana, unit_vars, extra_predicate).VisitStmt(s);
}

bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  if (!e) return false;
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) found = found || pred(v);
  });
  return found;
}

bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  if (!s) return false;
  bool found = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) found = found || pred(v);
  });
  return found;
}

bool UsesVars(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return UsesVar(e, [&](const VarNode* v) { return vars.count(v) != 0; });
}

namespace {
class Substituter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  explicit Substituter(const VarMap& vmap) : vmap_(vmap) {}
  Expr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  Expr VisitExpr_(const SizeVarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

 private:
  const VarMap& vmap_;
};
}  // namespace

Expr Substitute(const Expr& e, const VarMap& vmap) {
  if (!e || vmap.empty()) return e;
  return Substituter(vmap).VisitExpr(e);
}
Stmt Substitute(const Stmt& s, const VarMap& vmap) {
  if (!s || vmap.empty()) return s;
  return Substituter(vmap).VisitStmt(s);
}
Range Substitute(const Range& r, const VarMap& vmap) {
  Expr m = Substitute(r->min, vmap), e = Substitute(r->extent, vmap);
  if (m == r->min && e == r->extent) return r;
  return RangeNode::Make(m, e, r->span);
}
BufferRegion Substitute(const BufferRegion& r, const VarMap& vmap) {
  std::vector<Range> region;
  bool changed = false;
  for (const Range& range : r->region) {
    region.push_back(Substitute(range, vmap));
    changed = changed || region.back() != range;
  }
  return changed ? BufferRegionNode::Make(r->buffer, region, r->span) : r;
}

// ---- sref navigation ----

const ForNode* LoopOf(const StmtSRef& sref) {
  if (!sref || !sref->stmt) Fail("The loop no longer exists in the IR");
  const ForNode* loop = sref->loop();
  if (!loop) Fail("Expected a loop, but got a block", "Expected a loop, but got {0}", {sref->stmt});
  return loop;
}

const BlockNode* BlockOf(const StmtSRef& sref) {
  if (!sref || !sref->stmt) Fail("The block no longer exists in the IR");
  const BlockNode* block = sref->block();
  if (!block)
    Fail("Expected a block, but got a loop", "Expected a block, but got {0}", {sref->stmt});
  return block;
}

StmtSRef GetScopeRoot(const ScheduleState& state, const StmtSRefNode* sref) {
  for (const StmtSRefNode* p = sref->parent; p; p = p->parent) {
    if (p->block()) return state.GetSRef(p->stmt.get());
  }
  return nullptr;
}

std::vector<StmtSRef> GetLoopsAbove(const ScheduleState& state, const StmtSRefNode* sref) {
  std::vector<StmtSRef> loops;
  for (const StmtSRefNode* p = sref->parent; p && p->loop(); p = p->parent) {
    loops.push_back(state.GetSRef(p->stmt.get()));
  }
  std::reverse(loops.begin(), loops.end());
  return loops;
}

namespace {
class ChildBlockCollector : public StmtVisitor {
 public:
  std::vector<const BlockNode*> blocks;
  void VisitStmt_(const BlockRealizeNode* op) override { blocks.push_back(op->block.get()); }
  void VisitStmt_(const BlockNode* op) override { blocks.push_back(op); }
};
}  // namespace

std::vector<StmtSRef> GetChildBlocks(const ScheduleState& state, const StmtSRefNode* parent) {
  ChildBlockCollector collector;
  collector.VisitStmt(BodyOf(parent));
  std::vector<StmtSRef> out;
  for (const BlockNode* b : collector.blocks) out.push_back(state.GetSRef(b));
  return out;
}

const Stmt& BodyOf(const StmtSRefNode* sref) {
  if (auto* loop = sref->loop()) return loop->body;
  return sref->block()->body;
}

namespace {
class RealizeFinder : public StmtVisitor {
 public:
  explicit RealizeFinder(const BlockNode* block) : block_(block) {}
  BlockRealize found;
  void VisitStmt(const Stmt& s) override {
    if (!found) StmtVisitor::VisitStmt(s);
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    if (op->block.get() == block_) found = GetRef(op);
  }
  void VisitStmt_(const ForNode* op) override {}  // loops hold their own srefs

 private:
  const BlockNode* block_;
};
}  // namespace

BlockRealize GetBlockRealize(const ScheduleState& state, const StmtSRefNode* block_sref) {
  const BlockNode* block = block_sref->block();
  TESSERA_ICHECK(block) << "GetBlockRealize: not a block";
  if (!block_sref->parent) {
    PrimFunc func = state.FuncOf(block_sref);
    auto realize = As<BlockRealizeNode>(func->body);
    TESSERA_ICHECK(realize && realize->block.get() == block) << "GetBlockRealize: no realize";
    return realize;
  }
  RealizeFinder finder(block);
  finder.VisitStmt(BodyOf(block_sref->parent));
  TESSERA_ICHECK(finder.found) << "GetBlockRealize: the block has no BlockRealize";
  return finder.found;
}

const StmtSRefNode* LowestCommonAncestor(const std::vector<const StmtSRefNode*>& nodes) {
  TESSERA_ICHECK(!nodes.empty()) << "LowestCommonAncestor of nothing";
  std::vector<const StmtSRefNode*> chain;
  for (const StmtSRefNode* p = nodes[0]->parent; p; p = p->parent) chain.push_back(p);
  size_t best = 0;  // index into chain of the deepest ancestor common to all
  for (const StmtSRefNode* n : nodes) {
    std::unordered_set<const StmtSRefNode*> ancestors;
    for (const StmtSRefNode* p = n->parent; p; p = p->parent) ancestors.insert(p);
    while (best < chain.size() && !ancestors.count(chain[best])) ++best;
  }
  return best < chain.size() ? chain[best] : nullptr;
}

bool IsAncestor(const StmtSRefNode* anc, const StmtSRefNode* node) {
  for (const StmtSRefNode* p = node->parent; p; p = p->parent) {
    if (p == anc) return true;
  }
  return false;
}

std::vector<Stmt> BodyItems(const Stmt& body) {
  if (auto* seq = AsPtr<SeqStmtNode>(body)) return seq->seq;
  return {body};
}

int64_t ChildIndex(const StmtSRefNode* parent, const StmtSRefNode* node) {
  const StmtSRefNode* child = node;
  while (child->parent != parent) {
    child = child->parent;
    TESSERA_ICHECK(child) << "ChildIndex: not a descendant";
  }
  std::vector<Stmt> items = BodyItems(BodyOf(parent));
  for (size_t i = 0; i < items.size(); ++i) {
    bool holds = false;
    PostOrderVisit(items[i],
                   [&](const ObjectRef& n) { holds = holds || n.get() == child->stmt.get(); });
    if (holds) return static_cast<int64_t>(i);
  }
  throw InternalError("ChildIndex: the node is not under its parent's body");
}

bool IsAllocatedIn(const BlockNode* block, const BufferNode* buffer) {
  for (const Buffer& b : block->alloc_buffers) {
    if (b.get() == buffer) return true;
  }
  return false;
}

StmtSRef FindAllocatingBlock(const ScheduleState& state, const StmtSRefNode* sref,
                             const BufferNode* buffer) {
  for (const StmtSRefNode* p = sref; p; p = p->parent) {
    if (auto* block = p->block()) {
      if (IsAllocatedIn(block, buffer)) return state.GetSRef(block);
    }
  }
  return nullptr;
}

bool IsParamBuffer(const PrimFunc& func, const BufferNode* buffer) {
  for (const auto& [param, buf] : func->buffer_map) {
    if (buf.get() == buffer) return true;
  }
  return false;
}

// ---- scopes and dependencies ----

BlockScope ComputeBlockScope(const ScheduleState& state, const StmtSRefNode* scope_root) {
  BlockScope scope;
  scope.blocks = GetChildBlocks(state, scope_root);
  std::unordered_map<const BufferNode*, std::vector<StmtSRef>> readers;
  auto add_dep = [&](const StmtSRef& src, const StmtSRef& dst, DepKind kind) {
    if (src == dst) return;
    for (const Dependency& d : scope.deps) {
      if (d.src == src && d.dst == dst && d.kind == kind) return;
    }
    scope.deps.push_back({src, dst, kind});
  };
  for (const StmtSRef& b : scope.blocks) {
    const BlockNode* block = b->block();
    for (const BufferRegion& r : block->reads) {
      for (const StmtSRef& w : scope.writers[r->buffer.get()]) add_dep(w, b, DepKind::kRAW);
    }
    for (const BufferRegion& r : block->writes) {
      const BufferNode* buf = r->buffer.get();
      auto& ws = scope.writers[buf];
      for (const StmtSRef& w : ws) {
        if (w != b) {
          add_dep(w, b, DepKind::kWAW);
          scope.stage_pipeline = false;
        }
      }
      for (const StmtSRef& rd : readers[buf]) {
        if (rd != b) {
          add_dep(rd, b, DepKind::kWAR);
          scope.stage_pipeline = false;
        }
      }
      if (std::find(ws.begin(), ws.end(), b) == ws.end()) ws.push_back(b);
    }
    for (const BufferRegion& r : block->reads) {
      auto& rs = readers[r->buffer.get()];
      if (std::find(rs.begin(), rs.end(), b) == rs.end()) rs.push_back(b);
    }
  }
  return scope;
}

std::vector<StmtSRef> BlockScope::Producers(const StmtSRefNode* block) const {
  // In program order.
  std::vector<StmtSRef> out;
  for (const StmtSRef& b : blocks) {
    for (const Dependency& d : deps) {
      if (d.kind == DepKind::kRAW && d.dst.get() == block && d.src == b) {
        out.push_back(b);
        break;
      }
    }
  }
  return out;
}

std::vector<StmtSRef> BlockScope::Consumers(const StmtSRefNode* block) const {
  std::vector<StmtSRef> out;
  for (const StmtSRef& b : blocks) {
    for (const Dependency& d : deps) {
      if (d.kind == DepKind::kRAW && d.src.get() == block && d.dst == b) {
        out.push_back(b);
        break;
      }
    }
  }
  return out;
}

// ---- block properties ----

namespace {
bool IsQuasiAffine(const Expr& e, const std::unordered_set<const VarNode*>& loop_vars) {
  if (AsConstInt(e)) return true;
  if (auto* v = AsPtr<VarNode>(e)) return loop_vars.count(v) != 0;
  if (auto* add = AsPtr<AddNode>(e))
    return IsQuasiAffine(add->a, loop_vars) && IsQuasiAffine(add->b, loop_vars);
  if (auto* sub = AsPtr<SubNode>(e))
    return IsQuasiAffine(sub->a, loop_vars) && IsQuasiAffine(sub->b, loop_vars);
  if (auto* mul = AsPtr<MulNode>(e)) {
    if (AsConstInt(mul->b)) return IsQuasiAffine(mul->a, loop_vars);
    if (AsConstInt(mul->a)) return IsQuasiAffine(mul->b, loop_vars);
    return false;
  }
  auto div_like = [&](const BinaryNode* op) {
    auto c = AsConstInt(op->b);
    return c && *c > 0 && IsQuasiAffine(op->a, loop_vars);
  };
  if (auto* d = AsPtr<FloorDivNode>(e)) return div_like(d);
  if (auto* m = AsPtr<FloorModNode>(e)) return div_like(m);
  return false;
}

bool IsDominant(const StmtSRefNode* block_sref, const BlockScope& scope) {
  for (const BufferRegion& w : block_sref->block()->writes) {
    auto it = scope.writers.find(w->buffer.get());
    if (it == scope.writers.end()) continue;
    if (it->second.size() != 1 || it->second[0].get() != block_sref) return false;
  }
  return true;
}
}  // namespace

bool IsAffineBinding(const ScheduleState& state, const StmtSRefNode* block_sref) {
  if (!block_sref->parent) return true;
  BlockRealize realize = GetBlockRealize(state, block_sref);
  std::unordered_set<const VarNode*> loop_vars;
  for (const StmtSRef& l : GetLoopsAbove(state, block_sref))
    loop_vars.insert(l->loop()->loop_var.get());
  for (const Expr& v : realize->iter_values) {
    if (!IsQuasiAffine(v, loop_vars)) return false;
  }
  return true;
}

std::string WhyNotComplete(const ScheduleState& state, const StmtSRefNode* block_sref,
                           const BlockScope& scope) {
  const BlockNode* block = block_sref->block();
  for (const IterVar& iv : block->iter_vars) {
    if (iv->iter_type != IterVarType::kDataPar) return "it has a non-spatial block iterator";
  }
  if (!IsDominant(block_sref, scope)) return "it is not the only writer of its output buffers";
  for (const BufferRegion& w : block->writes) {
    for (const BufferRegion& r : block->reads) {
      if (r->buffer == w->buffer) return "it reads the buffer it writes";
    }
  }
  return "";
}

std::string WhyNotReduction(const ScheduleState& state, const StmtSRefNode* block_sref,
                            const BlockScope& scope) {
  const BlockNode* block = block_sref->block();
  if (!block->init) return "it has no init statement";
  if (!IsAffineBinding(state, block_sref)) return "its bindings are not affine";
  std::unordered_set<const VarNode*> reduce_vars;
  for (const IterVar& iv : block->iter_vars) {
    if (iv->iter_type == IterVarType::kCommReduce) {
      reduce_vars.insert(iv->var.get());
    } else if (iv->iter_type != IterVarType::kDataPar) {
      return "it has a block iterator that is neither spatial nor reduction";
    }
  }
  if (!IsDominant(block_sref, scope)) return "it is not the only writer of its output buffers";
  for (const BufferRegion& w : block->writes) {
    for (const Range& r : w->region) {
      if (UsesVars(r->min, reduce_vars) || UsesVars(r->extent, reduce_vars)) {
        return "a reduction iterator indexes its output buffer";
      }
    }
  }
  return "";
}

bool IsOutputBlock(const ScheduleState& state, const StmtSRefNode* block_sref) {
  for (const BufferRegion& w : block_sref->block()->writes) {
    if (!FindAllocatingBlock(state, block_sref->parent, w->buffer.get())) return true;
  }
  return false;
}

void CheckStagePipeline(const ScheduleState& state, const StmtSRef& scope_root,
                        const BlockScope& scope) {
  if (!state.enable_check() || scope.stage_pipeline) return;
  Fail("The scope root is not a stage pipeline",
       "The scope root is not a stage pipeline: a buffer in {0} has more than one writer, or is "
       "read before it is written",
       {scope_root->stmt});
}

void CheckCompleteOrReduction(const ScheduleState& state, const StmtSRef& block_sref,
                              const StmtSRef& scope_root, const BlockScope& scope) {
  std::string complete = WhyNotComplete(state, block_sref.get(), scope);
  if (complete.empty()) return;
  std::string reduction = WhyNotReduction(state, block_sref.get(), scope);
  if (reduction.empty()) return;
  Fail("Not a complete or reduction block",
       "Not a complete or reduction block: {0} is not complete because " + complete +
           ", and not a reduction block because " + reduction,
       {block_sref->stmt});
}

void CheckSubtreeCompactDataflow(const ScheduleState& state, const StmtSRef& subtree,
                                 const StmtSRef& scope_root, const BlockScope& scope) {
  if (!state.enable_check()) return;
  for (const StmtSRef& b : GetChildBlocks(state, subtree.get())) {
    std::string complete = WhyNotComplete(state, b.get(), scope);
    if (complete.empty()) continue;
    std::string reduction = WhyNotReduction(state, b.get(), scope);
    if (reduction.empty()) continue;
    Fail("The subtree does not have compact dataflow",
         "The subtree {0} does not have compact dataflow: its block {1} is not a complete block "
         "(" +
             complete + ") nor a reduction block (" + reduction + ")",
         {subtree->stmt, b->stmt});
  }
}

void CheckNotOutputBlock(const ScheduleState& state, const StmtSRef& block_sref) {
  if (IsOutputBlock(state, block_sref.get())) {
    Fail("Cannot operate on an output block",
         "Cannot operate on an output block: {0} writes a buffer of the function's parameters",
         {block_sref->stmt});
  }
}

// ---- IR editing ----

Stmt BlockRecordingMutator::VisitStmt_(const BlockNode* op) {
  Stmt result = StmtExprMutator::VisitStmt_(op);
  if (result.get() != op) reuse[op] = As<BlockNode>(result);
  return result;
}

Stmt StmtEditor::VisitStmt(const Stmt& s) {
  auto it = replace.find(s.get());
  if (it != replace.end()) return it->second;
  return StmtExprMutator::VisitStmt(s);
}

Stmt StmtEditor::VisitStmt_(const SeqStmtNode* op) {
  std::vector<Stmt> items;
  bool changed = false;
  for (const Stmt& s : op->seq) {
    Stmt t = VisitStmt(s);
    changed = changed || t != s;
    if (t) items.push_back(t);
  }
  if (!changed) return GetRef(op);
  return SeqStmtNode::Flatten(items, op->span);
}

Stmt StmtEditor::EditBody(const StmtNode* owner, const Stmt& body) {
  auto it = insert.find(owner);
  if (it == insert.end()) return VisitStmt(body);
  std::vector<Stmt> original = BodyItems(body);
  std::vector<Stmt> items;
  auto inserts = it->second;
  std::stable_sort(inserts.begin(), inserts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t k = 0;
  for (size_t i = 0; i <= original.size(); ++i) {
    for (; k < inserts.size() && inserts[k].first <= static_cast<int64_t>(i); ++k) {
      items.push_back(inserts[k].second);
    }
    if (i == original.size()) break;
    Stmt t = VisitStmt(original[i]);
    if (t) items.push_back(t);
  }
  for (; k < inserts.size(); ++k) items.push_back(inserts[k].second);
  return SeqStmtNode::Flatten(items);
}

Stmt StmtEditor::VisitStmt_(const ForNode* op) {
  Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
  Stmt body = EditBody(op, op->body);
  if (!body) return nullptr;  // a loop whose whole body was deleted goes too
  if (body == op->body && min == op->min && extent == op->extent) return GetRef(op);
  return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                       op->annotations, op->span);
}

Stmt StmtEditor::VisitStmt_(const BlockNode* op) {
  Stmt init = op->init ? VisitStmt(op->init) : nullptr;
  Stmt body = EditBody(op, op->body);
  if (body == op->body && init == op->init) return GetRef(op);
  Block copy = CopyBlock(op);
  copy->body = body;
  copy->init = init;
  reuse[op] = copy;
  return copy;
}

StmtSRef AllocationSite(const ScheduleState& state, const StmtSRefNode* sref,
                        const BufferNode* buffer) {
  if (StmtSRef site = FindAllocatingBlock(state, sref, buffer)) return site;
  const StmtSRefNode* top = sref;
  while (top->parent) top = top->parent;
  TESSERA_ICHECK(top->block()) << "AllocationSite: the function has no root block";
  return state.GetSRef(top->stmt.get());
}

void EditAndAllocate(ScheduleState& state, const StmtSRef& site, StmtEditor* editor,
                     const Buffer& alloc, const BlockReuse& extra_reuse) {
  const BlockNode* old_site = site->block();
  Block result = CopyBlock(As<BlockNode>(editor->VisitStmt(site->stmt)).get());
  result->alloc_buffers.push_back(alloc);
  BlockReuse reuse = editor->reuse;
  for (const auto& [old_block, new_block] : extra_reuse) reuse[old_block] = new_block;
  reuse[old_site] = result;
  state.Replace(site.get(), old_site, result, reuse);
}

Block CopyBlock(const BlockNode* b) {
  return std::make_shared<BlockNode>(b->iter_vars, b->reads, b->writes, b->name_hint, b->body,
                                     b->init, b->alloc_buffers, b->match_buffers, b->annotations,
                                     b->span);
}

const StmtNode* LeafToRemove(const ScheduleState& state, const StmtSRef& block_sref) {
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  const StmtNode* leaf = realize.get();
  const StmtSRefNode* parent = block_sref->parent;
  while (parent && parent->loop() && parent->loop()->body.get() == leaf) {
    leaf = parent->stmt.get();
    parent = parent->parent;
  }
  if (!parent) Fail("The block is the only statement of its function and cannot be removed");
  const Stmt& body = BodyOf(parent);
  if (auto* seq = AsPtr<SeqStmtNode>(body)) {
    for (const Stmt& s : seq->seq) {
      if (s.get() == leaf) return leaf;
    }
  }
  Fail("The block is the only leaf of its scope and cannot be removed",
       "The block {0} is the only leaf of its scope {1} and cannot be removed",
       {block_sref->stmt, parent->stmt});
}

namespace {
class BufferReplacer : public BlockRecordingMutator {
 public:
  using BlockRecordingMutator::VisitExpr_;
  using BlockRecordingMutator::VisitStmt_;
  explicit BufferReplacer(const BufferMap& bmap) : bmap_(bmap) {}

  Buffer Map(const Buffer& b) const {
    auto it = bmap_.find(b.get());
    return it == bmap_.end() ? b : it->second;
  }
  BufferRegion MapRegion(const BufferRegion& r) const {
    Buffer b = Map(r->buffer);
    return b == r->buffer ? r : BufferRegionNode::Make(b, r->region, r->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    Buffer b = Map(load->buffer);
    if (b == load->buffer) return e;
    return BufferLoadNode::Make(b, load->indices, load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    Buffer b = Map(store->buffer);
    if (b == store->buffer) return s;
    return BufferStoreNode::Make(b, store->value, store->indices, store->predicate, store->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* block = AsPtr<BlockNode>(s);
    Block copy = CopyBlock(block);
    bool changed = false;
    auto map_regions = [&](std::vector<BufferRegion>& regions) {
      for (BufferRegion& r : regions) {
        BufferRegion m = MapRegion(r);
        changed = changed || m != r;
        r = m;
      }
    };
    map_regions(copy->reads);
    map_regions(copy->writes);
    for (Buffer& b : copy->alloc_buffers) {
      Buffer m = Map(b);
      changed = changed || m != b;
      b = m;
    }
    for (MatchBufferRegion& m : copy->match_buffers) {
      BufferRegion src = MapRegion(m->source);
      if (src != m->source) {
        m = MatchBufferRegionNode::Make(m->buffer, src, m->span);
        changed = true;
      }
    }
    Stmt result = changed ? Stmt(copy) : s;
    if (result.get() != op) reuse[op] = As<BlockNode>(result);
    return result;
  }

 private:
  const BufferMap& bmap_;
};
}  // namespace

Stmt ReplaceBuffers(const Stmt& s, const BufferMap& bmap, BlockReuse* reuse) {
  BufferReplacer replacer(bmap);
  Stmt result = replacer.VisitStmt(s);
  if (reuse) {
    for (const auto& [old_block, new_block] : replacer.reuse) (*reuse)[old_block] = new_block;
  }
  return result;
}

Expr ReplaceBuffers(const Expr& e, const BufferMap& bmap) {
  BufferReplacer replacer(bmap);
  return replacer.VisitExpr(e);
}

Block WithInferredRegions(const Block& block, bool reads, bool writes) {
  auto [r, w] = InferBlockAccessRegions(block.get());
  Block copy = CopyBlock(block.get());
  if (reads) copy->reads = r;
  if (writes) copy->writes = w;
  return copy;
}

Stmt MakeLoopNest(const std::vector<For>& loops, Stmt body) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    const For& l = *it;
    body = ForNode::Make(l->loop_var, l->min, l->extent, l->for_kind, body, l->thread_binding,
                         l->annotations, l->span);
  }
  return body;
}

Stmt Evaluate0() { return EvaluateNode::Make(Int32(0)); }

Var NewVar(const std::string& name, DataType t) { return VarNode::Make(name, t); }

Buffer WithNameAndScope(const Buffer& b, const std::string& name, const std::string& scope) {
  DataType element = b->data->pointer ? b->data->pointer->element : b->dtype;
  Var data = VarNode::MakePointer(name, element, scope);
  return BufferNode::Make(data, b->dtype, b->shape, b->strides, b->elem_offset, name,
                          b->data_alignment, b->offset_factor, b->span);
}

bool IsValidScope(const std::string& scope) {
  static const char* const kScopes[] = {"global", "shared", "shared.dyn", "local", "warp"};
  for (const char* s : kScopes) {
    if (scope == s) return true;
  }
  return false;
}

// ---- intervals ----

std::optional<std::pair<Expr, Expr>> EvalBounds(const Expr& e, const DomMap& dom) {
  using Bounds = std::optional<std::pair<Expr, Expr>>;
  std::function<Bounds(const Expr&)> eval = [&](const Expr& x) -> Bounds {
    if (AsConstInt(x)) return std::make_pair(x, x);
    if (auto* v = AsPtr<VarNode>(x)) {
      auto it = dom.find(v);
      if (it == dom.end()) return std::make_pair(x, x);
      const Range& r = it->second;
      Expr hi = SubE(AddE(r->min, r->extent), IntConst(r->extent->dtype, 1));
      // A range over other relaxed variables (an inner loop whose extent depends on an outer
      // one) is relaxed in turn.
      Bounds lo_bounds = eval(r->min), hi_bounds = eval(hi);
      if (!lo_bounds || !hi_bounds) return std::nullopt;
      return std::make_pair(CastTo(x->dtype, lo_bounds->first),
                            CastTo(x->dtype, hi_bounds->second));
    }
    if (auto* add = AsPtr<AddNode>(x)) {
      Bounds a = eval(add->a), b = eval(add->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(AddE(a->first, b->first), AddE(a->second, b->second));
    }
    if (auto* sub = AsPtr<SubNode>(x)) {
      Bounds a = eval(sub->a), b = eval(sub->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(SubE(a->first, b->second), SubE(a->second, b->first));
    }
    if (auto* mul = AsPtr<MulNode>(x)) {
      Expr var_side = mul->a;
      auto c = AsConstInt(mul->b);
      if (!c) {
        c = AsConstInt(mul->a);
        var_side = mul->b;
      }
      if (!c) {
        // Both symbolic: fine when neither side varies.
        Bounds a = eval(mul->a), b = eval(mul->b);
        if (a && b && a->first == a->second && b->first == b->second) return std::make_pair(x, x);
        if (a && b && StructuralEqual(a->first, a->second) &&
            StructuralEqual(b->first, b->second)) {
          return std::make_pair(MulE(a->first, b->first), MulE(a->first, b->first));
        }
        return std::nullopt;
      }
      Bounds a = eval(var_side);
      if (!a) return std::nullopt;
      Expr k = IntConst(x->dtype, *c);
      if (*c >= 0) return std::make_pair(MulE(a->first, k), MulE(a->second, k));
      return std::make_pair(MulE(a->second, k), MulE(a->first, k));
    }
    if (auto* div = AsPtr<FloorDivNode>(x)) {
      auto c = AsConstInt(div->b);
      Bounds a = eval(div->a);
      if (!c || *c <= 0 || !a) return std::nullopt;
      return std::make_pair(FloorDivE(a->first, div->b), FloorDivE(a->second, div->b));
    }
    if (auto* mod = AsPtr<FloorModNode>(x)) {
      auto c = AsConstInt(mod->b);
      Bounds a = eval(mod->a);
      if (!c || *c <= 0 || !a) return std::nullopt;
      arith::Analyzer ana;
      // Within one period the modulo is monotonic.
      if (ana.CanProveEqual(FloorDivE(a->first, mod->b), FloorDivE(a->second, mod->b))) {
        Expr lo = FloorModE(a->first, mod->b);
        return std::make_pair(lo, AddE(lo, SubE(a->second, a->first)));
      }
      return std::make_pair(IntConst(x->dtype, 0), IntConst(x->dtype, *c - 1));
    }
    if (auto* mn = AsPtr<MinNode>(x)) {
      Bounds a = eval(mn->a), b = eval(mn->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(Expr(MinNode::Make(a->first, b->first)),
                            Expr(MinNode::Make(a->second, b->second)));
    }
    if (auto* mx = AsPtr<MaxNode>(x)) {
      Bounds a = eval(mx->a), b = eval(mx->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(Expr(MaxNode::Make(a->first, b->first)),
                            Expr(MaxNode::Make(a->second, b->second)));
    }
    // Anything not using a relaxed variable is a point.
    if (!UsesVar(x, [&](const VarNode* v) { return dom.count(v) != 0; }))
      return std::make_pair(x, x);
    return std::nullopt;
  };
  Bounds b = eval(e);
  if (!b) return std::nullopt;
  return std::make_pair(Simplify(b->first), Simplify(b->second));
}

BufferRegion RelaxRegion(const BufferRegion& region, const DomMap& dom) {
  std::vector<Range> out;
  bool changed = false;
  for (size_t d = 0; d < region->region.size(); ++d) {
    const Range& r = region->region[d];
    Expr hi_expr = SubE(AddE(r->min, r->extent), IntConst(r->extent->dtype, 1));
    auto lo = EvalBounds(r->min, dom);
    auto hi = EvalBounds(hi_expr, dom);
    if (!lo || !hi) {
      const Expr& extent = region->buffer->shape[d];
      out.push_back(RangeNode::Make(IntConst(extent->dtype, 0), extent));
      changed = true;
      continue;
    }
    // Accesses stay inside the buffer (predicates guard the others): clip constant bounds.
    Expr lo_e = lo->first, hi_e = hi->second;
    auto lo_c = AsConstInt(lo_e), hi_c = AsConstInt(hi_e);
    auto size = AsConstInt(region->buffer->shape[d]);
    if (lo_c && *lo_c < 0) lo_e = IntConst(lo_e->dtype, 0);
    if (hi_c && size && *hi_c > *size - 1) hi_e = IntConst(hi_e->dtype, *size - 1);
    Expr extent = Simplify(AddE(SubE(hi_e, lo_e), IntConst(r->extent->dtype, 1)));
    Range nr = RangeNode::Make(lo_e, extent);
    changed = changed || !StructuralEqual(nr, r);
    out.push_back(StructuralEqual(nr, r) ? r : nr);
  }
  return changed ? BufferRegionNode::Make(region->buffer, out, region->span) : region;
}

BufferRegion UnionRegion(const BufferRegion& a, const BufferRegion& b) {
  arith::Analyzer ana;
  std::vector<Range> out;
  for (size_t d = 0; d < a->region.size(); ++d) {
    const Range &ra = a->region[d], &rb = b->region[d];
    Expr a_hi = AddE(ra->min, ra->extent), b_hi = AddE(rb->min, rb->extent);
    Expr lo, hi;
    if (ana.CanProve(LENode::Make(CastTo(rb->min->dtype, ra->min), rb->min))) {
      lo = ra->min;
    } else if (ana.CanProve(LENode::Make(CastTo(ra->min->dtype, rb->min), ra->min))) {
      lo = rb->min;
    } else {
      lo = MinNode::Make(ra->min, CastTo(ra->min->dtype, rb->min));
    }
    Expr ah = Simplify(a_hi), bh = Simplify(b_hi);
    if (ana.CanProve(GENode::Make(ah, CastTo(ah->dtype, bh)))) {
      hi = ah;
    } else if (ana.CanProve(GENode::Make(bh, CastTo(bh->dtype, ah)))) {
      hi = bh;
    } else {
      hi = MaxNode::Make(ah, CastTo(ah->dtype, bh));
    }
    out.push_back(RangeNode::Make(lo, Simplify(SubE(hi, lo))));
  }
  return BufferRegionNode::Make(a->buffer, out, a->span);
}

BufferRegion RegionInLoops(const ScheduleState& state, const StmtSRefNode* block_sref,
                           const BufferRegion& region) {
  const BlockNode* block = block_sref->block();
  BlockRealize realize = GetBlockRealize(state, block_sref);
  VarMap bindings;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    bindings[block->iter_vars[i]->var.get()] = realize->iter_values[i];
  }
  return Substitute(region, bindings);
}

DomMap LoopDomainsBetween(const StmtSRefNode* top, const StmtSRefNode* sref) {
  DomMap dom;
  for (const StmtSRefNode* p = sref->parent; p && p != top; p = p->parent) {
    if (auto* loop = p->loop())
      dom[loop->loop_var.get()] = RangeNode::Make(loop->min, loop->extent);
  }
  return dom;
}

}  // namespace schedule
}  // namespace tessera
