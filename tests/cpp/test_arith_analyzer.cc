// Tests of the arithmetic analyzer: canonical simplification, constant bounds, modular sets and
// proofs, each with a closed-form expectation.
#include <gtest/gtest.h>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/vscale.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

using arith::Analyzer;
using arith::ConstIntBound;
using arith::ModularSet;

// Small expression algebra over int32 so expectations read like the math.
struct E {
  Expr e;
  template <class T>
  E(const Ref<T>& x) : e(x) {}  // NOLINT
  E(int v) : e(Int32(v)) {}     // NOLINT
  operator Expr() const { return e; }
};
E operator+(E a, E b) { return Expr(AddNode::Make(a.e, b.e)); }
E operator-(E a, E b) { return Expr(SubNode::Make(a.e, b.e)); }
E operator*(E a, E b) { return Expr(MulNode::Make(a.e, b.e)); }
E operator<(E a, E b) { return Expr(LTNode::Make(a.e, b.e)); }
E operator<=(E a, E b) { return Expr(LENode::Make(a.e, b.e)); }
E operator>(E a, E b) { return Expr(GTNode::Make(a.e, b.e)); }
E operator>=(E a, E b) { return Expr(GENode::Make(a.e, b.e)); }
E operator==(E a, E b) { return Expr(EQNode::Make(a.e, b.e)); }
E fdiv(E a, E b) { return Expr(FloorDivNode::Make(a.e, b.e)); }
E fmod(E a, E b) { return Expr(FloorModNode::Make(a.e, b.e)); }
E tdiv(E a, E b) { return Expr(DivNode::Make(a.e, b.e)); }
E tmod(E a, E b) { return Expr(ModNode::Make(a.e, b.e)); }
E min(E a, E b) { return Expr(MinNode::Make(a.e, b.e)); }
E max(E a, E b) { return Expr(MaxNode::Make(a.e, b.e)); }

class ArithTest : public ::testing::Test {
 protected:
  Var x = VarNode::Make("x", DataType::Int(32));
  Var y = VarNode::Make("y", DataType::Int(32));
  Var i = VarNode::Make("i", DataType::Int(32));
  Var j = VarNode::Make("j", DataType::Int(32));
  Analyzer ana;

  void SetUp() override {
    ana.Bind(i, RangeNode::Make(Int32(0), Int32(16)));
    ana.Bind(j, RangeNode::Make(Int32(0), Int32(16)));
  }

  void ExpectSimplify(E input, E expected) {
    Expr got = ana.Simplify(input);
    EXPECT_TRUE(StructuralEqual(got, expected.e))
        << "input:    " << AsScript(input.e) << "\ngot:      " << AsScript(got)
        << "\nexpected: " << AsScript(expected.e);
  }
};

TEST_F(ArithTest, CombinesLikeTermsAndFoldsConstants) {
  ExpectSimplify(E(x) + y - x, y);
  ExpectSimplify((E(x) + 1) * 2 - x, E(x) + 2);
  ExpectSimplify(E(x) * 2 + E(x) * 3, E(x) * 5);
  ExpectSimplify(E(x) * y - E(y) * x, 0);
  ExpectSimplify(E(3) + 4 * E(2), 11);
  // As TVM's canonical form: positive terms, a positive offset, then the subtracted terms.
  ExpectSimplify(E(x) - y * 2 + 1, E(x) + 1 - E(y) * 2);
  ExpectSimplify(E(3) - x, E(3) - x);
  ExpectSimplify(E(0) - x, E(x) * -1);
  ExpectSimplify(E(x) - 3, E(x) - 3);
}

TEST_F(ArithTest, ProductOfSymbolicValuesSortsByTheConstantOutsideIt) {
  // TVM keeps i * (x * 4) as one term of scale 1, so j * 4 (scale 4) comes first; (i * x) * 4
  // has scale 4 and keeps its place. Both print as i * x * 4.
  ExpectSimplify(E(i) * (E(x) * 4) + E(j) * 4, E(j) * 4 + E(i) * x * 4);
  ExpectSimplify(E(i) * x * 4 + E(j) * 4, E(i) * x * 4 + E(j) * 4);
  ExpectSimplify(E(j) * 4 + E(i) * x * 4, E(j) * 4 + E(i) * x * 4);
}

TEST_F(ArithTest, MinMaxAbsorption) {
  // min(max(a, b), a) = a and max(min(a, b), a) = a whatever a and b are (TVM's rules; they
  // make compute_at's bound min(max(size - 1, 0), size - 1) + 1 read `size`).
  ExpectSimplify(min(max(E(x) - 1, 0), E(x) - 1) + 1, x);
  ExpectSimplify(min(E(y), max(E(y), x)), y);
  ExpectSimplify(max(min(E(x), y), x), x);
  ExpectSimplify(max(E(x), min(E(y), x)), x);
  // Not an absorption: kept.
  Expr kept = ana.Simplify(min(max(E(x), y), y + 1));
  EXPECT_NE(AsPtr<MinNode>(kept), nullptr) << AsScript(kept);
}

TEST_F(ArithTest, UnchangedExpressionIsTheSameNode) {
  Expr e = (E(x) * 16 + y).e;
  EXPECT_EQ(ana.Simplify(e), e);
}

TEST_F(ArithTest, FloorDivModOfSplitIndex) {
  ExpectSimplify(fdiv(E(i) * 16 + j, 16), i);
  ExpectSimplify(fmod(E(i) * 16 + j, 16), j);
  ExpectSimplify(fdiv(E(x) * 16 + j, 16), x);
  ExpectSimplify(fmod(E(x) * 16 + j + 32, 16), j);
  // Only the part divisible by the divisor leaves the division.
  ExpectSimplify(fdiv(E(x) * 8 + y, 4), E(x) * 2 + fdiv(y, 4));
  ExpectSimplify(fmod(E(x) * 8 + y, 4), fmod(y, 4));
  // Common factors: floordiv(4y, 8) = floordiv(y, 2); floormod(4y, 8) = floormod(y, 2) * 4.
  ExpectSimplify(fdiv(E(y) * 4, 8), fdiv(y, 2));
  ExpectSimplify(fmod(E(y) * 4, 8), fmod(y, 2) * 4);
  ExpectSimplify(fdiv(fdiv(x, 4), 8), fdiv(x, 32));
  ExpectSimplify(fmod(fmod(x, 16), 4), fmod(x, 4));
  ExpectSimplify(fmod(E(x) * 6 + 4, 3), 1);
  ExpectSimplify(fdiv(j, 16), 0);
  ExpectSimplify(fdiv(E(j) + 16, 16), 1);
}

TEST_F(ArithTest, RecombinesFusedIndex) {
  ExpectSimplify(fdiv(x, 8) * 8 + fmod(x, 8), x);
  ExpectSimplify((fdiv(x, 8) * 8 + fmod(x, 8)) * 2 + 1, E(x) * 2 + 1);
}

TEST_F(ArithTest, RecombinesDivModBySymbolicDivisor) {
  // (x // y) * y + x % y is x for any divisor y, in either factor order and under a scale.
  ExpectSimplify(y * fdiv(x, y) + fmod(x, y), x);
  ExpectSimplify(fdiv(x, y) * y * 3 + fmod(x, y) * 3 + 1, x * 3 + 1);
  // Another divisor, or a different scale, is left alone.
  Expr other = ana.Simplify(y * fdiv(x, y) + fmod(x, y + 1));
  EXPECT_FALSE(StructuralEqual(other, Expr(x))) << AsScript(other);
  Expr scaled = ana.Simplify(y * fdiv(x, y) * 2 + fmod(x, y));
  EXPECT_FALSE(StructuralEqual(scaled, Expr(x))) << AsScript(scaled);
}

TEST_F(ArithTest, FloorDivSplitsCoefficientsWhenTheRestStaysInOnePeriod) {
  Var c = VarNode::Make("c", DataType::Int(32));
  ana.Bind(c, RangeNode::Make(Int32(0), Int32(2)));
  // 360 = 22 * 16 + 8, and c * 8 + 7 lies in [7, 15].
  ExpectSimplify(fdiv(c * 360, 16), c * 22);
  ExpectSimplify(fdiv(c * 360 + 359, 16), c * 22 + 22);
  // Over a wider range the rest crosses a period: the division stays.
  Var w = VarNode::Make("w", DataType::Int(32));
  ana.Bind(w, RangeNode::Make(Int32(0), Int32(4)));
  Expr kept = ana.Simplify(fdiv(w * 360, 16));
  EXPECT_NE(AsScript(kept).find("//"), std::string::npos) << AsScript(kept);
}

TEST_F(ArithTest, TruncatingDivisionOfNonNegativeValues) {
  ExpectSimplify(tdiv(E(i) + 16, 4), fdiv(i, 4) + 4);
  ExpectSimplify(tmod(E(i) * 4 + 3, 4), 3);
  // Possibly negative numerators keep C's truncation.
  ExpectSimplify(tdiv(x, 4), tdiv(x, 4));
  ExpectSimplify(tdiv(-7, 2), -3);
  ExpectSimplify(tmod(-7, 2), -1);
  ExpectSimplify(fdiv(-7, 2), -4);
  ExpectSimplify(fmod(-7, 2), 1);
}

TEST_F(ArithTest, MinMaxByBounds) {
  ExpectSimplify(min(i, 16), i);
  ExpectSimplify(max(i, 0), i);
  ExpectSimplify(min(x, x), x);
  ExpectSimplify(min(E(x) + 1, E(x) + 5), E(x) + 1);
  ExpectSimplify(max(E(x) + 1, E(x) + 5) - x, 5);
  ExpectSimplify(min(x, y), min(x, y));
}

TEST_F(ArithTest, ComparisonsFoldOrCanonicalize) {
  ExpectSimplify(E(i) < 16, Bool(true));
  ExpectSimplify(E(i) < 15, E(i) < 15);
  ExpectSimplify(E(i) * 4 + 3 <= 63, Bool(true));
  ExpectSimplify(E(x) > y, E(y) < x);
  ExpectSimplify(E(x) * 2 + 1 == 0, Bool(false));
  ExpectSimplify(E(x) + 1 == E(x) + 1, Bool(true));
  ExpectSimplify(E(16) <= i, Bool(false));
}

E operator!=(E a, E b) { return Expr(NENode::Make(a.e, b.e)); }
E operator&&(E a, E b) { return Expr(AndNode::Make(a.e, b.e)); }
E operator||(E a, E b) { return Expr(OrNode::Make(a.e, b.e)); }
E operator!(E a) { return Expr(NotNode::Make(a.e)); }

TEST_F(ArithTest, ConstraintLiteralsAreKnownInsideTheirScope) {
  {
    arith::ConstraintContext known(ana, (E(x) == y) && (E(i) == 5));
    ExpectSimplify(E(x) == y, Bool(true));
    ExpectSimplify(E(x) != y, Bool(false));
    ExpectSimplify(E(i) < 7, Bool(true));  // the bound of i narrowed to [5, 5]
    // As TVM: the bound does not replace the variable by its value.
    ExpectSimplify(E(i) * 2 + 1, E(i) * 2 + 1);
    EXPECT_EQ(ana.GetConstIntBound(E(i) * 2 + 1), ConstIntBound::Single(11));
    ExpectSimplify(E(x) < y, Bool(false));  // x - y is known to be 0
    ExpectSimplify(E(x) < 3, E(x) < 3);     // nothing known
  }
  // Out of scope: nothing is known any more, and i has its loop range again.
  ExpectSimplify(E(x) == y, E(x) == y);
  ExpectSimplify(E(i) < 7, E(i) < 7);
  EXPECT_EQ(ana.GetConstIntBound(i), (ConstIntBound{0, 15}));
}

TEST_F(ArithTest, NegatedDisjunctionSplitsIntoNegatedLiterals) {
  arith::ConstraintContext known(ana, !((E(x) == 3) || (E(y) < x)));
  ExpectSimplify(E(x) == 3, Bool(false));
  ExpectSimplify(E(x) <= y, Bool(true));  // the negation of y < x
  ExpectSimplify(E(y) < x, Bool(false));
  ExpectSimplify(E(y) == 3, E(y) == 3);
}

TEST_F(ArithTest, BoolVariableConstraint) {
  Var c = VarNode::Make("c", DataType::Bool());
  arith::ConstraintContext known(ana, c);
  ExpectSimplify(c, Bool(true));
  ExpectSimplify(!E(c), Bool(false));
}

TEST_F(ArithTest, NestedConstraintsRestoreTheOuterBound) {
  arith::ConstraintContext outer(ana, E(i) < 8);
  EXPECT_EQ(ana.GetConstIntBound(i), (ConstIntBound{0, 7}));
  {
    arith::ConstraintContext inner(ana, E(3) <= i);
    EXPECT_EQ(ana.GetConstIntBound(i), (ConstIntBound{3, 7}));
  }
  EXPECT_EQ(ana.GetConstIntBound(i), (ConstIntBound{0, 7}));
}

TEST_F(ArithTest, KnownComparisonsDecideOffsetComparisons) {
  Var k = VarNode::Make("k", DataType::Int(32));
  arith::ConstraintContext known(ana, (E(x) < y) && (E(y) <= E(k) + 7));
  ExpectSimplify(E(x) < E(y) + 1, Bool(true));
  ExpectSimplify(E(y) <= x, Bool(false));
  ExpectSimplify(E(x) == y, Bool(false));
  ExpectSimplify(E(y) < E(k) + 8, Bool(true));
  // Without transitive comparisons, x < y and y <= k + 7 say nothing about x and k.
  ExpectSimplify(E(x) < E(k) + 7, E(x) < E(k) + 7);
  ana.SetTransitiveComparisons(true);
  ExpectSimplify(E(x) < E(k) + 7, Bool(true));
  ExpectSimplify(E(x) < E(k) + 6, E(x) < E(k) + 6);
}

TEST_F(ArithTest, KnownComparisonsNarrowToTheStrongerComparison) {
  {
    arith::ConstraintContext known(ana, E(x) <= y);
    ExpectSimplify(E(y) <= x, E(y) == x);  // with x <= y, y <= x only when equal
    ExpectSimplify(E(x) != y, E(x) < y);
  }
  {
    arith::ConstraintContext known(ana, E(x) != 0);
    ExpectSimplify(E(0) <= x, E(0) < x);
  }
  ana.SetTransitiveComparisons(true);
  Var k = VarNode::Make("k", DataType::Int(32));
  arith::ConstraintContext known(ana, (E(x) == y) && (E(y) != k));
  ExpectSimplify(E(x) != k, Bool(true));
  ExpectSimplify(E(x) < k, E(x) < k);
}

TEST_F(ArithTest, BooleanBranchesUnderEachOther) {
  // Off by default: each side of && and || is simplified on its own.
  ExpectSimplify((E(x) < 5) && (E(x) < 10), (E(x) < 5) && (E(x) < 10));
  ana.SetConstraintsOnBooleanBranches(true);
  ExpectSimplify((E(x) < 5) && (E(x) < 10), E(x) < 5);
  ExpectSimplify((E(x) < 10) && (E(x) < 5), E(x) < 5);
  ExpectSimplify((E(x) < 5) || (E(x) < 10), E(x) < 10);
  ExpectSimplify((E(x) < 5) && (E(y) < 10), (E(x) < 5) && (E(y) < 10));
}

TEST_F(ArithTest, EqualitiesWithDifferentConstants) {
  Expr eq20 = EQNode::Make(E(x), E(20)), ne30 = NENode::Make(E(x), E(30));
  ExpectSimplify(Expr(AndNode::Make(eq20, ne30)), eq20);
  ExpectSimplify(Expr(OrNode::Make(eq20, ne30)), ne30);
  ExpectSimplify(Expr(AndNode::Make(eq20, EQNode::Make(E(x), E(30)))), Expr(Bool(false)));
  ExpectSimplify(Expr(OrNode::Make(NENode::Make(E(x), E(20)), ne30)), Expr(Bool(true)));
  // The same constant, or another expression: nothing to fold.
  Expr other = NENode::Make(E(y), E(30));
  ExpectSimplify(Expr(AndNode::Make(eq20, other)), Expr(AndNode::Make(eq20, other)));
}

TEST_F(ArithTest, AndOfOrs) {
  Expr a = E(x) < 5, b = E(y) < 5, c = E(i) < 5;
  // a || (b && c) is (a || b) && (a || c).
  Expr form = arith::SimplifyAsAndOfOrs(OrNode::Make(a, AndNode::Make(b, c)), ana);
  EXPECT_TRUE(StructuralEqual(form, AndNode::Make(OrNode::Make(a, b), OrNode::Make(a, c))));
  // (a || b) && (b || a) keeps one clause.
  form = arith::SimplifyAsAndOfOrs(AndNode::Make(OrNode::Make(a, b), OrNode::Make(b, a)), ana);
  EXPECT_TRUE(StructuralEqual(form, OrNode::Make(a, b)));
  // (a || x == 20) && (a || x != 30): the distinct terms join to x == 20.
  Expr eq20 = EQNode::Make(E(x), E(20)), ne30 = NENode::Make(E(x), E(30));
  form = arith::SimplifyAsAndOfOrs(AndNode::Make(OrNode::Make(b, eq20), OrNode::Make(b, ne30)), ana);
  EXPECT_TRUE(StructuralEqual(form, OrNode::Make(b, eq20)));
  // Off by default in Simplify; on, a simplified && / || takes the form.
  Expr e = OrNode::Make(a, AndNode::Make(b, c));
  ExpectSimplify(e, e);
  ana.SetConvertBooleanToAndOfOrs(true);
  ExpectSimplify(e, Expr(AndNode::Make(OrNode::Make(a, b), OrNode::Make(a, c))));
}

TEST_F(ArithTest, ConstIntBounds) {
  EXPECT_EQ(ana.GetConstIntBound(E(i) * 4 + 3), (ConstIntBound{3, 63}));
  EXPECT_EQ(ana.GetConstIntBound(fmod(x, 8)), (ConstIntBound{0, 7}));
  EXPECT_EQ(ana.GetConstIntBound(fdiv(i, 4)), (ConstIntBound{0, 3}));
  EXPECT_EQ(ana.GetConstIntBound(E(i) - j), (ConstIntBound{-15, 15}));
  EXPECT_EQ(ana.GetConstIntBound(min(i, 4)), (ConstIntBound{0, 4}));
  EXPECT_EQ(ana.GetConstIntBound(max(i, 4)), (ConstIntBound{4, 15}));
  EXPECT_EQ(ana.GetConstIntBound(tmod(x, 5)), (ConstIntBound{-4, 4}));
  EXPECT_EQ(ana.GetConstIntBound(x), ConstIntBound::OfType(DataType::Int(32)));
  Var n = SizeVarNode::Make("n", DataType::Int(64));
  EXPECT_EQ(ana.GetConstIntBound(n).min_value, 0);
  EXPECT_EQ(ana.GetConstIntBound(n).max_value, ConstIntBound::kPosInf);
}

TEST_F(ArithTest, BoundsOfLeftShiftAndCeilLog2) {
  auto shl = [](E a, E b) {
    return Expr(CallNode::Make(DataType::Int(32), OpNode::Get("tir.shift_left"), {a, b}));
  };
  // i is in [0, 16).
  EXPECT_EQ(ana.GetConstIntBound(shl(31, i)), (ConstIntBound{31, 31 << 15}));
  EXPECT_EQ(ana.GetConstIntBound(shl(E(0) - i, 4)), ConstIntBound::OfType(DataType::Int(32)));
  EXPECT_EQ(ana.GetConstIntBound(shl(16, E(0) - i)), ConstIntBound::OfType(DataType::Int(32)));
  // 1 << 40 does not fit int32.
  EXPECT_EQ(ana.GetConstIntBound(shl(1, E(i) + 25)), ConstIntBound::OfType(DataType::Int(32)));
  auto ceil_log2 = [](E n) {
    Expr f = CastNode::Make(DataType::Float(64), n);
    Expr log = CallNode::Make(DataType::Float(64), OpNode::Get("tir.log2"), {f});
    Expr ceil = CallNode::Make(DataType::Float(64), OpNode::Get("tir.ceil"), {log});
    return Expr(CastNode::Make(DataType::Int(32), ceil));
  };
  EXPECT_EQ(ana.GetConstIntBound(ceil_log2(E(i) + 1025)), (ConstIntBound{11, 11}));
  EXPECT_EQ(ana.GetConstIntBound(ceil_log2(E(i) + 1)), (ConstIntBound{0, 4}));
  ExpectSimplify(ceil_log2(14), E(4));
}

TEST_F(ArithTest, ModularSets) {
  EXPECT_EQ(ana.GetModularSet(E(x) * 8 + 4), (ModularSet{8, 4}));
  EXPECT_EQ(ana.GetModularSet(E(x) * 8 + E(y) * 12 + 2), (ModularSet{4, 2}));
  // As TVM: a remainder of a non-constant is the set of its residues modulo gcd(6, 3), even
  // where that is one value; a constant's remainder is a constant.
  EXPECT_EQ(ana.GetModularSet(fmod(E(x) * 6 + 4, 3)), (ModularSet{3, 1}));
  EXPECT_EQ(ana.GetModularSet(fmod(E(x) * 0 + 7, 3)), (ModularSet{0, 1}));
  EXPECT_EQ(ana.GetModularSet(fdiv(E(x) * 8 + 4, 4)), (ModularSet{2, 1}));
  EXPECT_EQ(ana.GetModularSet(E(x) - 3), (ModularSet{1, 0}));
  Var k = VarNode::Make("k", DataType::Int(32));
  ana.Bind(k, (E(x) * 4).e);
  EXPECT_EQ(ana.GetModularSet(E(k) + 2), (ModularSet{4, 2}));
  EXPECT_TRUE(ana.CanProve(fmod(k, 2) == 0));
}

TEST_F(ArithTest, UpdateRecordsABoundAndRefusesAConflict) {
  EXPECT_FALSE(ana.IsBound(x.get()));
  ana.Update(x, ConstIntBound{-3, 4}, /*allow_override=*/false);
  EXPECT_TRUE(ana.IsBound(x.get()));
  EXPECT_EQ(ana.GetConstIntBound(E(x) * 2 + 1), (ConstIntBound{-5, 9}));
  ana.Update(x, ConstIntBound{-3, 4}, false);  // the same bound again: no conflict
  EXPECT_THROW(ana.Update(x, ConstIntBound{0, 1}, false), Error);
  ana.Update(x, ConstIntBound{0, 1}, /*allow_override=*/true);
  EXPECT_EQ(ana.GetConstIntBound(x), (ConstIntBound{0, 1}));
}

TEST_F(ArithTest, BoundsOfDivisionModuloAndBitOps) {
  ana.Update(x, ConstIntBound{-9, 4}, false);
  ana.Update(y, ConstIntBound{-2, 0}, false);
  // A divisor across zero: its negative part, and the whole type for its empty positive part.
  EXPECT_EQ(ana.GetConstIntBound(tdiv(x, y)), (ConstIntBound{-4, 9}));
  ana.Update(y, ConstIntBound{4, 10}, true);
  EXPECT_EQ(ana.GetConstIntBound(tmod(x, y)), (ConstIntBound{-9, 4}));
  EXPECT_EQ(ana.GetConstIntBound(fmod(x, y)), (ConstIntBound{0, 9}));
  ana.Update(x, ConstIntBound{3, 5}, true);
  EXPECT_EQ(ana.GetConstIntBound(fmod(x, 10)), (ConstIntBound{3, 5}));  // below the divisor
  // Remainders of multiples of 16 modulo 7168 stop at 7152.
  ana.Update(x, ConstIntBound{0, 100}, true);
  EXPECT_EQ(ana.GetConstIntBound(fmod(E(x) * 2048 + E(i) * 16, 7168)),
            (ConstIntBound{0, 7152}));
  ana.Update(x, ConstIntBound{-9, 11}, true);
  ana.Update(y, ConstIntBound{2, 10}, true);
  auto call = [](const char* op, E a, E b) {
    return E(Expr(CallNode::Make(DataType::Int(32), OpNode::Get(op), {a.e, b.e})));
  };
  EXPECT_EQ(ana.GetConstIntBound(call("tir.shift_right", x, y)), (ConstIntBound{-3, 2}));
  EXPECT_EQ(ana.GetConstIntBound(call("tir.bitwise_and", x, y)), (ConstIntBound{0, 10}));
  // A cast keeps the bound of its value, through a float too.
  Expr f = CastNode::Make(DataType::Float(32), tmod(x, 3).e);
  EXPECT_EQ(ana.GetConstIntBound(CastNode::Make(DataType::Int(32), f)), (ConstIntBound{-2, 2}));
}

TEST_F(ArithTest, ConstraintsBoundExpressionsAndResidues) {
  Expr r = fmod(x, 58);
  {
    arith::ConstraintContext c(ana, (E(1) <= r).e);
    EXPECT_EQ(ana.GetConstIntBound(E(r) - 1).min_value, 0);
  }
  EXPECT_EQ(ana.GetConstIntBound(E(r) - 1).min_value, -1);
  {
    arith::ConstraintContext c1(ana, (tmod(x, 4) == 1).e);
    arith::ConstraintContext c2(ana, (tmod(x, 3) == 1).e);
    EXPECT_EQ(ana.GetModularSet(x), (ModularSet{12, 1}));
  }
  EXPECT_EQ(ana.GetModularSet(x), (ModularSet{1, 0}));
  EXPECT_EQ(arith::IntersectModular({15, 8}, {7, 2}), (ModularSet{105, 23}));
  EXPECT_FALSE(arith::IntersectModular({4, 1}, {2, 0}).has_value());
  EXPECT_EQ(arith::IntersectModular({0, 9}, {4, 1}), (ModularSet{0, 9}));
}

TEST_F(ArithTest, CanProve) {
  EXPECT_TRUE(ana.CanProve(E(i) < 16));
  EXPECT_FALSE(ana.CanProve(E(i) < 15));
  EXPECT_TRUE(ana.CanProve(E(i) * 16 + j < 256));
  EXPECT_TRUE(ana.CanProveGreaterEqual(E(i) * 16 + j, 0));
  EXPECT_TRUE(ana.CanProveLess(fmod(x, 8), 8));
  EXPECT_TRUE(ana.CanProveEqual(fdiv(E(i) * 16 + j, 16), i));
  EXPECT_FALSE(ana.CanProveEqual(x, y));
  EXPECT_TRUE(ana.CanProve(AndNode::Make((E(i) < 16).e, (E(0) <= j).e)));
}

TEST_F(ArithTest, SmallIntegersWrapAsBefore) {
  Expr a = IntImmNode::Make(DataType::Int(8), 100);
  Expr sum = ana.Simplify(AddNode::Make(a, a));
  ASSERT_TRUE(AsConstInt(sum));
  EXPECT_EQ(*AsConstInt(sum), -56);
  Expr big = AddNode::Make(Int32(2147483647), Int32(1));
  EXPECT_EQ(*AsConstInt(ana.Simplify(big)), -2147483647 - 1);
}

TEST_F(ArithTest, VectorRampArithmetic) {
  Expr r = RampNode::Make(x, Int32(1), 4);
  Expr e =
      AddNode::Make(MulNode::Make(r, BroadcastNode::Make(Int32(2), 4)), BroadcastNode::Make(y, 4));
  Expr expected = RampNode::Make((E(x) * 2 + y).e, Int32(2), 4);
  Expr got = ana.Simplify(e);
  EXPECT_TRUE(StructuralEqual(got, expected)) << AsScript(got);
}

TEST_F(ArithTest, FloorDivModOfRampWithinOnePeriod) {
  // x * 4 + [0, 1, 2, 3] stays inside one period of 16 (x * 4 mod 16 is 0, 4, 8 or 12), so the
  // quotient is one value and the remainder a ramp.
  auto c16 = BroadcastNode::Make(Int32(16), 4);
  Expr r = RampNode::Make((E(x) * 4).e, Int32(1), 4);
  Expr div = ana.Simplify(FloorDivNode::Make(r, c16));
  Expr mod = ana.Simplify(FloorModNode::Make(r, c16));
  EXPECT_TRUE(StructuralEqual(div, BroadcastNode::Make(fdiv(x, 4).e, 4))) << AsScript(div);
  EXPECT_TRUE(StructuralEqual(mod, RampNode::Make((fmod(x, 4) * 4).e, Int32(1), 4)))
      << AsScript(mod);
  // x * 4 + 2 + [0, 1, 2, 3] may cross a multiple of 16: left alone.
  Expr crossing = RampNode::Make((E(x) * 4 + 2).e, Int32(1), 4);
  Expr kept = ana.Simplify(FloorDivNode::Make(crossing, c16));
  EXPECT_EQ(kept->kind, NodeKind::kFloorDiv) << AsScript(kept);
}


TEST_F(ArithTest, EqualityPutsTheConstantOnTheRight) {
  // 1 <= k for k in [0, 2) holds only at k == 1; the rewrite rules say it as `k == 1`.
  Var k = VarNode::Make("k", DataType::Int(32));
  ana.Bind(k, RangeNode::Make(Int32(0), Int32(2)));
  Expr got = ana.RewriteSimplify(E(1) <= E(k));
  EXPECT_TRUE(StructuralEqual(got, (E(k) == E(1)).e)) << got;
  got = ana.RewriteSimplify(E(3) == E(x));
  EXPECT_TRUE(StructuralEqual(got, (E(x) == E(3)).e)) << got;
}

TEST_F(ArithTest, VscaleConditionsAreProvenOnlyForTheTargetsValues) {
  E vs = Expr(ScalableLanesExpr(4));  // T.vscale() * 4
  E covers = fdiv(100 + vs - 1, vs) * vs >= 100;
  auto& context = arith::CurrentVScaleContext();
  arith::VScaleContext saved = context;
  context = {{1, 2, 4, 8, 16}, "llvm -mattr=+sve"};
  EXPECT_TRUE(ana.CanProve(covers));
  EXPECT_FALSE(ana.CanProve(vs >= 8));  // false at vscale 1
  EXPECT_TRUE(arith::ContainsVScale(covers) && !arith::ContainsVScale(x + 1));
  context = {{}, "llvm"};
  testing::internal::CaptureStderr();
  EXPECT_FALSE(ana.CanProve(covers));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Warning: a comparison over T.vscale() was not checked"), std::string::npos);
  EXPECT_NE(err.find("and the target is llvm"), std::string::npos);
  context = saved;
}

}  // namespace
}  // namespace tessera
