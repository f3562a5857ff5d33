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

void Schedule::SetAxisSeparator(const BlockRV& block, const std::string& buffer_kind,
                                int buffer_index, const std::vector<int64_t>& axis_separators) {
  Run("set_axis_separator", [&] {
    if (buffer_kind != "read" && buffer_kind != "write") {
      Fail(
          "set_axis_separator: the buffer must be (\"read\", index) or (\"write\", index), "
          "not (\"" +
          buffer_kind + "\", ...)");
    }
    schedule::SetAxisSeparator(state_, BlockSRef(block), buffer_index, buffer_kind == "write",
                               axis_separators);
    Record({"set_axis_separator",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer",
              TraceValue::List({TraceValue::Str(buffer_kind), TraceValue::Int(buffer_index)})},
             {"axis_separators", IntList(axis_separators)}},
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

BlockRV Schedule::DecomposePadding(const BlockRV& block, const LoopRV& loop) {
  return Run("decompose_padding", [&] {
    BlockRV rv =
        NewRV<BlockRVNode>(schedule::DecomposePadding(state_, BlockSRef(block), LoopSRef(loop)));
    Record({"decompose_padding",
            {{"block", TraceValue::Of(RV(block))}, {"loop", TraceValue::Of(RV(loop))}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::ReindexCacheRead(const BlockRV& block, int read_buffer_index,
                                   const std::string& storage_scope, const IndexMap& index_map) {
  return Run("reindex_cache_read", [&] {
    BlockRV rv = NewRV<BlockRVNode>(schedule::ReindexCache(
        state_, BlockSRef(block), read_buffer_index, false, storage_scope, index_map));
    Record({"reindex_cache_read",
            {{"block", TraceValue::Of(RV(block))},
             {"read_buffer_index", TraceValue::Int(read_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)},
             {"index_map", TraceValue::Map(index_map)}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::ReindexCacheWrite(const BlockRV& block, int write_buffer_index,
                                    const std::string& storage_scope, const IndexMap& index_map) {
  return Run("reindex_cache_write", [&] {
    BlockRV rv = NewRV<BlockRVNode>(schedule::ReindexCache(
        state_, BlockSRef(block), write_buffer_index, true, storage_scope, index_map));
    Record({"reindex_cache_write",
            {{"block", TraceValue::Of(RV(block))},
             {"write_buffer_index", TraceValue::Int(write_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)},
             {"index_map", TraceValue::Map(index_map)}},
            {rv}});
    return rv;
  });
}

void Schedule::FuseReductionEpilogue(const BlockRV& reduction_block,
                                     const BlockRV& epilogue_block) {
  Run("fuse_reduction_epilogue", [&] {
    schedule::FuseReductionEpilogue(state_, BlockSRef(reduction_block), BlockSRef(epilogue_block));
    Record({"fuse_reduction_epilogue",
            {{"reduction_block", TraceValue::Of(RV(reduction_block))},
             {"epilogue_block", TraceValue::Of(RV(epilogue_block))}},
            {}});
  });
}

void Schedule::PadEinsum(const BlockRV& block, const std::vector<int64_t>& padding) {
  Run("pad_einsum", [&] {
    schedule::PadEinsum(state_, BlockSRef(block), padding);
    Record(
        {"pad_einsum", {{"block", TraceValue::Of(RV(block))}, {"padding", IntList(padding)}}, {}});
  });
}

BlockRV Schedule::ReadAt(const LoopRV& loop, const BlockRV& block, int read_buffer_index,
                         const std::string& storage_scope) {
  return Run("read_at", [&] {
    BlockRV rv = NewRV<BlockRVNode>(schedule::ReadWriteAt(state_, LoopSRef(loop), BlockSRef(block),
                                                          read_buffer_index, storage_scope, true));
    Record({"read_at",
            {{"loop", TraceValue::Of(RV(loop))},
             {"block", TraceValue::Of(RV(block))},
             {"read_buffer_index", TraceValue::Int(read_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)}},
            {rv}});
    return rv;
  });
}

BlockRV Schedule::WriteAt(const LoopRV& loop, const BlockRV& block, int write_buffer_index,
                          const std::string& storage_scope) {
  return Run("write_at", [&] {
    BlockRV rv = NewRV<BlockRVNode>(schedule::ReadWriteAt(
        state_, LoopSRef(loop), BlockSRef(block), write_buffer_index, storage_scope, false));
    Record({"write_at",
            {{"loop", TraceValue::Of(RV(loop))},
             {"block", TraceValue::Of(RV(block))},
             {"write_buffer_index", TraceValue::Int(write_buffer_index)},
             {"storage_scope", TraceValue::Str(storage_scope)}},
            {rv}});
    return rv;
  });
}

bool Schedule::CanDecomposePadding(const BlockRV& block, const LoopRV& loop) {
  StmtSRef block_sref = BlockSRef(block), loop_sref = LoopSRef(loop);
  return Try([&] { schedule::DecomposePadding(state_, block_sref, loop_sref); });
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

void Schedule::AnnotateBufferAccess(const BlockRV& block, int buffer_index,
                                    const std::string& buf_type, const IndexMap& gen_new_ranges) {
  Run("annotate_buffer_access", [&] {
    bool is_write = IsWriteKind(buf_type, "annotate_buffer_access");
    schedule::AnnotateBufferAccess(state_, BlockSRef(block), buffer_index, is_write,
                                   gen_new_ranges);
    Record({"annotate_buffer_access",
            {{"block", TraceValue::Of(RV(block))},
             {"buffer_index", TraceValue::Int(buffer_index)},
             {"buf_type", TraceValue::Str(buf_type)},
             {"gen_new_ranges", TraceValue::Map(gen_new_ranges)}},
            {}});
  });
}

void Schedule::UnsafeHideBufferAccess(const BlockRV& block, const std::string& buf_type,
                                      const std::vector<int64_t>& buf_index_array) {
  Run("unsafe_hide_buffer_access", [&] {
    bool is_write = IsWriteKind(buf_type, "unsafe_hide_buffer_access");
    schedule::UnsafeHideBufferAccess(state_, BlockSRef(block), is_write, buf_index_array);
    Record({"unsafe_hide_buffer_access",
            {{"block", TraceValue::Of(RV(block))},
             {"buf_type", TraceValue::Str(buf_type)},
             {"buf_index_array", IntList(buf_index_array)}},
            {}});
  });
}

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
