// read_at / write_at: the region of a buffer that the blocks under a loop read (write) in one
// iteration of it is copied into (out of) a buffer in another scope by a block placed in the
// loop's body, before the first reader (after the last writer).
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

int ScopeRank(const std::string& scope) {
  if (scope == "global") return 0;
  if (scope == "shared" || scope == "shared.dyn") return 1;
  if (scope == "warp") return 2;
  return 3;  // local
}

/*! \brief Whether a copy into `scope` (not global) covers every value of a loop bound to
 *  `tag`, as TVM decides: thread ranks (blockIdx 0; threadIdx and vthread 1) at least the
 *  scope's rank (shared 1, warp 2, local 3). */
bool RelaxesThread(const std::string& tag, const std::string& scope) {
  int rank = tag.rfind("blockIdx", 0) == 0                                    ? 0
             : tag.rfind("threadIdx", 0) == 0 || tag.rfind("vthread", 0) == 0 ? 1
                                                                              : -1;
  return rank >= 0 && ScopeRank(scope) != 0 && ScopeRank(scope) <= rank;
}

const std::string* ThreadTag(const ForNode* loop) {
  if (loop->thread_binding) return &loop->thread_binding->thread_tag;
  return nullptr;
}

}  // namespace

StmtSRef ReadWriteAt(ScheduleState& state, const StmtSRef& loop_sref, const StmtSRef& block_sref,
                     int buffer_index, const std::string& storage_scope, bool is_read) {
  const ForNode* loop = LoopOf(loop_sref);
  BlockOf(block_sref);
  if (!IsValidScope(storage_scope)) {
    Fail("Invalid storage scope '" + storage_scope + "'",
         "Invalid storage scope '" + storage_scope +
             "': expected \"global\", \"shared\", \"shared.dyn\", \"local\", \"warp\", "
             "\"lsram\", \"gsram\", "
             "or global/shared/local/warp with a tag (\"global.vtcm\")");
  }
  if (!IsAncestor(loop_sref.get(), block_sref.get())) {
    Fail(std::string(is_read ? "read_at" : "write_at") +
             ": the loop is not an ancestor of the block",
         std::string(is_read ? "read_at" : "write_at") +
             ": the loop {0} is not an ancestor of block {1}",
         {loop_sref->stmt, block_sref->stmt});
  }
  Buffer src = NthAccessBuffer(block_sref, buffer_index, !is_read);
  Buffer dst = WithNameAndScope(src, src->name + "_" + storage_scope, storage_scope);

  // Thread loops above `loop` that the copy covers entirely.
  DomMap extra;
  for (const StmtSRefNode* p = loop_sref.get(); p && p->loop(); p = p->parent) {
    const std::string* tag = ThreadTag(p->loop());
    if (tag && RelaxesThread(*tag, storage_scope)) {
      extra[p->loop()->loop_var.get()] = RangeNode::Make(p->loop()->min, p->loop()->extent);
    }
  }
  // The region each child of the loop body accesses, relaxed over one iteration of `loop`.
  std::vector<Stmt> items = BodyItems(loop->body);
  std::vector<int> r_pos, w_pos;
  BufferRegion relaxed;
  for (size_t i = 0; i < items.size(); ++i) {
    bool r = false, w = false;
    std::vector<const BlockRealizeNode*> realizes;
    std::function<void(const Stmt&)> collect = [&](const Stmt& s) {
      if (auto* realize = AsPtr<BlockRealizeNode>(s)) return realizes.push_back(realize);
      if (auto* f = AsPtr<ForNode>(s)) return collect(f->body);
      if (auto* seq = AsPtr<SeqStmtNode>(s)) {
        for (const Stmt& x : seq->seq) collect(x);
        return;
      }
      PostOrderVisit(s, [&](const ObjectRef& n) {
        if (auto* realize = AsPtr<BlockRealizeNode>(n)) realizes.push_back(realize);
      });
    };
    collect(items[i]);
    for (const BlockRealizeNode* realize : realizes) {
      const BlockNode* b = realize->block.get();
      bool has_r = false, has_w = false;
      for (const BufferRegion& x : b->reads) has_r = has_r || x->buffer == src;
      for (const BufferRegion& x : b->writes) has_w = has_w || x->buffer == src;
      r = r || has_r;
      w = w || has_w;
      if (!(is_read ? has_r : has_w)) continue;
      StmtSRef b_sref = state.GetSRef(b);
      DomMap dom = LoopDomainsBetween(loop_sref.get(), b_sref.get());
      for (const auto& [v, range] : extra) dom[v] = range;
      for (const BufferRegion& x : is_read ? b->reads : b->writes) {
        if (x->buffer != src) continue;
        BufferRegion region = RelaxRegion(RegionInLoops(state, b_sref.get(), x), dom);
        relaxed = relaxed ? UnionRegion(relaxed, region) : region;
      }
    }
    if (r) r_pos.push_back(static_cast<int>(i));
    if (w) w_pos.push_back(static_cast<int>(i));
  }
  int insert_pos, begin, end;
  if (is_read) {
    if (r_pos.empty() || (!w_pos.empty() && w_pos.back() >= r_pos.front())) {
      Fail("read_at: the buffer is written under the loop before it is read",
           "read_at requires the blocks under {0} to read " + src->name +
               " before any of them writes it",
           {loop_sref->stmt});
    }
    insert_pos = r_pos.front();
    begin = insert_pos;
    end = static_cast<int>(items.size());
  } else {
    if (w_pos.empty() || (!r_pos.empty() && r_pos.back() > w_pos.back())) {
      Fail("write_at: the buffer is read under the loop after it is written",
           "write_at requires the blocks under {0} to read " + src->name +
               " no later than they write it",
           {loop_sref->stmt});
    }
    insert_pos = w_pos.back() + 1;
    begin = 0;
    end = insert_pos;
  }
  arith::Analyzer ana;
  std::vector<Range> domain;
  for (const Range& r : relaxed->region)
    domain.push_back(RangeNode::Make(ana.Simplify(r->min), ana.Simplify(r->extent)));

  // The copy block: iterators for the loops (at and above `loop`) the region depends on.
  std::unordered_map<const VarNode*, std::pair<Var, Range>> loop_dom;
  for (const StmtSRefNode* p = loop_sref.get(); p && p->loop(); p = p->parent) {
    loop_dom[p->loop()->loop_var.get()] = {p->loop()->loop_var,
                                           RangeNode::Make(p->loop()->min, p->loop()->extent)};
  }
  VarMap bindings;
  std::vector<IterVar> iters;
  std::vector<Expr> values;
  auto bind = [&](const Expr& e) {
    PostOrderVisit(e, [&](const ObjectRef& n) {
      auto* v = AsPtr<VarNode>(n);
      if (!v || bindings.count(v) || !loop_dom.count(v)) return;
      Var iv = NewVar("v" + std::to_string(iters.size()), v->dtype);
      bindings[v] = iv;
      iters.push_back(IterVarNode::Make(loop_dom.at(v).second, iv, IterVarType::kDataPar));
      values.push_back(loop_dom.at(v).first);
    });
  };
  for (Range& r : domain) {
    bind(r->min);
    bind(r->extent);
    r = RangeNode::Make(Substitute(r->min, bindings), Substitute(r->extent, bindings));
  }
  const Buffer& from = is_read ? src : dst;
  const Buffer& to = is_read ? dst : src;
  std::vector<Var> axes;
  std::vector<Expr> indices;
  for (size_t d = 0; d < domain.size(); ++d) {
    Var ax = NewVar("ax" + std::to_string(d), DataType::Int(32));
    axes.push_back(ax);
    indices.push_back(AddE(domain[d]->min, ax));
  }
  Stmt body = BufferStoreNode::Make(to, BufferLoadNode::Make(from, indices), indices);
  for (size_t d = domain.size(); d-- > 0;) {
    body = ForNode::Make(axes[d], IntConst(DataType::Int(32), 0), domain[d]->extent,
                         ForKind::kSerial, body);
  }
  AttrMap annotations{{"auto_copy", IntImmNode::Make(DataType::Bool(), 1)}};
  Block copy = BlockNode::Make(iters, {BufferRegionNode::Make(from, domain)},
                               {BufferRegionNode::Make(to, domain)},
                               src->name + "_" + storage_scope, body, nullptr, {}, {}, annotations);
  Stmt realize = BlockRealizeNode::Make(values, IntConst(DataType::Bool(), 1), copy);

  BlockReuse reuse;
  std::vector<Stmt> new_items;
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    if (i == insert_pos) new_items.push_back(realize);
    new_items.push_back(i >= begin && i < end ? ReplaceBuffers(items[i], {{src.get(), dst}}, &reuse)
                                              : items[i]);
  }
  if (insert_pos == static_cast<int>(items.size())) new_items.push_back(realize);
  For new_loop = ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                               SeqStmtNode::Flatten(new_items), loop->thread_binding,
                               loop->annotations, loop->span);
  StmtSRef scope_root = GetScopeRoot(state, loop_sref.get());
  if (!scope_root) Fail("read_at/write_at: the loop has no enclosing block");
  StmtEditor editor;
  editor.replace[loop] = new_loop;
  EditAndAllocate(state, scope_root, &editor, dst, reuse);
  return state.GetSRef(copy.get());
}

}  // namespace schedule
}  // namespace tessera
