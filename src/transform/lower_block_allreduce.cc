// tir.LowerBlockAllreduce (tessera's variant of tir.LowerThreadAllreduce, which the CUDA pipeline
// runs): each tir.tvm_thread_allreduce (made by tir.LowerCrossThreadReduction) becomes warp
// shuffles, leaving the reduced value in every thread of its group. Unlike TVM's pass it needs
// no target, handles groups that TVM's warp path leaves to a shared-memory tree (partial warps,
// masks of partial groups), refuses a reduction under a thread-dependent condition, and writes
// the result into the call's result buffer instead of replacing that buffer's allocation. A call
// reducing several values (a tuple reducer) is left to tir.LowerThreadAllreduce.
//
// The group is the set of threads that differ only in the reduced thread indices; its size N is
// the product of their extents. When the group's threads are consecutive in the block's linear
// thread order (the reduced indices are threadIdx.x, x and y, or x, y and z, up to extents 1):
//   - N a power of two up to 32: one warp stage, __shfl_down_sync with width N, then
//     __shfl_sync from the group's first lane;
//   - N a multiple of 32 (up to 1024): each warp reduces its 32 lanes, lane 0 writes the warp's
//     value to a "shared" buffer (one slot per warp per group), __syncthreads, then every warp
//     reduces the group's slots (padded with the identity) and broadcasts it;
//   - one group of another size (e.g. 24 or 100 threads): the same stages with the last warp
//     partial (shuffles from its missing lanes count as the identity), every thread folding the
//     warps' slots itself.
// Otherwise (e.g. 3 groups of 40 threads, or a reduction over threadIdx.y with threadIdx.x
// spatial) the values go through a "shared" buffer with one slot per thread and a guarded tree
// reduction with a barrier after each step. In every case a barrier follows the last read of the
// shared buffer, so that the next reduction may reuse it.
#include <map>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/reducer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {

TESSERA_REGISTER_OP("tir.tvm_warp_shuffle_down")
    .set_num_inputs(5)
    .set_effect(CallEffect::kOpaque)
    .describe(
        "tvm_warp_shuffle_down(mask, value, delta, width, warp_size): the value of the lane "
        "`delta` above this one within segments of `width` lanes (CUDA __shfl_down_sync); mask "
        "(uint32) names the participating lanes; warp_size (as TVM) bounds width.");
TESSERA_REGISTER_OP("tir.tvm_warp_shuffle")
    .set_num_inputs(5)
    .set_effect(CallEffect::kOpaque)
    .describe(
        "tvm_warp_shuffle(mask, value, lane, width, warp_size): the value of lane `lane` of "
        "this lane's segment of `width` lanes (CUDA __shfl_sync); mask (uint32) names the "
        "participating lanes; warp_size (as TVM) bounds width.");

namespace {

constexpr int kWarpSize = 32;
const char* kTags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};

struct ThreadLoop {
  const VarNode* var;
  Var var_ref;
  int64_t extent;  // -1 when not constant
};

Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

Stmt Barrier() {
  return EvaluateNode::Make(CallNode::Make(DataType::Int(32), OpNode::Get("tir.tvm_storage_sync"),
                                           {StringImmNode::Make("shared")}));
}

// The launch extent of each thread tag in a kernel: the largest of its loops' extents.
void CollectExtents(const Stmt& s, std::map<std::string, int64_t>* out) {
  PostOrderVisit(s, [&](const ObjectRef& n) {
    auto* f = AsPtr<ForNode>(n);
    std::string tag = f ? ThreadTag(f) : "";
    Expr extent = f ? f->extent : nullptr;
    if (auto* attr = AsPtr<AttrStmtNode>(n)) {
      if (auto* iv = LaunchedThread(attr)) {
        tag = iv->thread_tag;
        extent = attr->value;
      }
    }
    if (tag.empty()) return;
    auto c = AsConstInt(extent);
    int64_t v = c ? *c : -1;
    auto it = out->find(tag);
    if (it == out->end()) {
      (*out)[tag] = v;
    } else if (it->second >= 0) {
      it->second = v < 0 ? -1 : std::max(it->second, v);
    }
  });
}

class AllreduceLowerer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    std::string tag = ThreadTag(op);
    if (tag.empty()) return StmtMutator::VisitStmt_(op);
    return InThread(tag, op->loop_var, op->extent, GetRef(op),
                    [&] { return StmtMutator::VisitStmt_(op); });
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "reduce_scope") {
      // TVM's form: the reducer annotates the call, which names the result element:
      //   attr(comm_reducer, "reduce_scope", 0) { tvm_thread_allreduce(n, source..., cond,
      //   result[0]..., thread_var...) }
      auto* ev = AsPtr<EvaluateNode>(op->body);
      auto* call = ev ? AsPtr<CallNode>(ev->value) : nullptr;
      auto* callee = call ? AsPtr<OpNode>(call->op) : nullptr;
      auto* reducer = AsPtr<CommReducerNode>(op->node);
      if (callee && callee->name == "tir.tvm_thread_allreduce" && reducer) {
        // Several values at once (a tuple reducer): left to tir.LowerThreadAllreduce, which the
        // pipeline runs next.
        if (reducer->result.size() > 1) return GetRef(op);
        return Lower(ToNamedForm(call, reducer).get());
      }
      return StmtMutator::VisitStmt_(op);
    }
    const IterVarNode* iv = LaunchedThread(op);
    if (iv == nullptr) return StmtMutator::VisitStmt_(op);
    return InThread(iv->thread_tag, iv->var, op->value, GetRef(op),
                    [&] { return StmtMutator::VisitStmt_(op); });
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    ++cond_depth_;
    Stmt s = StmtMutator::VisitStmt_(op);
    --cond_depth_;
    return s;
  }

  Stmt VisitStmt_(const WhileNode* op) override {
    ++cond_depth_;
    Stmt s = StmtMutator::VisitStmt_(op);
    --cond_depth_;
    return s;
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    decls_[op->buffer->data.get()] = op->buffer;
    return StmtMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    auto* callee = call ? AsPtr<OpNode>(call->op) : nullptr;
    if (callee == nullptr || callee->name != "tir.tvm_thread_allreduce") return GetRef(op);
    return Lower(call);
  }

 private:
  template <class F>
  Stmt InThread(const std::string& tag, const Var& var, const Expr& extent, const Stmt& whole,
                F visit) {
    bool kernel_root = launch_.empty() && !in_kernel_;
    int outer_cond_depth = cond_depth_;
    if (kernel_root) {
      // Conditions around the kernel are decided on the host, the same for all its threads.
      in_kernel_ = true;
      cond_depth_ = 0;
      CollectExtents(whole, &launch_);
    }
    auto c = AsConstInt(extent);
    auto saved = loops_.find(tag) == loops_.end() ? std::optional<ThreadLoop>()
                                                  : std::optional<ThreadLoop>(loops_[tag]);
    loops_[tag] = ThreadLoop{var.get(), var, c ? *c : -1};
    Stmt s = visit();
    if (saved) {
      loops_[tag] = *saved;
    } else {
      loops_.erase(tag);
    }
    if (kernel_root) {
      in_kernel_ = false;
      cond_depth_ = outer_cond_depth;
      launch_.clear();
    }
    return s;
  }

  [[noreturn]] static void Fail(const CallNode* call, const std::string& why) {
    TESSERA_THROW_KIND(call->span, ErrorKind::kBuild) << "LowerBlockAllreduce: " << why;
  }

  // The call of TVM's form under its reducer, as (1, source, cond, result_var, reducer name,
  // identity, thread_var...): one reduced value whose combiner is +, *, min or max of the
  // reducer's two variables.
  static Ref<CallNode> ToNamedForm(const CallNode* call, const CommReducerNode* reducer) {
    const auto& a = call->args;
    if (reducer->result.size() != 1 || a.size() < 5 || !IsConstInt(a[0], 1)) {
      Fail(call, "only one reduced value per tvm_thread_allreduce is supported");
    }
    const Expr& combined = reducer->result[0];
    std::optional<NodeKind> kind;
    for (NodeKind k : {NodeKind::kAdd, NodeKind::kMul, NodeKind::kMin, NodeKind::kMax}) {
      Expr expect = ReducerCombine(k, reducer->lhs[0], reducer->rhs[0]);
      Expr swapped = ReducerCombine(k, reducer->rhs[0], reducer->lhs[0]);
      if (StructuralEqual(combined, expect) || StructuralEqual(combined, swapped)) kind = k;
    }
    if (!kind) {
      Fail(call, "unknown reducer of tvm_thread_allreduce (x + y, x * y, min or max expected)");
    }
    auto* dest = AsPtr<BufferLoadNode>(a[3]);
    if (dest == nullptr) {
      Fail(call, "the result of tvm_thread_allreduce must be an element of a local buffer");
    }
    ReducerMatch m{*kind, true, Expr(), Expr()};
    std::vector<Expr> args{a[0],
                           a[1],
                           a[2],
                           dest->buffer->data,
                           StringImmNode::Make(m.Name()),
                           reducer->identity_element[0]};
    args.insert(args.end(), a.begin() + 4, a.end());
    return CallNode::Make(call->dtype, call->op, args, call->span);
  }

  Stmt Lower(const CallNode* call) {
    const auto& a = call->args;
    if (a.size() < 7 || !IsConstInt(a[0], 1)) {
      Fail(call,
           "tvm_thread_allreduce expects (1, source, cond, result_var, reducer, identity, "
           "thread_var...); only one reducer per call is supported");
    }
    Expr source = a[1], cond = a[2], identity = a[5];
    auto* res = AsPtr<VarNode>(a[3]);
    auto* kind_name = AsPtr<StringImmNode>(a[4]);
    std::optional<NodeKind> kind = kind_name ? ReducerKindFromName(kind_name->value) : std::nullopt;
    if (res == nullptr || !res->pointer)
      Fail(call, "the result of tvm_thread_allreduce must be a buffer variable");
    if (!kind)
      Fail(call, "unknown reducer of tvm_thread_allreduce (sum, prod, min or max expected)");
    DataType t = source->dtype;
    if (!t.is_scalar() || identity->dtype != t) {
      Fail(call, "tvm_thread_allreduce reduces scalars with an identity of their type, got " +
                     t.ToString());
    }
    if (cond_depth_ > 0) {
      Fail(call,
           "tvm_thread_allreduce under a condition: every thread of the block must take "
           "part in the reduction (bind the reduction loop to the whole thread extent)");
    }
    // The reduced thread tags, and every threadIdx tag of the kernel with its extent.
    std::map<std::string, bool> reduced;
    for (size_t i = 6; i < a.size(); ++i) {
      auto* v = AsPtr<VarNode>(a[i]);
      std::string tag;
      for (const auto& [tg, loop] : loops_) {
        if (v && loop.var == v) tag = tg;
      }
      if (tag.rfind("threadIdx.", 0) != 0) {
        Fail(call,
             "tvm_thread_allreduce reduces over a variable that is not an enclosing "
             "threadIdx loop");
      }
      reduced[tag] = true;
    }
    int64_t extent[3];
    Expr index[3];
    for (int d = 0; d < 3; ++d) {
      auto it = launch_.find(kTags[d]);
      int64_t launch = it == launch_.end() ? 1 : it->second;
      if (launch < 0)
        Fail(call,
             std::string("a cross-thread reduction needs a constant ") + kTags[d] + " extent");
      auto loop = loops_.find(kTags[d]);
      if (launch > 1 && loop == loops_.end()) {
        Fail(call, std::string("the cross-thread reduction is not inside the kernel's ") +
                       kTags[d] + " loop, so its thread groups are unknown");
      }
      if (loop != loops_.end() && loop->second.extent != launch) {
        Fail(call, std::string("the cross-thread reduction runs in a ") + kTags[d] +
                       " loop of extent " + std::to_string(loop->second.extent) +
                       " but the kernel launches " + std::to_string(launch) +
                       " threads in that dimension; every launched thread must take part");
      }
      extent[d] = launch;
      index[d] = loop == loops_.end() ? I32(0) : Expr(loop->second.var_ref);
      if (index[d]->dtype != DataType::Int(32))
        index[d] = CastNode::Make(DataType::Int(32), index[d]);
    }
    // Group-local index r over the reduced tags, group index g over the others (x fastest).
    int64_t n = 1, groups = 1;
    Expr r = I32(0), g = I32(0);
    bool contiguous = true, seen_other = false;
    for (int d = 2; d >= 0; --d) {
      bool red = reduced.count(kTags[d]) > 0;
      if (red) {
        r = n == 1 ? index[d] : Expr(AddNode::Make(MulNode::Make(r, I32(extent[d])), index[d]));
        n *= extent[d];
      } else if (extent[d] > 1) {
        g = groups == 1 ? index[d]
                        : Expr(AddNode::Make(MulNode::Make(g, I32(extent[d])), index[d]));
        groups *= extent[d];
      }
    }
    // Consecutive: no non-trivial unreduced tag below a reduced one (in x, y, z order).
    for (int d = 0; d < 3; ++d) {
      bool red = reduced.count(kTags[d]) > 0;
      if (!red && extent[d] > 1) seen_other = true;
      if (red && seen_other) contiguous = false;
    }
    if (n > 1024) Fail(call, "a cross-thread reduction over more than 1024 threads");
    int64_t total = n * groups;

    Buffer val = BufferNode::Decl("red_buf", t, {I32(1)}, "local", call->span);
    // The result goes to the buffer declared on the result variable (after tir.FlattenBuffer, a
    // one-element buffer), or to a new view of it.
    auto decl = decls_.find(res);
    Buffer result = decl != decls_.end() && decl->second->dtype == t
                        ? decl->second
                        : BufferNode::Make(GetRef(res), t, {I32(1)}, {}, nullptr, res->name);
    Expr zero = I32(0);
    auto load = [&]() -> Expr { return BufferLoadNode::Make(val, {zero}); };
    auto store = [&](Expr v) -> Stmt { return BufferStoreNode::Make(val, std::move(v), {zero}); };
    auto combine = [&](Expr x, Expr y) { return ReducerCombine(*kind, x, y); };
    auto shfl = [&](const char* op, Expr mask, Expr v, int64_t lane, int64_t width) -> Expr {
      return CallNode::Make(t, OpNode::Get(op),
                            {std::move(mask), std::move(v), I32(lane), I32(width),
                             I32(kWarpSize)});
    };
    Expr first =
        IsConstInt(cond, 1)
            ? source
            : Expr(CallNode::Make(t, OpNode::Get("tir.if_then_else"), {cond, source, identity}));
    std::vector<Stmt> seq{store(first)};
    Expr full = IntImmNode::Make(DataType::UInt(32), 0xffffffffLL);
    std::vector<std::pair<Buffer, int64_t>> shared;
    std::vector<Buffer> locals;
    auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    auto warp_reduce = [&](Expr mask, int64_t width, int64_t span) {
      // Lanes [0, span) of each `width` segment hold values; lane 0 gets their reduction.
      int64_t p = 1;
      while (p < span) p *= 2;
      for (int64_t off = p / 2; off >= 1; off /= 2) {
        seq.push_back(
            store(combine(load(), shfl("tir.tvm_warp_shuffle_down", mask, load(), off, width))));
      }
    };
    if (n == 1) {
      // Nothing to exchange.
    } else if (contiguous && pow2(n) && n <= kWarpSize) {
      Expr mask = full;
      if (total < kWarpSize) {
        mask = IntImmNode::Make(DataType::UInt(32), (int64_t{1} << total) - 1);
      } else if (total % kWarpSize != 0) {
        Expr tid = AddNode::Make(MulNode::Make(g, I32(n)), r);
        mask = SelectNode::Make(
            LTNode::Make(
                CallNode::Make(DataType::Int(32), OpNode::Get("tir.shift_right"), {tid, I32(5)}),
                I32(total / kWarpSize)),
            full, IntImmNode::Make(DataType::UInt(32), (int64_t{1} << (total % kWarpSize)) - 1));
      }
      warp_reduce(mask, n, n);
      seq.push_back(store(shfl("tir.tvm_warp_shuffle", mask, load(), 0, n)));
    } else if (contiguous && groups == 1 && n % kWarpSize != 0) {
      // One group of n threads, the last warp partial: each warp reduces its lanes, shuffles
      // from missing lanes count as the identity; then every thread folds the warps' slots.
      int64_t warps = (n + kWarpSize - 1) / kWarpSize, whole = n / kWarpSize, rem = n % kWarpSize;
      Expr lane = CallNode::Make(DataType::Int(32), OpNode::Get("tir.bitwise_and"),
                                 {r, I32(kWarpSize - 1)});
      Expr warp = CallNode::Make(DataType::Int(32), OpNode::Get("tir.shift_right"), {r, I32(5)});
      Expr partial = IntImmNode::Make(DataType::UInt(32), (int64_t{1} << rem) - 1);
      Expr mask = warps == 1
                      ? partial
                      : Expr(SelectNode::Make(LTNode::Make(warp, I32(whole)), full, partial));
      Expr lanes =
          warps == 1
              ? I32(n)
              : Expr(SelectNode::Make(LTNode::Make(warp, I32(whole)), I32(kWarpSize), I32(rem)));
      Buffer tmp = BufferNode::Decl("red_buf_other", t, {I32(1)}, "local", call->span);
      locals.push_back(tmp);
      Expr other = BufferLoadNode::Make(tmp, {zero});
      int64_t p = 1;
      while (p < std::min<int64_t>(n, kWarpSize)) p *= 2;
      for (int64_t off = p / 2; off >= 1; off /= 2) {
        // Every lane of the mask takes part in the shuffle; the value is kept where it exists.
        seq.push_back(BufferStoreNode::Make(
            tmp, shfl("tir.tvm_warp_shuffle_down", mask, load(), off, kWarpSize), {zero}));
        seq.push_back(store(
            combine(load(), SelectNode::Make(LTNode::Make(AddNode::Make(lane, I32(off)), lanes),
                                             other, identity))));
      }
      if (warps == 1) {
        seq.push_back(store(shfl("tir.tvm_warp_shuffle", mask, load(), 0, kWarpSize)));
      } else {
        Buffer staging = BufferNode::Decl("red_buf_shared", t, {I32(warps)}, "shared", call->span);
        shared.emplace_back(staging, warps);
        seq.push_back(IfThenElseNode::Make(EQNode::Make(lane, zero),
                                           BufferStoreNode::Make(staging, load(), {warp})));
        seq.push_back(Barrier());
        seq.push_back(store(BufferLoadNode::Make(staging, {zero})));
        for (int64_t w = 1; w < warps; ++w) {
          seq.push_back(store(combine(load(), BufferLoadNode::Make(staging, {I32(w)}))));
        }
        seq.push_back(Barrier());
      }
    } else if (contiguous && n % kWarpSize == 0) {
      int64_t warps = n / kWarpSize;
      Buffer staging =
          BufferNode::Decl("red_buf_shared", t, {I32(groups * warps)}, "shared", call->span);
      shared.emplace_back(staging, groups * warps);
      warp_reduce(full, kWarpSize, kWarpSize);
      // r >= 0: the lane and the warp of r are its low five bits and the rest.
      Expr lane = CallNode::Make(DataType::Int(32), OpNode::Get("tir.bitwise_and"),
                                 {r, I32(kWarpSize - 1)});
      Expr warp = CallNode::Make(DataType::Int(32), OpNode::Get("tir.shift_right"), {r, I32(5)});
      Expr base = MulNode::Make(g, I32(warps));
      seq.push_back(IfThenElseNode::Make(
          EQNode::Make(lane, zero),
          BufferStoreNode::Make(staging, load(), {AddNode::Make(base, warp)})));
      seq.push_back(Barrier());
      Expr slot =
          CallNode::Make(t, OpNode::Get("tir.if_then_else"),
                         {LTNode::Make(lane, I32(warps)),
                          BufferLoadNode::Make(staging, {AddNode::Make(base, lane)}), identity});
      seq.push_back(store(slot));
      seq.push_back(Barrier());
      warp_reduce(full, kWarpSize, warps);
      seq.push_back(store(shfl("tir.tvm_warp_shuffle", full, load(), 0, kWarpSize)));
    } else {
      // One slot per thread and a tree over each group's slots.
      Buffer tree = BufferNode::Decl("red_buf_shared", t, {I32(total)}, "shared", call->span);
      shared.emplace_back(tree, total);
      Expr base = MulNode::Make(g, I32(n));
      auto slot = [&](Expr off) { return Expr(AddNode::Make(base, std::move(off))); };
      seq.push_back(BufferStoreNode::Make(tree, load(), {slot(r)}));
      seq.push_back(Barrier());
      int64_t p = 1;
      while (p < n) p *= 2;
      for (int64_t s = p / 2; s >= 1; s /= 2) {
        Expr guard = LTNode::Make(r, I32(std::min(s, n - s)));
        Stmt step = BufferStoreNode::Make(
            tree,
            combine(BufferLoadNode::Make(tree, {slot(r)}),
                    BufferLoadNode::Make(tree, {slot(AddNode::Make(r, I32(s)))})),
            {slot(r)});
        seq.push_back(IfThenElseNode::Make(guard, step));
        seq.push_back(Barrier());
      }
      seq.push_back(store(BufferLoadNode::Make(tree, {slot(zero)})));
      seq.push_back(Barrier());
    }
    seq.push_back(BufferStoreNode::Make(result, load(), {zero}, nullptr, call->span));
    Stmt body = SeqStmtNode::Flatten(seq, call->span);
    for (const auto& [buf, size] : shared) {
      body = DeclBufferNode::Make(buf, body, call->span);
      body = AllocateNode::Make(buf->data, t, {I32(size)}, IntImmNode::Make(DataType::Bool(), 1),
                                body, {}, call->span);
    }
    for (const Buffer& buf : locals) {
      body = DeclBufferNode::Make(buf, body, call->span);
      body = AllocateNode::Make(buf->data, t, {I32(1)}, IntImmNode::Make(DataType::Bool(), 1), body,
                                {}, call->span);
    }
    body = DeclBufferNode::Make(val, body, call->span);
    return AllocateNode::Make(val->data, t, {I32(1)}, IntImmNode::Make(DataType::Bool(), 1), body,
                              {}, call->span);
  }

  std::map<std::string, ThreadLoop> loops_;
  std::map<std::string, int64_t> launch_;
  std::map<const VarNode*, Buffer> decls_;
  bool in_kernel_ = false;
  int cond_depth_ = 0;
};

PrimFunc LowerBlockAllreduceFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = AllreduceLowerer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerBlockAllreduce() {
  return CreatePrimFuncPass(LowerBlockAllreduceFunc, 0, "tir.LowerBlockAllreduce");
}
TESSERA_REGISTER_PASS("tir.LowerBlockAllreduce", LowerBlockAllreduce);

}  // namespace transform
}  // namespace tessera
