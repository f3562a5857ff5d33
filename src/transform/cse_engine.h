// The engine of the hierarchical common subexpression elimination shared by
// tir.CommonSubexprElimTIR (TVM's rules, `cse_v<n>` variables) and dsl.CommonSubexprElim (the
// Compass DSL's build, `cse_var_<n>` variables, scalar computations only). Private to the
// transform layer; the rules are described in cse_engine.cc.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

struct CSEOptions {
  /*! \brief New variables are named prefix + 1, 2, ... (names the function uses are skipped). */
  std::string var_prefix = "cse_v";
  /*! \brief Equivalent computations (equal once simplified and their commutative operands
   *  ordered) are one computation, represented by the first one seen. */
  bool identify_equiv_terms = false;
  /*! \brief Only scalar computations, never a Let or a pointer, are bound (the DSL). */
  bool scalars_only = false;
  /*! \brief A loop's step counts with its start (the DSL); TVM's rule ignores the step. */
  bool count_loop_step = false;
  /*! \brief In a sequence, computations after a statement that may leave (`return`, `break`,
   *  `continue`) are not counted with those before it (the DSL). */
  bool stop_at_exits = false;
  /*! \brief Repetitions inside one expression that the statements could not bind (inside a Let
   *  expression, in a loop bound or a condition alone) become Let expressions, as TVM's pass
   *  does; off for the DSL, whose code generator expects LetStmts. */
  bool expression_level = true;
};

/*! \brief Value numbers of expression nodes, for both passes' linear-time numbering walks: a
 *  node's key is its own fields (kind, type, constant value, the variable, Let variable, op or
 *  buffer it names, a load's predicate flag, a shuffle's vector count) then its children's
 *  numbers; equal keys get one number, so two nodes share a number exactly when they are
 *  structurally equal with variables compared by identity. */
class ValueNumbers {
 public:
  /*! \brief The key of `e`'s own fields, ended by -1; push the children's numbers after it. */
  std::vector<int64_t> OwnFields(const Expr& e, size_t children);
  /*! \brief The number of a complete key (a new one for a key not seen before). */
  int64_t Number(std::vector<int64_t> key) {
    return numbers_.emplace(std::move(key), static_cast<int64_t>(numbers_.size())).first->second;
  }

 private:
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& k) const;
  };
  std::unordered_map<std::vector<int64_t>, int64_t, KeyHash> numbers_;
  std::unordered_map<std::string, int64_t> strings_;
};

/*! \brief The body of `f` with its common subexpressions bound once (`f->body` itself when
 *  nothing was shared). */
Stmt EliminateCommonSubexpr(const PrimFunc& f, const CSEOptions& options);

}  // namespace transform
}  // namespace tessera
