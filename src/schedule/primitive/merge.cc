// merge: loop nests of equal extents under one scope become one loop nest whose innermost merged
// loop runs their bodies one after another.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

StmtSRef Merge(ScheduleState& state, const std::vector<StmtSRef>& loop_srefs) {
  if (loop_srefs.size() < 2) Fail("merge needs at least two loops");
  std::vector<const StmtSRefNode*> nodes;
  for (const StmtSRef& s : loop_srefs) {
    LoopOf(s);
    nodes.push_back(s.get());
  }
  const StmtSRefNode* lca = LowestCommonAncestor(nodes);
  // For each given loop, the loops from it up to (not including) the common ancestor.
  std::vector<std::vector<const ForNode*>> nests;
  StmtSRef scope;
  for (size_t i = 0; i < loop_srefs.size(); ++i) {
    const StmtSRef& sref = loop_srefs[i];
    std::vector<const ForNode*> nest;
    std::vector<const StmtSRefNode*> nest_srefs;
    for (const StmtSRefNode* p = sref.get(); p && p != lca; p = p->parent) {
      if (const ForNode* loop = p->loop()) {
        if (!loop->annotations.empty() || loop->thread_binding) {
          Fail("merge: a loop is annotated or bound to a thread",
               "merge: the loop {0} is annotated or bound to a thread", {p->stmt});
        }
        if (!IsConstInt(loop->min, 0)) {
          Fail("the loop must start at 0", "the loop {0} must start at 0, but its min is not 0",
               {p->stmt});
        }
        nest.push_back(loop);
        nest_srefs.push_back(p);
      }
    }
    for (size_t k = nest.size(); k-- > 1;) {
      if (nest[k]->body.get() != nest[k - 1]) {
        Fail("merge: an outer loop holds more than the next loop of the nest",
             "merge: the body of {0} must be the loop {1} alone",
             {nest_srefs[k]->stmt, nest_srefs[k - 1]->stmt});
      }
    }
    StmtSRef root = GetScopeRoot(state, sref.get());
    if (i == 0) {
      scope = root;
    } else {
      if (root != scope) Fail("merge: the loops must be in the same block scope");
      if (nest.size() != nests[0].size()) {
        Fail("merge: the loop nests must have the same depth");
      }
      arith::Analyzer ana;
      for (size_t k = 0; k < nest.size(); ++k) {
        if (!ana.CanProveEqual(nest[k]->extent, nests[0][k]->extent)) {
          Fail("merge: loops at depth " + std::to_string(k) + " have different extents, " +
               AsScript(nests[0][k]->extent) + " and " + AsScript(nest[k]->extent));
        }
      }
    }
    nests.push_back(nest);
  }
  if (!scope) Fail("merge: the loops have no enclosing block");
  // The merged loops take the variables of the first nest, renamed "<name>_m".
  std::vector<Var> vars;
  for (const ForNode* l : nests[0])
    vars.push_back(NewVar(l->loop_var->name + "_m", l->loop_var->dtype));
  std::vector<Stmt> bodies;
  for (const auto& nest : nests) {
    VarMap vmap;
    for (size_t k = 0; k < nest.size(); ++k) vmap[nest[k]->loop_var.get()] = vars[k];
    bodies.push_back(Substitute(nest[0]->body, vmap));
  }
  For inner = ForNode::Make(vars[0], IntConst(vars[0]->dtype, 0), nests[0][0]->extent,
                            ForKind::kSerial, SeqStmtNode::Flatten(bodies));
  Stmt merged = inner;
  for (size_t k = 1; k < vars.size(); ++k) {
    merged = ForNode::Make(vars[k], IntConst(vars[k]->dtype, 0), nests[0][k]->extent,
                           ForKind::kSerial, merged);
  }
  // The merged nest takes the place of the last nest; the others go.
  StmtEditor editor;
  for (size_t i = 0; i + 1 < nests.size(); ++i) editor.replace[nests[i].back()] = nullptr;
  editor.replace[nests.back().back()] = merged;
  Stmt result = editor.VisitStmt(scope->stmt);
  BlockReuse reuse = editor.reuse;
  state.Replace(scope.get(), scope->stmt.get(), result, reuse);
  return state.GetSRef(inner.get());
}

}  // namespace schedule
}  // namespace tessera
