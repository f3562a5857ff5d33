// tir.StorageRewrite: allocations of one scope whose lifetimes do not overlap share storage.
// As in TVM: an allocation whose last use is the statement that first writes another can share
// with it when that statement is an in-place elementwise operation (each element of the new
// buffer written from the same element of the old one only), and an allocation that nothing
// uses goes, with its declarations.
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

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

class StorageRewriter : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override { return RewriteChain(GetRef(op)); }

 private:
  struct Alloc {
    const AllocateNode* node;
    int64_t size;
    int first = -1, last = -1;
  };
  struct Slot {
    Var var;
    DataType dtype;
    std::string scope;
    int64_t size;
    int last;
    const AllocateNode* node;
    const AllocateNode* occupant;  // the allocation that used the slot last
  };

  static bool SameExtents(const AllocateNode* a, const AllocateNode* b) {
    if (a->extents.size() != b->extents.size()) return false;
    for (size_t i = 0; i < a->extents.size(); ++i) {
      if (AsConstInt(a->extents[i]) != AsConstInt(b->extents[i])) return false;
    }
    return true;
  }

  /*!
   * \brief Whether `stmt` writes `dst` in place of `src`: a nest of loops of constant extents
   *  around one store to `dst` whose indices visit each element once (a bijective affine map of
   *  the loops), with every load of `src` in its value at the same indices of a buffer of the
   *  same shape, no load of `dst` and no other use of either. The old element is then read
   *  before its place is written, and never again.
   */
  static bool InPlace(const Stmt& stmt, const AllocateNode* src, const AllocateNode* dst) {
    std::vector<arith::IterDomain> loops;
    Stmt s = stmt;
    while (auto* loop = AsPtr<ForNode>(s)) {
      auto min = AsConstInt(loop->min), extent = AsConstInt(loop->extent);
      if (!min || !extent || loop->for_kind == ForKind::kThreadBinding) return false;
      loops.push_back({loop->loop_var, *min, *extent});
      s = loop->body;
    }
    auto* store = AsPtr<BufferStoreNode>(s);
    if (!store || store->predicate || store->buffer->data.get() != dst->buffer_var.get() ||
        !store->buffer->strides.empty()) {
      return false;
    }
    auto map = arith::DetectIterMap(store->indices, loops);
    if (!map || !arith::IsBijective(*map, loops)) return false;
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

  // A run of Allocate / DeclBuffer statements ending in a sequence: the sequence's statements
  // are the time steps of the allocations' lifetimes.
  Stmt RewriteChain(const Stmt& head) {
    std::vector<Stmt> chain;
    Stmt cur = head;
    while (true) {
      if (auto* a = AsPtr<AllocateNode>(cur)) {
        chain.push_back(cur);
        cur = a->body;
      } else if (auto* d = AsPtr<DeclBufferNode>(cur)) {
        chain.push_back(cur);
        cur = d->body;
      } else {
        break;
      }
    }
    Stmt body = VisitStmt(cur);
    // An allocation that nothing uses goes, with its declarations.
    std::unordered_set<const VarNode*> unused;
    for (const Stmt& st : chain) {
      auto* a = AsPtr<AllocateNode>(st);
      if (!a) continue;
      const VarNode* v = a->buffer_var.get();
      if (!UsesVar(body, [v](const VarNode* u) { return u == v; })) unused.insert(v);
    }
    if (!unused.empty()) {
      std::vector<Stmt> kept;
      for (const Stmt& st : chain) {
        auto* a = AsPtr<AllocateNode>(st);
        auto* d = AsPtr<DeclBufferNode>(st);
        if (a && unused.count(a->buffer_var.get())) continue;
        if (d && unused.count(d->buffer->data.get())) continue;
        kept.push_back(st);
      }
      chain = std::move(kept);
    }
    auto* seq = AsPtr<SeqStmtNode>(body);
    std::vector<Alloc> allocs;
    for (const Stmt& s : chain) {
      auto* a = AsPtr<AllocateNode>(s);
      if (!a) continue;
      int64_t size = 1;
      bool ok = a->annotations.empty() && a->buffer_var->pointer && seq != nullptr;
      for (const Expr& e : a->extents) {
        auto c = AsConstInt(e);
        if (!c) ok = false;
        size *= c ? *c : 1;
      }
      if (!ok) {
        allocs.clear();
        break;  // only plain constant-size chains are rewritten
      }
      allocs.push_back({a, size});
    }
    if (allocs.size() < 2) return Rebuild(chain, body, {});

    for (Alloc& a : allocs) {
      const VarNode* v = a.node->buffer_var.get();
      for (int i = 0; i < static_cast<int>(seq->seq.size()); ++i) {
        if (!UsesVar(seq->seq[i], [v](const VarNode* u) { return u == v; })) continue;
        if (a.first < 0) a.first = i;
        a.last = i;
      }
    }
    // Greedy: in order of first use, take a slot of the same type and scope that is free.
    std::vector<const Alloc*> order;
    for (const Alloc& a : allocs) order.push_back(&a);
    std::stable_sort(order.begin(), order.end(),
                     [](const Alloc* x, const Alloc* y) { return x->first < y->first; });
    std::vector<Slot> slots;
    std::unordered_map<const VarNode*, Var> remap;
    for (const Alloc* a : order) {
      const Var& v = a->node->buffer_var;
      Slot* reuse = nullptr;
      if (a->first >= 0) {
        for (Slot& s : slots) {
          if (s.dtype != a->node->dtype || s.scope != v->pointer->scope) continue;
          // Buffers of several physical axes share only with their own shape.
          bool flat = s.occupant->extents.size() <= 1 && a->node->extents.size() <= 1;
          if (!flat && !SameExtents(s.occupant, a->node)) continue;
          if (s.last < a->first ||
              (s.last == a->first && InPlace(seq->seq[a->first], s.occupant, a->node))) {
            reuse = &s;
            break;
          }
        }
      }
      if (reuse) {
        reuse->size = std::max(reuse->size, a->size);
        reuse->last = a->last;
        reuse->occupant = a->node;
        remap[v.get()] = reuse->var;
      } else {
        slots.push_back({v, a->node->dtype, v->pointer->scope, a->size, a->last, a->node, a->node});
      }
    }
    if (remap.empty()) return Rebuild(chain, body, {});
    // One remapper for the body and the declarations, so both name the same new buffers.
    DataRemapper remapper(remap);
    body = remapper.VisitStmt(body);
    return Rebuild(chain, body, slots, &remap, &remapper);
  }

  // Re-wraps `body` in the chain; with `slots`, only the slots' allocations remain, sized for
  // their largest user, and declared buffers of merged allocations point at their slot.
  Stmt Rebuild(const std::vector<Stmt>& chain, Stmt body, const std::vector<Slot>& slots,
               const std::unordered_map<const VarNode*, Var>* remap = nullptr,
               DataRemapper* remapper = nullptr) {
    std::unordered_map<const AllocateNode*, int64_t> sizes;
    for (const Slot& s : slots) sizes[s.node] = s.size;
    for (size_t i = chain.size(); i-- > 0;) {
      if (auto* a = AsPtr<AllocateNode>(chain[i])) {
        if (remap && remap->count(a->buffer_var.get())) continue;  // merged into a slot
        std::vector<Expr> extents = a->extents;
        auto it = sizes.find(a);
        if (it != sizes.end()) {
          int64_t old = 1;
          for (const Expr& e : a->extents) old *= *AsConstInt(e);
          if (old != it->second) extents = {MakeConst(a->extents[0]->dtype, it->second)};
        }
        if (body == a->body && extents == a->extents) {
          body = chain[i];
          continue;
        }
        body = AllocateNode::Make(a->buffer_var, a->dtype, extents, a->condition, body,
                                  a->annotations, a->span);
      } else {
        auto* d = AsPtr<DeclBufferNode>(chain[i]);
        Buffer b = remapper ? remapper->Remap(d->buffer) : d->buffer;
        if (body == d->body && b == d->buffer) {
          body = chain[i];
          continue;
        }
        body = DeclBufferNode::Make(b, body, d->span);
      }
    }
    return body;
  }
};

PrimFunc StorageRewriteFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  if (ctx.GetBool("tir.disable_storage_rewrite", false)) return f;
  Stmt body = StorageRewriter().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass StorageRewrite() { return CreatePrimFuncPass(StorageRewriteFunc, 0, "tir.StorageRewrite"); }
TESSERA_REGISTER_PASS("tir.StorageRewrite", StorageRewrite);

}  // namespace transform
}  // namespace tessera
