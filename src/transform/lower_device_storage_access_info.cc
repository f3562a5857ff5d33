// tir.LowerDeviceStorageAccessInfo: allocations in a tagged storage scope ("global.vtcm",
// "local.ext"; any scope with a suffix after its rank except ".dyn") are special memories whose
// facts (MemoryInfo: the unit of addressing, the address the host sees) the target registers.
//  - With a head address, the allocation becomes `let data = head_address` (the memory exists
//    already; the host addresses it there).
//  - Without one, the host cannot address it: the allocation (and a DeclBuffer of it) is
//    dropped; only device code refers to it.
//  - T.tvm_access_ptr(...) becomes T.address_of(data[offset]); in a tagged memory, an access
//    pointer of a non-handle type is the offset counted in the memory's units.
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// The tag of a storage scope: what follows its rank ("global.vtcm" -> ".vtcm"); "" for an
// untagged or unknown scope.
std::string ScopeTag(const std::string& scope) {
  static const char* const kRanks[] = {
      "global",          "shared",           "warp",           "local",   "wmma.matrix_a",
      "wmma.matrix_b",   "wmma.accumulator", "texture",        "amx.tmm", "m16n8k8.matrixA",
      "m16n8k8.matrixB", "m16n8k8.matrixC",  "metal.simdgroup"};
  for (const char* rank : kRanks) {
    std::string r(rank);
    if (scope.compare(0, r.size(), r) == 0) return scope.substr(r.size());
  }
  return "";
}

// T.address_of(data[offset]) through a buffer of `dtype`'s elements over `data`.
Expr AddressOffset(const Var& data, DataType dtype, Expr offset) {
  if (dtype.lanes() != 1) {
    offset = MulE(offset, IntImmNode::Make(offset->dtype, dtype.lanes()));
    offset = RampNode::Make(offset, IntImmNode::Make(offset->dtype, 1), dtype.lanes());
  }
  Expr extent = AddE(offset, IntImmNode::Make(offset->dtype.element_of(), 1));
  Buffer view = BufferNode::Make(data, dtype.element_of(), {extent}, {}, nullptr, data->name);
  return CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                        {BufferLoadNode::Make(view, {offset})});
}

class StorageAccessInfoLowerer : public StmtExprMutator {
 public:
  explicit StorageAccessInfoLowerer(const MemoryInfoLookup& lookup) : lookup_(lookup) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    std::string scope = op->buffer_var->pointer ? op->buffer_var->pointer->scope : "global";
    std::string tag = ScopeTag(scope);
    if (tag.empty() || tag == ".dyn") return StmtExprMutator::VisitStmt_(op);
    std::optional<MemoryInfo> info = lookup_ ? lookup_(scope) : std::nullopt;
    if (!info) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerDeviceStorageAccessInfo: no memory info is registered for the storage "
             "scope \""
          << scope << "\" of " << op->buffer_var->name << " (register a function returning a "
          << "MemoryInfo as \"tvm.info.mem." << scope << "\")";
    }
    if (!infos_.emplace(op->buffer_var.get(), *info).second) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerDeviceStorageAccessInfo: " << op->buffer_var->name
          << " is allocated twice in the storage scope \"" << scope << "\"";
    }
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    if (info->head_address) {
      return LetStmtNode::Make(alloc->buffer_var, info->head_address, alloc->body, alloc->span);
    }
    return alloc->body;
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* decl = AsPtr<DeclBufferNode>(s);
    auto it = infos_.find(decl->buffer->data.get());
    if (it != infos_.end() && !it->second.head_address) return decl->body;
    return s;
  }

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    if (!call->is_op("tir.tvm_access_ptr")) return e;
    if (call->args.size() != 5) {
      TESSERA_THROW_KIND(call->span, ErrorKind::kValue)
          << "T.tvm_access_ptr takes 5 arguments (type, data, offset, extent, rw_mask), got "
          << call->args.size();
    }
    DataType dtype = call->args[0]->dtype;
    auto* data = AsPtr<VarNode>(call->args[1]);
    if (!data) {
      TESSERA_THROW_KIND(call->span, ErrorKind::kValue)
          << "T.tvm_access_ptr: the data argument must be a buffer's data variable";
    }
    Var var = std::static_pointer_cast<VarNode>(call->args[1]);
    Expr offset = call->args[2];
    auto it = infos_.find(data);
    if (it != infos_.end() && !call->dtype.is_handle()) {
      int64_t bits = static_cast<int64_t>(dtype.bits()) * dtype.lanes();
      if (bits == 0 || it->second.unit_bits % bits != 0) {
        TESSERA_THROW_KIND(call->span, ErrorKind::kValue)
            << "tir.LowerDeviceStorageAccessInfo: the unit of " << var->name << "'s memory ("
            << it->second.unit_bits << " bits) is not a multiple of its " << dtype << " elements";
      }
      Expr units =
          DivNode::Make(offset, IntImmNode::Make(offset->dtype, it->second.unit_bits / bits));
      return CastTo(call->dtype, analyzer_.Simplify(units));
    }
    if (it != infos_.end() && !it->second.head_address) {
      TESSERA_THROW_KIND(call->span, ErrorKind::kValue)
          << "tir.LowerDeviceStorageAccessInfo: " << var->name
          << " has no address the host can use (its memory info has no head address)";
    }
    if (!call->dtype.is_handle()) {
      TESSERA_THROW_KIND(call->span, ErrorKind::kValue)
          << "T.tvm_access_ptr of " << var->name << " must have the handle type, got "
          << call->dtype;
    }
    return AddressOffset(var, dtype, offset);
  }

 private:
  const MemoryInfoLookup& lookup_;
  std::unordered_map<const VarNode*, MemoryInfo> infos_;
  arith::Analyzer analyzer_;
};

}  // namespace

Pass LowerDeviceStorageAccessInfo(MemoryInfoLookup lookup) {
  return CreatePrimFuncPass(
      [lookup](PrimFunc f, IRModule, const PassContext&) {
        Stmt body = StorageAccessInfoLowerer(lookup).VisitStmt(f->body);
        return body == f->body ? f : f->WithBody(body);
      },
      0, "tir.LowerDeviceStorageAccessInfo");
}

}  // namespace transform
}  // namespace tessera
