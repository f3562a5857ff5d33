// Queries shared by the primitives: sref navigation, block scopes and dependencies, block
// properties and the checks built on them.
#include <algorithm>

#include <tuple>
#include <unordered_set>
#include "tessera/ir/block_access.h"
#include "tessera/ir/structural_equal.h"
#include "utils.h"

namespace tessera {
namespace schedule {

// ---- sref navigation ----

const ForNode* LoopOf(const StmtSRef& sref) {
  if (!sref || !sref->stmt) Fail("the loop was removed from the IR by an earlier primitive");
  const ForNode* loop = sref->loop();
  if (!loop) Fail("Expected a loop, but got a block", "Expected a loop, but got {0}", {sref->stmt});
  return loop;
}

const BlockNode* BlockOf(const StmtSRef& sref) {
  if (!sref || !sref->stmt) Fail("the block was removed from the IR by an earlier primitive");
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

const Stmt& UnderDecls(const Stmt& body) {
  if (auto* alloc = AsPtr<AllocateConstNode>(body)) return UnderDecls(alloc->body);
  if (auto* decl = AsPtr<DeclBufferNode>(body)) return UnderDecls(decl->body);
  return body;
}

Stmt ReplaceUnderDecls(const Stmt& body, const Stmt& inner) {
  if (auto* alloc = AsPtr<AllocateConstNode>(body)) {
    Stmt new_body = ReplaceUnderDecls(alloc->body, inner);
    if (new_body == alloc->body) return body;
    return AllocateConstNode::Make(alloc->buffer_var, alloc->dtype, alloc->extents, alloc->data,
                                   new_body, alloc->annotations, alloc->span);
  }
  if (auto* decl = AsPtr<DeclBufferNode>(body)) {
    Stmt new_body = ReplaceUnderDecls(decl->body, inner);
    if (new_body == decl->body) return body;
    return DeclBufferNode::Make(decl->buffer, new_body, decl->span);
  }
  return inner;
}

std::vector<Stmt> BodyItems(const Stmt& body) {
  const Stmt& under = UnderDecls(body);
  if (auto* seq = AsPtr<SeqStmtNode>(under)) return seq->seq;
  return {under};
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
  // Linear in the blocks and their accesses (plus the dependencies found): a scope of many
  // blocks reading one buffer must not cost a scan of the dependencies per dependency.
  BlockScope scope;
  scope.blocks = GetChildBlocks(state, scope_root);
  for (size_t i = 0; i < scope.blocks.size(); ++i) scope.position[scope.blocks[i].get()] = i;
  std::unordered_map<const BufferNode*, std::vector<StmtSRef>> readers;
  struct KeyHash {
    size_t operator()(const std::tuple<const void*, const void*, int>& k) const {
      size_t h = std::hash<const void*>()(std::get<0>(k));
      h = h * 1000003u ^ std::hash<const void*>()(std::get<1>(k));
      return h * 31u + static_cast<size_t>(std::get<2>(k));
    }
  };
  std::unordered_set<std::tuple<const void*, const void*, int>, KeyHash> seen;
  auto add_dep = [&](const StmtSRef& src, const StmtSRef& dst, DepKind kind) {
    if (src == dst) return;
    if (!seen.insert({src.get(), dst.get(), static_cast<int>(kind)}).second) return;
    scope.deps_from[src.get()].push_back(scope.deps.size());
    scope.deps_to[dst.get()].push_back(scope.deps.size());
    scope.deps.push_back({src, dst, kind});
  };
  for (const StmtSRef& b : scope.blocks) {
    const BlockNode* block = b->block();
    for (const BufferRegion& r : block->reads) {
      auto it = scope.writers.find(r->buffer.get());
      if (it == scope.writers.end()) continue;
      for (const StmtSRef& w : it->second) add_dep(w, b, DepKind::kRAW);
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
      auto rd_it = readers.find(buf);
      if (rd_it != readers.end()) {
        for (const StmtSRef& rd : rd_it->second) {
          if (rd != b) {
            add_dep(rd, b, DepKind::kWAR);
            scope.stage_pipeline = false;
          }
        }
      }
      // Blocks are visited once, in order: b can only be the last one listed.
      if (ws.empty() || ws.back() != b) ws.push_back(b);
    }
    for (const BufferRegion& r : block->reads) {
      auto& rs = readers[r->buffer.get()];
      if (rs.empty() || rs.back() != b) rs.push_back(b);
    }
  }
  return scope;
}

namespace {
// The blocks at one end of `block`'s RAW dependencies, in program order, each once.
std::vector<StmtSRef> RawNeighbours(const BlockScope& scope, const StmtSRefNode* block,
                                    bool producers) {
  const auto& index = producers ? scope.deps_to : scope.deps_from;
  auto it = index.find(block);
  if (it == index.end()) return {};
  std::vector<std::pair<size_t, StmtSRef>> found;
  std::unordered_set<const StmtSRefNode*> taken;
  for (size_t d : it->second) {
    const Dependency& dep = scope.deps[d];
    if (dep.kind != DepKind::kRAW) continue;
    const StmtSRef& other = producers ? dep.src : dep.dst;
    auto pos = scope.position.find(other.get());
    if (pos == scope.position.end() || !taken.insert(other.get()).second) continue;
    found.emplace_back(pos->second, other);
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<StmtSRef> out;
  for (auto& [pos, s] : found) out.push_back(std::move(s));
  return out;
}
}  // namespace

std::vector<StmtSRef> BlockScope::Producers(const StmtSRefNode* block) const {
  return RawNeighbours(*this, block, true);  // in program order
}

std::vector<StmtSRef> BlockScope::Consumers(const StmtSRefNode* block) const {
  return RawNeighbours(*this, block, false);
}

// ---- block properties ----

namespace {
bool IsQuasiAffine(const Expr& e, const std::unordered_set<const VarNode*>& loop_vars) {
  if (AsConstInt(e)) return true;
  if (!UsesVars(e, loop_vars)) return true;  // no iterator in it: a constant of the binding
  if (auto* mul = AsPtr<MulNode>(e)) {
    if (!UsesVars(mul->b, loop_vars)) return IsQuasiAffine(mul->a, loop_vars);
    if (!UsesVars(mul->a, loop_vars)) return IsQuasiAffine(mul->b, loop_vars);
  }

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
    if (it->second.size() != 1) return false;  // as TVM: the only writer in the scope
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

bool IsPartialAffineBinding(const ScheduleState& state, const StmtSRefNode* block_sref,
                            const StmtSRefNode* high_exclusive) {
  if (!block_sref->parent) return true;
  BlockRealize realize = GetBlockRealize(state, block_sref);
  std::unordered_set<const VarNode*> loop_vars;
  for (const StmtSRefNode* s = block_sref->parent; s && s != high_exclusive; s = s->parent) {
    if (s->loop()) loop_vars.insert(s->loop()->loop_var.get());
  }
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
  Fail("the scope is not a stage pipeline",
       "the scope {0} is not a stage pipeline: one of its buffers has several writers, or is "
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
       "Not a complete or reduction block: {0} is not a complete block because " + complete +
           ", and not a reduction block either because " + reduction,
       {block_sref->stmt});
}

void CheckSubtreeCompactDataflow(const ScheduleState& state, const StmtSRef& subtree,
                                 const StmtSRef& scope_root, const BlockScope& scope) {
  if (!state.enable_check()) return;
  // As TVM, the blocks must be *local* complete or reduction blocks: their writers are counted
  // in the subtree's own scope (a block subtree), or, for a loop, in the scopes of the blocks
  // under it (so a leaf block under the loop is dominant there).
  BlockScope local;
  std::vector<StmtSRef> children = GetChildBlocks(state, subtree.get());
  if (subtree->block()) {
    local = ComputeBlockScope(state, subtree.get());
  } else {
    for (const StmtSRef& child : children) {
      BlockScope inner = ComputeBlockScope(state, child.get());
      for (auto& [buffer, writers] : inner.writers) {
        local.writers.emplace(buffer, writers);
      }
    }
  }
  (void)scope;
  for (const StmtSRef& b : children) {
    std::string complete = WhyNotComplete(state, b.get(), local);
    if (complete.empty()) continue;
    std::string reduction = WhyNotReduction(state, b.get(), local);
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

}  // namespace schedule
}  // namespace tessera
