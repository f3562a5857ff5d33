// Helpers of the GPU passes: thread-bound loops and memory scopes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {
namespace transform {

/*! \brief The thread tag of a loop bound to blockIdx/threadIdx/vthread, or "" for other loops. */
inline std::string ThreadTag(const ForNode* op) {
  if (op->for_kind != ForKind::kThreadBinding || !op->thread_binding) return "";
  return op->thread_binding->thread_tag;
}

/*! \brief The thread variable of `T.launch_thread` (an AttrStmt "thread_extent" on an IterVar),
 *  or null for other attributes. */
inline const IterVarNode* LaunchedThread(const AttrStmtNode* op) {
  if (op->attr_key != "thread_extent") return nullptr;
  return AsPtr<IterVarNode>(op->node);
}

/*! \brief Whether a pointer variable points into memory shared by a thread block. */
inline bool IsSharedScope(const std::string& scope) {
  return scope == "shared" || scope == "shared.dyn";
}

/*! \brief Where the "shared.dyn" allocations of a kernel live in its dynamic shared memory:
 *  packed in program order, each at a 16-byte aligned byte offset, all in one block of
 *  `total_bytes` (int64; 0 when there is none) that the launch asks for. Sizes may depend on
 *  the kernel's parameters. */
struct DynamicSharedLayout {
  std::vector<std::pair<const VarNode*, Expr>> offsets;  // allocation variable, byte offset
  Expr total_bytes;
};
DynamicSharedLayout PlanDynamicShared(const Stmt& kernel_body);

}  // namespace transform
}  // namespace tessera
