// Bindings of tir.Schedule: handles, index maps, the trace and the schedule's primitives.
#include "common.h"
#include "tessera/schedule/index_map_analysis.h"
#include "tessera/schedule/primitive.h"
#include "tessera/schedule/schedule.h"
#include "tessera/support/error.h"

namespace tessera {
namespace bindings {
namespace {

using namespace tessera::schedule;

// A Python argument as an instruction value: None, bool, int, float, str, lists, PrimExprs
// and handles.
TraceValue ToTraceValue(nb::handle h) {
  if (h.is_none()) return TraceValue::None();
  if (nb::isinstance<nb::bool_>(h)) return TraceValue::Bool(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h)) return TraceValue::Int(nb::cast<int64_t>(h));
  if (nb::isinstance<nb::float_>(h)) return TraceValue::Float(nb::cast<double>(h));
  if (nb::isinstance<nb::str>(h)) return TraceValue::Str(nb::cast<std::string>(h));
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    std::vector<TraceValue> items;
    for (nb::handle item : h) items.push_back(ToTraceValue(item));
    return TraceValue::List(std::move(items));
  }
  if (nb::isinstance<nb::dict>(h)) {
    std::vector<std::pair<std::string, TraceValue>> items;
    for (auto [key, value] : nb::borrow<nb::dict>(h)) {
      if (!nb::isinstance<nb::str>(key)) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kType)
            << "a dict schedule argument needs str keys, got a "
            << nb::cast<std::string>(nb::str(key.type()));
      }
      items.emplace_back(nb::cast<std::string>(key), ToTraceValue(value));
    }
    std::sort(items.begin(), items.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return TraceValue::Dict(std::move(items));
  }
  if (nb::isinstance<RVNode>(h)) return TraceValue::Of(nb::cast<RV>(h));
  if (nb::isinstance<IndexMap>(h)) return TraceValue::Map(nb::cast<IndexMap>(h));
  if (nb::isinstance<ExprNode>(h)) return TraceValue::Of(nb::cast<Expr>(h));
  if (nb::isinstance<Object>(h)) return TraceValue::FromObject(nb::cast<ObjectRef>(h));
  TESSERA_THROW_KIND(Span(), ErrorKind::kType)
      << "cannot use a " << nb::cast<std::string>(nb::str(h.type())) << " as a schedule argument";
}

// An instruction value as a Python value (the inverse of ToTraceValue).
nb::object FromTraceValue(const TraceValue& v) {
  switch (v.kind) {
    case TraceValue::kNone:
      return nb::none();
    case TraceValue::kBool:
      return nb::bool_(v.boolean);
    case TraceValue::kInt:
      return nb::int_(v.integer);
    case TraceValue::kFloat:
      return nb::float_(v.number);
    case TraceValue::kString:
      return nb::str(v.string.c_str(), v.string.size());
    case TraceValue::kExpr:
      return nb::cast(v.expr);
    case TraceValue::kRV:
      return v.rv ? nb::cast(v.rv) : nb::str(v.string.c_str(), v.string.size());
    case TraceValue::kList: {
      nb::list out;
      for (const TraceValue& item : v.list) out.append(FromTraceValue(item));
      return out;
    }
    case TraceValue::kIndexMap:
      return nb::cast(*v.index_map);
    case TraceValue::kDict: {
      nb::dict out;
      for (const auto& [key, value] : v.dict)
        out[nb::str(key.c_str(), key.size())] = FromTraceValue(value);
      return out;
    }
  }
  return nb::none();
}

ErrorRenderLevel ParseLevel(const std::string& level) {
  if (level == "detail") return ErrorRenderLevel::kDetail;
  if (level == "fast") return ErrorRenderLevel::kFast;
  if (level == "none") return ErrorRenderLevel::kNone;
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "error_render_level must be \"detail\", \"fast\" or \"none\", not \"" << level << "\"";
}

}  // namespace

void BindSchedule(nb::module_& m) {
  nb::class_<RVNode>(m, "ScheduleRV")
      .def("same_as", [](const RVNode& a, const RVNode& b) { return &a == &b; })
      .def("__hash__", [](const RVNode& a) { return reinterpret_cast<size_t>(&a); })
      .def("__eq__", [](const RVNode& a, nb::handle b) {
        return nb::isinstance<RVNode>(b) && &a == &nb::cast<const RVNode&>(b);
      });
  nb::class_<BlockRVNode, RVNode>(m, "BlockRV").def(nb::new_([] {
    return std::make_shared<BlockRVNode>();
  }));
  nb::class_<LoopRVNode, RVNode>(m, "LoopRV").def(nb::new_([] {
    return std::make_shared<LoopRVNode>();
  }));
  nb::class_<ExprRVNode, RVNode>(m, "ExprRV").def(nb::new_([] {
    return std::make_shared<ExprRVNode>();
  }));

  nb::class_<IndexMap>(m, "IndexMap")
      .def(nb::init<>())
      .def(
          "__init__",
          [](IndexMap* self, std::vector<Var> initial, std::vector<Expr> final_indices) {
            new (self) IndexMap{std::move(initial), std::move(final_indices)};
          },
          "initial_indices"_a, "final_indices"_a)
      .def_rw("initial_indices", &IndexMap::initial_indices)
      .def_rw("final_indices", &IndexMap::final_indices)
      .def("map_indices", &IndexMap::Apply, "indices"_a)
      .def("as_python", &IndexMap::AsPython)
      .def("is_equivalent_to", &IndexMapsEquivalent, "other_map"_a)
      .def("_inverse", &InverseIndexMap, "shape"_a)
      .def("_map_shape", &MapShape, "shape"_a)
      .def("_non_surjective_inverse", &NonSurjectiveInverse, "shape"_a)
      // (offsets, output shape): where each element of a row-major array of `shape` goes.
      .def("_map_offsets", [](const IndexMap& map, const std::vector<int64_t>& shape) {
        std::vector<int64_t> out_shape;
        std::vector<int64_t> offsets = MapIndexOffsets(map, shape, &out_shape);
        return std::make_pair(std::move(offsets), std::move(out_shape));
      }, "shape"_a);
  m.def("suggest_index_map", &SuggestIndexMap, "buffer"_a, "indices"_a, "loops"_a, "predicate"_a);
  // (mappings, [(block buffer, desc buffer)], [(desc buffer, indices)], block iters, desc
  // iters), or None.
  m.def(
      "get_auto_tensorize_mapping_info",
      [](const ScheduleState& s, const StmtSRef& block, const PrimFunc& desc) -> nb::object {
        auto info = GetAutoTensorizeMappingInfo(s, block.get(), desc);
        if (!info) return nb::none();
        return nb::make_tuple(info->mappings, info->lhs_buffer_map, info->rhs_buffer_indices,
                              info->lhs_iters, info->rhs_iters);
      },
      "state"_a, "block_sref"_a, "desc"_a);

  nb::class_<Trace>(m, "Trace")
      .def("as_python", &Trace::AsPython)
      .def("as_json", &Trace::AsJSON)
      .def(
          "apply_to_schedule",
          [](const Trace& t, Schedule& sch, bool remove_postproc) {
            t.ApplyToSchedule(&sch, remove_postproc);
          },
          "sch"_a, "remove_postproc"_a = false)
      .def_static(
          "apply_json_to_schedule",
          [](const std::string& json, Schedule& sch) { Trace::ApplyJSONToSchedule(json, &sch); },
          "json_obj"_a, "sch"_a)
      .def("__len__", [](const Trace& t) { return t.insts.size(); })
      .def_prop_ro("decisions",
                   [](const Trace& t) {
                     // (instruction index, decision) for each sampling instruction.
                     nb::list out;
                     for (size_t i = 0; i < t.insts.size(); ++i) {
                       if (t.insts[i].decision.kind == TraceValue::kNone) continue;
                       out.append(nb::make_tuple(i, FromTraceValue(t.insts[i].decision)));
                     }
                     return out;
                   })
      .def_prop_ro("kinds",
                   [](const Trace& t) {
                     std::vector<std::string> kinds;
                     for (const Instruction& i : t.insts) kinds.push_back(i.kind);
                     return kinds;
                   })
      .def("__str__", &Trace::AsPython);

  nb::class_<StmtSRefNode>(m, "StmtSRef")
      .def_prop_ro("stmt",
                   [](const StmtSRefNode& s) -> nb::object {
                     if (!s.stmt) return nb::none();
                     return nb::cast(ObjectRef(s.stmt));
                   })
      .def_prop_ro("parent",
                   [](StmtSRefNode& s) -> StmtSRef {
                     return s.parent ? s.parent->shared_from_this() : nullptr;
                   })
      .def("same_as", [](const StmtSRefNode& a, const StmtSRefNode& b) { return &a == &b; })
      .def("__hash__", [](const StmtSRefNode& a) { return reinterpret_cast<size_t>(&a); })
      .def("__eq__", [](const StmtSRefNode& a, nb::handle b) {
        return nb::isinstance<StmtSRefNode>(b) && &a == &nb::cast<const StmtSRefNode&>(b);
      });

  nb::class_<ScheduleState>(m, "ScheduleState")
      .def(
          "__init__",
          [](ScheduleState* self, IRModule mod, int debug_mask, bool enable_check) {
            new (self) ScheduleState(std::move(mod), debug_mask, enable_check);
          },
          "mod"_a, "debug_mask"_a = 0, "enable_check"_a = true)
      .def_prop_ro("mod", &ScheduleState::mod)
      .def_prop_ro("debug_mask", &ScheduleState::debug_mask)
      .def_prop_ro("enable_check", &ScheduleState::enable_check)
      .def(
          "get_sref",
          [](const ScheduleState& s, const Stmt& stmt) { return s.FindSRef(stmt.get()); }, "stmt"_a)
      .def(
          "get_cached_flags",
          [](const ScheduleState& s, const StmtSRef& block) {
            CachedFlags f = GetCachedFlags(s, block);
            return std::make_tuple(f.affine_binding, f.region_cover, f.stage_pipeline);
          },
          "block_sref"_a)
      .def(
          "block_dependencies",
          [](const ScheduleState& s, const StmtSRef& scope) {
            nb::list out;
            for (const BlockDependency& d : GetBlockDependencies(s, scope))
              out.append(nb::make_tuple(d.src, d.dst, d.kind));
            return out;
          },
          "scope_block"_a)
      .def(
          "replace",
          [](ScheduleState& s, const StmtSRef& src, const Stmt& tgt, nb::dict reuse) {
            if (!src || !src->stmt)
              TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
                  << "ScheduleState.replace: the sref no longer points into the scheduled IR";
            BlockReuse map;
            for (auto [key, value] : reuse) {
              if (!nb::isinstance<BlockNode>(key) || !nb::isinstance<BlockNode>(value))
                TESSERA_THROW_KIND(Span(), ErrorKind::kType)
                    << "ScheduleState.replace: block_sref_reuse maps a Block to a Block";
              map[nb::cast<Block>(key).get()] = nb::cast<Block>(value);
            }
            // As TVM's: a replaced block keeps its sref only through block_sref_reuse.
            s.Replace(src.get(), src->stmt.get(), tgt, map, /*keep_replaced_block_sref=*/false);
            if (s.debug_mask() != 0) s.VerifySRefTree();
          },
          "src_sref"_a, "tgt_stmt"_a, "block_sref_reuse"_a = nb::dict());

  // The recorded instructions as Python values: [(kind, [(key, value), ...], [outputs],
  // returns_list, decision)], read by tessera.tir.schedule.Trace (decision: None when the
  // instruction is not a sampling one).
  m.def(
      "tensor_intrin_check",
      [](const PrimFunc& desc, const PrimFunc& impl) { TensorIntrinNode::Make(desc, impl); },
      "desc"_a, "impl"_a);
  m.def(
      "tensor_intrin_register",
      [](const std::string& name, const PrimFunc& desc, const PrimFunc& impl, bool override) {
        RegisterTensorIntrin(name, TensorIntrinNode::Make(desc, impl), override);
      },
      "name"_a, "desc"_a, "impl"_a, "override"_a);
  m.def(
      "tensor_intrin_get",
      [](const std::string& name, bool allow_missing) -> nb::object {
        TensorIntrin t = GetTensorIntrin(name, allow_missing);
        if (!t) return nb::none();
        return nb::make_tuple(t->desc, t->impl);
      },
      "name"_a, "allow_missing"_a);
  m.def("tensor_intrin_list", &ListTensorIntrins);
  // (loop_map [(block loop sref, desc For)], desc loops, paddings or None), or None.
  m.def(
      "get_tensorize_loop_mapping",
      [](const ScheduleState& s, const StmtSRef& block, const PrimFunc& desc,
         bool allow_padding) -> nb::object {
        std::optional<TensorizeLoopMapping> m =
            GetTensorizeLoopMapping(s, block, desc, allow_padding);
        if (!m) return nb::none();
        nb::list loop_map;
        for (const auto& [sref, loop] : m->loop_map) loop_map.append(nb::make_tuple(sref, loop));
        nb::object pads = nb::none();
        if (m->block_iter_paddings) pads = nb::cast(*m->block_iter_paddings);
        return nb::make_tuple(loop_map, m->desc_loops, pads);
      },
      "state"_a, "block_sref"_a, "desc"_a, "allow_padding"_a);
  m.def(
      "is_output_block",
      [](const ScheduleState& s, const StmtSRef& block) { return IsOutputBlock(s, block); },
      "state"_a, "block_sref"_a);
  m.def("trace_instructions", [](const Trace& t) {
    nb::list out;
    for (const Instruction& inst : t.insts) {
      nb::list args, outputs;
      for (const auto& [key, value] : inst.args)
        args.append(nb::make_tuple(key, FromTraceValue(value)));
      for (const RV& rv : inst.outputs) outputs.append(nb::cast(rv));
      nb::object decision =
          inst.decision.kind == TraceValue::kNone ? nb::none() : FromTraceValue(inst.decision);
      out.append(nb::make_tuple(inst.kind, args, outputs, inst.returns_list, decision));
    }
    return out;
  });

  // A trace from such tuples (instructions built in Python: Trace(insts, decisions)).
  m.def("trace_from_instructions", [](nb::list insts) {
    Trace t;
    for (nb::handle item : insts) {
      nb::tuple tuple = nb::cast<nb::tuple>(item);
      Instruction inst;
      inst.kind = nb::cast<std::string>(tuple[0]);
      for (nb::handle arg : nb::cast<nb::list>(tuple[1])) {
        nb::tuple kv = nb::cast<nb::tuple>(arg);
        inst.args.emplace_back(nb::cast<std::string>(kv[0]), ToTraceValue(kv[1]));
      }
      for (nb::handle rv : nb::cast<nb::list>(tuple[2])) inst.outputs.push_back(nb::cast<RV>(rv));
      inst.returns_list = nb::cast<bool>(tuple[3]);
      if (tuple.size() > 4 && !tuple[4].is_none()) inst.decision = ToTraceValue(tuple[4]);
      t.insts.push_back(std::move(inst));
    }
    return t;
  });

  nb::class_<Schedule>(m, "Schedule")
      .def(
          "__init__",
          [](Schedule* self, IRModule mod, int debug_mask, const std::string& level,
             bool enable_check, int64_t seed) {
            new (self) Schedule(std::move(mod), debug_mask, ParseLevel(level), enable_check, seed);
          },
          "mod"_a, "debug_mask"_a = 0, "error_render_level"_a = "detail", "enable_check"_a = true,
          "seed"_a = -1)
      .def_prop_ro("mod", &Schedule::mod)
      .def_prop_ro("trace", [](const Schedule& s) { return s.trace(); })
      .def_prop_ro("func_working_on", &Schedule::func_working_on)
      .def("work_on", &Schedule::WorkOn, "func_name"_a)
      .def("copy", &Schedule::Copy)
      .def("get", &Schedule::Get, "rv"_a)
      .def("is_valid", &Schedule::IsValid, "rv"_a)
      .def_prop_ro("state", &Schedule::state, nb::rv_policy::reference_internal)
      .def("get_sref", &Schedule::GetSRef, "rv"_a)
      .def("seed", &Schedule::Seed, "seed"_a)
      .def("fork_seed", &Schedule::ForkSeed)
      .def("sample_categorical", &Schedule::SampleCategorical, "candidates"_a, "probs"_a,
           "decision"_a.none())
      .def("sample_perfect_tile", &Schedule::SamplePerfectTile, "loop"_a, "n"_a,
           "max_innermost_factor"_a, "decision"_a.none())
      .def("sample_partitioned_tile", &Schedule::SamplePartitionedTile, "loop"_a, "n"_a,
           "partition_pos"_a, "innerpart_factor"_a, "decision"_a.none())
      .def("sample_compute_location", &Schedule::SampleComputeLocation, "block"_a,
           "decision"_a.none())
      .def("remove_rv", &Schedule::RemoveRV, "rv"_a)
      .def("enter_postproc", &Schedule::EnterPostproc)
      .def("get_block", &Schedule::GetBlock, "name"_a, "func_name"_a = nb::none())
      .def("get_loops", &Schedule::GetLoops, "block"_a)
      .def("get_child_blocks", &Schedule::GetChildBlocks, "block_or_loop"_a)
      .def("get_producers", &Schedule::GetProducers, "block"_a)
      .def("get_consumers", &Schedule::GetConsumers, "block"_a)
      .def("get_output_blocks", &Schedule::GetOutputBlocks, "scope_block"_a)
      .def(
          "split",
          [](Schedule& s, const LoopRV& loop, nb::list factors, bool preserve, bool disable) {
            std::vector<TraceValue> fs;
            for (nb::handle f : factors) fs.push_back(ToTraceValue(f));
            return s.Split(loop, fs, preserve, disable);
          },
          "loop"_a, "factors"_a, "preserve_unit_iters"_a = true, "disable_predication"_a = false)
      .def(
          "loop_partition",
          [](Schedule& s, const LoopRV& loop, nb::list factors, bool preserve) {
            std::vector<TraceValue> fs;
            for (nb::handle f : factors) fs.push_back(ToTraceValue(f));
            return s.LoopPartition(loop, fs, preserve);
          },
          "loop"_a, "factors"_a, "preserve_unit_iters"_a = true)
      .def("fuse", &Schedule::Fuse, "loops"_a, "preserve_unit_iters"_a = true)
      .def("reorder", &Schedule::Reorder, "ordered_loops"_a)
      .def("add_unit_loop", &Schedule::AddUnitLoop, "block_or_loop"_a)
      .def("parallel", &Schedule::Parallel, "loop"_a)
      .def("vectorize", &Schedule::Vectorize, "loop"_a)
      .def("unroll", &Schedule::Unroll, "loop"_a)
      .def("bind", &Schedule::Bind, "loop"_a, "thread_axis"_a)
      .def("cache_read", &Schedule::CacheRead, "block"_a, "read_buffer_index"_a, "storage_scope"_a,
           "consumer_blocks"_a)
      .def("cache_write", &Schedule::CacheWrite, "block"_a, "write_buffer_index"_a,
           "storage_scope"_a, "consumer_blocks"_a)
      .def("compute_at", &Schedule::ComputeAt, "block"_a, "loop"_a, "preserve_unit_loops"_a,
           "index"_a)
      .def("reverse_compute_at", &Schedule::ReverseComputeAt, "block"_a, "loop"_a,
           "preserve_unit_loops"_a, "index"_a)
      .def("compute_inline", &Schedule::ComputeInline, "block"_a)
      .def("reverse_compute_inline", &Schedule::ReverseComputeInline, "block"_a)
      .def("decompose_reduction", &Schedule::DecomposeReduction, "block"_a, "loop"_a)
      .def("rfactor", &Schedule::RFactor, "loop"_a, "factor_axis"_a)
      .def("storage_align", &Schedule::StorageAlign, "block"_a, "buffer_index"_a, "axis"_a,
           "factor"_a, "offset"_a)
      .def("set_scope", &Schedule::SetScope, "block"_a, "buffer_index"_a, "storage_scope"_a)
      .def("set_axis_separator", &Schedule::SetAxisSeparator, "block"_a, "buffer_kind"_a,
           "buffer_index"_a, "axis_separators"_a)
      .def("transform_layout", &Schedule::TransformLayout, "block"_a, "buffer_kind"_a,
           "buffer_index"_a, "index_map"_a, "pad_value"_a.none(),
           "assume_injective_transform"_a = false)
      .def(
          "annotate",
          [](Schedule& s, const RV& rv, const std::string& key, nb::handle value) {
            s.Annotate(rv, key, ToTraceValue(value));
          },
          "block_or_loop"_a, "ann_key"_a, "ann_val"_a)
      .def("unannotate", &Schedule::Unannotate, "block_or_loop"_a, "ann_key"_a)
      .def("unsafe_set_dtype", &Schedule::UnsafeSetDType, "block"_a, "buffer_index"_a, "dtype"_a)
      .def("transform_block_layout", &Schedule::TransformBlockLayout, "block"_a, "index_map"_a)
      .def("merge", &Schedule::Merge, "loops"_a)
      .def("read_at", &Schedule::ReadAt, "loop"_a, "block"_a, "read_buffer_index"_a,
           "storage_scope"_a)
      .def("write_at", &Schedule::WriteAt, "loop"_a, "block"_a, "write_buffer_index"_a,
           "storage_scope"_a)
      .def("pad_einsum", &Schedule::PadEinsum, "block"_a, "padding"_a)
      .def("fuse_reduction_epilogue", &Schedule::FuseReductionEpilogue, "reduction_block"_a,
           "epilogue_block"_a)
      .def("reindex_cache_read", &Schedule::ReindexCacheRead, "block"_a, "read_buffer_index"_a,
           "storage_scope"_a, "index_map"_a)
      .def("reindex_cache_write", &Schedule::ReindexCacheWrite, "block"_a, "write_buffer_index"_a,
           "storage_scope"_a, "index_map"_a)
      .def("decompose_padding", &Schedule::DecomposePadding, "block"_a, "loop"_a)
      .def("can_decompose_padding", &Schedule::CanDecomposePadding, "block"_a, "loop"_a)
      .def("unsafe_hide_buffer_access", &Schedule::UnsafeHideBufferAccess, "block"_a,
           "buf_type"_a, "buf_index_array"_a)
      .def("annotate_buffer_access", &Schedule::AnnotateBufferAccess, "block"_a, "buffer_index"_a,
           "buf_type"_a, "gen_new_ranges"_a)
      .def("reindex", &Schedule::ReIndex, "block"_a, "buffer_kind"_a, "buffer_index"_a)
      .def("reorder_block_iter_var", &Schedule::ReorderBlockIterVar, "block"_a, "new_order"_a)
      .def("blockize", &Schedule::Blockize, "loop"_a, "preserve_unit_iters"_a)
      .def("blockize_blocks", &Schedule::BlockizeBlocks, "blocks"_a, "preserve_unit_iters"_a)
      .def("cache_inplace", &Schedule::CacheInplace, "block"_a, "read_buffer_index"_a,
           "storage_scope"_a)
      .def("cache_index", &Schedule::CacheIndex, "block"_a, "storage_scope"_a, "cse_thresh"_a)
      .def("rolling_buffer", &Schedule::RollingBuffer, "block"_a, "write_buffer_index"_a)
      .def("tensorize", &Schedule::Tensorize, "block_or_loop"_a, "tensor_intrin"_a,
           "preserve_unit_iters"_a);
}

}  // namespace bindings
}  // namespace tessera
