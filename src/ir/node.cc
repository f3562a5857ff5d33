// Names of node kinds.
#include "tessera/ir/node.h"

#include <vector>

namespace tessera {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
#define TESSERA_KIND_NAME(name) \
  case NodeKind::k##name:       \
    return #name;
    TESSERA_EXPR_NODES(TESSERA_KIND_NAME)
    TESSERA_STMT_NODES(TESSERA_KIND_NAME)
    TESSERA_OTHER_NODES(TESSERA_KIND_NAME)
#undef TESSERA_KIND_NAME
    case NodeKind::kExprEnd:
    case NodeKind::kStmtEnd:
      break;
  }
  return "<invalid>";
}

namespace detail {

void DeferRelease(ObjectRef&& p) noexcept {
  thread_local std::vector<ObjectRef>* pending = nullptr;
  if (pending) {  // inside a release: the outer loop frees it
    pending->push_back(std::move(p));
    return;
  }
  std::vector<ObjectRef> list;
  pending = &list;
  list.push_back(std::move(p));
  while (!list.empty()) {
    ObjectRef last = std::move(list.back());
    list.pop_back();
    last.reset();  // may append this node's children
  }
  pending = nullptr;
}

}  // namespace detail
}  // namespace tessera
