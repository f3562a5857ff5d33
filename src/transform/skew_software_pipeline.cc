// tir.SkewSoftwarePipeline, tessera's software pipeline (the CUDA pipeline's; TVM's rules are
// tir.InjectSoftwarePipeline's, inject_software_pipeline.cc): a loop annotated with `software_pipeline_stage` (one stage per
// statement of its body), optionally `software_pipeline_order` (the statements' order within a
// pipelined step) and `software_pipeline_async_stages` (stages whose statements become
// asynchronous copies), runs its statements skewed: at step i the statement of stage s
// executes iteration i - s. The loop becomes a prologue (the first max_stage steps, unrolled),
// a steady-state loop and an epilogue (the last max_stage steps, unrolled). A buffer allocated
// in the loop body that one statement writes and a statement of a later stage reads gets a
// leading dimension of versions (its stage distance + 1), indexed by the iteration modulo the
// versions, so that the writer of iteration i + d does not overwrite what the reader of
// iteration i still reads.
//
// Asynchronous stages: their statements run under `async_scope` (tir.InjectPTXAsyncCopy turns
// the global -> shared copies there into cp.async), each step commits their copies as one
// group (ptx_commit_group), and a reader of what they wrote first waits until at most as many
// groups are in flight as were committed after the one it needs (ptx_wait_group), then meets
// the block's other threads at a barrier. A barrier also precedes the asynchronous writes of a
// step that has none before them, so that no thread overwrites a version another still reads.
// The versioned buffers of an asynchronous pipeline are synchronized here (tessera.manual_sync
// tells tir.ThreadSync to leave them alone); everything else is tir.ThreadSync's.
//
// Runs in "normalize" after tir.LowerMatchBuffer (blocks are opaque, buffers compact), before
// tir.LowerOpaqueBlock. What it cannot pipeline it refuses with a ValueError naming the loop.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr char kStage[] = "software_pipeline_stage";
constexpr char kOrder[] = "software_pipeline_order";
constexpr char kAsync[] = "software_pipeline_async_stages";

[[noreturn]] void Refuse(const ForNode* loop, const std::string& why) {
  TESSERA_THROW_KIND(loop->span, ErrorKind::kValue)
      << "tir.SkewSoftwarePipeline: cannot pipeline the loop over " << loop->loop_var->name
      << ": " << why;
  std::abort();  // not reached: the line above throws
}

std::vector<int64_t> IntList(const ForNode* loop, const char* key, bool* present) {
  auto it = loop->annotations.find(key);
  *present = it != loop->annotations.end();
  std::vector<int64_t> out;
  if (!*present) return out;
  auto* arr = AsPtr<ArrayNode>(it->second);
  if (arr == nullptr) Refuse(loop, std::string(key) + " must be a list of integers");
  for (const ObjectRef& item : arr->items) {
    auto v = AsConstInt(std::dynamic_pointer_cast<ExprNode>(item));
    if (!v || *v < 0) Refuse(loop, std::string(key) + " must be a list of non-negative integers");
    out.push_back(*v);
  }
  return out;
}

/*! \brief a - c, or a itself when c is 0 (the golden output stays readable). */
Expr Minus(const Expr& a, const Expr& c) { return IsConstInt(c, 0) ? a : SubE(a, c); }

// The calls with the types TVMScript gives them (T.ptx_commit_group() is void,
// T.tvm_storage_sync("shared") an int32, as TVM's), so that printed output parses back equal.
Expr Call(const char* op, std::vector<Expr> args) {
  return CallNode::Make(DataType::Void(), OpNode::Get(op), std::move(args));
}
Stmt Eval(Expr e) { return EvaluateNode::Make(std::move(e)); }
Stmt Barrier() {
  return Eval(CallNode::Make(DataType::Int(32), OpNode::Get("tir.tvm_storage_sync"),
                             {StringImmNode::Make("shared")}));
}

/*! \brief The buffers (data variables) a statement reads and writes. Loads and stores are
 *  what they say; tvm_access_ptr follows its mask; any other use of a data pointer (a
 *  tensor-core call naming a fragment) counts as both. */
struct Access {
  std::set<const VarNode*> reads, writes;
};
Access Collect(const Stmt& s) {
  Access a;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) {
      a.reads.insert(load->buffer->data.get());
    } else if (auto* store = AsPtr<BufferStoreNode>(n)) {
      a.writes.insert(store->buffer->data.get());
    } else if (auto* call = AsPtr<CallNode>(n);
               call && call->is_op("tir.tvm_access_ptr") && call->args.size() == 5) {
      if (auto* data = AsPtr<VarNode>(call->args[1])) {
        auto mask = AsConstInt(call->args[4]);
        if (!mask || (*mask & 1)) a.reads.insert(data);
        if (!mask || (*mask & 2)) a.writes.insert(data);
      }
    }
  });
  // Pointer variables used other than through loads, stores and tvm_access_ptr.
  PostOrderVisit(s, [&](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    if (call == nullptr || call->is_op("tir.tvm_access_ptr")) return;
    for (const Expr& arg : call->args) {
      auto* v = AsPtr<VarNode>(arg);
      if (v && v->pointer) {
        a.reads.insert(v);
        a.writes.insert(v);
      }
    }
  });
  return a;
}

/*! \brief Rewrites the accesses to versioned buffers: a leading index `version`. */
class VersionRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  struct Versioned {
    Buffer buffer;      // the new buffer, [versions] + shape
    Expr version_size;  // elements between two versions
  };
  VersionRewriter(const std::map<const BufferNode*, Versioned>& map,
                  const std::map<const VarNode*, const BufferNode*>& by_data, Expr version_of_iter)
      : map_(map), by_data_(by_data), version_(std::move(version_of_iter)) {}

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = map_.find(load->buffer.get());
    if (it == map_.end()) return e;
    std::vector<Expr> idx = {Version(it->second)};
    idx.insert(idx.end(), load->indices.begin(), load->indices.end());
    return BufferLoadNode::Make(it->second.buffer, idx, load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = map_.find(store->buffer.get());
    if (it == map_.end()) return s;
    std::vector<Expr> idx = {Version(it->second)};
    idx.insert(idx.end(), store->indices.begin(), store->indices.end());
    return BufferStoreNode::Make(it->second.buffer, store->value, idx, store->predicate,
                                 store->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    if (!call->is_op("tir.tvm_access_ptr") || call->args.size() != 5) return e;
    auto* data = AsPtr<VarNode>(call->args[1]);
    auto b = data ? by_data_.find(data) : by_data_.end();
    if (b == by_data_.end()) return e;
    const Versioned& v = map_.at(b->second);
    std::vector<Expr> args = call->args;
    args[2] = AddE(args[2], MulE(CastTo(args[2]->dtype, Version(v)), v.version_size));
    return CallNode::Make(call->dtype, call->op, args, call->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    auto regions = [&](const std::vector<BufferRegion>& rs, bool* changed) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : rs) {
        auto it = map_.find(r->buffer.get());
        if (it == map_.end()) {
          out.push_back(r);
          continue;
        }
        *changed = true;
        std::vector<Range> region = {RangeNode::Make(Version(it->second), Int32(1))};
        region.insert(region.end(), r->region.begin(), r->region.end());
        out.push_back(BufferRegionNode::Make(it->second.buffer, region, r->span));
      }
      return out;
    };
    bool changed = false;
    auto reads = regions(b->reads, &changed);
    auto writes = regions(b->writes, &changed);
    if (!changed) return s;
    // storage_align's [write index, axis, factor, offset] of a versioned buffer: one axis on.
    AttrMap ann = b->annotations;
    auto al = ann.find("buffer_dim_align");
    if (al != ann.end()) {
      if (auto* outer = AsPtr<ArrayNode>(al->second)) {
        std::vector<ObjectRef> items;
        for (const ObjectRef& item : outer->items) {
          auto* quad = AsPtr<ArrayNode>(item);
          auto index = quad && quad->items.size() == 4
                           ? AsConstInt(std::dynamic_pointer_cast<ExprNode>(quad->items[0]))
                           : std::nullopt;
          auto axis = quad && quad->items.size() == 4
                          ? AsConstInt(std::dynamic_pointer_cast<ExprNode>(quad->items[1]))
                          : std::nullopt;
          if (index && axis && *index >= 0 && size_t(*index) < b->writes.size() &&
              map_.count(b->writes[*index]->buffer.get())) {
            std::vector<ObjectRef> q = quad->items;
            q[1] = Int32(*axis + 1);
            items.push_back(ArrayNode::Make(q));
          } else {
            items.push_back(item);
          }
        }
        ann[al->first] = ArrayNode::Make(items);
      }
    }
    return BlockNode::Make(b->iter_vars, reads, writes, b->name_hint, b->body, b->init,
                           b->alloc_buffers, b->match_buffers, ann, b->span);
  }

 private:
  Expr Version(const Versioned& v) {
    return FloorModE(version_, v.buffer->shape[0]);
  }
  const std::map<const BufferNode*, Versioned>& map_;
  const std::map<const VarNode*, const BufferNode*>& by_data_;
  Expr version_;
};

/*! \brief A copy of a statement whose own definitions (serial loop variables, let variables,
 *  block iterators and allocations) are new, so that the prologue, the steady state and the
 *  epilogue each define their own. Thread-bound loops keep their (unified) variables. */
class FreshDefs : public BufferRemapMutator<> {
 public:
  using BufferRemapMutator<>::VisitExpr_;
  using BufferRemapMutator<>::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef(op) : it->second;
  }
  Stmt VisitStmt_(const ForNode* op) override {
    Var v = op->loop_var;
    if (op->for_kind != ForKind::kThreadBinding) v = Renew(v);
    return ForNode::Make(v, VisitExpr(op->min), VisitExpr(op->extent), op->for_kind,
                         VisitStmt(op->body), op->thread_binding, op->annotations, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<IterVar> iters;
    for (const IterVar& iv : op->iter_vars) {
      Range dom = iv->dom ? RangeNode::Make(VisitExpr(iv->dom->min), VisitExpr(iv->dom->extent))
                          : nullptr;
      iters.push_back(IterVarNode::Make(dom, Renew(iv->var), iv->iter_type, iv->thread_tag,
                                        iv->span));
    }
    std::vector<Buffer> allocs;
    for (const Buffer& b : op->alloc_buffers) {
      Renew(b->data);
      allocs.push_back(Buf(b));
    }
    auto regions = [&](const std::vector<BufferRegion>& rs) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : rs) {
        std::vector<Range> region;
        for (const Range& rg : r->region) {
          region.push_back(RangeNode::Make(VisitExpr(rg->min), VisitExpr(rg->extent), rg->span));
        }
        out.push_back(BufferRegionNode::Make(Buf(r->buffer), region, r->span));
      }
      return out;
    };
    std::vector<MatchBufferRegion> matches;
    for (const MatchBufferRegion& m : op->match_buffers) {
      BufferRegion src = regions({m->source})[0];
      matches.push_back(MatchBufferRegionNode::Make(m->buffer, src, m->span));
    }
    Stmt init = op->init ? VisitStmt(op->init) : nullptr;
    return BlockNode::Make(iters, regions(op->reads), regions(op->writes), op->name_hint,
                           VisitStmt(op->body), init, allocs, matches, op->annotations, op->span);
  }

 private:
  Var Renew(const Var& v) {
    Var n = v->pointer ? VarNode::MakePointer(v->name, v->pointer->element, v->pointer->scope,
                                              v->span)
                       : VarNode::Make(v->name, v->dtype, v->span);
    vars_[v.get()] = n;
    return n;
  }
  Buffer Buf(const Buffer& b) {
    auto it = vars_.find(b->data.get());
    if (it == vars_.end()) return b;
    auto done = buffers_.find(b.get());
    if (done != buffers_.end()) return done->second;
    std::vector<Expr> shape, strides;
    for (const Expr& e : b->shape) shape.push_back(VisitExpr(e));
    for (const Expr& e : b->strides) strides.push_back(VisitExpr(e));
    Buffer n = BufferNode::Make(std::static_pointer_cast<VarNode>(it->second), b->dtype, shape,
                                strides, b->elem_offset ? VisitExpr(b->elem_offset) : nullptr,
                                b->name, b->data_alignment, b->offset_factor, b->span);
    buffers_[b.get()] = n;
    return n;
  }
  // Loads and stores of a renewed allocation read the new buffer (BufferRemapMutator).
  Buffer RemapBuffer(const Buffer& b) override { return Buf(b); }
  std::unordered_map<const VarNode*, Expr> vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

class PipelineInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  explicit PipelineInjector(bool async_ok) : async_ok_(async_ok) {}

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (!loop->annotations.count(kStage)) {
      if (loop->annotations.count(kOrder) || loop->annotations.count(kAsync)) {
        Refuse(loop, std::string(kOrder) + " or " + kAsync + " without " + kStage);
      }
      return s;
    }
    return Pipeline(loop);
  }

 private:
  Stmt Pipeline(const ForNode* loop);
  bool async_ok_;
};

Stmt PipelineInjector::Pipeline(const ForNode* loop) {
  bool has_stage = false, has_order = false, has_async = false;
  std::vector<int64_t> stage = IntList(loop, kStage, &has_stage);
  std::vector<int64_t> order = IntList(loop, kOrder, &has_order);
  std::vector<int64_t> async_list = IntList(loop, kAsync, &has_async);
  const size_t n = stage.size();
  if (n == 0) Refuse(loop, std::string(kStage) + " is empty");
  if (!has_order) {
    for (size_t i = 0; i < n; ++i) order.push_back(static_cast<int64_t>(i));
  }
  if (order.size() != n) {
    Refuse(loop, std::string(kOrder) + " has " + std::to_string(order.size()) +
                     " entries but " + kStage + " has " + std::to_string(n));
  }
  {
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) {
      if (sorted[i] != static_cast<int64_t>(i)) {
        Refuse(loop, std::string(kOrder) + " must be a permutation of 0.." + std::to_string(n - 1));
      }
    }
  }
  if (loop->for_kind != ForKind::kSerial) Refuse(loop, "only a serial loop can be pipelined");
  auto extent = AsConstInt(loop->extent);
  const int64_t max_stage = *std::max_element(stage.begin(), stage.end());
  if (!extent) Refuse(loop, "its extent must be a constant");
  if (*extent <= max_stage) {
    Refuse(loop, "its extent " + std::to_string(*extent) + " must exceed the largest stage " +
                     std::to_string(max_stage));
  }
  std::set<int64_t> async_stages(async_list.begin(), async_list.end());

  // The statements: the body's sequence, possibly inside an opaque block that allocates the
  // buffers they pass on.
  Stmt body = loop->body;
  const BlockNode* holder = nullptr;
  if (auto* br = AsPtr<BlockRealizeNode>(body)) {
    const BlockNode* b = br->block.get();
    if (!b->iter_vars.empty() || !IsConstInt(br->predicate, 1) || b->init ||
        !b->match_buffers.empty()) {
      Refuse(loop, "its body is a block with iterators, a predicate or an init (only an opaque "
                   "block that allocates buffers can wrap the pipelined statements)");
    }
    holder = b;
    body = b->body;
  }
  std::vector<Stmt> stmts;
  if (auto* seq = AsPtr<SeqStmtNode>(body)) {
    stmts = seq->seq;
  } else {
    stmts = {body};
  }
  if (stmts.size() != n) {
    Refuse(loop, "its body has " + std::to_string(stmts.size()) + " statements but " + kStage +
                     " has " + std::to_string(n) + " entries");
  }
  std::map<const VarNode*, const BufferNode*> local;  // buffers allocated in the body block
  if (holder) {
    for (const Buffer& b : holder->alloc_buffers) local[b->data.get()] = b.get();
  }

  // Legality, buffer by buffer.
  std::vector<Access> acc;
  for (const Stmt& s : stmts) acc.push_back(Collect(s));
  std::set<const VarNode*> all;
  for (const Access& a : acc) {
    all.insert(a.reads.begin(), a.reads.end());
    all.insert(a.writes.begin(), a.writes.end());
  }
  std::map<const BufferNode*, int64_t> versions;  // buffer -> versions
  std::map<const BufferNode*, int64_t> producer_of;
  auto name = [](const VarNode* v) { return "'" + v->name + "'"; };
  auto before = [&](size_t p, size_t c) {
    return stage[p] < stage[c] || (stage[p] == stage[c] && order[p] < order[c]);
  };
  for (const VarNode* v : all) {
    std::vector<size_t> writers, users;
    for (size_t i = 0; i < n; ++i) {
      if (acc[i].writes.count(v)) writers.push_back(i);
      if (acc[i].writes.count(v) || acc[i].reads.count(v)) users.push_back(i);
    }
    if (writers.empty() || users.size() < 2) continue;
    bool same_stage = true;
    for (size_t u : users) same_stage = same_stage && stage[u] == stage[users[0]];
    if (same_stage) {
      for (size_t i = 0; i + 1 < users.size(); ++i) {
        if (order[users[i]] > order[users[i + 1]]) {
          Refuse(loop, "statements " + std::to_string(users[i]) + " and " +
                           std::to_string(users[i + 1]) + " both access " + name(v) +
                           " and " + kOrder + " swaps them");
        }
      }
      continue;
    }
    const size_t p = writers[0];
    if (writers.size() > 1 || !local.count(v) || users[0] != p) {
      Refuse(loop, "statements of different stages access " + name(v) +
                       ", which is not a buffer allocated in the loop body that one statement "
                       "writes and later statements only read");
    }
    int64_t distance = 0;
    for (size_t c : users) {
      if (c == p) continue;
      if (!before(p, c)) {
        Refuse(loop, "statement " + std::to_string(c) + " reads " + name(v) +
                         " before statement " + std::to_string(p) + " writes it (stage/order)");
      }
      if (async_stages.count(stage[p]) && stage[c] == stage[p]) {
        Refuse(loop, "statement " + std::to_string(c) + " reads " + name(v) +
                         " in the asynchronous stage " + std::to_string(stage[p]) +
                         " that writes it");
      }
      distance = std::max(distance, stage[c] - stage[p]);
    }
    if (distance > 0) {
      versions[local.at(v)] = distance + 1;
      producer_of[local.at(v)] = static_cast<int64_t>(p);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!async_stages.count(stage[i])) continue;
    for (const VarNode* v : acc[i].writes) {
      if (!local.count(v) || !versions.count(local.at(v))) {
        Refuse(loop, "statement " + std::to_string(i) + " of the asynchronous stage " +
                         std::to_string(stage[i]) + " writes " + name(v) +
                         ", which no later stage reads (an asynchronous stage may only "
                         "produce buffers for later stages)");
      }
    }
  }
  for (int64_t s : async_stages) {
    if (std::find(stage.begin(), stage.end(), s) == stage.end()) {
      Refuse(loop, std::string(kAsync) + " names stage " + std::to_string(s) +
                       ", which no statement has");
    }
  }
  // Asynchronous copies are CUDA's; elsewhere the stages run synchronously.
  if (!async_ok_) async_stages.clear();

  // The versioned buffers: [versions] + shape, strides extended.
  std::map<const BufferNode*, VersionRewriter::Versioned> vmap;
  std::map<const VarNode*, const BufferNode*> by_data;
  for (const auto& [buf, count] : versions) {
    DataType it = buf->shape.empty() ? DataType::Int(32) : buf->shape[0]->dtype;
    Expr one = IntConst(it, 1);
    for (size_t d = 0; d < buf->shape.size(); ++d) one = MulE(one, buf->shape[d]);
    Expr size = buf->strides.empty() ? one : MulE(buf->strides[0], buf->shape[0]);
    std::vector<Expr> shape = {IntConst(it, count)};
    shape.insert(shape.end(), buf->shape.begin(), buf->shape.end());
    std::vector<Expr> strides;
    if (!buf->strides.empty()) {
      strides = {size};
      strides.insert(strides.end(), buf->strides.begin(), buf->strides.end());
    }
    Buffer nb = BufferNode::Make(buf->data, buf->dtype, shape, strides, buf->elem_offset,
                                 buf->name, buf->data_alignment, buf->offset_factor, buf->span);
    vmap[buf] = {nb, size};
    by_data[buf->data.get()] = buf;
  }
  // The readers of asynchronously written versions: which statements wait for which.
  std::vector<std::vector<size_t>> waits_on(n);  // statement -> async producers it reads from
  for (const auto& [buf, p] : producer_of) {
    if (!async_stages.count(stage[p])) continue;
    for (size_t c = 0; c < n; ++c) {
      if (c != static_cast<size_t>(p) && acc[c].reads.count(buf->data.get())) {
        waits_on[c].push_back(static_cast<size_t>(p));
      }
    }
  }
  std::vector<size_t> by_order(n);
  for (size_t i = 0; i < n; ++i) by_order[order[i]] = i;

  // Statement i of iteration `iter` (an expression): versions, then the loop variable.
  const Var& lv = loop->loop_var;
  auto instance = [&](size_t i, const Expr& iter) {
    Stmt s = stmts[i];
    if (!vmap.empty()) {
      s = VersionRewriter(vmap, by_data, Minus(iter, loop->min)).VisitStmt(s);
    }
    VarMap sub;
    sub[lv.get()] = iter;
    s = FreshDefs().VisitStmt(Substitute(s, sub));
    if (async_stages.count(stage[i])) {
      s = AttrStmtNode::Make(Int32(0), "async_scope", Int32(1), s);
    }
    return s;
  };
  // One step: statements whose iteration step - stage lies in [0, extent), in pipeline order;
  // commits, waits and barriers as the simulated group queue says.
  std::map<std::pair<int64_t, int64_t>, int64_t> group_of;  // (statement, iteration) -> group
  int64_t groups = 0;
  std::vector<int64_t> wait_log;  // the wait counts of the step being built
  auto step = [&](int64_t k, const Expr& iter_base) {
    wait_log.clear();
    // iter_base: the expression of step k's value of the loop variable (min + k, or the
    // steady-state loop variable).
    std::vector<Stmt> out;
    bool synced = false;
    std::vector<std::pair<int64_t, int64_t>> pending;  // issued, not yet committed
    for (size_t pos = 0; pos < n; ++pos) {
      size_t i = by_order[pos];
      int64_t it = k - stage[i];
      if (it < 0 || it >= *extent) continue;
      if (!waits_on[i].empty()) {
        int64_t in_flight = groups;
        for (size_t p : waits_on[i]) {
          auto g = group_of.find({static_cast<int64_t>(p), it});
          if (g == group_of.end()) {
            Refuse(loop, "statement " + std::to_string(i) +
                             " would wait for asynchronous copies not yet committed");
          }
          in_flight = std::min(in_flight, groups - 1 - g->second);
        }
        wait_log.push_back(in_flight);
        out.push_back(Eval(Call("tir.ptx_wait_group", {Int32(in_flight)})));
        out.push_back(Barrier());
        synced = true;
      }
      const bool is_async = async_stages.count(stage[i]) > 0;
      if (is_async && !synced) {
        out.push_back(Barrier());
        synced = true;
      }
      out.push_back(instance(i, Minus(iter_base, IntConst(lv->dtype, stage[i]))));
      if (is_async) {
        pending.push_back({static_cast<int64_t>(i), it});
        // Commit after the last asynchronous statement of this step.
        bool more = false;
        for (size_t q = pos + 1; q < n; ++q) {
          size_t j = by_order[q];
          int64_t jt = k - stage[j];
          more = more || (async_stages.count(stage[j]) && jt >= 0 && jt < *extent);
        }
        if (!more) {
          for (const auto& key : pending) group_of[key] = groups;
          pending.clear();
          ++groups;
          out.push_back(Eval(Call("tir.ptx_commit_group", {})));
        }
      }
    }
    return out;
  };
  std::vector<Stmt> result;
  auto at = [&](int64_t k) { return AddE(loop->min, IntConst(lv->dtype, k)); };
  for (int64_t k = 0; k < max_stage; ++k) {
    for (Stmt& s : step(k, at(k))) result.push_back(s);
  }
  // The steady state: every step from max_stage to extent - 1 has the same shape; simulate
  // them all (the group queue), emit the first as the loop body over a fresh variable.
  Var iv = VarNode::Make(lv->name, lv->dtype);
  std::vector<Stmt> steady;
  std::vector<int64_t> steady_waits;
  for (int64_t k = max_stage; k < *extent; ++k) {
    std::vector<Stmt> s = step(k, iv);
    if (k == max_stage) {
      steady = s;
      steady_waits = wait_log;
    } else if (wait_log != steady_waits) {
      Refuse(loop, "the asynchronous groups in flight differ between steady-state steps");
    }
  }
  AttrMap ann = loop->annotations;
  ann.erase(kStage);
  ann.erase(kOrder);
  ann.erase(kAsync);
  result.push_back(ForNode::Make(iv, at(max_stage), IntConst(loop->extent->dtype, *extent - max_stage),
                                 ForKind::kSerial, SeqStmtNode::Flatten(steady, loop->span),
                                 nullptr, ann, loop->span));
  for (int64_t k = *extent; k < *extent + max_stage; ++k) {
    for (Stmt& s : step(k, at(k))) result.push_back(s);
  }
  Stmt out = SeqStmtNode::Flatten(result, loop->span);
  bool any_async = false;
  for (const auto& [buf, p] : producer_of) any_async = any_async || async_stages.count(stage[p]);
  if (any_async) {
    for (const auto& [buf, p] : producer_of) {
      if (async_stages.count(stage[p])) {
        out = AttrStmtNode::Make(buf->data, "tessera.manual_sync", Int32(1), out);
      }
    }
  }
  if (holder) {
    // The body block's allocations move out of the loop, versioned where needed; its regions
    // cover the whole buffers (the loop variable is gone).
    std::vector<Buffer> allocs;
    for (const Buffer& b : holder->alloc_buffers) {
      auto it = vmap.find(b.get());
      allocs.push_back(it == vmap.end() ? b : it->second.buffer);
    }
    auto whole = [&](const std::vector<BufferRegion>& rs) {
      std::vector<BufferRegion> o;
      for (const BufferRegion& r : rs) {
        std::vector<Range> region;
        for (const Expr& e : r->buffer->shape) region.push_back(RangeNode::Make(IntConst(e->dtype, 0), e));
        o.push_back(BufferRegionNode::Make(r->buffer, region, r->span));
      }
      return o;
    };
    Block nb = BlockNode::Make({}, whole(holder->reads), whole(holder->writes), holder->name_hint,
                               out, nullptr, allocs, {}, holder->annotations, holder->span);
    out = BlockRealizeNode::Make({}, Bool(true), nb, loop->span);
  }
  return out;
}

// Whether some loop carries the stage annotation (statements only: most functions have none,
// and the pass then leaves them without rebuilding anything).
class FindPipelinedLoop : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  bool found = false;
  void VisitStmt_(const ForNode* op) override {
    if (found) return;
    found = op->annotations.count(kStage) != 0;
    if (!found) StmtVisitor::VisitStmt_(op);
  }
};

PrimFunc SkewSoftwarePipelineFunc(PrimFunc f, IRModule, const PassContext&) {
  FindPipelinedLoop finder;
  finder.VisitStmt(f->body);
  if (!finder.found) return f;
  const std::string target = f->GetStrAttr("target");
  Stmt body = PipelineInjector(target.empty() || target == "cuda").VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass SkewSoftwarePipeline() {
  return CreatePrimFuncPass(SkewSoftwarePipelineFunc, 0, "tir.SkewSoftwarePipeline");
}
TESSERA_REGISTER_PASS("tir.SkewSoftwarePipeline", SkewSoftwarePipeline);

}  // namespace transform
}  // namespace tessera
