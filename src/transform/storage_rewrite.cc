// tir.StorageRewrite: allocations of one scope whose lifetimes do not overlap share storage.
// As in TVM v0.23, allocations first move to the top of their attach scope (the function, or the
// body of a parallel loop or a thread launch) out of serial loops, branches and while loops.
// As in TVM: an allocation whose last use is the statement that first writes another can share
// with it when that statement is an in-place elementwise operation (each element of the new
// buffer written from the same element of the old one only), and an allocation that nothing
// uses goes, with its declarations.
// Special memories (a storage scope with a tag, "local.L0A"; not ".dyn", ".workspace" or ".vtcm")
// follow TVM's rules for them: buffers of any type share storage when their sizes are within a
// factor of 16 (a smaller free slot only with the same type), and every slot of the scope is then
// laid out in one allocation, each at an offset in bits aligned to the memory's widest vector
// access (its MemoryInfo's max_simd_bits, else 32), bounded by its capacity (max_num_bits).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

/*! \brief `s` as a T, or null (AsPtr for a raw statement pointer). */
template <class T>
const T* NodeAs(const StmtNode* s) {
  return IsInstance<T>(s) ? static_cast<const T*>(s) : nullptr;
}

// Points accesses to the storage of another variable of the same element type.
class DataRemapper : public BufferRemapMutator<> {
 public:
  explicit DataRemapper(std::unordered_map<const VarNode*, Var> vars) : vars_(std::move(vars)) {}
  using BufferRemapMutator::VisitExpr_;
  using BufferRemapMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef(op) : it->second;
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt body = VisitStmt(op->body);
    Buffer b = Remap(op->buffer);
    if (b == op->buffer && body == op->body) return GetRef(op);
    return DeclBufferNode::Make(b, body, op->span);
  }

  Buffer Remap(const Buffer& b) {
    auto it = vars_.find(b->data.get());
    if (it == vars_.end()) return b;
    auto c = buffers_.find(b.get());
    if (c != buffers_.end()) return c->second;
    Buffer nb = WithData(b, it->second);
    buffers_[b.get()] = nb;
    keep_.push_back(b);
    return nb;
  }

 protected:
  Buffer RemapBuffer(const Buffer& b) override { return Remap(b); }

 private:
  std::unordered_map<const VarNode*, Var> vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
  std::vector<Buffer> keep_;
};

bool SameExtents(const AllocateNode* a, const AllocateNode* b) {
  if (a->extents.size() != b->extents.size()) return false;
  for (size_t i = 0; i < a->extents.size(); ++i) {
    if (AsConstInt(a->extents[i]) != AsConstInt(b->extents[i])) return false;
  }
  return true;
}

/*!
 * \brief Whether `stmt` writes `dst` in place of `src`: a nest of loops of constant extents
 *  around one store to `dst` whose indices visit each element once (a bijective affine map of
 *  the loops; or a single store without loops), with every load of `src` in its value at the
 *  same indices of a buffer of the same shape, no load of `dst` and no other use of either. The
 *  old element is then read before its place is written, and never again.
 */
bool InPlace(const StmtNode* stmt, const AllocateNode* src, const AllocateNode* dst) {
  std::vector<arith::IterDomain> loops;
  const StmtNode* s = stmt;
  while (auto* loop = NodeAs<ForNode>(s)) {
    auto min = AsConstInt(loop->min), extent = AsConstInt(loop->extent);
    if (!min || !extent || loop->for_kind == ForKind::kThreadBinding) return false;
    loops.push_back({loop->loop_var, *min, *extent});
    s = loop->body.get();
  }
  auto* store = NodeAs<BufferStoreNode>(s);
  if (!store || store->predicate || store->buffer->data.get() != dst->buffer_var.get() ||
      !store->buffer->strides.empty()) {
    return false;
  }
  // A single store (no loop of its own) writes one element, the one it reads.
  if (!loops.empty()) {
    auto map = arith::DetectIterMap(store->indices, loops);
    if (!map || !arith::IsBijective(*map, loops)) return false;
  }
  bool ok = true;
  PostOrderVisit(store->value, [&](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) {
      ok = ok && v != src->buffer_var.get() && v != dst->buffer_var.get();
    } else if (auto* load = AsPtr<BufferLoadNode>(n)) {
      const VarNode* data = load->buffer->data.get();
      if (data == dst->buffer_var.get()) ok = false;
      if (data != src->buffer_var.get()) return;
      ok = ok && !load->predicate && load->buffer->strides.empty() &&
           load->indices.size() == store->indices.size() &&
           load->buffer->shape.size() == store->buffer->shape.size();
      // (One flat index names the same element whatever the two extents.)
      bool flat = load->indices.size() == 1;
      for (size_t i = 0; ok && i < load->indices.size(); ++i) {
        ok = StructuralEqual(load->indices[i], store->indices[i]) &&
             (flat || (AsConstInt(load->buffer->shape[i]).has_value() &&
                       AsConstInt(load->buffer->shape[i]) == AsConstInt(store->buffer->shape[i])));
      }
    }
  });
  return ok;
}

// Attach scopes: the function body, and the bodies of the statements whose iterations (or
// threads) each need storage of their own: parallel and thread-bound loops, thread launches
// (thread_extent, virtual_thread) and "pragma_scope" parallel launch points.
bool IsAttachScope(const StmtNode* s) {
  if (auto* loop = NodeAs<ForNode>(s)) {
    return loop->for_kind == ForKind::kParallel || loop->for_kind == ForKind::kThreadBinding;
  }
  if (auto* attr = NodeAs<AttrStmtNode>(s)) {
    return attr->attr_key == "thread_extent" || attr->attr_key == "virtual_thread" ||
           attr->attr_key == "pragma_scope";
  }
  return false;
}

// Statements that open a scope of their own for lifetimes (TVM's linear access pattern).
bool OpensScope(const StmtNode* s) {
  return NodeAs<ForNode>(s) || NodeAs<WhileNode>(s) || NodeAs<IfThenElseNode>(s) ||
         IsAttachScope(s);
}

/*!
 * \brief The lifetimes of the allocations of one attach scope, as TVM measures them: every
 *  statement gets a position in program order (a scope statement one before and one after its
 *  body); a use of a buffer counts for the whole statement, at the level where the buffer is
 *  allocated, that holds it (so a buffer allocated outside a loop and used in it lives across
 *  the whole loop, one allocated inside it only within an iteration).
 */
class Liveness : public StmtExprVisitor {
 public:
  struct Life {
    int first = -1, last = -1;
    const StmtNode* first_stmt = nullptr;
    const StmtNode* last_stmt = nullptr;
  };
  std::unordered_map<const VarNode*, Life> lives;

  void Run(const Stmt& body) {
    frames_.push_back({});
    Walk(body);
    frames_.pop_back();
    for (auto& [var, uses] : uses_) {
      Life& life = lives[var];
      for (const StmtNode* s : uses) {
        auto [pre, end] = range_[s];
        if (life.first < 0 || pre < life.first) {
          life.first = pre;
          life.first_stmt = s;
        }
        if (end > life.last) {
          life.last = end;
          life.last_stmt = s;
        }
      }
    }
  }

  using StmtExprVisitor::VisitExpr_;
  void VisitExpr_(const VarNode* op) override { Touch(op); }
  void VisitExpr_(const BufferLoadNode* op) override {
    Touch(op->buffer->data.get());
    StmtExprVisitor::VisitExpr_(op);
  }

 private:
  struct Frame {
    const StmtNode* top = nullptr;
  };

  void Touch(const VarNode* v) {
    auto it = level_.find(v);
    if (it == level_.end()) return;
    const StmtNode* top = frames_[it->second].top;
    if (top) uses_[v].push_back(top);
  }

  // A statement at the current level that the lifetimes count as one step (or a scope).
  void Step(const StmtNode* s, const std::function<void()>& visit_own,
            const std::function<void()>& visit_body) {
    frames_.back().top = s;
    int pre = pos_++;
    visit_own();
    if (visit_body) {
      frames_.push_back({});
      visit_body();
      frames_.pop_back();
    }
    range_[s] = {pre, visit_body ? pos_++ : pre};
  }

  void Walk(const Stmt& s) {
    if (!s) return;
    if (auto* seq = AsPtr<SeqStmtNode>(s)) {
      for (const Stmt& x : seq->seq) Walk(x);
    } else if (auto* a = AsPtr<AllocateNode>(s)) {
      level_[a->buffer_var.get()] = frames_.size() - 1;
      Walk(a->body);
    } else if (auto* d = AsPtr<DeclBufferNode>(s)) {
      Walk(d->body);
    } else if (auto* c = AsPtr<AllocateConstNode>(s)) {
      Walk(c->body);
    } else if (auto* let = AsPtr<LetStmtNode>(s)) {
      Step(let, [&] { VisitExpr(let->value); }, nullptr);
      Walk(let->body);
    } else if (auto* as = AsPtr<AssertStmtNode>(s)) {
      Step(as, [&] { VisitExpr(as->condition); VisitExpr(as->message); }, nullptr);
      Walk(as->body);
    } else if (auto* attr = AsPtr<AttrStmtNode>(s); attr && !OpensScope(attr)) {
      Step(attr, [&] { if (attr->value) VisitExpr(attr->value); }, nullptr);
      Walk(attr->body);
    } else if (auto* loop = AsPtr<ForNode>(s)) {
      Step(loop, [&] { VisitExpr(loop->min); VisitExpr(loop->extent); },
           [&] { Walk(loop->body); });
    } else if (auto* w = AsPtr<WhileNode>(s)) {
      Step(w, [&] { VisitExpr(w->condition); }, [&] { Walk(w->body); });
    } else if (auto* i = AsPtr<IfThenElseNode>(s)) {
      Step(i, [&] { VisitExpr(i->condition); }, [&] {
        Walk(i->then_case);
        Walk(i->else_case);
      });
    } else if (auto* attr2 = AsPtr<AttrStmtNode>(s)) {
      Step(attr2, [&] { if (attr2->value) VisitExpr(attr2->value); }, [&] { Walk(attr2->body); });
    } else {
      // A leaf: a store, an evaluation, ... (a store's own buffer counts as a use).
      Step(s.get(), [&] {
        if (auto* store = AsPtr<BufferStoreNode>(s)) Touch(store->buffer->data.get());
        StmtExprVisitor::VisitStmt(s);
      }, nullptr);
    }
  }

  std::vector<Frame> frames_;
  int pos_ = 0;
  std::unordered_map<const VarNode*, size_t> level_;
  std::unordered_map<const VarNode*, std::vector<const StmtNode*>> uses_;
  std::unordered_map<const StmtNode*, std::pair<int, int>> range_;
};

// Takes the allocations that can move to the top of one attach scope out of it, in order of
// appearance: no annotations, no condition, extents that use no variable defined inside the
// scope. Nested attach scopes are not entered; `nested` rewrites their bodies.
class Hoister : public StmtMutator {
 public:
  /*! \brief `top`: the allocations that open the scope already (they stay where they are). */
  Hoister(std::function<Stmt(const Stmt&)> nested, std::unordered_set<const AllocateNode*> top)
      : nested_(std::move(nested)), top_(std::move(top)) {}
  using StmtMutator::VisitStmt_;
  std::vector<const AllocateNode*> hoisted;

  Stmt VisitStmt_(const AllocateNode* op) override {
    bool ok = op->annotations.empty() && op->buffer_var->pointer &&
              (!op->condition || IsConstInt(op->condition, 1));
    for (const Expr& e : op->extents) {
      ok = ok && !UsesVar(e, [this](const VarNode* v) { return defined_.count(v) != 0; });
    }
    if (ok) hoisted.push_back(op);
    Stmt body = VisitStmt(op->body);
    if (ok && !top_.count(op)) return body;
    if (body == op->body) return GetRef(op);
    return AllocateNode::Make(op->buffer_var, op->dtype, op->extents, op->condition, body,
                              op->annotations, op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    if (!IsAttachScope(op)) {
      defined_.insert(op->loop_var.get());
      return StmtMutator::VisitStmt_(op);
    }
    Stmt body = nested_(op->body);
    if (body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                         op->thread_binding, op->annotations, op->span, op->step);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (!IsAttachScope(op)) return StmtMutator::VisitStmt_(op);
    Stmt body = nested_(op->body);
    if (body == op->body) return GetRef(op);
    return AttrStmtNode::Make(op->node, op->attr_key, op->value, body, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    defined_.insert(op->var.get());
    return StmtMutator::VisitStmt_(op);
  }

 private:
  std::function<Stmt(const Stmt&)> nested_;
  std::unordered_set<const AllocateNode*> top_;
  std::unordered_set<const VarNode*> defined_;
};

// The allocations that stay at the top of the scope: dropped when merged into another or unused,
// resized for the largest buffer sharing them.
class TopAllocFixer : public StmtMutator {
 public:
  TopAllocFixer(const std::unordered_set<const VarNode*>& drop,
                const std::unordered_map<const AllocateNode*, std::vector<Expr>>& extents)
      : drop_(drop), extents_(extents) {}
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const AllocateNode* op) override {
    if (drop_.count(op->buffer_var.get())) return VisitStmt(op->body);
    Stmt body = VisitStmt(op->body);
    auto it = extents_.find(op);
    if (it == extents_.end() && body == op->body) return GetRef(op);
    return AllocateNode::Make(op->buffer_var, op->dtype,
                              it == extents_.end() ? op->extents : it->second, op->condition, body,
                              op->annotations, op->span);
  }

 private:
  const std::unordered_set<const VarNode*>& drop_;
  const std::unordered_map<const AllocateNode*, std::vector<Expr>>& extents_;
};

// Drops the declarations of the buffers over `vars`.
class DeclDropper : public StmtMutator {
 public:
  explicit DeclDropper(const std::unordered_set<const VarNode*>& vars) : vars_(vars) {}
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    if (vars_.count(op->buffer->data.get())) return VisitStmt(op->body);
    return StmtMutator::VisitStmt_(op);
  }

 private:
  const std::unordered_set<const VarNode*>& vars_;
};

// The tag of a storage scope: what follows its rank ("local.L0A" -> ".L0A"), "" for none.
std::string ScopeTag(const std::string& scope) {
  for (const char* rank : {"global", "shared", "local", "warp"}) {
    std::string r(rank);
    if (scope.compare(0, r.size(), r) == 0) return scope.substr(r.size());
  }
  return "";
}

// A special memory as TVM counts one: a tagged scope other than dynamic shared memory, the
// workspace and VTCM. Only flat (one extent) allocations of a scalar type take part here.
bool IsSpecialMemory(const AllocateNode* a) {
  if (!a->buffer_var->pointer || a->extents.size() != 1 || !a->dtype.is_scalar()) return false;
  std::string tag = ScopeTag(a->buffer_var->pointer->scope);
  return !tag.empty() && tag != ".dyn" && tag != ".workspace" && tag != ".vtcm";
}

int64_t ConstBits(const AllocateNode* a) {
  return *AsConstInt(a->extents[0]) * a->dtype.bits() * a->dtype.lanes();
}

struct SpecialAlloc {
  const AllocateNode* node;
  Liveness::Life life;
};

/*!
 * \brief Plans the allocations of special memories. In order of first use, an allocation takes
 *  the slot of a buffer it writes in place of (same type, the old one's last use), else a free
 *  slot of its scope: the smallest at least as large (up to 16 times), of any type, else the
 *  largest smaller one (down to a 16th) of its type, else a new slot. Then the slots of each
 *  scope are laid end to end in the first one's allocation.
 */
void PlanSpecialMemory(const std::vector<SpecialAlloc>& allocs, const MemoryInfoLookup& lookup,
                       std::unordered_map<const VarNode*, Var>* remap,
                       std::unordered_map<const VarNode*, int64_t>* bit_offsets,
                       std::unordered_map<const AllocateNode*, std::vector<Expr>>* new_extents) {
  struct Slot {
    const AllocateNode* first;
    std::string scope;
    int64_t nbits;
    std::vector<const AllocateNode*> members;
    const SpecialAlloc* occupant;
    bool free = false;
  };
  std::vector<std::unique_ptr<Slot>> slots;
  std::multimap<int64_t, Slot*> free_slots;
  std::vector<const SpecialAlloc*> order;
  for (const SpecialAlloc& a : allocs) order.push_back(&a);
  std::stable_sort(order.begin(), order.end(), [](const SpecialAlloc* x, const SpecialAlloc* y) {
    return x->life.first < y->life.first;
  });
  std::vector<Slot*> live;
  for (const SpecialAlloc* a : order) {
    const std::string& scope = a->node->buffer_var->pointer->scope;
    int64_t nbits = ConstBits(a->node);
    // Slots whose buffer is dead by now become free, in the order the buffers die.
    std::stable_sort(live.begin(), live.end(), [](const Slot* x, const Slot* y) {
      return x->occupant->life.last < y->occupant->life.last;
    });
    std::vector<Slot*> still;
    for (Slot* s : live) {
      if (s->occupant->life.last < a->life.first) {
        free_slots.insert({s->nbits, s});
      } else {
        still.push_back(s);
      }
    }
    live = std::move(still);
    Slot* chosen = nullptr;
    for (Slot* s : live) {
      if (s->scope == scope && s->occupant->node->dtype == a->node->dtype &&
          s->occupant->life.last_stmt == a->life.first_stmt &&
          InPlace(a->life.first_stmt, s->occupant->node, a->node)) {
        chosen = s;
        break;
      }
    }
    if (!chosen) {
      auto take = [&](std::multimap<int64_t, Slot*>::iterator it) {
        chosen = it->second;
        free_slots.erase(it);
        live.push_back(chosen);
      };
      auto mid = free_slots.lower_bound(nbits);
      for (auto it = mid; it != free_slots.end() && it->first <= nbits * 16; ++it) {
        if (it->second->scope == scope) {
          take(it);
          break;
        }
      }
      if (!chosen) {
        for (auto it = mid; it != free_slots.begin();) {
          --it;
          if (it->first < nbits / 16) break;
          if (it->second->scope == scope &&
              it->second->first->dtype.element_of() == a->node->dtype.element_of()) {
            take(it);
            break;
          }
        }
      }
    }
    if (chosen) {
      chosen->nbits = std::max(chosen->nbits, nbits);
      chosen->occupant = a;
      chosen->members.push_back(a->node);
      continue;
    }
    slots.push_back(std::make_unique<Slot>(Slot{a->node, scope, nbits, {a->node}, a}));
    live.push_back(slots.back().get());
  }
  // Each scope's slots end to end, every start aligned.
  std::map<std::string, std::vector<Slot*>> by_scope;
  for (const auto& s : slots) by_scope[s->scope].push_back(s.get());
  for (auto& [scope, group] : by_scope) {
    std::optional<MemoryInfo> info = lookup ? lookup(scope) : std::nullopt;
    int64_t align = info && info->max_simd_bits > 0 ? info->max_simd_bits : 32;
    auto round = [align](int64_t bits) { return (bits + align - 1) / align * align; };
    const AllocateNode* head = group[0]->first;
    int64_t total = 0;
    for (Slot* s : group) {
      int64_t offset = total;
      total = round(total + s->nbits);
      for (const AllocateNode* m : s->members) {
        if (m != head) (*remap)[m->buffer_var.get()] = head->buffer_var;
        if (offset != 0) (*bit_offsets)[m->buffer_var.get()] = offset;
      }
    }
    if (group.size() == 1) total = group[0]->nbits;
    if (info && info->max_num_bits > 0 && total > info->max_num_bits) {
      TESSERA_THROW_KIND(head->span, ErrorKind::kValue)
          << "tir.StorageRewrite: the buffers of the storage scope \"" << scope << "\" need "
          << total << " bits, more than the " << info->max_num_bits
          << " bits its memory info allows";
    }
    int64_t type_bits = head->dtype.bits() * head->dtype.lanes();
    int64_t size = (total + type_bits - 1) / type_bits;
    if (size != *AsConstInt(head->extents[0])) {
      (*new_extents)[head] = {MakeConst(head->extents[0]->dtype, size)};
    }
  }
}

// Accesses of buffers laid out at an offset (in bits) inside another allocation: their (flat)
// index moves by the offset in elements of the access's type.
class OffsetAccesses : public StmtExprMutator {
 public:
  explicit OffsetAccesses(const std::unordered_map<const VarNode*, int64_t>& bits) : bits_(bits) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto idx = Shift(load->buffer, load->indices);
    if (!idx) return e;
    return BufferLoadNode::Make(load->buffer, *idx, load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto idx = Shift(store->buffer, store->indices);
    if (!idx) return s;
    return BufferStoreNode::Make(store->buffer, store->value, *idx, store->predicate, store->span);
  }

 private:
  std::optional<std::vector<Expr>> Shift(const Buffer& b, std::vector<Expr> indices) {
    auto it = bits_.find(b->data.get());
    if (it == bits_.end() || indices.size() != 1) return std::nullopt;
    int64_t elem = b->dtype.bits() * b->dtype.lanes();
    Expr& i = indices[0];
    DataType t = i->dtype.element_of();
    Expr k = MakeConst(t, it->second / elem);
    if (i->dtype.is_vector()) k = BroadcastNode::Make(k, i->dtype.lanes());
    i = SimplifyExpr(AddNode::Make(k, i));
    return indices;
  }
  const std::unordered_map<const VarNode*, int64_t>& bits_;
};

/*!
 * \brief One attach scope: its allocations move to its top (as in TVM, so that storage is
 *  planned once for the scope), those that nothing uses go, and those of one type and memory
 *  scope, of constant size, whose lifetimes do not overlap share one allocation, sized for the
 *  largest (a lifetime may end in the statement where the next begins when that statement
 *  writes the new buffer in place of the old one).
 */
Stmt RewriteScope(const Stmt& body, const MemoryInfoLookup& lookup) {
  std::unordered_set<const AllocateNode*> top;
  for (Stmt cur = body; cur;) {
    if (auto* a = AsPtr<AllocateNode>(cur)) {
      top.insert(a);
      cur = a->body;
    } else if (auto* d = AsPtr<DeclBufferNode>(cur)) {
      cur = d->body;
    } else {
      break;
    }
  }
  Hoister hoister([&lookup](const Stmt& b) { return RewriteScope(b, lookup); }, top);
  Stmt rest = hoister.VisitStmt(body);
  if (hoister.hoisted.empty()) return rest;
  Liveness liveness;
  liveness.Run(body);
  struct Alloc {
    const AllocateNode* node;
    int64_t size = 0;
    Liveness::Life life;
  };
  std::vector<Alloc> allocs;
  std::unordered_set<const VarNode*> unused;
  for (const AllocateNode* a : hoister.hoisted) {
    const VarNode* v = a->buffer_var.get();
    auto it = liveness.lives.find(v);
    if (it == liveness.lives.end() && !UsesVar(rest, [v](const VarNode* u) { return u == v; })) {
      unused.insert(v);
      continue;
    }
    int64_t size = 1;
    bool constant = it != liveness.lives.end();
    for (const Expr& e : a->extents) {
      auto c = AsConstInt(e);
      constant = constant && c.has_value();
      size *= c ? *c : 1;
    }
    if (constant) allocs.push_back({a, size, it->second});
  }
  // Greedy: in order of first use, take a slot of the same type and scope that is free.
  std::vector<const Alloc*> order;
  std::vector<const AllocateNode*> special;
  for (const Alloc& a : allocs) {
    if (IsSpecialMemory(a.node)) {
      special.push_back(a.node);
    } else {
      order.push_back(&a);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Alloc* x, const Alloc* y) { return x->life.first < y->life.first; });
  struct Slot {
    Var var;
    DataType dtype;
    std::string scope;
    int64_t size;
    Liveness::Life life;
    const AllocateNode* occupant;
  };
  std::vector<Slot> slots;
  std::unordered_map<const VarNode*, Var> remap;
  std::unordered_map<const AllocateNode*, int64_t> sizes;
  for (const Alloc* a : order) {
    const Var& v = a->node->buffer_var;
    Slot* reuse = nullptr;
    for (Slot& s : slots) {
      if (s.dtype != a->node->dtype || s.scope != v->pointer->scope) continue;
      // Buffers of several physical axes share only with their own shape.
      bool flat = s.occupant->extents.size() <= 1 && a->node->extents.size() <= 1;
      if (!flat && !SameExtents(s.occupant, a->node)) continue;
      if (s.life.last < a->life.first ||
          (s.life.last_stmt == a->life.first_stmt &&
           InPlace(a->life.first_stmt, s.occupant, a->node))) {
        reuse = &s;
        break;
      }
    }
    if (reuse) {
      reuse->size = std::max(reuse->size, a->size);
      reuse->life = a->life;
      reuse->occupant = a->node;
      remap[v.get()] = reuse->var;
    } else {
      slots.push_back({v, a->node->dtype, v->pointer->scope, a->size, a->life, a->node});
    }
  }
  for (const Slot& s : slots) {
    for (const Alloc& a : allocs) {
      if (a.node->buffer_var == s.var) sizes[a.node] = s.size;
    }
  }
  // New extents of the slots' own allocations whose size grew.
  std::unordered_map<const AllocateNode*, std::vector<Expr>> new_extents;
  for (const auto& [a, size] : sizes) {
    int64_t old = 1;
    for (const Expr& e : a->extents) old *= *AsConstInt(e);
    if (old != size) new_extents[a] = {MakeConst(a->extents[0]->dtype, size)};
  }
  std::unordered_map<const VarNode*, int64_t> bit_offsets;
  if (!special.empty()) {
    std::vector<SpecialAlloc> sa;
    for (const Alloc& a : allocs) {
      if (IsSpecialMemory(a.node)) sa.push_back({a.node, a.life});
    }
    PlanSpecialMemory(sa, lookup, &remap, &bit_offsets, &new_extents);
  }
  std::unordered_set<const VarNode*> drop = unused;
  for (const auto& [v, slot_var] : remap) drop.insert(v);
  if (!unused.empty()) rest = DeclDropper(unused).VisitStmt(rest);
  rest = TopAllocFixer(drop, new_extents).VisitStmt(rest);
  if (!bit_offsets.empty()) rest = OffsetAccesses(bit_offsets).VisitStmt(rest);
  if (!remap.empty()) rest = DataRemapper(remap).VisitStmt(rest);
  for (size_t i = hoister.hoisted.size(); i-- > 0;) {
    const AllocateNode* a = hoister.hoisted[i];
    if (top.count(a) || drop.count(a->buffer_var.get())) continue;
    auto it = new_extents.find(a);
    rest = AllocateNode::Make(a->buffer_var, a->dtype, it == new_extents.end() ? a->extents : it->second,
                              a->condition, rest, a->annotations, a->span);
  }
  return rest;
}

}  // namespace

Pass StorageRewrite(MemoryInfoLookup lookup) {
  return CreatePrimFuncPass(
      [lookup](PrimFunc f, IRModule, const PassContext& ctx) {
        if (ctx.GetBool("tir.disable_storage_rewrite", false)) return f;
        Stmt body = RewriteScope(f->body, lookup);
        return StructuralEqual(body, f->body) ? f : f->WithBody(body);
      },
      0, "tir.StorageRewrite");
}
Pass StorageRewrite() { return StorageRewrite(nullptr); }
TESSERA_REGISTER_PASS("tir.StorageRewrite", static_cast<Pass (*)()>(StorageRewrite));

}  // namespace transform
}  // namespace tessera
