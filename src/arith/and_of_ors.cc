// SimplifyAsAndOfOrs: a bool expression rewritten as (a || b || ...) && (c || ...) && ...,
// the form TVM's tir.Simplify gives with convert_boolean_to_and_of_ors. Terms are numbered
// (structurally equal terms share a number), ors are term lists, the whole an or-list list.
#include <algorithm>
#include <functional>
#include <optional>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {
namespace {

class AndOfOrs {
 public:
  explicit AndOfOrs(const Expr& e) {
    true_ = Key(Bool(true));
    false_ = Key(Bool(false));
    SplitAnd(e, [&](const Expr& clause) {
      std::vector<size_t> terms;
      SplitOr(clause, [&](const Expr& term) {
        size_t k = Key(term);
        if (std::find(terms.begin(), terms.end(), k) == terms.end()) terms.push_back(k);
      });
      // A clause with the same terms as an earlier one, in any order, adds nothing.
      for (const auto& prev : clauses_) {
        if (prev.size() == terms.size() &&
            std::is_permutation(prev.begin(), prev.end(), terms.begin())) {
          return;
        }
      }
      clauses_.push_back(std::move(terms));
    });
  }

  void Simplify(Analyzer& ana) {
    WithinClauses(ana);
    DropConstants();
    AcrossClauses(ana);
    DropConstants();
  }

  Expr ToExpr() const {
    Expr result;
    for (const auto& clause : clauses_) {
      Expr c;
      for (size_t k : clause) c = c ? Expr(OrNode::Make(c, terms_[k])) : terms_[k];
      if (!c) c = Bool(false);
      result = result ? Expr(AndNode::Make(result, c)) : c;
    }
    return result ? result : Bool(true);
  }

 private:
  using Callback = std::function<void(const Expr&)>;

  // (x && y) gives the clauses of each; (x || y) the ors of each pair of their clauses.
  static void SplitAnd(const Expr& e, const Callback& f) {
    if (auto* a = AsPtr<AndNode>(e)) {
      SplitAnd(a->a, f);
      SplitAnd(a->b, f);
    } else if (auto* o = AsPtr<OrNode>(e)) {
      SplitAnd(o->a, [&](const Expr& x) {
        SplitAnd(o->b, [&](const Expr& y) { f(OrNode::Make(x, y)); });
      });
    } else {
      f(e);
    }
  }

  static void SplitOr(const Expr& e, const Callback& f) {
    if (auto* o = AsPtr<OrNode>(e)) {
      SplitOr(o->a, f);
      SplitOr(o->b, f);
    } else if (auto* a = AsPtr<AndNode>(e)) {
      SplitOr(a->a, [&](const Expr& x) {
        SplitOr(a->b, [&](const Expr& y) { f(AndNode::Make(x, y)); });
      });
    } else {
      f(e);
    }
  }

  size_t Key(const Expr& e) {
    for (size_t k = 0; k < terms_.size(); ++k) {
      if (StructuralEqual(terms_[k], e)) return k;
    }
    terms_.push_back(e);
    return terms_.size() - 1;
  }

  // a || b simplified: to one expression (a becomes false), or to another or of two.
  void TryOr(size_t* a, size_t* b, Analyzer& ana) {
    Expr joint = OrNode::Make(terms_[*a], terms_[*b]);
    Expr s = ana.Simplify(joint);
    if (StructuralEqual(s, joint)) return;
    if (auto* o = AsPtr<OrNode>(s)) {
      *a = Key(o->a);
      *b = Key(o->b);
    } else {
      *a = false_;
      *b = Key(s);
    }
  }

  void TryAnd(size_t* a, size_t* b, Analyzer& ana) {
    Expr joint = AndNode::Make(terms_[*a], terms_[*b]);
    Expr s = ana.Simplify(joint);
    if (StructuralEqual(s, joint)) return;
    if (auto* n = AsPtr<AndNode>(s)) {
      *a = Key(n->a);
      *b = Key(n->b);
    } else {
      *a = true_;
      *b = Key(s);
    }
  }

  void WithinClauses(Analyzer& ana) {
    for (auto& clause : clauses_) {
      for (size_t i = 0; i < clause.size(); ++i) {
        for (size_t j = i + 1; j < clause.size(); ++j) TryOr(&clause[i], &clause[j], ana);
      }
    }
  }

  static std::optional<size_t> FirstNotIn(const std::vector<size_t>& x,
                                          const std::vector<size_t>& y) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::find(y.begin(), y.end(), x[i]) == y.end()) return i;
    }
    return std::nullopt;
  }

  void AcrossClauses(Analyzer& ana) {
    for (size_t i = 0; i < clauses_.size(); ++i) {
      for (size_t j = i + 1; j < clauses_.size(); ++j) {
        auto& ci = clauses_[i];
        auto& cj = clauses_[j];
        if (ci.size() == 1 && cj.size() == 1) {
          TryAnd(&ci[0], &cj[0], ana);
          continue;
        }
        // One clause's terms all in the other: the larger clause is implied.
        auto di = FirstNotIn(ci, cj);
        if (!di) {
          cj = {true_};
          continue;
        }
        auto dj = FirstNotIn(cj, ci);
        if (!dj) {
          ci = {true_};
          continue;
        }
        if (ci.size() != cj.size()) continue;
        size_t shared = 0;
        for (size_t k : cj) shared += std::count(ci.begin(), ci.end(), k) ? 1 : 0;
        if (shared + 1 != ci.size()) continue;
        // (A || b) && (A || c): b && c may be simplified knowing A is false.
        Expr others;
        for (size_t n = 0; n < ci.size(); ++n) {
          if (n == *di) continue;
          Expr neg = ana.Simplify(NegateCondition(terms_[ci[n]]));
          others = others ? Expr(AndNode::Make(others, neg)) : neg;
        }
        std::optional<ConstraintContext> known;
        if (others) known.emplace(ana, others);
        TryAnd(&ci[*di], &cj[*dj], ana);
      }
    }
  }

  void DropConstants() {
    bool any_false = false;
    for (auto& clause : clauses_) {
      if (std::count(clause.begin(), clause.end(), true_)) {
        clause = {true_};
      } else {
        clause.erase(std::remove(clause.begin(), clause.end(), false_), clause.end());
      }
      any_false = any_false || clause.empty();
    }
    if (any_false) {
      clauses_ = {{}};
      return;
    }
    clauses_.erase(std::remove_if(clauses_.begin(), clauses_.end(),
                                  [&](const std::vector<size_t>& c) {
                                    return c.size() == 1 && c[0] == true_;
                                  }),
                   clauses_.end());
  }

  std::vector<Expr> terms_;
  std::vector<std::vector<size_t>> clauses_;
  size_t true_ = 0, false_ = 0;
};

}  // namespace

Expr SimplifyAsAndOfOrs(const Expr& e, Analyzer& ana) {
  bool saved = ana.ConvertBooleanToAndOfOrs();
  ana.SetConvertBooleanToAndOfOrs(false);  // the simplifications below do not recurse
  AndOfOrs form(ana.Simplify(e));
  form.Simplify(ana);
  ana.SetConvertBooleanToAndOfOrs(saved);
  return form.ToExpr();
}

}  // namespace arith
}  // namespace tessera
