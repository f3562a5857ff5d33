// Expression nodes: constants, variables, arithmetic, logic, vectors, calls and buffer loads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/dtype.h"
#include "tessera/ir/node.h"

namespace tessera {

struct ExprNode;
struct VarNode;
struct BufferNode;
using Expr = Ref<ExprNode>;
using Var = Ref<VarNode>;
using Buffer = Ref<BufferNode>;

/*! \brief Base of expressions: every expression has a value type and a source span. */
struct ExprNode : Object {
  DataType dtype;
  Span span;
  ExprNode(NodeKind k, DataType t, Span s) : Object(k), dtype(t), span(std::move(s)) {}
  static bool CoversKind(NodeKind k) { return IsExprKind(k); }
};

/*! \brief An integer or bool constant. */
struct IntImmNode : ExprNode {
  TESSERA_NODE_KIND(IntImm)
  int64_t value;
  IntImmNode(DataType t, int64_t v, Span s) : ExprNode(kKind, t, std::move(s)), value(v) {}
  /*! \brief Checks that `t` is a scalar integer or bool and that `value` fits it. */
  static Ref<IntImmNode> Make(DataType t, int64_t value, Span span = {});
};
using IntImm = Ref<IntImmNode>;

/*! \brief A floating-point constant. */
struct FloatImmNode : ExprNode {
  TESSERA_NODE_KIND(FloatImm)
  double value;
  FloatImmNode(DataType t, double v, Span s) : ExprNode(kKind, t, std::move(s)), value(v) {}
  static Ref<FloatImmNode> Make(DataType t, double value, Span span = {});
};
using FloatImm = Ref<FloatImmNode>;

/*! \brief A string constant (used by calls and attributes). */
struct StringImmNode : ExprNode {
  TESSERA_NODE_KIND(StringImm)
  std::string value;
  StringImmNode(std::string v, Span s)
      : ExprNode(kKind, DataType::Handle(), std::move(s)), value(std::move(v)) {}
  static Ref<StringImmNode> Make(std::string value, Span span = {});
};
using StringImm = Ref<StringImmNode>;

/*! \brief The pointee of a pointer-typed variable: element type (scalar, vector or void) and
 *  memory scope ("global", "shared", "local", "lsram", ...). */
struct PointerType {
  DataType element;
  std::string scope;
  bool operator==(const PointerType& o) const { return element == o.element && scope == o.scope; }
  bool operator!=(const PointerType& o) const { return !(*this == o); }
};

/*! \brief A variable. Identity is the node: two Vars with one name are different variables. */
struct VarNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kVar;
  static bool CoversKind(NodeKind k) { return k == NodeKind::kVar || k == NodeKind::kSizeVar; }
  std::string name;
  /*! \brief Set for handles that point to typed memory. */
  std::optional<PointerType> pointer;
  VarNode(NodeKind k, std::string n, DataType t, std::optional<PointerType> p, Span s)
      : ExprNode(k, t, std::move(s)), name(std::move(n)), pointer(std::move(p)) {}
  static Var Make(std::string name, DataType dtype, Span span = {});
  /*! \brief A handle variable pointing to `element` data in `scope`. */
  static Var MakePointer(std::string name, DataType element, std::string scope, Span span = {});
};

/*! \brief A variable known to be non-negative (symbolic sizes). */
struct SizeVarNode : VarNode {
  TESSERA_NODE_KIND(SizeVar)
  SizeVarNode(std::string n, DataType t, Span s)
      : VarNode(kKind, std::move(n), t, std::nullopt, std::move(s)) {}
  static Ref<SizeVarNode> Make(std::string name, DataType dtype, Span span = {});
};
using SizeVar = Ref<SizeVarNode>;

/*! \brief Value conversion to `dtype` (same lane count). */
struct CastNode : ExprNode {
  TESSERA_NODE_KIND(Cast)
  Expr value;
  ~CastNode() override { ReleaseChild(value); }
  CastNode(DataType t, Expr v, Span s) : ExprNode(kKind, t, std::move(s)), value(std::move(v)) {}
  static Ref<CastNode> Make(DataType dtype, Expr value, Span span = {});
};

/*! \brief Base of the binary nodes; `a` and `b` have the same dtype. */
struct BinaryNode : ExprNode {
  Expr a, b;
  ~BinaryNode() override { ReleaseChild(a); ReleaseChild(b); }
  BinaryNode(NodeKind k, DataType t, Expr a_, Expr b_, Span s)
      : ExprNode(k, t, std::move(s)), a(std::move(a_)), b(std::move(b_)) {}
  static bool CoversKind(NodeKind k) { return k >= NodeKind::kAdd && k <= NodeKind::kOr; }
  bool is_comparison() const { return kind >= NodeKind::kEQ && kind <= NodeKind::kGE; }
};

/*! \brief One C++ type per binary kind (Add, Sub, ..., Or); comparisons give bool lanes. */
template <NodeKind K>
struct BinaryOpNode : BinaryNode {
  static constexpr NodeKind kKind = K;
  static bool CoversKind(NodeKind k) { return k == K; }
  BinaryOpNode(DataType t, Expr a_, Expr b_, Span s)
      : BinaryNode(K, t, std::move(a_), std::move(b_), std::move(s)) {}
  /*! \brief Checks operand types: equal dtypes; And/Or need bool operands. */
  static Ref<BinaryOpNode> Make(Expr a, Expr b, Span span = {});
};

#define TESSERA_BINARY_NODES(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(FloorDiv) X(FloorMod) X(Min) X(Max) X(EQ) X(NE) X(LT) \
  X(LE) X(GT) X(GE) X(And) X(Or)
#define TESSERA_DECLARE_BINARY(name) using name##Node = BinaryOpNode<NodeKind::k##name>;
TESSERA_BINARY_NODES(TESSERA_DECLARE_BINARY)
#undef TESSERA_DECLARE_BINARY

/*! \brief Logical negation of a bool (or bool vector). */
struct NotNode : ExprNode {
  TESSERA_NODE_KIND(Not)
  Expr a;
  ~NotNode() override { ReleaseChild(a); }
  NotNode(Expr a_, Span s) : ExprNode(kKind, a_->dtype, std::move(s)), a(std::move(a_)) {}
  static Ref<NotNode> Make(Expr a, Span span = {});
};

/*! \brief `condition ? true_value : false_value`; both sides are evaluated. */
struct SelectNode : ExprNode {
  TESSERA_NODE_KIND(Select)
  Expr condition, true_value, false_value;
  ~SelectNode() override { ReleaseChild(condition); ReleaseChild(true_value); ReleaseChild(false_value); }
  SelectNode(Expr c, Expr t, Expr f, Span s)
      : ExprNode(kKind, t->dtype, std::move(s)),
        condition(std::move(c)),
        true_value(std::move(t)),
        false_value(std::move(f)) {}
  static Ref<SelectNode> Make(Expr condition, Expr true_value, Expr false_value, Span span = {});
};

/*! \brief The vector base, base + stride, ..., base + (lanes - 1) * stride. A negative `lanes`
 *  -k is the scalable vector of vscale * k lanes (TVM's `T.Ramp(b, s, T.vscale() * k)`): test
 *  dtype.is_scalable_vector() before using `lanes` as a count. */
struct RampNode : ExprNode {
  TESSERA_NODE_KIND(Ramp)
  Expr base, stride;
  int lanes;
  ~RampNode() override { ReleaseChild(base); ReleaseChild(stride); }
  RampNode(Expr b, Expr st, int l, Span s)
      : ExprNode(kKind, b->dtype.with_lanes(l), std::move(s)),
        base(std::move(b)),
        stride(std::move(st)),
        lanes(l) {}
  static Ref<RampNode> Make(Expr base, Expr stride, int lanes, Span span = {});
};

/*! \brief A scalar replicated into `lanes` lanes (-k: vscale * k lanes, as RampNode). */
struct BroadcastNode : ExprNode {
  TESSERA_NODE_KIND(Broadcast)
  Expr value;
  int lanes;
  ~BroadcastNode() override { ReleaseChild(value); }
  BroadcastNode(Expr v, int l, Span s)
      : ExprNode(kKind, v->dtype.with_lanes(l), std::move(s)), value(std::move(v)), lanes(l) {}
  static Ref<BroadcastNode> Make(Expr value, int lanes, Span span = {});
};

/*! \brief Lanes picked from the concatenation of `vectors` by constant `indices`. */
struct ShuffleNode : ExprNode {
  TESSERA_NODE_KIND(Shuffle)
  std::vector<Expr> vectors;
  std::vector<Expr> indices;
  ~ShuffleNode() override { ReleaseChildren(vectors); ReleaseChildren(indices); }
  ShuffleNode(DataType t, std::vector<Expr> v, std::vector<Expr> i, Span s)
      : ExprNode(kKind, t, std::move(s)), vectors(std::move(v)), indices(std::move(i)) {}
  static Ref<ShuffleNode> Make(std::vector<Expr> vectors, std::vector<Expr> indices,
                               Span span = {});
};

/*! \brief `let var = value in body`. */
struct LetNode : ExprNode {
  TESSERA_NODE_KIND(Let)
  Var var;
  Expr value, body;
  ~LetNode() override { ReleaseChild(value); ReleaseChild(body); }
  LetNode(Var v, Expr val, Expr b, Span s)
      : ExprNode(kKind, b->dtype, std::move(s)),
        var(std::move(v)),
        value(std::move(val)),
        body(std::move(b)) {}
  static Ref<LetNode> Make(Var var, Expr value, Expr body, Span span = {});
};

/*! \brief A call of a registered Op (an intrinsic) or of a GlobalVar (another function). */
struct CallNode : ExprNode {
  TESSERA_NODE_KIND(Call)
  /*! \brief An OpNode or a GlobalVarNode. */
  ObjectRef op;
  std::vector<Expr> args;
  ~CallNode() override { ReleaseChildren(args); }
  CallNode(DataType t, ObjectRef o, std::vector<Expr> a, Span s)
      : ExprNode(kKind, t, std::move(s)), op(std::move(o)), args(std::move(a)) {}
  /*! \brief Checks that `op` is an Op or a GlobalVar and, for an Op, its arity. */
  static Ref<CallNode> Make(DataType dtype, ObjectRef op, std::vector<Expr> args, Span span = {});
  /*! \brief Name of the op or callee ("tir.exp", "subfunc"). */
  const std::string& op_name() const;
  bool is_op(const std::string& name) const;
};
using Call = Ref<CallNode>;

/*! \brief Read of `buffer` at `indices`; a vector index (Ramp) reads a vector. An optional
 *  bool-vector `predicate` masks the lanes read (inactive lanes read as zero). */
struct BufferLoadNode : ExprNode {
  TESSERA_NODE_KIND(BufferLoad)
  Buffer buffer;
  std::vector<Expr> indices;
  Expr predicate;  // may be null
  ~BufferLoadNode() override { ReleaseChild(predicate); ReleaseChildren(indices); }
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> i, Expr p, Span s)
      : ExprNode(kKind, t, std::move(s)),
        buffer(std::move(b)),
        indices(std::move(i)),
        predicate(std::move(p)) {}
  /*! \brief dtype = buffer element type widened by the lanes of the last index. */
  static Ref<BufferLoadNode> Make(Buffer buffer, std::vector<Expr> indices, Expr predicate = nullptr,
                                  Span span = {});
};

/*! \brief A half-open interval [min, min + extent) used for loops and regions. */
struct RangeNode : Object {
  TESSERA_NODE_KIND(Range)
  Expr min, extent;
  Span span;
  RangeNode(Expr m, Expr e, Span s)
      : Object(kKind), min(std::move(m)), extent(std::move(e)), span(std::move(s)) {}
  static Ref<RangeNode> Make(Expr min, Expr extent, Span span = {});
};
using Range = Ref<RangeNode>;

/*! \brief An ordered list of nodes (attribute values, annotations). */
struct ArrayNode : Object {
  TESSERA_NODE_KIND(Array)
  std::vector<ObjectRef> items;
  explicit ArrayNode(std::vector<ObjectRef> v) : Object(kKind), items(std::move(v)) {}
  static Ref<ArrayNode> Make(std::vector<ObjectRef> items) {
    return std::make_shared<ArrayNode>(std::move(items));
  }
};

// Convenience constructors used by passes and tests.
Expr MakeConst(DataType t, int64_t value, Span span = {});
Expr MakeConst(DataType t, double value, Span span = {});
inline Expr Int32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }
inline Expr Bool(bool v) { return IntImmNode::Make(DataType::Bool(), v ? 1 : 0); }

/*! \brief The value type of a load of `buffer` at `indices` (the buffer element widened by the
 *  lanes of a vector last index, scalable or not); checks the indices. */
DataType BufferAccessType(const Buffer& buffer, const std::vector<Expr>& indices, const Span& span);
/*! \brief Checks that a load/store `predicate` is a bool (or uint1) mask of the lanes of
 *  `access` (`what`: "load" or "store"). */
void CheckAccessPredicate(const Expr& predicate, DataType access, const char* what,
                          const Span& span);
/*! \brief The index of a Ramp's last lane in its base's dtype: lanes - 1, or
 *  T.vscale() * k - 1 for vscale * k lanes. */
Expr RampLastLane(const RampNode* ramp);
/*! \brief `T.vscale() * k`: the lanes of a scalable vector of vscale * k lanes. */
Expr ScalableLanesExpr(int vscale_factor, Span span = {});
/*! \brief k when `lanes` is `vscale() * k` or `k * vscale()` (k an integer constant > 1). */
std::optional<int> MatchScalableLanes(const Expr& lanes);

/*! \brief The constant integer value of `e`, if it is an IntImm. */
std::optional<int64_t> AsConstInt(const Expr& e);
/*! \brief Whether `e` is the integer constant `v` (also a Broadcast of it). */
bool IsConstInt(const Expr& e, int64_t v);

}  // namespace tessera
