// Structural equality: a paired walk of two IR trees with scoped variable and buffer pairings.
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_equal_path.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <utility>
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

// The statements of a (nested) sequence in order; a statement alone is a sequence of one.
std::vector<Stmt> FlattenSeq(const ObjectRef& s) {
  std::vector<Stmt> out;
  FlattenInto(std::static_pointer_cast<StmtNode>(s), &out);
  return out;
}

using PairMap = std::unordered_map<const Object*, const Object*>;

// One step from the root to the node under comparison: a field, maybe with an index or a key.
struct PathStep {
  const char* field;
  int64_t index;
  const std::string* key;
  // A map item keyed by an object on each side (a buffer_map's parameter, a GlobalVar).
  const ObjectRef* key_a = nullptr;
  const ObjectRef* key_b = nullptr;
  // The item is absent on one side: 1 the first, 2 the second (an array or map of other size).
  int missing_side = 0;
};

// The shortest decimal form that reads back as `v`, so 0.1 prints as "0.1".
std::string FormatDouble(double v) {
  char buf[32];
  for (int precision = 6; precision < 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string PointerTypeString(const std::optional<PointerType>& p) {
  if (!p) return "no pointer type";
  return "pointer to " + p->element.ToString() + " in '" + p->scope + "'";
}

// A short description of a node for failure messages (there is no printer at this layer).
std::string Describe(const Object* n) {
  if (n == nullptr) return "null";
  std::string kind = NodeKindName(n->kind);
  switch (n->kind) {
    case NodeKind::kIntImm:
      return kind + " " + std::to_string(static_cast<const IntImmNode*>(n)->value);
    case NodeKind::kFloatImm:
      return kind + " " + FormatDouble(static_cast<const FloatImmNode*>(n)->value);
    case NodeKind::kStringImm:
      return kind + " \"" + static_cast<const StringImmNode*>(n)->value + "\"";
    case NodeKind::kVar:
    case NodeKind::kSizeVar:
      return kind + " " + static_cast<const VarNode*>(n)->name;
    case NodeKind::kBuffer:
      return kind + " " + static_cast<const BufferNode*>(n)->name;
    case NodeKind::kGlobalVar:
      return kind + " " + static_cast<const GlobalVarNode*>(n)->name_hint;
    case NodeKind::kOp:
      return kind + " " + static_cast<const OpNode*>(n)->name;
    default:
      return kind;
  }
}

std::string DescribePair(const Object* a, const Object* b) {
  return Describe(a) + " vs " + Describe(b);
}

class EqualChecker {
 public:
  EqualChecker(bool map_free_vars, bool explain, bool bind_free_buffers = false)
      : map_free_vars_(map_free_vars), bind_free_buffers_(bind_free_buffers), explain_(explain) {}

  bool Run(const ObjectRef& a, const ObjectRef& b) { return Node(a, b); }
  const std::string& failure() const { return failure_; }
  const StructuralMismatch& mismatch() const { return mismatch_; }

 private:
  // ---- Paths and failures ----

  class Step {
   public:
    Step(EqualChecker* c, const char* field, int64_t index = -1, const std::string* key = nullptr)
        : c_(c) {
      c_->path_.push_back({field, index, key});
    }
    /*! \brief The item of map `field` under the key `key_a` on one side, `key_b` on the other. */
    Step(EqualChecker* c, const char* field, const ObjectRef* key_a, const ObjectRef* key_b)
        : c_(c) {
      c_->path_.push_back({field, -1, nullptr, key_a, key_b});
    }
    ~Step() { c_->path_.pop_back(); }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    EqualChecker* c_;
  };

  std::string PathString() const {
    std::string s = "root";
    for (const PathStep& p : path_) {
      if (*p.field != '\0') {  // an Array's or Map's items have no field step
        s += ".";
        s += p.field;
      }
      if (p.index >= 0) s += "[" + std::to_string(p.index) + "]";
      if (p.key != nullptr) s += "[\"" + *p.key + "\"]";
      if (p.key_a != nullptr) s += "[" + KeyName(*p.key_a) + "]";
    }
    return s;
  }
  static std::string KeyName(const ObjectRef& key) {
    if (auto* v = AsPtr<VarNode>(key)) return v->name;
    if (auto* gv = AsPtr<GlobalVarNode>(key)) return "\"" + gv->name_hint + "\"";
    return NodeKindName(key->kind);
  }
  // The path as TVM's AccessPath steps: a field, then its item (an index or a key).
  std::vector<MismatchStep> PathSteps() const {
    std::vector<MismatchStep> steps;
    for (const PathStep& p : path_) {
      if (*p.field != '\0') {  // an Array's or Map's item is a step of its own (TVM's path)
        MismatchStep field;
        field.name = p.field;
        steps.push_back(field);
      }
      if (p.index >= 0) {
        MismatchStep item;
        item.kind = MismatchStep::Kind::kArrayItem;
        item.index = p.index;
        item.missing_side = p.missing_side;
        steps.push_back(item);
      } else if (p.key != nullptr || p.key_a != nullptr) {
        MismatchStep item;
        item.kind = MismatchStep::Kind::kMapItem;
        if (p.key != nullptr) item.str_key = *p.key;
        if (p.key_a != nullptr) item.key_a = *p.key_a;
        if (p.key_b != nullptr) item.key_b = *p.key_b;
        item.missing_side = p.missing_side;
        steps.push_back(item);
      }
    }
    return steps;
  }

  // Records the first mismatch; `describe` runs only when a message was asked for.
  template <class F>
  bool Fail(F describe) {
    if (explain_ && failure_.empty()) {
      mismatch_.reason = describe();
      mismatch_.steps = PathSteps();
      failure_ = PathString() + ": " + mismatch_.reason;
    }
    return false;
  }
  // A mismatch of a constant's value is at its `value` field (as TVM's path ends).
  // (The message string keeps its form: the path to the constant.)
  template <class F>
  bool FailValue(F describe) {
    if (explain_ && failure_.empty()) {
      Fail(describe);
      // An item of an Array or Map is a plain value there (TVM keeps ints and floats unboxed in
      // its containers): the path ends at the item.
      if (!path_.empty() && *path_.back().field == '\0') return false;
      MismatchStep value;
      value.name = "value";
      mismatch_.steps.push_back(value);
    }
    return false;
  }

  // ---- Scopes: pairings made inside are undone on exit, so shadowing and reuse work ----

  struct Undo {
    PairMap* map;
    const Object* key;
    const Object* old;  // null: the key was absent
  };

  class Scope {
   public:
    explicit Scope(EqualChecker* c) : c_(c), mark_(c->undo_.size()) {}
    ~Scope() {
      while (c_->undo_.size() > mark_) {
        Undo u = c_->undo_.back();
        c_->undo_.pop_back();
        if (u.old == nullptr) {
          u.map->erase(u.key);
        } else {
          (*u.map)[u.key] = u.old;
        }
      }
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    EqualChecker* c_;
    size_t mark_;
  };

  void SetScoped(PairMap* map, const Object* key, const Object* value) {
    auto it = map->find(key);
    undo_.push_back({map, key, it == map->end() ? nullptr : it->second});
    (*map)[key] = value;
  }

  void PairScoped(PairMap* forward, PairMap* backward, const Object* a, const Object* b) {
    SetScoped(forward, a, b);
    SetScoped(backward, b, a);
  }

  // ---- Fields ----

  bool Field(const char* name, const ObjectRef& a, const ObjectRef& b) {
    Step step(this, name);
    return Node(a, b);
  }

  // Items pair by position; a difference inside the common prefix is reported before a
  // difference of length, which is at the first item one side lacks (as TVM's path).
  template <class T>
  bool ListField(const char* name, const std::vector<Ref<T>>& a, const std::vector<Ref<T>>& b) {
    size_t common = std::min(a.size(), b.size());
    for (size_t i = 0; i < common; ++i) {
      Step step(this, name, static_cast<int64_t>(i));
      if (!Node(a[i], b[i])) return false;
    }
    if (a.size() == b.size()) return true;
    Step step(this, name, static_cast<int64_t>(common));
    path_.back().missing_side = a.size() < b.size() ? 1 : 2;
    return Fail([&] {
      return std::to_string(a.size()) + " elements vs " + std::to_string(b.size()) + " elements";
    });
  }

  template <class T, class ToString>
  bool ValueField(const char* name, const T& a, const T& b, ToString to_string) {
    if (a == b) return true;
    Step step(this, name);
    return Fail([&] { return to_string(a) + " vs " + to_string(b); });
  }

  bool IntField(const char* name, int64_t a, int64_t b) {
    return ValueField(name, a, b, [](int64_t v) { return std::to_string(v); });
  }

  bool StringField(const char* name, const std::string& a, const std::string& b) {
    return ValueField(name, a, b, [](const std::string& v) { return "\"" + v + "\""; });
  }

  bool DTypeField(const char* name, DataType a, DataType b) {
    return ValueField(name, a, b, [](DataType t) { return "dtype " + t.ToString(); });
  }

  // Items pair by key; a key one side lacks is reported at that key, the side that lacks it
  // marked missing (TVM's map_item_missing), after the values of the keys both have.
  bool AttrMapField(const char* name, const AttrMap& a, const AttrMap& b) {
    for (const auto& [key, value] : a) {
      auto it = b.find(key);
      if (it == b.end()) continue;
      Step step(this, name, -1, &key);
      if (!Node(value, it->second)) return false;
    }
    auto only_in = [&](const std::string& key, int missing_side) {
      Step step(this, name, -1, &key);
      path_.back().missing_side = missing_side;
      return Fail([&] {
        return "key \"" + key + "\" only in the " + (missing_side == 2 ? "first" : "second");
      });
    };
    for (const auto& entry : a) {
      if (b.count(entry.first) == 0) return only_in(entry.first, 2);
    }
    for (const auto& entry : b) {
      if (a.count(entry.first) == 0) return only_in(entry.first, 1);
    }
    return true;
  }

  // ---- Variables ----

  bool SameVarType(const VarNode* a, const VarNode* b) {
    if (a->kind != b->kind || a->dtype != b->dtype) {
      std::optional<Step> dtype_step;  // the path ends at the differing field, as TVM's does
      if (a->kind == b->kind) dtype_step.emplace(this, "dtype");
      return Fail([&] {
        return std::string(NodeKindName(a->kind)) + " " + a->name + " of dtype " +
               a->dtype.ToString() + " vs " + NodeKindName(b->kind) + " " + b->name + " of dtype " +
               b->dtype.ToString();
      });
    }
    if (a->pointer != b->pointer) {
      return Fail([&] {
        return "Var " + a->name + " is a " + PointerTypeString(a->pointer) + ", Var " + b->name +
               " is a " + PointerTypeString(b->pointer);
      });
    }
    return true;
  }

  // A binding site: pairs `a` with `b` until the enclosing Scope ends.
  bool DefineVar(const char* name, const Var& a, const Var& b) {
    if (name == nullptr) return DefineVarHere(a, b);
    Step step(this, name);
    return DefineVarHere(a, b);
  }
  bool DefineVarHere(const Var& a, const Var& b) {
    if (!a || !b) return a == b || Fail([&] { return DescribePair(a.get(), b.get()); });
    if (!SameVarType(a.get(), b.get())) return false;
    PairScoped(&var_map_, &var_rmap_, a.get(), b.get());
    return true;
  }

  bool IsKnownVar(const VarNode* a, const VarNode* b) const {
    return var_map_.count(a) != 0 || var_rmap_.count(b) != 0;
  }

  // Buffer shapes may introduce symbolic sizes: a bare Var there binds unless already known,
  // and so does an unknown Var inside a shape expression (`x` of `x * 8`), as in TVM.
  bool DefineOrUse(const Expr& a, const Expr& b) {
    auto* va = AsPtr<VarNode>(a);
    auto* vb = AsPtr<VarNode>(b);
    if (va == nullptr || vb == nullptr || IsKnownVar(va, vb)) {
      bool outer = defining_;
      defining_ = true;
      bool same = Node(a, b);
      defining_ = outer;
      return same;
    }
    if (!SameVarType(va, vb)) return false;
    PairScoped(&var_map_, &var_rmap_, va, vb);
    return true;
  }

  bool DefineOrUseField(const char* name, const Expr& a, const Expr& b) {
    Step step(this, name);
    return DefineOrUse(a, b);
  }

  bool DefineOrUseList(const char* name, const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return ListField(name, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      Step step(this, name, static_cast<int64_t>(i));
      if (!DefineOrUse(a[i], b[i])) return false;
    }
    return true;
  }

  bool UseVar(const VarNode* a, const VarNode* b) {
    auto it = var_map_.find(a);
    if (it != var_map_.end()) {
      if (it->second == b) return true;
      return Fail([&] {
        return "Var " + a->name + " is bound to Var " +
               static_cast<const VarNode*>(it->second)->name + ", got Var " + b->name;
      });
    }
    if (var_rmap_.count(b) != 0) {
      return Fail([&] { return "free Var " + a->name + " vs bound Var " + b->name; });
    }
    if (defining_) {  // first seen inside a buffer's shape: defined there
      if (!SameVarType(a, b)) return false;
      PairScoped(&var_map_, &var_rmap_, a, b);
      return true;
    }
    if (map_free_vars_) {
      if (!SameVarType(a, b)) return false;
      // Free pairings last for the whole comparison, like the free variables themselves.
      var_map_[a] = b;
      var_rmap_[b] = a;
      return true;
    }
    if (a == b) return true;
    return Fail([&] {
      return "free Var " + a->name + " vs free Var " + b->name +
             " (different variables; map_free_vars is off)";
    });
  }

  // ---- Buffers ----

  // `define`: the buffer is being declared, so its data pointer and symbolic shape bind.
  bool BufferFields(const BufferNode* a, const BufferNode* b, bool define) {
    if (!DTypeField("dtype", a->dtype, b->dtype)) return false;
    if (define) {
      if (!DefineOrUseField("data", a->data, b->data)) return false;
      if (!DefineOrUseList("shape", a->shape, b->shape)) return false;
      if (!DefineOrUseList("strides", a->strides, b->strides)) return false;
      if (!DefineOrUseField("elem_offset", a->elem_offset, b->elem_offset)) return false;
    } else {
      if (!Field("data", a->data, b->data)) return false;
      if (!ListField("shape", a->shape, b->shape)) return false;
      if (!ListField("strides", a->strides, b->strides)) return false;
      if (!Field("elem_offset", a->elem_offset, b->elem_offset)) return false;
    }
    if (!IntField("axis_separators.size", static_cast<int64_t>(a->axis_separators.size()),
                  static_cast<int64_t>(b->axis_separators.size())))
      return false;
    for (size_t i = 0; i < a->axis_separators.size(); ++i) {
      if (!IntField("axis_separators", a->axis_separators[i], b->axis_separators[i])) return false;
    }
    return IntField("data_alignment", a->data_alignment, b->data_alignment) &&
           IntField("offset_factor", a->offset_factor, b->offset_factor);
  }

  bool DefineBuffer(const char* name, const Buffer& a, const Buffer& b) {
    Step step(this, name);
    return DefineBuffer(a, b);
  }
  bool DefineBuffer(const Buffer& a, const Buffer& b) {
    if (!a || !b) return a == b || Fail([&] { return DescribePair(a.get(), b.get()); });
    if (!BufferFields(a.get(), b.get(), /*define=*/true)) return false;
    PairScoped(&buf_map_, &buf_rmap_, a.get(), b.get());
    return true;
  }

  bool UseBuffer(const BufferNode* a, const BufferNode* b) {
    auto it = buf_map_.find(a);
    if (it != buf_map_.end()) {
      if (it->second == b) return true;
      return Fail([&] {
        return "Buffer " + a->name + " is paired with Buffer " +
               static_cast<const BufferNode*>(it->second)->name + ", got Buffer " + b->name;
      });
    }
    if (buf_rmap_.count(b) != 0) {
      return Fail([&] {
        return "Buffer " + a->name + " vs Buffer " + b->name + ", which is paired with another";
      });
    }
    // Buffers used without a declaration (e.g. over an Allocate) pair at first use. With
    // bind_free_buffers (TVM's rule: a buffer's data and shape are definitions) the free
    // variables of their fields pair there too, for the rest of the comparison.
    bool map_free_vars = map_free_vars_;
    if (bind_free_buffers_) map_free_vars_ = true;
    bool same = BufferFields(a, b, /*define=*/false);
    map_free_vars_ = map_free_vars;
    if (!same) return false;
    buf_map_[a] = b;
    buf_rmap_[b] = a;
    return true;
  }

  // ---- Dispatch ----

  bool Node(const ObjectRef& a, const ObjectRef& b) {
    if (!a || !b) return a == b || Fail([&] { return DescribePair(a.get(), b.get()); });
    if ((a->kind == NodeKind::kSeqStmt || b->kind == NodeKind::kSeqStmt) && IsStmtKind(a->kind) &&
        IsStmtKind(b->kind)) {
      return Sequence(a, b);
    }
    if (a->kind != b->kind) return Fail([&] { return DescribePair(a.get(), b.get()); });
    if (IsExprKind(a->kind)) {
      DataType ta = static_cast<const ExprNode*>(a.get())->dtype;
      DataType tb = static_cast<const ExprNode*>(b.get())->dtype;
      if (ta != tb) {
        return Fail([&] {
          return DescribePair(a.get(), b.get()) + ": dtype " + ta.ToString() + " vs " +
                 tb.ToString();
        });
      }
    }
    if (StackLow()) detail::StackExhausted(NodeKindName(a->kind));
    switch (a->kind) {
#define TESSERA_EQUAL_DISPATCH(name) \
  case NodeKind::k##name:            \
    return Visit(static_cast<const name##Node*>(a.get()), static_cast<const name##Node*>(b.get()));
      TESSERA_EXPR_NODES(TESSERA_EQUAL_DISPATCH)
      TESSERA_STMT_NODES(TESSERA_EQUAL_DISPATCH)
      TESSERA_OTHER_NODES(TESSERA_EQUAL_DISPATCH)
#undef TESSERA_EQUAL_DISPATCH
      case NodeKind::kExprEnd:
      case NodeKind::kStmtEnd:
        break;
    }
    throw InternalError("StructuralEqual: node with an invalid kind");
  }

  // ---- Expressions ----

  bool Visit(const IntImmNode* a, const IntImmNode* b) {
    return a->value == b->value || FailValue([&] { return DescribePair(a, b); });
  }
  bool Visit(const FloatImmNode* a, const FloatImmNode* b) {
    if (a->value == b->value || (std::isnan(a->value) && std::isnan(b->value))) return true;
    return FailValue([&] { return DescribePair(a, b); });
  }
  bool Visit(const StringImmNode* a, const StringImmNode* b) {
    return a->value == b->value || FailValue([&] { return DescribePair(a, b); });
  }
  bool Visit(const VarNode* a, const VarNode* b) { return UseVar(a, b); }
  bool Visit(const CastNode* a, const CastNode* b) { return Field("value", a->value, b->value); }
  bool Visit(const BinaryNode* a, const BinaryNode* b) {
    return Field("a", a->a, b->a) && Field("b", a->b, b->b);
  }
  bool Visit(const NotNode* a, const NotNode* b) { return Field("a", a->a, b->a); }
  bool Visit(const SelectNode* a, const SelectNode* b) {
    return Field("condition", a->condition, b->condition) &&
           Field("true_value", a->true_value, b->true_value) &&
           Field("false_value", a->false_value, b->false_value);
  }
  bool Visit(const RampNode* a, const RampNode* b) {
    return IntField("lanes", a->lanes, b->lanes) && Field("base", a->base, b->base) &&
           Field("stride", a->stride, b->stride);
  }
  bool Visit(const BroadcastNode* a, const BroadcastNode* b) {
    return IntField("lanes", a->lanes, b->lanes) && Field("value", a->value, b->value);
  }
  bool Visit(const ShuffleNode* a, const ShuffleNode* b) {
    return ListField("vectors", a->vectors, b->vectors) &&
           ListField("indices", a->indices, b->indices);
  }
  bool Visit(const LetNode* a, const LetNode* b) {
    if (!Field("value", a->value, b->value)) return false;
    Scope scope(this);
    return DefineVar("var", a->var, b->var) && Field("body", a->body, b->body);
  }
  bool Visit(const CallNode* a, const CallNode* b) {
    return Field("op", a->op, b->op) && ListField("args", a->args, b->args);
  }
  bool Visit(const BufferLoadNode* a, const BufferLoadNode* b) {
    return Field("buffer", a->buffer, b->buffer) && ListField("indices", a->indices, b->indices) &&
           Field("predicate", a->predicate, b->predicate);
  }

  // ---- Statements ----

  bool Visit(const LetStmtNode* a, const LetStmtNode* b) {
    if (!Field("value", a->value, b->value)) return false;
    Scope scope(this);
    return DefineVar("var", a->var, b->var) && Field("body", a->body, b->body);
  }
  bool Visit(const AttrStmtNode* a, const AttrStmtNode* b) {
    if (!StringField("attr_key", a->attr_key, b->attr_key)) return false;
    // An IterVar here (thread_extent) binds its variable for the value and the body.
    Scope scope(this);
    return Field("node", a->node, b->node) && Field("value", a->value, b->value) &&
           Field("body", a->body, b->body);
  }
  bool Visit(const AssertStmtNode* a, const AssertStmtNode* b) {
    return Field("condition", a->condition, b->condition) &&
           Field("message", a->message, b->message) && Field("body", a->body, b->body);
  }
  bool Visit(const BufferStoreNode* a, const BufferStoreNode* b) {
    return Field("buffer", a->buffer, b->buffer) && Field("value", a->value, b->value) &&
           ListField("indices", a->indices, b->indices) &&
           Field("predicate", a->predicate, b->predicate);
  }
  bool Visit(const AllocateNode* a, const AllocateNode* b) {
    if (!DTypeField("dtype", a->dtype, b->dtype) || !ListField("extents", a->extents, b->extents) ||
        !Field("condition", a->condition, b->condition) ||
        !AttrMapField("annotations", a->annotations, b->annotations)) {
      return false;
    }
    Scope scope(this);
    return DefineVar("buffer_var", a->buffer_var, b->buffer_var) && Field("body", a->body, b->body);
  }
  bool Visit(const AllocateConstNode* a, const AllocateConstNode* b) {
    if (!DTypeField("dtype", a->dtype, b->dtype) || !ListField("extents", a->extents, b->extents)) {
      return false;
    }
    if (a->data != b->data) {
      Step step(this, "data");
      return Fail([&] {
        size_t i = 0, bytes = std::max(1, a->dtype.bits() / 8);
        while (i < a->data.size() && i < b->data.size() && a->data[i] == b->data[i]) ++i;
        return "element " + std::to_string(i / bytes) + " of the constant data differs";
      });
    }
    if (!AttrMapField("annotations", a->annotations, b->annotations)) return false;
    Scope scope(this);
    return DefineVar("buffer_var", a->buffer_var, b->buffer_var) && Field("body", a->body, b->body);
  }
  bool Visit(const DeclBufferNode* a, const DeclBufferNode* b) {
    Scope scope(this);
    return DefineBuffer("buffer", a->buffer, b->buffer) && Field("body", a->body, b->body);
  }
  bool Visit(const ForNode* a, const ForNode* b) {
    if (!ValueField("for_kind", a->for_kind, b->for_kind,
                    [](ForKind k) { return std::string(ForKindName(k)); }) ||
        !Field("min", a->min, b->min) || !Field("extent", a->extent, b->extent) ||
        !Field("step", a->step, b->step) ||
        !AttrMapField("annotations", a->annotations, b->annotations)) {
      return false;
    }
    Scope scope(this);
    return DefineVar("loop_var", a->loop_var, b->loop_var) &&
           Field("thread_binding", a->thread_binding, b->thread_binding) &&
           Field("body", a->body, b->body);
  }
  bool Visit(const BufferRealizeNode* a, const BufferRealizeNode* b) {
    return Field("buffer", a->buffer, b->buffer) && ListField("bounds", a->bounds, b->bounds) &&
           Field("condition", a->condition, b->condition) && Field("body", a->body, b->body);
  }
  bool Visit(const WhileNode* a, const WhileNode* b) {
    return Field("condition", a->condition, b->condition) && Field("body", a->body, b->body);
  }
  bool Visit(const IfThenElseNode* a, const IfThenElseNode* b) {
    return Field("condition", a->condition, b->condition) &&
           Field("then_case", a->then_case, b->then_case) &&
           Field("else_case", a->else_case, b->else_case);
  }
  bool Visit(const SeqStmtNode* a, const SeqStmtNode* b) {
    return ListField("seq", a->seq, b->seq);
  }
  // Sequences compare flattened: nesting and one-statement sequences do not change a program.
  bool Sequence(const ObjectRef& a, const ObjectRef& b) {
    std::vector<Stmt> fa = FlattenSeq(a), fb = FlattenSeq(b);
    if (fa.size() == 1 && fb.size() == 1) return Node(fa[0], fb[0]);
    return ListField("seq", fa, fb);
  }
  bool Visit(const EvaluateNode* a, const EvaluateNode* b) {
    return Field("value", a->value, b->value);
  }
  bool Visit(const BlockNode* a, const BlockNode* b) {
    // Names are hints (spec: ignored). Iterators, allocations and matched buffers are
    // definitions scoped to the block.
    Scope scope(this);
    if (a->iter_vars.size() != b->iter_vars.size()) {
      return ListField("iter_vars", a->iter_vars, b->iter_vars);
    }
    for (size_t i = 0; i < a->iter_vars.size(); ++i) {
      Step step(this, "iter_vars", static_cast<int64_t>(i));
      const IterVarNode* x = a->iter_vars[i].get();
      const IterVarNode* y = b->iter_vars[i].get();
      if (!ValueField("iter_type", x->iter_type, y->iter_type,
                      [](IterVarType t) { return std::to_string(static_cast<int>(t)); }) ||
          !Field("dom", x->dom, y->dom) || !DefineVar("var", x->var, y->var)) {
        return false;
      }
    }
    if (a->alloc_buffers.size() != b->alloc_buffers.size()) {
      return ListField("alloc_buffers", a->alloc_buffers, b->alloc_buffers);
    }
    for (size_t i = 0; i < a->alloc_buffers.size(); ++i) {
      Step step(this, "alloc_buffers", static_cast<int64_t>(i));
      if (!DefineBuffer("buffer", a->alloc_buffers[i], b->alloc_buffers[i])) return false;
    }
    if (a->match_buffers.size() != b->match_buffers.size()) {
      return ListField("match_buffers", a->match_buffers, b->match_buffers);
    }
    for (size_t i = 0; i < a->match_buffers.size(); ++i) {
      Step step(this, "match_buffers", static_cast<int64_t>(i));
      if (!MatchBuffer(a->match_buffers[i].get(), b->match_buffers[i].get())) return false;
    }
    return ListField("reads", a->reads, b->reads) && ListField("writes", a->writes, b->writes) &&
           AttrMapField("annotations", a->annotations, b->annotations) &&
           Field("init", a->init, b->init) && Field("body", a->body, b->body);
  }
  bool Visit(const BlockRealizeNode* a, const BlockRealizeNode* b) {
    return ListField("iter_values", a->iter_values, b->iter_values) &&
           Field("predicate", a->predicate, b->predicate) && Field("block", a->block, b->block);
  }

  // ---- Other nodes ----

  bool Visit(const RangeNode* a, const RangeNode* b) {
    return Field("min", a->min, b->min) && Field("extent", a->extent, b->extent);
  }
  bool Visit(const IterVarNode* a, const IterVarNode* b) {
    return ValueField("iter_type", a->iter_type, b->iter_type,
                      [](IterVarType t) { return std::to_string(static_cast<int>(t)); }) &&
           StringField("thread_tag", a->thread_tag, b->thread_tag) &&
           Field("dom", a->dom, b->dom) && DefineOrUseField("var", a->var, b->var);
  }
  bool Visit(const BufferNode* a, const BufferNode* b) { return UseBuffer(a, b); }
  bool Visit(const PrimFuncNode* a, const PrimFuncNode* b) {
    Scope scope(this);
    if (a->params.size() != b->params.size()) return ListField("params", a->params, b->params);
    for (size_t i = 0; i < a->params.size(); ++i) {
      Step step(this, "params", static_cast<int64_t>(i));
      if (!DefineVar(nullptr, a->params[i], b->params[i])) return false;
    }
    if (a->buffer_map.size() != b->buffer_map.size()) {
      Step step(this, "buffer_map");
      return Fail([&] {
        return std::to_string(a->buffer_map.size()) + " entries vs " +
               std::to_string(b->buffer_map.size()) + " entries";
      });
    }
    for (size_t i = 0; i < a->buffer_map.size(); ++i) {
      // As TVM's path: buffer_map[param], the parameter of each side as the key.
      const ObjectRef key_a = a->buffer_map[i].first, key_b = b->buffer_map[i].first;
      Step step(this, "buffer_map", &key_a, &key_b);
      if (!Node(key_a, key_b) || !DefineBuffer(a->buffer_map[i].second, b->buffer_map[i].second)) {
        return false;
      }
    }
    return DTypeField("ret_type", a->ret_type, b->ret_type) &&
           AttrMapField("attrs", a->attrs, b->attrs) && Field("body", a->body, b->body);
  }
  bool Visit(const GlobalVarNode* a, const GlobalVarNode* b) {
    return a->name_hint == b->name_hint || Fail([&] { return DescribePair(a, b); });
  }
  bool Visit(const IRModuleNode* a, const IRModuleNode* b) {
    // Functions pair by name: the order of insertion is not part of the program.
    std::map<std::string, const std::pair<GlobalVar, PrimFunc>*> fa, fb;
    for (const auto& entry : a->functions) fa[entry.first->name_hint] = &entry;
    for (const auto& entry : b->functions) fb[entry.first->name_hint] = &entry;
    auto only_in = [&](const std::string& name, const char* which) {
      Step step(this, "functions");
      return Fail([&] { return "function '" + name + "' only in the " + which + " module"; });
    };
    for (const auto& entry : fa) {
      if (fb.count(entry.first) == 0) return only_in(entry.first, "first");
    }
    for (const auto& entry : fb) {
      if (fa.count(entry.first) == 0) return only_in(entry.first, "second");
    }
    for (const auto& [name, f] : fa) {
      // As TVM's path: functions[gv], the GlobalVar of each side as the key.
      const ObjectRef key_a = f->first, key_b = fb[name]->first;
      Step step(this, "functions", &key_a, &key_b);
      if (!Node(f->second, fb[name]->second)) return false;
    }
    return AttrMapField("attrs", a->attrs, b->attrs);
  }
  bool Visit(const OpNode* a, const OpNode* b) {
    return a == b || Fail([&] { return DescribePair(a, b); });
  }
  bool Visit(const ArrayNode* a, const ArrayNode* b) {
    return ListField("", a->items, b->items);
  }
  bool Visit(const MapNode* a, const MapNode* b) {
    return AttrMapField("", a->items, b->items) && ObjectKeyItems(a, b);
  }
  // The key on b's side for object key `key` of a: the same key, or the var it was paired with.
  const std::pair<ObjectRef, ObjectRef>* MatchKey(const MapNode* b, const ObjectRef& key) {
    if (auto* found = b->FindObject(key)) return found;
    auto it = var_map_.find(key.get());
    if (it == var_map_.end()) return nullptr;
    for (const auto& kv : b->object_items) {
      if (kv.first.get() == it->second) return &kv;
    }
    return nullptr;
  }
  // Object-keyed items pair by key (TVM's Map of nodes); a key one side lacks is a mismatch.
  bool ObjectKeyItems(const MapNode* a, const MapNode* b) {
    for (const auto& [key, value] : a->object_items) {
      const auto* other = MatchKey(b, key);
      if (other == nullptr) {
        Step step(this, "", &key, &key);
        path_.back().missing_side = 2;
        return Fail([&] { return "key " + KeyName(key) + " only in the first"; });
      }
      Step step(this, "", &key, &other->first);
      if (!Node(value, other->second)) return false;
    }
    if (a->object_items.size() != b->object_items.size()) {
      for (const auto& [key, value] : b->object_items) {
        bool found = false;
        for (const auto& kv : a->object_items) {
          const auto* other = MatchKey(b, kv.first);
          if (other != nullptr && other->first == key) {
            found = true;
            break;
          }
        }
        if (!found) {
          Step step(this, "", &key, &key);
          path_.back().missing_side = 1;
          return Fail([&] { return "key " + KeyName(key) + " only in the second"; });
        }
      }
    }
    return true;
  }
  bool Visit(const CommReducerNode* a, const CommReducerNode* b) {
    if (!ListField("identity_element", a->identity_element, b->identity_element)) return false;
    if (a->lhs.size() != b->lhs.size() || a->rhs.size() != b->rhs.size()) {
      return Fail([&] { return std::string("comm_reducer arity differs"); });
    }
    Scope scope(this);
    for (size_t i = 0; i < a->lhs.size(); ++i) {
      if (!DefineVar("lhs", a->lhs[i], b->lhs[i])) return false;
    }
    for (size_t i = 0; i < a->rhs.size(); ++i) {
      if (!DefineVar("rhs", a->rhs[i], b->rhs[i])) return false;
    }
    return ListField("result", a->result, b->result);
  }
  bool Visit(const BufferRegionNode* a, const BufferRegionNode* b) {
    return Field("buffer", a->buffer, b->buffer) && ListField("region", a->region, b->region);
  }
  // The source region is read outside; the view buffer is a definition (in the caller's scope).
  bool MatchBuffer(const MatchBufferRegionNode* a, const MatchBufferRegionNode* b) {
    return Field("source", a->source, b->source) && DefineBuffer("buffer", a->buffer, b->buffer);
  }
  bool Visit(const MatchBufferRegionNode* a, const MatchBufferRegionNode* b) {
    Scope scope(this);
    return MatchBuffer(a, b);
  }

  bool map_free_vars_;
  bool bind_free_buffers_ = false;
  // Inside a defining buffer field (shape, strides, elem_offset): unknown variables bind.
  bool defining_ = false;
  bool explain_;
  std::string failure_;
  StructuralMismatch mismatch_;
  std::vector<PathStep> path_;
  std::vector<Undo> undo_;
  PairMap var_map_, var_rmap_;  // a -> b and b -> a, for bound and (mapped) free vars
  PairMap buf_map_, buf_rmap_;
};

}  // namespace

bool StructuralEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars,
                     bool bind_free_buffers) {
  return EqualChecker(map_free_vars, /*explain=*/false, bind_free_buffers).Run(a, b);
}

std::string StructuralEqualFailure(const ObjectRef& a, const ObjectRef& b, bool map_free_vars,
                                   bool bind_free_buffers) {
  EqualChecker checker(map_free_vars, /*explain=*/true, bind_free_buffers);
  if (checker.Run(a, b)) return "";
  return checker.failure();
}

std::optional<StructuralMismatch> FindStructuralMismatch(const ObjectRef& a, const ObjectRef& b,
                                                         bool map_free_vars,
                                                         bool bind_free_buffers) {
  EqualChecker checker(map_free_vars, /*explain=*/true, bind_free_buffers);
  if (checker.Run(a, b)) return std::nullopt;
  return checker.mismatch();
}

void AssertStructuralEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars) {
  std::string failure = StructuralEqualFailure(a, b, map_free_vars);
  if (!failure.empty()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "structural mismatch at " << failure;
  }
}

}  // namespace tessera
