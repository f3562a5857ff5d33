// Commutative reducers of TensorIR reduction blocks: `B[i] = B[i] + x` (and *, T.min, T.max),
// shared by the schedule (rfactor) and the GPU lowering (cross-thread reductions).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {

/*! \brief A reduction update `buf[idx] = combine(buf[idx], rhs)` (or `combine(rhs, buf[idx])`). */
struct ReducerMatch {
  NodeKind kind;    ///< kAdd, kMul, kMin or kMax (with `logical`: kOr, kAnd too)
  bool load_first;  ///< buf[idx] is the left operand
  Expr rhs;         ///< the value folded into the accumulator
  Expr identity;    ///< the reducer's identity in the store's type
  /*! \brief combine(acc, value), operands in the order of the matched update. */
  Expr Combine(const Expr& acc, const Expr& value) const;
  /*! \brief "sum", "prod", "min", "max" (logical: "any", "all"). */
  std::string Name() const;
};

/*! \brief The reducer of `store` when it has the shape `buf[idx] = buf[idx] op rhs` (either
 *  operand order) with op one of +, *, T.min, T.max; nullopt otherwise. Given the block's init
 *  value `init`, a float T.max whose init is -inf (T.min: +inf) takes it as its identity: an
 *  identity below (above) every value, where the lowest (highest) finite value, TVM's, is not one
 *  for a row of infinities. */
/*! With `logical`, also `buf[idx] = buf[idx] || rhs` (and &&) of bools, whose identities are
 *  false (true): topi.any / topi.all. Only rfactor asks for them; the GPU lowerings of
 *  cross-thread reductions keep to the four arithmetic ones. */
std::optional<ReducerMatch> MatchReducer(const BufferStoreNode* store, const Expr& init = Expr(),
                                         bool logical = false);

/*!
 * \brief A reduction of several buffers at once, `(acc_0, ..., acc_n) = combine(acc, value)`:
 *  the known ones are a pair of sums and argmax / argmin over (index, value) pairs, with ties
 *  kept by either comparison (`>=`, `<=`) or resolved towards the smaller index (TVM's
 *  topi.argmax / argmin reducers).
 */
struct TupleReducerMatch {
  std::string name;             ///< "sum2", "argmax", "argmin", "argmax_first" or "argmin_first"
  std::vector<Expr> rhs;        ///< the values folded into the accumulators
  std::vector<Expr> identity;   ///< the identity of each accumulator
  std::vector<Expr> combiner;   ///< the result over the placeholders `lhs` and `rhs_vars`
  std::vector<Var> lhs, rhs_vars;
  /*! \brief combine(acc, value) for the accumulators `acc` and the folded values `value`. */
  std::vector<Expr> Combine(const std::vector<Expr>& acc, const std::vector<Expr>& value) const;
};

/*! \brief The tuple reducer whose result is `values` when the accumulators read `accs` (one
 *  pair: accs[i] is the load of the buffer values[i] is stored to); nullopt if none. */
std::optional<TupleReducerMatch> MatchTupleReducer(const std::vector<Expr>& accs,
                                                   const std::vector<Expr>& values);

/*! \brief The identity of the reducer `kind` (kAdd, kMul, kMin, kMax, kOr, kAnd) in type `t`. */
Expr ReducerIdentity(NodeKind kind, DataType t);
/*! \brief `a op b` for the reducer `kind`. */
Expr ReducerCombine(NodeKind kind, const Expr& a, const Expr& b);
/*! \brief The reducer kind of a name given by ReducerMatch::Name(); nullopt for other names. */
std::optional<NodeKind> ReducerKindFromName(const std::string& name);
/*! \brief The lowest / highest finite value of a scalar type. */
Expr LowestValue(DataType t);
Expr HighestValue(DataType t);

}  // namespace tessera
