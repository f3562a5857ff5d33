// Reductions of tensor expressions: commutative reducers (sum, max, min, custom) and Reduce.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {
namespace te {

struct CommReducerNode;
struct ReduceNode;
using CommReducer = std::shared_ptr<const CommReducerNode>;
using Reduce = std::shared_ptr<const ReduceNode>;

/*!
 * \brief A commutative, associative combination `result(lhs, rhs)` with its identity element.
 *
 * te-only: CreatePrimFunc lowers it to the init and update statements of a reduction block,
 * so the IR needs no reduction node.
 */
struct CommReducerNode {
  std::string name;
  Var lhs, rhs;
  Expr result;
  Expr identity;
  CommReducerNode(std::string n, Var l, Var r, Expr res, Expr id)
      : name(std::move(n)),
        lhs(std::move(l)),
        rhs(std::move(r)),
        result(std::move(res)),
        identity(std::move(id)) {}
  /*! \brief Checks that lhs, rhs, result and identity are scalars of one type. */
  static CommReducer Make(std::string name, Var lhs, Var rhs, Expr result, Expr identity);
  DataType dtype() const { return result->dtype; }
  /*! \brief `result` with lhs := a and rhs := b. */
  Expr Combine(const Expr& a, const Expr& b) const;
};

/*! \brief The reducers of te.sum, te.max and te.min for values of type `dtype`. */
CommReducer SumReducer(DataType dtype);
CommReducer MaxReducer(DataType dtype);
CommReducer MinReducer(DataType dtype);

/*! \brief The smallest and largest finite values of a scalar type (bool: false and true). */
Expr MinValue(DataType dtype);
Expr MaxValue(DataType dtype);

/*!
 * \brief `combiner` folded over `source` for every point of the reduce axes `axis` where
 *  `condition` holds, starting from `init` (the combiner's identity when null).
 *
 * Only the whole body of a te.compute may be a reduction; it is not an expression.
 */
struct ReduceNode {
  CommReducer combiner;
  Expr source;
  std::vector<IterVar> axis;
  Expr condition;  // may be null (always true)
  Expr init;       // may be null (the identity)
  ReduceNode(CommReducer c, Expr s, std::vector<IterVar> a, Expr cond, Expr i)
      : combiner(std::move(c)),
        source(std::move(s)),
        axis(std::move(a)),
        condition(std::move(cond)),
        init(std::move(i)) {}
  /*! \brief Checks the types, that `axis` holds distinct reduce axes (from ReduceAxis), and
   *  that `source`, `condition` and `init` use no other reduce axis. */
  static Reduce Make(CommReducer combiner, Expr source, std::vector<IterVar> axis,
                     Expr condition = nullptr, Expr init = nullptr);
  DataType dtype() const { return combiner->dtype(); }
  /*! \brief A readable form for messages and reprs: `sum(A[i, k], axis=[k])`. */
  std::string ToString() const;
};

/*! \brief te.sum / te.max / te.min of `source` over `axis`. */
Reduce Sum(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);
Reduce Max(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);
Reduce Min(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);

}  // namespace te
}  // namespace tessera
