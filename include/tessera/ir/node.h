// The node base class, the X-macro list of every node kind, and reference handles.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "tessera/support/span.h"

namespace tessera {

// Every node kind, grouped. Visitors, mutators, equality, hashing and the printer switch over
// these lists, so a new kind cannot be forgotten (-Wswitch reports a missing case).
#define TESSERA_EXPR_NODES(X)                                                                \
  X(IntImm)                                                                                  \
  X(FloatImm) X(StringImm) X(Var) X(SizeVar) X(Cast) X(Add) X(Sub) X(Mul) X(Div) X(Mod)      \
      X(FloorDiv) X(FloorMod) X(Min) X(Max) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or) \
          X(Not) X(Select) X(Ramp) X(Broadcast) X(Shuffle) X(Let) X(Call) X(BufferLoad)

#define TESSERA_STMT_NODES(X)                                                                      \
  X(LetStmt)                                                                                       \
  X(AttrStmt) X(AssertStmt) X(BufferStore) X(Allocate) X(AllocateConst) X(DeclBuffer) X(For) X(While) X(IfThenElse) \
      X(SeqStmt) X(Evaluate) X(Block) X(BlockRealize) X(BufferRealize)

#define TESSERA_OTHER_NODES(X)                                                             \
  X(Range)                                                                                 \
  X(IterVar) X(Buffer) X(PrimFunc) X(GlobalVar) X(IRModule) X(Op) X(Array) X(BufferRegion) \
      X(MatchBufferRegion) X(Map) X(CommReducer)

enum class NodeKind : uint8_t {
#define TESSERA_KIND_ENUM(name) k##name,
  TESSERA_EXPR_NODES(TESSERA_KIND_ENUM) kExprEnd,
  TESSERA_STMT_NODES(TESSERA_KIND_ENUM) kStmtEnd,
  TESSERA_OTHER_NODES(TESSERA_KIND_ENUM)
#undef TESSERA_KIND_ENUM
};

/*! \brief The node kind's name ("Add", "For", "PrimFunc"). */
const char* NodeKindName(NodeKind kind);

/*! \brief Base of all IR nodes. Nodes are immutable once built: build new ones instead. */
struct Object : std::enable_shared_from_this<Object> {
  const NodeKind kind;
  explicit Object(NodeKind k) : kind(k) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
};

/*! \brief Reference-counted handle. Fields of the pointee must not be changed after Make. */
template <class T>
using Ref = std::shared_ptr<T>;
using ObjectRef = Ref<Object>;

inline bool IsExprKind(NodeKind k) { return k < NodeKind::kExprEnd; }
inline bool IsStmtKind(NodeKind k) { return k > NodeKind::kExprEnd && k < NodeKind::kStmtEnd; }

/*! \brief Type test by kind: each node type T says which kinds it covers. */
template <class T>
bool IsInstance(const Object* node) {
  return node != nullptr && T::CoversKind(node->kind);
}

/*! \brief Checked downcast; null when `node` is not a T. */
template <class T, class U>
Ref<T> As(const Ref<U>& node) {
  if (!IsInstance<T>(node.get())) return nullptr;
  return std::static_pointer_cast<T>(node);
}

/*! \brief Raw-pointer downcast for pattern matching: `if (auto* add = AsPtr<AddNode>(e))`. */
template <class T, class U>
const T* AsPtr(const Ref<U>& node) {
  if (!IsInstance<T>(node.get())) return nullptr;
  return static_cast<const T*>(node.get());
}

/*! \brief The handle of a node reached through a raw pointer (nodes are always shared). */
template <class T>
Ref<T> GetRef(const T* node) {
  return std::static_pointer_cast<T>(const_cast<T*>(node)->shared_from_this());
}

namespace detail {
/*! \brief Drops `p` after the current release finishes (an explicit work list, so that freeing a
 *  long chain of nodes, e.g. a 10^6-deep Add chain, does not recurse once per level). */
void DeferRelease(ObjectRef&& p) noexcept;
}  // namespace detail

/*! \brief In a node's destructor: releases a child handle without native recursion. */
template <class T>
inline void ReleaseChild(Ref<T>& r) noexcept {
  if (r && r.use_count() == 1) detail::DeferRelease(ObjectRef(std::move(r)));
}
template <class V>
inline void ReleaseChildren(V& v) noexcept {
  for (auto& r : v) ReleaseChild(r);
}

/*! \brief Helper for leaf node types: covers exactly one kind. */
#define TESSERA_NODE_KIND(name)                        \
  static constexpr NodeKind kKind = NodeKind::k##name; \
  static bool CoversKind(NodeKind k) { return k == NodeKind::k##name; }

}  // namespace tessera
