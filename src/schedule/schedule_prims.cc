// Schedule methods of the primitives added for TVM v0.23's surface: each runs with rollback and
// is recorded in the trace.
#include "schedule_impl.h"
#include "tessera/schedule/primitive.h"
#include "utils.h"

namespace tessera {
namespace schedule {
namespace {

TraceValue IntList(const std::vector<int64_t>& values) {
  std::vector<TraceValue> items;
  for (int64_t v : values) items.push_back(TraceValue::Int(v));
  return TraceValue::List(std::move(items));
}

}  // namespace

void Schedule::UnsafeSetDType(const BlockRV& block, int buffer_index, const std::string& dtype) {
  Run("unsafe_set_dtype", [&] {
    schedule::UnsafeSetDType(state_, BlockSRef(block), buffer_index, DataType::Parse(dtype));
    Record({"unsafe_set_dtype",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer_index", TraceValue::Int(buffer_index)},
             {"dtype", TraceValue::Str(dtype)}},
            {}});
  });
}

void Schedule::ReorderBlockIterVar(const BlockRV& block, const std::vector<int64_t>& new_order) {
  Run("reorder_block_iter_var", [&] {
    schedule::ReorderBlockIterVar(state_, BlockSRef(block), new_order);
    Record({"reorder_block_iter_var",
            {{"block", TraceValue::Of(RV(block))}, {"new_order", IntList(new_order)}},
            {}});
  });
}

void Schedule::TransformBlockLayout(const BlockRV& block, const IndexMap& index_map) {
  Run("transform_block_layout", [&] {
    schedule::TransformBlockLayout(state_, BlockSRef(block), index_map);
    Record({"transform_block_layout",
            {{"block", TraceValue::Of(RV(block))}, {"index_map", TraceValue::Map(index_map)}},
            {}});
  });
}

LoopRV Schedule::Merge(const std::vector<LoopRV>& loops) {
  return Run("merge", [&] {
    std::vector<StmtSRef> srefs;
    std::vector<TraceValue> args;
    for (const LoopRV& l : loops) {
      srefs.push_back(LoopSRef(l));
      args.push_back(TraceValue::Of(RV(l)));
    }
    LoopRV rv = NewRV<LoopRVNode>(schedule::Merge(state_, srefs));
    Record({"merge", {{"loops", TraceValue::List(std::move(args))}}, {rv}});
    return rv;
  });
}

namespace {
bool IsWriteKind(const std::string& kind, const char* primitive) {
  if (kind != "read" && kind != "write") {
    Fail(std::string(primitive) +
         ": the buffer must be (\"read\", index) or (\"write\", index), "
         "not (\"" +
         kind + "\", ...)");
  }
  return kind == "write";
}
TraceValue BufferArg(const std::string& kind, int index) {
  return TraceValue::List({TraceValue::Str(kind), TraceValue::Int(index)});
}
}  // namespace

BlockRV Schedule::ReIndex(const BlockRV& block, const std::string& buffer_kind, int buffer_index) {
  return Run("reindex", [&] {
    bool is_write = IsWriteKind(buffer_kind, "reindex");
    BlockRV rv =
        NewRV<BlockRVNode>(schedule::ReIndex(state_, BlockSRef(block), buffer_index, is_write));
    Record(
        {"reindex",
         {{"block", TraceValue::Of(RV(block))}, {"buffer", BufferArg(buffer_kind, buffer_index)}},
         {rv}});
    return rv;
  });
}

}  // namespace schedule
}  // namespace tessera
