// DetectBufferAccessLCA: the innermost loop or block enclosing every access of each buffer.
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

bool IsBlockIdx(const std::string& thread_tag) { return thread_tag.rfind("blockIdx.", 0) == 0; }

bool IsGlobalScope(const std::string& scope) {
  return scope.empty() || scope == "global" || scope.rfind("global.", 0) == 0;
}

class LCADetector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  // A For or Block (null stmt: the function's root), its parent and its depth.
  struct Scope {
    const Scope* parent;
    const StmtNode* stmt;
    int depth;
  };

  explicit LCADetector(const PrimFuncNode* func) {
    for (const auto& [param, buffer] : func->buffer_map) Know(buffer.get());
    scopes_.push_back({nullptr, nullptr, 0});
    stack_.push_back(&scopes_.back());
  }

  std::vector<std::pair<Buffer, Stmt>> Result() {
    for (const BufferNode* b : order_) {
      if (!IsGlobalScope(b->scope())) continue;
      for (const Scope* s : blockidx_) lca_[b] = Join(lca_[b], s);
    }
    std::vector<std::pair<Buffer, Stmt>> out;
    for (const BufferNode* b : order_) {
      const Scope* s = lca_.at(b);
      Stmt stmt = s && s->stmt ? GetRef(s->stmt) : Stmt();
      out.emplace_back(GetRef(b), stmt);
    }
    return out;
  }

  void VisitStmt_(const ForNode* op) override {
    const Scope* scope = Push(op);
    if (op->thread_binding && IsBlockIdx(op->thread_binding->thread_tag)) {
      blockidx_.push_back(scope);
    }
    loop_scope_[op->loop_var.get()] = scope;
    StmtExprVisitor::VisitStmt_(op);
    loop_scope_.erase(op->loop_var.get());
    stack_.pop_back();
  }

  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    for (const Buffer& b : block->alloc_buffers) Know(b.get());
    Push(block);
    LiftNonDataParallelAccesses(op);
    for (const MatchBufferRegion& m : block->match_buffers) {
      Update(m->source->buffer.get(), stack_.back());
      match_targets_.insert(m->buffer.get());
    }
    StmtExprVisitor::VisitStmt_(op);
    stack_.pop_back();
  }

  void VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (op->attr_key == "thread_extent" && iv && IsBlockIdx(iv->thread_tag)) {
      blockidx_.push_back(stack_.back());
    }
    StmtExprVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const BufferRealizeNode* op) override {
    Update(op->buffer.get(), stack_.back());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Update(op->buffer.get(), stack_.back());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Update(op->buffer.get(), stack_.back());
    StmtExprVisitor::VisitStmt_(op);
  }
  // A buffer's data pointer used on its own (an intrinsic's argument) is an access of it.
  void VisitExpr_(const VarNode* op) override {
    auto it = by_data_.find(op);
    if (it != by_data_.end()) Update(it->second, stack_.back());
  }

 private:
  const Scope* Push(const StmtNode* stmt) {
    const Scope* parent = stack_.back();
    scopes_.push_back({parent, stmt, static_cast<int>(stack_.size())});
    stack_.push_back(&scopes_.back());
    return stack_.back();
  }

  void Know(const BufferNode* b) { by_data_.emplace(b->data.get(), b); }

  void Update(const BufferNode* b, const Scope* scope) {
    Know(b);
    if (match_targets_.count(b)) return;
    auto [it, fresh] = lca_.emplace(b, scope);
    if (fresh) {
      order_.push_back(b);
    } else {
      it->second = Join(it->second, scope);
    }
  }

  static const Scope* Join(const Scope* a, const Scope* b) {
    if (!a) return b;
    if (!b) return a;
    while (a != b) {
      if (a->depth >= b->depth) {
        if (!a->parent) return a;
        a = a->parent;
      } else {
        if (!b->parent) return b;
        b = b->parent;
      }
    }
    return a;
  }

  // The scope outside the outermost loop a binding reads (null: it reads no enclosing loop).
  const Scope* OutsideLoopsOf(const Expr& binding) const {
    const Scope* highest = nullptr;
    PostOrderVisit(binding, [&](const ObjectRef& n) {
      auto* v = AsPtr<VarNode>(n);
      auto it = v ? loop_scope_.find(v) : loop_scope_.end();
      if (it == loop_scope_.end()) return;
      const Scope* outside = it->second->parent;
      if (!highest || outside->depth < highest->depth) highest = outside;
    });
    return highest;
  }

  // As TVM: what a reduction block writes is accessed above all its reduction loops, and an
  // access through an iterator of another non-data-parallel kind above the loops it is bound to.
  void LiftNonDataParallelAccesses(const BlockRealizeNode* realize) {
    const BlockNode* block = realize->block.get();
    std::unordered_map<const VarNode*, const Scope*> opaque_scope;
    const Scope* reduce_scope = nullptr;
    bool reduction = false;
    for (size_t i = 0; i < block->iter_vars.size() && i < realize->iter_values.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (iv->iter_type == IterVarType::kDataPar) continue;
      const Scope* scope = OutsideLoopsOf(realize->iter_values[i]);
      if (!scope) continue;
      if (iv->iter_type == IterVarType::kCommReduce) {
        reduction = true;
        if (!reduce_scope || scope->depth < reduce_scope->depth) reduce_scope = scope;
      } else {
        opaque_scope[iv->var.get()] = scope;
        for (const BufferRegion& w : block->writes) Update(w->buffer.get(), scope);
      }
    }
    auto lift = [&](const BufferRegion& region, bool reduce_write) {
      const Scope* scope = stack_.back();
      auto visit = [&](const ObjectRef& n) {
        auto* v = AsPtr<VarNode>(n);
        auto it = v ? opaque_scope.find(v) : opaque_scope.end();
        if (it != opaque_scope.end() && it->second->depth < scope->depth) scope = it->second;
      };
      for (const Range& r : region->region) {
        PostOrderVisit(r->min, visit);
        PostOrderVisit(r->extent, visit);
      }
      if (reduce_write && reduce_scope && scope->depth > reduce_scope->depth) scope = reduce_scope;
      Update(region->buffer.get(), scope);
    };
    if (!opaque_scope.empty()) {
      for (const BufferRegion& r : block->reads) lift(r, false);
      for (const BufferRegion& w : block->writes) lift(w, reduction);
    } else if (reduction && reduce_scope) {
      for (const BufferRegion& w : block->writes) lift(w, true);
    }
  }

  std::deque<Scope> scopes_;
  std::vector<const Scope*> stack_, blockidx_;
  std::unordered_map<const VarNode*, const Scope*> loop_scope_;
  std::unordered_map<const VarNode*, const BufferNode*> by_data_;
  std::unordered_set<const BufferNode*> match_targets_;
  std::unordered_map<const BufferNode*, const Scope*> lca_;
  std::vector<const BufferNode*> order_;
};

}  // namespace

std::vector<std::pair<Buffer, Stmt>> DetectBufferAccessLCA(const PrimFunc& func) {
  LCADetector detector(func.get());
  detector.VisitStmt(func->body);
  return detector.Result();
}

}  // namespace transform
}  // namespace tessera
