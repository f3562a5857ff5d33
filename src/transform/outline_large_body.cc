// tir.OutlineLargeBody: a host function whose body is very long (thousands of statements after
// unrolling, or one statement per output of a wide te function) is cut into several C
// functions. The C compiler's optimiser takes time superlinear in the size of one function
// (a 440 KB function took 6.9 s at -O2); the same statements in functions of a bounded size
// compile in time linear in their number.
//
// Runs of consecutive statements of a sequence longer than the budget (IR nodes, config
// "tir.OutlineLargeBody": {"max_nodes": N}, 0 disables) become private functions whose
// parameters are the variables the run uses but does not define; the sequence calls them.
// A statement that returns, breaks, asserts, binds threads or writes a variable-backed local
// allocation of an enclosing scope stays where it is.
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/stack.h"
#include "tessera/transform/passes.h"
#include "free_vars.h"

namespace tessera {
namespace transform {
namespace {

constexpr int64_t kDefaultMaxNodes = 3000;

int64_t CountNodes(const Expr& e) {
  if (!e) return 0;
  int64_t n = 0;
  PostOrderVisit(e, [&n](const ObjectRef&) { ++n; });
  return n;
}

// Whether a statement can move into a function of its own: it must not leave the enclosing
// function (return, break, continue, an assert's early return), nor depend on thread bindings.
bool Movable(const Stmt& s) {
  bool ok = true;
  PostOrderVisit(s, [&ok](const ObjectRef& n) {
    if (!ok) return;
    if (IsInstance<AssertStmtNode>(n.get())) {
      ok = false;
    } else if (auto* call = AsPtr<CallNode>(n)) {
      if (call->is_op("tir.ret") || call->is_op("tir.break") || call->is_op("tir.continue") ||
          call->is_op("tessera.set_return") || call->is_op("tessera.launch_kernel")) {
        ok = false;
      }
    } else if (auto* f = AsPtr<ForNode>(n)) {
      if (f->for_kind == ForKind::kThreadBinding) ok = false;
    } else if (auto* a = AsPtr<AttrStmtNode>(n)) {
      if (a->attr_key == "thread_extent" || a->attr_key == "virtual_thread") ok = false;
    } else if (IsInstance<BlockNode>(n.get()) || IsInstance<BlockRealizeNode>(n.get())) {
      ok = false;
    }
  });
  return ok;
}

class Outliner {
 public:
  Outliner(std::string prefix, int64_t max_nodes, const std::unordered_set<std::string>& taken,
           std::vector<std::pair<GlobalVar, PrimFunc>>* out, const PrimFunc& parent)
      : prefix_(std::move(prefix)),
        max_nodes_(max_nodes),
        taken_(taken),
        out_(out),
        parent_(parent) {}

  // The statement with its long sequences outlined, and its size in IR nodes afterwards.
  Stmt Visit(const Stmt& s, int64_t* size) {
    CheckStack("statement");
    if (auto* seq = AsPtr<SeqStmtNode>(s)) return VisitSeq(seq, size);
    if (auto* let = AsPtr<LetStmtNode>(s)) {
      int64_t n = 0;
      if (Rematerializable(let->value)) remat_[let->var.get()] = let->value;
      Stmt body = Visit(let->body, &n);
      remat_.erase(let->var.get());
      *size = 1 + n + CountNodes(let->value);
      return (body == let->body) ? s : LetStmtNode::Make(let->var, let->value, body, s->span);
    }
    if (auto* a = AsPtr<AssertStmtNode>(s)) {
      int64_t n = 0;
      Stmt body = Visit(a->body, &n);
      *size = 1 + n + CountNodes(a->condition) + CountNodes(a->message);
      return (body == a->body) ? s
                                   : AssertStmtNode::Make(a->condition, a->message, body, s->span);
    }
    if (auto* f = AsPtr<ForNode>(s); f && f->for_kind != ForKind::kThreadBinding) {
      int64_t n = 0;
      Stmt body = Visit(f->body, &n);
      *size = 1 + n + CountNodes(f->min) + CountNodes(f->extent);
      if ((body == f->body)) return s;
      return ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind, body, f->thread_binding,
                           f->annotations, s->span);
    }
    if (auto* i = AsPtr<IfThenElseNode>(s)) {
      int64_t n = 0, m = 0;
      Stmt then_case = Visit(i->then_case, &n);
      Stmt else_case = i->else_case ? Visit(i->else_case, &m) : i->else_case;
      *size = 1 + n + m + CountNodes(i->condition);
      if ((then_case == i->then_case) && (else_case == i->else_case)) return s;
      return IfThenElseNode::Make(i->condition, then_case, else_case, s->span);
    }
    if (auto* a = AsPtr<AllocateNode>(s)) {
      int64_t n = 0;
      allocated_.insert(a->buffer_var.get());
      Stmt body = Visit(a->body, &n);
      allocated_.erase(a->buffer_var.get());
      *size = 1 + n;
      if ((body == a->body)) return s;
      return AllocateNode::Make(a->buffer_var, a->dtype, a->extents, a->condition, body,
                                a->annotations, s->span);
    }
    if (auto* d = AsPtr<DeclBufferNode>(s)) {
      int64_t n = 0;
      Stmt body = Visit(d->body, &n);
      *size = 1 + n;
      return body == d->body ? s : DeclBufferNode::Make(d->buffer, body, s->span);
    }
    if (auto* a = AsPtr<AttrStmtNode>(s);
        a && a->attr_key != "thread_extent" && a->attr_key != "virtual_thread") {
      int64_t n = 0;
      Stmt body = Visit(a->body, &n);
      *size = 1 + n + CountNodes(a->value);
      return body == a->body ? s
                             : AttrStmtNode::Make(a->node, a->attr_key, a->value, body, s->span);
    }
    int64_t n = 0;
    PostOrderVisit(s, [&n](const ObjectRef&) { ++n; });
    *size = n;
    return s;
  }

 private:
  Stmt VisitSeq(const SeqStmtNode* seq, int64_t* size) {
    std::vector<Stmt> items;
    std::vector<int64_t> sizes;
    int64_t total = 0;
    bool changed = false;
    for (const Stmt& s : seq->seq) {
      int64_t n = 0;
      items.push_back(Visit(s, &n));
      changed = changed || items.back() != s;
      sizes.push_back(n);
      total += n;
    }
    if (total > max_nodes_) {
      std::vector<Stmt> out;
      std::vector<Stmt> run;
      int64_t run_size = 0;
      total = 0;
      auto flush = [&] {
        if (run.empty()) return;
        Stmt call = Outline(run, seq->span);
        if (call) {
          out.push_back(call);
          total += 8;
          changed = true;
        } else {
          out.insert(out.end(), run.begin(), run.end());
          total += run_size;
        }
        run.clear();
        run_size = 0;
      };
      for (size_t i = 0; i < items.size(); ++i) {
        // A statement larger than the budget has had its own sequences outlined already.
        if (sizes[i] > max_nodes_ || !Movable(items[i]) || UsesAllocation(items[i])) {
          flush();
          out.push_back(items[i]);
          total += sizes[i];
          continue;
        }
        if (run_size + sizes[i] > max_nodes_) flush();
        run.push_back(items[i]);
        run_size += sizes[i];
      }
      flush();
      items = std::move(out);
    }
    *size = total + 1;
    if (!changed) return GetRef(seq);
    return SeqStmtNode::Flatten(items, seq->span);
  }

  // Whether a statement uses a local allocation of an enclosing statement (which may be a C
  // variable, not a pointer that could be passed).
  bool UsesAllocation(const Stmt& s) const {
    if (allocated_.empty()) return false;
    FreeVarCollector uses;
    uses.VisitStmt(s);
    for (const Var& v : uses.free) {
      if (allocated_.count(v.get())) return true;
    }
    return false;
  }

 public:
  // Whether a let-bound value can be computed again in an outlined function instead of being
  // passed to it: reads of the packed arguments (data pointers, extents). Passing them would
  // keep thousands of pointers live across the calls, which the C compiler's register allocator
  // handles in quadratic time.
  static bool Rematerializable(const Expr& e) {
    bool ok = true;
    PostOrderVisit(e, [&ok](const ObjectRef& n) {
      if (!ok) return;
      const Object* o = n.get();
      if (IsInstance<VarNode>(o) || IsInstance<IntImmNode>(o) || IsInstance<CastNode>(o)) return;
      auto* call = AsPtr<CallNode>(n);
      ok = call && (call->is_op("tessera.packed_arg") || call->is_op("tessera.dltensor_get") ||
                    call->is_op("tessera.dltensor_shape"));
    });
    return ok;
  }

 private:
  // A private function running `run`, called here; null when the run cannot move (it writes a
  // local allocation of the enclosing function, which may be a C variable).
  Stmt Outline(const std::vector<Stmt>& run, const Span& span) {
    Stmt body = SeqStmtNode::Flatten(run, span);
    FreeVarCollector uses;
    uses.VisitStmt(body);
    for (const Var& v : uses.free) {
      if (allocated_.count(v.get())) return nullptr;
    }
    // Parameters, and the bindings of argument reads the part computes again (dependencies
    // first), each placed right before the first statement that uses it: bound all at the
    // top, thousands of pointers were live at once, and the C compiler's register allocator
    // spent its time on them (-O2 of 1,000 one-line statements: 2.8 s, 1.6 s so).
    std::vector<Var> params;
    std::vector<std::pair<Var, Expr>> lets;
    std::unordered_set<const VarNode*> done;
    std::function<void(const Var&)> need = [&](const Var& v) {
      if (!done.insert(v.get()).second) return;
      auto it = remat_.find(v.get());
      if (it == remat_.end()) {
        params.push_back(v);
        return;
      }
      FreeVarCollector deps;
      deps.VisitExpr(it->second);
      for (const Var& u : deps.free) need(u);
      lets.emplace_back(v, it->second);
    };
    // Per statement: the index of its first binding in `lets`.
    std::vector<size_t> first_let;
    for (const Stmt& s : run) {
      first_let.push_back(lets.size());
      FreeVarCollector stmt_uses;
      stmt_uses.VisitStmt(s);
      for (const Var& v : stmt_uses.free) need(v);
    }
    // From the last statement back: a statement that binds nothing new joins the sequence
    // after it; one that does begins a sequence wrapped in its bindings.
    std::vector<Stmt> tail;
    for (size_t i = run.size(); i-- > 0;) {
      tail.insert(tail.begin(), run[i]);
      size_t end = i + 1 < run.size() ? first_let[i + 1] : lets.size();
      if (first_let[i] == end && i > 0) continue;
      Stmt seq = SeqStmtNode::Flatten(tail, span);
      for (size_t k = end; k-- > first_let[i];) {
        seq = LetStmtNode::Make(lets[k].first, lets[k].second, seq, span);
      }
      tail = {seq};
    }
    body = tail.front();
    struct {
      std::vector<Var> free;
    } fv{params};
    std::string name;
    do {
      name = prefix_ + "_part" + std::to_string(count_++);
    } while (taken_.count(name));
    AttrMap attrs;
    for (const char* key : {"target", "tir.noalias"}) {
      auto it = parent_->attrs.find(key);
      if (it != parent_->attrs.end()) attrs[key] = it->second;
    }
    GlobalVar gv = GlobalVarNode::Make(name);
    out_->emplace_back(gv, PrimFuncNode::Make(fv.free, {}, body, DataType::Void(), attrs, span));
    std::vector<Expr> args(fv.free.begin(), fv.free.end());
    return EvaluateNode::Make(CallNode::Make(DataType::Void(), gv, args, span), span);
  }

  std::string prefix_;
  int64_t max_nodes_;
  const std::unordered_set<std::string>& taken_;
  std::vector<std::pair<GlobalVar, PrimFunc>>* out_;
  PrimFunc parent_;
  std::unordered_set<const VarNode*> allocated_;
  std::unordered_map<const VarNode*, Expr> remat_;
  int count_ = 0;
};

// Removes the bindings of argument reads (data pointers, extents) that nothing uses any more
// because the parts read them again themselves.
Stmt DropDeadReads(const Stmt& body) {
  std::unordered_set<const VarNode*> used;
  PostOrderVisit(body, [&used](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) used.insert(v);
    if (auto* load = AsPtr<BufferLoadNode>(n)) used.insert(load->buffer->data.get());
    if (auto* store = AsPtr<BufferStoreNode>(n)) used.insert(store->buffer->data.get());
  });
  return IRTransform(
      body, nullptr,
      [&used](const ObjectRef& n) -> ObjectRef {
        auto* let = AsPtr<LetStmtNode>(n);
        if (let && !used.count(let->var.get()) && Outliner::Rematerializable(let->value)) {
          return let->body;
        }
        return nullptr;
      },
      {"LetStmt"});
}

// DropDeadReads until nothing changes: a data pointer's binding, once dropped, leaves the
// binding of its DLTensor handle unused.
Stmt DropAllDeadReads(Stmt body) {
  for (int i = 0; i < 4; ++i) {
    Stmt next = DropDeadReads(body);
    if (next == body) break;
    body = next;
  }
  return body;
}

IRModule OutlineLargeBodyModule(IRModule mod, const PassContext& ctx) {
  int64_t max_nodes = ctx.GetRecordInt("tir.OutlineLargeBody", "max_nodes", kDefaultMaxNodes);
  if (max_nodes <= 0) return mod;
  std::unordered_set<std::string> taken;
  for (const auto& [gv, f] : mod->functions) taken.insert(gv->name_hint);
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    std::string cc = f->GetStrAttr("calling_conv");
    if (cc == "device_kernel" || f->GetStrAttr("target") == "cuda") {
      out.emplace_back(gv, f);
      continue;
    }
    std::vector<std::pair<GlobalVar, PrimFunc>> parts;
    Outliner outliner(SymbolName(gv, f), max_nodes, taken, &parts, f);
    int64_t size = 0;
    Stmt body = outliner.Visit(f->body, &size);
    if ((body == f->body)) {
      out.emplace_back(gv, f);
      continue;
    }
    changed = true;
    for (auto& p : parts) {
      taken.insert(p.first->name_hint);
      out.push_back(std::move(p));
    }
    out.emplace_back(gv, f->WithBody(DropAllDeadReads(body)));
  }
  if (!changed) return mod;
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass OutlineLargeBody() {
  return CreateModulePass(OutlineLargeBodyModule, 0, "tir.OutlineLargeBody");
}
TESSERA_REGISTER_PASS("tir.OutlineLargeBody", OutlineLargeBody);

}  // namespace transform
}  // namespace tessera
