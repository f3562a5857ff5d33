// tir.HoistSharedVectorLoads (tessera's own pass, host targets): a vector load that several
// statements of one straight-line run of stores read is loaded once, into a variable bound just
// before its first use.
//
//   C_local[0:8]  = C_local[0:8]  + broadcast(A[i])     * B_p[k:k+8]
//   C_local[8:16] = C_local[8:16] + broadcast(A[i+1024]) * B_p[k:k+8]
//     ->
//   let b = B_p[k:k+8]
//   C_local[0:8]  = C_local[0:8]  + broadcast(A[i])     * b
//   C_local[8:16] = C_local[8:16] + broadcast(A[i+1024]) * b
//
// This is the shape of an unrolled register tile (the panel vector of Y feeds MR rows). Per
// statement, tir.CommonSubexprElimTIR cannot see it. The C code generator keeps such a variable
// in a vector register (TESSERA_KEEP_IN_REGISTER), so that the C compiler does not fold the load
// into every FMA that uses it again (GCC does: twice the loads of the micro-kernel).
//
// Legality: between the first and the last use, the run only stores; a load is hoisted when no
// store of the run writes its buffer and none may alias it (one of the two buffers is allocated
// inside the function, or the function is tir.noalias).
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// At most this many loads are hoisted out of one run: each holds a vector register.
constexpr size_t kMaxHoisted = 16;

bool IsVectorLoad(const BufferLoadNode* load) {
  DataType t = load->dtype;
  if (t.lanes() < 2 || !(t.is_float() || t.is_int() || t.is_uint())) return false;
  int bits = t.bits() * t.lanes();
  return bits == 128 || bits == 256 || bits == 512;
}

class Replace : public StmtExprMutator {
 public:
  explicit Replace(const std::vector<std::pair<Expr, Var>>* table) : table_(table) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const BufferLoadNode* op) override {
    for (const auto& [load, var] : *table_) {
      if (load->dtype == op->dtype && StructuralEqual(load, GetRef(op))) return var;
    }
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  const std::vector<std::pair<Expr, Var>>* table_;
};

class Hoister : public StmtExprMutator {
 public:
  Hoister(std::unordered_set<const VarNode*> allocated, bool noalias)
      : allocated_(std::move(allocated)), noalias_(noalias) {}
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    auto* seq = AsPtr<SeqStmtNode>(visited);
    if (seq == nullptr) return visited;
    const std::vector<Stmt>& stmts = seq->seq;
    // The loads to bind before each statement, and the replacements of each run.
    std::vector<std::vector<std::pair<Var, Expr>>> lets(stmts.size());
    std::vector<const std::vector<std::pair<Expr, Var>>*> replace(stmts.size(), nullptr);
    std::vector<std::unique_ptr<std::vector<std::pair<Expr, Var>>>> tables;
    size_t begin = 0;
    while (begin < stmts.size()) {
      size_t end = begin;
      while (end < stmts.size() && AsPtr<BufferStoreNode>(stmts[end])) ++end;
      if (end - begin >= 2) {
        auto table = std::make_unique<std::vector<std::pair<Expr, Var>>>();
        PlanRun(stmts, begin, end, &lets, table.get());
        if (!table->empty()) {
          for (size_t i = begin; i < end; ++i) replace[i] = table.get();
          tables.push_back(std::move(table));
        }
      }
      begin = end == begin ? end + 1 : end;
    }
    if (tables.empty()) return visited;
    // Rebuild from the back: each binding scopes the rest of the sequence.
    std::vector<Stmt> tail;
    for (size_t k = stmts.size(); k-- > 0;) {
      Stmt s = replace[k] ? Replace(replace[k]).VisitStmt(stmts[k]) : stmts[k];
      tail.insert(tail.begin(), s);
      if (!lets[k].empty()) {
        Stmt body = SeqStmtNode::Flatten(tail, seq->span);
        for (size_t j = lets[k].size(); j-- > 0;) {
          body = LetStmtNode::Make(lets[k][j].first, lets[k][j].second, body, seq->span);
        }
        tail = {body};
      }
    }
    return SeqStmtNode::Flatten(tail, seq->span);
  }

 private:
  bool MayAlias(const VarNode* a, const VarNode* b) const {
    if (a == b) return true;
    if (noalias_) return false;
    return !(allocated_.count(a) || allocated_.count(b));
  }

  void PlanRun(const std::vector<Stmt>& stmts, size_t begin, size_t end,
               std::vector<std::vector<std::pair<Var, Expr>>>* lets,
               std::vector<std::pair<Expr, Var>>* table) {
    std::vector<const VarNode*> written;
    for (size_t i = begin; i < end; ++i) {
      written.push_back(AsPtr<BufferStoreNode>(stmts[i])->buffer->data.get());
    }
    struct Candidate {
      Expr load;
      size_t first;
      int uses;
    };
    std::unordered_map<size_t, std::vector<Candidate>> found;
    std::vector<std::pair<size_t, size_t>> order;  // (hash, index in bucket) by first use
    for (size_t i = begin; i < end; ++i) {
      std::vector<Expr> seen_here;
      PostOrderVisit(stmts[i], [&](const ObjectRef& n) {
        auto* load = AsPtr<BufferLoadNode>(n);
        if (load == nullptr || !IsVectorLoad(load)) return;
        Expr e = GetRef(load);
        for (const Expr& s : seen_here) {
          if (StructuralEqual(s, e)) return;
        }
        seen_here.push_back(e);
        size_t h = StructuralHash(e);
        auto& bucket = found[h];
        for (Candidate& c : bucket) {
          if (c.load->dtype == e->dtype && StructuralEqual(c.load, e)) {
            ++c.uses;
            return;
          }
        }
        bucket.push_back({e, i, 1});
        order.push_back({h, bucket.size() - 1});
      });
    }
    for (const auto& [h, index] : order) {
      const Candidate& c = found[h][index];
      if (c.uses < 2 || table->size() >= kMaxHoisted) continue;
      const VarNode* data = AsPtr<BufferLoadNode>(c.load)->buffer->data.get();
      bool safe = true;
      for (const VarNode* w : written) safe = safe && !MayAlias(w, data);
      if (!safe) continue;
      Var v = VarNode::Make("vload" + std::to_string(++counter_), c.load->dtype);
      (*lets)[c.first].push_back({v, c.load});
      table->push_back({c.load, v});
    }
  }

  std::unordered_set<const VarNode*> allocated_;
  bool noalias_;
  int counter_ = 0;
};

PrimFunc HoistFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  if (ctx.GetBool("tir.disable_hoist_shared_vector_loads", false)) return f;
  std::unordered_set<const VarNode*> allocated;
  PostOrderVisit(f->body, [&allocated](const ObjectRef& n) {
    if (auto* a = AsPtr<AllocateNode>(n)) allocated.insert(a->buffer_var.get());
  });
  Stmt body =
      Hoister(std::move(allocated), f->GetIntAttr("tir.noalias", 0) != 0).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass HoistSharedVectorLoads() {
  return CreatePrimFuncPass(HoistFunc, 0, "tir.HoistSharedVectorLoads");
}
TESSERA_REGISTER_PASS("tir.HoistSharedVectorLoads", HoistSharedVectorLoads);

}  // namespace transform
}  // namespace tessera
