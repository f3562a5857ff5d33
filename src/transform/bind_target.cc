// tir.BindTarget(target): every function without a "target" attribute gets one, chosen by where
// it runs:
//  - a public function (it has "global_symbol"): the whole target, host included;
//  - a function marked "tir.is_host_func": the host target (as its own host), the mark dropped;
//  - a private function called only from host code of a public function: the host target;
//    called only from device code (inside a thread-bound loop or thread_extent/virtual_thread
//    attribute): the target without its host; called from both: the device target, plus a copy
//    named "<name>_host" (fresh definitions) with the host target, which the host calls use;
//    never called: the target without its host.
// A public function that has a target without a host gets the given target's host. The host is
// "llvm" when the given target has none.
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/specialize.h"

namespace tessera {
namespace transform {
namespace {

// Calls of module functions from host code and from device code.
class CallSiteClassifier : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::unordered_set<std::string> host, device;

  void VisitExpr_(const CallNode* op) override {
    if (auto* gv = AsPtr<GlobalVarNode>(op->op)) (device_ ? device : host).insert(gv->name_hint);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return StmtExprVisitor::VisitStmt_(op);
    InDevice([&] { StmtExprVisitor::VisitStmt_(op); });
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "thread_extent" && op->attr_key != "virtual_thread") {
      return StmtExprVisitor::VisitStmt_(op);
    }
    InDevice([&] { StmtExprVisitor::VisitStmt_(op); });
  }

 private:
  template <typename F>
  void InDevice(F f) {
    bool outer = device_;
    device_ = true;
    f();
    device_ = outer;
  }
  bool device_ = false;
};

// Host calls of the functions that got a host copy call the copy.
class HostCallRedirector : public StmtExprMutator {
 public:
  explicit HostCallRedirector(const std::unordered_map<std::string, GlobalVar>& copies)
      : copies_(copies) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* gv = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
    if (device_ || !gv) return e;
    auto it = copies_.find(gv->name_hint);
    if (it == copies_.end()) return e;
    return CallNode::Make(call->dtype, it->second, call->args, call->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return StmtExprMutator::VisitStmt_(op);
    return InDevice([&] { return StmtExprMutator::VisitStmt_(op); });
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "thread_extent" && op->attr_key != "virtual_thread") {
      return StmtExprMutator::VisitStmt_(op);
    }
    return InDevice([&] { return StmtExprMutator::VisitStmt_(op); });
  }

 private:
  template <typename F>
  Stmt InDevice(F f) {
    bool outer = device_;
    device_ = true;
    Stmt s = f();
    device_ = outer;
    return s;
  }
  const std::unordered_map<std::string, GlobalVar>& copies_;
  bool device_ = false;
};

ObjectRef HostOf(const ObjectRef& target) {
  if (auto* m = AsPtr<MapNode>(target)) {
    auto it = m->items.find("host");
    if (it != m->items.end()) return it->second;
  }
  return nullptr;
}

ObjectRef WithoutHost(const ObjectRef& target) {
  auto* m = AsPtr<MapNode>(target);
  if (!m || !m->items.count("host")) return target;
  AttrMap items = m->items;
  items.erase("host");
  return MapNode::Make(std::move(items));
}

ObjectRef WithHost(const ObjectRef& target, const ObjectRef& host) {
  auto* m = AsPtr<MapNode>(target);
  if (!m) return target;
  AttrMap items = m->items;
  items["host"] = WithoutHost(host);
  return MapNode::Make(std::move(items));
}

IRModule BindTargetModule(const IRModule& mod, const ObjectRef& target) {
  ObjectRef given_host = HostOf(target);
  ObjectRef host = given_host;
  if (!host) {
    AttrMap llvm;
    llvm["kind"] = StringImmNode::Make("llvm");
    llvm["keys"] = ArrayNode::Make({StringImmNode::Make("cpu")});
    llvm["tag"] = StringImmNode::Make("");
    host = MapNode::Make(std::move(llvm));
  }
  ObjectRef device = WithoutHost(target);

  CallSiteClassifier calls;
  for (const auto& [gv, f] : mod->functions) {
    if (IsPublic(f)) calls.VisitStmt(f->body);
  }
  std::unordered_set<std::string> names;
  for (const auto& [gv, f] : mod->functions) names.insert(gv->name_hint);

  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  std::unordered_map<std::string, GlobalVar> host_copies;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    PrimFunc g = f;
    auto existing = f->attrs.find("target");
    if (existing != f->attrs.end()) {
      if (given_host && !HostOf(existing->second) && IsPublic(f)) {
        g = f->WithAttr("target", WithHost(existing->second, given_host));
      }
    } else if (f->GetIntAttr("tir.is_host_func", 0) != 0) {
      AttrMap attrs = f->attrs;
      attrs.erase("tir.is_host_func");
      attrs["target"] = WithHost(host, host);
      g = PrimFuncNode::Make(f->params, f->buffer_map, f->body, f->ret_type, std::move(attrs),
                             f->span);
    } else if (IsPublic(f)) {
      g = f->WithAttr("target", target);
    } else {
      bool from_host = calls.host.count(gv->name_hint) > 0;
      bool from_device = calls.device.count(gv->name_hint) > 0;
      g = f->WithAttr("target", from_host && !from_device ? host : device);
      if (from_host && from_device) {
        std::string name = gv->name_hint + "_host";
        for (int i = 1; names.count(name); ++i) {
          name = gv->name_hint + "_host_" + std::to_string(i);
        }
        names.insert(name);
        GlobalVar copy = GlobalVarNode::Make(name);
        host_copies[gv->name_hint] = copy;
        out.emplace_back(gv, g);
        out.emplace_back(copy, RenewDefs(f)->WithAttr("target", host));
        changed = true;
        continue;
      }
    }
    changed = changed || g != f;
    out.emplace_back(gv, g);
  }
  if (!host_copies.empty()) {
    HostCallRedirector redirect(host_copies);
    for (auto& [gv, f] : out) {
      if (!IsPublic(f)) continue;
      Stmt body = redirect.VisitStmt(f->body);
      if (body != f->body) f = f->WithBody(body);
    }
  }
  if (!changed) return mod;
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass BindTarget(ObjectRef target) {
  return CreateModulePass(
      [target](IRModule mod, const PassContext&) { return BindTargetModule(mod, target); }, 0,
      "tir.BindTarget");
}

}  // namespace transform
}  // namespace tessera
