// The arithmetic analyzer: constant bounds, modular sets and canonical simplification of
// integer index expressions, with variables bound to ranges or values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*! \brief Every value of an expression lies in [min_value, max_value]; the ends may be infinite. */
struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = -kPosInf;
  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;

  static ConstIntBound Everything() { return {kNegInf, kPosInf}; }
  static ConstIntBound Single(int64_t v) { return {v, v}; }
  /*! \brief The range of values of a scalar type (int64 and wider are infinite). */
  static ConstIntBound OfType(DataType t);
  bool is_const() const { return min_value == max_value; }
  bool operator==(const ConstIntBound& o) const {
    return min_value == o.min_value && max_value == o.max_value;
  }
};

/*! \brief The set { coeff * k + base | k integer }: coeff 0 is the constant `base`, (1, 0) is
 *  every integer. Normalised: coeff >= 0 and 0 <= base < coeff when coeff > 0. */
struct ModularSet {
  int64_t coeff = 1;
  int64_t base = 0;
  static ModularSet Everything() { return {1, 0}; }
  bool operator==(const ModularSet& o) const { return coeff == o.coeff && base == o.base; }
};

/*! \brief The intersection of two modular sets (the Chinese remainder theorem); nullopt when
 *  they share no value or the combined modulus is too large to track. */
std::optional<ModularSet> IntersectModular(ModularSet a, ModularSet b);

/*! \brief Floor division and modulo of integers (b != 0). */
int64_t FloorDiv(int64_t a, int64_t b);
int64_t FloorMod(int64_t a, int64_t b);
/*! \brief `v` wrapped to the width of the integer type `t`, as the generated code computes it. */
int64_t WrapToType(DataType t, int64_t v);

/*!
 * \brief Arithmetic facts about integer expressions under bound variables.
 *
 * Variables are bound to loop ranges (`Bind(i, Range(0, 16))`) or to values (`Bind(x, e)`);
 * the analyzer then answers bounds (`GetConstIntBound`), divisibility (`GetModularSet`) and
 * comparisons (`CanProve`), and rewrites int32/int64 index expressions into a canonical
 * sum of products (`Simplify`): like terms combined, constants folded, and floordiv/floormod
 * reduced using bounds and divisibility.
 *
 * \code
 *   Analyzer ana;
 *   ana.Bind(j, RangeNode::Make(Int32(0), Int32(16)));
 *   ana.Simplify(FloorDivNode::Make(i * 16 + j, 16));   // i
 *   ana.CanProve(LTNode::Make(j, Int32(16)));           // true
 * \endcode
 */
class Analyzer {
 public:
  /*! \brief `var` takes values in [range->min, range->min + range->extent). */
  void Bind(const Var& var, const Ref<RangeNode>& range);
  /*! \brief `var` equals `value` (bounds and divisibility are taken from it). */
  void Bind(const Var& var, const Expr& value);
  /*! \brief `var` lies in `bound`. */
  void Bind(const Var& var, ConstIntBound bound);
  /*! \brief Forget what is known about `var` (leaving its scope). */
  void Unbind(const Var& var);
  /*!
   * \brief Record `bound` for `var`, keeping what is known of its divisibility (TVM's
   *  `Analyzer.update`). Without `allow_override`, a var that already has a different bound is
   *  a user error (kValue).
   */
  void Update(const Var& var, ConstIntBound bound, bool allow_override);
  /*!
   * \brief As TVM's `Analyzer.bind(var, expr)`: Bind(var, value) and, in SubstituteBound,
   *  `var` replaced by the simplified value (Bind alone keeps the var, as passes binding let
   *  values need).
   */
  void BindAndSubstitute(const Var& var, const Expr& value);
  /*! \brief `e` with the vars given to BindAndSubstitute replaced by their values. */
  Expr SubstituteBound(const Expr& e) const;
  /*! \brief Whether a bound is recorded for `var` (bound, updated, or narrowed by a constraint). */
  bool IsBound(const VarNode* var) const { return vars_.count(var) != 0; }
  /*! \brief The bound the entered constraints give the expression `e` (a conjunct comparing it
   *  with a constant, as `1 <= x % 58`); everything when none does. */
  ConstIntBound ConstraintBound(const Expr& e) const;
  bool HasConstraintBounds() const { return !expr_bounds_.empty(); }

  ConstIntBound GetConstIntBound(const Expr& e);
  ModularSet GetModularSet(const Expr& e);
  /*! \brief Canonical simplification of integer expressions plus constant folding everywhere. */
  Expr Simplify(const Expr& e);
  /*!
   * \brief TVM's two simplifiers, which Simplify runs in turn. RewriteSimplify rewrites by
   *  local rules and keeps the shape of the expression (`x + y - x` is `y`, but `x * 2 + y`
   *  stays unsorted); CanonicalSimplify puts index arithmetic into a sorted sum of terms.
   */
  Expr RewriteSimplify(const Expr& e);
  Expr CanonicalSimplify(const Expr& e);
  /*! \brief Whether the bool expression `cond` is true for every value of the bound variables. */
  bool CanProve(const Expr& cond);
  /*! \brief Whether e >= v (e < v) for every value of the bound variables. */
  bool CanProveGreaterEqual(const Expr& e, int64_t v);
  bool CanProveLess(const Expr& e, int64_t v);
  /*! \brief Whether a == b always. */
  bool CanProveEqual(const Expr& a, const Expr& b);

  /*!
   * \brief Assume the bool `cond` holds until the matching ExitConstraint (the body of an
   *  `if cond`). Each conjunct of the simplified condition becomes a known literal: an
   *  expression that simplifies to it is true, one that simplifies to its negation is false.
   *  A conjunct `v < c`, `v <= c`, `c < v`, `c <= v` or `v == c` (v an integer variable, c a
   *  constant) also narrows the bound of v. Returns the mark to give ExitConstraint.
   */
  size_t EnterConstraint(const Expr& cond);
  /*! \brief Forget the constraints entered since `mark` (restoring the narrowed bounds). */
  void ExitConstraint(size_t mark);
  /*! \brief true/false when `e` is a known literal or its negation. */
  std::optional<bool> MatchLiteral(const Expr& e) const;
  /*!
   * \brief The range of `a - b` implied by the integer comparisons among the entered
   *  constraints (infinite ends where nothing is known). A comparison gives a difference of
   *  its sides' non-constant parts (`i < j + 5`: i - j <= 4); with transitive comparisons on,
   *  differences chain through other values (i - j <= 0 and j - k <= -1 give i - k <= -1).
   */
  ConstIntBound KnownDifference(const Expr& a, const Expr& b) const;
  /*! \brief Whether a != b follows from the known `!=` comparisons (and equalities). */
  bool KnownNotEqual(const Expr& a, const Expr& b) const;
  bool HasKnownComparisons() const {
    return !comparisons_.empty() || !bound_comparisons_.empty();
  }
  /*! \brief TVM's tir.Simplify option transitively_prove_inequalities (off by default). */
  void SetTransitiveComparisons(bool on) { transitive_ = on; }
  /*! \brief TVM's tir.Simplify option apply_constraints_to_boolean_branches: each side of
   *  `a && b` is simplified knowing the other holds (of `a || b`, knowing the other fails). */
  void SetConstraintsOnBooleanBranches(bool on) { boolean_branches_ = on; }
  bool ConstraintsOnBooleanBranches() const { return boolean_branches_; }
  /*! \brief TVM's tir.Simplify option convert_boolean_to_and_of_ors: a simplified `&&`/`||`
   *  is rewritten as an and of ors, simplified between its terms (SimplifyAsAndOfOrs). */
  void SetConvertBooleanToAndOfOrs(bool on) { and_of_ors_ = on; }
  bool ConvertBooleanToAndOfOrs() const { return and_of_ors_; }
  /*! \brief The extension flags of TVM's rewrite simplifier (its `Extension` enum values):
   *  each bit turns on one of the options above; kComparisonOfProductAndSum is kept but
   *  changes nothing yet. */
  enum Extension : int {
    kNoExtensions = 0,
    kTransitivelyProveInequalities = 1 << 0,
    kConvertBooleanToAndOfOrs = 1 << 1,
    kApplyConstraintsToBooleanBranches = 1 << 2,
    kComparisonOfProductAndSum = 1 << 3,
  };
  void SetEnabledExtensions(int flags);
  int EnabledExtensions() const;

  /*! \brief The bound recorded for `var`, if any. */
  const ConstIntBound* VarBound(const VarNode* var) const;
  const ModularSet* VarModular(const VarNode* var) const;

 private:
  struct VarInfo {
    Var var;  // keeps the key alive
    ConstIntBound bound;
    ModularSet modular;
  };
  /*! \brief A constraint scope: where its literals start and the var facts it replaced. */
  /*! \brief A known comparison of non-constant parts: x - y <= c (kLE), == c (kEQ) or != c
   *  (kNE); a null x or y stands for 0. */
  struct Comparison {
    Expr x, y;
    int64_t c;
    NodeKind kind;
  };
  struct ConstraintFrame {
    size_t literal_size;
    size_t comparison_size;
    size_t expr_bound_size;
    std::vector<std::pair<Var, std::optional<VarInfo>>> saved;
  };
  void NarrowByLiteral(const Expr& literal, ConstraintFrame* frame);
  /*! \brief From a conjunct of a constraint: the bound of an expression compared with a
   *  constant, and the residue of a var (`x % c == r`, truncating or floor). */
  void AddConjunctFacts(const Expr& conjunct, ConstraintFrame* frame);
  /*! \brief Set `var`'s facts for the current constraint frame, saving the old ones. */
  void SetVarInfoInFrame(const Var& var, ConstIntBound bound, ModularSet modular,
                         ConstraintFrame* frame);
  void AddComparison(const Expr& literal);
  /*! \brief The least known upper bound of x - y (kPosInf when none). */
  int64_t DifferenceUpperBound(const Expr& x, const Expr& y) const;

  std::unordered_map<const VarNode*, VarInfo> vars_;
  std::vector<std::pair<Expr, bool>> literals_;
  std::vector<ConstraintFrame> frames_;
  std::vector<Comparison> comparisons_;
  /*! \brief As TVM's transitive comparisons: a variable bound to a range with a symbolic
   *  end is known to be >= its min and < its min + extent (k in [0, n): k < n). */
  std::unordered_map<const VarNode*, std::vector<Comparison>> bound_comparisons_;
  void BindComparisons(const Var& var, const Ref<RangeNode>& range);
  /*! \brief Calls f on every known comparison: the entered ones and the bound ones. */
  template <typename F>
  void ForEachComparison(F&& f) const {
    for (const Comparison& k : comparisons_) f(k);
    for (const auto& [var, list] : bound_comparisons_) {
      for (const Comparison& k : list) f(k);
    }
  }
  std::vector<std::pair<Expr, ConstIntBound>> expr_bounds_;
  std::unordered_map<const VarNode*, std::pair<Var, Expr>> substitutions_;
  bool transitive_ = false;
  bool boolean_branches_ = false;
  bool and_of_ors_ = false;
  bool product_and_sum_ = false;
};

/*! \brief EnterConstraint for the lifetime of the object. */
class ConstraintContext {
 public:
  ConstraintContext(Analyzer& ana, const Expr& cond)
      : ana_(ana), mark_(ana.EnterConstraint(cond)) {}
  ~ConstraintContext() { ana_.ExitConstraint(mark_); }
  ConstraintContext(const ConstraintContext&) = delete;
  ConstraintContext& operator=(const ConstraintContext&) = delete;

 private:
  Analyzer& ana_;
  size_t mark_;
};

/*! \brief The negation of the bool `e`, with comparisons flipped and De Morgan applied
 *  (`!(a < b)` is `b <= a`, `!(a && b)` is `!a || !b`, `!!a` is `a`). */
Expr NegateCondition(const Expr& e);

/*! \brief `e` (a bool) as an and of ors of its comparisons, with the terms of each or, and
 *  the ors, simplified against each other (as TVM's SimplifyAsAndOfOrs). */
Expr SimplifyAsAndOfOrs(const Expr& e, Analyzer& ana);

}  // namespace arith
}  // namespace tessera
