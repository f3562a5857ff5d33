// transform_layout: rewrite a buffer's layout by a bijective affine index map.
#include <functional>

#include "../utils.h"
#include "tessera/arith/analyzer.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

bool IsQuasiAffineIn(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  if (AsConstInt(e)) return true;
  if (auto* v = AsPtr<VarNode>(e)) return vars.count(v) != 0;
  if (auto* b = AsPtr<BinaryNode>(e)) {
    switch (e->kind) {
      case NodeKind::kAdd:
      case NodeKind::kSub:
        return IsQuasiAffineIn(b->a, vars) && IsQuasiAffineIn(b->b, vars);
      case NodeKind::kMul:
        return (AsConstInt(b->a) && IsQuasiAffineIn(b->b, vars)) ||
               (AsConstInt(b->b) && IsQuasiAffineIn(b->a, vars));
      case NodeKind::kFloorDiv:
      case NodeKind::kFloorMod: {
        auto c = AsConstInt(b->b);
        return c && *c > 0 && IsQuasiAffineIn(b->a, vars);
      }
      default:
        return false;
    }
  }
  return false;
}

// Evaluates a quasi-affine expression at integer values of its variables.
// Whether the map is a permutation of the indices some of which are split into
// (floordiv(v, c), floormod(v, c)) with c dividing v's extent: bijective without enumeration.
bool IsSplitPermutation(const IndexMap& map, const std::vector<int64_t>& extents) {
  std::unordered_map<const VarNode*, int64_t> extent_of;
  for (size_t d = 0; d < map.initial_indices.size(); ++d)
    extent_of[map.initial_indices[d].get()] = extents[d];
  std::unordered_map<const VarNode*, int> whole;
  std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> div, mod;  // factor, count
  for (const Expr& e : map.final_indices) {
    if (auto* v = AsPtr<VarNode>(e)) {
      if (!extent_of.count(v)) return false;
      ++whole[v];
      continue;
    }
    const BinaryNode* bin = nullptr;
    if (auto* d = AsPtr<FloorDivNode>(e)) bin = d;
    if (auto* m = AsPtr<FloorModNode>(e)) bin = m;
    if (bin == nullptr) return false;
    auto* v = AsPtr<VarNode>(bin->a);
    auto c = AsConstInt(bin->b);
    if (!v || !extent_of.count(v) || !c || *c <= 0 || extent_of[v] % *c != 0) return false;
    auto& slot = AsPtr<FloorDivNode>(e) ? div[v] : mod[v];
    if (slot.second > 0 && slot.first != *c) return false;
    slot = {*c, slot.second + 1};
  }
  for (const auto& [v, extent] : extent_of) {
    bool plain = whole.count(v) && whole[v] == 1 && !div.count(v) && !mod.count(v);
    bool split = !whole.count(v) && div.count(v) && mod.count(v) && div[v].second == 1 &&
                 mod[v].second == 1 && div[v].first == mod[v].first;
    if (!plain && !split) return false;
  }
  return true;
}

int64_t Eval(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& env) {
  if (auto c = AsConstInt(e)) return *c;
  if (auto* v = AsPtr<VarNode>(e)) return env.at(v);
  auto* b = static_cast<const BinaryNode*>(e.get());
  int64_t x = Eval(b->a, env), y = Eval(b->b, env);
  switch (e->kind) {
    case NodeKind::kAdd:
      return x + y;
    case NodeKind::kSub:
      return x - y;
    case NodeKind::kMul:
      return x * y;
    case NodeKind::kFloorDiv:
      return arith::FloorDiv(x, y);
    default:
      return arith::FloorMod(x, y);
  }
}

// Rewrites every use of the buffer through the map.
class LayoutRewriter : public BlockRecordingMutator {
 public:
  using BlockRecordingMutator::VisitExpr_;
  using BlockRecordingMutator::VisitStmt_;
  LayoutRewriter(const Buffer& old_buffer, const Buffer& new_buffer, const IndexMap& map)
      : old_(old_buffer), new_(new_buffer), map_(map) {}

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer != old_) return e;
    return BufferLoadNode::Make(new_, map_.Apply(load->indices), load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer != old_) return s;
    return BufferStoreNode::Make(new_, store->value, map_.Apply(store->indices), store->predicate,
                                 store->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    Block block = CopyBlock(static_cast<const BlockNode*>(s.get()));
    bool changed = s.get() != op;
    for (auto* regions : {&block->reads, &block->writes}) {
      for (BufferRegion& r : *regions) {
        if (r->buffer != old_) continue;
        r = MapRegion(r);
        changed = true;
      }
    }
    for (Buffer& b : block->alloc_buffers) {
      if (b == old_) {
        b = new_;
        changed = true;
      }
    }
    for (MatchBufferRegion& m : block->match_buffers) {
      if (m->source->buffer != old_) continue;
      m = MatchBufferRegionNode::Make(m->buffer, MapRegion(m->source), m->span);
      changed = true;
    }
    if (!changed) return GetRef(op);
    reuse[op] = block;
    return block;
  }

  BufferRegion MapRegion(const BufferRegion& r) const {
    // Each final index relaxed over the box of the region.
    VarMap vmap;
    DomMap dom;
    for (size_t d = 0; d < map_.initial_indices.size(); ++d) {
      const Var& v = map_.initial_indices[d];
      const Range& range = r->region[d];
      if (IsConstInt(range->extent, 1)) {
        vmap[v.get()] = CastTo(v->dtype, range->min);
      } else {
        Var box = NewVar(v->name, v->dtype);
        vmap[v.get()] = AddE(CastTo(v->dtype, range->min), box);
        dom[box.get()] = RangeNode::Make(IntConst(v->dtype, 0), CastTo(v->dtype, range->extent));
      }
    }
    std::vector<Range> region;
    for (size_t d = 0; d < map_.final_indices.size(); ++d) {
      Expr e = Simplify(Substitute(map_.final_indices[d], vmap));
      auto bounds = EvalBounds(e, dom);
      if (!bounds) {
        region.push_back(RangeNode::Make(IntConst(new_->shape[d]->dtype, 0), new_->shape[d]));
        continue;
      }
      Expr extent = Simplify(AddE(SubE(bounds->second, bounds->first), IntConst(e->dtype, 1)));
      region.push_back(RangeNode::Make(bounds->first, extent));
    }
    return BufferRegionNode::Make(new_, region, r->span);
  }

 private:
  Buffer old_, new_;
  const IndexMap& map_;
};

}  // namespace

void TransformLayout(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                     bool is_write, const IndexMap& map, const Expr& pad_value) {
  const BlockNode* block = BlockOf(block_sref);
  const auto& regions = is_write ? block->writes : block->reads;
  const char* kind = is_write ? "write" : "read";
  if (buffer_index < 0 || static_cast<size_t>(buffer_index) >= regions.size()) {
    Fail(std::string("The ") + kind + " buffer index is out of range",
         std::string("The ") + kind + " buffer index " + std::to_string(buffer_index) +
             " is out of range: the block {0} has " + std::to_string(regions.size()) + " " + kind +
             " buffers",
         {block_sref->stmt});
  }
  Buffer buffer = regions[buffer_index]->buffer;
  size_t ndim = buffer->shape.size();
  if (map.initial_indices.size() != ndim) {
    Fail("The index map does not match the buffer's dimensions",
         "The index map takes " + std::to_string(map.initial_indices.size()) +
             " indices, but the "
             "buffer " +
             buffer->name + " has " + std::to_string(ndim) + " dimensions");
  }
  if (!buffer->strides.empty()) {
    Fail("The buffer has explicit strides", "The buffer " + buffer->name +
                                                " has explicit strides; "
                                                "transform_layout supports compact buffers");
  }
  std::unordered_set<const VarNode*> vars;
  DomMap dom;
  for (size_t d = 0; d < ndim; ++d) {
    const Var& v = map.initial_indices[d];
    vars.insert(v.get());
    dom[v.get()] = RangeNode::Make(IntConst(v->dtype, 0), CastTo(v->dtype, buffer->shape[d]));
  }
  for (const Expr& e : map.final_indices) {
    if (!IsQuasiAffineIn(e, vars)) {
      Fail(
          "The index map is not affine",
          "The index map is not affine: the final index " + AsScript(e) +
              " is not a quasi-affine "
              "expression (sums, products by constants, floordiv and floormod by constants) of the "
              "buffer's indices");
    }
  }
  // The shape of the image.
  std::vector<Expr> shape;
  for (const Expr& e : map.final_indices) {
    auto bounds = EvalBounds(e, dom);
    arith::Analyzer ana;
    if (!bounds || !ana.CanProveEqual(bounds->first, IntConst(bounds->first->dtype, 0))) {
      Fail("The index map's image does not start at 0",
           "The final index " + AsScript(e) + " does not range from 0 over the buffer");
    }
    shape.push_back(Simplify(AddE(bounds->second, IntConst(bounds->second->dtype, 1))));
  }
  // Bijectivity: by enumeration for constant shapes; a permutation of the indices otherwise.
  std::vector<int64_t> old_extents, new_extents;
  bool constant = true;
  for (const Expr& s : buffer->shape) {
    auto c = AsConstInt(s);
    constant = constant && c.has_value();
    old_extents.push_back(c.value_or(0));
  }
  for (const Expr& s : shape) {
    auto c = AsConstInt(s);
    constant = constant && c.has_value();
    new_extents.push_back(c.value_or(0));
  }
  int64_t old_size = 1, new_size = 1;
  for (int64_t e : old_extents) old_size *= e;
  for (int64_t e : new_extents) new_size *= e;
  if (constant && new_size == old_size && IsSplitPermutation(map, old_extents)) {
    // Bijective by construction: nothing to enumerate.
  } else if (constant && old_size <= (int64_t{1} << 22)) {
    if (new_size > old_size) {
      Fail(pad_value ? "transform_layout with padding is not supported"
                     : "The index map is not bijective: it needs padding, which requires pad_value",
           std::string("The index map maps the ") + std::to_string(old_size) + " elements of " +
               buffer->name + " into " + std::to_string(new_size) +
               (pad_value ? ": transform_layout with padding (pad_value) is not supported yet"
                          : ": it needs padding, which requires pad_value"));
    }
    std::vector<bool> seen(static_cast<size_t>(new_size), false);
    std::vector<int64_t> index(ndim, 0);
    std::unordered_map<const VarNode*, int64_t> env;
    for (int64_t flat = 0; flat < old_size; ++flat) {
      int64_t rest = flat;
      for (size_t d = ndim; d-- > 0;) {
        env[map.initial_indices[d].get()] = rest % old_extents[d];
        rest /= old_extents[d];
      }
      int64_t image = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        image = image * new_extents[d] + Eval(map.final_indices[d], env);
      if (seen[static_cast<size_t>(image)]) {
        Fail("The index map is not bijective", "The index map is not bijective over the buffer " +
                                                   buffer->name +
                                                   ": two elements map to the same place");
      }
      seen[static_cast<size_t>(image)] = true;
    }
  } else {
    std::unordered_set<const VarNode*> used;
    for (const Expr& e : map.final_indices) {
      auto* v = AsPtr<VarNode>(e);
      if (!v || !vars.count(v) || !used.insert(v).second) {
        Fail("The index map is not bijective",
             "Over a symbolic shape, transform_layout supports permutations of the indices only");
      }
    }
    if (used.size() != ndim) Fail("The index map is not bijective");
  }
  Buffer new_buffer =
      BufferNode::Make(buffer->data, buffer->dtype, shape, {}, buffer->elem_offset, buffer->name,
                       buffer->data_alignment, buffer->offset_factor, buffer->span);
  std::string func_name = state.FuncNameOf(block_sref.get());
  PrimFunc func = state.mod()->Lookup(func_name);
  LayoutRewriter rewriter(buffer, new_buffer, map);
  Stmt body = rewriter.VisitStmt(func->body);
  std::vector<std::pair<Var, Buffer>> buffer_map = func->buffer_map;
  for (auto& [param, buf] : buffer_map) {
    if (buf == buffer) buf = new_buffer;
  }
  PrimFunc result =
      PrimFuncNode::Make(func->params, buffer_map, body, func->ret_type, func->attrs, func->span);
  state.ReplaceFunc(func_name, result, rewriter.reuse);
}

}  // namespace schedule
}  // namespace tessera
