// Commutative reducers of TensorIR reduction blocks: `B[i] = B[i] + x` (and *, T.min, T.max),
// shared by the schedule (rfactor) and the GPU lowering (cross-thread reductions).
#pragma once

#include <optional>
#include <string>

#include "tessera/ir/stmt.h"

namespace tessera {

/*! \brief A reduction update `buf[idx] = combine(buf[idx], rhs)` (or `combine(rhs, buf[idx])`). */
struct ReducerMatch {
  NodeKind kind;    ///< kAdd, kMul, kMin or kMax
  bool load_first;  ///< buf[idx] is the left operand
  Expr rhs;         ///< the value folded into the accumulator
  Expr identity;    ///< the reducer's identity in the store's type
  /*! \brief combine(acc, value), operands in the order of the matched update. */
  Expr Combine(const Expr& acc, const Expr& value) const;
  /*! \brief "sum", "prod", "min" or "max". */
  std::string Name() const;
};

/*! \brief The reducer of `store` when it has the shape `buf[idx] = buf[idx] op rhs` (either
 *  operand order) with op one of +, *, T.min, T.max; nullopt otherwise. */
std::optional<ReducerMatch> MatchReducer(const BufferStoreNode* store);

/*! \brief The identity of the reducer `kind` (kAdd, kMul, kMin, kMax) in type `t`. */
Expr ReducerIdentity(NodeKind kind, DataType t);
/*! \brief `a op b` for the reducer `kind`. */
Expr ReducerCombine(NodeKind kind, const Expr& a, const Expr& b);
/*! \brief The reducer kind of a name given by ReducerMatch::Name(); nullopt for other names. */
std::optional<NodeKind> ReducerKindFromName(const std::string& name);
/*! \brief The lowest / highest finite value of a scalar type. */
Expr LowestValue(DataType t);
Expr HighestValue(DataType t);

}  // namespace tessera
