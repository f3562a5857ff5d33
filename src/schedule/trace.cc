// Trace: instruction values, index maps and replay on a schedule (printing: trace_print.cc,
// JSON: trace_json.cc).
#include "tessera/schedule/trace.h"

#include <functional>
#include <unordered_map>

#include "tessera/schedule/schedule.h"
#include "tessera/support/error.h"
#include "tessera/support/json.h"
#include "trace_internal.h"
#include "utils.h"

namespace tessera {
namespace schedule {

// ---- values ----

TraceValue TraceValue::Bool(bool v) {
  TraceValue t;
  t.kind = kBool;
  t.boolean = v;
  return t;
}
TraceValue TraceValue::Int(int64_t v) {
  TraceValue t;
  t.kind = kInt;
  t.integer = v;
  return t;
}
TraceValue TraceValue::Float(double v) {
  TraceValue t;
  t.kind = kFloat;
  t.number = v;
  return t;
}
TraceValue TraceValue::Str(std::string v) {
  TraceValue t;
  t.kind = kString;
  t.string = std::move(v);
  return t;
}
TraceValue TraceValue::Of(Expr e) {
  TraceValue t;
  t.kind = kExpr;
  t.expr = std::move(e);
  return t;
}
TraceValue TraceValue::Of(RV rv) {
  TraceValue t;
  t.kind = kRV;
  t.rv = std::move(rv);
  return t;
}
TraceValue TraceValue::List(std::vector<TraceValue> items) {
  TraceValue t;
  t.kind = kList;
  t.list = std::move(items);
  return t;
}
TraceValue TraceValue::Map(IndexMap map) {
  TraceValue t;
  t.kind = kIndexMap;
  t.index_map = std::make_shared<IndexMap>(std::move(map));
  return t;
}

TraceValue TraceValue::Dict(std::vector<std::pair<std::string, TraceValue>> items) {
  TraceValue t;
  t.kind = kDict;
  t.dict = std::move(items);
  return t;
}

TraceValue TraceValue::FromObject(const ObjectRef& obj) {
  if (!obj) return None();
  if (auto* i = AsPtr<IntImmNode>(obj)) {
    if (i->dtype.is_bool()) return Bool(i->value != 0);
    if (i->dtype == DataType::Int(32)) return Int(i->value);
  }
  if (auto* f = AsPtr<FloatImmNode>(obj)) {
    if (f->dtype == DataType::Float(32)) return Float(f->value);
  }
  if (auto* s = AsPtr<StringImmNode>(obj)) return Str(s->value);
  if (auto* a = AsPtr<ArrayNode>(obj)) {
    std::vector<TraceValue> items;
    for (const ObjectRef& item : a->items) items.push_back(FromObject(item));
    return List(std::move(items));
  }
  if (auto* m = AsPtr<MapNode>(obj)) {
    std::vector<std::pair<std::string, TraceValue>> items;
    for (const auto& [key, value] : m->items) items.emplace_back(key, FromObject(value));
    return Dict(std::move(items));
  }
  if (IsExprKind(obj->kind)) return Of(std::static_pointer_cast<ExprNode>(obj));
  TESSERA_THROW_KIND(Span(), ErrorKind::kType)
      << "cannot record a " << NodeKindName(obj->kind) << " as an instruction argument";
}

ObjectRef TraceValue::ToObject() const {
  switch (kind) {
    case kNone:
      return nullptr;
    case kBool:
      return IntImmNode::Make(DataType::Bool(), boolean ? 1 : 0);
    case kInt:
      return IntImmNode::Make(
          integer >= INT32_MIN && integer <= INT32_MAX ? DataType::Int(32) : DataType::Int(64),
          integer);
    case kFloat:
      return FloatImmNode::Make(DataType::Float(32), number);
    case kString:
      return StringImmNode::Make(string);
    case kExpr:
      return expr;
    case kList: {
      std::vector<ObjectRef> items;
      for (const TraceValue& v : list) items.push_back(v.ToObject());
      return ArrayNode::Make(std::move(items));
    }
    case kDict: {
      AttrMap items;
      for (const auto& [key, value] : dict) items[key] = value.ToObject();
      return MapNode::Make(std::move(items));
    }
    default:
      TESSERA_THROW_KIND(Span(), ErrorKind::kType) << "this argument has no IR form";
  }
}

const TraceValue& Instruction::Arg(const std::string& name) const {
  for (const auto& [key, value] : args) {
    if (key == name) return value;
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "instruction " << kind << " has no argument " << name;
}

// ---- index maps ----

std::vector<Expr> IndexMap::Apply(const std::vector<Expr>& indices) const {
  VarMap vmap;
  for (size_t i = 0; i < initial_indices.size() && i < indices.size(); ++i) {
    vmap[initial_indices[i].get()] = CastTo(initial_indices[i]->dtype, indices[i]);
  }
  std::vector<Expr> out;
  for (const Expr& e : final_indices) out.push_back(Simplify(Substitute(e, vmap)));
  return out;
}
namespace {

// ---- replay ----

/*! \brief Calls the schedule method of one instruction; `rv` maps recorded handles. */
class Replayer {
 public:
  explicit Replayer(Schedule* sch) : sch_(sch) {}

  // Recorded handles are keys: RV objects (direct replay) or names (JSON replay).
  std::unordered_map<const RVNode*, RV> by_object;
  std::unordered_map<std::string, RV> by_name;

  RV Lookup(const TraceValue& v) {
    if (v.kind != TraceValue::kRV) Bad("a handle was expected");
    if (v.rv) {
      auto it = by_object.find(v.rv.get());
      if (it == by_object.end()) Bad("a handle is used before it is defined");
      return it->second;
    }
    auto it = by_name.find(v.string);
    if (it == by_name.end()) Bad("the handle " + v.string + " is used before it is defined");
    return it->second;
  }
  template <class T>
  std::shared_ptr<T> As(const TraceValue& v) {
    RV rv = Lookup(v);
    auto cast = std::dynamic_pointer_cast<T>(rv);
    if (!cast) Bad("a handle of the wrong kind");
    return cast;
  }
  template <class T>
  std::vector<std::shared_ptr<T>> AsList(const TraceValue& v) {
    std::vector<std::shared_ptr<T>> out;
    for (const TraceValue& item : v.list) out.push_back(As<T>(item));
    return out;
  }
  static int64_t Int(const TraceValue& v) {
    if (v.kind != TraceValue::kInt) Bad("an int was expected");
    return v.integer;
  }
  static double Number(const TraceValue& v) {
    if (v.kind == TraceValue::kFloat) return v.number;
    if (v.kind == TraceValue::kInt) return static_cast<double>(v.integer);
    Bad("a number was expected");
  }
  static bool Bool(const TraceValue& v) {
    if (v.kind != TraceValue::kBool) Bad("a bool was expected");
    return v.boolean;
  }
  static const std::string& Str(const TraceValue& v) {
    if (v.kind != TraceValue::kString) Bad("a string was expected");
    return v.string;
  }
  [[noreturn]] static void Bad(const std::string& what) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "cannot replay the trace: " << what;
  }

  /*! \brief Run `inst`; `outputs` are its recorded outputs as keys (objects or names). */
  std::vector<RV> Apply(const Instruction& inst) {
    const std::string& k = inst.kind;
    auto arg = [&](const char* name) -> const TraceValue& { return inst.Arg(name); };
    auto block = [&](const char* name) { return As<BlockRVNode>(arg(name)); };
    auto loop = [&](const char* name) { return As<LoopRVNode>(arg(name)); };
    auto any = [&](const char* name) { return Lookup(arg(name)); };
    auto list = [](const auto& v) { return std::vector<RV>(v.begin(), v.end()); };
    if (k == "get_block") {
      const TraceValue& f = arg("func_name");
      return {sch_->GetBlock(Str(arg("name")), f.kind == TraceValue::kNone
                                                   ? std::nullopt
                                                   : std::optional<std::string>(Str(f)))};
    }
    if (k == "get_loops") return list(sch_->GetLoops(block("block")));
    if (k == "get_child_blocks") return list(sch_->GetChildBlocks(any("block_or_loop")));
    if (k == "get_producers") return list(sch_->GetProducers(block("block")));
    if (k == "get_consumers") return list(sch_->GetConsumers(block("block")));
    if (k == "get_output_blocks") return list(sch_->GetOutputBlocks(block("scope_block")));
    if (k == "split") {
      std::vector<TraceValue> factors = arg("factors").list;
      for (TraceValue& f : factors) {
        if (f.kind == TraceValue::kRV) f = TraceValue::Of(Lookup(f));
      }
      return list(sch_->Split(loop("loop"), factors, Bool(arg("preserve_unit_iters")),
                              Bool(arg("disable_predication"))));
    }
    if (k == "loop_partition") {
      std::vector<TraceValue> factors = arg("factors").list;
      for (TraceValue& f : factors) {
        if (f.kind == TraceValue::kRV) f = TraceValue::Of(Lookup(f));
      }
      return list(sch_->LoopPartition(loop("loop"), factors, Bool(arg("preserve_unit_iters"))));
    }
    if (k == "fuse")
      return {sch_->Fuse(AsList<LoopRVNode>(arg("loops")), Bool(arg("preserve_unit_iters")))};
    if (k == "reorder") {
      sch_->Reorder(AsList<LoopRVNode>(arg("ordered_loops")));
      return {};
    }
    if (k == "add_unit_loop") return {sch_->AddUnitLoop(any("block_or_loop"))};
    if (k == "parallel") return sch_->Parallel(loop("loop")), std::vector<RV>{};
    if (k == "vectorize") return sch_->Vectorize(loop("loop")), std::vector<RV>{};
    if (k == "unroll") return sch_->Unroll(loop("loop")), std::vector<RV>{};
    if (k == "bind") return sch_->Bind(loop("loop"), Str(arg("thread_axis"))), std::vector<RV>{};
    if (k == "cache_read") {
      return {sch_->CacheRead(block("block"), Int(arg("read_buffer_index")),
                              Str(arg("storage_scope")),
                              AsList<BlockRVNode>(arg("consumer_blocks")))};
    }
    if (k == "cache_write") {
      return {sch_->CacheWrite(block("block"), Int(arg("write_buffer_index")),
                               Str(arg("storage_scope")),
                               AsList<BlockRVNode>(arg("consumer_blocks")))};
    }
    if (k == "compute_at" || k == "reverse_compute_at") {
      auto f = k == "compute_at" ? &Schedule::ComputeAt : &Schedule::ReverseComputeAt;
      (sch_->*f)(block("block"), loop("loop"), Bool(arg("preserve_unit_loops")), Int(arg("index")));
      return {};
    }
    if (k == "compute_inline") return sch_->ComputeInline(block("block")), std::vector<RV>{};
    if (k == "reverse_compute_inline")
      return sch_->ReverseComputeInline(block("block")), std::vector<RV>{};
    if (k == "decompose_reduction") return {sch_->DecomposeReduction(block("block"), loop("loop"))};
    if (k == "rfactor") return {sch_->RFactor(loop("loop"), Int(arg("factor_axis")))};
    if (k == "storage_align") {
      sch_->StorageAlign(block("block"), Int(arg("buffer_index")), Int(arg("axis")),
                         Int(arg("factor")), Int(arg("offset")));
      return {};
    }
    if (k == "set_scope") {
      sch_->SetScope(block("block"), Int(arg("buffer_index")), Str(arg("storage_scope")));
      return {};
    }
    if (k == "transform_layout") {
      const TraceValue& buf = arg("buffer");
      if (buf.kind != TraceValue::kList || buf.list.size() != 2)
        Bad("transform_layout: bad buffer");
      const TraceValue& m = arg("index_map");
      if (m.kind != TraceValue::kIndexMap) Bad("transform_layout: bad index_map");
      const TraceValue& pad = arg("pad_value");
      std::optional<IndexMap> pad_map;
      if (pad.kind == TraceValue::kIndexMap) {
        pad_map = *pad.index_map;
      } else if (pad.kind != TraceValue::kNone) {
        Bad("transform_layout: bad pad_value");
      }
      bool injective = false;
      for (const auto& [key, value] : inst.args) {
        if (key == "assume_injective_transform") injective = Bool(value);
      }
      sch_->TransformLayout(block("block"), Str(buf.list[0]), Int(buf.list[1]), *m.index_map,
                            pad_map, injective);
      return {};
    }
    if (k == "annotate") {
      sch_->Annotate(any("block_or_loop"), Str(arg("ann_key")), arg("ann_val"));
      return {};
    }
    if (k == "unannotate") {
      sch_->Unannotate(any("block_or_loop"), Str(arg("ann_key")));
      return {};
    }
    if (k == "blockize") {
      const TraceValue& target = arg("target");
      bool preserve = Bool(arg("preserve_unit_iters"));
      if (target.kind == TraceValue::kList)
        return {sch_->BlockizeBlocks(AsList<BlockRVNode>(target), preserve)};
      return {sch_->Blockize(loop("target"), preserve)};
    }
    if (k == "cache_inplace") {
      return list(sch_->CacheInplace(block("block"), Int(arg("read_buffer_index")),
                                     Str(arg("storage_scope"))));
    }
    if (k == "cache_index") {
      return list(
          sch_->CacheIndex(block("block"), Str(arg("storage_scope")), Int(arg("cse_thresh"))));
    }
    if (k == "rolling_buffer") {
      sch_->RollingBuffer(block("block"), Int(arg("write_buffer_index")));
      return {};
    }
    if (k == "tensorize") {
      sch_->Tensorize(any("block_or_loop"), Str(arg("tensor_intrin")),
                      Bool(arg("preserve_unit_iters")));
      return {};
    }
    if (k == "sample_categorical") {
      std::vector<int64_t> candidates;
      for (const TraceValue& c : arg("candidates").list) candidates.push_back(Int(c));
      std::vector<double> probs;
      for (const TraceValue& p : arg("probs").list) probs.push_back(Number(p));
      std::optional<int64_t> decision;
      if (inst.decision.kind != TraceValue::kNone) decision = Int(inst.decision);
      return {sch_->SampleCategorical(candidates, probs, decision)};
    }
    if (k == "sample_perfect_tile" || k == "sample_partitioned_tile") {
      std::optional<std::vector<int64_t>> decision;
      if (inst.decision.kind == TraceValue::kList) {
        decision.emplace();
        for (const TraceValue& d : inst.decision.list) decision->push_back(Int(d));
      }
      if (k == "sample_perfect_tile") {
        return list(sch_->SamplePerfectTile(loop("loop"), Int(arg("n")),
                                            Int(arg("max_innermost_factor")), decision));
      }
      return list(sch_->SamplePartitionedTile(loop("loop"), Int(arg("n")),
                                              Int(arg("partition_pos")),
                                              Int(arg("innerpart_factor")), decision));
    }
    if (k == "sample_compute_location") {
      std::optional<int64_t> decision;
      if (inst.decision.kind != TraceValue::kNone) decision = Int(inst.decision);
      return {sch_->SampleComputeLocation(block("block"), decision)};
    }
    if (k == "enter_postproc") return sch_->EnterPostproc(), std::vector<RV>{};
    if (k == "set_axis_separator") {
      const TraceValue& buf = arg("buffer");
      if (buf.kind != TraceValue::kList || buf.list.size() != 2)
        Bad("set_axis_separator: bad buffer");
      std::vector<int64_t> seps;
      for (const TraceValue& v : arg("axis_separators").list) seps.push_back(Int(v));
      sch_->SetAxisSeparator(block("block"), Str(buf.list[0]), Int(buf.list[1]), seps);
      return {};
    }
    if (k == "unsafe_hide_buffer_access") {
      std::vector<int64_t> indices;
      for (const TraceValue& v : arg("buf_index_array").list) indices.push_back(Int(v));
      sch_->UnsafeHideBufferAccess(block("block"), Str(arg("buf_type")), indices);
      return {};
    }
    if (k == "unsafe_set_dtype") {
      sch_->UnsafeSetDType(block("block"), Int(arg("buffer_index")), Str(arg("dtype")));
      return {};
    }
    if (k == "annotate_buffer_access") {
      const TraceValue& m = arg("gen_new_ranges");
      if (m.kind != TraceValue::kIndexMap) Bad("annotate_buffer_access: bad gen_new_ranges");
      sch_->AnnotateBufferAccess(block("block"), Int(arg("buffer_index")), Str(arg("buf_type")),
                                 *m.index_map);
      return {};
    }
    if (k == "decompose_padding") return {sch_->DecomposePadding(block("block"), loop("loop"))};
    if (k == "reindex_cache_read" || k == "reindex_cache_write") {
      const TraceValue& m = arg("index_map");
      if (m.kind != TraceValue::kIndexMap) Bad(k + ": bad index_map");
      if (k == "reindex_cache_read") {
        return {sch_->ReindexCacheRead(block("block"), Int(arg("read_buffer_index")),
                                       Str(arg("storage_scope")), *m.index_map)};
      }
      return {sch_->ReindexCacheWrite(block("block"), Int(arg("write_buffer_index")),
                                      Str(arg("storage_scope")), *m.index_map)};
    }
    if (k == "fuse_reduction_epilogue") {
      sch_->FuseReductionEpilogue(block("reduction_block"), block("epilogue_block"));
      return {};
    }
    if (k == "pad_einsum") {
      std::vector<int64_t> padding;
      for (const TraceValue& v : arg("padding").list) padding.push_back(Int(v));
      sch_->PadEinsum(block("block"), padding);
      return {};
    }
    if (k == "read_at") {
      return {sch_->ReadAt(loop("loop"), block("block"), Int(arg("read_buffer_index")),
                           Str(arg("storage_scope")))};
    }
    if (k == "write_at") {
      return {sch_->WriteAt(loop("loop"), block("block"), Int(arg("write_buffer_index")),
                            Str(arg("storage_scope")))};
    }
    if (k == "merge") return {sch_->Merge(AsList<LoopRVNode>(arg("loops")))};
    if (k == "transform_block_layout") {
      const TraceValue& m = arg("index_map");
      if (m.kind != TraceValue::kIndexMap) Bad("transform_block_layout: bad index_map");
      sch_->TransformBlockLayout(block("block"), *m.index_map);
      return {};
    }
    if (k == "reindex") {
      const TraceValue& buf = arg("buffer");
      if (buf.kind != TraceValue::kList || buf.list.size() != 2) Bad("reindex: bad buffer");
      return {sch_->ReIndex(block("block"), Str(buf.list[0]), Int(buf.list[1]))};
    }
    if (k == "reorder_block_iter_var") {
      std::vector<int64_t> order;
      for (const TraceValue& v : arg("new_order").list) order.push_back(Int(v));
      sch_->ReorderBlockIterVar(block("block"), order);
      return {};
    }
    Bad("unknown instruction '" + k + "'");
  }

 private:
  Schedule* sch_;
};

}  // namespace

void Trace::ApplyToSchedule(Schedule* sch, bool remove_postproc) const {
  Replayer replayer(sch);
  for (const Instruction& inst : insts) {
    if (remove_postproc && inst.kind == "enter_postproc") break;
    std::vector<RV> results = replayer.Apply(inst);
    if (results.size() != inst.outputs.size()) {
      Replayer::Bad("instruction " + inst.kind + " gave " + std::to_string(results.size()) +
                    " results where the trace recorded " + std::to_string(inst.outputs.size()));
    }
    for (size_t i = 0; i < results.size(); ++i)
      replayer.by_object[inst.outputs[i].get()] = results[i];
  }
}

void Trace::ApplyJSONToSchedule(const std::string& json, Schedule* sch) {
  JsonValue doc = ParseJson(json);
  Replayer replayer(sch);
  std::unordered_map<int64_t, TraceValue> decisions;
  if (doc.object.count("decisions")) {
    for (const JsonValue& d : doc["decisions"].array) {
      if (d.kind != JsonValue::kArray || d.array.size() != 2) Replayer::Bad("malformed decision");
      decisions[static_cast<int64_t>(d.array[0].number)] = ValueFromJSON(d.array[1]);
    }
  }
  int64_t index = 0;
  for (const JsonValue& j : doc["insts"].array) {
    if (j.kind != JsonValue::kArray || j.array.size() != 3) Replayer::Bad("malformed instruction");
    Instruction inst;
    inst.kind = j.array[0].string;
    auto decision = decisions.find(index++);
    if (decision != decisions.end()) inst.decision = decision->second;
    for (const JsonValue& a : j.array[1].array) {
      inst.args.emplace_back(a.array.at(0).string, ValueFromJSON(a.array.at(1)));
    }
    std::vector<RV> results = replayer.Apply(inst);
    const auto& outputs = j.array[2].array;
    if (results.size() != outputs.size()) {
      Replayer::Bad("instruction " + inst.kind + " gave " + std::to_string(results.size()) +
                    " results where the trace recorded " + std::to_string(outputs.size()));
    }
    for (size_t i = 0; i < results.size(); ++i) replayer.by_name[outputs[i].string] = results[i];
  }
}

}  // namespace schedule
}  // namespace tessera
