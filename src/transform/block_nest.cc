// See block_nest.h.
#include "block_nest.h"

#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/target.h"

namespace tessera {
namespace transform {

std::optional<BlockNest> AsBlockNest(const Stmt& s) {
  BlockNest nest;
  Stmt at = s;
  while (auto* loop = AsPtr<ForNode>(at)) {
    if (loop->for_kind != ForKind::kSerial || !loop->annotations.empty() ||
        !loop->HasTrivialStep() || !IsConstInt(loop->min, 0)) {
      return std::nullopt;
    }
    nest.loops.push_back(loop);
    at = loop->body;
  }
  nest.realize = AsPtr<BlockRealizeNode>(at);
  if (!nest.realize) return std::nullopt;
  nest.block = nest.realize->block.get();
  const BlockNode* b = nest.block;
  if (b->iter_vars.size() != nest.loops.size() || !b->alloc_buffers.empty() ||
      !b->match_buffers.empty() || !IsConstInt(nest.realize->predicate, 1)) {
    return std::nullopt;
  }
  for (size_t i = 0; i < nest.loops.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (nest.realize->iter_values[i].get() != nest.loops[i]->loop_var.get() || !iv->dom ||
        !IsConstInt(iv->dom->min, 0) || !AsConstInt(iv->dom->extent) ||
        !AsConstInt(nest.loops[i]->extent) ||
        *AsConstInt(iv->dom->extent) != *AsConstInt(nest.loops[i]->extent)) {
      return std::nullopt;
    }
  }
  return nest;
}

PrimFunc WithRootBody(const PrimFunc& func, const BlockRealizeNode* root_realize,
                      const std::vector<Stmt>& body, const Span& span,
                      const std::unordered_set<const BufferNode*>& dropped) {
  const BlockNode* root = root_realize->block.get();
  std::vector<Buffer> allocs;
  for (const Buffer& b : root->alloc_buffers) {
    if (!dropped.count(b.get())) allocs.push_back(b);
  }
  Stmt new_body = body.size() == 1 ? body[0] : Stmt(SeqStmtNode::Make(body, span));
  Block new_root =
      BlockNode::Make(root->iter_vars, root->reads, root->writes, root->name_hint, new_body,
                      root->init, allocs, root->match_buffers, root->annotations, root->span);
  return func->WithBody(BlockRealizeNode::Make(root_realize->iter_values, root_realize->predicate,
                                               new_root, root_realize->span));
}

IRModule RewriteUnscheduledHostFunctions(const IRModule& mod,
                                         const std::function<PrimFunc(const PrimFunc&)>& rewrite) {
  IRModule out = mod;
  for (const auto& [gv, func] : mod->functions) {
    if (!autoschedule::CarriesNoSchedule(func)) continue;
    if (FactsForTarget(func->GetStrAttr("target", "c")).IsGpu()) continue;
    PrimFunc rewritten = rewrite(func);
    if (rewritten != func) out = out->WithFunction(gv, rewritten);
  }
  return out;
}

}  // namespace transform
}  // namespace tessera
