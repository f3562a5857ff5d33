// tir.LowerCrossThreadReduction: a reduction block whose reduction loops are (partly) bound to
// threadIdx.* becomes, in Apache TVM's shape,
//   - an in-thread partial reduction over the reduction loops that are not thread-bound, into a
//     one-element "local" buffer with unit stride (only when there are such loops): blocks
//     `<name>_in_thread_init` and `<name>_in_thread`,
//   - a block `<name>_cross_thread` holding
//       attr(comm_reducer, "reduce_scope", reinterpret(handle, 0)) {
//         tvm_thread_allreduce(1, source, cond, cross_thread[0], thread_var...) }
//     executed by every thread of the group into a one-element "local" buffer
//     (tir.LowerThreadAllreduce lowers it); without in-thread loops it keeps the block's
//     iterators and reads, and the source is the reduced value itself,
//   - a block `<name>_write_back` storing the result to the block's output, under the spatial
//     part of the block predicate and, when the output is shared memory or a function argument,
//     by the first thread of the group.
// Beyond TVM, an init that is not the reducer's identity (or no init) is folded into the
// write-back. The blocks still exist here (normalize stage, right after tir.CanonicalizeLoop).
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/reducer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {

TESSERA_REGISTER_OP("tir.tvm_thread_allreduce")
    .set_effect(CallEffect::kOpaque)
    .describe(
        "Reduction across the threads of a group, under attr(reducer, \"reduce_scope\", 0): "
        "tvm_thread_allreduce(size, source, cond, result, thread_var...). size is uint32 1 (one "
        "reduced value); source is this thread's value, taken only where the bool cond holds "
        "(the reducer's identity otherwise); result is the element [0] of a one-element "
        "\"local\" buffer that receives the reduced value in every thread of the group; the "
        "thread vars are the threadIdx-bound loop variables reduced over (the other thread "
        "indices select the group). The reducer combines with +, *, min or max. Also accepted: "
        "(size, source, cond, result_data, reducer name \"sum\"/\"prod\"/\"min\"/\"max\", "
        "identity, thread_var...) without the attribute. Every thread of the block must reach "
        "the call; its value (a handle) is unused; tir.LowerThreadAllreduce lowers it to warp "
        "shuffles.");

namespace {

bool IsThreadIdx(const ForNode* loop) { return ThreadTag(loop).rfind("threadIdx.", 0) == 0; }

Expr AndAll(const std::vector<Expr>& conds) {
  Expr r;
  for (const Expr& c : conds) r = r ? Expr(AndNode::Make(r, c)) : c;
  return r ? r : Expr(IntImmNode::Make(DataType::Bool(), 1));
}

/*! \brief `s` under the reduction's serial loops (outermost first), with `prefix` run before it
 *  inside the loop that has `outer_serial` serial loops around and including it, or before
 *  everything when `outer_serial` is 0. */
Stmt UnderSerialLoops(Stmt s, const std::vector<const ForNode*>& serial_loops, size_t outer_serial,
                      const std::vector<Stmt>& prefix, const Span& span) {
  auto after_prefix = [&](const Stmt& body) {
    std::vector<Stmt> seq = prefix;
    seq.push_back(body);
    return SeqStmtNode::Flatten(seq, span);
  };
  for (size_t k = serial_loops.size(); k-- > 0;) {
    const ForNode* f = serial_loops[k];
    if (k + 1 == outer_serial && !prefix.empty()) s = after_prefix(s);
    s = ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind, s, f->thread_binding,
                      f->annotations, f->span);
  }
  if (outer_serial == 0 && !prefix.empty()) s = after_prefix(s);
  return s;
}

/*! \brief attr(reducer, "reduce_scope", reinterpret(handle, 0)) {
 *  tvm_thread_allreduce(args..., thread_var...) }, as TVM annotates the allreduce. */
Stmt ThreadAllreduce(const CommReducer& reducer, std::vector<Expr> args,
                     const std::vector<const ForNode*>& thread_loops, const Span& span) {
  for (const ForNode* f : thread_loops) args.push_back(f->loop_var);
  Expr handle_zero = CallNode::Make(DataType::Handle(), OpNode::Get("tir.reinterpret"),
                                    {IntImmNode::Make(DataType::UInt(64), 0)}, span);
  Stmt call = EvaluateNode::Make(
      CallNode::Make(DataType::Handle(), OpNode::Get("tir.tvm_thread_allreduce"), args, span),
      span);
  return AttrStmtNode::Make(reducer, "reduce_scope", handle_zero, call, span);
}

// A one-element "local" scratch buffer with an explicit unit stride (TVM's form).
Buffer Scratch(const std::string& name, DataType t, const Span& span) {
  Expr one = IntImmNode::Make(DataType::Int(32), 1);
  Var data = VarNode::MakePointer(name, t, "local", span);
  return BufferNode::Make(data, t, {one}, {one}, nullptr, name, 64, 1, span);
}

class CrossThreadReductionLowerer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const BlockNode* op) override {
    pending_.emplace_back();
    Stmt s = StmtMutator::VisitStmt_(op);
    std::vector<Buffer> extra = std::move(pending_.back());
    pending_.pop_back();
    if (extra.empty()) return s;
    auto* b = AsPtr<BlockNode>(s);
    std::vector<Buffer> allocs = b->alloc_buffers;
    allocs.insert(allocs.end(), extra.begin(), extra.end());
    return BlockNode::Make(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init,
                           allocs, b->match_buffers, b->annotations, b->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    // The perfect nest from this loop down to a block.
    std::vector<const ForNode*> chain{op};
    Stmt s = op->body;
    while (auto* f = AsPtr<ForNode>(s)) {
      chain.push_back(f);
      s = f->body;
    }
    auto* realize = AsPtr<BlockRealizeNode>(s);
    if (realize && IsCandidate(realize, chain) && UsedByReduction(realize, op->loop_var.get())) {
      return Rewrite(chain, realize);
    }
    // Reduction loops around a sequence whose last statement is the rest of the nest (e.g. the
    // rfactor block, then the reduction block, under the thread loop): the other statements
    // stay in the in-thread part, before the block's loops (TVM: the block must be the last
    // one under its first reduction loop).
    if (auto* seq = AsPtr<SeqStmtNode>(s)) {
      std::vector<const ForNode*> full = chain;
      Stmt t = seq->seq.back();
      while (auto* f = AsPtr<ForNode>(t)) {
        full.push_back(f);
        t = f->body;
      }
      auto* inner = AsPtr<BlockRealizeNode>(t);
      bool outer_reduce = inner != nullptr;
      for (const ForNode* f : chain) {
        outer_reduce = outer_reduce && UsedByReduction(inner, f->loop_var.get());
      }
      bool inner_serial = true;
      for (size_t i = chain.size(); i < full.size(); ++i) {
        inner_serial = inner_serial && ThreadTag(full[i]).empty();
      }
      if (outer_reduce && inner_serial && IsCandidate(inner, full)) {
        for (const ForNode* f : chain) loops_.push_back(f);
        std::vector<Stmt> prefix;
        for (size_t i = 0; i + 1 < seq->seq.size(); ++i) prefix.push_back(VisitStmt(seq->seq[i]));
        loops_.resize(loops_.size() - chain.size());
        return Rewrite(full, inner, prefix, chain.size());
      }
    }
    loops_.push_back(op);
    Stmt r = StmtMutator::VisitStmt_(op);
    loops_.pop_back();
    return r;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    if (IsCandidate(op, {})) {
      TESSERA_THROW_KIND(op->block->span, ErrorKind::kValue)
          << "LowerCrossThreadReduction: the reduction block '" << op->block->name_hint
          << "' has a reduction loop bound to a GPU thread index, but its reduction loops do "
             "not form a perfect nest around it (a cross-thread reduction needs the block last "
             "under its reduction loops, only statements before it)";
    }
    Stmt s = StmtMutator::VisitStmt_(op);
    return Broadcast(op, s);
  }

  std::vector<std::vector<Buffer>> pending_;
  std::unordered_set<const BufferNode*> params_;  // the function's argument buffers

 private:
  static bool UsedByReduction(const BlockRealizeNode* realize, const VarNode* v) {
    const Block& b = realize->block;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (b->iter_vars[i]->iter_type != IterVarType::kCommReduce) continue;
      if (UsesVar(realize->iter_values[i], [&](const VarNode* u) { return u == v; })) return true;
    }
    return false;
  }

  // Whether some reduction iterator of the block is bound to a thread loop among the
  // enclosing loops (`loops_` and `chain`).
  bool IsCandidate(const BlockRealizeNode* realize, const std::vector<const ForNode*>& chain) {
    // A block without init is a reduction only when its update is one (as TVM, which lowers
    // only blocks with an init, leaves e.g. `B[i, j] = A[i, j] + c` over a reduction iterator
    // alone).
    const Block& b = realize->block;
    if (!b->init) {
      auto* store = AsPtr<BufferStoreNode>(b->body);
      if (store == nullptr || !MatchReducer(store)) return false;
    }
    // Any thread binding counts (as TVM): a reduction loop on blockIdx alone is refused below
    // rather than left to race.
    auto check = [&](const ForNode* f) {
      return !ThreadTag(f).empty() && UsedByReduction(realize, f->loop_var.get());
    };
    for (const ForNode* f : loops_) {
      if (check(f)) return true;
    }
    for (const ForNode* f : chain) {
      if (check(f)) return true;
    }
    return false;
  }

  // The outermost thread-bound loop around the current statement: it names the kernel.
  const ForNode* Kernel() const {
    for (const ForNode* f : loops_) {
      if (!ThreadTag(f).empty()) return f;
    }
    return nullptr;
  }

  // TVM's thread broadcast: a block of the same kernel that reads the result of a cross-thread
  // reduction and writes non-local memory, outside the loop of a thread index reduced over,
  // runs in a new loop over that index with only its first thread writing.
  Stmt Broadcast(const BlockRealizeNode* op, Stmt s) {
    const Block& b = op->block;
    const ForNode* kernel = Kernel();
    if (kernel == nullptr || reduced_.empty()) return s;
    for (const BufferRegion& w : b->writes) {
      if (w->buffer->scope() == "local") return s;
    }
    std::vector<const ForNode*> free;
    for (const BufferRegion& r : b->reads) {
      auto it = reduced_.find(r->buffer.get());
      if (it == reduced_.end() || it->second.first != kernel) continue;
      for (const ForNode* t : it->second.second) {
        bool bound = false;
        for (const ForNode* f : loops_) bound = bound || ThreadTag(f) == ThreadTag(t);
        for (const ForNode* g : free) bound = bound || ThreadTag(g) == ThreadTag(t);
        if (!bound) free.push_back(t);
      }
    }
    if (free.empty()) return s;
    auto* realize = AsPtr<BlockRealizeNode>(s);
    Expr pred = realize->predicate;
    std::vector<Var> vars;
    for (const ForNode* t : free) {
      Var v = VarNode::Make(t->loop_var->name, t->loop_var->dtype, t->span);
      vars.push_back(v);
      Expr first = IsConstInt(t->min, 0) ? IntImmNode::Make(v->dtype, 0) : t->min;
      Expr eq = EQNode::Make(v, first);
      pred = IsConstInt(pred, 1) ? eq : Expr(AndNode::Make(eq, pred));
    }
    s = BlockRealizeNode::Make(realize->iter_values, pred, realize->block, realize->span);
    for (size_t i = free.size(); i-- > 0;) {
      const ForNode* t = free[i];
      s = ForNode::Make(
          vars[i], t->min, t->extent, t->for_kind, s,
          IterVarNode::Make(
              t->thread_binding->dom,
              VarNode::Make(t->thread_binding->var->name, t->thread_binding->var->dtype, t->span),
              t->thread_binding->iter_type, t->thread_binding->thread_tag, t->span),
          {}, t->span);
    }
    return s;
  }

  [[noreturn]] static void Fail(const Block& b, const std::string& why) {
    TESSERA_THROW_KIND(b->span, ErrorKind::kValue)
        << "LowerCrossThreadReduction: cannot lower the cross-thread reduction block '"
        << b->name_hint << "': " << why;
  }

  /*! \brief Whether `e` uses the variable of one of `loops`. */
  static bool UsesAnyLoop(const Expr& e, const std::vector<const ForNode*>& loops) {
    return UsesVar(e, [&](const VarNode* v) {
      for (const ForNode* f : loops) {
        if (f->loop_var.get() == v) return true;
      }
      return false;
    });
  }

  /*! \brief The conjuncts of the block predicate over none of the reduction loops `chain` (the
   *  spatial ones, which also guard the write-back); one over both a reduction loop and a loop
   *  outside the nest fails. */
  std::vector<Expr> SpatialConditions(const BlockRealizeNode* realize,
                                      const std::vector<const ForNode*>& chain) {
    std::vector<Expr> conjuncts, spatial_conds;
    SplitConjuncts(realize->predicate, &conjuncts);
    for (const Expr& c : conjuncts) {
      if (!UsesAnyLoop(c, chain)) {
        spatial_conds.push_back(c);
      } else if (UsesAnyLoop(c, loops_)) {
        Fail(realize->block,
             "its predicate mixes the reduction loops and outer loops in one condition");
      }
    }
    return spatial_conds;
  }

  /*! \brief Fresh copies of the block's iterators (the spatial ones only with `spatial_only`)
   *  for a new block, their bindings, and the map from the old variables to the new. */
  static void CopyIters(const BlockRealizeNode* realize, bool spatial_only,
                        std::vector<IterVar>* ivs, std::vector<Expr>* vals, VarMap* vmap) {
    const Block& b = realize->block;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      const IterVar& iv = b->iter_vars[i];
      if (spatial_only && iv->iter_type == IterVarType::kCommReduce) continue;
      Var v = VarNode::Make(iv->var->name, iv->var->dtype, iv->var->span);
      (*vmap)[iv->var.get()] = v;
      ivs->push_back(IterVarNode::Make(iv->dom, v, iv->iter_type, iv->thread_tag, iv->span));
      vals->push_back(realize->iter_values[i]);
    }
  }

  /*! \brief The regions with the variables of `vmap` substituted in their bounds. */
  static std::vector<BufferRegion> Substituted(const std::vector<BufferRegion>& regions,
                                               const VarMap& vmap) {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      std::vector<Range> region;
      for (const Range& rg : r->region) {
        region.push_back(
            RangeNode::Make(Substitute(rg->min, vmap), Substitute(rg->extent, vmap), rg->span));
      }
      out.push_back(BufferRegionNode::Make(r->buffer, region, r->span));
    }
    return out;
  }

  // `chain`: the reduction loops down to the block; `prefix`: statements that run before the
  // last `chain.size() - split` loops, inside the first `split` ones.
  Stmt Rewrite(const std::vector<const ForNode*>& chain, const BlockRealizeNode* realize,
               const std::vector<Stmt>& prefix = {}, size_t split = 0) {
    const Block& b = realize->block;
    for (const ForNode* f : loops_) {
      if (UsedByReduction(realize, f->loop_var.get())) {
        Fail(b, "the reduction loop '" + f->loop_var->name +
                    "' is not part of the perfect loop nest around the block");
      }
    }
    // The loops of the nest: all reduction loops, none used by a spatial iterator.
    std::vector<const ForNode*> thread_loops, serial_loops;
    size_t outer_serial = 0;  // serial loops among the first `split`
    for (size_t pos = 0; pos < chain.size(); ++pos) {
      const ForNode* f = chain[pos];
      if (!UsedByReduction(realize, f->loop_var.get())) {
        Fail(b, "the loop '" + f->loop_var->name +
                    "' is not a reduction loop but lies between the reduction loops; reorder "
                    "the loops so that the reduction loops are innermost");
      }
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i]->iter_type == IterVarType::kCommReduce) continue;
        if (UsesAnyLoop(realize->iter_values[i], {f})) {
          Fail(b, "the loop '" + f->loop_var->name +
                      "' is used by both spatial and reduction iterators");
        }
      }
      std::string tag = ThreadTag(f);
      if (IsThreadIdx(f)) {
        thread_loops.push_back(f);
      } else if (!tag.empty()) {
        Fail(b, "the reduction loop '" + f->loop_var->name + "' is bound to '" + tag +
                    "'; only threadIdx.* can reduce across threads");
      } else {
        serial_loops.push_back(f);
        if (pos < split) ++outer_serial;
      }
    }
    // Two writes: a tuple reducer (argmax / argmin, a pair of sums).
    if (b->writes.size() == 2) {
      return RewriteTuple(chain, realize, prefix, split, thread_loops, serial_loops, outer_serial);
    }
    // The block: one write, a recognised reducer, an init of the same element.
    if (b->writes.size() != 1) {
      Fail(b, "it writes " + std::to_string(b->writes.size()) + " buffers (exactly one expected)");
    }
    if (!b->alloc_buffers.empty() || !b->match_buffers.empty()) {
      Fail(b, "it allocates or matches buffers");
    }
    auto* store = AsPtr<BufferStoreNode>(b->body);
    if (store == nullptr) Fail(b, "its body is not a single buffer store");
    auto* init_store = b->init ? AsPtr<BufferStoreNode>(b->init) : nullptr;
    std::optional<ReducerMatch> red = MatchReducer(store, init_store ? init_store->value : Expr());
    if (!red) {
      Fail(b,
           "the update is not a known reducer: expected `B[i] = B[i] + x` (or *, T.min, "
           "T.max)");
    }
    const Buffer& out = store->buffer;
    if (b->writes[0]->buffer != out) Fail(b, "it writes a buffer other than the one it stores to");
    auto reads_out = [&](const Expr& e) {
      bool found = false;
      PostOrderVisit(e, [&](const ObjectRef& n) {
        auto* load = AsPtr<BufferLoadNode>(n);
        if (load && load->buffer == out) found = true;
      });
      return found;
    };
    if (reads_out(red->rhs))
      Fail(b, "the reduced value reads the output buffer '" + out->name + "'");
    const BufferStoreNode* init = nullptr;
    if (b->init) {
      init = AsPtr<BufferStoreNode>(b->init);
      bool same = init && init->buffer == out && init->indices.size() == store->indices.size();
      for (size_t i = 0; same && i < init->indices.size(); ++i) {
        same = StructuralEqual(init->indices[i], store->indices[i]);
      }
      if (!same) Fail(b, "its init is not a single store to the element the update writes");
      if (reads_out(init->value)) Fail(b, "its init reads the output buffer '" + out->name + "'");
      for (const IterVar& iv : b->iter_vars) {
        if (iv->iter_type != IterVarType::kCommReduce) continue;
        if (UsesVar(init->value, [&](const VarNode* v) { return v == iv->var.get(); })) {
          Fail(b, "its init depends on the reduction iterator '" + iv->var->name + "'");
        }
      }
    }
    DataType t = store->value->dtype;
    // The block predicate: conjuncts over the reduction loops guard the reduced values; the
    // others (spatial) also guard the write-back.
    std::vector<Expr> spatial_conds = SpatialConditions(realize, chain);

    std::vector<BufferRegion> other_reads;  // the reads of buffers other than the output
    for (const BufferRegion& r : b->reads) {
      if (r->buffer != out) other_reads.push_back(r);
    }
    Expr zero = IntImmNode::Make(DataType::Int(32), 0);
    Expr true_ = IntImmNode::Make(DataType::Bool(), 1);
    auto element = [&](const Buffer& buf) {
      return BufferRegionNode::Make(
          buf, {RangeNode::Make(zero, IntImmNode::Make(DataType::Int(32), 1))});
    };
    Buffer red_buf = Scratch("cross_thread_" + out->name, t, b->span);
    pending_.back().push_back(red_buf);
    std::vector<Stmt> seq;
    // The reducer, as TVM annotates the allreduce: combine(x, y) from its identity.
    Var x = VarNode::Make("x", t), y = VarNode::Make("y", t);
    CommReducer reducer = CommReducerNode::Make({x}, {y}, {ReducerCombine(red->kind, x, y)},
                                                {red->identity}, b->span);
    auto allreduce = [&](const Expr& source, const Expr& cond) {
      std::vector<Expr> args{IntImmNode::Make(DataType::UInt(32), 1), source, cond,
                             BufferLoadNode::Make(red_buf, {zero})};
      return ThreadAllreduce(reducer, std::move(args), thread_loops, b->span);
    };
    // A block predicate also goes through the in-thread buffer (TVM's form): the in-thread
    // block runs under it, so that a thread outside it contributes the identity.
    if (!serial_loops.empty() || !IsConstInt(realize->predicate, 1)) {
      Buffer in_buf = Scratch("in_thread_" + out->name, t, b->span);
      pending_.back().push_back(in_buf);
      Block init_block = BlockNode::Make(
          {}, {}, {element(in_buf)}, b->name_hint + "_in_thread_init",
          BufferStoreNode::Make(in_buf, red->identity, {zero}), nullptr, {}, {}, {}, b->span);
      seq.push_back(BlockRealizeNode::Make({}, true_, init_block, realize->span));
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, false, &ivs, &vals, &vmap);
      Expr acc = BufferLoadNode::Make(in_buf, {zero});
      Stmt body = BufferStoreNode::Make(in_buf, red->Combine(acc, Substitute(red->rhs, vmap)),
                                        {zero}, nullptr, store->span);
      Block blk = BlockNode::Make(ivs, Substituted(b->reads, vmap), {element(in_buf)},
                                  b->name_hint + "_in_thread", body, nullptr, {}, {},
                                  b->annotations, b->span);
      Stmt s = BlockRealizeNode::Make(vals, realize->predicate, blk, realize->span);
      s = UnderSerialLoops(s, serial_loops, outer_serial, prefix, realize->span);
      seq.push_back(s);
      Block cross = BlockNode::Make(
          {}, {element(in_buf)}, {element(red_buf)}, b->name_hint + "_cross_thread",
          allreduce(BufferLoadNode::Make(in_buf, {zero}), true_), nullptr, {}, {}, {}, b->span);
      seq.push_back(BlockRealizeNode::Make({}, true_, cross, realize->span));
    } else {
      // No in-thread loops and no predicate: the block's own iterators and reads feed the
      // allreduce directly.
      seq.insert(seq.end(), prefix.begin(), prefix.end());
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, false, &ivs, &vals, &vmap);
      Block cross = BlockNode::Make(
          ivs, Substituted(b->reads, vmap), {element(red_buf)}, b->name_hint + "_cross_thread",
          allreduce(Substitute(red->rhs, vmap), true_), nullptr, {}, {}, {}, b->span);
      seq.push_back(BlockRealizeNode::Make(vals, true_, cross, realize->span));
    }
    // The write-back.
    {
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, true, &ivs, &vals, &vmap);
      std::vector<Expr> idx;
      for (const Expr& i : store->indices) idx.push_back(Substitute(i, vmap));
      Expr result = BufferLoadNode::Make(red_buf, {zero});
      std::vector<BufferRegion> reads{element(red_buf)};
      if (init == nullptr) {
        result = red->Combine(BufferLoadNode::Make(out, idx), result);
        reads.push_back(b->writes[0]);
      } else if (!StructuralEqual(init->value, red->identity)) {
        result = red->Combine(Substitute(init->value, vmap), result);
        for (const BufferRegion& r : Substituted(other_reads, vmap)) {
          bool used = false;
          PostOrderVisit(init->value, [&](const ObjectRef& n) {
            auto* load = AsPtr<BufferLoadNode>(n);
            if (load && load->buffer == r->buffer) used = true;
          });
          if (used) reads.push_back(r);
        }
      }
      std::vector<BufferRegion> writes = Substituted(b->writes, vmap);
      if (init == nullptr) {
        // The old value is read through the write region.
        reads.back() = writes[0];
      }
      // Every thread of the group holds the result. Memory that the threads share (shared
      // memory, the function's arguments) is written by the first thread of the group; other
      // outputs (local, or intermediate buffers that later blocks of the kernel read in every
      // thread) by all: TVM writes every non-local one by the first thread and rewrites the
      // readers to broadcast it, which tessera does not. The spatial conjuncts of the block
      // predicate come first (TVM's order).
      std::vector<Expr> conds = spatial_conds;
      if (IsSharedScope(out->scope()) || params_.count(out.get())) {
        for (const ForNode* f : thread_loops) {
          Expr first = IsConstInt(f->min, 0) ? IntImmNode::Make(f->loop_var->dtype, 0) : f->min;
          conds.push_back(EQNode::Make(f->loop_var, first));
        }
      }
      Block wb = BlockNode::Make(ivs, reads, writes, b->name_hint + "_write_back",
                                 BufferStoreNode::Make(out, result, idx, nullptr, store->span),
                                 nullptr, {}, {}, {}, b->span);
      seq.push_back(BlockRealizeNode::Make(vals, AndAll(conds), wb, realize->span));
    }
    if (const ForNode* kernel = Kernel()) reduced_[out.get()] = {kernel, thread_loops};
    Stmt s = SeqStmtNode::Flatten(seq, realize->span);
    for (auto it = thread_loops.rbegin(); it != thread_loops.rend(); ++it) {
      const ForNode* f = *it;
      s = ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind, s, f->thread_binding,
                        f->annotations, f->span);
    }
    return s;
  }

  // A reduction of two buffers: `x0: T = combine0; x1: T = combine1; out0[idx] = x0;
  // out1[idx] = x1` (the stores in any order), whose combiner is one of the known tuple reducers
  // (reducer.h) and whose init stores the reducer's identity. The blocks have the single-value
  // shape with one scratch buffer per output (in the order of the block's writes); the in-thread
  // block keeps the update as written, on the in-thread buffers. The write-back of non-local
  // outputs is done by the first thread of the group (TVM's rule).
  Stmt RewriteTuple(const std::vector<const ForNode*>& chain, const BlockRealizeNode* realize,
                    const std::vector<Stmt>& prefix, size_t split,
                    const std::vector<const ForNode*>& thread_loops,
                    const std::vector<const ForNode*>& serial_loops, size_t outer_serial) {
    const Block& b = realize->block;
    if (!b->alloc_buffers.empty() || !b->match_buffers.empty()) {
      Fail(b, "it allocates or matches buffers");
    }
    const char* shape =
        "its update is not a known two-value reducer (`v0: T = ...; v1: T = ...; out0[i] = v0; "
        "out1[i] = v1` as argmax, argmin or a pair of sums)";
    std::vector<const LetStmtNode*> lets;
    Stmt body = b->body;
    while (auto* let = AsPtr<LetStmtNode>(body)) {
      lets.push_back(let);
      body = let->body;
    }
    auto* seq = AsPtr<SeqStmtNode>(body);
    if (lets.size() != 2 || !seq || seq->seq.size() != 2) Fail(b, shape);
    // Per output, in the order of the writes: its store and the value bound to it.
    std::vector<Buffer> outs;
    std::vector<const BufferStoreNode*> stores;
    std::vector<Expr> accs, values;
    for (const BufferRegion& w : b->writes) {
      const BufferStoreNode* st = nullptr;
      for (const Stmt& x : seq->seq) {
        auto* cand = AsPtr<BufferStoreNode>(x);
        if (cand && cand->buffer == w->buffer) st = cand;
      }
      const LetStmtNode* let = nullptr;
      for (const LetStmtNode* l : lets) {
        if (st && st->value.get() == l->var.get()) let = l;
      }
      if (st == nullptr || let == nullptr) Fail(b, shape);
      outs.push_back(w->buffer);
      stores.push_back(st);
      accs.push_back(BufferLoadNode::Make(st->buffer, st->indices));
      values.push_back(let->value);
    }
    for (size_t i = 0; i < stores[1]->indices.size() || i < stores[0]->indices.size(); ++i) {
      if (stores[0]->indices.size() != stores[1]->indices.size() ||
          !StructuralEqual(stores[0]->indices[i], stores[1]->indices[i])) {
        Fail(b, "its two outputs are written at different indices");
      }
    }
    std::optional<TupleReducerMatch> m = MatchTupleReducer(accs, values);
    if (!m) Fail(b, shape);
    std::unordered_set<const VarNode*> let_vars{lets[0]->var.get(), lets[1]->var.get()};
    for (const Expr& r : m->rhs) {
      bool bad = UsesVar(r, [&](const VarNode* v) { return let_vars.count(v) > 0; });
      PostOrderVisit(r, [&](const ObjectRef& n) {
        auto* load = AsPtr<BufferLoadNode>(n);
        if (load && (load->buffer == outs[0] || load->buffer == outs[1])) bad = true;
      });
      if (bad) Fail(b, "a reduced value reads the outputs or the update's own values");
    }
    // The init: the reducer's identity into each output at the update's element.
    auto* init_seq = b->init ? AsPtr<SeqStmtNode>(b->init) : nullptr;
    if (init_seq == nullptr || init_seq->seq.size() != 2) {
      Fail(b, "a two-value reduction needs an init storing the reducer's identity to both outputs");
    }
    for (const Stmt& x : init_seq->seq) {
      auto* st = AsPtr<BufferStoreNode>(x);
      size_t i = st && st->buffer == outs[0] ? 0 : st && st->buffer == outs[1] ? 1 : 2;
      bool ok = i < 2 && st->indices.size() == stores[i]->indices.size();
      for (size_t k = 0; ok && k < st->indices.size(); ++k) {
        ok = StructuralEqual(st->indices[k], stores[i]->indices[k]);
      }
      if (!ok || !StructuralEqual(st->value, m->identity[i])) {
        Fail(b, "its init must store the reducer's identity (" + m->name +
                    ") to the element each output's update writes");
      }
    }
    std::vector<Expr> spatial_conds = SpatialConditions(realize, chain);
    Expr zero = IntImmNode::Make(DataType::Int(32), 0);
    Expr true_ = IntImmNode::Make(DataType::Bool(), 1);
    auto element = [&](const Buffer& buf) {
      return BufferRegionNode::Make(
          buf, {RangeNode::Make(zero, IntImmNode::Make(DataType::Int(32), 1))});
    };
    std::vector<Buffer> cross, in;
    for (const Buffer& o : outs) {
      cross.push_back(Scratch("cross_thread_" + o->name, o->dtype, b->span));
      pending_.back().push_back(cross.back());
    }
    CommReducer reducer =
        CommReducerNode::Make(m->lhs, m->rhs_vars, m->combiner, m->identity, b->span);
    auto allreduce = [&](const std::vector<Expr>& sources) {
      std::vector<Expr> args{IntImmNode::Make(DataType::UInt(32), 2)};
      args.insert(args.end(), sources.begin(), sources.end());
      args.push_back(true_);
      for (const Buffer& c : cross) args.push_back(BufferLoadNode::Make(c, {zero}));
      return ThreadAllreduce(reducer, std::move(args), thread_loops, b->span);
    };
    std::vector<Stmt> out_seq;
    if (!serial_loops.empty() || !IsConstInt(realize->predicate, 1)) {
      for (const Buffer& o : outs) {
        in.push_back(Scratch("in_thread_" + o->name, o->dtype, b->span));
        pending_.back().push_back(in.back());
      }
      std::vector<Stmt> init_stores;
      for (size_t i = 0; i < 2; ++i) {
        init_stores.push_back(BufferStoreNode::Make(in[i], m->identity[i], {zero}));
      }
      Block init_block = BlockNode::Make(
          {}, {}, {element(in[0]), element(in[1])}, b->name_hint + "_in_thread_init",
          SeqStmtNode::Flatten(init_stores), nullptr, {}, {}, {}, b->span);
      out_seq.push_back(BlockRealizeNode::Make({}, true_, init_block, realize->span));
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, false, &ivs, &vals, &vmap);
      // The update as written, its outputs replaced by the in-thread buffers.
      std::unordered_map<const BufferNode*, Buffer> to_in{{outs[0].get(), in[0]},
                                                          {outs[1].get(), in[1]}};
      Stmt update = IRTransform(Substitute(b->body, vmap), nullptr,
                                [&](const ObjectRef& n) {
                                  if (auto* load = AsPtr<BufferLoadNode>(n)) {
                                    auto it = to_in.find(load->buffer.get());
                                    if (it != to_in.end())
                                      return ObjectRef(BufferLoadNode::Make(it->second, {zero}));
                                  }
                                  if (auto* st = AsPtr<BufferStoreNode>(n)) {
                                    auto it = to_in.find(st->buffer.get());
                                    if (it != to_in.end()) {
                                      return ObjectRef(BufferStoreNode::Make(
                                          it->second, st->value, {zero}, nullptr, st->span));
                                    }
                                  }
                                  return ObjectRef();
                                },
                                {});
      std::vector<BufferRegion> reads;
      for (const BufferRegion& r : Substituted(b->reads, vmap)) {
        if (r->buffer != outs[0] && r->buffer != outs[1]) reads.push_back(r);
      }
      Block blk =
          BlockNode::Make(ivs, reads, {element(in[0]), element(in[1])}, b->name_hint + "_in_thread",
                          update, nullptr, {}, {}, b->annotations, b->span);
      Stmt s = BlockRealizeNode::Make(vals, realize->predicate, blk, realize->span);
      s = UnderSerialLoops(s, serial_loops, outer_serial, prefix, realize->span);
      out_seq.push_back(s);
      Block cb = BlockNode::Make(
          {}, {element(in[0]), element(in[1])}, {element(cross[0]), element(cross[1])},
          b->name_hint + "_cross_thread",
          allreduce({BufferLoadNode::Make(in[0], {zero}), BufferLoadNode::Make(in[1], {zero})}),
          nullptr, {}, {}, {}, b->span);
      out_seq.push_back(BlockRealizeNode::Make({}, true_, cb, realize->span));
    } else {
      out_seq.insert(out_seq.end(), prefix.begin(), prefix.end());
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, false, &ivs, &vals, &vmap);
      std::vector<BufferRegion> reads;
      for (const BufferRegion& r : Substituted(b->reads, vmap)) {
        if (r->buffer != outs[0] && r->buffer != outs[1]) reads.push_back(r);
      }
      Block cb = BlockNode::Make(
          ivs, reads, {element(cross[0]), element(cross[1])}, b->name_hint + "_cross_thread",
          allreduce({Substitute(m->rhs[0], vmap), Substitute(m->rhs[1], vmap)}), nullptr, {}, {},
          {}, b->span);
      out_seq.push_back(BlockRealizeNode::Make(vals, true_, cb, realize->span));
    }
    {
      std::vector<IterVar> ivs;
      std::vector<Expr> vals;
      VarMap vmap;
      CopyIters(realize, true, &ivs, &vals, &vmap);
      std::vector<Stmt> wb_stores;
      for (size_t i = 0; i < 2; ++i) {
        std::vector<Expr> idx;
        for (const Expr& e : stores[i]->indices) idx.push_back(Substitute(e, vmap));
        wb_stores.push_back(BufferStoreNode::Make(outs[i], BufferLoadNode::Make(cross[i], {zero}),
                                                  idx, nullptr, stores[i]->span));
      }
      std::vector<Expr> conds = spatial_conds;
      if (outs[0]->scope() != "local" || outs[1]->scope() != "local") {
        for (const ForNode* f : thread_loops) {
          Expr first = IsConstInt(f->min, 0) ? IntImmNode::Make(f->loop_var->dtype, 0) : f->min;
          conds.push_back(EQNode::Make(f->loop_var, first));
        }
      }
      Block wb = BlockNode::Make(ivs, {element(cross[0]), element(cross[1])},
                                 Substituted(b->writes, vmap), b->name_hint + "_write_back",
                                 SeqStmtNode::Flatten(wb_stores), nullptr, {}, {}, {}, b->span);
      out_seq.push_back(BlockRealizeNode::Make(vals, AndAll(conds), wb, realize->span));
    }
    if (const ForNode* kernel = Kernel()) {
      for (const Buffer& o : outs) reduced_[o.get()] = {kernel, thread_loops};
    }
    Stmt s = SeqStmtNode::Flatten(out_seq, realize->span);
    for (auto it = thread_loops.rbegin(); it != thread_loops.rend(); ++it) {
      const ForNode* f = *it;
      s = ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind, s, f->thread_binding,
                        f->annotations, f->span);
    }
    return s;
  }

  std::vector<const ForNode*> loops_;
  // The outputs of the cross-thread reductions lowered so far: their kernel and thread loops.
  std::unordered_map<const BufferNode*, std::pair<const ForNode*, std::vector<const ForNode*>>>
      reduced_;
};

PrimFunc LowerCrossThreadReductionFunc(PrimFunc f, IRModule, const PassContext&) {
  CrossThreadReductionLowerer m;
  for (const auto& [var, buf] : f->buffer_map) m.params_.insert(buf.get());
  m.pending_.emplace_back();
  Stmt body = m.VisitStmt(f->body);
  if (!m.pending_.back().empty()) {
    // No enclosing block: allocate in a new root block.
    Block root = BlockNode::Make({}, {}, {}, "root", body, nullptr, m.pending_.back());
    body = BlockRealizeNode::Make({}, IntImmNode::Make(DataType::Bool(), 1), root);
  }
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerCrossThreadReduction() {
  return CreatePrimFuncPass(LowerCrossThreadReductionFunc, 0, "tir.LowerCrossThreadReduction");
}
TESSERA_REGISTER_PASS("tir.LowerCrossThreadReduction", LowerCrossThreadReduction);

}  // namespace transform
}  // namespace tessera
