// The canonical simplifier of Analyzer::Simplify, shared by its files: canonical_simplify.cc
// (the visitors, folding and algebraic rules for the other types) and canonical_sum.cc (the
// sum-of-products form of index expressions).
#pragma once

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"

namespace tessera {
namespace arith {
namespace canonical {

// The types whose arithmetic is put into canonical form: the index types.
inline bool IsCanonicalType(DataType t) {
  return t.is_scalar() && t.is_int() && (t.bits() == 32 || t.bits() == 64);
}

inline bool IsArithKind(NodeKind k) { return k >= NodeKind::kAdd && k <= NodeKind::kMax; }

inline int64_t Gcd(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }

inline Expr Const(DataType t, int64_t v) { return IntImmNode::Make(t, WrapToType(t, v)); }

/*! \brief sum(coeff * product of atoms) + base; atoms are indices into the simplifier's table. */
struct Sum {
  struct Term {
    std::vector<int> factors;  // sorted atom ids; never empty
    int64_t coeff;
    // The part of coeff that TVM keeps inside a product of symbolic values (x * (n * 4) is one
    // term of scale 1 there): the term sorts by coeff / inner (SortTerms).
    int64_t inner = 1;
  };
  std::vector<Term> terms;
  int64_t base = 0;

  bool is_const() const {
    for (const Term& t : terms)
      if (t.coeff != 0) return false;
    return true;
  }
  void Add(const std::vector<int>& factors, int64_t coeff, int64_t inner = 1) {
    if (coeff == 0) return;
    for (Term& t : terms) {
      if (t.factors == factors) {
        t.coeff += coeff;
        if (t.coeff % t.inner != 0) t.inner = 1;
        return;
      }
    }
    terms.push_back({factors, coeff, inner});
  }
  void AddSum(const Sum& o, int64_t scale) {
    for (const Term& t : o.terms) Add(t.factors, t.coeff * scale, t.inner);
    base += o.base * scale;
  }
  void Compact() {
    terms.erase(
        std::remove_if(terms.begin(), terms.end(), [](const Term& t) { return t.coeff == 0; }),
        terms.end());
  }
};

/*! \brief Index arithmetic into canonical sums, constant folding and rules elsewhere. */
class CanonicalSimplifier : public ExprMutator {
 public:
  // `tvm_canonical`: the forms of TVM's canonical_simplify alone (Analyzer::CanonicalSimplify),
  // where Simplify has those of TVM's full simplifier: truncating division of a non-negative
  // numerator stays truncating, and the offset of a sum that the divisor does not divide stays
  // in the division.
  explicit CanonicalSimplifier(Analyzer& ana, bool tvm_canonical = false)
      : ana_(ana), tvm_canonical_(tvm_canonical) {}

  Expr VisitExpr(const Expr& e) override;
  Expr VisitExpr_(const AddNode* op) override;
  Expr VisitExpr_(const SubNode* op) override;
  Expr VisitExpr_(const MulNode* op) override;
  Expr VisitExpr_(const DivNode* op) override;
  Expr VisitExpr_(const ModNode* op) override;
  Expr VisitExpr_(const FloorDivNode* op) override;
  Expr VisitExpr_(const FloorModNode* op) override;
  Expr VisitExpr_(const MinNode* op) override;
  Expr VisitExpr_(const MaxNode* op) override;
  Expr VisitExpr_(const GTNode* op) override;
  Expr VisitExpr_(const GENode* op) override;
  Expr VisitExpr_(const LTNode* op) override;
  Expr VisitExpr_(const LENode* op) override;
  Expr VisitExpr_(const EQNode* op) override;
  Expr VisitExpr_(const NENode* op) override;
  Expr VisitExpr_(const AndNode* op) override;
  Expr VisitExpr_(const OrNode* op) override;
  Expr VisitExpr_(const NotNode* op) override;
  Expr VisitExpr_(const SelectNode* op) override;
  Expr VisitExpr_(const CastNode* op) override;
  Expr VisitExpr_(const LetNode* op) override;
  Expr VisitExpr_(const CallNode* op) override;
  Expr VisitExpr_(const VarNode* op) override;

 private:
  /*! \brief With convert_boolean_to_and_of_ors, `e` (a simplified && or ||) as an and of ors. */
  Expr AndOfOrs(const Expr& e);
  // ---- canonical form (canonical_sum.cc) ----
  int AtomId(const Expr& e);
  Sum AtomSum(const Expr& e);
  Sum Leaf(const Expr& e);
  Sum ToSum(const Expr& e);
  Sum MulSum(const MulNode* op);
  Sum MinMaxSum(const BinaryNode* op);
  Sum DivModSum(const BinaryNode* op);
  Sum FloorDivSum(const Sum& num, int64_t c, DataType t);
  Sum FloorDivRest(Sum rest, int64_t c, DataType t);
  Sum FloorModSum(const Sum& num, int64_t c, DataType t);
  Sum TruncDivSum(const Sum& num, int64_t c, DataType t);
  Sum TruncModSum(const Sum& num, int64_t c, DataType t);
  bool NonNegTruncSum(const Sum& num, int64_t c, bool is_div, DataType t, Sum* out);
  bool NegativeScaleMod(const Sum& num, int64_t c, bool floor, DataType t, Sum* out);
  bool RecombineDivMod(Sum* s);
  bool ProdDivSum(const BinaryNode* op, DataType t, Sum* out);
  ConstIntBound SumBound(const Sum& s, DataType t);
  void SortTerms(Sum* s);
  Expr Product(const std::vector<int>& factors, DataType t);
  Expr FromSum(Sum s, DataType t);

  // ---- known literals of enclosing constraints (Analyzer::EnterConstraint) ----
  Expr Literal(const Expr& e);
  Expr FoldAnd(const AndNode* op);
  Expr FoldOr(const OrNode* op);
  Expr FoldNot(const NotNode* op);
  void SimplifyUnderEachOther(Expr* a, Expr* b, bool is_or);

  // ---- folding for the other types ----
  template <class Node>
  Expr Arith(const Node* op);
  Expr VectorRule(NodeKind k, const Expr& a, const Expr& b, DataType t);
  Expr Compare(NodeKind k, Expr a, Expr b, const BinaryNode* orig);
  static bool Decide(NodeKind k, int sign);
  Expr ScaledCompare(const Sum& diff, DataType t);
  Expr PushCast(DataType t, const Expr& v);
  /*! \brief a (k) b decided or narrowed by the comparisons of the enclosing constraints. */
  Expr KnownCompare(NodeKind k, const Expr& a, const Expr& b);

  Analyzer& ana_;
  bool tvm_canonical_;
  std::vector<Expr> atoms_;
  std::unordered_map<size_t, std::vector<int>> atom_index_;
};

}  // namespace canonical
}  // namespace arith
}  // namespace tessera
