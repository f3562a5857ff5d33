// Buffer contents known at a point of a walk through a function, in program order: what a
// store wrote, what a T.assume or an enclosing condition says about an element. tir.Simplify
// (options propagate_knowns_to_*) uses them to prove conditions and fold loads; tir.RemoveNoOp
// (use_dataflow_analysis) to drop a store of the value an element already holds. The walk
// (the pass) calls the hooks below as it goes; facts are dropped whenever they may no longer
// hold, so the analysis is a conservative subset of TVM's control-flow-graph propagation.
#pragma once
#include <memory>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace transform {

class KnownBufferValues {
 public:
  /*! \brief buffer[axes] == value wherever the axes equal `point` (null dims: any) and
   *  `cond` (null: true) holds. `value` and `cond` read no buffer. */
  struct Fact {
    Buffer buffer;
    std::vector<Var> axes;
    std::vector<Expr> point;
    Expr cond;
    Expr value;
  };
  using FactPtr = std::shared_ptr<const Fact>;
  using State = std::vector<FactPtr>;

  explicit KnownBufferValues(arith::Analyzer* ana) : ana_(ana) {}

  const State& state() const { return facts_; }
  void Restore(State s) { facts_ = std::move(s); }
  void Clear() { facts_.clear(); }

  /*! \brief The known value of a scalar load, or null. */
  Expr Lookup(const BufferLoadNode* load) const;
  /*! \brief `e` with every load whose value is known replaced by it. */
  Expr SubstituteLoads(const Expr& e) const;

  /*! \brief A store: facts it may overwrite go; the stored value becomes known. */
  void Store(const BufferStoreNode* store);
  /*! \brief The conjuncts of `cond` (a T.assume, or a condition known to hold) that say
   *  `B[idx] == v`, possibly or-ed with conditions that read no buffer, become facts. */
  void Assume(const Expr& cond);
  /*! \brief Facts at the join of an if: those both branches kept, and those of one branch
   *  guarded by its condition (dropped when the condition reads a buffer). */
  void Merge(const State& then_end, const State& else_end, const Expr& cond);
  /*! \brief Before a loop's body: drop what the iterations may change before reading it. */
  State EnterLoop(const Var& loop_var, const Stmt& body);
  /*! \brief After the loop: facts of the body's end generalised over the loop variable. */
  void ExitLoop(const Var& loop_var, const Expr& min, const Expr& extent, const Stmt& body,
                const State& entry);
  /*! \brief Drop the facts that mention `var` (it goes out of scope). */
  void ForgetVar(const VarNode* var);

  static bool ReadsBuffer(const Expr& e);
  /*! \brief Whether evaluating `e` may change memory (a call that is not pure, not assume). */
  static bool MayWriteMemory(const Expr& e);

 private:
  bool MayOverlap(const Fact& f, const std::vector<Expr>& indices) const;
  /*! \brief Every load and store of the buffer in `body` uses one index tuple, and one of its
   *  dimensions is the loop variable: each iteration touches only its own element. */
  static bool ElementWise(const Stmt& body, const VarNode* loop_var, const VarNode* data);

  arith::Analyzer* ana_;
  State facts_;
};

}  // namespace transform
}  // namespace tessera
