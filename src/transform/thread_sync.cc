// tir.ThreadSync("shared"): insert __syncthreads (tir.tvm_storage_sync) where one thread may
// read shared memory that another wrote, or overwrite what another still reads, including
// across iterations of a loop. The analysis is per buffer, not per element: it may place more
// barriers than needed, never fewer among the statements it analyses. Barriers are never put
// under an `if`, where threads could diverge.
#include <set>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
TESSERA_REGISTER_OP("tir.tvm_storage_sync")
    .describe(
        "A barrier among the threads that share the memory scope given as argument; with scope "
        "\"warp\", an optional second argument (uint32) names the lanes taking part.");

namespace transform {
namespace {

struct Accesses {
  std::set<const VarNode*> reads, writes;
  void Merge(const Accesses& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  static bool Meet(const std::set<const VarNode*>& a, const std::set<const VarNode*>& b) {
    for (const VarNode* v : a) {
      if (b.count(v)) return true;
    }
    return false;
  }
  // Whether `later` must wait for these accesses: read after write or write after read.
  bool Conflicts(const Accesses& later) const {
    return Meet(writes, later.reads) || Meet(reads, later.writes);
  }
};

// What a statement does to shared memory: before its first barrier (head) and after its last
// (tail); without a barrier inside, both are everything it does.
struct Summary {
  Accesses head, tail;
  bool synced = false;
};

class SyncPlanner : public StmtFunctor<Stmt> {
 public:
  explicit SyncPlanner(std::string scope) : scope_(std::move(scope)) {}

  Stmt Plan(const Stmt& s, Summary* out) {
    Summary saved = current_;
    current_ = Summary();
    Stmt r = VisitStmt(s);
    *out = current_;
    current_ = saved;
    return r;
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    Accesses pending, head;
    bool synced = false, changed = false;
    for (const Stmt& child : op->seq) {
      Summary s;
      Stmt c = Plan(child, &s);
      changed = changed || c != child;
      if (sync_ok_ && pending.Conflicts(s.head)) {
        changed = true;
        seq.push_back(Barrier());
        if (!synced) head = pending;
        synced = true;
        pending = Accesses();
      }
      seq.push_back(c);
      if (s.synced) {
        if (!synced) {
          head = pending;
          head.Merge(s.head);
        }
        synced = true;
        pending = s.tail;
      } else {
        pending.Merge(s.head);
      }
    }
    current_.synced = synced;
    current_.head = synced ? head : pending;
    current_.tail = pending;
    return changed ? Stmt(SeqStmtNode::Make(seq, op->span)) : Stmt(GetRef(op));
  }

  Stmt VisitStmt_(const ForNode* op) override {
    bool saved = sync_ok_;
    if (!ThreadTag(op).empty()) sync_ok_ = true;
    Summary s;
    Stmt body = Plan(op->body, &s);
    // A later iteration must not overwrite what an earlier one still reads, nor read before
    // an earlier one has written: a barrier at the top of the body orders the iterations.
    if (sync_ok_ && ThreadTag(op).empty() && s.tail.Conflicts(s.head)) {
      body = SeqStmtNode::Make({Barrier(), body}, op->span);
      s.synced = true;
    }
    sync_ok_ = saved;
    current_ = s;
    if (body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    bool saved = sync_ok_;
    sync_ok_ = false;
    Summary a, b;
    Stmt then_case = Plan(op->then_case, &a);
    Stmt else_case = op->else_case ? Plan(op->else_case, &b) : nullptr;
    sync_ok_ = saved;
    a.head.Merge(b.head);
    a.head.Merge(a.tail);
    a.head.Merge(b.tail);
    Collect(op->condition, &a.head);
    current_ = Summary{a.head, a.head, false};
    if (then_case == op->then_case && else_case == op->else_case) return GetRef(op);
    return IfThenElseNode::Make(op->condition, then_case, else_case, op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Summary s;
    Stmt body = Plan(op->body, &s);
    Collect(op->value, &s.head);
    current_ = s;
    return body == op->body ? Stmt(GetRef(op))
                            : LetStmtNode::Make(op->var, op->value, body, op->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    Summary s;
    Stmt body = Plan(op->body, &s);
    current_ = s;
    if (body == op->body) return GetRef(op);
    return AllocateNode::Make(op->buffer_var, op->dtype, op->extents, op->condition, body,
                              op->annotations, op->span);
  }
  Stmt VisitStmt_(const AllocateConstNode* op) override {
    Summary s;
    Stmt body = Plan(op->body, &s);
    current_ = s;
    if (body == op->body) return GetRef(op);
    return AllocateConstNode::Make(op->buffer_var, op->dtype, op->extents, op->data, body,
                                   op->annotations, op->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Summary s;
    Stmt body = Plan(op->body, &s);
    current_ = s;
    return body == op->body ? Stmt(GetRef(op)) : DeclBufferNode::Make(op->buffer, body, op->span);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    bool saved = sync_ok_;
    if (LaunchedThread(op)) sync_ok_ = true;
    // tir.SkewSoftwarePipeline synchronizes the versions of an asynchronous pipeline's
    // buffers itself (tessera.manual_sync on their data pointer): their accesses inside do not
    // count here.
    auto* manual = op->attr_key == "tessera.manual_sync" ? AsPtr<VarNode>(op->node) : nullptr;
    bool added = manual && ignored_.insert(manual).second;
    Summary s;
    Stmt body = Plan(op->body, &s);
    if (added) ignored_.erase(manual);
    sync_ok_ = saved;
    current_ = s;
    if (body == op->body) return GetRef(op);
    return AttrStmtNode::Make(op->node, op->attr_key, op->value, body, op->span);
  }
  Stmt VisitStmt_(const WhileNode* op) override {
    Leaf(GetRef(op));
    return GetRef(op);
  }

  // Leaves: stores, evaluations, asserts, blocks.
  Stmt VisitStmt_(const BufferStoreNode* op) override { return Leaf(GetRef(op)); }
  Stmt VisitStmt_(const EvaluateNode* op) override {
    // A barrier already there (tir.SkewSoftwarePipeline's) orders what comes before it and
    // what comes after.
    auto* call = AsPtr<CallNode>(op->value);
    auto* scope = call && call->is_op("tir.tvm_storage_sync") && call->args.size() == 1
                      ? AsPtr<StringImmNode>(call->args[0])
                      : nullptr;
    if (scope && scope->value == scope_ && sync_ok_) {
      current_ = Summary{Accesses(), Accesses(), true};
      return GetRef(op);
    }
    return Leaf(GetRef(op));
  }
  Stmt VisitStmt_(const AssertStmtNode* op) override { return Leaf(GetRef(op)); }
  Stmt VisitStmt_(const BlockNode* op) override { return Leaf(GetRef(op)); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { return Leaf(GetRef(op)); }
  Stmt VisitStmt_(const BufferRealizeNode* op) override { return Leaf(GetRef(op)); }

 private:
  bool InScope(const BufferNode* b) const {
    // "shared" and "shared.dyn" are the same memory, synchronized by the same barrier.
    if (!b->data->pointer) return false;
    const std::string& s = b->data->pointer->scope;
    return s == scope_ || (scope_ == "shared" && s == "shared.dyn");
  }
  template <typename T>
  void Collect(const T& node, Accesses* acc) {
    if (!node) return;
    PostOrderVisit(node, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) {
        if (InScope(load->buffer.get())) acc->reads.insert(load->buffer->data.get());
      } else if (auto* store = AsPtr<BufferStoreNode>(n)) {
        if (InScope(store->buffer.get())) acc->writes.insert(store->buffer->data.get());
      } else if (auto* call = AsPtr<CallNode>(n);
                 call && call->is_op("tir.ptx_cp_async") && call->args.size() == 5) {
        // ptx_cp_async(shared data, offset, global data, offset, bytes) writes the shared side.
        auto* data = AsPtr<VarNode>(call->args[0]);
        if (data && data->pointer &&
            (data->pointer->scope == scope_ ||
             (scope_ == "shared" && data->pointer->scope == "shared.dyn"))) {
          acc->writes.insert(data);
        }
      } else if (auto* call = AsPtr<CallNode>(n);
                 call && call->is_op("tir.tvm_access_ptr") && call->args.size() == 5) {
        // tvm_access_ptr(type, data, offset, extent, rw_mask): an opaque access (a tensor-core
        // load or store) reads (mask 1) and / or writes (mask 2) the memory of `data`.
        auto* data = AsPtr<VarNode>(call->args[1]);
        auto mask = AsConstInt(call->args[4]);
        if (data && data->pointer &&
            (data->pointer->scope == scope_ ||
             (scope_ == "shared" && data->pointer->scope == "shared.dyn"))) {
          if (!mask || (*mask & 1)) acc->reads.insert(data);
          if (!mask || (*mask & 2)) acc->writes.insert(data);
        }
      }
    });
    for (const VarNode* v : ignored_) {
      acc->reads.erase(v);
      acc->writes.erase(v);
    }
  }
  Stmt Leaf(const Stmt& s) {
    Accesses acc;
    Collect(s, &acc);
    current_ = Summary{acc, acc, false};
    return s;
  }
  Stmt Barrier() {
    return EvaluateNode::Make(CallNode::Make(DataType::Int(32), OpNode::Get("tir.tvm_storage_sync"),
                                             {StringImmNode::Make(scope_)}));
  }

  std::string scope_;
  std::set<const VarNode*> ignored_;
  bool sync_ok_ = false;
  Summary current_;
};

}  // namespace

Pass ThreadSync(const std::string& scope) {
  return CreatePrimFuncPass(
      [scope](PrimFunc f, IRModule, const PassContext&) {
        if (f->GetStrAttr("target") != "cuda") return f;
        Summary s;
        Stmt body = SyncPlanner(scope).Plan(f->body, &s);
        return body == f->body ? f : f->WithBody(body);
      },
      0, "tir.ThreadSync");
}
TESSERA_REGISTER_PASS("tir.ThreadSync", [] { return ThreadSync("shared"); });

}  // namespace transform
}  // namespace tessera
