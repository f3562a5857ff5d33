// The register-tile micro-kernel tensor intrinsics "tessera_ukr_f32_<MR>x<NR>_k<K>", made on
// first use from their name (so that a trace that tensorizes with one replays in any process):
//
//   description: C[i, j] += A[k, i] * B[k, j] for k < K, i < MR, j < NR, with A an MR-row panel
//   packed k-major ([K, MR], contiguous), B an NR-wide panel packed k-major ([K, NR],
//   contiguous) and C the MR x NR tile in "local" memory (any row stride);
//   implementation: tessera_ukr_f32_<MR>x<NR>(K, &A[0, 0], &B[0, 0], &C[0, 0], row stride of C),
//   a C function that the host code generator defines (target/micro_kernel.h).
//
// "tessera_ukr_f32_<MR>x<NR>_k<K>_global" is the same product with C in "global" memory: the
// tile of the output (or of its padded copy) itself, so that the reduction may be split into
// k blocks of K, each call accumulating into what the previous ones left there.
#include <regex>

#include "tessera/ir/expr_ops.h"
#include "tessera/ir/op.h"
#include "tessera/schedule/tensor_intrin.h"
#include "tessera/support/error.h"

namespace tessera {
namespace schedule {

namespace {

struct Params {
  Var a, b, c;
  Buffer A, B, C;
};

Params MakeParams(int mr, int nr, int64_t k, bool strided_c, bool global_c) {
  const DataType f32 = DataType::Float(32), i32 = DataType::Int(32);
  auto buffer = [&](const std::string& name, std::vector<Expr> shape, std::string scope,
                    std::vector<Expr> strides) {
    return BufferNode::Make(VarNode::MakePointer(name, f32, scope), f32, std::move(shape),
                            std::move(strides), VarNode::Make(name + "_elem_offset", i32), name, 64,
                            1);
  };
  auto c = [&](int64_t v) { return IntImmNode::Make(i32, v); };
  Params p;
  p.a = VarNode::Make("a", DataType::Handle());
  p.b = VarNode::Make("b", DataType::Handle());
  p.c = VarNode::Make("c", DataType::Handle());
  p.A = buffer("A", {c(k), c(mr)}, "global", {});
  p.B = buffer("B", {c(k), c(nr)}, "global", {});
  std::vector<Expr> strides;
  if (strided_c) strides = {VarNode::Make("ldc", i32), c(1)};
  p.C = buffer("C", {c(mr), c(nr)}, global_c ? "global" : "local", strides);
  return p;
}

std::vector<Range> Whole(const Buffer& b) {
  std::vector<Range> r;
  for (const Expr& e : b->shape) r.push_back(RangeNode::Make(IntImmNode::Make(e->dtype, 0), e));
  return r;
}

PrimFunc MakeFunc(const Params& p, Stmt body) {
  Block root = BlockNode::Make(
      {},
      {BufferRegionNode::Make(p.C, Whole(p.C)), BufferRegionNode::Make(p.A, Whole(p.A)),
       BufferRegionNode::Make(p.B, Whole(p.B))},
      {BufferRegionNode::Make(p.C, Whole(p.C))}, "root", std::move(body));
  return PrimFuncNode::Make({p.a, p.b, p.c}, {{p.a, p.A}, {p.b, p.B}, {p.c, p.C}},
                            BlockRealizeNode::Make({}, Bool(true), root));
}

PrimFunc MakeDesc(int mr, int nr, int64_t k, bool global_c) {
  const DataType i32 = DataType::Int(32);
  Params p = MakeParams(mr, nr, k, false, global_c);
  Var lk = VarNode::Make("k", i32), li = VarNode::Make("i", i32), lj = VarNode::Make("j", i32);
  Var vi = VarNode::Make("vi", i32), vj = VarNode::Make("vj", i32), vk = VarNode::Make("vk", i32);
  auto dom = [&](int64_t e) {
    return RangeNode::Make(IntImmNode::Make(i32, 0), IntImmNode::Make(i32, e));
  };
  Expr c_ij = BufferLoadNode::Make(p.C, {vi, vj});
  Expr prod = MulE(BufferLoadNode::Make(p.A, {vk, vi}), BufferLoadNode::Make(p.B, {vk, vj}));
  Stmt store = BufferStoreNode::Make(p.C, AddE(c_ij, prod), {vi, vj});
  auto point = [](const Buffer& b, std::vector<Expr> at) {
    std::vector<Range> r;
    for (const Expr& e : at) r.push_back(RangeNode::Make(e, IntImmNode::Make(e->dtype, 1)));
    return BufferRegionNode::Make(b, r);
  };
  Block update = BlockNode::Make({IterVarNode::Make(dom(mr), vi, IterVarType::kDataPar),
                                  IterVarNode::Make(dom(nr), vj, IterVarType::kDataPar),
                                  IterVarNode::Make(dom(k), vk, IterVarType::kCommReduce)},
                                 {point(p.C, {vi, vj}), point(p.A, {vk, vi}), point(p.B, {vk, vj})},
                                 {point(p.C, {vi, vj})}, "update", store);
  Stmt body = BlockRealizeNode::Make({li, lj, lk}, Bool(true), update);
  body = ForNode::Make(lj, IntImmNode::Make(i32, 0), IntImmNode::Make(i32, nr), ForKind::kSerial,
                       body);
  body = ForNode::Make(li, IntImmNode::Make(i32, 0), IntImmNode::Make(i32, mr), ForKind::kSerial,
                       body);
  body =
      ForNode::Make(lk, IntImmNode::Make(i32, 0), IntImmNode::Make(i32, k), ForKind::kSerial, body);
  return MakeFunc(p, body);
}

PrimFunc MakeImpl(int mr, int nr, int64_t k, bool global_c) {
  const DataType i32 = DataType::Int(32);
  Params p = MakeParams(mr, nr, k, true, global_c);
  auto origin = [&](const Buffer& b) {
    return CallNode::Make(
        DataType::Handle(), OpNode::Get("tir.address_of"),
        {BufferLoadNode::Make(b, {IntImmNode::Make(i32, 0), IntImmNode::Make(i32, 0)})});
  };
  Expr call = CallNode::Make(
      DataType::Void(), OpNode::Get("tir.call_extern"),
      {StringImmNode::Make("tessera_ukr_f32_" + std::to_string(mr) + "x" + std::to_string(nr)),
       IntImmNode::Make(i32, k), origin(p.A), origin(p.B), origin(p.C), p.C->strides[0]});
  return MakeFunc(p, EvaluateNode::Make(call));
}

}  // namespace

std::string MicroKernelIntrinName(int mr, int nr, int64_t k, bool global_c) {
  return "tessera_ukr_f32_" + std::to_string(mr) + "x" + std::to_string(nr) + "_k" +
         std::to_string(k) + (global_c ? "_global" : "");
}

TensorIntrin MakeMicroKernelIntrin(int mr, int nr, int64_t k, bool global_c) {
  if (mr < 1 || mr > 16 || nr < 1 || nr > 128 || k < 1 || k > (int64_t{1} << 30)) {
    throw Error("A micro-kernel intrinsic needs 1 <= MR <= 16, 1 <= NR <= 128 and K >= 1, got " +
                    std::to_string(mr) + " x " + std::to_string(nr) + ", K = " + std::to_string(k),
                Span(), ErrorKind::kValue);
  }
  return TensorIntrinNode::Make(MakeDesc(mr, nr, k, global_c), MakeImpl(mr, nr, k, global_c));
}

TensorIntrin MicroKernelIntrinFromName(const std::string& name) {
  static const std::regex kName(
      "tessera_ukr_f32_([0-9]{1,2})x([0-9]{1,3})_k([0-9]{1,10})(_global)?");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return nullptr;
  return MakeMicroKernelIntrin(std::stoi(m[1]), std::stoi(m[2]), std::stoll(m[3]),
                               m[4].matched);
}

}  // namespace schedule
}  // namespace tessera
