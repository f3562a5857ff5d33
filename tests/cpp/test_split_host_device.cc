// tir.SplitHostDevice and tir.LowerDeviceKernelLaunch (TVM's rules) from C++: the kernel's
// parameters (handles first, then by name), the buffers it declares again, fresh kernel names,
// and the launch arguments written in the caller's terms.
#include <gtest/gtest.h>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

ObjectRef Target(const std::string& kind, const std::string& host = "") {
  AttrMap items;
  items["kind"] = StringImmNode::Make(kind);
  if (!host.empty()) items["host"] = Target(host);
  return MapNode::Make(std::move(items));
}

// fn(A, zeta, alpha): T.attr(cuda, "target"): launch threadIdx.x over alpha; A[tx] = zeta
struct Program {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(8)});
  Var zeta = VarNode::Make("zeta", kI32);
  Var alpha = VarNode::Make("alpha", kI32);
  Var tx = VarNode::Make("tx", kI32);
  IRModule Module(const std::string& device, std::vector<std::string> other_names = {}) const {
    IterVar iv = IterVarNode::Make(RangeNode::Make(Int32(0), alpha), tx,
                                   IterVarType::kThreadIndex, "threadIdx.x");
    Stmt store = BufferStoreNode::Make(a, CastNode::Make(kF32, zeta), {tx});
    Stmt launch = AttrStmtNode::Make(iv, "thread_extent", alpha, store);
    Stmt region = AttrStmtNode::Make(Target(device), "target", Int32(0), launch);
    AttrMap attrs;
    attrs["global_symbol"] = StringImmNode::Make("fn");
    attrs["target"] = Target("cuda", "c");
    std::vector<std::pair<GlobalVar, PrimFunc>> funcs;
    funcs.emplace_back(GlobalVarNode::Make("fn"),
                       PrimFuncNode::Make({a->data, zeta, alpha}, {},
                                          DeclBufferNode::Make(a, region), DataType::Void(),
                                          attrs));
    for (const std::string& name : other_names) {
      funcs.emplace_back(GlobalVarNode::Make(name),
                         PrimFuncNode::Make({}, {}, EvaluateNode::Make(Int32(0))));
    }
    return IRModuleNode::Make(std::move(funcs));
  }
};

TEST(SplitHostDevice, KernelParamsAreHandlesThenNamesAndBuffersAreDeclaredAgain) {
  Program p;
  IRModule out = transform::SplitHostDevice()->fn(p.Module("cuda"), {});
  PrimFunc kernel = out->Lookup("fn_kernel");
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(kernel->params.size(), 3u);
  EXPECT_TRUE(kernel->params[0]->dtype.is_handle());
  EXPECT_EQ(kernel->params[1]->name, "alpha");
  EXPECT_EQ(kernel->params[2]->name, "zeta");
  EXPECT_TRUE(kernel->ret_type.is_void());
  EXPECT_EQ(kernel->attrs.count("global_symbol"), 0u);
  EXPECT_EQ(kernel->GetIntAttr("tir.is_global_func"), 1);
  // The kernel defines its own variables: none is the host's.
  for (const Var& param : kernel->params) {
    EXPECT_NE(param.get(), p.alpha.get());
    EXPECT_NE(param.get(), p.zeta.get());
  }
  auto* decl = AsPtr<DeclBufferNode>(kernel->body);
  ASSERT_NE(decl, nullptr);
  EXPECT_EQ(decl->buffer->data.get(), kernel->params[0].get());
  // The host calls the kernel with its own variables in the kernel's parameter order.
  auto* host_decl = AsPtr<DeclBufferNode>(out->Lookup("fn")->body);
  ASSERT_NE(host_decl, nullptr);
  auto* eval = AsPtr<EvaluateNode>(host_decl->body);
  ASSERT_NE(eval, nullptr);
  auto* call = AsPtr<CallNode>(eval->value);
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 3u);
  EXPECT_EQ(call->args[0].get(), p.a->data.get());
  EXPECT_EQ(call->args[1].get(), p.alpha.get());
  EXPECT_EQ(call->args[2].get(), p.zeta.get());
}

TEST(SplitHostDevice, TakenKernelNameGetsASuffix) {
  Program p;
  IRModule out = transform::SplitHostDevice()->fn(p.Module("cuda", {"fn_kernel"}), {});
  EXPECT_NE(out->Lookup("fn_kernel_1"), nullptr);
  EXPECT_EQ(out->Lookup("fn_kernel")->params.size(), 0u);  // the other function, unchanged
}

TEST(SplitHostDevice, CpuKernelReturnsAStatus) {
  Program p;
  IRModule out = transform::SplitHostDevice()->fn(p.Module("c"), {});
  PrimFunc kernel = out->Lookup("fn_kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->ret_type, kI32);
  auto* host_decl = AsPtr<DeclBufferNode>(out->Lookup("fn")->body);
  ASSERT_NE(host_decl, nullptr);
  auto* let = AsPtr<LetStmtNode>(host_decl->body);
  ASSERT_NE(let, nullptr);
  EXPECT_NE(AsPtr<AssertStmtNode>(let->body), nullptr);
}

TEST(LowerDeviceKernelLaunch, LaunchExtentsAreWrittenInTheCallersTerms) {
  Program p;
  IRModule split = transform::SplitHostDevice()->fn(p.Module("cuda"), {});
  // As after MakePackedAPI: the host function's target is its host.
  split = split->WithFunction(split->GetGlobalVar("fn"),
                              split->Lookup("fn")->WithAttr("target", Target("c")));
  IRModule out = transform::LowerDeviceKernelLaunch()->fn(split, {});
  auto* host_decl = AsPtr<DeclBufferNode>(out->Lookup("fn")->body);
  ASSERT_NE(host_decl, nullptr);
  auto* eval = AsPtr<EvaluateNode>(host_decl->body);
  ASSERT_NE(eval, nullptr);
  auto* call = AsPtr<CallNode>(eval->value);
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->is_op("tir.tvm_call_packed"));
  ASSERT_EQ(call->args.size(), 5u);  // name, 3 arguments, threadIdx.x's extent
  EXPECT_EQ(AsPtr<StringImmNode>(call->args[0])->value, "fn_kernel");
  EXPECT_EQ(call->args[4].get(), p.alpha.get());
  PrimFunc kernel = out->Lookup("fn_kernel");
  EXPECT_EQ(kernel->GetIntAttr("calling_conv"), 2);
  EXPECT_EQ(kernel->GetStrAttr("global_symbol"), "fn_kernel");
}

}  // namespace
}  // namespace tessera
