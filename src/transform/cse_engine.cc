// Hierarchical common subexpression elimination, with the rules of TVM's
// tir.transform.CommonSubexprElimTIR:
//
// - A computation is an expression that is not a constant or a variable, neither is nor
//   contains a call or a buffer load (their value may change between two statements), and is not
//   a Ramp or a Broadcast (vector accesses are recognized by them). With `scalars_only` (the DSL)
//   it is also scalar, not a pointer, and neither is nor contains a Let.
// - The computations "done by" a statement: those of its expressions (an eligible expression
//   counts once, without its parts), summed over the children of a sequence, a let, a store...;
//   for an `if`, those done by at least two of condition / then / else; for a loop, by at least
//   two of start / extent / body; for a while, by both condition and body. A computation only
//   done inside one branch or one loop body is thus left to that branch or body. Two
//   computations are the same when they are equal node for node (variables by identity), or,
//   with `identify_equiv_terms`, when they are equal once normalized (see Normalize).
// - At each statement, from the largest computation (node count) down: one already held by a
//   variable in scope (an enclosing let) is replaced by that variable; one done twice or more
//   whose variables are all in scope (parameters, enclosing lets and loop variables) gets a new
//   variable bound by a LetStmt around the statement; otherwise its direct parts are considered
//   in its place. After new variables, the statement is examined again; without, its children
//   are, and its expressions by the same rule (new variables there are Let expressions).
//
// Every expression node is numbered once (equal numbers = equal node for node), with its size and
// whether it contains a call, a load or a Let, so that examining a statement is linear in its
// size however deep its expressions nest; the computations done by a statement are kept for the
// statements that do not change.
#include "cse_engine.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_hash.h"

namespace tessera {
namespace transform {
namespace {

bool IsAtom(const Expr& e) {
  return AsPtr<IntImmNode>(e) || AsPtr<FloatImmNode>(e) || AsPtr<StringImmNode>(e) ||
         AsPtr<VarNode>(e) || AsPtr<SizeVarNode>(e);
}

// The direct children of an expression, in the order the visitors walk them.
std::vector<Expr> Children(const Expr& e) {
  class Collect : public ExprVisitor {
   public:
    std::vector<Expr> out;
    void VisitExpr(const Expr& x) override { out.push_back(x); }
  };
  Collect c;
  c.ExprVisitor::VisitExpr(e);
  return std::move(c.out);
}

// The operands of commutative operations in one order (see Engine::Normalize).
class CommutativeOrder : public ExprMutator {
 public:
  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const AddNode* op) override { return Commutative<AddNode>(op, true); }
  Expr VisitExpr_(const MulNode* op) override { return Commutative<MulNode>(op, true); }
  Expr VisitExpr_(const MinNode* op) override { return Commutative<MinNode>(op, true); }
  Expr VisitExpr_(const MaxNode* op) override { return Commutative<MaxNode>(op, true); }
  Expr VisitExpr_(const AndNode* op) override { return Commutative<AndNode>(op, true); }
  Expr VisitExpr_(const OrNode* op) override { return Commutative<OrNode>(op, true); }
  Expr VisitExpr_(const EQNode* op) override { return Commutative<EQNode>(op, false); }
  Expr VisitExpr_(const NENode* op) override { return Commutative<NENode>(op, false); }

 private:
  template <typename T>
  Expr Commutative(const T* op, bool associative) {
    std::vector<Expr> terms;
    const bool flatten = associative && !op->a->dtype.is_float();
    std::function<void(const Expr&)> gather = [&](const Expr& x) {
      if (auto* same = AsPtr<T>(x); same && flatten) {
        gather(same->a);
        gather(same->b);
      } else {
        terms.push_back(VisitExpr(x));
      }
    };
    gather(op->a);
    gather(op->b);
    std::vector<size_t> keys;
    for (const Expr& t : terms) keys.push_back(StructuralHash(t));
    std::vector<size_t> order(terms.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&keys](size_t x, size_t y) { return keys[x] < keys[y]; });
    Expr out = terms[order[0]];
    for (size_t i = 1; i < order.size(); ++i) out = T::Make(out, terms[order[i]]);
    return out;
  }
};

struct Facts {
  Expr node;  // keeps the node alive while its address is a key
  int64_t number = 0;
  int64_t size = 1;
  bool forbidden = false;  // is or contains a call or a buffer load
  bool has_let = false;    // is or contains a Let
};

// Computations with the number of times they are done, in the order first seen.
struct Table {
  std::vector<std::pair<Expr, int64_t>> entries;
  std::unordered_map<int64_t, size_t> index;  // number -> entry
};

class Engine {
 public:
  explicit Engine(const CSEOptions& options) : options_(options) {}

  const Facts& Of(const Expr& e) {
    auto it = facts_.find(e.get());
    if (it != facts_.end()) return it->second;
    std::vector<Expr> kids = Children(e);
    std::vector<int64_t> key = values_.OwnFields(e, kids.size());
    Facts f;
    f.node = e;
    f.has_let = AsPtr<LetNode>(e) != nullptr;
    f.forbidden = AsPtr<CallNode>(e) != nullptr || AsPtr<BufferLoadNode>(e) != nullptr;
    for (const Expr& kid : kids) {
      const Facts& k = Of(kid);
      key.push_back(k.number);
      f.size += k.size;
      f.forbidden = f.forbidden || k.forbidden;
      f.has_let = f.has_let || k.has_let;
    }
    f.number = values_.Number(std::move(key));
    return facts_.emplace(e.get(), std::move(f)).first->second;
  }

  bool Eligible(const Expr& e) {
    if (IsAtom(e) || AsPtr<RampNode>(e) || AsPtr<BroadcastNode>(e)) return false;
    const Facts& f = Of(e);
    if (f.forbidden) return false;
    if (options_.scalars_only && (f.has_let || e->dtype.is_handle() || e->dtype.is_vector())) {
      return false;
    }
    return true;
  }

  /*! \brief What identifies a computation: its number, or that of its normal form. */
  int64_t Key(const Expr& e) {
    const int64_t number = Of(e).number;
    if (!options_.identify_equiv_terms) return number;
    auto it = normal_.find(number);
    if (it != normal_.end()) return it->second;
    const int64_t key = Of(Normalize(e)).number;
    normal_.emplace(number, key);
    return key;
  }

  /*! \brief Adds the computations done by expression `e` to `table`. */
  void Collect(const Expr& e, Table* table) {
    if (IsAtom(e)) return;
    if (Eligible(e)) {
      Add(table, e, 1);
      return;
    }
    for (const Expr& kid : Children(e)) Collect(kid, table);
  }

  const Table& TableOf(const Stmt& s);

  /*! \brief The largest eligible parts of `e` (its children, or their parts where a child is not
   *  eligible). */
  std::vector<Expr> DirectParts(const Expr& e) {
    std::vector<Expr> parts;
    std::function<void(const Expr&)> walk = [&](const Expr& x) {
      if (IsAtom(x)) return;
      if (Eligible(x)) {
        parts.push_back(x);
        return;
      }
      for (const Expr& kid : Children(x)) walk(kid);
    };
    for (const Expr& kid : Children(e)) walk(kid);
    return parts;
  }

  static void Add(Table* table, const Expr& e, int64_t count, int64_t number) {
    auto [it, fresh] = table->index.emplace(number, table->entries.size());
    if (fresh) {
      table->entries.push_back({e, count});
    } else {
      table->entries[it->second].second += count;
    }
  }
  void Add(Table* table, const Expr& e, int64_t count) { Add(table, e, count, Of(e).number); }
  void Union(Table* into, const Table& other) {
    for (const auto& [e, n] : other.entries) Add(into, e, n);
  }
  int64_t Count(const Table& t, const Expr& e) {
    auto it = t.index.find(Of(e).number);
    return it == t.index.end() ? 0 : t.entries[it->second].second;
  }

  /*! \brief The computations done by at least two of `tables`, each counted as the sum over all
   *  of them: for three tables, those of (2 and 3), then (1 and 2), then (1 and 3). */
  Table AtLeastTwo(const std::vector<const Table*>& tables) {
    Table out;
    auto both = [&](const Table& a, const Table& b) {
      for (const auto& [e, n] : a.entries) {
        if (Count(b, e) == 0 || Count(out, e) > 0) continue;
        int64_t total = 0;
        for (const Table* t : tables) total += Count(*t, e);
        Add(&out, e, total);
      }
    };
    if (tables.size() == 2) {
      both(*tables[0], *tables[1]);
    } else {
      both(*tables[1], *tables[2]);
      both(*tables[0], *tables[1]);
      both(*tables[0], *tables[2]);
    }
    return out;
  }

  const CSEOptions& options() const { return options_; }

 private:
  // TVM identifies equivalent terms by its arithmetic simplifier's normal form. Tessera's
  // Simplify sorts the terms of a sum but not the factors of a product, so the normal form here
  // is the simplified term with the operands of commutative operations put in one order as well
  // (integer sums and products flattened first: their order is free; a float operation only has
  // its two operands swapped, as reassociating would change its rounding).
  Expr Normalize(const Expr& e) {
    arith::Analyzer analyzer;
    return CommutativeOrder().VisitExpr(analyzer.Simplify(e));
  }

  CSEOptions options_;
  std::unordered_map<const Object*, Facts> facts_;
  ValueNumbers values_;
  std::unordered_map<int64_t, int64_t> normal_;
  std::unordered_map<const Object*, std::pair<Stmt, Table>> tables_;
};

bool MayLeave(const Stmt& s) {
  bool leaves = false;
  PostOrderVisit(s, [&leaves](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n)) {
      if (auto* op = AsPtr<OpNode>(call->op)) {
        leaves = leaves || op->name == "tir.ret" || op->name == "tir.break" ||
                 op->name == "tir.continue";
      }
    }
  });
  return leaves;
}

// The computations done by one statement, from those of its children (kept by the engine).
class TableBuilder : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitStmt_;
  explicit TableBuilder(Engine* engine) : engine_(engine) {}
  Table table;

  void VisitExpr(const Expr& e) override { engine_->Collect(e, &table); }
  void VisitStmt(const Stmt& s) override { engine_->Union(&table, engine_->TableOf(s)); }

  void VisitStmt_(const IfThenElseNode* op) override {
    Table c = OfExpr(op->condition), t = engine_->TableOf(op->then_case);
    Table e = op->else_case != nullptr ? engine_->TableOf(op->else_case) : Table();
    engine_->Union(&table, engine_->AtLeastTwo({&c, &t, &e}));
  }
  void VisitStmt_(const ForNode* op) override {
    Table m = OfExpr(op->min), x = OfExpr(op->extent);
    const Table& b = engine_->TableOf(op->body);
    if (op->step != nullptr && engine_->options().count_loop_step) {
      engine_->Collect(op->step, &m);
    }
    engine_->Union(&table, engine_->AtLeastTwo({&m, &x, &b}));
  }
  void VisitStmt_(const WhileNode* op) override {
    Table c = OfExpr(op->condition);
    const Table& b = engine_->TableOf(op->body);
    engine_->Union(&table, engine_->AtLeastTwo({&c, &b}));
  }
  void VisitStmt_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) {
      VisitStmt(s);
      if (engine_->options().stop_at_exits && MayLeave(s)) break;
    }
  }

 private:
  Table OfExpr(const Expr& e) {
    Table t;
    if (e != nullptr) engine_->Collect(e, &t);
    return t;
  }
  Engine* engine_;
};

const Table& Engine::TableOf(const Stmt& s) {
  auto it = tables_.find(s.get());
  if (it != tables_.end()) return it->second.second;
  TableBuilder builder(this);
  builder.StmtVisitor::VisitStmt(s);  // dispatch on s itself
  return tables_.emplace(s.get(), std::make_pair(s, std::move(builder.table))).first->second.second;
}

// Replaces the eligible occurrences of one computation by a variable.
class Replace : public StmtExprMutator {
 public:
  Replace(Engine* engine, int64_t key, int64_t size, Var var)
      : engine_(engine), key_(key), size_(size), var_(std::move(var)) {}
  Expr VisitExpr(const Expr& e) override {
    if (IsAtom(e)) return e;
    const int64_t size = engine_->Of(e).size;
    // A smaller expression cannot hold the computation (with equivalent terms, an equivalent
    // one may be smaller: then every node is looked at).
    if (size < size_ && !engine_->options().identify_equiv_terms) return e;
    if (engine_->Key(e) == key_ && engine_->Eligible(e)) return var_;
    return StmtExprMutator::VisitExpr(e);
  }

 private:
  Engine* engine_;
  int64_t key_, size_;
  Var var_;
};

class Eliminator : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Eliminator(const PrimFunc& f, const CSEOptions& options) : engine_(options) {
    for (const Var& p : f->params) context_.push_back({p, nullptr});
    PostOrderVisit(f->body, [this](const ObjectRef& n) {
      if (auto* v = AsPtr<VarNode>(n)) taken_.insert(v->name);
    });
    for (const Var& p : f->params) taken_.insert(p->name);
  }

  Stmt VisitStmt(const Stmt& stmt) override {
    Stmt result = stmt;
    bool created = false;
    Examine(engine_.TableOf(stmt), [&](const Expr& comp, const Var& held) {
      if (held != nullptr) {
        result = MakeReplace(comp, held).VisitStmt(result);
        return;
      }
      Var v = NewVar(comp->dtype);
      result = MakeReplace(comp, v).VisitStmt(result);
      result = LetStmtNode::Make(v, comp, result, stmt->span);
      created = true;
    });
    if (created) return VisitStmt(result);
    return StmtExprMutator::VisitStmt(result);
  }

  Expr VisitExpr(const Expr& e) override {
    if (!engine_.options().expression_level || IsAtom(e)) return e;
    // Below an expression already examined, only a Let (which brings a variable into scope) can
    // make something new bindable.
    if (below_examined_ && !engine_.Of(e).has_let) return e;
    Expr result = e;
    Table table;
    engine_.Collect(e, &table);
    Examine(table, [&](const Expr& comp, const Var& held) {
      if (held != nullptr) {
        result = MakeReplace(comp, held).VisitExpr(result);
        return;
      }
      Var v = NewVar(comp->dtype);
      result = MakeReplace(comp, v).VisitExpr(result);
      result = LetNode::Make(v, comp, result);
    });
    const bool saved = below_examined_;
    below_examined_ = true;
    result = StmtExprMutator::VisitExpr(result);
    below_examined_ = saved;
    return result;
  }

  Expr VisitExpr_(const LetNode* op) override {
    // Both the value and the body are examined: the body has the variable in scope, and a value
    // bound here may repeat computations inside itself.
    const bool saved = below_examined_;
    below_examined_ = false;
    Expr value = VisitExpr(op->value);
    context_.push_back({op->var, op->value});
    Expr body = VisitExpr(op->body);
    context_.pop_back();
    below_examined_ = saved;
    if (value == op->value && body == op->body) return GetRef(op);
    return LetNode::Make(op->var, value, body, op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    context_.push_back({op->var, op->value});
    Stmt body = VisitStmt(op->body);
    context_.pop_back();
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    context_.push_back({op->loop_var, nullptr});
    Stmt out = StmtExprMutator::VisitStmt_(op);
    context_.pop_back();
    return out;
  }

 private:
  // Walks the computations of `table` from the largest down; `act(comp, held)` replaces one
  // held by a variable in scope (`held`) or binds one done twice or more (`held` null).
  template <typename Act>
  void Examine(const Table& table, Act act) {
    struct Item {
      Expr comp;
      int64_t count, size;
    };
    std::vector<Item> items;
    std::unordered_map<int64_t, size_t> by_key;  // key -> item
    for (const auto& [e, n] : table.entries) {
      auto [it, fresh] = by_key.emplace(engine_.Key(e), items.size());
      if (fresh) {
        items.push_back({e, n, engine_.Of(e).size});
      } else {
        items[it->second].count += n;
      }
    }
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // Largest first; equal sizes stay in the order first seen.
    std::stable_sort(order.begin(), order.end(),
                     [&items](size_t a, size_t b) { return items[a].size > items[b].size; });
    for (size_t i = 0; i < order.size(); ++i) {
      const Expr comp = items[order[i]].comp;
      const int64_t count = items[order[i]].count;
      if (Var held = Held(comp); held != nullptr) {
        act(comp, held);
        continue;
      }
      if (count >= 2 && InScope(comp)) {
        act(comp, Var());
        continue;
      }
      for (const Expr& part : engine_.DirectParts(comp)) {
        auto [it, fresh] = by_key.emplace(engine_.Key(part), items.size());
        if (!fresh) {
          ++items[it->second].count;
          continue;
        }
        const int64_t size = engine_.Of(part).size;
        items.push_back({part, 1, size});
        // After the last entry at least as large (the entries after i are sorted).
        auto at =
            std::partition_point(order.begin() + static_cast<std::ptrdiff_t>(i) + 1, order.end(),
                                 [&items, size](size_t k) { return items[k].size >= size; });
        order.insert(at, items.size() - 1);
      }
    }
  }

  Replace MakeReplace(const Expr& comp, const Var& var) {
    return Replace(&engine_, engine_.Key(comp), engine_.Of(comp).size, var);
  }

  Var Held(const Expr& comp) {
    const int64_t key = engine_.Key(comp);
    for (const auto& [v, value] : context_) {
      if (value != nullptr && value->dtype == comp->dtype && engine_.Key(value) == key) return v;
    }
    return Var();
  }

  // Whether every variable `e` uses (but does not bind itself) is in scope.
  bool InScope(const Expr& e) const {
    std::unordered_set<const Object*> bound;
    bool ok = true;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (auto* let = AsPtr<LetNode>(n)) bound.insert(let->var.get());
    });
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (!ok || !(AsPtr<VarNode>(n) || AsPtr<SizeVarNode>(n)) || bound.count(n.get())) return;
      ok = std::any_of(context_.begin(), context_.end(),
                       [&n](const std::pair<Var, Expr>& c) { return c.first.get() == n.get(); });
    });
    return ok;
  }

  Var NewVar(DataType t) {
    std::string name;
    do {
      name = engine_.options().var_prefix + std::to_string(++counter_);
    } while (taken_.count(name));
    return VarNode::Make(name, t);
  }

  Engine engine_;
  std::vector<std::pair<Var, Expr>> context_;
  std::unordered_set<std::string> taken_;
  int counter_ = 0;
  bool below_examined_ = false;
};

}  // namespace

std::vector<int64_t> ValueNumbers::OwnFields(const Expr& e, size_t children) {
  std::vector<int64_t> key;
  key.reserve(5 + children);
  key.push_back(static_cast<int64_t>(e->kind));
  key.push_back((static_cast<int64_t>(e->dtype.code()) << 40) |
                (static_cast<int64_t>(e->dtype.bits()) << 24) | e->dtype.raw_lanes());
  auto address = [](const void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); };
  if (auto* imm = AsPtr<IntImmNode>(e)) {
    key.push_back(imm->value);
  } else if (auto* fl = AsPtr<FloatImmNode>(e)) {
    int64_t bits;
    static_assert(sizeof(bits) == sizeof(fl->value));
    std::memcpy(&bits, &fl->value, sizeof(bits));
    key.push_back(bits);
  } else if (auto* str = AsPtr<StringImmNode>(e)) {
    key.push_back(strings_.emplace(str->value, strings_.size()).first->second);
  } else if (AsPtr<VarNode>(e)) {  // SizeVar included
    key.push_back(address(e.get()));
  } else if (auto* let = AsPtr<LetNode>(e)) {
    key.push_back(address(let->var.get()));
  } else if (auto* call = AsPtr<CallNode>(e)) {
    key.push_back(address(call->op.get()));
  } else if (auto* load = AsPtr<BufferLoadNode>(e)) {
    key.push_back(address(load->buffer.get()));
    key.push_back(load->predicate ? 1 : 0);
  } else if (auto* shuffle = AsPtr<ShuffleNode>(e)) {
    key.push_back(static_cast<int64_t>(shuffle->vectors.size()));
  }
  key.push_back(-1);  // the node's own fields end here
  return key;
}

size_t ValueNumbers::KeyHash::operator()(const std::vector<int64_t>& k) const {
  size_t h = k.size();
  for (int64_t x : k) h ^= std::hash<int64_t>()(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

Stmt EliminateCommonSubexpr(const PrimFunc& f, const CSEOptions& options) {
  return Eliminator(f, options).VisitStmt(f->body);
}

}  // namespace transform
}  // namespace tessera
