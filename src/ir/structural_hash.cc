// Structural hash: mirrors StructuralEqual's walk so that equal programs get equal hashes.
#include "tessera/ir/structural_hash.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"
#include "tessera/support/stack.h"

namespace tessera {
namespace {

void FlattenInto(const Stmt& s, std::vector<Stmt>* out) {
  if (auto* seq = AsPtr<SeqStmtNode>(s)) {
    for (const Stmt& x : seq->seq) FlattenInto(x, out);
  } else {
    out->push_back(s);
  }
}

// Finalizer of splitmix64: spreads small integers (kinds, indices) over all bits.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t seed, uint64_t value) {
  return Mix(seed ^ (Mix(value) + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)));
}

uint64_t HashString(const std::string& s) { return std::hash<std::string>()(s); }

// Equality treats 0.0 == -0.0 and NaN == NaN, so those must hash alike.
uint64_t HashDouble(double v) {
  if (std::isnan(v)) return 0x7ff8000000000000ull;
  if (v == 0) v = 0;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// Tags that keep differently-derived hashes of one kind apart.
enum Tag : uint64_t {
  kTagNull = 0x6e756c6c,
  kTagBoundVar,
  kTagFreeVarIndex,
  kTagFreeVarObject,
  kTagDefinedBuffer,
  kTagList,
  kTagAttrs,
  kTagPointer,
};

using IndexMap = std::unordered_map<const Object*, uint64_t>;

class Hasher {
 public:
  explicit Hasher(bool map_free_vars) : map_free_vars_(map_free_vars) {}

  uint64_t Node(const ObjectRef& n) {
    if (!n) return kTagNull;
    if (n->kind == NodeKind::kSeqStmt) {
      // As StructuralEqual: a sequence hashes as its flattened statements, one alone as itself.
      std::vector<Stmt> flat;
      FlattenInto(std::static_pointer_cast<StmtNode>(n), &flat);
      if (flat.size() == 1) return Node(flat[0]);
      return Combine(Mix(static_cast<uint64_t>(n->kind)), List(flat));
    }
    uint64_t h = Mix(static_cast<uint64_t>(n->kind));
    if (IsExprKind(n->kind)) h = Combine(h, static_cast<const ExprNode*>(n.get())->dtype.Hash());
    if (StackLow()) detail::StackExhausted(NodeKindName(n->kind));
    switch (n->kind) {
#define TESSERA_HASH_DISPATCH(name) \
  case NodeKind::k##name:           \
    return Combine(h, Visit(static_cast<const name##Node*>(n.get())));
      TESSERA_EXPR_NODES(TESSERA_HASH_DISPATCH)
      TESSERA_STMT_NODES(TESSERA_HASH_DISPATCH)
      TESSERA_OTHER_NODES(TESSERA_HASH_DISPATCH)
#undef TESSERA_HASH_DISPATCH
      case NodeKind::kExprEnd:
      case NodeKind::kStmtEnd:
        break;
    }
    throw InternalError("StructuralHash: node with an invalid kind");
  }

 private:
  // ---- Scopes: definitions made inside are forgotten on exit, as in StructuralEqual ----

  struct Undo {
    IndexMap* map;
    const Object* key;
    bool had_old;
    uint64_t old;
  };

  class Scope {
   public:
    explicit Scope(Hasher* h) : h_(h), mark_(h->undo_.size()) {}
    ~Scope() {
      while (h_->undo_.size() > mark_) {
        Undo u = h_->undo_.back();
        h_->undo_.pop_back();
        if (u.had_old) {
          (*u.map)[u.key] = u.old;
        } else {
          u.map->erase(u.key);
        }
      }
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Hasher* h_;
    size_t mark_;
  };

  uint64_t DefineScoped(IndexMap* map, const Object* key) {
    auto it = map->find(key);
    undo_.push_back({map, key, it != map->end(), it != map->end() ? it->second : 0});
    uint64_t index = next_definition_++;
    (*map)[key] = index;
    return index;
  }

  // ---- Fields ----

  template <class T>
  uint64_t List(const std::vector<Ref<T>>& items) {
    uint64_t h = Combine(kTagList, items.size());
    for (const auto& item : items) h = Combine(h, Node(item));
    return h;
  }

  uint64_t Attrs(const AttrMap& attrs) {
    uint64_t h = Combine(kTagAttrs, attrs.size());
    for (const auto& [key, value] : attrs) h = Combine(Combine(h, HashString(key)), Node(value));
    return h;
  }

  // ---- Variables ----

  uint64_t VarType(const VarNode* v) {
    uint64_t h = Combine(Mix(static_cast<uint64_t>(v->kind)), v->dtype.Hash());
    if (v->pointer) {
      h = Combine(h, kTagPointer);
      h = Combine(Combine(h, v->pointer->element.Hash()), HashString(v->pointer->scope));
    }
    return h;
  }

  uint64_t DefineVar(const Var& v) {
    if (!v) return kTagNull;
    return Combine(VarType(v.get()), DefineScoped(&var_defs_, v.get()));
  }

  bool IsKnownVar(const VarNode* v) const {
    return var_defs_.count(v) != 0 || free_vars_.count(v) != 0;
  }

  uint64_t DefineOrUse(const Expr& e) {
    auto* v = AsPtr<VarNode>(e);
    if (v == nullptr || IsKnownVar(v)) {
      // An unknown variable inside a shape expression is defined there (as StructuralEqual).
      bool outer = defining_;
      defining_ = true;
      uint64_t h = Node(e);
      defining_ = outer;
      return h;
    }
    return Combine(VarType(v), DefineScoped(&var_defs_, v));
  }

  uint64_t DefineOrUseList(const std::vector<Expr>& items) {
    uint64_t h = Combine(kTagList, items.size());
    for (const Expr& item : items) h = Combine(h, DefineOrUse(item));
    return h;
  }

  uint64_t UseVar(const VarNode* v) {
    auto it = var_defs_.find(v);
    if (it != var_defs_.end()) return Combine(kTagBoundVar, it->second);
    if (defining_ && free_vars_.count(v) == 0) {
      return Combine(kTagBoundVar, DefineScoped(&var_defs_, v));
    }
    if (map_free_vars_) {
      auto free = free_vars_.find(v);
      uint64_t index = free != free_vars_.end() ? free->second : (free_vars_[v] = next_free_++);
      return Combine(Combine(kTagFreeVarIndex, index), VarType(v));
    }
    return Combine(kTagFreeVarObject, reinterpret_cast<uintptr_t>(v));
  }

  // ---- Buffers ----

  uint64_t BufferFields(const BufferNode* b, bool define) {
    uint64_t h = b->dtype.Hash();
    if (define) {
      h = Combine(h, DefineOrUse(b->data));
      h = Combine(h, DefineOrUseList(b->shape));
      h = Combine(h, DefineOrUseList(b->strides));
      h = Combine(h, DefineOrUse(b->elem_offset));
    } else {
      h = Combine(h, Node(b->data));
      h = Combine(h, List(b->shape));
      h = Combine(h, List(b->strides));
      h = Combine(h, Node(b->elem_offset));
    }
    h = Combine(h, static_cast<uint64_t>(b->data_alignment));
    for (int64_t s : b->axis_separators) h = Combine(h, static_cast<uint64_t>(s));
    return Combine(h, static_cast<uint64_t>(b->offset_factor));
  }

  uint64_t DefineBuffer(const Buffer& b) {
    if (!b) return kTagNull;
    uint64_t h = BufferFields(b.get(), /*define=*/true);
    return Combine(h, DefineScoped(&buffer_defs_, b.get()));
  }

  uint64_t UseBuffer(const BufferNode* b) {
    auto it = buffer_defs_.find(b);
    if (it != buffer_defs_.end()) return Combine(kTagDefinedBuffer, it->second);
    // Undeclared buffers hash by their fields at first use, as StructuralEqual pairs them.
    auto memo = undeclared_buffers_.find(b);
    if (memo != undeclared_buffers_.end()) return memo->second;
    uint64_t h = BufferFields(b, /*define=*/false);
    undeclared_buffers_[b] = h;
    return h;
  }

  // ---- Expressions ----

  uint64_t Visit(const IntImmNode* n) { return static_cast<uint64_t>(n->value); }
  uint64_t Visit(const FloatImmNode* n) { return HashDouble(n->value); }
  uint64_t Visit(const StringImmNode* n) { return HashString(n->value); }
  uint64_t Visit(const VarNode* n) { return UseVar(n); }
  uint64_t Visit(const CastNode* n) { return Node(n->value); }
  uint64_t Visit(const BinaryNode* n) { return Combine(Node(n->a), Node(n->b)); }
  uint64_t Visit(const NotNode* n) { return Node(n->a); }
  uint64_t Visit(const SelectNode* n) {
    return Combine(Combine(Node(n->condition), Node(n->true_value)), Node(n->false_value));
  }
  uint64_t Visit(const RampNode* n) {
    return Combine(Combine(static_cast<uint64_t>(n->lanes), Node(n->base)), Node(n->stride));
  }
  uint64_t Visit(const BroadcastNode* n) {
    return Combine(static_cast<uint64_t>(n->lanes), Node(n->value));
  }
  uint64_t Visit(const ShuffleNode* n) { return Combine(List(n->vectors), List(n->indices)); }
  uint64_t Visit(const LetNode* n) {
    uint64_t h = Node(n->value);
    Scope scope(this);
    h = Combine(h, DefineVar(n->var));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const CallNode* n) { return Combine(Node(n->op), List(n->args)); }
  uint64_t Visit(const BufferLoadNode* n) {
    return Combine(Combine(Node(n->buffer), List(n->indices)), Node(n->predicate));
  }

  // ---- Statements ----

  uint64_t Visit(const LetStmtNode* n) {
    uint64_t h = Node(n->value);
    Scope scope(this);
    h = Combine(h, DefineVar(n->var));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const AttrStmtNode* n) {
    uint64_t h = HashString(n->attr_key);
    Scope scope(this);
    h = Combine(h, Node(n->node));
    h = Combine(h, Node(n->value));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const AssertStmtNode* n) {
    return Combine(Combine(Node(n->condition), Node(n->message)), Node(n->body));
  }
  uint64_t Visit(const BufferStoreNode* n) {
    uint64_t h = Combine(Node(n->buffer), Node(n->value));
    return Combine(Combine(h, List(n->indices)), Node(n->predicate));
  }
  uint64_t Visit(const AllocateNode* n) {
    uint64_t h = Combine(n->dtype.Hash(), List(n->extents));
    h = Combine(Combine(h, Node(n->condition)), Attrs(n->annotations));
    Scope scope(this);
    h = Combine(h, DefineVar(n->buffer_var));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const AllocateConstNode* n) {
    uint64_t h = Combine(n->dtype.Hash(), List(n->extents));
    h = Combine(h, HashString(std::string(n->data.begin(), n->data.end())));
    h = Combine(h, Attrs(n->annotations));
    Scope scope(this);
    h = Combine(h, DefineVar(n->buffer_var));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const DeclBufferNode* n) {
    Scope scope(this);
    uint64_t h = DefineBuffer(n->buffer);
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const ForNode* n) {
    uint64_t h = Combine(static_cast<uint64_t>(n->for_kind), Node(n->min));
    h = Combine(Combine(h, Node(n->extent)), Attrs(n->annotations));
    if (n->step) h = Combine(h, Node(n->step));
    Scope scope(this);
    h = Combine(h, DefineVar(n->loop_var));
    h = Combine(h, Node(n->thread_binding));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const BufferRealizeNode* n) {
    uint64_t h = Combine(Node(n->buffer), List(n->bounds));
    return Combine(Combine(h, Node(n->condition)), Node(n->body));
  }
  uint64_t Visit(const WhileNode* n) { return Combine(Node(n->condition), Node(n->body)); }
  uint64_t Visit(const IfThenElseNode* n) {
    return Combine(Combine(Node(n->condition), Node(n->then_case)), Node(n->else_case));
  }
  uint64_t Visit(const SeqStmtNode* n) { return List(n->seq); }
  uint64_t Visit(const EvaluateNode* n) { return Node(n->value); }
  uint64_t Visit(const BlockNode* n) {
    // Like StructuralEqual: the name is ignored; iterators and buffers are scoped definitions.
    Scope scope(this);
    uint64_t h = Combine(kTagList, n->iter_vars.size());
    for (const IterVar& iv : n->iter_vars) {
      h = Combine(Combine(h, static_cast<uint64_t>(iv->iter_type)), Node(iv->dom));
      h = Combine(h, DefineVar(iv->var));
    }
    h = Combine(h, n->alloc_buffers.size());
    for (const Buffer& b : n->alloc_buffers) h = Combine(h, DefineBuffer(b));
    h = Combine(h, n->match_buffers.size());
    for (const MatchBufferRegion& m : n->match_buffers) h = Combine(h, MatchBuffer(m.get()));
    h = Combine(Combine(h, List(n->reads)), List(n->writes));
    h = Combine(h, Attrs(n->annotations));
    return Combine(Combine(h, Node(n->init)), Node(n->body));
  }
  uint64_t Visit(const BlockRealizeNode* n) {
    uint64_t h = Combine(List(n->iter_values), Node(n->predicate));
    return Combine(h, Node(n->block));
  }

  // ---- Other nodes ----

  uint64_t Visit(const RangeNode* n) { return Combine(Node(n->min), Node(n->extent)); }
  uint64_t Visit(const IterVarNode* n) {
    uint64_t h = Combine(static_cast<uint64_t>(n->iter_type), HashString(n->thread_tag));
    h = Combine(h, Node(n->dom));
    return Combine(h, DefineOrUse(n->var));
  }
  uint64_t Visit(const BufferNode* n) { return UseBuffer(n); }
  uint64_t Visit(const PrimFuncNode* n) {
    Scope scope(this);
    uint64_t h = Combine(kTagList, n->params.size());
    for (const Var& p : n->params) h = Combine(h, DefineVar(p));
    h = Combine(h, n->buffer_map.size());
    for (const auto& [param, buffer] : n->buffer_map) {
      h = Combine(Combine(h, Node(param)), DefineBuffer(buffer));
    }
    h = Combine(Combine(h, n->ret_type.Hash()), Attrs(n->attrs));
    return Combine(h, Node(n->body));
  }
  uint64_t Visit(const GlobalVarNode* n) { return HashString(n->name_hint); }
  uint64_t Visit(const IRModuleNode* n) {
    // By name, like StructuralEqual: the order of insertion does not matter.
    std::map<std::string, const PrimFunc*> by_name;
    for (const auto& [gv, f] : n->functions) by_name[gv->name_hint] = &f;
    uint64_t h = Combine(kTagList, by_name.size());
    for (const auto& [name, f] : by_name) h = Combine(Combine(h, HashString(name)), Node(*f));
    return Combine(h, Attrs(n->attrs));
  }
  uint64_t Visit(const OpNode* n) { return HashString(n->name); }
  uint64_t Visit(const ArrayNode* n) { return List(n->items); }
  uint64_t Visit(const MapNode* n) {
    // Object-keyed items: in no order (a sum), as equal maps may have been filled in any order.
    uint64_t sum = 0;
    for (const auto& [key, value] : n->object_items) sum += Combine(Node(key), Node(value));
    return Combine(Combine(Attrs(n->items), n->object_items.size()), sum);
  }
  uint64_t Visit(const CommReducerNode* n) {
    uint64_t h = List(n->identity_element);
    Scope scope(this);
    for (const Var& v : n->lhs) h = Combine(h, DefineVar(v));
    for (const Var& v : n->rhs) h = Combine(h, DefineVar(v));
    return Combine(h, List(n->result));
  }
  uint64_t Visit(const BufferRegionNode* n) { return Combine(Node(n->buffer), List(n->region)); }
  uint64_t MatchBuffer(const MatchBufferRegionNode* n) {
    return Combine(Node(n->source), DefineBuffer(n->buffer));
  }
  uint64_t Visit(const MatchBufferRegionNode* n) {
    Scope scope(this);
    return MatchBuffer(n);
  }

  bool map_free_vars_;
  // Inside a defining buffer field (shape, strides, elem_offset): unknown variables are defined.
  bool defining_ = false;
  uint64_t next_definition_ = 0;
  uint64_t next_free_ = 0;
  std::vector<Undo> undo_;
  IndexMap var_defs_;     // bound vars -> definition index (scoped)
  IndexMap free_vars_;    // free vars -> order of first use (only with map_free_vars)
  IndexMap buffer_defs_;  // declared buffers -> definition index (scoped)
  std::unordered_map<const Object*, uint64_t> undeclared_buffers_;  // hash at first use
};

}  // namespace

size_t StructuralHash(const ObjectRef& node, bool map_free_vars) {
  return static_cast<size_t>(Hasher(map_free_vars).Node(node));
}

}  // namespace tessera
