// Statement nodes: bindings, stores, allocation, loops, branches and sequences.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {

struct StmtNode;
using Stmt = Ref<StmtNode>;
/*! \brief Annotations and attributes: sorted by key so printing and hashing are stable. */
using AttrMap = std::map<std::string, ObjectRef>;

/*! \brief A dict value (`T.block_attr({"key": {"a": 1}})`, TVM's `Map`). String keys are by value
 * in `items`; IR-object keys (`{var: 2}`) are in `object_items`, in insertion order, each key
 * once: a node by identity, a constant number (IntImm/FloatImm) by dtype and value. */
struct MapNode : Object {
  TESSERA_NODE_KIND(Map)
  AttrMap items;
  std::vector<std::pair<ObjectRef, ObjectRef>> object_items;
  explicit MapNode(AttrMap m) : Object(kKind), items(std::move(m)) {}
  static Ref<MapNode> Make(AttrMap items) { return std::make_shared<MapNode>(std::move(items)); }
  /*! \brief Whether two object keys name the same entry (identity; numbers by value). */
  static bool SameKey(const ObjectRef& a, const ObjectRef& b);
  /*! \brief The entry under object key `key`, or null. */
  const std::pair<ObjectRef, ObjectRef>* FindObject(const ObjectRef& key) const {
    for (const auto& kv : object_items) {
      if (SameKey(kv.first, key)) return &kv;
    }
    return nullptr;
  }
  /*! \brief Sets the value under object key `key` (replacing an entry with the same key). */
  void SetObject(const ObjectRef& key, ObjectRef value) {
    for (auto& kv : object_items) {
      if (SameKey(kv.first, key)) {
        kv.second = std::move(value);
        return;
      }
    }
    object_items.emplace_back(key, std::move(value));
  }
  size_t size() const { return items.size() + object_items.size(); }
};

/*! \brief Base of statements. */
struct StmtNode : Object {
  Span span;
  StmtNode(NodeKind k, Span s) : Object(k), span(std::move(s)) {}
  static bool CoversKind(NodeKind k) { return IsStmtKind(k); }
};

/*! \brief Kinds of iteration variables (loops bound to threads, block iterators). */
enum class IterVarType : uint8_t {
  kDataPar = 0,
  kThreadIndex = 1,
  kCommReduce = 2,
  kOrdered = 3,
  kOpaque = 4
};

/*! \brief An iteration variable with its domain; thread-bound ones carry a thread tag. */
struct IterVarNode : Object {
  TESSERA_NODE_KIND(IterVar)
  Range dom;  // may be null for thread bindings whose extent the loop gives
  Var var;
  IterVarType iter_type;
  std::string thread_tag;
  Span span;
  IterVarNode(Range d, Var v, IterVarType t, std::string tag, Span s)
      : Object(kKind),
        dom(std::move(d)),
        var(std::move(v)),
        iter_type(t),
        thread_tag(std::move(tag)),
        span(std::move(s)) {}
  static Ref<IterVarNode> Make(Range dom, Var var, IterVarType type, std::string thread_tag = "",
                               Span span = {});
};
using IterVar = Ref<IterVarNode>;

/*! \brief `var = value` in scope for `body`. */
struct LetStmtNode : StmtNode {
  TESSERA_NODE_KIND(LetStmt)
  Var var;
  Expr value;
  Stmt body;
  ~LetStmtNode() override { ReleaseChild(value); ReleaseChild(body); }
  LetStmtNode(Var v, Expr val, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)),
        var(std::move(v)),
        value(std::move(val)),
        body(std::move(b)) {}
  static Ref<LetStmtNode> Make(Var var, Expr value, Stmt body, Span span = {});
};

/*! \brief An attribute `attr_key = value` on `node`, in scope for `body`. */
struct AttrStmtNode : StmtNode {
  TESSERA_NODE_KIND(AttrStmt)
  ObjectRef node;  // may be null
  std::string attr_key;
  Expr value;
  Stmt body;
  ~AttrStmtNode() override { ReleaseChild(value); ReleaseChild(body); }
  AttrStmtNode(ObjectRef n, std::string k, Expr v, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)),
        node(std::move(n)),
        attr_key(std::move(k)),
        value(std::move(v)),
        body(std::move(b)) {}
  static Ref<AttrStmtNode> Make(ObjectRef node, std::string attr_key, Expr value, Stmt body,
                                Span span = {});
};

/*! \brief Check `condition` at run time, failing with `message`; then run `body`. */
struct AssertStmtNode : StmtNode {
  TESSERA_NODE_KIND(AssertStmt)
  Expr condition, message;
  Stmt body;
  ~AssertStmtNode() override { ReleaseChild(condition); ReleaseChild(message); ReleaseChild(body); }
  AssertStmtNode(Expr c, Expr m, Stmt b, Span s)
      : StmtNode(kKind, std::move(s)),
        condition(std::move(c)),
        message(std::move(m)),
        body(std::move(b)) {}
  static Ref<AssertStmtNode> Make(Expr condition, Expr message, Stmt body, Span span = {});
};

/*! \brief `buffer[indices] = value`; a vector index stores a vector, under an optional mask. */
struct BufferStoreNode : StmtNode {
  TESSERA_NODE_KIND(BufferStore)
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  Expr predicate;  // may be null
  ~BufferStoreNode() override { ReleaseChild(value); ReleaseChild(predicate); ReleaseChildren(indices); }
  BufferStoreNode(Buffer b, Expr v, std::vector<Expr> i, Expr p, Span s)
      : StmtNode(kKind, std::move(s)),
        buffer(std::move(b)),
        value(std::move(v)),
        indices(std::move(i)),
        predicate(std::move(p)) {}
  /*! \brief Checks that the value's type matches the buffer element widened by the index lanes. */
  static Ref<BufferStoreNode> Make(Buffer buffer, Expr value, std::vector<Expr> indices,
                                   Expr predicate = nullptr, Span span = {});
};

/*! \brief Storage of `dtype` x prod(extents) bound to the pointer `buffer_var` for `body`. */
struct AllocateNode : StmtNode {
  TESSERA_NODE_KIND(Allocate)
  Var buffer_var;
  DataType dtype;
  std::vector<Expr> extents;
  Expr condition;
  Stmt body;
  AttrMap annotations;
  ~AllocateNode() override { ReleaseChild(condition); ReleaseChild(body); ReleaseChildren(extents); }
  AllocateNode(Var v, DataType t, std::vector<Expr> e, Expr c, Stmt b, AttrMap a, Span s)
      : StmtNode(kKind, std::move(s)),
        buffer_var(std::move(v)),
        dtype(t),
        extents(std::move(e)),
        condition(std::move(c)),
        body(std::move(b)),
        annotations(std::move(a)) {}
  static Ref<AllocateNode> Make(Var buffer_var, DataType dtype, std::vector<Expr> extents,
                                Expr condition, Stmt body, AttrMap annotations = {},
                                Span span = {});
};

/*! \brief Constant storage behind `buffer_var` for `body`: `data` holds the elements' bytes
 *  (row-major, host byte order, `dtype`'s width each); the extents are constant integers whose
 *  product is the element count. Code generators embed the data in the generated code. */
struct AllocateConstNode : StmtNode {
  TESSERA_NODE_KIND(AllocateConst)
  Var buffer_var;
  DataType dtype;
  std::vector<Expr> extents;
  std::vector<uint8_t> data;
  Stmt body;
  AttrMap annotations;
  ~AllocateConstNode() override { ReleaseChild(body); ReleaseChildren(extents); }
  AllocateConstNode(Var v, DataType t, std::vector<Expr> e, std::vector<uint8_t> d, Stmt b,
                    AttrMap a, Span s)
      : StmtNode(kKind, std::move(s)),
        buffer_var(std::move(v)),
        dtype(t),
        extents(std::move(e)),
        data(std::move(d)),
        body(std::move(b)),
        annotations(std::move(a)) {}
  static Ref<AllocateConstNode> Make(Var buffer_var, DataType dtype, std::vector<Expr> extents,
                                     std::vector<uint8_t> data, Stmt body,
                                     AttrMap annotations = {}, Span span = {});
  /*! \brief The number of elements (the product of the extents). */
  int64_t NumElements() const;
  /*! \brief Element `i` of an integer or bool dtype, sign- or zero-extended. */
  int64_t IntAt(int64_t i) const;
  /*! \brief Element `i` of a float dtype (float16, bfloat16, float32, float64), exactly. */
  double FloatAt(int64_t i) const;
};

/*! \brief Declares `buffer` (a view of existing storage) for `body`. */
struct DeclBufferNode : StmtNode {
  TESSERA_NODE_KIND(DeclBuffer)
  Buffer buffer;
  Stmt body;
  ~DeclBufferNode() override { ReleaseChild(body); }
  DeclBufferNode(Buffer b, Stmt bd, Span s)
      : StmtNode(kKind, std::move(s)), buffer(std::move(b)), body(std::move(bd)) {}
  static Ref<DeclBufferNode> Make(Buffer buffer, Stmt body, Span span = {});
};

/*!
 * \brief `T.realize(A[0:128, 0:128], scope)`: TVM's pre-TensorIR realization of `buffer` over
 *  `bounds` for `body`, where `condition` holds. Built, parsed, printed and compared; no pass
 *  lowers it (TensorIR allocates with blocks' alloc_buffers instead).
 */
struct BufferRealizeNode : StmtNode {
  TESSERA_NODE_KIND(BufferRealize)
  Buffer buffer;
  std::vector<Range> bounds;
  Expr condition;
  Stmt body;
  ~BufferRealizeNode() override { ReleaseChild(condition); ReleaseChild(body); }
  BufferRealizeNode(Buffer b, std::vector<Range> r, Expr c, Stmt bd, Span s)
      : StmtNode(kKind, std::move(s)),
        buffer(std::move(b)),
        bounds(std::move(r)),
        condition(std::move(c)),
        body(std::move(bd)) {}
  /*! \brief Checks one bound per dimension of `buffer` and a bool condition. */
  static Ref<BufferRealizeNode> Make(Buffer buffer, std::vector<Range> bounds, Expr condition,
                                     Stmt body, Span span = {});
};

enum class ForKind : uint8_t {
  kSerial = 0,
  kParallel = 1,
  kVectorized = 2,
  kUnrolled = 3,
  kThreadBinding = 4
};
const char* ForKindName(ForKind kind);

/*! \brief `for loop_var in [min, min + extent)`; thread-bound loops carry their IterVar. */
struct ForNode : StmtNode {
  TESSERA_NODE_KIND(For)
  Var loop_var;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  IterVar thread_binding;  // set iff for_kind == kThreadBinding
  AttrMap annotations;
  /*! \brief The step between iterations (TVM v0.23's For.step): `loop_var` takes min,
   *  min + step, ... below min + extent. Null for a unit step (Make stores a constant 1 as
   *  null). Lowering starts with tir.CanonicalizeLoop, which rewrites stepped loops into unit
   *  steps; the other passes refuse them. */
  Expr step;
  ~ForNode() override {
    ReleaseChild(min);
    ReleaseChild(extent);
    ReleaseChild(step);
    ReleaseChild(body);
  }
  bool HasTrivialStep() const { return step == nullptr; }
  ForNode(Var v, Expr m, Expr e, ForKind k, Stmt b, IterVar t, AttrMap a, Span s, Expr st)
      : StmtNode(kKind, std::move(s)),
        loop_var(std::move(v)),
        min(std::move(m)),
        extent(std::move(e)),
        for_kind(k),
        body(std::move(b)),
        thread_binding(std::move(t)),
        annotations(std::move(a)),
        step(std::move(st)) {}
  static Ref<ForNode> Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                           IterVar thread_binding = nullptr, AttrMap annotations = {},
                           Span span = {}, Expr step = nullptr);
};
using For = Ref<ForNode>;

/*! \brief `while condition: body`. */
struct WhileNode : StmtNode {
  TESSERA_NODE_KIND(While)
  Expr condition;
  Stmt body;
  ~WhileNode() override { ReleaseChild(condition); ReleaseChild(body); }
  WhileNode(Expr c, Stmt b, Span s) : StmtNode(kKind, std::move(s)), condition(std::move(c)), body(std::move(b)) {}
  static Ref<WhileNode> Make(Expr condition, Stmt body, Span span = {});
};

/*! \brief `if condition: then_case else: else_case` (else_case may be null). */
struct IfThenElseNode : StmtNode {
  TESSERA_NODE_KIND(IfThenElse)
  Expr condition;
  Stmt then_case, else_case;
  ~IfThenElseNode() override { ReleaseChild(condition); ReleaseChild(then_case); ReleaseChild(else_case); }
  IfThenElseNode(Expr c, Stmt t, Stmt e, Span s)
      : StmtNode(kKind, std::move(s)),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  static Ref<IfThenElseNode> Make(Expr condition, Stmt then_case, Stmt else_case = nullptr,
                                  Span span = {});
};

/*! \brief Statements run in order. */
struct SeqStmtNode : StmtNode {
  TESSERA_NODE_KIND(SeqStmt)
  std::vector<Stmt> seq;
  ~SeqStmtNode() override { ReleaseChildren(seq); }
  SeqStmtNode(std::vector<Stmt> v, Span s) : StmtNode(kKind, std::move(s)), seq(std::move(v)) {}
  static Ref<SeqStmtNode> Make(std::vector<Stmt> seq, Span span = {});
  /*! \brief Flattens nested sequences; one statement stays itself, none gives Evaluate(0). */
  static Stmt Flatten(const std::vector<Stmt>& seq, Span span = {});
};

/*! \brief Evaluate an expression for its effect (a call). */
struct EvaluateNode : StmtNode {
  TESSERA_NODE_KIND(Evaluate)
  Expr value;
  ~EvaluateNode() override { ReleaseChild(value); }
  EvaluateNode(Expr v, Span s) : StmtNode(kKind, std::move(s)), value(std::move(v)) {}
  static Ref<EvaluateNode> Make(Expr value, Span span = {});
};

// ---- TensorIR blocks ----

/*! \brief A rectangular region of a buffer: one Range per dimension. */
struct BufferRegionNode : Object {
  TESSERA_NODE_KIND(BufferRegion)
  Buffer buffer;
  std::vector<Range> region;
  Span span;
  BufferRegionNode(Buffer b, std::vector<Range> r, Span s)
      : Object(kKind), buffer(std::move(b)), region(std::move(r)), span(std::move(s)) {}
  /*! \brief Checks one integer Range per buffer dimension. */
  static Ref<BufferRegionNode> Make(Buffer buffer, std::vector<Range> region, Span span = {});
  /*! \brief The whole buffer: [0, shape[d]) in every dimension. */
  static Ref<BufferRegionNode> FullRegion(Buffer buffer, Span span = {});
};
using BufferRegion = Ref<BufferRegionNode>;

/*! \brief `buffer` declared as a view of the region `source` (`T.match_buffer(A[...], ...)`). */
struct MatchBufferRegionNode : Object {
  TESSERA_NODE_KIND(MatchBufferRegion)
  Buffer buffer;
  BufferRegion source;
  Span span;
  MatchBufferRegionNode(Buffer b, BufferRegion src, Span s)
      : Object(kKind), buffer(std::move(b)), source(std::move(src)), span(std::move(s)) {}
  /*! \brief Checks equal element types and that the view has no more dimensions than the
   *  source region. */
  static Ref<MatchBufferRegionNode> Make(Buffer buffer, BufferRegion source, Span span = {});
};
using MatchBufferRegion = Ref<MatchBufferRegionNode>;

/*!
 * \brief A commutative reducer as an IR value (`T.comm_reducer(lambda x, y: x + y, [0.0])`):
 *  `result` combines `lhs` with `rhs` (one variable of each per reduced value), starting from
 *  `identity_element`. It annotates cross-thread reductions (`T.attr(reducer, "reduce_scope",
 *  ...)` around `T.tvm_thread_allreduce`). `lhs` and `rhs` are bound by the reducer.
 */
struct CommReducerNode : Object {
  TESSERA_NODE_KIND(CommReducer)
  std::vector<Var> lhs, rhs;
  std::vector<Expr> result, identity_element;
  Span span;
  CommReducerNode(std::vector<Var> l, std::vector<Var> r, std::vector<Expr> res,
                  std::vector<Expr> id, Span s)
      : Object(kKind),
        lhs(std::move(l)),
        rhs(std::move(r)),
        result(std::move(res)),
        identity_element(std::move(id)),
        span(std::move(s)) {}
  /*! \brief Checks one lhs, rhs, result and identity per value, each value of one scalar type. */
  static Ref<CommReducerNode> Make(std::vector<Var> lhs, std::vector<Var> rhs,
                                   std::vector<Expr> result, std::vector<Expr> identity_element,
                                   Span span = {});
};
using CommReducer = Ref<CommReducerNode>;

/*!
 * \brief A TensorIR block: an isolated unit of computation over its own iterators.
 *
 * `iter_vars` are the block iterators (kDataPar spatial, kCommReduce reduction, kOpaque), each
 * with its domain; `reads`/`writes` are the regions the block accesses, over the iterators;
 * `init` (may be null) runs before the first reduction step; `alloc_buffers` are allocated for
 * the block's lifetime; `match_buffers` declare views of outer regions. The block's name is a
 * hint for schedules and printing and is not part of structural equality.
 */
struct BlockNode : StmtNode {
  TESSERA_NODE_KIND(Block)
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads, writes;
  std::string name_hint;
  Stmt body;
  Stmt init;  // may be null
  std::vector<Buffer> alloc_buffers;
  std::vector<MatchBufferRegion> match_buffers;
  AttrMap annotations;
  ~BlockNode() override { ReleaseChild(body); ReleaseChild(init); }
  BlockNode(std::vector<IterVar> iv, std::vector<BufferRegion> r, std::vector<BufferRegion> w,
            std::string n, Stmt b, Stmt i, std::vector<Buffer> ab,
            std::vector<MatchBufferRegion> mb, AttrMap a, Span s)
      : StmtNode(kKind, std::move(s)),
        iter_vars(std::move(iv)),
        reads(std::move(r)),
        writes(std::move(w)),
        name_hint(std::move(n)),
        body(std::move(b)),
        init(std::move(i)),
        alloc_buffers(std::move(ab)),
        match_buffers(std::move(mb)),
        annotations(std::move(a)) {}
  /*! \brief Checks that iterators have a domain and a scalar integer variable of its type and a
   *  block kind (DataPar, CommReduce or Opaque), and that no list holds a null. */
  static Ref<BlockNode> Make(std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                             std::vector<BufferRegion> writes, std::string name_hint, Stmt body,
                             Stmt init = nullptr, std::vector<Buffer> alloc_buffers = {},
                             std::vector<MatchBufferRegion> match_buffers = {},
                             AttrMap annotations = {}, Span span = {});
};
using Block = Ref<BlockNode>;

/*! \brief Executes `block` with its iterators bound to `iter_values`, when `predicate` holds. */
struct BlockRealizeNode : StmtNode {
  TESSERA_NODE_KIND(BlockRealize)
  std::vector<Expr> iter_values;
  Expr predicate;
  Block block;
  ~BlockRealizeNode() override { ReleaseChild(predicate); ReleaseChild(block); ReleaseChildren(iter_values); }
  BlockRealizeNode(std::vector<Expr> v, Expr p, Block b, Span s)
      : StmtNode(kKind, std::move(s)),
        iter_values(std::move(v)),
        predicate(std::move(p)),
        block(std::move(b)) {}
  /*! \brief Checks one value per iterator, of the iterator's type, and a bool predicate
   *  (default true). */
  static Ref<BlockRealizeNode> Make(std::vector<Expr> iter_values, Expr predicate, Block block,
                                    Span span = {});
};
using BlockRealize = Ref<BlockRealizeNode>;

}  // namespace tessera
