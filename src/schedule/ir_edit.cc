// IR editing shared by the primitives: block-recording mutators, statement edits by identity,
// buffer replacement, allocation sites and loop nests.
#include <algorithm>

#include "tessera/ir/block_access.h"
#include "tessera/ir/structural_equal.h"
#include "utils.h"

namespace tessera {
namespace schedule {

// ---- IR editing ----

Stmt BlockRecordingMutator::VisitStmt_(const BlockNode* op) {
  Stmt result = StmtExprMutator::VisitStmt_(op);
  if (result.get() != op) reuse[op] = As<BlockNode>(result);
  return result;
}

Stmt StmtEditor::VisitStmt(const Stmt& s) {
  auto it = replace.find(s.get());
  if (it != replace.end()) return it->second;
  return StmtExprMutator::VisitStmt(s);
}

Stmt StmtEditor::VisitStmt_(const SeqStmtNode* op) {
  std::vector<Stmt> items;
  bool changed = false;
  for (const Stmt& s : op->seq) {
    Stmt t = VisitStmt(s);
    changed = changed || t != s;
    if (t) items.push_back(t);
  }
  if (!changed) return GetRef(op);
  return SeqStmtNode::Flatten(items, op->span);
}

Stmt StmtEditor::EditBody(const StmtNode* owner, const Stmt& body) {
  auto it = insert.find(owner);
  if (it == insert.end()) return VisitStmt(body);
  std::vector<Stmt> original = BodyItems(body);
  std::vector<Stmt> items;
  auto inserts = it->second;
  std::stable_sort(inserts.begin(), inserts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t k = 0;
  for (size_t i = 0; i <= original.size(); ++i) {
    for (; k < inserts.size() && inserts[k].first <= static_cast<int64_t>(i); ++k) {
      items.push_back(inserts[k].second);
    }
    if (i == original.size()) break;
    Stmt t = VisitStmt(original[i]);
    if (t) items.push_back(t);
  }
  for (; k < inserts.size(); ++k) items.push_back(inserts[k].second);
  return ReplaceUnderDecls(body, SeqStmtNode::Flatten(items));
}

Stmt StmtEditor::VisitStmt_(const ForNode* op) {
  Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
  Stmt body = EditBody(op, op->body);
  if (!body) return nullptr;  // a loop whose whole body was deleted goes too
  if (body == op->body && min == op->min && extent == op->extent) return GetRef(op);
  return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                       op->annotations, op->span);
}

Stmt StmtEditor::VisitStmt_(const BlockNode* op) {
  Stmt init = op->init ? VisitStmt(op->init) : nullptr;
  Stmt body = EditBody(op, op->body);
  if (body == op->body && init == op->init) return GetRef(op);
  Block copy = CopyBlock(op);
  copy->body = body;
  copy->init = init;
  reuse[op] = copy;
  return copy;
}

StmtSRef AllocationSite(const ScheduleState& state, const StmtSRefNode* sref,
                        const BufferNode* buffer) {
  if (StmtSRef site = FindAllocatingBlock(state, sref, buffer)) return site;
  const StmtSRefNode* top = sref;
  while (top->parent) top = top->parent;
  TESSERA_ICHECK(top->block()) << "AllocationSite: the function has no root block";
  return state.GetSRef(top->stmt.get());
}

void EditAndAllocate(ScheduleState& state, const StmtSRef& site, StmtEditor* editor,
                     const std::vector<Buffer>& allocs, const BlockReuse& extra_reuse) {
  const BlockNode* old_site = site->block();
  Block result = CopyBlock(As<BlockNode>(editor->VisitStmt(site->stmt)).get());
  for (const Buffer& alloc : allocs) result->alloc_buffers.push_back(alloc);
  BlockReuse reuse = editor->reuse;
  for (const auto& [old_block, new_block] : extra_reuse) reuse[old_block] = new_block;
  reuse[old_site] = result;
  state.Replace(site.get(), old_site, result, reuse);
}

Block CopyBlock(const BlockNode* b) {
  return std::make_shared<BlockNode>(b->iter_vars, b->reads, b->writes, b->name_hint, b->body,
                                     b->init, b->alloc_buffers, b->match_buffers, b->annotations,
                                     b->span);
}

const StmtNode* LeafToRemove(const ScheduleState& state, const StmtSRef& block_sref) {
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  const StmtNode* leaf = realize.get();
  const StmtSRefNode* parent = block_sref->parent;
  while (parent && parent->loop() && parent->loop()->body.get() == leaf) {
    leaf = parent->stmt.get();
    parent = parent->parent;
  }
  if (!parent) Fail("The block is the only statement of its function and cannot be removed");
  const Stmt& body = UnderDecls(BodyOf(parent));
  if (auto* seq = AsPtr<SeqStmtNode>(body)) {
    for (const Stmt& s : seq->seq) {
      if (s.get() == leaf) return leaf;
    }
  }
  Fail("The block is the only leaf of its scope and cannot be removed",
       "The block {0} is the only leaf of its scope {1} and cannot be removed",
       {block_sref->stmt, parent->stmt});
}

namespace {
class BufferReplacer : public BufferRemapMutator<BlockRecordingMutator> {
 public:
  using BufferRemapMutator::VisitExpr_;
  using BufferRemapMutator::VisitStmt_;
  explicit BufferReplacer(const BufferMap& bmap) : bmap_(bmap) {}

  Buffer Map(const Buffer& b) const {
    auto it = bmap_.find(b.get());
    return it == bmap_.end() ? b : it->second;
  }
  BufferRegion MapRegion(const BufferRegion& r) const {
    Buffer b = Map(r->buffer);
    return b == r->buffer ? r : BufferRegionNode::Make(b, r->region, r->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* block = AsPtr<BlockNode>(s);
    Block copy = CopyBlock(block);
    bool changed = false;
    auto map_regions = [&](std::vector<BufferRegion>& regions) {
      for (BufferRegion& r : regions) {
        BufferRegion m = MapRegion(r);
        changed = changed || m != r;
        r = m;
      }
    };
    map_regions(copy->reads);
    map_regions(copy->writes);
    for (Buffer& b : copy->alloc_buffers) {
      Buffer m = Map(b);
      changed = changed || m != b;
      b = m;
    }
    for (MatchBufferRegion& m : copy->match_buffers) {
      BufferRegion src = MapRegion(m->source);
      Buffer target = Map(m->buffer);
      if (src != m->source || target != m->buffer) {
        m = MatchBufferRegionNode::Make(target, src, m->span);
        changed = true;
      }
    }
    Stmt result = changed ? Stmt(copy) : s;
    if (result.get() != op) reuse[op] = As<BlockNode>(result);
    return result;
  }

 protected:
  Buffer RemapBuffer(const Buffer& b) override { return Map(b); }

 private:
  const BufferMap& bmap_;
};
}  // namespace

Stmt ReplaceBuffers(const Stmt& s, const BufferMap& bmap, BlockReuse* reuse) {
  BufferReplacer replacer(bmap);
  Stmt result = replacer.VisitStmt(s);
  if (reuse) {
    for (const auto& [old_block, new_block] : replacer.reuse) (*reuse)[old_block] = new_block;
  }
  return result;
}

Expr ReplaceBuffers(const Expr& e, const BufferMap& bmap) {
  BufferReplacer replacer(bmap);
  return replacer.VisitExpr(e);
}

namespace {
// The regions whose extents the inference left symbolic, simplified: relaxing `v // 16` over
// `v = v_o * 16 + v_i` gives `v_o * 16 // 16` and the extent
// `(v_o * 16 + 15) // 16 - v_o * 16 // 16 + 1`, which TVM's bounds are as `v_o` and 1. Points and
// constant extents keep the index expressions as written (as TVM's).
std::vector<BufferRegion> SimplifiedRegions(const std::vector<BufferRegion>& regions) {
  std::vector<BufferRegion> out;
  for (const BufferRegion& r : regions) {
    bool changed = false;
    std::vector<Range> ranges;
    for (const Range& rg : r->region) {
      if (AsConstInt(rg->extent)) {
        ranges.push_back(rg);
        continue;
      }
      Expr lo = Simplify(rg->min), ext = Simplify(rg->extent);
      changed = changed || lo != rg->min || ext != rg->extent;
      ranges.push_back(RangeNode::Make(lo, ext, rg->span));
    }
    out.push_back(changed ? BufferRegionNode::Make(r->buffer, ranges, r->span) : r);
  }
  return out;
}
}  // namespace

Block WithInferredRegions(const Block& block, bool reads, bool writes) {
  auto [r, w] = InferBlockAccessRegions(block.get());
  r = SimplifiedRegions(r);
  w = SimplifiedRegions(w);
  Block copy = CopyBlock(block.get());
  if (reads) copy->reads = r;
  if (writes) copy->writes = w;
  return copy;
}

Stmt MakeLoopNest(const std::vector<For>& loops, Stmt body) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    const For& l = *it;
    body = ForNode::Make(l->loop_var, l->min, l->extent, l->for_kind, body, l->thread_binding,
                         l->annotations, l->span);
  }
  return body;
}

Stmt Evaluate0() { return EvaluateNode::Make(Int32(0)); }

Var NewVar(const std::string& name, DataType t) { return VarNode::Make(name, t); }

Buffer WithNameAndScope(const Buffer& b, const std::string& name, const std::string& scope) {
  DataType element = b->data->pointer ? b->data->pointer->element : b->dtype;
  Var data = VarNode::MakePointer(name, element, scope);
  Buffer out = BufferNode::Make(data, b->dtype, b->shape, b->strides, b->elem_offset, name,
                                b->data_alignment, b->offset_factor, b->span);
  out->axis_separators = b->axis_separators;
  return out;
}

bool IsValidScope(const std::string& scope) {
  // "lsram" and "gsram": the local and the shared SRAM of Compass's NPUs (DSL targets).
  static const char* const kScopes[] = {
      "global",        "shared",        "shared.dyn",       "local", "warp",
      "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator", "lsram", "gsram"};
  for (const char* s : kScopes) {
    if (scope == s) return true;
  }
  // As TVM: a memory rank with a tag ("global.vtcm", "global.texture", "local.fragment") is that
  // rank's memory, set apart for a target's own use.
  for (const char* rank : {"global.", "shared.", "local.", "warp."}) {
    size_t n = std::char_traits<char>::length(rank);
    if (scope.size() > n && scope.compare(0, n, rank) == 0) return true;
  }
  return false;
}

}  // namespace schedule
}  // namespace tessera
