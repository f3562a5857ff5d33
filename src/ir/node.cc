// Names of node kinds.
#include "tessera/ir/node.h"

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

}  // namespace tessera
