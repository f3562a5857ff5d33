// CodeGenCUDA, allocations: 16-byte alignment for arrays with vector accesses (32 for those
// wmma fragments load from or store to), and "shared.dyn"
// allocations as pointers into the kernel's dynamic shared memory (`extern __shared__`), at the
// offsets of transform::PlanDynamicShared; tir.LowerKernelLaunchCalls passes its size. The
// dynamic memory starts 128-byte aligned, so that an allocation at an offset that is a multiple
// of 32 bytes can hold wmma fragments (which need 256-bit alignment).
#include "tessera/target/codegen_cuda.h"
#include "tessera/transform/gpu_utils.h"

namespace tessera {
namespace codegen {

const char* kCUDADynamicSharedMacro = R"(#ifndef TESSERA_DYNAMIC_SHARED
#define TESSERA_DYNAMIC_SHARED(name) extern __shared__ __align__(128) unsigned char name[]
#endif
)";

void CodeGenCUDA::PrintDynamicSharedDeclaration(const PrimFunc& func) {
  dynamic_shared_offsets_.clear();
  transform::DynamicSharedLayout layout = transform::PlanDynamicShared(func->body);
  if (layout.offsets.empty()) return;
  uses_dynamic_shared_ = true;
  for (const auto& [var, offset] : layout.offsets) dynamic_shared_offsets_[var] = offset;
  PrintIndent();
  stream_ << "TESSERA_DYNAMIC_SHARED(" << kDynamicSharedName << ");\n";
}

void CodeGenCUDA::VisitStmt_(const AllocateNode* op) {
  if (PrintFragmentAllocation(op)) return;
  auto it = dynamic_shared_offsets_.find(op->buffer_var.get());
  if (it == dynamic_shared_offsets_.end()) {
    aligned_allocation_ = vector_accessed_.count(op->buffer_var.get()) != 0;
    wmma_allocation_ = wmma_accessed_.count(op->buffer_var.get()) != 0;
    CodeGenC::VisitStmt_(op);
    return;
  }
  std::string type = TypeName(op->dtype, op->span);
  std::string name = AllocVarName(op->buffer_var.get());
  PrintIndent();
  stream_ << type << "* " << name << " = (" << type << "*)"
          << OffsetPointer(kDynamicSharedName, it->second) << ";\n";
  PrintStmt(op->body);
}

}  // namespace codegen
}  // namespace tessera
