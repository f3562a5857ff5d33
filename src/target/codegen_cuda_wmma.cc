// CUDA code generation of tensor-core fragments: buffers in the "wmma.matrix_a",
// "wmma.matrix_b" and "wmma.accumulator" scopes are arrays of nvcuda::wmma fragments, and TVM's
// fragment builtins (tvm_fill_fragment, tvm_load_matrix_sync, tvm_mma_sync,
// tvm_store_matrix_sync) are nvcuda::wmma calls on them.
#include "tessera/support/error.h"
#include "tessera/target/codegen_cuda.h"

namespace tessera {
namespace codegen {
namespace {

struct FragmentShape {
  int64_t m = 0, n = 0, k = 0;
  std::string layout;
};

/*! \brief The shape and layout the fragment calls on `buffer` give it. */
FragmentShape FindFragmentShape(const Stmt& body, const VarNode* buffer) {
  FragmentShape shape;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    auto* call = AsPtr<CallNode>(node);
    if (!call || call->args.empty() || call->args[0].get() != buffer) return;
    bool load = call->is_op("tir.tvm_load_matrix_sync");
    if (!load && !call->is_op("tir.tvm_fill_fragment") && !call->is_op("tir.tvm_store_matrix_sync"))
      return;
    if (call->args.size() < 4) return;
    auto m = AsConstInt(call->args[1]), n = AsConstInt(call->args[2]),
         k = AsConstInt(call->args[3]);
    if (m && n && k) shape.m = *m, shape.n = *n, shape.k = *k;
    if (load && call->args.size() >= 8) {
      if (auto* s = AsPtr<StringImmNode>(call->args[7])) shape.layout = s->value;
    }
  });
  return shape;
}

}  // namespace

// A float32 accumulator fragment stored as float16 (the cast of a float16-output matmul fused
// into the store of its tile). The element order of a wmma fragment is unspecified, so the
// warp stores it as float32 into its own 16 x 16 tile of shared memory, then each lane converts
// 8 consecutive elements of one row and writes them as one 16-byte word (wmma's own contract
// for a float16 store: dst 256-bit aligned, ldm a multiple of 8). WARPS: the warps of the block.
// The emulator's fragments hold the whole tile in every thread: there each thread converts it.
const char* kCUDAWmmaStoreF16Helper = R"(#ifndef TESSERA_CUDA_EMU_H_
template <int WARPS>
static __device__ __forceinline__ void __tessera_wmma_store_f16(
    half* dst, const nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>& f,
    unsigned ldm) {
  __shared__ __align__(32) float tile[WARPS][256];
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  float* t = tile[tid / 32];
  nvcuda::wmma::store_matrix_sync(t, f, 16, nvcuda::wmma::mem_row_major);
  __syncwarp();
  const unsigned row = tid % 32 / 2, col = tid % 2 * 8;
  const float4 lo = *(const float4*)(t + row * 16 + col);
  const float4 hi = *(const float4*)(t + row * 16 + col + 4);
  __half2 h[4] = {__floats2half2_rn(lo.x, lo.y), __floats2half2_rn(lo.z, lo.w),
                  __floats2half2_rn(hi.x, hi.y), __floats2half2_rn(hi.z, hi.w)};
  *(uint4*)(dst + row * ldm + col) = *(const uint4*)h;
  __syncwarp();
}
#else
template <int WARPS>
static inline void __tessera_wmma_store_f16(
    half* dst, const nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>& f,
    unsigned ldm) {
  float t[256];
  nvcuda::wmma::store_matrix_sync(t, f, 16, nvcuda::wmma::mem_row_major);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) dst[r * ldm + c] = __float2half(t[r * 16 + c]);
}
#endif
)";

bool CodeGenCUDA::PrintFragmentAllocation(const AllocateNode* op) {
  const std::string& scope = op->buffer_var->pointer->scope;
  if (scope.rfind("wmma.", 0) != 0) return false;
  std::string use = scope.substr(5);
  if (use != "matrix_a" && use != "matrix_b" && use != "accumulator") {
    Unsupported("the storage scope " + scope, op->span);
  }
  FragmentShape shape = FindFragmentShape(op->body, op->buffer_var.get());
  if (shape.m == 0) {
    Unsupported("the fragment " + op->buffer_var->name +
                    " without a tvm_load_matrix_sync, tvm_fill_fragment or tvm_store_matrix_sync "
                    "giving its shape",
                op->span);
  }
  int64_t count = 1;
  for (const Expr& e : op->extents) {
    auto c = AsConstInt(e);
    if (!c) Unsupported("a fragment of a size known only at run time", op->span);
    count *= *c;
  }
  int64_t tile = use == "matrix_a"   ? shape.m * shape.k
                 : use == "matrix_b" ? shape.k * shape.n
                                     : shape.m * shape.n;
  if (count % tile != 0) {
    Unsupported("the fragment buffer " + op->buffer_var->name + " of " + std::to_string(count) +
                    " elements, not a whole number of " + std::to_string(tile) + "-element tiles",
                op->span);
  }
  uses_wmma_ = true;
  std::string type = "nvcuda::wmma::fragment<nvcuda::wmma::" + use + ", " +
                     std::to_string(shape.m) + ", " + std::to_string(shape.n) + ", " +
                     std::to_string(shape.k) + ", " + TypeName(op->dtype, op->span);
  if (use != "accumulator") {
    type += ", nvcuda::wmma::" + (shape.layout.empty() ? std::string("row_major") : shape.layout);
  }
  type += ">";
  PrintIndent();
  stream_ << type << " " << AllocVarName(op->buffer_var.get()) << "[" << count / tile << "];\n";
  PrintStmt(op->body);
  return true;
}

bool CodeGenCUDA::PrintFragmentCall(const CallNode* op, const std::string& name, std::string* out) {
  auto arg = [&](size_t i) { return PrintExpr(op->args.at(i)); };
  auto need = [&](size_t n) {
    if (op->args.size() != n) Unsupported(name + " with " + std::to_string(op->args.size()) + " arguments", op->span);
  };
  if (name == "tir.tvm_fill_fragment") {
    need(6);
    *out = "nvcuda::wmma::fill_fragment(" + arg(0) + "[" + arg(4) + "], " + arg(5) + ")";
  } else if (name == "tir.tvm_load_matrix_sync") {
    need(8);
    *out = "nvcuda::wmma::load_matrix_sync(" + arg(0) + "[" + arg(4) + "], " + arg(5) + ", " +
           arg(6) + ")";
  } else if (name == "tir.tvm_store_matrix_sync") {
    need(8);
    auto* layout = AsPtr<StringImmNode>(op->args[7]);
    // The element types of the fragment and of the memory it is stored to.
    auto* frag = AsPtr<VarNode>(op->args[0]);
    auto* ptr = AsPtr<CallNode>(op->args[5]);
    auto* dst = ptr && ptr->is_op("tir.tvm_access_ptr") && ptr->args.size() >= 2
                    ? AsPtr<VarNode>(ptr->args[1])
                    : nullptr;
    if (frag && frag->pointer && dst && dst->pointer &&
        frag->pointer->element != dst->pointer->element) {
      const int64_t threads = ThreadsPerBlock();
      if (frag->pointer->element != DataType::Float(32) ||
          dst->pointer->element != DataType::Float(16) ||
          (layout && layout->value == "col_major") || threads <= 0 || threads % 32 != 0) {
        Unsupported("tvm_store_matrix_sync of a " + frag->pointer->element.ToString() +
                        " fragment to " + dst->pointer->element.ToString() +
                        " memory (only float32 to float16, row-major, in a block of a constant "
                        "number of whole warps)",
                    op->span);
      }
      uses_wmma_ = uses_wmma_f16_store_ = true;
      *out = "__tessera_wmma_store_f16<" + std::to_string(threads / 32) + ">(" + arg(5) + ", " +
             arg(0) + "[" + arg(4) + "], " + arg(6) + ")";
      return true;
    }
    std::string mem = layout && layout->value == "col_major" ? "nvcuda::wmma::mem_col_major"
                                                             : "nvcuda::wmma::mem_row_major";
    *out = "nvcuda::wmma::store_matrix_sync(" + arg(5) + ", " + arg(0) + "[" + arg(4) + "], " +
           arg(6) + ", " + mem + ")";
  } else if (name == "tir.tvm_mma_sync") {
    need(8);
    *out = "nvcuda::wmma::mma_sync(" + arg(0) + "[" + arg(1) + "], " + arg(2) + "[" + arg(3) +
           "], " + arg(4) + "[" + arg(5) + "], " + arg(6) + "[" + arg(7) + "])";
  } else if (name == "tir.tvm_access_ptr") {
    // tvm_access_ptr(type, data, offset, extent, rw_mask): the address of data[offset].
    need(5);
    *out = "(" + arg(1) + " + " + arg(2) + ")";
  } else {
    return false;
  }
  uses_wmma_ = uses_wmma_ || name != "tir.tvm_access_ptr";
  return true;
}

}  // namespace codegen
}  // namespace tessera
