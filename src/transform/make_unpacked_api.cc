// tir.MakeUnpackedAPI: each public function whose target has a host takes its buffers' data
// pointers as plain parameters (no packed argument array, no argument checks), returns an int32
// status (0), runs under `device_id`/`device_type` attributes of its target's device, and is
// annotated with the host target alone. Calls of public functions pass a data pointer where they
// passed a DLTensor made by T.tvm_stack_make_array, and return int32.
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// The DLPack device type of a target kind (1: CPU).
int DeviceTypeOf(const std::string& kind) {
  if (kind == "cuda" || kind == "nvptx") return 2;
  if (kind == "opencl") return 4;
  if (kind == "vulkan") return 7;
  if (kind == "metal") return 8;
  if (kind == "rocm") return 10;
  if (kind == "ext_dev") return 12;
  if (kind == "webgpu") return 15;
  if (kind == "hexagon") return 16;
  return 1;
}

// Calls of the public functions: a DLTensor argument becomes its data pointer, the call int32.
class PublicCallRewriter : public StmtExprMutator {
 public:
  explicit PublicCallRewriter(const std::unordered_set<std::string>& names) : names_(names) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* gv = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
    if (!gv || !names_.count(gv->name_hint)) return e;
    std::vector<Expr> args;
    bool changed = call->dtype != DataType::Int(32);
    for (const Expr& a : call->args) {
      auto* inner = AsPtr<CallNode>(a);
      if (inner && inner->is_op("tir.tvm_stack_make_array") && !inner->args.empty()) {
        args.push_back(inner->args[0]);
        changed = true;
      } else {
        args.push_back(a);
      }
    }
    if (!changed) return e;
    return CallNode::Make(DataType::Int(32), call->op, std::move(args), call->span);
  }

 private:
  const std::unordered_set<std::string>& names_;
};

PrimFunc Unpack(const PrimFunc& f) {
  // A calling convention other than the default one: already lowered.
  auto cc = f->attrs.find("calling_conv");
  if (cc != f->attrs.end()) {
    auto* i = AsPtr<IntImmNode>(cc->second);
    auto* s = AsPtr<StringImmNode>(cc->second);
    if ((i && i->value != 0) || (s && s->value != "default")) return f;
  }
  if (!IsPublic(f)) return f;  // internal functions keep their parameters
  auto t = f->attrs.find("target");
  if (t == f->attrs.end()) {
    TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
        << "tir.MakeUnpackedAPI: the public function " << f->GetStrAttr("global_symbol")
        << " has no \"target\" attribute, so it is unknown which device it runs on; give it "
           "one (T.func_attr({\"target\": T.target(\"llvm\", host=\"llvm\")}))";
  }
  auto* target = AsPtr<MapNode>(t->second);
  if (target == nullptr) return f;
  auto host = target->items.find("host");
  if (host == target->items.end()) return f;  // no host: already lowered

  std::vector<Var> params;
  for (const Var& p : f->params) {
    Buffer b = f->GetBuffer(p);
    params.push_back(b ? b->data : p);
  }
  Stmt body = SeqStmtNode::Make(
      {f->body, EvaluateNode::Make(CallNode::Make(DataType::Int(32), OpNode::Get("tir.ret"),
                                                  {IntImmNode::Make(DataType::Int(32), 0)}))});
  if (!f->buffer_map.empty()) {
    ObjectRef node = StringImmNode::Make("default");
    body =
        AttrStmtNode::Make(node, "device_type", Int32(DeviceTypeOf(TargetKindOf(t->second))), body);
    body = AttrStmtNode::Make(node, "device_id", Int32(0), body);
  }
  AttrMap attrs = f->attrs;
  attrs["target"] = host->second;
  return PrimFuncNode::Make(std::move(params), {}, body, DataType::Int(32), std::move(attrs),
                            f->span);
}

IRModule MakeUnpackedAPIModule(IRModule mod, const PassContext&) {
  std::unordered_set<std::string> public_names;
  for (const auto& [gv, f] : mod->functions) {
    if (IsPublic(f)) public_names.insert(gv->name_hint);
  }
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    PrimFunc g = f;
    if (!public_names.empty()) {
      Stmt body = PublicCallRewriter(public_names).VisitStmt(f->body);
      if (body != f->body) g = f->WithBody(body);
    }
    g = Unpack(g);
    changed = changed || g != f;
    out.emplace_back(gv, g);
  }
  if (!changed) return mod;
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass MakeUnpackedAPI() { return CreateModulePass(MakeUnpackedAPIModule, 0, "tir.MakeUnpackedAPI"); }
TESSERA_REGISTER_PASS("tir.MakeUnpackedAPI", MakeUnpackedAPI);

}  // namespace transform
}  // namespace tessera
