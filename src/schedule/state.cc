// ScheduleState: Replace rebuilds the changed function and keeps srefs of surviving nodes.
#include "tessera/schedule/state.h"

#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"

namespace tessera {
namespace schedule {
namespace {

// The statements from the visited root down to `target`, both included.
class PathFinder : public StmtVisitor {
 public:
  explicit PathFinder(const StmtNode* target) : target_(target) {}
  std::vector<const StmtNode*> path;
  bool found = false;

  void VisitStmt(const Stmt& s) override {
    if (found || !s) return;
    path.push_back(s.get());
    if (s.get() == target_) {
      found = true;
      return;
    }
    StmtVisitor::VisitStmt(s);
    if (!found) path.pop_back();
  }

 private:
  const StmtNode* target_;
};

// Walks a function body and gives every loop and block an sref, reusing old ones when possible.
class SRefBuilder : public StmtVisitor {
 public:
  SRefBuilder(const std::vector<StmtSRef>& old, const BlockReuse& reuse) {
    for (const StmtSRef& s : old) {
      if (!s->stmt) continue;
      by_stmt_[s->stmt.get()] = s;
      if (auto* loop = s->loop()) by_loop_var_[loop->loop_var.get()] = s;
    }
    for (const auto& [old_block, new_block] : reuse) {
      auto it = by_stmt_.find(old_block);
      if (it != by_stmt_.end() && new_block) by_new_block_[new_block.get()] = it->second;
    }
  }

  std::vector<StmtSRef> srefs;
  std::vector<StmtSRefNode> fields;  // the fields each sref gets, applied once all are known

  void VisitStmt(const Stmt& s) override {
    index_ = pending_;
    pending_ = -1;
    StmtVisitor::VisitStmt(s);
  }
  void VisitStmt_(const SeqStmtNode* op) override {
    for (size_t i = 0; i < op->seq.size(); ++i) {
      pending_ = static_cast<int64_t>(i);
      VisitStmt(op->seq[i]);
    }
  }
  void VisitStmt_(const ForNode* op) override {
    StmtSRef sref = Take(op, by_loop_var_, op->loop_var.get());
    Add(sref, GetRef(op));
    StmtSRefNode* saved = parent_;
    parent_ = sref.get();
    VisitStmt(op->body);
    parent_ = saved;
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    StmtSRef sref = Take(block, by_new_block_, block);
    Add(sref, op->block);
    StmtSRefNode* saved = parent_;
    parent_ = sref.get();
    VisitStmt(block->body);
    parent_ = saved;
  }
  void VisitStmt_(const BlockNode* op) override {
    // A block outside a BlockRealize (not produced by the front ends): treat it alike.
    StmtSRef sref = Take(op, by_new_block_, op);
    Add(sref, GetRef(op));
    StmtSRefNode* saved = parent_;
    parent_ = sref.get();
    VisitStmt(op->body);
    parent_ = saved;
  }

 private:
  template <class Map, class Key>
  StmtSRef Take(const StmtNode* node, Map& fallback, const Key* key) {
    auto try_take = [&](StmtSRef s) -> StmtSRef {
      if (!s || used_.count(s.get())) return nullptr;
      used_.insert(s.get());
      return s;
    };
    auto it = by_stmt_.find(node);
    if (it != by_stmt_.end()) {
      if (StmtSRef s = try_take(it->second)) return s;
    }
    auto f = fallback.find(key);
    if (f != fallback.end()) {
      if (StmtSRef s = try_take(f->second)) return s;
    }
    auto fresh = std::make_shared<StmtSRefNode>();
    used_.insert(fresh.get());
    return fresh;
  }
  void Add(const StmtSRef& sref, Stmt stmt) {
    srefs.push_back(sref);
    StmtSRefNode f;
    f.stmt = std::move(stmt);
    f.parent = parent_;
    f.seq_index = index_;
    fields.push_back(std::move(f));
  }

  std::unordered_map<const StmtNode*, StmtSRef> by_stmt_;
  std::unordered_map<const VarNode*, StmtSRef> by_loop_var_;
  std::unordered_map<const BlockNode*, StmtSRef> by_new_block_;
  std::unordered_set<const StmtSRefNode*> used_;
  StmtSRefNode* parent_ = nullptr;
  int64_t pending_ = -1, index_ = -1;
};

}  // namespace

ScheduleState::ScheduleState(IRModule mod, int debug_mask, bool enable_check)
    : mod_(std::move(mod)), debug_mask_(debug_mask), enable_check_(enable_check) {
  for (const auto& [gv, func] : mod_->functions) {
    // The primitives rebuild loops without knowing steps: a stepped loop is refused, not lost.
    PostOrderVisit(func->body, [&](const ObjectRef& n) {
      if (n->kind != NodeKind::kFor) return;
      auto* loop = static_cast<const ForNode*>(n.get());
      if (loop->step) {
        TESSERA_THROW_KIND(loop->span, ErrorKind::kValue)
            << "tir.Schedule does not support loops with a step (loop "
            << loop->loop_var->name << " of function " << gv->name_hint << " steps by "
            << AsScript(loop->step) << "); apply tir.transform.CanonicalizeLoop() first";
      }
    });
  }
  for (const auto& [gv, func] : mod_->functions) RebuildFunc(gv->name_hint, {});
}

StmtSRef ScheduleState::FindSRef(const StmtNode* stmt) const {
  auto it = stmt2ref_.find(stmt);
  return it == stmt2ref_.end() ? nullptr : it->second;
}

StmtSRef ScheduleState::GetSRef(const StmtNode* stmt) const {
  StmtSRef sref = FindSRef(stmt);
  TESSERA_ICHECK(sref) << "the statement has no sref: it is not in the scheduled IR";
  return sref;
}

StmtSRef ScheduleState::RootSRef(const std::string& func_name) const {
  auto it = func_srefs_.find(func_name);
  if (it == func_srefs_.end() || it->second.empty()) return nullptr;
  const StmtSRef& first = it->second.front();
  PrimFunc func = mod_->Lookup(func_name);
  auto* realize = AsPtr<BlockRealizeNode>(func->body);
  if (!realize || first->stmt != realize->block) return nullptr;
  return first;
}

std::string ScheduleState::FuncNameOf(const StmtSRefNode* sref) const {
  while (sref->parent) sref = sref->parent;
  for (const auto& [name, srefs] : func_srefs_) {
    for (const StmtSRef& s : srefs) {
      if (s.get() == sref) return name;
    }
  }
  throw InternalError("FuncNameOf: the sref belongs to no function");
}

PrimFunc ScheduleState::FuncOf(const StmtSRefNode* sref) const {
  return mod_->Lookup(FuncNameOf(sref));
}

bool ScheduleState::HeldOnlyByParent(const StmtNode* stmt) const {
  // The parent's handle, plus the sref's when the node has one (TVM's srefs do not count).
  long expected = 1;
  auto it = stmt2ref_.find(stmt);
  if (it != stmt2ref_.end() && it->second->stmt.get() == stmt) ++expected;
  return stmt->weak_from_this().use_count() == expected;
}

void ScheduleState::Replace(const StmtSRefNode* anchor, const StmtNode* src, const Stmt& tgt,
                            const BlockReuse& block_reuse, bool keep_replaced_block_sref) {
  TESSERA_ICHECK(anchor && anchor->stmt) << "Replace: the anchor sref is not in the IR";
  TESSERA_ICHECK(tgt) << "Replace: no statement to put in";
  if (src == tgt.get()) return;
  std::string name = FuncNameOf(anchor);
  BeforeChange();
  size_t index = 0;
  while (index < mod_->functions.size() && mod_->functions[index].first->name_hint != name) {
    ++index;
  }
  TESSERA_ICHECK(index < mod_->functions.size()) << "Replace: no function " << name;
  const PrimFuncNode* func = mod_->functions[index].second.get();
  PathFinder finder(src);
  finder.VisitStmt(func->body);
  TESSERA_ICHECK(finder.found) << "Replace: the statement to replace is not in the function";
  const std::vector<const StmtNode*>& path = finder.path;

  // Copy-on-write, as TVM's ScheduleState: a node on the path whose module, function and
  // ancestors are held by nobody but their parents (no Python handle, no saved snapshot, no
  // other module) changes in place and keeps its identity; the others are copied.
  bool mod_unique = mod_.use_count() == 1;
  bool func_unique = mod_unique && mod_->functions[index].second.use_count() == 1;
  size_t in_place = 0;  // path[0, in_place) may change in place
  if (func_unique) {
    while (in_place + 1 < path.size() && HeldOnlyByParent(path[in_place])) ++in_place;
  }
  // From here on, the path's nodes stay alive until the srefs are rebuilt.
  std::vector<Stmt> keep;
  keep.reserve(path.size());
  for (const StmtNode* p : path) keep.push_back(GetRef(p));

  BlockReuse reuse = block_reuse;
  if (keep_replaced_block_sref && src->kind == NodeKind::kBlock && tgt->kind == NodeKind::kBlock &&
      !reuse.count(static_cast<const BlockNode*>(src))) {
    reuse[static_cast<const BlockNode*>(src)] = std::static_pointer_cast<BlockNode>(tgt);
  }
  Stmt child = tgt;
  bool changed_in_place = false;
  for (size_t j = path.size() - 1; j-- > 0;) {
    const StmtNode* node = path[j];
    Stmt rebuilt = WithChildReplaced(node, path[j + 1], child);
    if (j < in_place && rebuilt->kind == node->kind) {
      SwapStmtFields(const_cast<StmtNode*>(node), rebuilt.get());
      changed_in_place = true;
      break;
    }
    // A block rebuilt on the way up stays the same block for its sref.
    if (node->kind == NodeKind::kBlock) {
      reuse[static_cast<const BlockNode*>(node)] = std::static_pointer_cast<BlockNode>(rebuilt);
    }
    child = std::move(rebuilt);
  }
  if (!changed_in_place) {
    auto& entry = mod_->functions[index];
    if (func_unique) {
      entry.second->body = std::move(child);
    } else if (mod_unique) {
      entry.second = entry.second->WithBody(std::move(child));
    } else {
      mod_ = mod_->WithFunction(entry.first, entry.second->WithBody(std::move(child)));
    }
  }
  RebuildFunc(name, reuse);
}

void ScheduleState::ReplaceFunc(const std::string& func_name, const PrimFunc& func,
                                const BlockReuse& block_reuse) {
  GlobalVar gv = mod_->GetGlobalVar(func_name);
  TESSERA_ICHECK(gv) << "ReplaceFunc: no function " << func_name;
  BeforeChange();
  mod_ = mod_->WithFunction(gv, func);
  RebuildFunc(func_name, block_reuse);
}

void ScheduleState::RebuildFunc(const std::string& func_name, const BlockReuse& block_reuse) {
  BeforeChange();
  std::vector<StmtSRef>& old = func_srefs_[func_name];
  SRefBuilder builder(old, block_reuse);
  builder.VisitStmt(mod_->Lookup(func_name)->body);
  for (const StmtSRef& s : old) {
    if (s->stmt) {
      auto it = stmt2ref_.find(s->stmt.get());
      if (it != stmt2ref_.end() && it->second == s) stmt2ref_.erase(it);
    }
    s->stmt = nullptr;
    s->parent = nullptr;
    s->seq_index = -1;
  }
  for (size_t i = 0; i < builder.srefs.size(); ++i) {
    StmtSRefNode& s = *builder.srefs[i];
    s.stmt = builder.fields[i].stmt;
    s.parent = builder.fields[i].parent;
    s.seq_index = builder.fields[i].seq_index;
    stmt2ref_[s.stmt.get()] = builder.srefs[i];
  }
  old = std::move(builder.srefs);
}

void ScheduleState::VerifySRefTree() const {
  ScheduleState fresh(mod_, 0, enable_check_);
  size_t live = 0;
  for (const auto& [name, srefs] : func_srefs_) {
    for (const StmtSRef& s : srefs) {
      TESSERA_ICHECK(s->stmt) << "VerifySRefTree: a listed sref is dead";
      ++live;
      StmtSRef f = fresh.FindSRef(s->stmt.get());
      TESSERA_ICHECK(f) << "VerifySRefTree: an sref points to a node outside the IR";
      const StmtNode* parent = s->parent ? s->parent->stmt.get() : nullptr;
      const StmtNode* fresh_parent = f->parent ? f->parent->stmt.get() : nullptr;
      TESSERA_ICHECK(parent == fresh_parent) << "VerifySRefTree: wrong parent";
      TESSERA_ICHECK(s->seq_index == f->seq_index) << "VerifySRefTree: wrong seq_index";
      TESSERA_ICHECK(GetSRef(s->stmt.get()) == s) << "VerifySRefTree: stale stmt2ref entry";
    }
  }
  TESSERA_ICHECK(live == fresh.stmt2ref_.size() && live == stmt2ref_.size())
      << "VerifySRefTree: the number of srefs differs from the IR";
}

ScheduleState ScheduleState::Copy(
    std::unordered_map<const StmtSRefNode*, StmtSRef>* sref_map) const {
  ScheduleState copy(mod_, debug_mask_, enable_check_);
  for (const auto& [stmt, sref] : stmt2ref_) (*sref_map)[sref.get()] = copy.GetSRef(stmt);
  return copy;
}

void ScheduleState::BeforeChange() {
  scope_cache_.clear();
  if (!pending_) return;
  if (pending_.use_count() > 1 && !pending_->materialized) {
    for (const auto& [name, srefs] : func_srefs_) {
      for (const StmtSRef& s : srefs) pending_->srefs.emplace_back(s, *s);
    }
    pending_->stmt2ref = stmt2ref_;
    pending_->func_srefs = func_srefs_;
    pending_->materialized = true;
  }
  pending_.reset();
}

ScheduleState::Snapshot ScheduleState::Save() {
  if (!pending_) pending_ = std::make_shared<SnapshotData>();
  return {mod_, pending_};
}

void ScheduleState::Restore(Snapshot snapshot) {
  // Not filled: nothing changed since the Save.
  if (!snapshot.data || !snapshot.data->materialized) return;
  BeforeChange();
  // Srefs created since the snapshot die; the saved ones get their fields back.
  for (auto& [name, srefs] : func_srefs_) {
    for (const StmtSRef& s : srefs) {
      s->stmt = nullptr;
      s->parent = nullptr;
      s->seq_index = -1;
    }
  }
  mod_ = std::move(snapshot.mod);
  const SnapshotData& data = *snapshot.data;
  for (const auto& [sref, fields] : data.srefs) *sref = fields;
  stmt2ref_ = data.stmt2ref;
  func_srefs_ = data.func_srefs;
  // The state is the snapshot's again: a later Save may share it.
  pending_ = std::move(snapshot.data);
}

}  // namespace schedule
}  // namespace tessera
