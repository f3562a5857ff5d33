// PrimFunc specialization (TVM's PrimFunc.specialize): parameters fixed to buffers or values,
// the uses replaced and the operations on new constants folded.
#include "tessera/transform/specialize.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "tessera/arith/const_fold.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace transform {
namespace {

bool IsParam(const PrimFunc& func, const Var& v) {
  for (const Var& p : func->params) {
    if (p == v) return true;
  }
  return false;
}

std::string Text(const ObjectRef& node) { return node ? AsScript(node) : std::string("None"); }

// Substitutes the specialized variables; buffers defined in the function (buffer_map, block
// allocations and matches, DeclBuffer) are rebuilt over the new shapes at their definition,
// and every access of a rebuilt buffer follows.
class Specializer : public BufferRemapMutator<> {
 public:
  /*! \brief `fold`: operations whose operands change are folded (specialize) or rebuilt as
   *  they are (substitute). */
  Specializer(const VarMap& vmap, bool fold) : vmap_(vmap), fold_(fold) {}
  using BufferRemapMutator::VisitExpr_;
  using BufferRemapMutator::VisitStmt_;

  /*! \brief The buffer over the substituted fields, recorded as `b`'s replacement. */
  Buffer DefineBuffer(const Buffer& b) {
    Buffer nb = MutateBuffer(b);
    buffers_[b.get()] = nb;
    return nb;
  }

  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }
#define TESSERA_SPECIALIZE_FOLD(name)                             \
  Expr VisitExpr_(const name##Node* op) override {                \
    return fold_ ? Fold(op) : BufferRemapMutator::VisitExpr_(op); \
  }
  TESSERA_BINARY_NODES(TESSERA_SPECIALIZE_FOLD)
#undef TESSERA_SPECIALIZE_FOLD
  Expr VisitExpr_(const NotNode* op) override {
    if (!fold_) return BufferRemapMutator::VisitExpr_(op);
    Expr a = VisitExpr(op->a);
    return a == op->a ? GetRef(op) : arith::FoldNot(a, op->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<Buffer> allocs;
    for (const Buffer& b : op->alloc_buffers) allocs.push_back(DefineBuffer(b));
    std::vector<Buffer> matched;
    for (const MatchBufferRegion& m : op->match_buffers) matched.push_back(DefineBuffer(m->buffer));
    Stmt s = BufferRemapMutator::VisitStmt_(op);
    auto* block = AsPtr<BlockNode>(s);
    bool changed = s != GetRef(op) || allocs != op->alloc_buffers;
    auto regions = [&](const std::vector<BufferRegion>& rs) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : rs) {
        Buffer b = RemapBuffer(r->buffer);
        changed = changed || b != r->buffer;
        out.push_back(b == r->buffer ? r : BufferRegionNode::Make(b, r->region, r->span));
      }
      return out;
    };
    std::vector<BufferRegion> reads = regions(block->reads), writes = regions(block->writes);
    std::vector<MatchBufferRegion> matches;
    for (size_t i = 0; i < block->match_buffers.size(); ++i) {
      const MatchBufferRegion& m = block->match_buffers[i];
      BufferRegion source = regions({m->source})[0];
      bool same = matched[i] == m->buffer && source == m->source;
      changed = changed || !same;
      matches.push_back(same ? m : MatchBufferRegionNode::Make(matched[i], source, m->span));
    }
    if (!changed) return GetRef(op);
    return BlockNode::Make(block->iter_vars, std::move(reads), std::move(writes), block->name_hint,
                           block->body, block->init, std::move(allocs), std::move(matches),
                           block->annotations, block->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    const Var& old_data = op->buffer->data;
    Buffer b = DefineBuffer(op->buffer);
    Stmt body = VisitStmt(op->body);
    Stmt result =
        b == op->buffer && body == op->body ? GetRef(op) : DeclBufferNode::Make(b, body, op->span);
    // A data pointer specialized to an expression (not a variable) stays the buffer's
    // variable, bound to that expression just outside.
    if (b->data == old_data) {
      Expr value = Lookup(old_data.get());
      if (value != old_data) result = LetStmtNode::Make(old_data, value, result, op->span);
    }
    return result;
  }

  Stmt VisitStmt_(const BufferRealizeNode* op) override {
    Stmt s = BufferRemapMutator::VisitStmt_(op);
    auto* realize = AsPtr<BufferRealizeNode>(s);
    Buffer b = RemapBuffer(realize->buffer);
    if (b == realize->buffer) return s;
    return BufferRealizeNode::Make(b, realize->bounds, realize->condition, realize->body,
                                   realize->span);
  }

 protected:
  // A buffer used without a definition in the function follows the substitution too.
  Buffer RemapBuffer(const Buffer& b) override {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    return DefineBuffer(b);
  }

 private:
  Expr Lookup(const VarNode* op) {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

  Expr Fold(const BinaryNode* op) {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a == op->a && b == op->b) return GetRef(op);
    return arith::FoldBinary(op->kind, a, b, op->span);
  }

  // Only a variable can replace the data pointer here (see the DeclBuffer visit).
  Buffer MutateBuffer(const Buffer& b) {
    Var data = As<VarNode>(VisitExpr(b->data));
    if (!data) data = b->data;
    bool changed = data != b->data;
    auto visit = [&](const std::vector<Expr>& in) {
      std::vector<Expr> out;
      for (const Expr& e : in) {
        out.push_back(e ? VisitExpr(e) : e);
        changed = changed || out.back() != e;
      }
      return out;
    };
    std::vector<Expr> shape = visit(b->shape), strides = visit(b->strides);
    Expr offset = b->elem_offset ? VisitExpr(b->elem_offset) : b->elem_offset;
    changed = changed || offset != b->elem_offset;
    if (!changed) return b;
    Buffer nb = BufferNode::Make(data, b->dtype, std::move(shape), std::move(strides), offset,
                                 b->name, b->data_alignment, b->offset_factor, b->span);
    nb->axis_separators = b->axis_separators;
    return nb;
  }

  const VarMap& vmap_;
  bool fold_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

bool SameExpr(const Expr& a, const Expr& b) {
  if (!a || !b) return a == b;
  return a == b || StructuralEqual(a, b);
}

// The variables of `param`'s buffer that take the values of `given`'s fields.
void BindBuffer(const PrimFunc& func, const Var& param, const Buffer& given, VarMap* vmap) {
  Buffer buffer = func->GetBuffer(param);
  if (!buffer) {
    TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
        << "specialize: parameter '" << param->name
        << "' has no buffer in the function's buffer_map, so it cannot be specialized to a buffer";
  }
  auto bind = [&](const char* field, const Expr& value, const Expr& old) {
    Expr old_value = old, new_value = value;
    // An absent elem_offset is 0.
    if (!old_value)
      old_value = MakeConst(new_value ? new_value->dtype : DataType::Int(32), int64_t{0});
    if (!new_value) new_value = MakeConst(old_value->dtype, int64_t{0});
    if (SameExpr(new_value, old_value)) return;
    auto* var = AsPtr<VarNode>(old_value);
    if (var == nullptr) {
      TESSERA_THROW_KIND(param->span, ErrorKind::kType)
          << "specialize: the " << field << " of buffer '" << buffer->name << "' (parameter '"
          << param->name << "') is " << Text(old_value)
          << ", not a variable, so it cannot take the value " << Text(new_value);
    }
    auto it = vmap->find(var);
    if (it == vmap->end()) {
      (*vmap)[var] = new_value;
    } else if (!SameExpr(it->second, new_value)) {
      TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
          << "specialize: variable '" << var->name << "' would be both " << Text(it->second)
          << " and " << Text(new_value);
    }
  };
  auto same_count = [&](const char* what, size_t expected, size_t got) {
    if (expected == got) return;
    TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
        << "specialize: buffer '" << buffer->name << "' (parameter '" << param->name << "') has "
        << expected << " " << what << ", the given buffer " << got;
  };
  same_count("dimensions", buffer->shape.size(), given->shape.size());
  same_count("strides", buffer->strides.size(), given->strides.size());
  bind("data", given->data, buffer->data);
  for (size_t i = 0; i < given->shape.size(); ++i) {
    bind("shape", given->shape[i], buffer->shape[i]);
  }
  for (size_t i = 0; i < given->strides.size(); ++i) {
    bind("strides", given->strides[i], buffer->strides[i]);
  }
  bind("elem_offset", given->elem_offset, buffer->elem_offset);
  auto same_int = [&](const char* what, int expected, int got) {
    if (expected == got) return;
    TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
        << "specialize: buffer '" << buffer->name << "' (parameter '" << param->name << "') has "
        << what << " " << expected << ", the given buffer " << got;
  };
  same_int("data_alignment", buffer->data_alignment, given->data_alignment);
  same_int("offset_factor", buffer->offset_factor, given->offset_factor);
}

void BindExpr(const PrimFunc& func, const Var& param, const Expr& value, VarMap* vmap) {
  if (!IsParam(func, param)) {
    TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
        << "specialize: '" << param->name << "' is not a parameter of the function";
  }
  if (func->GetBuffer(param)) {
    TESSERA_THROW_KIND(param->span, ErrorKind::kValue)
        << "specialize: parameter '" << param->name
        << "' has a buffer in the buffer_map; specialize it to a buffer, not to " << Text(value);
  }
  (*vmap)[param.get()] = value;
}

}  // namespace

PrimFunc Specialize(const PrimFunc& func, const std::vector<std::pair<Var, ObjectRef>>& param_map) {
  VarMap vmap;
  for (const auto& [param, value] : param_map) {
    if (auto buffer = As<BufferNode>(value)) {
      BindBuffer(func, param, buffer, &vmap);
    } else if (auto expr = As<ExprNode>(value)) {
      BindExpr(func, param, expr, &vmap);
    } else {
      TESSERA_THROW_KIND(param->span, ErrorKind::kType)
          << "specialize: parameter '" << param->name
          << "' must be specialized to a Buffer or an expression";
    }
  }
  if (vmap.empty()) return func;
  Specializer specializer(vmap, /*fold=*/true);
  bool changed = false;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const auto& [param, buffer] : func->buffer_map) {
    buffer_map.emplace_back(param, specializer.DefineBuffer(buffer));
    changed = changed || buffer_map.back().second != buffer;
  }
  std::vector<Var> params;
  for (const Var& p : func->params) {
    if (vmap.count(p.get()) == 0) params.push_back(p);
  }
  changed = changed || params.size() != func->params.size();
  Stmt body = specializer.VisitStmt(func->body);
  if (!changed && body == func->body) return func;
  return PrimFuncNode::Make(std::move(params), std::move(buffer_map), body, func->ret_type,
                            func->attrs, func->span);
}

Stmt SubstituteWithBuffers(const Stmt& stmt, const VarMap& vmap) {
  if (vmap.empty()) return stmt;
  return Specializer(vmap, /*fold=*/false).VisitStmt(stmt);
}

}  // namespace transform
}  // namespace tessera
