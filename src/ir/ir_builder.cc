// IRBuilder implementation: frames collect items; closing a frame folds them into one Stmt.
#include "tessera/ir/ir_builder.h"

#include <algorithm>
#include <unordered_map>

#include "tessera/ir/block_access.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {

IRBuilder::Frame& IRBuilder::Top(FrameKind kind, const char* what) {
  if (frames_.empty() || frames_.back().kind != kind) {
    throw InternalError(std::string("IRBuilder: ") + what + " does not match the open frame");
  }
  return frames_.back();
}

IRBuilder::Frame IRBuilder::Pop(FrameKind kind, const char* what) {
  Frame f = std::move(Top(kind, what));
  frames_.pop_back();
  return f;
}

Stmt IRBuilder::Fold(const std::vector<Item>& items, Span span) {
  // Walk backwards: statements accumulate into a tail; a binder wraps the tail after it.
  std::vector<Stmt> tail;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (it->stmt) {
      tail.insert(tail.begin(), it->stmt);
    } else {
      Stmt body = SeqStmtNode::Flatten(tail, it->span);
      tail.assign(1, it->binder(body));
    }
  }
  return SeqStmtNode::Flatten(tail, span);
}

void IRBuilder::BeginFunction(std::string name, Span span) {
  if (!frames_.empty()) throw InternalError("IRBuilder: functions cannot nest");
  Frame f;
  f.kind = FrameKind::kFunction;
  f.name = std::move(name);
  f.span = std::move(span);
  frames_.push_back(std::move(f));
}

void IRBuilder::AddParam(Var param) {
  if (frames_.size() != 1) throw InternalError("IRBuilder: parameters belong to the function frame");
  Top(FrameKind::kFunction, "AddParam").params.push_back(std::move(param));
}

void IRBuilder::BindParamBuffer(Var param, Buffer buffer) {
  if (frames_.size() != 1) throw InternalError("IRBuilder: buffer_map belongs to the function frame");
  Top(FrameKind::kFunction, "BindParamBuffer").buffer_map.emplace_back(std::move(param), std::move(buffer));
}

void IRBuilder::BeginRoot() {
  if (!frames_.empty()) throw InternalError("IRBuilder: a root frame must be the outermost");
  Frame f;
  f.kind = FrameKind::kRoot;
  frames_.push_back(std::move(f));
}

Stmt IRBuilder::EndRoot() {
  Frame f = Pop(FrameKind::kRoot, "EndRoot");
  if (!frames_.empty()) throw InternalError("IRBuilder: unclosed frames at the end of the root");
  if (f.items.empty()) return Stmt();
  return Fold(f.items, f.span);
}

void IRBuilder::SetReturnType(DataType type) {
  if (frames_.empty() || frames_.front().kind != FrameKind::kFunction) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "a return type needs an open function";
  }
  frames_.front().ret_type = type;
}

void IRBuilder::SetFunctionAttr(const std::string& key, ObjectRef value) {
  if (frames_.empty() || frames_.front().kind != FrameKind::kFunction) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "function attributes need an open function";
  }
  frames_.front().attrs[key] = std::move(value);
}

namespace {

bool ContainsBlock(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s,
                 [&](const ObjectRef& n) { found = found || n->kind == NodeKind::kBlockRealize; });
  return found;
}

// A body written as one block without iterators (`with T.block("root"):`, or any name, or none):
// that block is the root, as TVM's script completion takes it.
bool IsExplicitRoot(const Stmt& s) {
  auto* realize = AsPtr<BlockRealizeNode>(s);
  return realize && realize->block->iter_vars.empty();
}

}  // namespace

PrimFunc IRBuilder::EndFunction() {
  if (frames_.size() != 1) throw InternalError("IRBuilder: unclosed frames at the end of a function");
  Frame f = Pop(FrameKind::kFunction, "EndFunction");
  Stmt body = Fold(f.items, f.span);
  // Every function with blocks or function-level allocations has an implicit root block.
  if (!f.alloc_buffers.empty() || (ContainsBlock(body) && !IsExplicitRoot(body))) {
    Block root =
        BlockNode::Make({}, {}, {}, "root", body, nullptr, f.alloc_buffers, {}, {}, f.span);
    body = BlockRealizeNode::Make({}, Bool(true), root, f.span);
  } else if (IsExplicitRoot(body)) {
    // As TVM's completion: the root block's regions are not inferred (only written ones stay).
    auto* realize = AsPtr<BlockRealizeNode>(body);
    const Block& b = realize->block;
    auto it = inferred_.find(b.get());
    if (it != inferred_.end() && it->second != 0) {
      Block root = BlockNode::Make(b->iter_vars, (it->second & 1) ? std::vector<BufferRegion>{} : b->reads,
                                   (it->second & 2) ? std::vector<BufferRegion>{} : b->writes,
                                   b->name_hint, b->body, b->init, b->alloc_buffers, b->match_buffers,
                                   b->annotations, b->span);
      body = BlockRealizeNode::Make(realize->iter_values, realize->predicate, root, realize->span);
    }
  }
  inferred_.clear();
  // The buffer map follows the parameter order, whatever order the match_buffers came in.
  // (Positions looked up in a map: a search per comparison was quadratic in the parameters.)
  std::unordered_map<const VarNode*, size_t> position;
  for (size_t i = 0; i < f.params.size(); ++i) position.emplace(f.params[i].get(), i);
  auto index = [&](const Var& v) {
    auto it = position.find(v.get());
    return it == position.end() ? f.params.size() : it->second;
  };
  std::stable_sort(f.buffer_map.begin(), f.buffer_map.end(),
                   [&](const auto& x, const auto& y) { return index(x.first) < index(y.first); });
  AttrMap attrs = f.attrs;
  if (!attrs.count("global_symbol")) attrs["global_symbol"] = StringImmNode::Make(f.name);
  return PrimFuncNode::Make(f.params, f.buffer_map, body, f.ret_type, attrs, f.span);
}

void IRBuilder::Emit(Stmt stmt) {
  if (frames_.empty()) throw InternalError("IRBuilder: statement outside a function");
  if (!stmt) throw InternalError("IRBuilder: null statement");
  Span span = stmt->span;
  frames_.back().items.push_back({std::move(stmt), nullptr, span});
}

void IRBuilder::EmitBinder(Binder binder) {
  if (frames_.empty()) throw InternalError("IRBuilder: binding outside a function");
  frames_.back().items.push_back({nullptr, std::move(binder), {}});
}

void IRBuilder::EmitLet(Var var, Expr value, Span span) {
  // Build once now so type errors surface at the assignment, not at the end of the frame.
  LetStmtNode::Make(var, value, EvaluateNode::Make(Int32(0)), span);
  EmitBinder([var, value, span](Stmt body) { return LetStmtNode::Make(var, value, body, span); });
}

void IRBuilder::EmitDeclBuffer(Buffer buffer, Span span) {
  EmitBinder([buffer, span](Stmt body) { return DeclBufferNode::Make(buffer, body, span); });
}

void IRBuilder::EmitAllocate(Var buffer_var, DataType dtype, std::vector<Expr> extents,
                             AttrMap annotations, Span span) {
  AllocateNode::Make(buffer_var, dtype, extents, nullptr, EvaluateNode::Make(Int32(0)), annotations, span);
  EmitBinder([=](Stmt body) {
    return AllocateNode::Make(buffer_var, dtype, extents, nullptr, body, annotations, span);
  });
}

void IRBuilder::BeginFor(Var loop_var, Expr min, Expr extent, ForKind kind, IterVar thread_binding,
                         AttrMap annotations, Span span, Expr step) {
  if (frames_.empty()) throw InternalError("IRBuilder: loop outside a function");
  Frame f;
  f.kind = FrameKind::kFor;
  f.loop_var = std::move(loop_var);
  f.min = std::move(min);
  f.extent = std::move(extent);
  f.for_kind = kind;
  f.thread_binding = std::move(thread_binding);
  f.annotations = std::move(annotations);
  f.span = std::move(span);
  f.step = std::move(step);
  frames_.push_back(std::move(f));
}

void IRBuilder::EndFor() {
  Frame f = Pop(FrameKind::kFor, "EndFor");
  Emit(ForNode::Make(f.loop_var, f.min, f.extent, f.for_kind, Fold(f.items, f.span), f.thread_binding,
                     f.annotations, f.span, f.step));
}

void IRBuilder::BeginWhile(Expr condition, Span span) {
  if (frames_.empty()) throw InternalError("IRBuilder: while outside a function");
  Frame f;
  f.kind = FrameKind::kWhile;
  f.condition = std::move(condition);
  f.span = std::move(span);
  frames_.push_back(std::move(f));
}

void IRBuilder::EndWhile() {
  Frame f = Pop(FrameKind::kWhile, "EndWhile");
  Emit(WhileNode::Make(f.condition, Fold(f.items, f.span), f.span));
}

void IRBuilder::BeginIf(Expr condition, Span span) {
  if (frames_.empty()) throw InternalError("IRBuilder: if outside a function");
  Frame f;
  f.kind = FrameKind::kIf;
  f.condition = std::move(condition);
  f.span = std::move(span);
  frames_.push_back(std::move(f));
}

void IRBuilder::BeginThen() {
  Top(FrameKind::kIf, "BeginThen");
  Frame f;
  f.kind = FrameKind::kThen;
  frames_.push_back(std::move(f));
}

void IRBuilder::EndThen() {
  Frame f = Pop(FrameKind::kThen, "EndThen");
  Top(FrameKind::kIf, "EndThen").then_case = Fold(f.items, f.span);
}

void IRBuilder::BeginElse() {
  Top(FrameKind::kIf, "BeginElse");
  Frame f;
  f.kind = FrameKind::kElse;
  frames_.push_back(std::move(f));
}

void IRBuilder::EndElse() {
  Frame f = Pop(FrameKind::kElse, "EndElse");
  Top(FrameKind::kIf, "EndElse").else_case = Fold(f.items, f.span);
}

void IRBuilder::EndIf() {
  Frame f = Pop(FrameKind::kIf, "EndIf");
  if (!f.then_case) throw InternalError("IRBuilder: if without a then branch");
  Emit(IfThenElseNode::Make(f.condition, f.then_case, f.else_case, f.span));
}

void IRBuilder::BeginScope() {
  if (frames_.empty()) throw InternalError("IRBuilder: scope outside a function");
  Frame f;
  f.kind = FrameKind::kScope;
  frames_.push_back(std::move(f));
}

void IRBuilder::EndScope() {
  Frame f = Pop(FrameKind::kScope, "EndScope");
  Stmt s = Fold(f.items, f.span);
  if (auto* e = AsPtr<EvaluateNode>(s); e && IsConstInt(e->value, 0)) return;
  Emit(s);
}

// ---- blocks ----

IRBuilder::Frame& IRBuilder::TopBlock(const char* what) {
  if (frames_.empty() || frames_.back().kind != FrameKind::kBlock) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << what << " must be written directly inside a T.block";
  }
  return frames_.back();
}

bool IRBuilder::InBlock() const {
  return !frames_.empty() && frames_.back().kind == FrameKind::kBlock;
}

void IRBuilder::BeginBlock(std::string name, bool no_realize, Span span) {
  if (frames_.empty()) throw InternalError("IRBuilder: block outside a function");
  Frame f;
  f.kind = FrameKind::kBlock;
  f.name = std::move(name);
  f.no_realize = no_realize;
  f.span = std::move(span);
  frames_.push_back(std::move(f));
}

void IRBuilder::AddBlockIter(IterVar iter, Expr value) {
  Frame& f = TopBlock("T.axis");
  if (!iter || !value) throw InternalError("IRBuilder: null block iterator or binding");
  if (!f.items.empty() || f.init) {
    TESSERA_THROW_KIND(iter->span, ErrorKind::kValue)
        << "block iterators must be defined before the block's statements";
  }
  if (iter->var->dtype != value->dtype) {
    TESSERA_THROW_KIND(iter->span, ErrorKind::kType)
        << "iterator " << iter->var->name << " of type " << iter->var->dtype.ToString()
        << " bound to a value of type " << value->dtype.ToString();
  }
  f.iter_vars.push_back(std::move(iter));
  f.iter_values.push_back(std::move(value));
}

void IRBuilder::SetBlockReads(std::vector<BufferRegion> regions) {
  Frame& f = TopBlock("T.reads");
  if (f.has_reads) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "T.reads is given twice";
  f.has_reads = true;
  f.reads = std::move(regions);
}

void IRBuilder::SetBlockWrites(std::vector<BufferRegion> regions) {
  Frame& f = TopBlock("T.writes");
  if (f.has_writes) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "T.writes is given twice";
  f.has_writes = true;
  f.writes = std::move(regions);
}

void IRBuilder::SetBlockPredicate(Expr predicate) {
  Frame& f = TopBlock("T.where");
  if (f.condition) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "T.where is given twice";
  if (!predicate || predicate->dtype != DataType::Bool()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kType) << "T.where needs a bool condition";
  }
  f.condition = std::move(predicate);
}

namespace {
// Adds `value` under `key` to `into`, as successive T.block_attr calls combine: dict values merge
// key by key, an equal value is kept once, a different value for the same key is an error.
void MergeAnnotation(AttrMap& into, const std::string& key, ObjectRef value, const std::string& path) {
  auto it = into.find(key);
  if (it == into.end()) {
    into.emplace(key, std::move(value));
    return;
  }
  auto* old_map = AsPtr<MapNode>(it->second);
  auto* new_map = AsPtr<MapNode>(value);
  if (old_map && new_map) {
    AttrMap merged = old_map->items;
    for (const auto& [k, v] : new_map->items) MergeAnnotation(merged, k, v, path + key + ".");
    it->second = MapNode::Make(std::move(merged));
    return;
  }
  if (!StructuralEqual(it->second, value)) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "T.block_attr: the annotation '" << path << key
        << "' is given two different values in one block";
  }
}
}  // namespace

void IRBuilder::SetBlockAttrs(AttrMap attrs) {
  Frame& f = TopBlock("T.block_attr");
  for (auto& [key, value] : attrs) MergeAnnotation(f.annotations, key, std::move(value), "");
}

void IRBuilder::AllocBuffer(Buffer buffer) {
  if (frames_.empty()) throw InternalError("IRBuilder: allocation outside a function");
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (it->kind == FrameKind::kBlock || it->kind == FrameKind::kFunction) {
      it->alloc_buffers.push_back(std::move(buffer));
      return;
    }
  }
  TESSERA_THROW_KIND(buffer->span, ErrorKind::kValue)
      << "T.alloc_buffer of " << buffer->name << " must be inside a T.block or a function";
}

void IRBuilder::AddMatchBuffer(MatchBufferRegion match) {
  TopBlock("T.match_buffer of a region").match_buffers.push_back(std::move(match));
}

void IRBuilder::BeginInit(Span span) {
  Frame& block = TopBlock("T.init");
  if (block.init) TESSERA_THROW_KIND(span, ErrorKind::kValue) << "a block has one T.init";
  Frame f;
  f.kind = FrameKind::kInit;
  f.span = std::move(span);
  frames_.push_back(std::move(f));
}

void IRBuilder::EndInit() {
  Frame f = Pop(FrameKind::kInit, "EndInit");
  Top(FrameKind::kBlock, "EndInit").init = Fold(f.items, f.span);
}

namespace {

/*! \brief Handle-typed variables a block uses outside tvm_access_ptr's region argument, in
 *  visiting order: the candidates for a buffer named by its data pointer alone (`A.data` passed
 *  to an extern call), an access whose region cannot be inferred. tvm_access_ptr states its
 *  region and is not one. Collected first so that a block using no handle (the usual case)
 *  costs one walk of the block, not a map of every buffer in scope (quadratic over a function
 *  of thousands of blocks and parameters). */
class HandleUses : public StmtExprVisitor {
 public:
  std::vector<const VarNode*> handles;

  using StmtExprVisitor::VisitExpr_;
  void VisitExpr_(const VarNode* op) override {
    if (op->dtype.is_handle()) handles.push_back(op);
  }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.tvm_access_ptr")) {
      for (size_t i = 0; i < op->args.size(); ++i) {
        if (i != 1) VisitExpr(op->args[i]);
      }
      return;
    }
    StmtExprVisitor::VisitExpr_(op);
  }
  using StmtExprVisitor::VisitStmt_;
  // As TVM's region detection: a nested block stands for the regions it states (given or
  // inferred when it was built); what its own body uses is not looked at again.
  void VisitStmt_(const BlockRealizeNode* op) override {
    for (const Expr& value : op->iter_values) VisitExpr(value);
    VisitExpr(op->predicate);
  }
};

}  // namespace

Stmt IRBuilder::EndBlock() {
  Frame f = Pop(FrameKind::kBlock, "EndBlock");
  if (!f.has_reads || !f.has_writes) {
    // As TVM's completion: a region cannot be inferred from a buffer's bare data pointer.
    HandleUses uses;
    for (const Item& item : f.items) {
      if (item.stmt) uses.VisitStmt(item.stmt);
    }
    if (f.init) uses.VisitStmt(f.init);
    if (!uses.handles.empty()) {
      std::unordered_map<const VarNode*, const BufferNode*> data;
      for (const Frame& g : frames_) {
        for (const auto& [param, buf] : g.buffer_map) data.emplace(buf->data.get(), buf.get());
        for (const Buffer& buf : g.alloc_buffers) data.emplace(buf->data.get(), buf.get());
      }
      for (const VarNode* v : uses.handles) {
        auto it = data.find(v);
        if (it == data.end()) continue;
        TESSERA_THROW_KIND(f.span, ErrorKind::kValue)
            << "cannot infer the regions block \"" << f.name << "\" accesses: it uses the data "
            << "pointer of buffer " << it->second->name
            << " directly; state them with T.reads and T.writes";
      }
    }
  }
  Stmt body = Fold(f.items, f.span);
  Block block = BlockNode::Make(f.iter_vars, f.reads, f.writes, f.name, body, f.init,
                                f.alloc_buffers, f.match_buffers, f.annotations, f.span);
  bool in_function = std::any_of(frames_.begin(), frames_.end(),
                                 [](const Frame& g) { return g.kind == FrameKind::kFunction; });
  if (!in_function && (!f.has_reads || !f.has_writes)) {
    // A block built outside any function (the imperative IRBuilder's top level) is left as
    // TVM's builder leaves it: the regions not given stay empty, and the annotation
    // "tir.script_parsing_detect_access" (1: reads, 2: writes, 3: both) says which ones the
    // function's completion would detect.
    AttrMap annotations = f.annotations;
    annotations["tir.script_parsing_detect_access"] =
        MakeConst(DataType::Int(64), int64_t{(f.has_reads ? 0 : 1) | (f.has_writes ? 0 : 2)});
    block = BlockNode::Make(f.iter_vars, f.reads, f.writes, f.name, body, f.init, f.alloc_buffers,
                            f.match_buffers, annotations, f.span);
  } else if (!f.has_reads || !f.has_writes) {
    auto [reads, writes] = InferBlockAccessRegions(block.get());
    block = BlockNode::Make(f.iter_vars, f.has_reads ? f.reads : reads,
                            f.has_writes ? f.writes : writes, f.name, body, f.init, f.alloc_buffers,
                            f.match_buffers, f.annotations, f.span);
  }
  // (Set for every block: an address of a freed block may come back.)
  inferred_[block.get()] = in_function ? (f.has_reads ? 0 : 1) | (f.has_writes ? 0 : 2) : 0;
  Stmt result = block;
  if (!f.no_realize) {
    result = BlockRealizeNode::Make(f.iter_values, f.condition, block, f.span);
  } else if (!f.iter_vars.empty() || f.condition) {
    TESSERA_THROW_KIND(f.span, ErrorKind::kValue)
        << "a block with no_realize=True cannot have iterators or T.where";
  }
  Emit(result);
  return result;
}

}  // namespace tessera
