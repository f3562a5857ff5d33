// Schedule: handles to srefs, the primitives with their trace records, rollback on error.
#include "tessera/schedule/schedule.h"

#include "schedule_impl.h"
#include "tessera/schedule/primitive.h"
#include "tessera/support/error.h"
#include "utils.h"

namespace tessera {
namespace schedule {

Schedule::Schedule(IRModule mod, int debug_mask, ErrorRenderLevel error_render_level,
                   bool enable_check, int64_t seed)
    : state_(std::move(mod), debug_mask, enable_check), error_render_level_(error_render_level) {
  Seed(seed);
  if (state_.mod()->functions.size() == 1)
    func_working_on_ = state_.mod()->functions[0].first->name_hint;
}

void Schedule::WorkOn(const std::string& func_name) {
  if (!state_.mod()->Lookup(func_name)) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "work_on: the module has no function '" << func_name << "'";
  }
  func_working_on_ = func_name;
}

Schedule Schedule::Copy() const {
  Schedule copy(*this);
  std::unordered_map<const StmtSRefNode*, StmtSRef> sref_map;
  copy.state_ = state_.Copy(&sref_map);
  copy.rand_state_ = ForkSeed();
  copy.symbol_undo_.clear();
  copy.run_depth_ = 0;
  for (auto& [key, entry] : copy.symbols_) {
    if (entry.second == root_mark_ || entry.second == inline_mark_) continue;
    auto it = sref_map.find(entry.second.get());
    entry.second = it == sref_map.end() ? std::make_shared<StmtSRefNode>() : it->second;
  }
  return copy;
}

void Schedule::Record(Instruction inst) { trace_.insts.push_back(std::move(inst)); }

StmtSRef Schedule::GetSRef(const RV& rv) const {
  if (!rv) Fail("A handle is None");
  auto it = symbols_.find(rv.get());
  if (it == symbols_.end()) Fail("The handle does not belong to this schedule");
  const StmtSRef& sref = it->second.second;
  if (!sref->stmt) {
    Fail(rv->kind == RVNode::kBlock ? "the block was removed from the IR by an earlier primitive"
                                    : "the loop was removed from the IR by an earlier primitive");
  }
  return sref;
}

bool Schedule::IsValid(const RV& rv) const {
  auto it = rv ? symbols_.find(rv.get()) : symbols_.end();
  return it != symbols_.end() && it->second.second->stmt != nullptr;
}

StmtSRef Schedule::BlockSRef(const RV& rv) const {
  StmtSRef sref = GetSRef(rv);
  BlockOf(sref);
  return sref;
}

StmtSRef Schedule::LoopSRef(const RV& rv) const {
  StmtSRef sref = GetSRef(rv);
  LoopOf(sref);
  return sref;
}

ObjectRef Schedule::Get(const RV& rv) const {
  if (rv && rv->kind == RVNode::kExpr) {
    auto it = expr_symbols_.find(rv.get());
    if (it == expr_symbols_.end()) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "The handle does not belong to this schedule";
    }
    return it->second.second;
  }
  auto it = rv ? symbols_.find(rv.get()) : symbols_.end();
  if (it == symbols_.end()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "The handle does not belong to this schedule";
  }
  const StmtSRef& sref = it->second.second;
  if (!sref->stmt) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << (rv->kind == RVNode::kBlock ? "the block" : "the loop")
        << " was removed from the IR by an earlier primitive";
  }
  return sref->stmt;
}

namespace {
template <class T>
TraceValue RVList(const std::vector<std::shared_ptr<T>>& rvs) {
  std::vector<TraceValue> items;
  for (const auto& rv : rvs) items.push_back(TraceValue::Of(RV(rv)));
  return TraceValue::List(std::move(items));
}
template <class T>
std::vector<RV> Outputs(const std::vector<std::shared_ptr<T>>& rvs) {
  return std::vector<RV>(rvs.begin(), rvs.end());
}
}  // namespace

// ---- lookup ----

BlockRV Schedule::GetBlock(const std::string& name, const std::optional<std::string>& func_name) {
  std::string func = func_name.value_or(func_working_on_);
  if (func.empty()) {
    // As TVM's, a ValueError (the module has several functions and none is worked on).
    throw Error(
        "`get_block` does not know which function to be working on: the module has several "
        "functions; pass func_name, or call `work_on` first",
        Span(), ErrorKind::kValue);
  }
  return Run("get_block", [&] {
    if (!state_.mod()->Lookup(func)) Fail("get_block: the module has no function '" + func + "'");
    BlockRV rv = NewRV<BlockRVNode>(schedule::GetBlock(state_, name, func));
    Record({"get_block",
            {{"name", TraceValue::Str(name)}, {"func_name", TraceValue::Str(func)}},
            {rv}});
    return rv;
  });
}

std::vector<LoopRV> Schedule::GetLoops(const BlockRV& block) {
  return Run("get_loops", [&] {
    std::vector<LoopRV> out;
    for (const StmtSRef& s : schedule::GetLoops(state_, BlockSRef(block)))
      out.push_back(NewRV<LoopRVNode>(s));
    Record({"get_loops", {{"block", TraceValue::Of(RV(block))}}, Outputs(out), true});
    return out;
  });
}

std::vector<BlockRV> Schedule::GetChildBlocks(const RV& block_or_loop) {
  return Run("get_child_blocks", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s : schedule::GetChildBlocks(state_, GetSRef(block_or_loop))) {
      out.push_back(NewRV<BlockRVNode>(s));
    }
    Record({"get_child_blocks",
            {{"block_or_loop", TraceValue::Of(block_or_loop)}},
            Outputs(out),
            true});
    return out;
  });
}

std::vector<BlockRV> Schedule::GetProducers(const BlockRV& block) {
  return Run("get_producers", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s : schedule::GetProducers(state_, BlockSRef(block)))
      out.push_back(NewRV<BlockRVNode>(s));
    Record({"get_producers", {{"block", TraceValue::Of(RV(block))}}, Outputs(out), true});
    return out;
  });
}

std::vector<BlockRV> Schedule::GetConsumers(const BlockRV& block) {
  return Run("get_consumers", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s : schedule::GetConsumers(state_, BlockSRef(block)))
      out.push_back(NewRV<BlockRVNode>(s));
    Record({"get_consumers", {{"block", TraceValue::Of(RV(block))}}, Outputs(out), true});
    return out;
  });
}

std::vector<BlockRV> Schedule::GetOutputBlocks(const BlockRV& scope_block) {
  return Run("get_output_blocks", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s : schedule::GetOutputBlocks(state_, BlockSRef(scope_block))) {
      out.push_back(NewRV<BlockRVNode>(s));
    }
    Record({"get_output_blocks",
            {{"scope_block", TraceValue::Of(RV(scope_block))}},
            Outputs(out),
            true});
    return out;
  });
}

// ---- loops ----

std::vector<Expr> Schedule::FactorExprs(const std::vector<TraceValue>& factors, DataType t,
                                        const char* primitive) const {
  std::vector<Expr> exprs;
  for (const TraceValue& f : factors) {
    switch (f.kind) {
      case TraceValue::kNone:
        exprs.push_back(nullptr);
        break;
      case TraceValue::kInt:
        exprs.push_back(f.integer == -1 ? nullptr : IntConst(t, f.integer));
        break;
      case TraceValue::kExpr:
        // As TVM: an expression factor is simplified (`4 * T.vscale()` is `T.vscale() * 4`).
        exprs.push_back(Simplify(CastTo(t, f.expr)));
        break;
      case TraceValue::kRV: {
        auto it = expr_symbols_.find(f.rv.get());
        if (it == expr_symbols_.end())
          Fail(std::string(primitive) + ": a factor handle does not belong to this schedule");
        exprs.push_back(CastTo(t, it->second.second));
        break;
      }
      default:
        Fail(std::string(primitive) + ": a factor must be an int, an expression or None");
    }
  }
  return exprs;
}

std::vector<LoopRV> Schedule::LoopPartition(const LoopRV& loop,
                                            const std::vector<TraceValue>& factors,
                                            bool preserve_unit_iters) {
  return Run("loop_partition", [&] {
    StmtSRef sref = LoopSRef(loop);
    std::vector<Expr> exprs = FactorExprs(factors, sref->loop()->loop_var->dtype, "loop_partition");
    std::vector<LoopRV> out;
    for (const StmtSRef& s : schedule::LoopPartition(state_, sref, exprs, preserve_unit_iters)) {
      out.push_back(NewRV<LoopRVNode>(s));
    }
    Record({"loop_partition",
            {{"loop", TraceValue::Of(RV(loop))},
             {"factors", TraceValue::List(factors)},
             {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)}},
            Outputs(out),
            true});
    return out;
  });
}

std::vector<LoopRV> Schedule::Split(const LoopRV& loop, const std::vector<TraceValue>& factors,
                                    bool preserve_unit_iters, bool disable_predication) {
  return Run("split", [&] {
    StmtSRef sref = LoopSRef(loop);
    std::vector<Expr> exprs = FactorExprs(factors, sref->loop()->loop_var->dtype, "split");
    std::vector<LoopRV> out;
    for (const StmtSRef& s :
         schedule::Split(state_, sref, exprs, preserve_unit_iters, disable_predication)) {
      out.push_back(NewRV<LoopRVNode>(s));
    }
    Record({"split",
            {{"loop", TraceValue::Of(RV(loop))},
             {"factors", TraceValue::List(factors)},
             {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)},
             {"disable_predication", TraceValue::Bool(disable_predication)}},
            Outputs(out),
            true});
    return out;
  });
}

LoopRV Schedule::Fuse(const std::vector<LoopRV>& loops, bool preserve_unit_iters) {
  return Run("fuse", [&] {
    std::vector<StmtSRef> srefs;
    for (const LoopRV& l : loops) srefs.push_back(LoopSRef(l));
    LoopRV rv = NewRV<LoopRVNode>(schedule::Fuse(state_, srefs, preserve_unit_iters));
    Record(
        {"fuse",
         {{"loops", RVList(loops)}, {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)}},
         {rv}});
    return rv;
  });
}

void Schedule::Reorder(const std::vector<LoopRV>& ordered_loops) {
  Run("reorder", [&] {
    std::vector<StmtSRef> srefs;
    for (const LoopRV& l : ordered_loops) srefs.push_back(LoopSRef(l));
    schedule::Reorder(state_, srefs);
    Record({"reorder", {{"ordered_loops", RVList(ordered_loops)}}, {}});
  });
}

LoopRV Schedule::AddUnitLoop(const RV& block_or_loop) {
  return Run("add_unit_loop", [&] {
    LoopRV rv = NewRV<LoopRVNode>(schedule::AddUnitLoop(state_, GetSRef(block_or_loop)));
    Record({"add_unit_loop", {{"block_or_loop", TraceValue::Of(block_or_loop)}}, {rv}});
    return rv;
  });
}

void Schedule::Parallel(const LoopRV& loop) {
  Run("parallel", [&] {
    schedule::Parallel(state_, LoopSRef(loop));
    Record({"parallel", {{"loop", TraceValue::Of(RV(loop))}}, {}});
  });
}

void Schedule::Vectorize(const LoopRV& loop) {
  Run("vectorize", [&] {
    schedule::Vectorize(state_, LoopSRef(loop));
    Record({"vectorize", {{"loop", TraceValue::Of(RV(loop))}}, {}});
  });
}

void Schedule::Unroll(const LoopRV& loop) {
  Run("unroll", [&] {
    schedule::Unroll(state_, LoopSRef(loop));
    Record({"unroll", {{"loop", TraceValue::Of(RV(loop))}}, {}});
  });
}

void Schedule::Bind(const LoopRV& loop, const std::string& thread_axis) {
  Run("bind", [&] {
    schedule::Bind(state_, LoopSRef(loop), thread_axis);
    Record({"bind",
            {{"loop", TraceValue::Of(RV(loop))}, {"thread_axis", TraceValue::Str(thread_axis)}},
            {}});
  });
}

// ---- caches ----

BlockRV Schedule::CacheRead(const BlockRV& block, int read_buffer_index,
                            const std::string& storage_scope,
                            const std::vector<BlockRV>& consumer_blocks) {
  return Run("cache_read", [&] {
    std::vector<StmtSRef> consumers;
    for (const BlockRV& b : consumer_blocks) consumers.push_back(BlockSRef(b));
    BlockRV rv = NewRV<BlockRVNode>(
        schedule::CacheRead(state_, BlockSRef(block), read_buffer_index, storage_scope, consumers));
    Record({"cache_read",
            {{"block", TraceValue::Of(RV(block))},
             {"read_buffer_index", TraceValue::Int(read_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)},
             {"consumer_blocks", RVList(consumer_blocks)}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::CacheWrite(const BlockRV& block, int write_buffer_index,
                             const std::string& storage_scope,
                             const std::vector<BlockRV>& consumer_blocks) {
  return Run("cache_write", [&] {
    std::vector<StmtSRef> consumers;
    for (const BlockRV& b : consumer_blocks) consumers.push_back(BlockSRef(b));
    BlockRV rv = NewRV<BlockRVNode>(schedule::CacheWrite(
        state_, BlockSRef(block), write_buffer_index, storage_scope, consumers));
    Record({"cache_write",
            {{"block", TraceValue::Of(RV(block))},
             {"write_buffer_index", TraceValue::Int(write_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)},
             {"consumer_blocks", RVList(consumer_blocks)}},
            {rv}});
    return rv;
  });
}

// ---- compute location ----

void Schedule::ComputeAt(const BlockRV& block, const LoopRV& loop, bool preserve_unit_loops,
                         int index) {
  Run("compute_at", [&] {
    int64_t mark = 0;
    if (IsComputeLocationMark(loop, &mark)) {
      // A location from sample_compute_location: the root keeps the block where it is.
      if (mark == -2) schedule::ComputeInline(state_, BlockSRef(block));
    } else {
      schedule::ComputeAt(state_, BlockSRef(block), LoopSRef(loop), preserve_unit_loops, index);
    }
    Record({"compute_at",
            {{"block", TraceValue::Of(RV(block))},
             {"loop", TraceValue::Of(RV(loop))},
             {"preserve_unit_loops", TraceValue::Bool(preserve_unit_loops)},
             {"index", TraceValue::Int(index)}},
            {}});
  });
}

void Schedule::ReverseComputeAt(const BlockRV& block, const LoopRV& loop, bool preserve_unit_loops,
                                int index) {
  Run("reverse_compute_at", [&] {
    int64_t mark = 0;
    if (IsComputeLocationMark(loop, &mark)) {
      if (mark == -2) schedule::ReverseComputeInline(state_, BlockSRef(block));
    } else {
      schedule::ReverseComputeAt(state_, BlockSRef(block), LoopSRef(loop), preserve_unit_loops,
                                 index);
    }
    Record({"reverse_compute_at",
            {{"block", TraceValue::Of(RV(block))},
             {"loop", TraceValue::Of(RV(loop))},
             {"preserve_unit_loops", TraceValue::Bool(preserve_unit_loops)},
             {"index", TraceValue::Int(index)}},
            {}});
  });
}

void Schedule::ComputeInline(const BlockRV& block) {
  Run("compute_inline", [&] {
    schedule::ComputeInline(state_, BlockSRef(block));
    Record({"compute_inline", {{"block", TraceValue::Of(RV(block))}}, {}});
  });
}

void Schedule::ReverseComputeInline(const BlockRV& block) {
  Run("reverse_compute_inline", [&] {
    schedule::ReverseComputeInline(state_, BlockSRef(block));
    Record({"reverse_compute_inline", {{"block", TraceValue::Of(RV(block))}}, {}});
  });
}

// ---- reductions ----

BlockRV Schedule::DecomposeReduction(const BlockRV& block, const LoopRV& loop) {
  return Run("decompose_reduction", [&] {
    BlockRV rv =
        NewRV<BlockRVNode>(schedule::DecomposeReduction(state_, BlockSRef(block), LoopSRef(loop)));
    Record({"decompose_reduction",
            {{"block", TraceValue::Of(RV(block))}, {"loop", TraceValue::Of(RV(loop))}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::RFactor(const LoopRV& loop, int factor_axis) {
  return Run("rfactor", [&] {
    BlockRV rv = NewRV<BlockRVNode>(schedule::RFactor(state_, LoopSRef(loop), factor_axis));
    Record({"rfactor",
            {{"loop", TraceValue::Of(RV(loop))}, {"factor_axis", TraceValue::Int(factor_axis)}},
            {rv}});
    return rv;
  });
}

// ---- buffers ----

void Schedule::StorageAlign(const BlockRV& block, int buffer_index, int axis, int factor,
                            int offset) {
  Run("storage_align", [&] {
    schedule::StorageAlign(state_, BlockSRef(block), buffer_index, axis, factor, offset);
    Record({"storage_align",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer_index", TraceValue::Int(buffer_index)},
             {"axis", TraceValue::Int(axis)},
             {"factor", TraceValue::Int(factor)},
             {"offset", TraceValue::Int(offset)}},
            {}});
  });
}

void Schedule::SetScope(const BlockRV& block, int buffer_index, const std::string& storage_scope) {
  Run("set_scope", [&] {
    schedule::SetScope(state_, BlockSRef(block), buffer_index, storage_scope);
    Record({"set_scope",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer_index", TraceValue::Int(buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)}},
            {}});
  });
}

void Schedule::TransformLayout(const BlockRV& block, const std::string& buffer_kind,
                               int buffer_index, const IndexMap& index_map,
                               const std::optional<IndexMap>& pad_value,
                               bool assume_injective_transform) {
  Run("transform_layout", [&] {
    if (buffer_kind != "read" && buffer_kind != "write") {
      Fail("transform_layout: the buffer must be (\"read\", index) or (\"write\", index), not (\"" +
           buffer_kind + "\", ...)");
    }
    schedule::TransformLayout(state_, BlockSRef(block), buffer_index, buffer_kind == "write",
                              index_map, pad_value, assume_injective_transform);
    Record({"transform_layout",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer",
              TraceValue::List({TraceValue::Str(buffer_kind), TraceValue::Int(buffer_index)})},
             {"index_map", TraceValue::Map(index_map)},
             {"pad_value", pad_value ? TraceValue::Map(*pad_value) : TraceValue::None()},
             {"assume_injective_transform", TraceValue::Bool(assume_injective_transform)}},
            {}});
  });
}

// ---- annotations ----

void Schedule::Annotate(const RV& block_or_loop, const std::string& ann_key,
                        const TraceValue& ann_val) {
  Run("annotate", [&] {
    schedule::Annotate(state_, GetSRef(block_or_loop), ann_key, ann_val.ToObject());
    Record({"annotate",
            {{"block_or_loop", TraceValue::Of(block_or_loop)},
             {"ann_key", TraceValue::Str(ann_key)},
             {"ann_val", ann_val}},
            {}});
  });
}

void Schedule::Unannotate(const RV& block_or_loop, const std::string& ann_key) {
  Run("unannotate", [&] {
    schedule::Unannotate(state_, GetSRef(block_or_loop), ann_key);
    Record(
        {"unannotate",
         {{"block_or_loop", TraceValue::Of(block_or_loop)}, {"ann_key", TraceValue::Str(ann_key)}},
         {}});
  });
}

// ---- blockize ----

BlockRV Schedule::Blockize(const LoopRV& loop, bool preserve_unit_iters) {
  return Run("blockize", [&] {
    BlockRV rv =
        NewRV<BlockRVNode>(schedule::Blockize(state_, LoopSRef(loop), preserve_unit_iters));
    Record({"blockize",
            {{"target", TraceValue::Of(RV(loop))},
             {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::BlockizeBlocks(const std::vector<BlockRV>& blocks, bool preserve_unit_iters) {
  return Run("blockize", [&] {
    std::vector<StmtSRef> srefs;
    for (const BlockRV& b : blocks) srefs.push_back(BlockSRef(b));
    BlockRV rv = NewRV<BlockRVNode>(schedule::BlockizeBlocks(state_, srefs, preserve_unit_iters));
    Record({"blockize",
            {{"target", RVList(blocks)},
             {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)}},
            {rv}});
    return rv;
  });
}

void Schedule::RollingBuffer(const BlockRV& block, int write_buffer_index) {
  Run("rolling_buffer", [&] {
    schedule::RollingBuffer(state_, BlockSRef(block), write_buffer_index);
    Record({"rolling_buffer",
            {{"block", TraceValue::Of(RV(block))},
             {"write_buffer_index", TraceValue::Int(write_buffer_index)}},
            {}});
  });
}

std::vector<BlockRV> Schedule::CacheInplace(const BlockRV& block, int read_buffer_index,
                                            const std::string& storage_scope) {
  return Run("cache_inplace", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s :
         schedule::CacheInplace(state_, BlockSRef(block), read_buffer_index, storage_scope)) {
      out.push_back(NewRV<BlockRVNode>(s));
    }
    Record({"cache_inplace",
            {{"block", TraceValue::Of(RV(block))},
             {"read_buffer_index", TraceValue::Int(read_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)}},
            Outputs(out),
            true});
    return out;
  });
}

std::vector<BlockRV> Schedule::CacheIndex(const BlockRV& block, const std::string& storage_scope,
                                          int cse_thresh) {
  return Run("cache_index", [&] {
    std::vector<BlockRV> out;
    for (const StmtSRef& s :
         schedule::CacheIndex(state_, BlockSRef(block), storage_scope, cse_thresh)) {
      out.push_back(NewRV<BlockRVNode>(s));
    }
    Record({"cache_index",
            {{"block", TraceValue::Of(RV(block))},
             {"storage_scope", TraceValue::Str(storage_scope)},
             {"cse_thresh", TraceValue::Int(cse_thresh)}},
            Outputs(out),
            true});
    return out;
  });
}

// ---- tensorize ----

void Schedule::Tensorize(const RV& block_or_loop, const std::string& intrin,
                         bool preserve_unit_iters) {
  TensorIntrin ti = GetTensorIntrin(intrin);
  Run("tensorize", [&] {
    schedule::Tensorize(state_, GetSRef(block_or_loop), ti, preserve_unit_iters);
    Record({"tensorize",
            {{"block_or_loop", TraceValue::Of(block_or_loop)},
             {"tensor_intrin", TraceValue::Str(intrin)},
             {"preserve_unit_iters", TraceValue::Bool(preserve_unit_iters)}},
            {}});
  });
}

}  // namespace schedule
}  // namespace tessera
