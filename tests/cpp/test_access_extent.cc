// PointerAccessExtents: which accesses the DSL's argument checks count. Only those that every
// call reaches raise a parameter's extent; one that may not run raises nothing.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace {

DataType T(const char* name) { return DataType::Parse(name); }
Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }
Var Ptr(const std::string& name) { return VarNode::MakePointer(name, T("int32"), "global"); }

Buffer Flat(const Var& ptr) {
  return BufferNode::Make(ptr, ptr->pointer->element, {I32(2147483647)}, {}, nullptr, ptr->name);
}
Expr Load(const Buffer& buf, Expr index, Expr predicate = nullptr) {
  return BufferLoadNode::Make(buf, {std::move(index)}, std::move(predicate));
}
Stmt Store(const Buffer& buf, Expr value, Expr index, Expr predicate = nullptr) {
  return BufferStoreNode::Make(buf, std::move(value), {std::move(index)}, std::move(predicate));
}
Expr Ramp(int64_t base, int lanes) { return RampNode::Make(I32(base), I32(1), lanes); }
Stmt Seq(std::vector<Stmt> s) { return SeqStmtNode::Make(std::move(s)); }
Stmt Return() {
  return EvaluateNode::Make(CallNode::Make(T("int32"), OpNode::Get("tir.ret"), {I32(0)}));
}
Expr ConstMask(std::vector<int> lanes) {
  std::vector<Expr> on;
  for (int l : lanes) on.push_back(IntImmNode::Make(DataType::Bool(), l));
  return CallNode::Make(DataType::Bool(static_cast<int>(lanes.size())),
                        OpNode::Get("dsl.const_mask"), std::move(on));
}

// The extents of kernel(n, a, out) with `body` over a's and out's buffers.
std::vector<int64_t> Extents(
    const std::function<Stmt(const Var&, const Buffer&, const Buffer&)>& body) {
  Var n = VarNode::Make("n", T("int32")), a = Ptr("a"), out = Ptr("out");
  Buffer ab = Flat(a), ob = Flat(out);
  Stmt s = DeclBufferNode::Make(ab, DeclBufferNode::Make(ob, body(n, ab, ob)));
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("kernel");
  attrs["tessera.is_entry"] = I32(1);
  PrimFunc f = PrimFuncNode::Make({n, a, out}, {}, s, DataType::Void(), std::move(attrs));
  IRModule mod = IRModuleNode::Make({{GlobalVarNode::Make("kernel"), f}});
  return transform::PointerAccessExtents(mod, "kernel");
}

TEST(PointerAccessExtents, ConstantIndexUnderAConditionRaisesNothing) {
  // out[3] = 1; if (0 < n) { out[100] = a[7]; } else { a[50] = 2; }
  auto e = Extents([](const Var& n, const Buffer& a, const Buffer& out) {
    return Seq({Store(out, I32(1), I32(3)),
                IfThenElseNode::Make(LTNode::Make(I32(0), n), Store(out, Load(a, I32(7)), I32(100)),
                                     Store(a, I32(2), I32(50)))});
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 0, 4}));
}

TEST(PointerAccessExtents, ConstantIndexAfterAPossibleReturnRaisesNothing) {
  // out[0] = a[2]; if (0 < n) return; out[50] = 1
  auto e = Extents([](const Var& n, const Buffer& a, const Buffer& out) {
    return Seq({Store(out, Load(a, I32(2)), I32(0)),
                IfThenElseNode::Make(LTNode::Make(I32(0), n), Return()),
                Store(out, I32(1), I32(50))});
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 3, 1}));
}

TEST(PointerAccessExtents, ScalarSelectGuardsAndVectorSelectDoesNot) {
  // out[0] = 0 < n ? a[40] : 7  (C's ?: evaluates one operand)
  auto e = Extents([](const Var& n, const Buffer& a, const Buffer& out) {
    return Store(out, SelectNode::Make(LTNode::Make(I32(0), n), Load(a, I32(40)), I32(7)), I32(0));
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 0, 1}));
  // out[0:8] = __vsel(a[0:8], a[8:16], mask): both loads run.
  e = Extents([](const Var&, const Buffer& a, const Buffer& out) {
    Expr mask = LTNode::Make(BroadcastNode::Make(I32(0), 8), Load(a, Ramp(0, 8)));
    return Store(out, SelectNode::Make(mask, Load(a, Ramp(0, 8)), Load(a, Ramp(8, 8))), Ramp(0, 8));
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 16, 8}));
}

TEST(PointerAccessExtents, MaskedStoreCountsOnlyConstantLanes) {
  // out[8:16] = a[0:8] under a mask known at run time: no lane is sure to be written.
  auto e = Extents([](const Var&, const Buffer& a, const Buffer& out) {
    Expr mask = LTNode::Make(BroadcastNode::Make(I32(0), 8), Load(a, Ramp(0, 8)));
    return Store(out, Load(a, Ramp(0, 8)), Ramp(8, 8), mask);
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 8, 0}));
  // Under the constant mask 3T5F: lanes 8 .. 10.
  e = Extents([](const Var&, const Buffer& a, const Buffer& out) {
    return Store(out, Load(a, Ramp(0, 8)), Ramp(8, 8), ConstMask({1, 1, 1, 0, 0, 0, 0, 0}));
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 8, 11}));
}

TEST(PointerAccessExtents, LoopThatMayRunNoIterationGuardsItsBody) {
  Var i = VarNode::Make("i", T("int32"));
  // for (i = 0; i < n; ++i) out[5] = i
  auto e = Extents([&](const Var& n, const Buffer&, const Buffer& out) {
    return ForNode::Make(i, I32(0), n, ForKind::kSerial, Store(out, i, I32(5)));
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 0, 0}));
  // for (i = n; i < n + 4; ++i) out[5] = i: four iterations whatever n is.
  e = Extents([&](const Var& n, const Buffer&, const Buffer& out) {
    return ForNode::Make(i, n, I32(4), ForKind::kSerial, Store(out, i, I32(5)));
  });
  EXPECT_EQ(e, (std::vector<int64_t>{0, 0, 6}));
}

}  // namespace
}  // namespace tessera
