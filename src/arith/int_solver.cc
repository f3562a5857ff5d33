// Systems of linear equations over the integers, solved through the Smith normal form of their
// coefficient matrix: S = U A V with U, V unimodular and S diagonal, so that A x = y becomes
// S (V^-1 x) = U y, one equation per diagonal entry.
#include "tessera/arith/int_solver.h"

#include <cstdlib>
#include <string>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"

namespace tessera {
namespace arith {
namespace {

using Matrix = std::vector<std::vector<int64_t>>;

// g = gcd(|a|, |b|) with x * a + y * b == g.
int64_t ExtendedGcd(int64_t a, int64_t b, int64_t* x, int64_t* y) {
  int64_t r0 = a, r1 = b, s0 = 1, s1 = 0, t0 = 0, t1 = 1;
  while (r1 != 0) {
    int64_t q = r0 / r1;
    int64_t r2 = r0 - q * r1, s2 = s0 - q * s1, t2 = t0 - q * t1;
    r0 = r1, r1 = r2, s0 = s1, s1 = s2, t0 = t1, t1 = t2;
  }
  if (r0 < 0) r0 = -r0, s0 = -s0, t0 = -t0;
  *x = s0;
  *y = t0;
  return r0;
}

Expr Const(const Expr& like, int64_t v) { return IntConst(like->dtype, v); }

// Diagonalizes S (m x n) in place. Row operations are applied to the right-hand sides `y`;
// column operations to V (starting as the identity) and, inverted, to `x` (V^-1 times the
// variables), so that S V^-1 x = y keeps holding.
void Diagonalize(Matrix* S, Matrix* V, std::vector<Expr>* x, std::vector<Expr>* y) {
  if (S->empty()) return;
  size_t m = S->size(), n = (*S)[0].size();
  for (size_t k = 0; k < std::min(m, n); ++k) {
    // The pivot: the row with the smallest non-zero entry in column k.
    size_t best = k;
    for (size_t i = k; i < m; ++i) {
      int64_t cur = (*S)[best][k], cand = (*S)[i][k];
      if (cand != 0 && (cur == 0 || std::llabs(cand) < std::llabs(cur))) best = i;
    }
    std::swap((*S)[k], (*S)[best]);
    std::swap((*y)[k], (*y)[best]);
    if ((*S)[k][k] == 0) {
      // Column k is zero below row k: bring a column with a non-zero entry in row k.
      for (size_t j = k + 1; j < n; ++j) {
        if ((*S)[k][j] == 0) continue;
        for (size_t i = 0; i < m; ++i) std::swap((*S)[i][k], (*S)[i][j]);
        for (size_t i = 0; i < n; ++i) std::swap((*V)[i][k], (*V)[i][j]);
        std::swap((*x)[k], (*x)[j]);
        break;
      }
    }
    if ((*S)[k][k] == 0) continue;
    // Clear column k below the pivot with unimodular row operations.
    for (size_t i = k + 1; i < m; ++i) {
      int64_t p = (*S)[k][k], q = (*S)[i][k];
      if (q == 0) continue;
      int64_t a = 1, b = 0, g = p;
      if (q % p != 0) g = ExtendedGcd(p, q, &a, &b);
      int64_t pg = p / g, qg = q / g;
      // [row_k; row_i] <- [[a, b], [qg, -pg]] [row_k; row_i] (determinant -1).
      for (size_t j = k; j < n; ++j) {
        int64_t rk = (*S)[k][j], ri = (*S)[i][j];
        (*S)[k][j] = a * rk + b * ri;
        (*S)[i][j] = qg * rk - pg * ri;
      }
      Expr yk = (*y)[k], yi = (*y)[i];
      (*y)[k] = AddE(MulE(Const(yk, a), yk), MulE(Const(yi, b), yi));
      (*y)[i] = SubE(MulE(Const(yk, qg), yk), MulE(Const(yi, pg), yi));
    }
    // Clear row k right of the pivot with column operations; a gcd step may refill column k,
    // in which case this pivot is done again.
    bool refill = false;
    for (size_t j = k + 1; j < n; ++j) {
      int64_t p = (*S)[k][k], q = (*S)[k][j];
      if (q == 0) continue;
      int64_t a = 1, b = 0, g = p;
      if (q % p != 0) {
        g = ExtendedGcd(p, q, &a, &b);
        refill = true;
      }
      int64_t pg = p / g, qg = q / g;
      // [col_k, col_j] <- [col_k, col_j] [[a, qg], [b, -pg]]; its inverse is
      // [[pg, qg], [b, -a]], applied to the variables.
      for (size_t i = 0; i < m; ++i) {
        int64_t ck = (*S)[i][k], cj = (*S)[i][j];
        (*S)[i][k] = a * ck + b * cj;
        (*S)[i][j] = qg * ck - pg * cj;
      }
      for (size_t i = 0; i < n; ++i) {
        int64_t ck = (*V)[i][k], cj = (*V)[i][j];
        (*V)[i][k] = a * ck + b * cj;
        (*V)[i][j] = qg * ck - pg * cj;
      }
      Expr xk = (*x)[k], xj = (*x)[j];
      (*x)[k] = AddE(MulE(Const(xk, pg), xk), MulE(Const(xj, qg), xj));
      (*x)[j] = SubE(MulE(Const(xk, b), xk), MulE(Const(xj, a), xj));
    }
    if (refill) --k;
  }
}

Expr RangeMax(const Range& r) { return SubE(AddE(r->min, r->extent), Const(r->extent, 1)); }

}  // namespace

IntConstraintsTransformData SolveLinearEquations(const IntConstraintsData& system) {
  Analyzer ana;
  IntervalMap intervals;
  for (const auto& [v, r] : system.ranges) {
    ana.Bind(v, r);
    intervals[v.get()] = {r->min, RangeMax(r)};
  }
  size_t n = system.variables.size();
  Matrix S, V(n, std::vector<int64_t>(n, 0));
  std::vector<Expr> x, y, rest;
  for (size_t i = 0; i < n; ++i) {
    V[i][i] = 1;
    x.push_back(system.variables[i]);
  }
  // Each linear equation with constant coefficients becomes a row: coeffs . x == -base.
  for (const Expr& rel : system.relations) {
    auto* eq = AsPtr<EQNode>(rel);
    if (eq && n > 0) {
      std::vector<Expr> coeffs =
          DetectLinearEquation(ana.Simplify(SubE(eq->a, eq->b)), system.variables);
      std::vector<int64_t> row;
      for (size_t j = 0; j + 1 < coeffs.size(); ++j) {
        auto c = AsConstInt(coeffs[j]);
        if (!c) {
          row.clear();
          break;
        }
        row.push_back(*c);
      }
      if (!row.empty()) {
        S.push_back(row);
        y.push_back(MulE(coeffs.back(), Const(coeffs.back(), -1)));
        continue;
      }
    }
    rest.push_back(rel);
  }
  Diagonalize(&S, &V, &x, &y);

  IntConstraintsTransformData out;
  out.src = system;
  // A solution exists when each diagonal entry divides its right-hand side (a zero row: the
  // right-hand side is zero).
  std::vector<Expr> relations;
  for (size_t i = 0; i < S.size(); ++i) {
    Expr cond;
    if (i >= n || S[i][i] == 0) {
      cond = EQNode::Make(y[i], Const(y[i], 0));
    } else {
      cond = EQNode::Make(FloorModE(y[i], Const(y[i], std::llabs(S[i][i]))), Const(y[i], 0));
    }
    cond = ana.Simplify(cond);
    if (IsConstInt(cond, 0)) {
      out.dst.relations = {Bool(false)};
      return out;
    }
    if (!IsConstInt(cond, 1)) relations.push_back(cond);
  }
  // V^-1 x: a constant where the diagonal entry is non-zero, a new free variable elsewhere.
  std::vector<Expr> solved;
  std::vector<Var> new_vars;
  for (size_t j = 0; j < n; ++j) {
    if (j >= S.size() || S[j][j] == 0) {
      Expr old = ana.Simplify(x[j]);
      std::string name = "n" + std::to_string(new_vars.size());
      if (auto* v = AsPtr<VarNode>(old)) name += "_" + v->name;
      Var nv = VarNode::Make(name, x[j]->dtype);
      new_vars.push_back(nv);
      solved.push_back(nv);
      out.dst_to_src.emplace_back(nv, old);
    } else if (S[j][j] > 0) {
      solved.push_back(ana.Simplify(FloorDivE(y[j], Const(y[j], S[j][j]))));
    } else {
      solved.push_back(ana.Simplify(FloorDivE(MulE(y[j], Const(y[j], -1)), Const(y[j], -S[j][j]))));
    }
  }
  VarMap old_to_new;
  for (size_t i = 0; i < n; ++i) {
    const Var& v = system.variables[i];
    Expr e = IntConst(v->dtype, 0);
    for (size_t j = 0; j < n; ++j) {
      if (V[i][j] != 0) e = AddE(e, MulE(IntConst(v->dtype, V[i][j]), solved[j]));
    }
    e = ana.Simplify(e);
    out.src_to_dst.emplace_back(v, e);
    old_to_new[v.get()] = e;
  }
  // Ranges: those of the variables not solved for stay; the new variables' ranges come from
  // the old variables they stand for.
  std::unordered_set<const VarNode*> solved_vars;
  for (const Var& v : system.variables) solved_vars.insert(v.get());
  for (const auto& [v, r] : system.ranges) {
    if (!solved_vars.count(v.get())) out.dst.ranges.emplace_back(v, r);
  }
  Analyzer ana_dst;
  for (const auto& [v, old] : out.dst_to_src) {
    Interval s = EvalInterval(old, intervals);
    if (s.nothing || !s.min || !s.max) continue;
    Expr lo = ana.Simplify(s.min);
    Expr extent = ana.Simplify(AddE(SubE(s.max, s.min), Const(s.max, 1)));
    Range r = RangeNode::Make(lo, extent);
    out.dst.ranges.emplace_back(v, r);
  }
  for (const auto& [v, r] : out.dst.ranges) ana_dst.Bind(v, r);
  // The old ranges, as relations over the new variables.
  for (const auto& [v, r] : system.ranges) {
    if (!solved_vars.count(v.get())) continue;
    const Expr& e = old_to_new[v.get()];
    Expr lower = ana_dst.Simplify(LENode::Make(CastTo(e->dtype, r->min), e));
    Expr upper = ana_dst.Simplify(LTNode::Make(e, CastTo(e->dtype, AddE(r->min, r->extent))));
    if (!IsConstInt(lower, 1)) relations.push_back(lower);
    if (!IsConstInt(upper, 1)) relations.push_back(upper);
  }
  for (const Expr& rel : rest) relations.push_back(Substitute(rel, old_to_new));
  out.dst.variables = new_vars;
  out.dst.relations = relations;
  return out;
}

}  // namespace arith
}  // namespace tessera
