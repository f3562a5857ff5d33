// tir.InjectSoftwarePipeline with TVM v0.23's rules (tessera's own pipeline runs its variant,
// tir.SkewSoftwarePipeline, skew_software_pipeline.cc).
//
// A loop annotated with `software_pipeline_stage` and `software_pipeline_order` (one entry per
// statement of its body; `software_pipeline_async_stages` optionally names asynchronous
// stages) is rewritten so that at step k the statement of stage s runs iteration k - s:
//
// - The statements are the children of the body's SeqStmt (the body may be a block whose
//   allocations belong to the pipeline; a child block with a SeqStmt body and no predicate is
//   opened, its allocations joining the pipeline's). Each statement becomes an opaque block
//   (a block without predicate stays what it is) whose reads and writes are inferred.
// - A buffer allocated by the pipeline that stage `def` first writes and stage `use` last
//   reads keeps use - def + 1 versions in a new leading dimension, indexed by the iteration
//   modulo the versions. Two versions are kept only when an earlier-ordered writer of an
//   earlier stage may overlap a later reader; `double_buffer_scope` on a block forces two.
// - The result is three loops over the steps, each in an opaque block with inferred regions:
//   the prologue [min, min + max_stage) and the epilogue (unrolled), the steady state between
//   them (the original loop's kind and other annotations). Each statement is guarded by a
//   block predicate saying whether its iteration exists; statements that provably never run in
//   a range are left out, and an empty range is a no-op block. A step count that may be
//   smaller than the number of stages gets an extra lower bound on the epilogue.
// - Statements of an asynchronous stage run in `async_scope` and are committed in groups
//   (`async_commit_queue_scope`); a reader of what they wrote waits first
//   (`async_wait_queue_scope` + `async_wait_inflight_count`: how many groups may still be in
//   flight, 0 where that cannot be counted).
//
// Finally every definition is made unique again (tir.ConvertSSA): the three loops are copies.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/block_access.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr char kStage[] = "software_pipeline_stage";
constexpr char kOrder[] = "software_pipeline_order";
constexpr char kAsync[] = "software_pipeline_async_stages";
constexpr char kDoubleBuffer[] = "double_buffer_scope";

[[noreturn]] void Fail(const Span& span, const std::string& why) {
  TESSERA_THROW_KIND(span, ErrorKind::kValue) << "tir.InjectSoftwarePipeline: " << why;
  std::abort();  // not reached: the line above throws
}

// Expression builders that fold identities as TVM's operators do (x + 0, x - 0, 1 * x), so
// that the structure matches TVM's before simplification.
// The operands in one type: a constant takes the other operand's type (TVM's rule for integer
// constants in binary operations), else the wider type.
std::pair<Expr, Expr> OneType(const Expr& a, const Expr& b) {
  if (a->dtype == b->dtype) return {a, b};
  if (auto c = AsConstInt(b)) return {a, IntConst(a->dtype, *c)};
  if (auto c = AsConstInt(a)) return {IntConst(b->dtype, *c), b};
  DataType t = a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
  return {CastTo(t, a), CastTo(t, b)};
}
Expr Add(const Expr& x, const Expr& y) {
  auto [a, b] = OneType(x, y);
  if (IsConstInt(b, 0)) return a;
  if (IsConstInt(a, 0)) return b;
  return AddE(a, b);
}
Expr Sub(const Expr& x, const Expr& y) {
  auto [a, b] = OneType(x, y);
  return IsConstInt(b, 0) ? a : SubE(a, b);
}
Expr Mul(const Expr& x, const Expr& y) {
  auto [a, b] = OneType(x, y);
  if (IsConstInt(a, 1)) return b;
  if (IsConstInt(b, 1)) return a;
  return MulE(a, b);
}
Expr Cmp(bool less_equal, const Expr& x, const Expr& y) {
  auto [a, b] = OneType(x, y);
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) return Bool(less_equal ? *ca <= *cb : *ca < *cb);
  return less_equal ? Expr(LENode::Make(a, b)) : Expr(LTNode::Make(a, b));
}
Expr And(const Expr& a, const Expr& b) {
  if (auto x = AsConstInt(a)) return *x ? b : a;
  if (auto y = AsConstInt(b)) return *y ? a : b;
  return AndNode::Make(a, b);
}

/*! \brief `body` as an opaque block with inferred regions; a block realized without a
 *  predicate is its own block. */
Block MakeBlock(const Stmt& body, const BufferVarMap& buffers) {
  if (auto* realize = AsPtr<BlockRealizeNode>(body); realize && IsConstInt(realize->predicate, 1)) {
    return realize->block;
  }
  Block bare = BlockNode::Make({}, {}, {}, "", body);
  BlockAccessRegions access = GetBlockAccessRegion(bare.get(), buffers, true);
  return BlockNode::Make({}, access.reads, access.writes, "", body);
}

struct StmtInfo {
  int64_t stage;
  int64_t order;
  bool async;
};

/*! \brief A pipelined statement rewritten for one iteration: versioned accesses (index
 *  `floormod(loop_var - min, versions)`) and regions (all versions, or the one of the
 *  iteration when the pipeline has two stages). */
class VersionRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  VersionRewriter(const std::unordered_map<const BufferNode*, Buffer>& remap, const ForNode* loop,
                  bool all_versions)
      : remap_(remap), loop_(loop), all_versions_(all_versions) {
    for (const auto& [old, nb] : remap_) by_data_[old->data.get()] = {old, nb};
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    bool changed = false;
    auto regions = [&](const std::vector<BufferRegion>& rs) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : rs) {
        auto it = remap_.find(r->buffer.get());
        if (it == remap_.end()) {
          out.push_back(r);
          continue;
        }
        changed = true;
        const Buffer& nb = it->second;
        Range version = all_versions_ ? RangeNode::Make(Int32(0), nb->shape[0])
                                      : RangeNode::Make(Version(nb), Int32(1));
        std::vector<Range> region = {version};
        region.insert(region.end(), r->region.begin(), r->region.end());
        out.push_back(BufferRegionNode::Make(nb, region, r->span));
      }
      return out;
    };
    auto reads = regions(b->reads);
    auto writes = regions(b->writes);
    if (!changed) return s;
    return BlockNode::Make(b->iter_vars, reads, writes, b->name_hint, b->body, b->init,
                           b->alloc_buffers, b->match_buffers, b->annotations, b->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = remap_.find(store->buffer.get());
    if (it == remap_.end()) return s;
    std::vector<Expr> idx = {Version(it->second)};
    idx.insert(idx.end(), store->indices.begin(), store->indices.end());
    return BufferStoreNode::Make(it->second, store->value, idx, store->predicate, store->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = remap_.find(load->buffer.get());
    if (it == remap_.end()) return e;
    std::vector<Expr> idx = {Version(it->second)};
    idx.insert(idx.end(), load->indices.begin(), load->indices.end());
    return BufferLoadNode::Make(it->second, idx, load->predicate, load->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    // Pointer arguments followed by their element offsets.
    std::vector<size_t> pointers;
    if (call->is_op("tir.tvm_access_ptr")) {
      pointers = {1};
    } else if (call->is_op("tir.ptx_mma")) {
      pointers = {6, 8, 10};
    } else if (call->is_op("tir.ptx_ldmatrix")) {
      pointers = {3};
    } else if (call->is_op("tir.tvm_load_matrix_sync") ||
               call->is_op("tir.tvm_store_matrix_sync") || call->is_op("tir.tvm_mma_sync")) {
      for (const Expr& arg : call->args) {
        auto* v = AsPtr<VarNode>(arg);
        if (v && by_data_.count(v)) {
          Fail(call->span, "the tensor-core fragment '" + v->name +
                               "' would need versions, which this pass does not support");
        }
      }
      return e;
    } else {
      return e;
    }
    std::vector<Expr> args = call->args;
    bool changed = false;
    for (size_t i : pointers) {
      if (i + 1 >= args.size()) continue;
      auto* v = AsPtr<VarNode>(args[i]);
      auto it = v ? by_data_.find(v) : by_data_.end();
      if (it == by_data_.end()) continue;
      const BufferNode* old = it->second.first;
      const Buffer& nb = it->second.second;
      Expr size;
      if (nb->strides.empty()) {
        size = Int32(1);
        for (const Expr& d : old->shape) size = Mul(size, d);
      } else {
        size = nb->strides[0];
      }
      const std::string& scope = old->scope();
      if (scope == "m16n8k8.matrixA" || scope == "m16n8k8.matrixB") {
        // These fragments hold a warp's share: the version size shrinks by the warp size.
        auto c = AsConstInt(size);
        if (!c || *c % 32 != 0) {
          Fail(call->span,
               "the version size of '" + old->name + "' must be a multiple of the warp size (32)");
        }
        size = IntConst(size->dtype, *c / 32);
      }
      // TVM indexes these versions by the loop variable itself (not minus the loop's start).
      Expr version = FloorModE(loop_->loop_var, nb->shape[0]);
      args[i + 1] = Add(args[i + 1], Mul(version, size));
      changed = true;
    }
    if (!changed) return e;
    return CallNode::Make(call->dtype, call->op, args, call->span);
  }

 private:
  Expr Version(const Buffer& nb) const {
    return FloorModE(Sub(loop_->loop_var, loop_->min), nb->shape[0]);
  }
  const std::unordered_map<const BufferNode*, Buffer>& remap_;
  std::unordered_map<const VarNode*, std::pair<const BufferNode*, Buffer>> by_data_;
  const ForNode* loop_;
  bool all_versions_;
};

/*! \brief Builds the pipelined form of one annotated loop. */
class PipelineBuilder {
 public:
  PipelineBuilder(BufferVarMap buffers, const std::unordered_set<const BufferNode*>& double_buffers,
                  std::vector<Buffer> allocs, const ForNode* loop, std::vector<Block> blocks,
                  std::vector<StmtInfo> infos, AttrMap kept)
      : buffers_(std::move(buffers)),
        double_buffers_(double_buffers),
        allocs_(std::move(allocs)),
        loop_(loop),
        blocks_(std::move(blocks)),
        infos_(std::move(infos)),
        kept_(std::move(kept)) {}

  Stmt Build() {
    const size_t n = blocks_.size();
    for (const StmtInfo& info : infos_) max_stage_ = std::max(max_stage_, info.stage);
    // Versions of the pipeline's buffers.
    for (const Buffer& b : allocs_) {
      int64_t versions = Versions(b);
      if (versions > 1) remap_[b.get()] = WithVersions(b, versions);
    }
    by_order_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) by_order_[infos_[i].order] = i;

    const Expr& min = loop_->min;
    const Expr& extent = loop_->extent;
    Stmt prologue = EmitStmt(min, Add(min, Int32(max_stage_)), true, nullptr);
    Expr steady_start = Add(min, Int32(max_stage_));
    Stmt body_loop = EmitStmt(steady_start, Add(min, extent), false, nullptr);
    Expr epilogue_start = Add(min, extent);
    Expr extra_lower_bound;
    if (max_stage_ > 1 && !ana_.CanProveGreaterEqual(extent, max_stage_)) {
      auto end = AsConstInt(epilogue_start);
      auto first = AsConstInt(steady_start);
      if (end && first) {
        epilogue_start = IntConst(epilogue_start->dtype, std::max(*end, *first));
      } else {
        extra_lower_bound = steady_start;
      }
    }
    Stmt epilogue =
        EmitStmt(epilogue_start, Add(Add(min, extent), Int32(max_stage_)), true, extra_lower_bound);
    Stmt seq = SeqStmtNode::Make({prologue, body_loop, epilogue});

    std::vector<Buffer> allocs;
    for (const Buffer& b : allocs_) {
      auto it = remap_.find(b.get());
      allocs.push_back(it == remap_.end() ? b : it->second);
      buffers_.erase(b->data.get());
    }
    Block block = MakeBlock(seq, buffers_);
    block = BlockNode::Make(block->iter_vars, block->reads, block->writes, block->name_hint,
                            block->body, block->init, allocs, block->match_buffers,
                            block->annotations, block->span);
    return BlockRealizeNode::Make({}, Bool(true), block);
  }

 private:
  // Where the first write / last read of each buffer happens, by stage.
  int64_t Versions(const Buffer& buffer) {
    int64_t def = -1, use = -1;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const int64_t stage = infos_[i].stage;
      for (const BufferRegion& w : blocks_[i]->writes) {
        if (w->buffer.get() == buffer.get()) def = def == -1 ? stage : std::min(def, stage);
      }
      for (const BufferRegion& r : blocks_[i]->reads) {
        if (r->buffer.get() == buffer.get()) use = std::max(use, stage);
      }
    }
    if (def == -1) return 1;  // not written in the pipeline: one version suffices
    int64_t versions = use - def + 1;
    if (versions == 2 && !NeedsTwo(buffer)) versions = 1;
    if (versions == 1 && double_buffers_.count(buffer.get())) versions = 2;
    return versions;
  }
  // Two versions are needed only when an earlier-ordered writer of an earlier stage may touch
  // what a later reader reads (first region of each).
  bool NeedsTwo(const Buffer& buffer) {
    auto first = [&](const std::vector<BufferRegion>& rs) -> const BufferRegionNode* {
      for (const BufferRegion& r : rs) {
        if (r->buffer.get() == buffer.get()) return r.get();
      }
      return nullptr;
    };
    for (size_t w = 0; w < blocks_.size(); ++w) {
      const BufferRegionNode* wr = first(blocks_[w]->writes);
      if (wr == nullptr) continue;
      for (size_t r = 0; r < blocks_.size(); ++r) {
        const BufferRegionNode* rr = first(blocks_[r]->reads);
        if (rr == nullptr) continue;
        if (infos_[w].order < infos_[r].order && infos_[w].stage < infos_[r].stage &&
            MayOverlap(wr->region, rr->region)) {
          return true;
        }
      }
    }
    return false;
  }
  bool MayOverlap(const std::vector<Range>& a, const std::vector<Range>& b) {
    if (a.size() != b.size()) return true;
    for (size_t d = 0; d < a.size(); ++d) {
      // Disjoint when one ends before the other starts.
      Expr a_end = Add(a[d]->min, a[d]->extent), b_end = Add(b[d]->min, b[d]->extent);
      if (ana_.CanProve(Cmp(true, a_end, b[d]->min)) ||
          ana_.CanProve(Cmp(true, b_end, a[d]->min))) {
        return false;
      }
    }
    return true;
  }
  static Buffer WithVersions(const Buffer& b, int64_t versions) {
    std::vector<Expr> shape = {Int32(versions)};
    shape.insert(shape.end(), b->shape.begin(), b->shape.end());
    std::vector<Expr> strides;
    if (!b->strides.empty()) {
      strides = {Mul(b->strides[0], b->shape[0])};
      strides.insert(strides.end(), b->strides.begin(), b->strides.end());
    }
    Buffer nb = BufferNode::Make(b->data, b->dtype, shape, strides, b->elem_offset, b->name,
                                 b->data_alignment, b->offset_factor, b->span);
    const_cast<BufferNode*>(nb.get())->axis_separators = b->axis_separators;
    return nb;
  }

  // State of an asynchronous stage across the prologue, the steady state and the epilogue.
  struct StageState {
    std::unordered_set<const BufferNode*> dst;  // buffers it writes asynchronously
    // The count of its groups committed so far minus one, while that can be counted exactly.
    std::optional<Expr> head = Expr(Int32(-1));
    bool Writes(const BufferNode* b) const { return dst.count(b) != 0; }
  };
  // State of an asynchronous stage within one emitted range.
  struct LocalState {
    int insert_before = -1;  // the statement the wait goes before (-1: no wait)
    Expr wait_count;
    std::unordered_set<const BufferNode*> seen;  // written by the statements met so far
    std::optional<Expr> head;                    // the iteration the latest write serves
    std::optional<Expr> predicate;               // the guard of its statements
    std::vector<std::vector<size_t>> groups;     // statement indices of each commit group
    bool consumed = false;                       // a reader has been met since the last group
  };
  struct Emitted {
    int64_t stage;
    Expr predicate;
    Block block;
    Expr index;  // the iteration the statement serves, counted from the loop's start
    bool async;
  };

  // TVM's Analyzer::Simplify: the rewrite rules, then the canonical form.
  static Expr Simplify(arith::Analyzer& ana, const Expr& e) {
    Expr r = ana.RewriteSimplify(e);
    return AsConstInt(r) ? r : ana.Simplify(r);
  }

  Stmt NoOp() {
    return BlockRealizeNode::Make({}, Bool(true), MakeBlock(EvaluateNode::Make(Int32(0)), {}));
  }
  Stmt EmitStmt(const Expr& start, const Expr& end, bool unroll, const Expr& extra) {
    const Var& lv = loop_->loop_var;
    Expr extent = Sub(end, start);
    if (auto c = AsConstInt(end), s = AsConstInt(start); c && s) {
      extent = IntConst(extent->dtype, *c - *s);
    }
    if (ana_.CanProve(Cmp(true, extent, Int32(0)))) return NoOp();
    const bool unit = ana_.CanProveEqual(extent, Int32(1));
    Expr step;
    Var var;
    arith::Analyzer normalized;  // the loop variable over [min, extent)
    if (unit) {
      step = start;
    } else {
      var = VarNode::Make(lv->name, lv->dtype, lv->span);
      step = var;
      ana_.Bind(var, RangeNode::Make(start, Sub(end, start)));
      normalized.Bind(var, RangeNode::Make(loop_->min, Sub(extent, loop_->min)));
    }

    std::vector<Emitted> out;
    std::map<int64_t, LocalState> local;
    std::unordered_map<const BufferNode*, size_t> group_of;
    for (size_t pos = 0; pos < blocks_.size(); ++pos) {
      const size_t i = by_order_[pos];
      const StmtInfo& info = infos_[i];
      Expr skewed = Sub(step, IntConst(step->dtype, info.stage));
      if (auto c = AsConstInt(step)) skewed = IntConst(step->dtype, *c - info.stage);
      Expr inbound = And(Simplify(ana_, Cmp(true, loop_->min, skewed)),
                         Cmp(false, skewed, Add(loop_->min, loop_->extent)));
      if (extra) inbound = Simplify(ana_, And(inbound, Cmp(true, extra, step)));
      if (ana_.CanProve(NotNode::Make(inbound))) continue;
      Stmt rewritten = VersionRewriter(remap_, loop_, max_stage_ != 1).VisitStmt(blocks_[i]);
      Expr delta = Sub(start, loop_->min);
      Expr index = unit ? skewed : Add(skewed, delta);
      if (!unit) {
        VarMap shift;
        shift[var.get()] = Add(var, delta);
        inbound = Substitute(inbound, shift);
      }
      VarMap sub;
      sub[lv.get()] = index;
      Block block = As<BlockNode>(Substitute(rewritten, sub));

      if (info.async) {
        LocalState& state = local[info.stage];
        size_t group;
        if (state.groups.empty() || state.consumed) {
          group = state.groups.size();
          state.groups.push_back({out.size()});
        } else {
          group = state.groups.size() - 1;
          state.groups.back().push_back(out.size());
        }
        for (const BufferRegion& w : block->writes) {
          stages_[info.stage].dst.insert(w->buffer.get());
          group_of[w->buffer.get()] = group;
        }
        state.head = index;
        if (!state.predicate || normalized.CanProve(*state.predicate)) {
          state.predicate = inbound;
        } else {
          state.predicate = Simplify(normalized, And(*state.predicate, inbound));
        }
        Stmt body = AttrStmtNode::Make(Int32(0), "async_scope", Int32(1), block->body);
        block = WithBody(block, body);
      }
      out.push_back({info.stage, inbound, block, index, info.async});
      for (const BufferRegion& r : block->reads) {
        for (const auto& [producer, st] : stages_) {
          if (producer <= info.stage && st.Writes(r->buffer.get())) local[producer].consumed = true;
        }
      }
    }

    PlaceWaits(out, normalized, group_of, local);
    std::vector<Stmt> stmts = Finish(out, local, normalized);
    if (stmts.empty()) return NoOp();
    Stmt result = stmts.size() == 1 ? stmts[0] : SeqStmtNode::Make(stmts);
    if (!unit) {
      result = ForNode::Make(var, loop_->min, extent, unroll ? ForKind::kUnrolled : loop_->for_kind,
                             result, nullptr, kept_, loop_->span);
    }
    for (const auto& [stage, state] : local) {
      StageState& global = stages_[stage];
      if (state.predicate && normalized.CanProve(*state.predicate) && global.head) {
        global.head = Add(*global.head, extent);
      } else {
        global.head.reset();
      }
    }
    return BlockRealizeNode::Make({}, Bool(true), MakeBlock(result, buffers_));
  }

  static Block WithBody(const Block& b, const Stmt& body) {
    return BlockNode::Make(b->iter_vars, b->reads, b->writes, b->name_hint, body, b->init,
                           b->alloc_buffers, b->match_buffers, b->annotations, b->span);
  }

  // Where each asynchronous stage's readers wait, and for how many groups in flight.
  void PlaceWaits(const std::vector<Emitted>& out, arith::Analyzer& normalized,
                  const std::unordered_map<const BufferNode*, size_t>& group_of,
                  std::map<int64_t, LocalState>& local) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].async) {
        for (const BufferRegion& w : out[i].block->writes) {
          local[out[i].stage].seen.insert(w->buffer.get());
        }
      }
      int64_t producer = -1;
      for (const BufferRegion& r : out[i].block->reads) {
        for (const auto& [stage, st] : stages_) {
          if (stage <= out[i].stage && st.Writes(r->buffer.get())) {
            if (producer != -1 && producer != stage) {
              Fail(loop_->span, "a statement reads buffers written asynchronously by two stages (" +
                                    std::to_string(producer) + " and " + std::to_string(stage) +
                                    "), which is not supported");
            }
            producer = stage;
          }
        }
      }
      if (producer == -1) continue;
      LocalState& dep = local[producer];
      std::vector<std::optional<Expr>> heads;
      if (dep.groups.empty()) {
        // No producer in this range (the epilogue): the count carried over from before.
        heads.push_back(stages_[producer].head);
      } else {
        std::vector<bool> pending(dep.groups.size(), true);
        for (const BufferRegion& r : out[i].block->reads) {
          if (!stages_[producer].Writes(r->buffer.get())) continue;
          size_t g = group_of.at(r->buffer.get());
          if (!pending[g]) continue;
          // A buffer not yet written in this step was last written one step before.
          heads.push_back(dep.seen.count(r->buffer.get()) ? *dep.head : Sub(*dep.head, Int32(1)));
          pending[g] = false;
        }
      }
      Expr count = Int32(0);
      for (const auto& head : heads) {
        if (!head || !normalized.CanProve(Cmp(true, Int32(0), *head))) {
          count = Int32(0);
          break;
        }
        count = Add(count, Simplify(ana_, Sub(*head, out[i].index)));
      }
      if (dep.insert_before == -1) {
        dep.insert_before = static_cast<int>(i);
        dep.wait_count = count;
      } else if (ana_.CanProve(Cmp(false, count, dep.wait_count))) {
        dep.wait_count = count;
      }
    }
  }

  std::vector<Stmt> Finish(std::vector<Emitted> out, const std::map<int64_t, LocalState>& local,
                           arith::Analyzer& normalized) {
    std::vector<int64_t> group_stage(out.size(), -1);
    for (const auto& [stage, state] : local) {
      for (const auto& group : state.groups) {
        for (size_t j = 0; j < group.size(); ++j) {
          if (group[0] + j < out.size()) group_stage[group[0] + j] = stage;
        }
      }
      if (state.insert_before == -1) continue;
      Expr count = state.wait_count;
      if (state.predicate && !normalized.CanProve(*state.predicate)) {
        // The count holds only where the awaited statements ran.
        count = CallNode::Make(DataType::Int(32), OpNode::Get("tir.if_then_else"),
                               {*state.predicate, CastTo(DataType::Int(32), count), Int32(0)});
      }
      Block& b = out[state.insert_before].block;
      Stmt body = AttrStmtNode::Make(
          Int32(0), "async_wait_queue_scope", Int32(stage),
          AttrStmtNode::Make(Int32(0), "async_wait_inflight_count", count, b->body));
      b = WithBody(b, body);
    }
    std::vector<Stmt> stmts;
    for (size_t i = 0; i < out.size();) {
      if (group_stage[i] == -1) {
        stmts.push_back(BlockRealizeNode::Make({}, out[i].predicate, out[i].block));
        ++i;
        continue;
      }
      const int64_t stage = group_stage[i];
      const Expr predicate = out[i].predicate;
      std::vector<Stmt> bodies;
      for (; i < out.size() && group_stage[i] == stage; ++i) {
        if (!StructuralEqual(predicate, out[i].predicate)) {
          Fail(loop_->span, "the statements of one commit group of stage " + std::to_string(stage) +
                                " run under different conditions");
        }
        bodies.push_back(out[i].block->body);
      }
      Stmt body = bodies.size() == 1 ? bodies[0] : SeqStmtNode::Make(bodies);
      Stmt commit = AttrStmtNode::Make(Int32(0), "async_commit_queue_scope", Int32(stage), body);
      stmts.push_back(BlockRealizeNode::Make({}, predicate, MakeBlock(commit, buffers_)));
    }
    return stmts;
  }

  arith::Analyzer ana_;
  BufferVarMap buffers_;
  const std::unordered_set<const BufferNode*>& double_buffers_;
  std::vector<Buffer> allocs_;
  const ForNode* loop_;
  std::vector<Block> blocks_;  // in program order
  std::vector<StmtInfo> infos_;
  AttrMap kept_;
  int64_t max_stage_ = -1;
  std::unordered_map<const BufferNode*, Buffer> remap_;
  std::vector<size_t> by_order_;
  std::map<int64_t, StageState> stages_;
};

std::vector<int64_t> IntList(const ForNode* loop, const char* key) {
  std::vector<int64_t> out;
  auto it = loop->annotations.find(key);
  auto* arr = AsPtr<ArrayNode>(it->second);
  if (arr == nullptr) Fail(loop->span, std::string(key) + " must be a list of integers");
  for (const ObjectRef& item : arr->items) {
    auto v = AsConstInt(std::dynamic_pointer_cast<ExprNode>(item));
    if (!v) Fail(loop->span, std::string(key) + " must be a list of integers");
    out.push_back(*v);
  }
  return out;
}

class PipelineInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  explicit PipelineInjector(const PrimFunc& f) {
    for (const auto& [param, buffer] : f->buffer_map) buffers_[buffer->data.get()] = buffer;
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    for (const Buffer& b : op->alloc_buffers) buffers_[b->data.get()] = b;
    auto it = op->annotations.find(kDoubleBuffer);
    if (it != op->annotations.end()) {
      auto index = AsConstInt(std::dynamic_pointer_cast<ExprNode>(it->second));
      if (!index || *index < 0 || static_cast<size_t>(*index) >= op->writes.size()) {
        Fail(op->span, std::string(kDoubleBuffer) + " of block '" + op->name_hint +
                           "' must index one of its " + std::to_string(op->writes.size()) +
                           " written buffers");
      }
      double_buffers_.insert(op->writes[*index]->buffer.get());
    }
    Stmt s = StmtExprMutator::VisitStmt_(op);
    for (const Buffer& b : op->alloc_buffers) buffers_.erase(b->data.get());
    return s;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    const bool has_stage = op->annotations.count(kStage) != 0;
    const bool has_order = op->annotations.count(kOrder) != 0;
    if (!has_stage && !has_order) return s;
    const std::string loop = "the pipelined loop over " + op->loop_var->name;
    if (!has_order) Fail(op->span, loop + " has " + kStage + " but no " + kOrder);
    if (!has_stage) Fail(op->span, loop + " has " + kOrder + " but no " + kStage);
    auto* visited = AsPtr<ForNode>(s);

    // The pipeline's statements and allocations.
    std::vector<Buffer> allocs;
    Stmt body = visited->body;
    std::vector<const VarNode*> scoped;
    auto declare = [&](const Buffer& b) {
      allocs.push_back(b);
      buffers_[b->data.get()] = b;
      scoped.push_back(b->data.get());
    };
    if (auto* realize = AsPtr<BlockRealizeNode>(body)) {
      for (const Buffer& b : realize->block->alloc_buffers) declare(b);
      body = realize->block->body;
    }
    auto* seq = AsPtr<SeqStmtNode>(body);
    if (seq == nullptr) {
      Fail(op->span, loop + " must have a sequence of statements as its body, not a " +
                         NodeKindName(body->kind));
    }
    std::vector<Stmt> children;
    for (const Stmt& child : seq->seq) {
      auto* nested = AsPtr<BlockRealizeNode>(child);
      if (nested && IsConstInt(nested->predicate, 1) && AsPtr<SeqStmtNode>(nested->block->body)) {
        if (!nested->block->match_buffers.empty()) {
          Fail(nested->block->span,
               "block '" + nested->block->name_hint + "' in " + loop +
                   " still has match_buffers (run tir.LowerMatchBuffer first)");
        }
        for (const Buffer& b : nested->block->alloc_buffers) declare(b);
        for (const Stmt& c : AsPtr<SeqStmtNode>(nested->block->body)->seq) children.push_back(c);
      } else {
        children.push_back(child);
      }
    }
    std::vector<Block> blocks;
    for (const Stmt& c : children) {
      Block b = MakeBlock(c, buffers_);
      if (!b->iter_vars.empty()) {
        Fail(b->span, "block '" + b->name_hint + "' in " + loop +
                          " has iterators (the pipelined statements must be opaque blocks)");
      }
      blocks.push_back(b);
    }

    std::vector<int64_t> stages = IntList(op, kStage);
    std::vector<int64_t> orders = IntList(op, kOrder);
    for (const auto* list : {&stages, &orders}) {
      if (list->size() != blocks.size()) {
        Fail(op->span, loop + " has " + std::to_string(blocks.size()) + " statements but " +
                           (list == &stages ? kStage : kOrder) + " has " +
                           std::to_string(list->size()) + " entries");
      }
    }
    std::set<int64_t> async_stages;
    if (op->annotations.count(kAsync)) {
      for (int64_t s : IntList(op, kAsync)) async_stages.insert(s);
    }
    AttrMap kept = op->annotations;
    kept.erase(kStage);
    kept.erase(kOrder);
    kept.erase(kAsync);
    std::vector<StmtInfo> infos;
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (stages[i] < 0) Fail(op->span, loop + ": a stage cannot be negative");
      infos.push_back({stages[i], orders[i], async_stages.count(stages[i]) != 0});
    }
    Validate(op, blocks, infos);

    Stmt out = PipelineBuilder(buffers_, double_buffers_, allocs, op, blocks, infos, kept).Build();
    for (const VarNode* v : scoped) buffers_.erase(v);
    return out;
  }

 private:
  // Orders are a permutation; a statement that reads what an earlier one (in program order)
  // writes runs in a later stage, or in the same stage later in the order.
  void Validate(const ForNode* op, const std::vector<Block>& blocks,
                const std::vector<StmtInfo>& infos) {
    const std::string loop = "the pipelined loop over " + op->loop_var->name;
    std::set<int64_t> orders;
    for (const StmtInfo& info : infos) {
      if (info.order < 0 || info.order >= static_cast<int64_t>(infos.size())) {
        Fail(op->span, loop + ": order " + std::to_string(info.order) + " is not in 0.." +
                           std::to_string(infos.size() - 1));
      }
      if (!orders.insert(info.order).second) {
        Fail(op->span, loop + ": two statements have the order " + std::to_string(info.order));
      }
    }
    std::unordered_map<const VarNode*, std::vector<size_t>> writers;
    for (size_t i = 0; i < blocks.size(); ++i) {
      for (const BufferRegion& r : blocks[i]->reads) {
        auto it = writers.find(r->buffer->data.get());
        if (it == writers.end()) continue;
        for (size_t w : it->second) {
          const std::string what = "statement " + std::to_string(i) + " reads '" + r->buffer->name +
                                   "', which statement " + std::to_string(w) + " writes";
          if (infos[w].stage > infos[i].stage) {
            Fail(op->span, loop + ": " + what + " in a later stage (" +
                               std::to_string(infos[w].stage) + " > " +
                               std::to_string(infos[i].stage) + ")");
          }
          if (infos[w].stage == infos[i].stage && infos[w].order >= infos[i].order) {
            Fail(op->span, loop + ": " + what + " in the same stage, but its order " +
                               std::to_string(infos[i].order) + " puts it first");
          }
        }
      }
      for (const BufferRegion& w : blocks[i]->writes) writers[w->buffer->data.get()].push_back(i);
    }
  }

  BufferVarMap buffers_;
  std::unordered_set<const BufferNode*> double_buffers_;
};

class FindPipelinedLoop : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  bool found = false;
  void VisitStmt_(const ForNode* op) override {
    found = found || op->annotations.count(kStage) || op->annotations.count(kOrder);
    if (!found) StmtVisitor::VisitStmt_(op);
  }
};

PrimFunc InjectSoftwarePipelineFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  FindPipelinedLoop finder;
  finder.VisitStmt(f->body);
  if (!finder.found) return f;
  Stmt body = PipelineInjector(f).VisitStmt(f->body);
  if (body == f->body) return f;
  // The prologue, steady state and epilogue repeat the statements' definitions.
  IRModule one = IRModuleNode::FromFunc(f->WithBody(body), "f");
  return ConvertSSA()->fn(one, ctx)->Lookup("f");
}

}  // namespace

Pass InjectSoftwarePipeline() {
  return CreatePrimFuncPass(InjectSoftwarePipelineFunc, 0, "tir.InjectSoftwarePipeline");
}
TESSERA_REGISTER_PASS("tir.InjectSoftwarePipeline", InjectSoftwarePipeline);

}  // namespace transform
}  // namespace tessera
