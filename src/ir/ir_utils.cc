// IR helpers: substitution, variable use, conjuncts, IRTransform, visibility.
#include "tessera/ir/ir_utils.h"

#include <set>

#include "tessera/ir/functor.h"

namespace tessera {
namespace {

class Substituter : public StmtExprMutator {
 public:
  explicit Substituter(const VarMap& vmap) : vmap_(vmap) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

 private:
  Expr Lookup(const VarNode* op) {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  const VarMap& vmap_;
};

class VarUseFinder : public StmtExprVisitor {
 public:
  explicit VarUseFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  void VisitExpr(const Expr& e) override {
    if (!found) StmtExprVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (!found) StmtExprVisitor::VisitStmt(s);
  }
  void VisitExpr_(const VarNode* op) override { found = found || pred_(op); }
  void VisitExpr_(const SizeVarNode* op) override { found = found || pred_(op); }
  void VisitExpr_(const BufferLoadNode* op) override {
    found = found || pred_(op->buffer->data.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    found = found || pred_(op->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  bool found = false;

 private:
  const std::function<bool(const VarNode*)>& pred_;
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

namespace {

class IRTransformer : public StmtExprMutator {
 public:
  IRTransformer(const NodeRewrite& pre, const NodeRewrite& post,
                const std::vector<std::string>& only_enable)
      : pre_(pre), post_(post) {
    for (std::string name : only_enable) {
      if (name.rfind("tir.", 0) == 0) name = name.substr(4);
      bool found = false;
      for (int k = 0; k < static_cast<int>(NodeKind::kStmtEnd); ++k) {
        auto kind = static_cast<NodeKind>(k);
        if (kind == NodeKind::kExprEnd) continue;
        if (name == NodeKindName(kind)) {
          enabled_.insert(kind);
          found = true;
        }
      }
      if (!found) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
            << "ir_transform: only_enable names an unknown node kind '" << name
            << "' (expression and statement kinds such as \"tir.For\", \"tir.BufferStore\", "
               "\"tir.Add\")";
      }
    }
  }

  Stmt VisitStmt(const Stmt& s) override {
    if (pre_ && Enabled(s->kind)) {
      if (ObjectRef r = pre_(s)) return AsStmt(r, s, "preorder");
    }
    Stmt n = StmtMutator::VisitStmt(s);
    if (post_ && Enabled(n->kind)) {
      if (ObjectRef r = post_(n)) return AsStmt(r, n, "postorder");
    }
    return n;
  }

  Expr VisitExpr(const Expr& e) override {
    if (pre_ && Enabled(e->kind)) {
      if (ObjectRef r = pre_(e)) return AsExpr(r, e, "preorder");
    }
    Expr n = ExprMutator::VisitExpr(e);
    if (post_ && Enabled(n->kind)) {
      if (ObjectRef r = post_(n)) return AsExpr(r, n, "postorder");
    }
    return n;
  }

 private:
  bool Enabled(NodeKind k) const { return enabled_.empty() || enabled_.count(k) != 0; }

  static Stmt AsStmt(const ObjectRef& r, const Stmt& old, const char* which) {
    if (!IsStmtKind(r->kind)) {
      TESSERA_THROW_KIND(old->span, ErrorKind::kType)
          << "ir_transform: the " << which << " function replaced a statement ("
          << NodeKindName(old->kind) << ") with a node of kind " << NodeKindName(r->kind)
          << ", which is not a statement";
    }
    return std::static_pointer_cast<StmtNode>(r);
  }
  static Expr AsExpr(const ObjectRef& r, const Expr& old, const char* which) {
    if (!IsExprKind(r->kind)) {
      TESSERA_THROW_KIND(old->span, ErrorKind::kType)
          << "ir_transform: the " << which << " function replaced an expression ("
          << NodeKindName(old->kind) << ") with a node of kind " << NodeKindName(r->kind)
          << ", which is not an expression";
    }
    Expr out = std::static_pointer_cast<ExprNode>(r);
    if (out->dtype != old->dtype) {
      TESSERA_THROW_KIND(old->span, ErrorKind::kType)
          << "ir_transform: the " << which << " function replaced a " << old->dtype.ToString()
          << " expression (" << NodeKindName(old->kind) << ") with a " << out->dtype.ToString()
          << " one";
    }
    return out;
  }

  const NodeRewrite& pre_;
  const NodeRewrite& post_;
  std::set<NodeKind> enabled_;
};

}  // namespace

Stmt IRTransform(const Stmt& s, const NodeRewrite& preorder, const NodeRewrite& postorder,
                 const std::vector<std::string>& only_enable) {
  return IRTransformer(preorder, postorder, only_enable).VisitStmt(s);
}

Expr IRTransform(const Expr& e, const NodeRewrite& preorder, const NodeRewrite& postorder,
                 const std::vector<std::string>& only_enable) {
  return IRTransformer(preorder, postorder, only_enable).VisitExpr(e);
}

void SplitConjuncts(const Expr& e, std::vector<Expr>* out) {
  if (auto* a = AsPtr<AndNode>(e)) {
    SplitConjuncts(a->a, out);
    SplitConjuncts(a->b, out);
  } else if (!IsConstInt(e, 1)) {
    out->push_back(e);
  }
}

bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  if (!e) return false;
  VarUseFinder f(pred);
  f.VisitExpr(e);
  return f.found;
}

bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  if (!s) return false;
  VarUseFinder f(pred);
  f.VisitStmt(s);
  return f.found;
}

bool UsesVar(const Expr& e, const VarNode* v) {
  return UsesVar(e, [v](const VarNode* x) { return x == v; });
}

Buffer WithData(const Buffer& b, const Var& data) {
  Buffer out = BufferNode::Make(data, b->dtype, b->shape, b->strides, b->elem_offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
  out->axis_separators = b->axis_separators;
  return out;
}

std::string TargetKindOf(const ObjectRef& target) {
  if (auto* s = AsPtr<StringImmNode>(target)) return s->value.substr(0, s->value.find(' '));
  if (auto* m = AsPtr<MapNode>(target)) {
    auto it = m->items.find("kind");
    if (it != m->items.end()) {
      if (auto* s = AsPtr<StringImmNode>(it->second)) return s->value;
    }
  }
  return "";
}

bool IsPublic(const PrimFunc& func) { return func->attrs.count("global_symbol") != 0; }

std::string SymbolName(const GlobalVar& gv, const PrimFunc& func) {
  return func->GetStrAttr("global_symbol", gv->name_hint);
}

}  // namespace tessera
