// tir.InjectPrefetch: a loop annotated "pragma_prefetch" = d (sch.annotate(loop, "pragma_prefetch",
// d)) starts each iteration by prefetching, for every distinct global buffer it reads, the
// element the read will touch d iterations later: `__builtin_prefetch(&buf[index(v + d)], 0, 3)`.
//
// Runs on flat buffers after UnrollLoop, so the reads of an unrolled tile are separate accesses.
// Only reads whose index depends on the loop variable and on no variable defined inside the loop
// are prefetched (a vector read's Ramp base stands for the vector); reads of the same buffer
// whose indices differ only by a constant in the same 64-byte bucket of offsets are prefetched
// once. A prefetch past the end of the buffer is harmless (it never faults).
#include <set>
#include <unordered_map>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int kCacheLineBytes = 64;
constexpr size_t kMaxPrefetchesPerLoop = 16;

class PrefetchInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    auto it = loop->annotations.find("pragma_prefetch");
    if (it == loop->annotations.end()) return s;
    auto* imm = AsPtr<IntImmNode>(it->second);
    AttrMap rest = loop->annotations;
    rest.erase("pragma_prefetch");
    Stmt body = loop->body;
    if (imm && imm->value > 0) body = WithPrefetches(loop, imm->value);
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body,
                         loop->thread_binding, rest, loop->span);
  }

 private:
  static Stmt WithPrefetches(const ForNode* loop, int64_t distance) {
    // Variables defined inside the loop body: a read indexed by an inner loop's variable is
    // prefetched where that loop starts (e.g. the first vector of a vectorized loop that was cut
    // to the host's vector width); one indexed by a let variable is not prefetched.
    std::set<const VarNode*> inner;
    std::unordered_map<const VarNode*, Expr> inner_start;
    PostOrderVisit(loop->body, [&](const ObjectRef& n) {
      if (auto* f = AsPtr<ForNode>(n)) inner_start[f->loop_var.get()] = f->min;
      if (auto* l = AsPtr<LetStmtNode>(n)) inner.insert(l->var.get());
    });
    auto at_inner_start = [&](Expr index) {
      std::unordered_map<const VarNode*, Expr> sub;
      PostOrderVisit(index, [&](const ObjectRef& n) {
        if (auto* x = AsPtr<VarNode>(n)) {
          auto it = inner_start.find(x);
          if (it != inner_start.end()) sub[x] = it->second;
        }
      });
      return sub.empty() ? index : SimplifyExpr(Substitute(index, sub));
    };
    const VarNode* v = loop->loop_var.get();
    struct Candidate {
      Buffer buffer;
      Expr index;
    };
    std::vector<Candidate> found;
    struct Group {
      const VarNode* data;
      Expr rest;
      int64_t line;
    };
    std::vector<Group> groups;
    PostOrderVisit(loop->body, [&](const ObjectRef& n) {
      auto* load = AsPtr<BufferLoadNode>(n);
      if (!load || load->indices.size() != 1) return;
      const Buffer& buf = load->buffer;
      if (buf->data->pointer && buf->data->pointer->scope != "global") return;
      Expr index = load->indices[0];
      if (auto* ramp = AsPtr<RampNode>(index)) index = ramp->base;
      if (!index->dtype.is_scalar()) return;
      index = at_inner_start(index);
      if (!UsesVar(index, [v](const VarNode* x) { return x == v; })) return;
      if (UsesVar(index, [&inner](const VarNode* x) { return inner.count(x) != 0; })) return;
      // Same buffer, same variable part, constant offsets in one cache line: one prefetch.
      Expr rest = index;
      int64_t offset = 0;
      if (auto* add = AsPtr<AddNode>(index)) {
        if (auto c = AsConstInt(add->b)) {
          rest = add->a;
          offset = *c;
        }
      }
      int64_t per_line = std::max(1, kCacheLineBytes / std::max(1, buf->dtype.bytes()));
      for (const Group& g : groups) {
        if (g.data == buf->data.get() && g.line == offset / per_line &&
            StructuralEqual(g.rest, rest)) {
          return;
        }
      }
      groups.push_back({buf->data.get(), rest, offset / per_line});
      if (found.size() < kMaxPrefetchesPerLoop) found.push_back({buf, index});
    });
    if (found.empty()) return loop->body;
    Expr ahead = AddNode::Make(loop->loop_var, MakeConst(loop->loop_var->dtype, distance));
    std::vector<Stmt> seq;
    for (const Candidate& c : found) {
      Expr index = SimplifyExpr(Substitute(c.index, {{v, ahead}}));
      Expr addr = CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                                 {BufferLoadNode::Make(c.buffer, {index})});
      seq.push_back(EvaluateNode::Make(CallNode::Make(
          DataType::Int(32), OpNode::Get("tir.call_extern"),
          {StringImmNode::Make("__builtin_prefetch"), addr,
           MakeConst(DataType::Int(32), int64_t(0)), MakeConst(DataType::Int(32), int64_t(3))})));
    }
    seq.push_back(loop->body);
    return SeqStmtNode::Flatten(seq, loop->body->span);
  }
};

PrimFunc InjectPrefetchFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = PrefetchInjector().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass InjectPrefetch() { return CreatePrimFuncPass(InjectPrefetchFunc, 0, "tir.InjectPrefetch"); }
TESSERA_REGISTER_PASS("tir.InjectPrefetch", InjectPrefetch);

}  // namespace transform
}  // namespace tessera
