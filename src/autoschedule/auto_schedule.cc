// The automatic schedule's driver: which rule takes which block, in what order.
//
//   1. inline      elementwise producers into their consumers (inline.cc)
//   2. tiling      matmul-like blocks tiled for registers and caches, their epilogue computed at
//                  the tile (multi_level_tiling.cc, epilogue.cc)
//   3. rows        reductions with the blocks of their row (softmax, layer_norm) computed per
//                  row (reduction.cc)
//   4. injective   what is left at the root: fused, parallel, vectorized (injective.cc)
#include "tessera/autoschedule/auto_schedule.h"

#include <set>

#include "rules.h"
#include "tessera/support/error.h"

namespace tessera {
namespace autoschedule {
namespace {

std::vector<BlockRV> RootBlocks(Schedule& sch, const BlockRV& root) {
  return sch.GetChildBlocks(root);
}

/*! \brief Whether a block still has the loop nest of its own that it started with (blocks a
 *  rule created or moved under another block's loops do not). */
bool OwnNest(Schedule& sch, const BlockInfo& info) {
  if (!info.block) return false;
  const size_t loops = sch.GetLoops(info.rv).size();
  if (loops == info.block->iter_vars.size()) return true;
  // A 0-d result: unit iterators and no loop.
  if (loops != 0) return false;
  for (int64_t e : info.extents) {
    if (e != 1) return false;
  }
  return true;
}

bool IsLookup(const std::string& kind) {
  return kind == "get_block" || kind == "get_loops" || kind == "get_child_blocks" ||
         kind == "get_producers" || kind == "get_consumers" || kind == "get_output_blocks";
}

void CollectRVs(const schedule::TraceValue& v, std::set<const schedule::RVNode*>* out) {
  if (v.kind == schedule::TraceValue::kRV) out->insert(v.rv.get());
  for (const schedule::TraceValue& item : v.list) CollectRVs(item, out);
}

/*! \brief The trace without the lookups whose results no primitive uses (the rules' analysis). */
schedule::Trace WithoutDeadLookups(const schedule::Trace& trace) {
  std::set<const schedule::RVNode*> used;
  std::vector<const schedule::Instruction*> kept;
  for (size_t k = trace.insts.size(); k-- > 0;) {
    const schedule::Instruction& inst = trace.insts[k];
    if (IsLookup(inst.kind)) {
      bool needed = false;
      for (const schedule::RV& rv : inst.outputs) needed = needed || used.count(rv.get());
      if (!needed) continue;
    }
    for (const auto& [name, value] : inst.args) CollectRVs(value, &used);
    kept.push_back(&inst);
  }
  schedule::Trace out;
  for (size_t k = kept.size(); k-- > 0;) out.insts.push_back(*kept[k]);
  return out;
}

/*! \brief The design space being drawn (AutoScheduleSpace), or none. */
struct SpaceDraw {
  std::vector<int64_t> given, taken, sizes;
  bool draw_missing = true;  ///< else a choice without a decision takes the preferred candidate
};
thread_local SpaceDraw* space_draw = nullptr;

}  // namespace

int64_t Choose(Schedule& sch, const std::vector<int64_t>& candidates, size_t preferred) {
  TESSERA_ICHECK(preferred < candidates.size()) << "no candidate " << preferred;
  if (space_draw == nullptr || candidates.size() == 1) return candidates[preferred];
  const size_t n = candidates.size();
  const size_t k = space_draw->taken.size();
  std::optional<int64_t> decision;
  if (k < space_draw->given.size() && space_draw->given[k] >= 0 &&
      space_draw->given[k] < static_cast<int64_t>(n)) {
    decision = space_draw->given[k];
  } else if (!space_draw->draw_missing) {
    decision = static_cast<int64_t>(preferred);
  }
  std::vector<double> probs(n, 0.5 / static_cast<double>(n - 1));
  probs[preferred] = 0.5;
  sch.SampleCategorical(candidates, probs, decision);
  int64_t index = sch.trace().insts.back().decision.integer;
  space_draw->taken.push_back(index);
  space_draw->sizes.push_back(static_cast<int64_t>(n));
  return candidates[index];
}

void AutoScheduleFunction(Schedule& sch, const std::string& func_name, const TargetFacts& facts) {
  sch.WorkOn(func_name);
  PrimFunc func = sch.mod()->Lookup(func_name);
  BlockRV root;
  if (!Try(sch, [&] { root = sch.GetBlock("root", func_name); })) return;

  InlineElementwise(sch, func, facts);

  std::set<std::string> done;
  // Window nests (reduce domains depending on the output point) take no other rule.
  for (const BlockRV& rv : RootBlocks(sch, root)) {
    BlockInfo info = AnalyzeBlock(sch, rv, func);
    if (!IsWindowNest(info) || !OwnNest(sch, info)) continue;
    done.insert(info.name);
    ScheduleWindowNest(sch, info, facts);
  }
  // Matmul-like blocks first: their epilogues join their tiles.
  // (a rule may replace a later block: the tensor-core rule's fused cast inlines into it)
  for (const BlockRV& rv : RootBlocks(sch, root)) {
    if (!sch.IsValid(rv)) continue;
    BlockInfo info = AnalyzeBlock(sch, rv, func);
    if (!info.is_reduction || done.count(info.name) || !OwnNest(sch, info)) continue;
    std::vector<std::string> taken;
    if (TileMatmulLike(sch, info, func, facts, &taken)) {
      for (const std::string& n : taken) done.insert(n);
    }
  }
  // Reductions and their rows, last block first so that each chain is taken from its end.
  std::vector<BlockRV> blocks = RootBlocks(sch, root);
  for (size_t k = blocks.size(); k-- > 0;) {
    if (!sch.IsValid(blocks[k])) continue;
    BlockInfo info = AnalyzeBlock(sch, blocks[k], func);
    if (done.count(info.name) || !OwnNest(sch, info)) continue;
    std::vector<std::string> taken;
    if (ScheduleRowChain(sch, info, func, facts, &taken)) {
      for (const std::string& n : taken) done.insert(n);
    }
  }
  // Whatever is left at the root.
  for (const BlockRV& rv : RootBlocks(sch, root)) {
    BlockInfo info = AnalyzeBlock(sch, rv, func);
    if (done.count(info.name) || !OwnNest(sch, info)) continue;
    done.insert(info.name);
    if (info.is_reduction) {
      ScheduleLoneReduction(sch, info, facts);
    } else {
      ScheduleInjective(sch, info, facts);
    }
  }
  RunDeferredDecompositions(sch);
}

namespace {

Schedule Run(const IRModule& mod, const TargetFacts& facts, int64_t seed) {
  Schedule sch(mod, 0, schedule::ErrorRenderLevel::kDetail, true, seed);
  bool any = false;
  for (const auto& [gv, func] : mod->functions) {
    if (!CarriesNoSchedule(func)) continue;
    AutoScheduleFunction(sch, gv->name_hint, facts);
    any = true;
  }
  if (!any) return sch;
  // The rules looked at the program through the schedule's lookups; the schedule returned is
  // the replay of what they decided, which also checks that the trace replays.
  Schedule out(mod, 0, schedule::ErrorRenderLevel::kDetail, true, seed);
  try {
    WithoutDeadLookups(sch.trace()).ApplyToSchedule(&out);
  } catch (const Error&) {
    return sch;  // the schedule as the rules left it, lookups and all
  }
  return out;
}

}  // namespace

Schedule AutoSchedule(const IRModule& mod, const TargetFacts& facts) {
  return Run(mod, facts, -1);
}

SpacePoint AutoScheduleSpace(const IRModule& mod, const TargetFacts& facts,
                             const std::vector<int64_t>& given, int64_t seed,
                             bool draw_missing) {
  SpaceDraw draw;
  draw.given = given;
  draw.draw_missing = draw_missing;
  TESSERA_ICHECK(space_draw == nullptr) << "AutoScheduleSpace is not reentrant";
  space_draw = &draw;
  struct Reset {
    ~Reset() { space_draw = nullptr; }
  } reset;
  Schedule sch = Run(mod, facts, seed);
  return SpacePoint{std::move(sch), std::move(draw.taken), std::move(draw.sizes)};
}

}  // namespace autoschedule
}  // namespace tessera
