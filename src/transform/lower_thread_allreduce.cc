// tir.LowerThreadAllreduce with Apache TVM v0.23's rules. The call
//   attr(reducer, "reduce_scope", 0) { tvm_thread_allreduce(n, value_0..n-1, cond, result_0..n-1,
//                                                           thread_var...) }
// reduces n values (a tuple reducer when n > 1) over the threads named by thread_var; the other
// launched threadIdx dimensions (extent > 1) select the group. Its lowering depends on the
// function's "target":
//   - warp path (cuda, rocm, metal; 4- or 8-byte scalars or half/half2; the reduced dimensions are
//     the lowest ones, so that a group's threads are consecutive): each value goes to a local
//     `red_buf<i>`, lanes fold with tvm_warp_shuffle_down at offsets halving from the largest power
//     of two below the group size (an offset reaching past the group is guarded), the mask being
//     tvm_warp_activemask() kept in a local `mask` (metal: no mask, 0). Group size up to the warp
//     (or any size dividing it): lane 0's value is broadcast with tvm_warp_shuffle. Group size a
//     multiple of the warp (when the target's max_num_threads <= warp^2): a second round over the
//     per-warp results staged in a "shared" `red_buf_staging`, whose first thread writes the result
//     to a "shared" `red_result` with one slot per group.
//   - otherwise: a tree over a "shared" buffer of one slot per thread, with barriers; the steps
//     within one warp read into let-bound values between tvm_storage_sync("warp", lanes) pairs
//     (the lanes argument, a uint32 mask of the lanes in that branch, is tessera's).
// The allocation of each result buffer becomes that of the buffer holding the result (volatile
// when shared), and every later read of the result reads that buffer.
//
// Beyond TVM, a thread-bound loop (tessera's form before the launch attributes) counts as a launch.
#include <algorithm>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// Constant-folding builders with the folding of TVM's operators on PrimExpr (x + 0, x * 1, x * 0
// and two constants); anything else builds the node.
Expr Add(const Expr& a, const Expr& b) {
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) return IntImmNode::Make(a->dtype, *ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  return AddNode::Make(a, b);
}
Expr Mul(const Expr& a, const Expr& b) {
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) return IntImmNode::Make(a->dtype, *ca * *cb);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  if (ca && *ca == 0) return a;
  if (cb && *cb == 0) return b;
  return MulNode::Make(a, b);
}
Expr Const(const Expr& like, int64_t v) { return IntImmNode::Make(like->dtype, v); }

Stmt Sync(const std::string& scope, Expr lanes = Expr()) {
  std::vector<Expr> args{StringImmNode::Make(scope)};
  if (lanes) args.push_back(lanes);
  return EvaluateNode::Make(
      CallNode::Make(DataType::Int(32), OpNode::Get("tir.tvm_storage_sync"), args));
}

struct Thread {
  std::string tag;
  Var var;
  Expr extent;
  Span span;
};

class TvmAllreduceBuilder : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  TvmAllreduceBuilder(std::string kind, int64_t warp_size, int64_t max_threads)
      : kind_(std::move(kind)), warp_size_(warp_size), max_threads_(max_threads) {}

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (const IterVarNode* iv = LaunchedThread(op)) {
      threads_.push_back({iv->thread_tag, iv->var, op->value, op->span});
      Stmt s = StmtExprMutator::VisitStmt_(op);
      threads_.pop_back();
      return s;
    }
    if (op->attr_key == "reduce_scope") {
      auto* reducer = AsPtr<CommReducerNode>(op->node);
      if (reducer == nullptr) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "LowerThreadAllreduce: the node of a \"reduce_scope\" attribute must be a "
               "T.comm_reducer";
      }
      reducers_.push_back(reducer);
      Stmt s = StmtExprMutator::VisitStmt_(op);
      reducers_.pop_back();
      return s;
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    std::string tag = ThreadTag(op);
    if (tag.empty()) return StmtExprMutator::VisitStmt_(op);
    threads_.push_back({tag, op->loop_var, op->extent, op->span});
    Stmt s = StmtExprMutator::VisitStmt_(op);
    threads_.pop_back();
    return s;
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* ev = AsPtr<EvaluateNode>(s);
    auto* call = ev ? AsPtr<CallNode>(ev->value) : nullptr;
    if (call && call->is_op("tir.tvm_thread_allreduce")) return MakeAllreduce(call);
    return s;
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto it = alloc_remap_.find(op->buffer_var.get());
    if (it == alloc_remap_.end()) return s;
    auto* a = AsPtr<AllocateNode>(s);
    const Buffer& buf = it->second;
    Stmt body = a->body;
    if (buf->scope() == "shared")
      body = AttrStmtNode::Make(buf->data, "volatile_scope", Int32(1), body);
    return AllocateNode::Make(buf->data, buf->dtype, buf->shape, Bool(true), body, a->annotations,
                              a->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* d = AsPtr<DeclBufferNode>(s);
    if (Buffer b = Remapped(d->buffer)) return DeclBufferNode::Make(b, d->body, d->span);
    return s;
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    auto it = load_remap_.find(op->buffer->data.get());
    if (it != load_remap_.end()) {
      for (const Expr& i : op->indices) {
        if (!IsConstInt(i, 0)) {
          TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
              << "LowerThreadAllreduce: the result buffer of tvm_thread_allreduce is read at a "
                 "nonzero index; it holds one value";
        }
      }
      return it->second;
    }
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (Buffer b = Remapped(load->buffer)) {
      return BufferLoadNode::Make(b, load->indices, load->predicate, load->span);
    }
    return e;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (Buffer b = Remapped(store->buffer)) {
      return BufferStoreNode::Make(b, store->value, store->indices, store->predicate, store->span);
    }
    return s;
  }

 private:
  struct Entry {
    int dim;  // 0, 1, 2 for x, y, z
    Var var;
    int64_t extent;
  };

  Buffer Remapped(const Buffer& b) {
    auto it = buf_remap_.find(b.get());
    if (it != buf_remap_.end()) return it->second;
    auto v = var_remap_.find(b->data.get());
    if (v == var_remap_.end()) return Buffer();
    Buffer nb = WithData(b, v->second);
    buf_remap_[b.get()] = nb;
    return nb;
  }

  [[noreturn]] static void Fail(const CallNode* call, const std::string& why) {
    TESSERA_THROW_KIND(call->span, ErrorKind::kValue) << "LowerThreadAllreduce: " << why;
  }

  std::vector<Expr> Combine(const CommReducerNode* r, const std::vector<Expr>& a,
                            const std::vector<Expr>& b) {
    VarMap m;
    for (size_t i = 0; i < a.size(); ++i) {
      m[r->lhs[i].get()] = a[i];
      m[r->rhs[i].get()] = b[i];
    }
    std::vector<Expr> out;
    for (const Expr& e : r->result) out.push_back(Substitute(e, m));
    return out;
  }

  // The flattened index of `entries` (sorted by dimension), the first one fastest.
  static Expr Flatten(const std::vector<Entry>& entries, int64_t* total) {
    *total = 1;
    if (entries.empty()) return Int32(0);
    Expr r;
    for (const Entry& e : entries) {
      r = r ? Add(r, Mul(e.var, Const(e.var, *total))) : Expr(e.var);
      *total *= e.extent;
    }
    return r;
  }

  Expr BufIndex(const Expr& reduce_index, const Expr& group_index, int64_t reduce_extent) {
    if (IsConstInt(group_index, 0)) return reduce_index;
    return analyzer_.Simplify(
        AddNode::Make(MulNode::Make(group_index, Const(group_index, reduce_extent)), reduce_index));
  }

  Expr Shuffle(const char* op, const Buffer& mask, const Expr& value, const Expr& lane) {
    Expr m = mask ? Expr(BufferLoadNode::Make(mask, {Int32(0)})) : Int32(0);
    return CallNode::Make(value->dtype, OpNode::Get(op),
                          {m, value, lane, Int32(warp_size_), Int32(warp_size_)});
  }

  bool IsWarpReduction(const std::vector<DataType>& types, int64_t group_extent,
                       int64_t reduce_extent, int64_t contiguous_extent) {
    if (kind_ != "cuda" && kind_ != "rocm" && kind_ != "metal") return false;
    need_mask_ = kind_ != "metal";
    for (DataType t : types) {
      if (kind_ == "rocm" && t.bits() * t.lanes() != 32) return false;
      if (t.is_float() && t.bits() == 16) {
        if (t.lanes() > 2) return false;
      } else if (t.lanes() > 1 || t.bytes() < 4 || t.bytes() > 8) {
        return false;
      }
    }
    if (threads_.empty() || contiguous_extent != reduce_extent) return false;
    if (kind_ == "rocm") return reduce_extent == warp_size_;
    if (reduce_extent == 1) return false;
    bool sub_warp = warp_size_ % reduce_extent == 0;
    bool multi_warp = max_threads_ != -1 && max_threads_ <= warp_size_ * warp_size_ &&
                      reduce_extent % warp_size_ == 0;
    return sub_warp || multi_warp || (group_extent == 1 && reduce_extent <= warp_size_);
  }

  // One warp-level round: `values` into local red_buf<i>, then folded by shuffles. Returns the
  // red_buf<i> buffers (holding the result in the group's first lane) and the local buffers to
  // allocate (t<i>, then the mask).
  std::pair<std::vector<Buffer>, std::vector<Buffer>> WarpRound(
      const std::vector<Expr>& values, const std::vector<DataType>& types,
      const CommReducerNode* reducer, const Expr& reduce_index, int64_t reduce_extent,
      const Expr& predicate, std::vector<Stmt>* seq) {
    size_t n = values.size();
    std::vector<Buffer> bufs, locals;
    std::vector<Stmt> loads;
    for (size_t i = 0; i < n; ++i) {
      bufs.push_back(
          BufferNode::Decl("red_buf" + std::to_string(i), types[i], {Int32(1)}, "local"));
      loads.push_back(BufferStoreNode::Make(bufs[i], values[i], {Int32(0)}));
      locals.push_back(BufferNode::Decl("t" + std::to_string(i), types[i], {Int32(1)}, "local"));
    }
    if (predicate) {
      seq->push_back(IfThenElseNode::Make(predicate, SeqStmtNode::Flatten(loads)));
    } else {
      seq->insert(seq->end(), loads.begin(), loads.end());
    }
    Buffer mask;
    if (need_mask_) {
      mask = BufferNode::Decl("mask", DataType::UInt(32), {Int32(1)}, "local");
      seq->push_back(BufferStoreNode::Make(
          mask, CallNode::Make(DataType::UInt(32), OpNode::Get("tir.tvm_warp_activemask"), {}),
          {Int32(0)}));
      locals.push_back(mask);
    }
    last_mask_ = mask;
    int64_t start = 1;
    while (start * 2 < reduce_extent) start *= 2;
    for (int64_t offset = start; offset > 0; offset /= 2) {
      std::vector<Expr> a, b;
      for (size_t i = 0; i < n; ++i) {
        Expr v = BufferLoadNode::Make(bufs[i], {Int32(0)});
        a.push_back(v);
        // The shuffle gets its own statement: a shuffle inside a select would diverge.
        seq->push_back(BufferStoreNode::Make(
            locals[i], Shuffle("tir.tvm_warp_shuffle_down", mask, v, Int32(offset)), {Int32(0)}));
        b.push_back(BufferLoadNode::Make(locals[i], {Int32(0)}));
      }
      std::vector<Expr> r = Combine(reducer, a, b);
      std::vector<Stmt> stores;
      for (size_t i = 0; i < n; ++i)
        stores.push_back(BufferStoreNode::Make(bufs[i], r[i], {Int32(0)}));
      if (offset * 2 > reduce_extent) {
        // Lanes past the group would read inactive threads' values.
        seq->push_back(
            IfThenElseNode::Make(LTNode::Make(Add(reduce_index, Const(reduce_index, offset)),
                                              Const(reduce_index, reduce_extent)),
                                 SeqStmtNode::Flatten(stores)));
      } else {
        seq->push_back(SeqStmtNode::Flatten(stores));
      }
    }
    return {bufs, locals};
  }

  // The tree over the "shared" buffers `bufs` of one slot per thread.
  Stmt BufferTree(const CommReducerNode* reducer, const std::vector<Buffer>& bufs,
                  const Expr& reduce_index, const Expr& group_index, int64_t reduce_extent,
                  int64_t group_extent, int64_t contiguous_extent) {
    int64_t align = 1;
    while (reduce_extent > align) align <<= 1;
    std::vector<Stmt> seq;
    size_t n = bufs.size();
    Expr here = BufIndex(reduce_index, group_index, reduce_extent);
    auto load = [&](int64_t offset) {
      std::vector<Expr> a, b;
      Expr there =
          BufIndex(Add(reduce_index, Const(reduce_index, offset)), group_index, reduce_extent);
      for (size_t i = 0; i < n; ++i) {
        b.push_back(BufferLoadNode::Make(bufs[i], {there}));
        a.push_back(BufferLoadNode::Make(bufs[i], {here}));
      }
      return Combine(reducer, a, b);
    };
    auto store = [&](const std::vector<Expr>& v) {
      std::vector<Stmt> s;
      for (size_t i = 0; i < n; ++i) s.push_back(BufferStoreNode::Make(bufs[i], v[i], {here}));
      return SeqStmtNode::Flatten(s);
    };
    if (align > reduce_extent) {
      align >>= 1;
      seq.push_back(IfThenElseNode::Make(
          LTNode::Make(reduce_index, Const(reduce_index, reduce_extent - align)),
          store(load(align))));
      seq.push_back(Sync("shared"));
    }
    bool warp_aligned = group_extent == 1 || contiguous_extent % warp_size_ == 0;
    while (align > contiguous_extent || align > warp_size_ || !warp_aligned) {
      if (align == 1) break;
      align >>= 1;
      seq.push_back(IfThenElseNode::Make(LTNode::Make(reduce_index, Const(reduce_index, align)),
                                         store(load(align))));
      seq.push_back(Sync("shared"));
    }
    if (align > 1) {
      Expr in_warp = LTNode::Make(reduce_index, Const(reduce_index, align >> 1));
      // Beyond TVM, the warp barriers name the lanes that reach them (the first align / 2 of
      // the warp), so that no lane waits for one that took the other branch.
      Expr lanes = IntImmNode::Make(DataType::UInt(32), (int64_t{1} << (align >> 1)) - 1);
      std::vector<Stmt> steps;
      while (align > 1) {
        align >>= 1;
        // Within a warp, a lane may read a slot another lane writes in the same step: the loads
        // are bound first, and the stores sit between two warp barriers.
        std::vector<Expr> loads = load(align);
        std::vector<Expr> vars;
        std::vector<Var> bound;
        for (size_t i = 0; i < loads.size(); ++i) {
          Var v = VarNode::Make("w_" + std::to_string(align) + "_" + std::to_string(i),
                                loads[i]->dtype);
          bound.push_back(v);
          vars.push_back(v);
        }
        Stmt body = SeqStmtNode::Flatten({Sync("warp", lanes), store(vars), Sync("warp", lanes)});
        for (size_t i = 0; i < n; ++i) body = LetStmtNode::Make(bound[i], loads[i], body);
        steps.push_back(body);
      }
      seq.push_back(IfThenElseNode::Make(in_warp, SeqStmtNode::Flatten(steps)));
      seq.push_back(Sync("shared"));
    }
    return SeqStmtNode::Flatten(seq);
  }

  Stmt MakeAllreduce(const CallNode* call) {
    if (reducers_.empty()) {
      Fail(call, "tvm_thread_allreduce must sit under attr(T.comm_reducer(...), \"reduce_scope\")");
    }
    const CommReducerNode* reducer = reducers_.back();
    size_t n = reducer->result.size();
    auto count = call->args.empty() ? std::nullopt : AsConstInt(call->args[0]);
    if (!count || *count != static_cast<int64_t>(n) || call->args.size() < 2 * n + 2) {
      Fail(call,
           "the value count of tvm_thread_allreduce (its first argument) differs from the "
           "number of values its reducer combines (" +
               std::to_string(n) + ")");
    }
    Expr cond = call->args[n + 1];
    std::vector<Expr> values(n);
    std::vector<DataType> types(n);
    for (size_t i = 0; i < n; ++i) {
      values[i] = call->args[1 + i];
      if (!IsConstInt(cond, 1))
        values[i] = SelectNode::Make(cond, values[i], reducer->identity_element[i]);
      types[i] = values[i]->dtype;
    }
    std::vector<Buffer> results(n);
    for (size_t i = 0; i < n; ++i) {
      Expr arg = call->args[2 + n + i];
      if (auto* cast = AsPtr<CastNode>(arg)) arg = cast->value;
      auto* load = AsPtr<BufferLoadNode>(arg);
      if (load == nullptr) {
        Fail(call,
             "each result of tvm_thread_allreduce must be an element of a buffer "
             "(`red[0]`)");
      }
      results[i] = load->buffer;
    }
    std::vector<const VarNode*> reduce_vars;
    for (size_t i = 2 + 2 * n; i < call->args.size(); ++i) {
      const Expr& a = call->args[i];
      if (auto* v = AsPtr<VarNode>(a)) {
        reduce_vars.push_back(v);
      } else if (!IsConstInt(a, 0)) {
        Fail(call,
             "the threads of tvm_thread_allreduce must be thread variables (or 0 for a "
             "thread of extent 1)");
      }
    }
    std::vector<Entry> red, par;
    size_t matched = 0;
    for (const Thread& t : threads_) {
      bool thread_idx = t.tag.rfind("threadIdx.", 0) == 0;
      if (t.tag.rfind("vthread", 0) == 0 || t.tag == "cthread") {
        TESSERA_THROW_KIND(t.span, ErrorKind::kValue)
            << "LowerThreadAllreduce: a cross-thread reduction cannot run inside the virtual "
               "thread '"
            << t.tag << "'";
      }
      if (!thread_idx || t.tag.size() != 11) continue;
      auto ext = AsConstInt(t.extent);
      if (!ext) {
        TESSERA_THROW_KIND(t.span, ErrorKind::kValue)
            << "LowerThreadAllreduce: the extent of " << t.tag
            << " must be a constant around a cross-thread reduction";
      }
      if (*ext == 1) continue;
      Entry e{t.tag[10] - 'x', t.var, *ext};
      if (std::find(reduce_vars.begin(), reduce_vars.end(), t.var.get()) != reduce_vars.end()) {
        red.push_back(e);
        ++matched;
      } else {
        par.push_back(e);
      }
    }
    if (matched != reduce_vars.size()) {
      Fail(call,
           "a thread variable of tvm_thread_allreduce is not launched (with an extent "
           "above 1) around the call");
    }
    auto by_dim = [](const Entry& a, const Entry& b) { return a.dim < b.dim; };
    std::sort(red.begin(), red.end(), by_dim);
    std::sort(par.begin(), par.end(), by_dim);
    int64_t reduce_extent, group_extent;
    Expr reduce_index = Flatten(red, &reduce_extent);
    Expr group_index = Flatten(par, &group_extent);
    // The reduced dimensions before the first spatial one, in x, y, z order.
    std::vector<std::pair<int, bool>> dims;
    for (const Entry& e : red) dims.emplace_back(e.dim, true);
    for (const Entry& e : par) dims.emplace_back(e.dim, false);
    std::sort(dims.begin(), dims.end());
    int64_t contiguous = 1;
    for (const auto& [dim, reduced] : dims) {
      if (!reduced) break;
      for (const Entry& e : red) {
        if (e.dim == dim) contiguous *= e.extent;
      }
    }

    std::vector<Stmt> seq;
    std::vector<Buffer> allocs;
    Expr zero = Const(reduce_index, 0);
    if (IsWarpReduction(types, group_extent, reduce_extent, contiguous)) {
      std::vector<Buffer> out;
      if (reduce_extent <= warp_size_) {
        std::vector<Buffer> bufs;
        std::tie(bufs, allocs) =
            WarpRound(values, types, reducer, reduce_index, reduce_extent, Expr(), &seq);
        for (size_t i = 0; i < n; ++i) {
          // Every lane takes lane 0's value, so that all threads hold the result.
          Expr v = BufferLoadNode::Make(bufs[i], {zero});
          seq.push_back(
              BufferStoreNode::Make(bufs[i],
                                    Shuffle("tir.tvm_warp_shuffle", last_mask_, v,
                                            Mul(Const(group_index, reduce_extent), group_index)),
                                    {zero}));
        }
        out = bufs;
      } else {
        int64_t warps = reduce_extent / warp_size_;
        std::vector<Buffer> staging;
        for (size_t i = 0; i < n; ++i) {
          staging.push_back(BufferNode::Decl("red_buf_staging", results[i]->dtype,
                                             {Const(reduce_index, warps * group_extent)},
                                             "shared"));
          allocs.push_back(staging.back());
        }
        auto [first, locals1] =
            WarpRound(values, types, reducer, reduce_index, warp_size_, Expr(), &seq);
        allocs.insert(allocs.end(), locals1.begin(), locals1.end());
        std::vector<Stmt> stage;
        Expr slot = Add(Mul(group_index, Const(group_index, warps)),
                        FloorDivNode::Make(reduce_index, Const(reduce_index, warp_size_)));
        for (size_t i = 0; i < n; ++i) {
          allocs.push_back(first[i]);
          stage.push_back(
              BufferStoreNode::Make(staging[i], BufferLoadNode::Make(first[i], {zero}), {slot}));
        }
        seq.push_back(IfThenElseNode::Make(
            EQNode::Make(FloorModNode::Make(reduce_index, Const(reduce_index, warp_size_)), zero),
            SeqStmtNode::Flatten(stage)));
        seq.push_back(Sync("shared"));
        Expr own = Add(Mul(group_index, Const(group_index, warps)), reduce_index);
        for (size_t i = 0; i < n; ++i) values[i] = BufferLoadNode::Make(staging[i], {own});
        auto [second, locals2] =
            WarpRound(values, types, reducer, reduce_index, warps,
                      LTNode::Make(reduce_index, Const(reduce_index, warps)), &seq);
        allocs.insert(allocs.end(), locals2.begin(), locals2.end());
        std::vector<Stmt> write;
        for (size_t i = 0; i < n; ++i) {
          allocs.push_back(second[i]);
          Buffer res = BufferNode::Decl("red_result", results[i]->dtype,
                                        {Const(reduce_index, group_extent)}, "shared");
          write.push_back(
              BufferStoreNode::Make(res, BufferLoadNode::Make(second[i], {zero}), {group_index}));
          out.push_back(res);
        }
        seq.push_back(
            IfThenElseNode::Make(EQNode::Make(reduce_index, zero), SeqStmtNode::Flatten(write)));
        seq.push_back(Sync("shared"));
      }
      for (size_t i = 0; i < n; ++i) {
        bool multi = reduce_extent > warp_size_;
        Expr at = multi ? group_index : zero;
        Remap(call, results[i], out[i], BufferLoadNode::Make(out[i], {at}));
      }
    } else {
      if (reduce_extent == 1) {
        std::vector<Stmt> stores;
        for (size_t i = 0; i < n; ++i) {
          stores.push_back(BufferStoreNode::Make(results[i], values[i], {Int32(0)}));
        }
        return SeqStmtNode::Flatten(stores);
      }
      // A previous reduction may still be reading the buffer.
      seq.push_back(Sync("shared"));
      std::vector<Buffer> shared(n);
      for (size_t i = 0; i < n; ++i) {
        shared[i] = BufferNode::Decl("red_buf" + std::to_string(i), types[i],
                                     {Const(group_index, group_extent * reduce_extent)}, "shared");
        seq.push_back(BufferStoreNode::Make(shared[i], values[i],
                                            {BufIndex(reduce_index, group_index, reduce_extent)}));
      }
      seq.push_back(Sync("shared"));
      seq.push_back(BufferTree(reducer, shared, reduce_index, group_index, reduce_extent,
                               group_extent, contiguous));
      for (size_t i = 0; i < n; ++i) {
        Expr first = BufIndex(Const(reduce_index, 0), group_index, reduce_extent);
        Remap(call, results[i], shared[i], BufferLoadNode::Make(shared[i], {first}));
      }
    }
    Stmt body = SeqStmtNode::Flatten(seq);
    for (const Buffer& b : allocs) {
      body = DeclBufferNode::Make(b, body);
      body = AllocateNode::Make(b->data, b->dtype, b->shape, Bool(true), body);
    }
    return body;
  }

  void Remap(const CallNode* call, const Buffer& result, const Buffer& holder, Expr value) {
    const VarNode* data = result->data.get();
    if (load_remap_.count(data)) {
      Fail(call, "the result buffer '" + result->name + "' receives two cross-thread reductions");
    }
    load_remap_[data] = std::move(value);
    alloc_remap_[data] = holder;
    var_remap_[data] = holder->data;
    buf_remap_[result.get()] = holder;
  }

  std::string kind_;
  int64_t warp_size_, max_threads_;
  bool need_mask_ = true;
  Buffer last_mask_;
  std::vector<Thread> threads_;
  std::vector<const CommReducerNode*> reducers_;
  std::unordered_map<const VarNode*, Expr> load_remap_;
  std::unordered_map<const VarNode*, Buffer> alloc_remap_;
  std::unordered_map<const VarNode*, Var> var_remap_;
  std::unordered_map<const BufferNode*, Buffer> buf_remap_;
  arith::Analyzer analyzer_;
};

int64_t TargetInt(const MapNode* target, const char* key, int64_t fallback) {
  if (target == nullptr) return fallback;
  auto it = target->items.find(key);
  auto* v = it == target->items.end() ? nullptr : AsPtr<IntImmNode>(it->second);
  return v ? v->value : fallback;
}

PrimFunc LowerThreadAllreduceFunc(PrimFunc f, IRModule, const PassContext&) {
  bool any = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    if (call && call->is_op("tir.tvm_thread_allreduce")) any = true;
  });
  if (!any) return f;  // nothing to lower: no target needed
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) {
    TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
        << "tir.LowerThreadAllreduce needs the function's \"target\" attribute (its kind and "
           "thread_warp_size decide the lowering)";
  }
  std::string kind = TargetKindOf(it->second);
  auto* map = AsPtr<MapNode>(it->second);
  // A target given as a string carries the defaults of its kind.
  bool gpu = kind == "cuda" || kind == "metal";
  int64_t warp = TargetInt(map, "thread_warp_size", gpu ? 32 : kind == "rocm" ? 64 : 1);
  int64_t max_threads = TargetInt(map, "max_num_threads",
                                  kind == "cuda" || kind == "rocm" ? 1024
                                  : kind == "metal"                ? 256
                                                                   : -1);
  Stmt body = TvmAllreduceBuilder(kind, warp, max_threads).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerThreadAllreduce() {
  return CreatePrimFuncPass(LowerThreadAllreduceFunc, 0, "tir.LowerThreadAllreduce");
}
TESSERA_REGISTER_PASS("tir.LowerThreadAllreduce", LowerThreadAllreduce);

}  // namespace transform
}  // namespace tessera
