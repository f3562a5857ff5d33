// transform_layout: rewrite a buffer's layout by a bijective affine index map.
#include <functional>

#include "../utils.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/op.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

// Whether `e` uses none of `vars` (a constant or an expression of other variables, such as a
// shape variable or a function parameter).
bool IsInvariant(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return !UsesVar(e, [&](const VarNode* v) { return vars.count(v) != 0; });
}

// Quasi-affine in `vars`: sums, products by invariants, floordiv/floormod by positive constants
// or by invariants.
bool IsQuasiAffineIn(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  if (IsInvariant(e, vars)) return true;
  if (auto* v = AsPtr<VarNode>(e)) return vars.count(v) != 0;
  if (auto* b = AsPtr<BinaryNode>(e)) {
    switch (e->kind) {
      case NodeKind::kAdd:
      case NodeKind::kSub:
        return IsQuasiAffineIn(b->a, vars) && IsQuasiAffineIn(b->b, vars);
      case NodeKind::kMul:
        return (IsInvariant(b->a, vars) && IsQuasiAffineIn(b->b, vars)) ||
               (IsInvariant(b->b, vars) && IsQuasiAffineIn(b->a, vars));
      case NodeKind::kFloorDiv:
      case NodeKind::kFloorMod: {
        auto c = AsConstInt(b->b);
        bool divisor_ok = c ? *c > 0 : IsInvariant(b->b, vars);
        return divisor_ok && IsQuasiAffineIn(b->a, vars);
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

// ---- padding: the inverse of a map of splits, and where the image holds no element ----

// One term of a final index: scale * floormod(floordiv(var + shift, lower), mod) (mod 0: none).
struct Atom {
  const VarNode* var = nullptr;
  int64_t shift = 0, lower = 1, mod = 0, scale = 1;
};

// Parses `v`, `v + k`, floordiv/floormod of those by constants, and floormod(floordiv(..)).
bool ParseAtomCore(const Expr& e, Atom* atom) {
  if (auto* v = AsPtr<VarNode>(e)) {
    atom->var = v;
    return true;
  }
  if (auto* add = AsPtr<AddNode>(e)) {
    auto k = AsConstInt(add->b);
    auto* v = AsPtr<VarNode>(add->a);
    if (!k || !v) return false;
    atom->var = v;
    atom->shift = *k;
    return true;
  }
  return false;
}

bool ParseAtom(const Expr& e, Atom* atom) {
  if (auto* mul = AsPtr<MulNode>(e)) {
    auto c = AsConstInt(mul->b);
    if (!c || *c <= 0) return false;
    atom->scale = *c;
    return ParseAtom(mul->a, atom);
  }
  if (auto* div = AsPtr<FloorDivNode>(e)) {
    auto c = AsConstInt(div->b);
    if (!c || *c <= 0) return false;
    atom->lower = *c;
    return ParseAtomCore(div->a, atom);
  }
  if (auto* mod = AsPtr<FloorModNode>(e)) {
    auto c = AsConstInt(mod->b);
    if (!c || *c <= 0) return false;
    atom->mod = *c;
    if (auto* div = AsPtr<FloorDivNode>(mod->a)) {
      auto d = AsConstInt(div->b);
      if (!d || *d <= 0) return false;
      atom->lower = *d;
      return ParseAtomCore(div->a, atom);
    }
    return ParseAtomCore(mod->a, atom);
  }
  return ParseAtomCore(e, atom);
}

int64_t Gcd(int64_t a, int64_t b) { return b == 0 ? a : Gcd(b, a % b); }

// The inverse of the map and its padding predicate, over the output axes `axes`.
struct PaddedInverse {
  std::vector<Var> axes;
  std::vector<Expr> inverse;  // one per initial index, over `axes`
  Expr predicate;             // null: no padding
};

// Analyzes maps whose final indices are each one term of a split of one index (the common
// `i // 4, i % 4`). Returns nullopt for other maps (the caller then checks bijectivity).
std::optional<PaddedInverse> InversePadded(const IndexMap& map, const std::vector<int64_t>& extents,
                                           const std::vector<Expr>& new_shape) {
  size_t nout = map.final_indices.size();
  PaddedInverse result;
  for (size_t d = 0; d < nout; ++d) {
    result.axes.push_back(NewVar("axis" + std::to_string(d), map.final_indices[d]->dtype));
  }
  // Per initial index: (lower, mod, output axis) of its terms.
  std::unordered_map<const VarNode*, std::vector<std::pair<Atom, size_t>>> atoms;
  for (size_t d = 0; d < nout; ++d) {
    const Expr& e = map.final_indices[d];
    if (AsConstInt(e)) continue;
    Atom atom;
    if (!ParseAtom(e, &atom) || atom.scale != 1) return std::nullopt;
    atoms[atom.var].push_back({atom, d});
  }
  arith::Analyzer ana;
  for (size_t d = 0; d < nout; ++d) {
    ana.Bind(result.axes[d], RangeNode::Make(IntConst(result.axes[d]->dtype, 0), new_shape[d]));
  }
  for (size_t i = 0; i < map.initial_indices.size(); ++i) {
    const Var& v = map.initial_indices[i];
    DataType t = v->dtype;
    auto it = atoms.find(v.get());
    if (it == atoms.end()) {
      if (extents[i] != 1) return std::nullopt;  // dropped index: not injective
      result.inverse.push_back(IntConst(t, 0));
      continue;
    }
    auto terms = it->second;
    std::sort(terms.begin(), terms.end(),
              [](const auto& a, const auto& b) { return a.first.lower > b.first.lower; });
    int64_t shift = terms[0].first.shift;
    int64_t factor = 1;
    for (const auto& [atom, d] : terms) {
      if (atom.shift != shift || shift < 0) return std::nullopt;
      int64_t f = atom.lower * (atom.mod ? atom.mod : 1);
      if (atom.mod == 0 && atom.lower > 1) f = atom.lower;
      factor = factor / Gcd(factor, f) * f;
    }
    // A mixed radix: the top term unbounded, each lower term's span the next's lower factor.
    if (terms[0].first.mod != 0) return std::nullopt;
    for (size_t k = 0; k < terms.size(); ++k) {
      const Atom& a = terms[k].first;
      if (k > 0 && (a.mod == 0 || a.lower * a.mod != terms[k - 1].first.lower)) return std::nullopt;
    }
    if (terms.back().first.lower != 1) return std::nullopt;
    int64_t left = shift % factor;
    if (left != shift) return std::nullopt;
    int64_t right_edge = extents[i] + left;
    int64_t right = arith::FloorMod(-right_edge, factor);
    // v + left = sum(axis * lower)
    Expr padded;
    for (const auto& [atom, d] : terms) {
      Expr term = atom.lower == 1 ? Expr(result.axes[d])
                                  : MulE(result.axes[d], IntConst(t, atom.lower));
      padded = padded ? AddE(padded, term) : term;
    }
    result.inverse.push_back(left ? SubE(padded, IntConst(t, left)) : padded);
    auto pred_of = [&](const Expr& p) { return ana.Simplify(p); };
    if (left != 0) {
      Expr p = AndE(EQNode::Make(pred_of(FloorDivE(padded, IntConst(t, factor))), IntConst(t, 0)),
                    LTNode::Make(pred_of(FloorModE(padded, IntConst(t, factor))), IntConst(t, left)));
      result.predicate = result.predicate ? Expr(OrNode::Make(result.predicate, p)) : p;
    }
    if (right != 0) {
      Expr p = AndE(EQNode::Make(pred_of(FloorDivE(padded, IntConst(t, factor))),
                                 IntConst(t, right_edge / factor)),
                    LENode::Make(IntConst(t, right_edge % factor),
                                 pred_of(FloorModE(padded, IntConst(t, factor)))));
      result.predicate = result.predicate ? Expr(OrNode::Make(result.predicate, p)) : p;
    }
  }
  return result;
}

// Retypes a map's indices to the buffer's index type (TVM's LegalizeIndexMapDType).
Expr Retype(const Expr& e, const VarMap& vmap, DataType t) {
  if (auto c = AsConstInt(e)) return IntConst(t, *c);
  if (auto* v = AsPtr<VarNode>(e)) {
    auto it = vmap.find(v);
    return it == vmap.end() ? e : it->second;
  }
  if (auto* b = AsPtr<BinaryNode>(e)) {
    Expr x = Retype(b->a, vmap, t), y = Retype(b->b, vmap, t);
    switch (e->kind) {
      case NodeKind::kAdd:
        return AddE(x, y);
      case NodeKind::kSub:
        return SubE(x, y);
      case NodeKind::kMul:
        return MulE(x, y);
      case NodeKind::kFloorDiv:
        return FloorDivE(x, y);
      case NodeKind::kFloorMod:
        return FloorModE(x, y);
      default:
        break;
    }
  }
  return Substitute(e, vmap);
}

IndexMap LegalizeDType(const IndexMap& map, const std::vector<Expr>& shape) {
  if (shape.empty()) return map;
  DataType t = shape[0]->dtype;
  bool same = true;
  for (const Var& v : map.initial_indices) same = same && v->dtype == t;
  if (same) return map;
  IndexMap out;
  VarMap vmap;
  for (const Var& v : map.initial_indices) {
    Var nv = v->dtype == t ? v : NewVar(v->name, t);
    vmap[v.get()] = nv;
    out.initial_indices.push_back(nv);
  }
  for (const Expr& e : map.final_indices) out.final_indices.push_back(Retype(e, vmap, t));
  return out;
}

// ---- the plan for the padding (TVM's four strategies) ----

struct WriteInfo {
  const BufferStoreNode* store = nullptr;
  const BlockRealizeNode* realize = nullptr;  // innermost, may be null
  std::vector<For> loopnest;                  // the loops the indices depend on
  bool row_major = false;
};

// Collects the stores to the buffer with the loops their indices depend on.
class WritePlanner : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitStmt_;
  explicit WritePlanner(const Buffer& buffer) : buffer_(buffer) {}
  std::vector<WriteInfo> writes;

  void VisitStmt_(const ForNode* op) override {
    size_t depth = loops_.size();
    depth_[op->loop_var.get()] = {depth, depth};
    loops_.push_back(GetRef(op));
    StmtExprVisitor::VisitStmt_(op);
    loops_.pop_back();
    depth_.erase(op->loop_var.get());
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockRealizeNode* saved = realize_;
    std::vector<const VarNode*> bound;
    for (size_t i = 0; i < op->iter_values.size(); ++i) {
      auto range = DepRange(op->iter_values[i]);
      if (!range) continue;
      const VarNode* v = op->block->iter_vars[i]->var.get();
      depth_[v] = *range;
      bindings_[v] = Substitute(op->iter_values[i], bindings_);
      bound.push_back(v);
    }
    realize_ = op;
    StmtExprVisitor::VisitStmt_(op);
    realize_ = saved;
    for (const VarNode* v : bound) {
      depth_.erase(v);
      bindings_.erase(v);
    }
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (op->buffer != buffer_) return;
    std::optional<std::pair<size_t, size_t>> range;
    for (const Expr& index : op->indices) {
      auto r = DepRange(index);
      if (!r) continue;
      range = range ? std::make_pair(std::min(range->first, r->first),
                                     std::max(range->second, r->second))
                    : *r;
    }
    WriteInfo info;
    info.store = op;
    info.realize = realize_;
    if (range) info.loopnest.assign(loops_.begin() + range->first, loops_.begin() + range->second + 1);
    info.row_major = [&] {
      if (info.loopnest.empty() || info.loopnest.size() != buffer_->shape.size() ||
          info.loopnest.size() != op->indices.size())
        return false;
      for (size_t i = 0; i < info.loopnest.size(); ++i) {
        const For& loop = info.loopnest[i];
        Expr index = Substitute(op->indices[i], bindings_);
        if (index != loop->loop_var || !IsConstInt(loop->min, 0) ||
            !StructuralEqual(loop->extent, buffer_->shape[i]) ||
            loop->for_kind != ForKind::kSerial)
          return false;
      }
      return true;
    }();
    writes.push_back(info);
  }

 private:
  std::optional<std::pair<size_t, size_t>> DepRange(const Expr& e) const {
    std::optional<std::pair<size_t, size_t>> range;
    UsesVar(e, [&](const VarNode* v) {
      auto it = depth_.find(v);
      if (it != depth_.end()) {
        range = range ? std::make_pair(std::min(range->first, it->second.first),
                                       std::max(range->second, it->second.second))
                      : it->second;
      }
      return false;
    });
    return range;
  }
  Buffer buffer_;
  std::vector<For> loops_;
  std::unordered_map<const VarNode*, std::pair<size_t, size_t>> depth_;
  VarMap bindings_;
  const BlockRealizeNode* realize_ = nullptr;
};

Expr IfThenElse(const Expr& cond, const Expr& a, const Expr& b) {
  return CallNode::Make(a->dtype, OpNode::Get("tir.if_then_else"), {cond, a, b});
}

// Rewrites a row-major producer of the buffer into a traversal of the new buffer that writes
// the pad value into the padding (TVM's BufferStoreReplacer).
class StoreReplacer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  StoreReplacer(const WriteInfo& info, const Buffer& new_buffer, const PaddedInverse& inv,
                const IndexMap& pad_value,
                std::unordered_map<const BlockNode*, const BlockNode*>* origin)
      : info_(info), new_buffer_(new_buffer), pad_value_(pad_value), origin_(origin) {
    predicate_ = inv.predicate;
    for (const Var& a : inv.axes) new_indices_.push_back(a);
    for (size_t i = 0; i < info.loopnest.size(); ++i)
      remap_[info.loopnest[i]->loop_var.get()] = inv.inverse[i];
    DefineBlockUpdates(inv);
  }
  bool all_replaced = true;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = remap_.find(op);
    return it == remap_.end() ? GetRef(op) : it->second;
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    bool match = op->buffer == info_.store->buffer &&
                 op->indices.size() == info_.store->indices.size();
    for (size_t i = 0; match && i < op->indices.size(); ++i)
      match = StructuralEqual(op->indices[i], info_.store->indices[i]);
    if (!match) {
      // Another store (to this buffer elsewhere or to another buffer) would run over the
      // padding as well: the producer cannot be rewritten (TVM's rule).
      all_replaced = false;
      return StmtExprMutator::VisitStmt_(op);
    }
    Expr value = VisitExpr(op->value);
    VarMap at;
    for (size_t i = 0; i < pad_value_.initial_indices.size(); ++i)
      at[pad_value_.initial_indices[i].get()] = new_indices_[i];
    Expr pad = Simplify(Substitute(pad_value_.final_indices[0], at));
    return BufferStoreNode::Make(new_buffer_, IfThenElse(predicate_, pad, value), new_indices_,
                                 nullptr, op->span);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    if (op != info_.realize || !block_updated_) return s;
    auto* realize = AsPtr<BlockRealizeNode>(s);
    Block block = CopyBlock(realize->block.get());
    block->iter_vars = new_iter_vars_;
    Record(op->block.get(), block.get());
    return BlockRealizeNode::Make(new_iter_values_, realize->predicate, block, realize->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    if (s.get() != op) Record(op, static_cast<const BlockNode*>(s.get()));
    return s;
  }

 private:
  void Record(const BlockNode* before, const BlockNode* after) {
    while (origin_->count(before)) before = origin_->at(before);
    (*origin_)[after] = before;
  }
  void DefineBlockUpdates(const PaddedInverse& inv) {
    if (!info_.realize) return;
    const BlockNode* block = info_.realize->block.get();
    const auto& old_indices = info_.store->indices;
    const auto& iters = block->iter_vars;
    if (old_indices.empty() || iters.size() < old_indices.size()) return;
    size_t start = 0;
    for (; start < iters.size() - old_indices.size(); ++start) {
      if (old_indices[0] == Expr(iters[start]->var)) break;
    }
    for (size_t i = 0; i < old_indices.size(); ++i) {
      if (old_indices[i] != Expr(iters[start + i]->var) ||
          iters[start + i]->iter_type != IterVarType::kDataPar)
        return;
    }
    VarMap to_virtual;
    std::vector<Expr> virtual_indices;
    for (size_t i = 0; i < start; ++i) {
      new_iter_vars_.push_back(iters[i]);
      new_iter_values_.push_back(info_.realize->iter_values[i]);
    }
    for (size_t i = 0; i < inv.axes.size(); ++i) {
      Var v = NewVar("v_" + inv.axes[i]->name, inv.axes[i]->dtype);
      const Expr& dim = new_buffer_->shape[i];
      new_iter_vars_.push_back(IterVarNode::Make(RangeNode::Make(IntConst(dim->dtype, 0), dim), v,
                                                 IterVarType::kDataPar));
      new_iter_values_.push_back(inv.axes[i]);
      to_virtual[inv.axes[i].get()] = v;
      virtual_indices.push_back(v);
    }
    for (size_t i = start + old_indices.size(); i < iters.size(); ++i) {
      new_iter_vars_.push_back(iters[i]);
      new_iter_values_.push_back(info_.realize->iter_values[i]);
    }
    for (size_t i = 0; i < old_indices.size(); ++i)
      remap_[static_cast<const VarNode*>(old_indices[i].get())] =
          Substitute(inv.inverse[i], to_virtual);
    predicate_ = Substitute(predicate_, to_virtual);
    new_indices_ = virtual_indices;
    block_updated_ = true;
  }

  const WriteInfo& info_;
  Buffer new_buffer_;
  const IndexMap& pad_value_;
  std::unordered_map<const BlockNode*, const BlockNode*>* origin_;
  Expr predicate_;
  std::vector<Expr> new_indices_;
  VarMap remap_;
  bool block_updated_ = false;
  std::vector<IterVar> new_iter_vars_;
  std::vector<Expr> new_iter_values_;
};

// A loop nest over the new buffer's shape with the axes as loop variables.
Stmt LoopsOver(const PaddedInverse& inv, const Buffer& buffer, Stmt body) {
  for (size_t i = inv.axes.size(); i-- > 0;) {
    body = ForNode::Make(inv.axes[i], IntConst(buffer->shape[i]->dtype, 0), buffer->shape[i],
                         ForKind::kSerial, body);
  }
  return body;
}

// A block over the new buffer's indices: (iter vars, their values, the indices).
struct PadBlockIters {
  std::vector<IterVar> iter_vars;
  std::vector<Expr> values, indices;
  VarMap to_block;
};
PadBlockIters MakePadIters(const PaddedInverse& inv, const Buffer& buffer) {
  PadBlockIters out;
  for (size_t i = 0; i < inv.axes.size(); ++i) {
    Var v = NewVar("v_" + inv.axes[i]->name, inv.axes[i]->dtype);
    const Expr& dim = buffer->shape[i];
    out.iter_vars.push_back(
        IterVarNode::Make(RangeNode::Make(IntConst(dim->dtype, 0), dim), v, IterVarType::kDataPar));
    out.values.push_back(inv.axes[i]);
    out.indices.push_back(v);
    out.to_block[inv.axes[i].get()] = v;
  }
  return out;
}

Expr PadValueAt(const IndexMap& pad_value, const std::vector<Expr>& indices) {
  VarMap at;
  for (size_t i = 0; i < pad_value.initial_indices.size(); ++i)
    at[pad_value.initial_indices[i].get()] = indices[i];
  return Simplify(Substitute(pad_value.final_indices[0], at));
}

// Rewrites every use of the buffer through the map; applies the padding plan on the way.
class LayoutRewriter : public BlockRecordingMutator {
 public:
  using BlockRecordingMutator::VisitExpr_;
  using BlockRecordingMutator::VisitStmt_;
  LayoutRewriter(const Buffer& old_buffer, const Buffer& new_buffer, const IndexMap& map)
      : old_(old_buffer), new_(new_buffer), map_(map) {}

  std::unordered_map<const StmtNode*, Stmt> loop_replacements;
  const StmtNode* insert_after = nullptr;
  Stmt epilogue;
  const BlockNode* prologue_scope = nullptr;
  Stmt prologue;
  std::unordered_map<const BlockNode*, const BlockNode*> origin;

  Stmt VisitStmt(const Stmt& s) override {
    Stmt out;
    auto it = loop_replacements.find(s.get());
    if (it != loop_replacements.end()) {
      Stmt replacement = it->second;
      loop_replacements.erase(it);
      out = VisitStmt(replacement);
    } else {
      out = BlockRecordingMutator::VisitStmt(s);
    }
    if (epilogue && s.get() == insert_after) out = SeqStmtNode::Make({out, VisitStmt(epilogue)});
    return out;
  }
  Stmt VisitStmt_(const ForNode* op) override {
    ana_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    BindUnit(op->loop_var, op->min, op->extent);
    return BlockRecordingMutator::VisitStmt_(op);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer != old_) return e;
    return BufferLoadNode::Make(new_, MapIndices(load->indices), load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer != old_) return s;
    return BufferStoreNode::Make(new_, store->value, MapIndices(store->indices), store->predicate,
                                 store->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) {
      ana_.Bind(iv->var, iv->dom);
      BindUnit(iv->var, iv->dom->min, iv->dom->extent);
    }
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
    if (op == prologue_scope && prologue) {
      block->body = SeqStmtNode::Make({prologue, block->body});
      changed = true;
    }
    if (!changed) return GetRef(op);
    const BlockNode* key = op;
    auto it = origin.find(op);
    if (it != origin.end()) key = it->second;
    reuse[key] = block;
    return block;
  }

  std::vector<Expr> MapIndices(const std::vector<Expr>& indices) {
    VarMap vmap;
    for (size_t i = 0; i < map_.initial_indices.size() && i < indices.size(); ++i) {
      vmap[map_.initial_indices[i].get()] = CastTo(map_.initial_indices[i]->dtype, indices[i]);
    }
    std::vector<Expr> out;
    for (const Expr& e : map_.final_indices) out.push_back(Substitute(e, vmap));
    // A variable of a unit range is its start (as TVM's simplification over the iterators in
    // context), except that an index which is that variable alone stays as it is.
    for (Expr& e : out) e = SimplifyIndex(e);
    return out;
  }
  Expr SimplifyIndex(const Expr& index) {
    Expr e = ana_.Simplify(index);
    if (unit_.empty() || AsPtr<VarNode>(e)) return e;
    return ana_.Simplify(DropZeroTerms(Substitute(index, unit_)));
  }
  // Folds away the products by zero and the zero terms that the substitution leaves, so that
  // the simplifier orders the remaining factors as they appear.
  static Expr DropZeroTerms(const Expr& e) {
    auto* b = AsPtr<BinaryNode>(e);
    if (!b || (e->kind != NodeKind::kAdd && e->kind != NodeKind::kMul)) return e;
    Expr x = DropZeroTerms(b->a), y = DropZeroTerms(b->b);
    bool x0 = IsConstInt(x, 0), y0 = IsConstInt(y, 0);
    if (e->kind == NodeKind::kMul) {
      if (x0 || y0) return IntConst(e->dtype, 0);
      return MulE(x, y);
    }
    if (x0) return y;
    if (y0) return x;
    return AddE(x, y);
  }

  BufferRegion MapRegion(const BufferRegion& r) {
    // Each final index relaxed over the box of the region.
    VarMap vmap;
    DomMap dom;
    bool point = true;
    for (size_t d = 0; d < map_.initial_indices.size(); ++d) {
      const Var& v = map_.initial_indices[d];
      const Range& range = r->region[d];
      if (IsConstInt(range->extent, 1)) {
        vmap[v.get()] = CastTo(v->dtype, range->min);
      } else {
        point = false;
        Var box = NewVar(v->name, v->dtype);
        vmap[v.get()] = AddE(CastTo(v->dtype, range->min), box);
        dom[box.get()] = RangeNode::Make(IntConst(v->dtype, 0), CastTo(v->dtype, range->extent));
      }
    }
    std::vector<Range> region;
    for (size_t d = 0; d < map_.final_indices.size(); ++d) {
      Expr e = Substitute(map_.final_indices[d], vmap);
      if (point) {
        e = SimplifyIndex(e);
        region.push_back(RangeNode::Make(e, IntConst(e->dtype, 1)));
        continue;
      }
      e = Simplify(e);
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
  void BindUnit(const Var& v, const Expr& min, const Expr& extent) {
    if (IsConstInt(extent, 1)) {
      unit_[v.get()] = min;
    } else {
      unit_.erase(v.get());
    }
  }
  Buffer old_, new_;
  const IndexMap& map_;
  arith::Analyzer ana_;
  VarMap unit_;
};

// Whether the pad value loads from a buffer other than `buffer`.
const BufferLoadNode* ForeignLoad(const Expr& e, const Buffer& buffer) {
  const BufferLoadNode* found = nullptr;
  class Finder : public ExprVisitor {
   public:
    Finder(const Buffer& b, const BufferLoadNode** out) : b_(b), out_(out) {}
    void VisitExpr_(const BufferLoadNode* op) override {
      if (op->buffer != b_ && !*out_) *out_ = op;
      ExprVisitor::VisitExpr_(op);
    }
    const Buffer& b_;
    const BufferLoadNode** out_;
  } finder(buffer, &found);
  finder.VisitExpr(e);
  return found;
}

}  // namespace

void TransformLayout(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                     bool is_write, const IndexMap& map_in,
                     const std::optional<IndexMap>& pad_value, bool assume_injective) {
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
  if (map_in.initial_indices.size() != ndim) {
    Fail("The index map does not match the buffer's dimensions",
         "The index map takes " + std::to_string(map_in.initial_indices.size()) +
             " indices, but the "
             "buffer " +
             buffer->name + " has " + std::to_string(ndim) + " dimensions");
  }
  IndexMap map = LegalizeDType(map_in, buffer->shape);
  if (!buffer->strides.empty()) {
    Fail("The buffer has explicit strides", "The buffer " + buffer->name +
                                                " has explicit strides; "
                                                "transform_layout supports compact buffers");
  }
  if (pad_value) {
    if (pad_value->final_indices.size() != 1) {
      Fail("pad_value must map to a single value, but its index map has " +
           std::to_string(pad_value->final_indices.size()) + " outputs");
    }
    DataType pt = pad_value->final_indices[0]->dtype;
    if (pt != buffer->dtype) {
      Fail("Type mismatch " + buffer->dtype.ToString() + " vs " + pt.ToString(),
           "Buffer " + buffer->name + " has elements of type " + buffer->dtype.ToString() +
               ", but the transformation fills padding with " + pad_value->AsPython() +
               ", which is of type " + pt.ToString());
    }
    if (const BufferLoadNode* load = ForeignLoad(pad_value->final_indices[0], buffer)) {
      Fail("pad_value loads from " + load->buffer->name + ", not from the transformed buffer",
           "pad_value " + pad_value->AsPython() + " loads from " + load->buffer->name +
               "; it may read only the buffer being transformed, " + buffer->name);
    }
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
              "expression of the buffer's indices (sums, products by constants or by expressions "
              "free of the indices, floordiv and floormod by those)");
    }
  }
  // The shape of the image. The function's buffer shapes are not negative (TVM's
  // AddShapeVarBounds), which bounds products of an index by a shape variable.
  std::string func_name = state.FuncNameOf(block_sref.get());
  PrimFunc func = state.mod()->Lookup(func_name);
  arith::Analyzer facts;
  for (const auto& [param, buf] : func->buffer_map) {
    for (const Expr& dim : buf->shape) {
      if (auto* v = AsPtr<VarNode>(dim)) facts.Bind(GetRef(v), arith::ConstIntBound{0, arith::ConstIntBound::kPosInf});
    }
  }
  std::vector<Expr> shape;
  for (const Expr& e : map.final_indices) {
    auto bounds = EvalBounds(e, dom, &facts);
    arith::Analyzer ana;
    if (!bounds || !ana.CanProveEqual(bounds->first, IntConst(bounds->first->dtype, 0))) {
      Fail("The index map's image does not start at 0",
           "The final index " + AsScript(e) + " does not range from 0 over the buffer");
    }
    shape.push_back(Simplify(AddE(bounds->second, IntConst(bounds->second->dtype, 1))));
  }
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
  std::optional<PaddedInverse> padded;
  if (!assume_injective) {
    int64_t old_size = 1, new_size = 1;
    for (int64_t e : old_extents) old_size *= e;
    for (int64_t e : new_extents) new_size *= e;
    if (constant && new_size > old_size) padded = InversePadded(map, old_extents, shape);
    if (padded && padded->predicate) {
      if (!pad_value) {
        Fail("Transformation would introduce padding at " + AsScript(padded->predicate) + ".",
             "The transformation " + map.AsPython() + " applied on buffer " + buffer->name +
                 " would introduce padding wherever " + AsScript(padded->predicate) +
                 " is true; pass pad_value to fill it");
      }
    } else if (constant && IsSplitPermutation(map, old_extents) && new_size == old_size) {
      // Bijective by construction: nothing to enumerate.
    } else if (constant && old_size <= (int64_t{1} << 22)) {
      if (new_size > old_size) {
        Fail(pad_value ? "transform_layout with this padding is not supported"
                       : "Transformation would introduce padding",
             std::string("The index map maps the ") + std::to_string(old_size) + " elements of " +
                 buffer->name + " into " + std::to_string(new_size) +
                 (pad_value ? ": padding is supported for maps that split indices "
                              "(i // c, i % c) only"
                            : ": it needs padding, which requires pad_value"));
      }
      std::vector<bool> seen(static_cast<size_t>(new_size), false);
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
               "Over a symbolic shape, transform_layout supports permutations of the indices "
               "only (or assume_injective_transform=True)");
        }
      }
      if (used.size() != ndim) Fail("The index map is not bijective");
    }
  }
  Buffer new_buffer =
      BufferNode::Make(buffer->data, buffer->dtype, shape, {}, buffer->elem_offset, buffer->name,
                       buffer->data_alignment, buffer->offset_factor, buffer->span);
  new_buffer->axis_separators = buffer->axis_separators;
  LayoutRewriter rewriter(buffer, new_buffer, map);
  if (pad_value && padded && padded->predicate) {
    WritePlanner planner(buffer);
    planner.VisitStmt(func->body);
    const PaddedInverse& inv = *padded;
    if (planner.writes.empty()) {
      // An input: assume the padding holds the pad value.
      PadBlockIters it = MakePadIters(inv, new_buffer);
      Expr pred = Substitute(inv.predicate, it.to_block);
      Expr pad = PadValueAt(*pad_value, it.indices);
      Expr cond = OrNode::Make(NotNode::Make(pred),
                               EQNode::Make(BufferLoadNode::Make(new_buffer, it.indices), pad));
      Stmt body = EvaluateNode::Make(CallNode::Make(DataType::Bool(), OpNode::Get("tir.assume"), {cond}));
      std::vector<Range> point;
      for (const Expr& i : it.indices) point.push_back(RangeNode::Make(i, IntConst(i->dtype, 1)));
      Block b = BlockNode::Make(it.iter_vars, {BufferRegionNode::Make(new_buffer, point)}, {},
                                "buffer_" + buffer->name + "_assumptions", body);
      rewriter.prologue = LoopsOver(inv, new_buffer, BlockRealizeNode::Make(it.values, Bool(true), b));
      StmtSRef site = FindAllocatingBlock(state, block_sref.get(), buffer.get());
      rewriter.prologue_scope = site ? BlockOf(site) : nullptr;
      if (!rewriter.prologue_scope) {
        auto* root = AsPtr<BlockRealizeNode>(func->body);
        rewriter.prologue_scope = root ? root->block.get() : nullptr;
      }
      if (!rewriter.prologue_scope) Fail("transform_layout: the function has no root block");
    } else {
      for (const WriteInfo& info : planner.writes) {
        if (!info.row_major) continue;
        StoreReplacer replacer(info, new_buffer, inv, *pad_value, &rewriter.origin);
        Stmt body = replacer.VisitStmt(info.loopnest.back()->body);
        if (!replacer.all_replaced) continue;
        rewriter.loop_replacements[info.loopnest.front().get()] = LoopsOver(inv, new_buffer, body);
      }
      if (rewriter.loop_replacements.empty()) {
        // A block after the last write fills the padding.
        PadBlockIters it = MakePadIters(inv, new_buffer);
        Stmt store = BufferStoreNode::Make(new_buffer, PadValueAt(*pad_value, it.indices), it.indices);
        std::vector<Range> point;
        for (const Expr& i : it.indices) point.push_back(RangeNode::Make(i, IntConst(i->dtype, 1)));
        Block b = BlockNode::Make(it.iter_vars, {}, {BufferRegionNode::Make(new_buffer, point)},
                                  "buffer_" + buffer->name + "_padding", store);
        rewriter.epilogue =
            LoopsOver(inv, new_buffer, BlockRealizeNode::Make(it.values, inv.predicate, b));
        const WriteInfo& last = planner.writes.back();
        rewriter.insert_after = !last.loopnest.empty()
                                    ? static_cast<const StmtNode*>(last.loopnest.front().get())
                                    : static_cast<const StmtNode*>(last.realize);
        if (!rewriter.insert_after) Fail("transform_layout: a write of the buffer is outside any block");
      }
    }
  }
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
