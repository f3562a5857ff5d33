// IRBuilder: builds statements and functions from a parser's sequence of calls, with a frame
// stack (function, loop, if/then/else, while, block, init) where binders scope over the rest of
// the frame.
#pragma once

#include <unordered_map>

#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {

class IRBuilder {
 public:
  /*! \brief Wraps the rest of the enclosing frame's statements (LetStmt, DeclBuffer, ...). */
  using Binder = std::function<Stmt(Stmt body)>;

  // ---- functions ----
  void BeginFunction(std::string name, Span span = {});
  void AddParam(Var param);
  void BindParamBuffer(Var param, Buffer buffer);
  void SetReturnType(DataType type);
  void SetFunctionAttr(const std::string& key, ObjectRef value);
  PrimFunc EndFunction();

  // ---- a root frame (TVM's imperative IRBuilder: statements outside any function) ----
  /*! \brief Opens a frame that collects top-level statements; only when no frame is open. */
  void BeginRoot();
  /*! \brief Closes the root frame; returns its statements folded into one (null when none). */
  Stmt EndRoot();

  // ---- statements ----
  void Emit(Stmt stmt);
  /*! \brief Scope `binder` over the statements that follow in the current frame. */
  void EmitBinder(Binder binder);
  void EmitLet(Var var, Expr value, Span span = {});
  void EmitDeclBuffer(Buffer buffer, Span span = {});
  void EmitAllocate(Var buffer_var, DataType dtype, std::vector<Expr> extents,
                    AttrMap annotations = {}, Span span = {});

  // ---- nested frames ----
  void BeginFor(Var loop_var, Expr min, Expr extent, ForKind kind, IterVar thread_binding = nullptr,
                AttrMap annotations = {}, Span span = {}, Expr step = nullptr);
  void EndFor();
  void BeginWhile(Expr condition, Span span = {});
  void EndWhile();
  void BeginIf(Expr condition, Span span = {});
  void BeginThen();
  void EndThen();
  void BeginElse();
  void EndElse();
  void EndIf();
  /*! \brief A plain nested block scope (e.g. `with` bodies); its statements are spliced. */
  void BeginScope();
  void EndScope();

  // ---- TensorIR blocks ----
  /*! \brief Opens `with T.block(name)`; closing it emits a BlockRealize (or, with `no_realize`,
   *  the bare Block). */
  void BeginBlock(std::string name, bool no_realize = false, Span span = {});
  /*! \brief Defines a block iterator bound to `value` (`T.axis.spatial(dom, value)`). */
  void AddBlockIter(IterVar iter, Expr value);
  /*! \brief `T.reads(...)` / `T.writes(...)`; when never called they are inferred at EndBlock. */
  void SetBlockReads(std::vector<BufferRegion> regions);
  void SetBlockWrites(std::vector<BufferRegion> regions);
  /*! \brief `T.where(predicate)`. */
  void SetBlockPredicate(Expr predicate);
  /*! \brief `T.block_attr({...})`: merged into the block's annotations. */
  void SetBlockAttrs(AttrMap attrs);
  /*! \brief `T.alloc_buffer`: allocated by the innermost block, or by the implicit root block
   *  when outside any block. */
  void AllocBuffer(Buffer buffer);
  /*! \brief `T.match_buffer(A[...], ...)` inside a block. */
  void AddMatchBuffer(MatchBufferRegion match);
  /*! \brief `with T.init():` of the innermost block. */
  void BeginInit(Span span = {});
  void EndInit();
  /*! \brief Closes the block; returns the BlockRealize (or Block) it emitted. */
  Stmt EndBlock();
  /*! \brief Whether the innermost open frame is a block (where T.reads etc. belong). */
  bool InBlock() const;

  /*! \brief Number of open frames (0 when idle). */
  size_t depth() const { return frames_.size(); }

 private:
  enum class FrameKind { kRoot, kFunction, kFor, kWhile, kIf, kThen, kElse, kScope, kBlock, kInit };
  struct Item {
    Stmt stmt;      // a statement, or
    Binder binder;  // a binder over the items after it
    Span span;
  };
  struct Frame {
    FrameKind kind;
    std::vector<Item> items;
    Span span;
    // function
    std::string name;
    std::vector<Var> params;
    std::vector<std::pair<Var, Buffer>> buffer_map;
    DataType ret_type = DataType::Void();
    AttrMap attrs;
    // for
    Var loop_var;
    Expr min, extent, step;
    ForKind for_kind = ForKind::kSerial;
    IterVar thread_binding;
    AttrMap annotations;
    // if / while
    Expr condition;
    Stmt then_case, else_case;
    // block (and the function's implicit root block: alloc_buffers)
    std::vector<IterVar> iter_vars;
    std::vector<Expr> iter_values;
    bool has_reads = false, has_writes = false, no_realize = false;
    std::vector<BufferRegion> reads, writes;
    std::vector<Buffer> alloc_buffers;
    std::vector<MatchBufferRegion> match_buffers;
    Stmt init;
  };

  Frame& Top(FrameKind kind, const char* what);
  /*! \brief The innermost block frame, for statements written directly in it. */
  Frame& TopBlock(const char* what);
  Frame Pop(FrameKind kind, const char* what);
  static Stmt Fold(const std::vector<Item>& items, Span span);

  std::vector<Frame> frames_;
  // Blocks whose reads (1) / writes (2) EndBlock inferred: a root block keeps none (EndFunction).
  std::unordered_map<const BlockNode*, int> inferred_;
};

}  // namespace tessera
