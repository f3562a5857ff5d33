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
 * A reducer combines one value, or a tuple of values (as TVM's argmax over (index, value)):
 * `lhs[i]`, `rhs[i]`, `result[i]` and `identity[i]` are the i-th value's. Result i may read
 * every lhs and rhs variable.
 *
 * te-only: CreatePrimFunc lowers it to the init and update statements of a reduction block,
 * so the IR needs no reduction node.
 */
struct CommReducerNode {
  std::string name;
  std::vector<Var> lhs, rhs;
  std::vector<Expr> result;
  std::vector<Expr> identity;
  CommReducerNode(std::string n, std::vector<Var> l, std::vector<Var> r, std::vector<Expr> res,
                  std::vector<Expr> id)
      : name(std::move(n)),
        lhs(std::move(l)),
        rhs(std::move(r)),
        result(std::move(res)),
        identity(std::move(id)) {}
  /*! \brief Checks that lhs, rhs, result and identity are scalars of one type. */
  static CommReducer Make(std::string name, Var lhs, Var rhs, Expr result, Expr identity);
  /*! \brief A reducer of a tuple: one lhs, rhs, result and identity per value, value i's all of
   *  one scalar type. */
  static CommReducer Make(std::string name, std::vector<Var> lhs, std::vector<Var> rhs,
                          std::vector<Expr> result, std::vector<Expr> identity);
  size_t size() const { return result.size(); }
  DataType dtype(size_t i = 0) const { return result.at(i)->dtype; }
  /*! \brief Value 0's `result` with lhs := a and rhs := b (a reducer of one value). */
  Expr Combine(const Expr& a, const Expr& b) const;
  /*! \brief Every `result` with lhs := a and rhs := b. */
  std::vector<Expr> Combine(const std::vector<Expr>& a, const std::vector<Expr>& b) const;
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
 * A reducer of a tuple reduces one source per value (`sources`, `inits`); `source` and
 * `init` are value 0's. Only the whole body of a te.compute may be a reduction; it is not an
 * expression.
 */
struct ReduceNode {
  CommReducer combiner;
  Expr source;
  std::vector<IterVar> axis;
  Expr condition;  // may be null (always true)
  Expr init;       // may be null (the identity)
  std::vector<Expr> sources;  // every value's source (source first)
  std::vector<Expr> inits;    // every value's init (empty: the identities)
  ReduceNode(CommReducer c, std::vector<Expr> s, std::vector<IterVar> a, Expr cond,
             std::vector<Expr> i)
      : combiner(std::move(c)),
        source(s.at(0)),
        axis(std::move(a)),
        condition(std::move(cond)),
        init(i.empty() ? nullptr : i.at(0)),
        sources(std::move(s)),
        inits(std::move(i)) {}
  /*! \brief Checks the types, that `axis` holds distinct reduce axes (from ReduceAxis), and
   *  that `source`, `condition` and `init` use no other reduce axis. */
  static Reduce Make(CommReducer combiner, Expr source, std::vector<IterVar> axis,
                     Expr condition = nullptr, Expr init = nullptr);
  /*! \brief The reduction of a tuple: one source (and init, when given) per value. */
  static Reduce Make(CommReducer combiner, std::vector<Expr> sources, std::vector<IterVar> axis,
                     Expr condition, std::vector<Expr> inits);
  size_t size() const { return sources.size(); }
  DataType dtype(size_t i = 0) const { return combiner->dtype(i); }
  /*! \brief A readable form for messages and reprs: `sum(A[i, k], axis=[k])`. */
  std::string ToString() const;
};

/*! \brief te.sum / te.max / te.min of `source` over `axis`. */
Reduce Sum(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);
Reduce Max(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);
Reduce Min(Expr source, std::vector<IterVar> axis, Expr condition = nullptr, Expr init = nullptr);

}  // namespace te
}  // namespace tessera
