// CodeGenCUDA: CUDA C kernels for NVRTC, and the host C that launches them.
#include "tessera/target/codegen_cuda.h"

#include <sstream>

#include "tessera/ir/ir_utils.h"
#include "tessera/runtime_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/escape.h"

namespace tessera {
namespace codegen {
namespace {

// NVRTC compiles without the C library: the prelude gives what the generated code uses.
const char* kCUDAPrelude = R"(typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <typename T>
static __device__ __forceinline__ T __floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
static __device__ __forceinline__ T __floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)";

// cp.async (sm_80 and later; a plain copy before): global -> shared copies that do not wait,
// committed in groups and waited for by count. The CPU emulator (cuda_emu.h) defines its own.
// TIR's reinterpret of a scalar: the bits of one type read as another of the same size.
const char* kCUDABitCastHelper = R"(
template <typename T, typename F>
static __device__ __forceinline__ T __tessera_bitcast(F x) {
  static_assert(sizeof(T) == sizeof(F), "reinterpret between types of one size");
  T r;
  memcpy(&r, &x, sizeof(T));
  return r;
}
)";

const char* kCUDAAsyncCopyHelpers = R"(#ifndef TESSERA_CUDA_EMU_H_
template <int N>
static __device__ __forceinline__ void __tessera_cp_async(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
  unsigned int addr = (unsigned int)__cvta_generic_to_shared(smem);
  if (N == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(addr), "l"(gmem) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" :: "r"(addr), "l"(gmem), "n"(N) : "memory");
  }
#else
  if (N == 16) *(uint4*)smem = *(const uint4*)gmem;
  else if (N == 8) *(uint2*)smem = *(const uint2*)gmem;
  else *(unsigned int*)smem = *(const unsigned int*)gmem;
#endif
}
static __device__ __forceinline__ void __tessera_cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
static __device__ __forceinline__ void __tessera_cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#endif
}
#endif
)";

const char* kThreadTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};

}  // namespace

CodeGenCUDA::CodeGenCUDA(bool loop_addresses) : CodeGenC("CUDA"), loop_addresses_(loop_addresses) {
  for (const char* n : {"min", "max", "half", "nv_bfloat16", "threadIdx", "blockIdx", "blockDim",
                        "gridDim", "warpSize", "__floordiv", "__floormod", kDynamicSharedName}) {
    ReserveGlobalName(n);
  }
}

std::string CodeGenCUDA::Generate(const IRModule& mod) {
  std::ostringstream kernels;
  bool first = true;
  for (const auto& [gv, f] : mod->functions) {
    if (!IsDeviceKernel(f)) continue;
    launch_extents_.clear();
    auto it = f->attrs.find("tessera.thread_extents");
    if (it != f->attrs.end()) {
      if (auto* arr = AsPtr<ArrayNode>(it->second)) {
        for (size_t i = 0; i + 1 < arr->items.size(); i += 2) {
          launch_extents_[AsPtr<StringImmNode>(arr->items[i])->value] =
              std::static_pointer_cast<ExprNode>(arr->items[i + 1]);
        }
      }
    }
    if (!first) Emit("\n");
    first = false;
    AddFunction(SanitizeName(f->GetStrAttr("tessera.kernel_name", gv->name_hint)), f);
  }
  std::ostringstream os;
  if (uses_fp16_) os << "#include <cuda_fp16.h>\n";
  if (uses_bf16_) os << "#include <cuda_bf16.h>\n";
  if (uses_wmma_) os << "#include <mma.h>\n";
  os << kCUDAPrelude;
  if (uses_fp16_words_) os << kCUDAHalfWordHelpers;
  if (uses_bf16_words_) os << kCUDABFloat16WordHelpers;
  if (uses_dynamic_shared_) os << kCUDADynamicSharedMacro;
  if (uses_cp_async_) os << kCUDAAsyncCopyHelpers;
  if (uses_wmma_f16_store_) os << kCUDAWmmaStoreF16Helper;
  if (uses_bitcast_) os << kCUDABitCastHelper;
  for (const auto& [name, definition] : int_pow_helpers_) os << "\n" << definition;
  os << "\n" << Finish();
  return os.str();
}

std::string CodeGenCUDA::TypeName(DataType t, const Span& span) {
  if (t.is_vector()) {
    Unsupported("vector type " + t.ToString() +
                    " as a whole value (vectorized loops print vectors lane by lane)",
                span);
  }
  if (t.is_bfloat16()) {
    uses_bf16_ = true;
    return "nv_bfloat16";
  }
  if (t.is_float() && t.bits() == 16) {
    uses_fp16_ = true;
    return "half";
  }
  return CodeGenC::TypeName(t, span);
}

int64_t CodeGenCUDA::ThreadsPerBlock() const {
  // The block size is known when every threadIdx extent is a constant.
  int64_t threads = 1;
  for (const char* tag : {"threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
    auto it = launch_extents_.find(tag);
    if (it == launch_extents_.end()) continue;
    auto n = AsConstInt(it->second);
    threads = n ? threads * *n : -1;
    if (threads < 0) break;
  }
  return threads;
}

std::string CodeGenCUDA::FunctionPrefix(const PrimFunc& func, bool prototype) {
  const int64_t threads = ThreadsPerBlock();
  std::string bounds =
      threads > 0 ? "__launch_bounds__(" + std::to_string(threads) + ") " : std::string();
  return "extern \"C\" __global__ " + bounds;
}

void CodeGenCUDA::PrintFunctionPrologue(const PrimFunc& func) {
  // After tir.UnifyThreadBinding each thread tag has one variable; declare them all up front so
  // that sibling loops bound to the same tag share the declaration.
  // Loops bound to threads and T.launch_thread both name a thread variable.
  std::multimap<std::string, const VarNode*> vars;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    auto* loop = AsPtr<ForNode>(n);
    if (loop && loop->for_kind == ForKind::kThreadBinding && loop->thread_binding) {
      vars.emplace(loop->thread_binding->thread_tag, loop->loop_var.get());
    }
    auto* attr = AsPtr<AttrStmtNode>(n);
    auto* iv = attr && attr->attr_key == "thread_extent" ? AsPtr<IterVarNode>(attr->node) : nullptr;
    if (iv) vars.emplace(iv->thread_tag, iv->var.get());
  });
  vector_accessed_.clear();
  wmma_accessed_.clear();
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    auto* load = AsPtr<BufferLoadNode>(n);
    auto* store = AsPtr<BufferStoreNode>(n);
    const auto& indices = load ? load->indices : store ? store->indices : std::vector<Expr>{};
    if (!indices.empty() && indices.back()->dtype.is_vector())
      vector_accessed_.insert((load ? load->buffer : store->buffer)->data.get());
    // wmma::load_matrix_sync / store_matrix_sync need 256-bit aligned pointers.
    auto* call = AsPtr<CallNode>(n);
    if (call && call->is_op("tir.tvm_access_ptr") && call->args.size() >= 2) {
      if (auto* v = AsPtr<VarNode>(call->args[1])) wmma_accessed_.insert(v);
    }
  });
  PrintDynamicSharedDeclaration(func);
  for (const char* tag : kThreadTags) {
    auto [begin, end] = vars.equal_range(tag);
    for (auto it = begin; it != end; ++it) {
      if (HasVarName(it->second)) continue;
      std::string type = TypeName(it->second->dtype, it->second->span);
      std::string name = AllocVarName(it->second);
      PrintIndent();
      stream_ << type << " " << name << " = (" << type << ")" << tag << ";\n";
    }
  }
}

std::string CodeGenCUDA::PrintParam(const Var& param) {
  if (param->pointer) {
    return TypeName(param->pointer->element, param->span) + "* __restrict__ " +
           GetVarName(param.get());
  }
  return CodeGenC::PrintParam(param);
}

std::string CodeGenCUDA::AllocationPrefix(const std::string& scope) {
  // Arrays with vector accesses are 16-byte aligned, so that accesses at multiples of their
  // width are aligned too.
  std::string align = wmma_allocation_     ? "__align__(32) "
                      : aligned_allocation_ ? "__align__(16) "
                                            : "";
  if (scope == "shared" || scope == "shared.dyn") return "__shared__ " + align;
  return align;
}

std::string CodeGenCUDA::PrintFloatImm(const FloatImmNode* op) {
  if (op->dtype.bits() == 16) {
    // Through float: half and nv_bfloat16 convert from it.
    auto f32 = FloatImmNode::Make(DataType::Float(32), op->value);
    return "((" + TypeName(op->dtype, op->span) + ")" + CodeGenC::PrintFloatImm(f32.get()) + ")";
  }
  return CodeGenC::PrintFloatImm(op);
}

std::string CodeGenCUDA::PrintScalarBinary(const BinaryNode* op) {
  DataType t = op->a->dtype;
  if (t.is_float() && t.bits() == 16 &&
      (op->kind == NodeKind::kMin || op->kind == NodeKind::kMax)) {
    std::string a = PrintExpr(op->a), b = PrintExpr(op->b);
    return std::string(op->kind == NodeKind::kMin ? "__hmin(" : "__hmax(") + a + ", " + b + ")";
  }
  if (t.is_float() && t.bits() == 32 &&
      (op->kind == NodeKind::kMin || op->kind == NodeKind::kMax)) {
    std::string a = PrintExpr(op->a), b = PrintExpr(op->b);
    return std::string(op->kind == NodeKind::kMin ? "fminf(" : "fmaxf(") + a + ", " + b + ")";
  }
  return CodeGenC::PrintScalarBinary(op);
}

std::string CodeGenCUDA::PrintCallOp(const CallNode* op, const OpNode* callee) {
  const std::string& name = callee->name;
  std::string fragment_call;
  if (PrintFragmentCall(op, name, &fragment_call)) return fragment_call;
  if (name == "tir.tvm_storage_sync") {
    auto* scope = op->args.empty() ? nullptr : AsPtr<StringImmNode>(op->args[0]);
    if (scope && scope->value == "warp") {
      // An optional second argument names the lanes taking part (tir.LowerThreadAllreduce).
      if (op->args.size() == 2) return "__syncwarp(" + StripOuterParens(PrintExpr(op->args[1])) + ")";
      return "__syncwarp()";
    }
    return "__syncthreads()";
  }
  if (name == "tir.tvm_warp_activemask") return "__activemask()";
  if (name == "tir.tvm_warp_shuffle_down" || name == "tir.tvm_warp_shuffle" ||
      name == "tir.tvm_warp_shuffle_up") {
    // (mask, value, lane or delta, width, warp_size): CUDA's __shfl_sync / __shfl_down_sync /
    // __shfl_up_sync take the first four (warp_size only bounds width, as in TVM).
    std::string s = name == "tir.tvm_warp_shuffle"        ? "__shfl_sync("
                    : name == "tir.tvm_warp_shuffle_down" ? "__shfl_down_sync("
                                                          : "__shfl_up_sync(";
    for (size_t i = 0; i < op->args.size() && i < 4; ++i) {
      s += (i ? ", " : "") + StripOuterParens(PrintExpr(op->args[i]));
    }
    return s + ")";
  }
  if (name == "tir.ptx_cp_async" && op->args.size() == 5) {
    // (shared data, offset, global data, offset, bytes), offsets in elements of the call's type.
    auto bytes = AsConstInt(op->args[4]);
    auto* dst = AsPtr<VarNode>(op->args[0]);
    auto* src = AsPtr<VarNode>(op->args[2]);
    if (!bytes || (*bytes != 4 && *bytes != 8 && *bytes != 16) || !dst || !src) {
      Unsupported("ptx_cp_async of other than 4, 8 or 16 bytes between two buffers", op->span);
    }
    uses_cp_async_ = true;
    std::string t = TypeName(op->dtype, op->span);
    return "__tessera_cp_async<" + std::to_string(*bytes) + ">(" +
           OffsetPointerByLoop("(" + t + "*)" + GetVarName(dst), op->args[1]) + ", " +
           OffsetPointerByLoop("(const " + t + "*)" + GetVarName(src), op->args[3]) + ")";
  }
  if (name == "tir.ptx_commit_group") {
    uses_cp_async_ = true;
    return "__tessera_cp_async_commit()";
  }
  if (name == "tir.ptx_wait_group" && op->args.size() == 1) {
    auto n = AsConstInt(op->args[0]);
    if (!n || *n < 0) Unsupported("ptx_wait_group of other than a constant count", op->span);
    uses_cp_async_ = true;
    return "__tessera_cp_async_wait<" + std::to_string(*n) + ">()";
  }
  if (name == "tir.reinterpret" && op->dtype.is_scalar() && op->args.size() == 1 &&
      op->args[0]->dtype.bits() == op->dtype.bits() && !op->dtype.is_narrow_float() &&
      !op->args[0]->dtype.is_narrow_float()) {
    uses_bitcast_ = true;
    return "__tessera_bitcast<" + TypeName(op->dtype, op->span) + ">(" +
           StripOuterParens(PrintExpr(op->args[0])) + ")";
  }
  if (name == "tir.pow" && op->dtype.is_scalar() && (op->dtype.is_int() || op->dtype.is_uint()) &&
      !op->dtype.is_bool() && op->args.size() == 2) {
    // An integer power is exact (CUDA's pow is not, so no detour through floating point).
    std::string type = TypeName(op->dtype, op->span);
    std::string helper = "__tessera_ipow_" + op->dtype.ToString();
    int_pow_helpers_.emplace(helper, IntPowDefinition("static __device__ __forceinline__ ", helper,
                                                      type, op->dtype.is_int()));
    return helper + "(" + StripOuterParens(PrintExpr(op->args[0])) + ", " +
           StripOuterParens(PrintExpr(op->args[1])) + ")";
  }
  if (name == "tir.assume") return "((void)0)";
  if (name == "tir.break") return "break";
  if (name == "tir.continue") return "continue";
  Unsupported(
      "op " + name + (name.rfind("tir.", 0) == 0 ? " (tir.LowerIntrin lowers math ops first)" : ""),
      op->span);
}

void CodeGenCUDA::VisitStmt_(const ForNode* op) {
  if (op->for_kind != ForKind::kThreadBinding) {
    if (op->for_kind == ForKind::kUnrolled) {
      PrintIndent();
      stream_ << "#pragma unroll\n";
    }
    serial_loops_.push_back(op->loop_var.get());
    CodeGenC::VisitStmt_(op);
    serial_loops_.pop_back();
    return;
  }
  if (!IsConstInt(op->min, 0))
    Unsupported("a thread-bound loop that does not start at 0", op->span);
  PrintThreadRegion(op->thread_binding->thread_tag, op->loop_var.get(), op->extent, op->body,
                    op->span);
}

namespace {
/*! \brief The terms of a sum (nested Adds), left to right. */
void AddTerms(const Expr& e, std::vector<Expr>* terms) {
  if (auto* add = AsPtr<AddNode>(e)) {
    AddTerms(add->a, terms);
    AddTerms(add->b, terms);
  } else {
    terms->push_back(e);
  }
}

Expr SumOf(const std::vector<Expr>& terms) {
  Expr sum = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) sum = AddNode::Make(sum, terms[i]);
  return sum;
}
}  // namespace

std::string CodeGenCUDA::OffsetPointerByLoop(const std::string& ptr, const Expr& offset) {
  std::vector<Expr> terms, inner, rest;
  if (loop_addresses_ && !serial_loops_.empty() && offset->dtype.is_scalar()) {
    AddTerms(offset, &terms);
  }
  for (const Expr& t : terms) (UsesVar(t, serial_loops_.back()) ? inner : rest).push_back(t);
  if (inner.empty() || rest.empty()) return ptr + " + " + PrintExpr(offset);
  return "(" + ptr + " + " + PrintExpr(SumOf(rest)) + ") + " + PrintExpr(SumOf(inner));
}

void CodeGenCUDA::VisitStmt_(const AttrStmtNode* op) {
  auto* iv = op->attr_key == "thread_extent" ? AsPtr<IterVarNode>(op->node) : nullptr;
  if (iv == nullptr) {
    CodeGenC::VisitStmt_(op);
    return;
  }
  PrintThreadRegion(iv->thread_tag, iv->var.get(), op->value, op->body, op->span);
}

void CodeGenCUDA::PrintThreadRegion(const std::string& tag, const VarNode* var, const Expr& extent,
                                    const Stmt& body, const Span& span) {
  if (tag.rfind("blockIdx.", 0) != 0 && tag.rfind("threadIdx.", 0) != 0) {
    Unsupported("a loop bound to '" + tag + "'", span);
  }
  // The variable is declared in the prologue; a region shorter than the launch is guarded.
  auto it = launch_extents_.find(tag);
  bool guard = it == launch_extents_.end() ||
               !(it->second == extent || (AsConstInt(it->second) && AsConstInt(extent) &&
                                          *AsConstInt(it->second) == *AsConstInt(extent)));
  if (!guard) {
    PrintStmt(body);
    return;
  }
  PrintIndent();
  stream_ << "if (" << GetVarName(var) << " < " << StripOuterParens(PrintExpr(extent)) << ") {\n";
  int scope = BeginScope();
  PrintStmt(body);
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

std::string CodeGenCUDAHost::TypeName(DataType t, const Span& span) {
  // The host only passes device pointers on; bfloat16 data is opaque 16-bit words to it.
  if (t.is_bfloat16() && t.is_scalar()) return "uint16_t";
  return CodeGenHost::TypeName(t, span);
}

void CodeGenCUDAHost::VisitStmt_(const AllocateNode* op) {
  // Which uses does the allocation have: as a kernel argument, and in host code itself?
  const VarNode* var = op->buffer_var.get();
  bool on_host = false;
  int launches = 0, uses = 0;
  PostOrderVisit(op->body, [&](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n); call && call->is_op("tessera.launch_kernel")) {
      for (size_t i = 8; i < call->args.size(); ++i) launches += call->args[i].get() == var;
    }
    if (n.get() == var) ++uses;
    if (auto* load = AsPtr<BufferLoadNode>(n); load && load->buffer->data.get() == var) on_host = true;
    if (auto* store = AsPtr<BufferStoreNode>(n); store && store->buffer->data.get() == var) on_host = true;
  });
  if (launches == 0) {  // host memory of host code
    CodeGenHost::VisitStmt_(op);
    return;
  }
  if (on_host || uses > launches) {
    Unsupported("the buffer " + var->name +
                    " used both by host code and by a CUDA kernel (bind the host loops that use "
                    "it to threads, or pass the data as an argument)",
                op->span);
  }
  std::string size = "(size_t)1";
  for (const Expr& e : op->extents) size += " * (size_t)" + PrintExpr(e);
  std::string type = TypeName(op->dtype, op->span);
  std::string name = AllocVarName(var);
  PrintIndent();
  stream_ << type << "* TESSERA_CUDA_WORKSPACE " << name << " = (" << type
          << "*)tessera_cuda_alloc_workspace(" << size << " * sizeof(" << type << "), \""
          << var->name << "\");\n";
  PrintIndent();
  stream_ << "if (" << name << " == NULL) {\n";
  int scope = BeginScope();
  PrintErrorReturn(op->span);
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
  PrintStmt(op->body);
}

std::string CodeGenCUDAHost::PrintCallOp(const CallNode* op, const OpNode* callee) {
  if (callee->name != "tessera.launch_kernel") return CodeGenHost::PrintCallOp(op, callee);
  // name, grid x/y/z, block x/y/z, dynamic shared bytes, then the kernel's arguments.
  std::string s = "if (tessera_cuda_launch(" + PrintExpr(op->args[0]);
  for (size_t i = 1; i < 8; ++i) s += ", " + PrintExpr(op->args[i]);
  size_t n = op->args.size() - 8;
  if (n == 0) {
    s += ", NULL, 0";
  } else {
    s += ", (void*[]){";
    for (size_t i = 8; i < op->args.size(); ++i) {
      auto* var = AsPtr<VarNode>(op->args[i]);
      if (var == nullptr) Unsupported("a kernel argument that is not a variable", op->span);
      s += std::string(i > 8 ? ", " : "") + "(void*)&" + GetVarName(var);
    }
    s += "}, " + std::to_string(n);
  }
  return s + ") != 0) return -1";
}

}  // namespace codegen

bool IsDeviceKernel(const PrimFunc& func) {
  return func->GetStrAttr("calling_conv") == "device_kernel";
}

std::string CodeGenCUDA(const IRModule& mod, bool loop_addresses) {
  return codegen::CodeGenCUDA(loop_addresses).Generate(mod);
}

namespace {

// The launcher the runtime installs when it loads the library (tessera/runtime/cuda).
const char* kLaunchPrelude = R"(
/* ---- CUDA kernels: the runtime installs the launcher when it loads this library ---- */
typedef int32_t (*TesseraCudaLauncher)(void* module, const char* kernel, const int64_t* dims,
                                      void** args, int32_t num_args, char* err, int32_t err_len);
TESSERA_EXPORT TesseraCudaLauncher __tessera_cuda_launcher = NULL;
TESSERA_EXPORT void* __tessera_cuda_module = NULL;

/* Device memory for the intermediate buffers that kernels share (allocated by the runtime on the
 * launch device, freed when the variable leaves scope, after the device is idle). */
typedef void* (*TesseraCudaAlloc)(void* module, size_t bytes, char* err, int32_t err_len);
typedef void (*TesseraCudaFree)(void* module, void* ptr);
TESSERA_EXPORT TesseraCudaAlloc __tessera_cuda_alloc = NULL;
TESSERA_EXPORT TesseraCudaFree __tessera_cuda_free = NULL;

static void* tessera_cuda_alloc_workspace(size_t bytes, const char* name) {
  char err[1024];
  err[0] = 0;
  void* p = __tessera_cuda_alloc ? __tessera_cuda_alloc(__tessera_cuda_module, bytes, err,
                                                        (int32_t)sizeof(err))
                                 : NULL;
  if (p == NULL) {
    tessera_set_error("cannot allocate %zu bytes of device memory for %s: %s", bytes, name,
                      err[0] ? err : "the library was loaded without tessera's CUDA runtime");
  }
  return p;
}
static void tessera_cuda_free_workspace(void* slot) {
  if (*(void**)slot != NULL && __tessera_cuda_free != NULL)
    __tessera_cuda_free(__tessera_cuda_module, *(void**)slot);
}
#define TESSERA_CUDA_WORKSPACE __attribute__((cleanup(tessera_cuda_free_workspace)))

static int32_t tessera_cuda_launch(const char* kernel, int64_t gx, int64_t gy, int64_t gz,
                                   int64_t bx, int64_t by, int64_t bz, int64_t shared_bytes,
                                   void** args, int32_t num_args) {
  if (__tessera_cuda_launcher == NULL) {
    tessera_set_error("cannot launch the CUDA kernel %s: the library was loaded without "
                      "tessera's CUDA runtime", kernel);
    return -1;
  }
  int64_t dims[7] = {gx, gy, gz, bx, by, bz, shared_bytes};
  char err[1024];
  err[0] = 0;
  int32_t rc = __tessera_cuda_launcher(__tessera_cuda_module, kernel, dims, args, num_args, err,
                                       (int32_t)sizeof(err));
  if (rc != 0) tessera_set_error("%s", err[0] ? err : "the CUDA kernel launch failed");
  return rc;
}
)";

}  // namespace

HostSource CodeGenCUDAHost(const IRModule& mod, const std::string& cuda_source,
                           const std::string& ptx) {
  std::vector<std::pair<GlobalVar, PrimFunc>> host;
  for (const auto& [gv, f] : mod->functions) {
    if (!IsDeviceKernel(f)) host.emplace_back(gv, f);
  }
  codegen::CodeGenCUDAHost cg;
  HostSource out = cg.Generate(IRModuleNode::Make(host, mod->attrs));
  const std::string include = "#include <tessera/runtime.h>\n";
  size_t at = out.code.find(include);
  TESSERA_ICHECK(at != std::string::npos) << "host C without the runtime include";
  out.code.insert(at + include.size(), kLaunchPrelude);
  // A C literal of `text`, one source line of the literal per line of the text.
  auto literal = [](const std::string& text) {
    std::string s;
    for (size_t at = 0;;) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) return s + Quote(text.substr(at), QuoteStyle::kC);
      s += Quote(text.substr(at, nl + 1 - at), QuoteStyle::kC) + "\n";
      at = nl + 1;
    }
  };
  out.code += "TESSERA_EXPORT const char __tessera_cuda_source[] = " + literal(cuda_source) + ";\n";
  out.code += "TESSERA_EXPORT const char __tessera_cuda_ptx[] = " + literal(ptx) + ";\n";
  return out;
}

}  // namespace tessera
