// PointerAccessExtents: how far into each pointer argument a kernel provably reaches.
#include <limits>
#include <map>
#include <set>
#include <optional>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int64_t kUnknown = -1;

int64_t Merge(int64_t a, int64_t b) { return (a == kUnknown || b == kUnknown) ? kUnknown : std::max(a, b); }

class ExtentCollector : public StmtExprVisitor {
 public:
  // `loop_bounds`: also bound accesses indexed by loops (see AffineMax); only for the entry,
  // whose body runs on every call (a callee's call may be guarded).
  ExtentCollector(const IRModule& mod, const PrimFunc& func,
                  std::map<const PrimFuncNode*, std::vector<int64_t>>* memo, bool loop_bounds)
      : mod_(mod), func_(func), memo_(memo), loop_bounds_(loop_bounds) {
    for (size_t i = 0; i < func->params.size(); ++i) index_[func->params[i].get()] = i;
    extents_.assign(func->params.size(), 0);
  }
  std::vector<int64_t> Run() {
    VisitStmt(func_->body);
    return extents_;
  }

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  // Control flow. An access counts only where the call provably reaches it: a constant index
  // outside any condition and before any return/break/continue (see Certain); an index bounded
  // by loops where, further, every iteration of its loops reaches it (see AffineMax).
  void VisitStmt(const Stmt& s) override {
    const Object* n = s.get();
    bool plain = IsInstance<SeqStmtNode>(n) || IsInstance<EvaluateNode>(n) ||
                 IsInstance<BufferStoreNode>(n) || IsInstance<LetStmtNode>(n) ||
                 IsInstance<DeclBufferNode>(n) || IsInstance<AllocateNode>(n) ||
                 IsInstance<AllocateConstNode>(n) || IsInstance<AttrStmtNode>(n) ||
                 IsInstance<ForNode>(n);
    if (plain) return StmtExprVisitor::VisitStmt(s);
    if (auto* w = AsPtr<WhileNode>(s)) {
      VisitExpr(w->condition);
      ++guarded_;
      VisitStmt(w->body);
      --guarded_;
      stuck_ = true;  // it may never end
      return;
    }
    if (auto* a = AsPtr<AssertStmtNode>(s)) {
      VisitExpr(a->condition);
      VisitExpr(a->message);
      stuck_ = true;  // a failed assertion ends the kernel
      if (a->body) VisitStmt(a->body);
      return;
    }
    if (auto* i = AsPtr<IfThenElseNode>(s)) {
      VisitExpr(i->condition);
      ++guarded_;
      VisitStmt(i->then_case);
      if (i->else_case) VisitStmt(i->else_case);
      --guarded_;
      return;
    }
    ++guarded_;  // blocks with their predicates, ...
    StmtExprVisitor::VisitStmt(s);
    --guarded_;
  }
  void VisitStmt_(const ForNode* op) override {
    auto lo = AsConstInt(op->min), extent = AsConstInt(op->extent);
    bool counted = lo && extent && *extent > 0 && op->HasTrivialStep() &&
                   (op->for_kind == ForKind::kSerial || op->for_kind == ForKind::kVectorized ||
                    op->for_kind == ForKind::kUnrolled) &&
                   loop_bounds_ && !Jumps(op->body);
    // The body runs at least once (its first iteration) when the extent is a positive constant.
    auto step = op->step ? AsConstInt(op->step) : std::optional<int64_t>(1);
    bool entered = extent && *extent > 0 && (op->HasTrivialStep() || (step && *step > 0));
    VisitExpr(op->min);
    VisitExpr(op->extent);
    if (op->step) VisitExpr(op->step);
    if (!counted) {
      int& depth = entered ? loop_guarded_ : guarded_;
      ++depth;
      VisitStmt(op->body);
      --depth;
      return;
    }
    loops_[op->loop_var.get()] = {*lo, *lo + *extent - 1};
    VisitStmt(op->body);
    loops_.erase(op->loop_var.get());
  }
  void VisitStmt_(const EvaluateNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    if (Jumps(op->value)) stuck_ = true;
    if (Exits(op->value)) exited_ = true;
  }
  // A scalar select is C's `c ? x : y`, which evaluates one of x and y; a vector one (__vsel)
  // evaluates both, so their accesses are reached (counted for constant indices; accesses
  // bounded by loops stay unknown there, as they always were).
  void VisitExpr_(const SelectNode* op) override {
    VisitExpr(op->condition);
    int& depth = op->condition->dtype.lanes() == 1 ? guarded_ : loop_guarded_;
    ++depth;
    VisitExpr(op->true_value);
    VisitExpr(op->false_value);
    --depth;
  }
  // C evaluates the right operand of a scalar && or || only on the left one's value.
  void VisitExpr_(const AndNode* op) override { ShortCircuit(op->a, op->b); }
  void VisitExpr_(const OrNode* op) override { ShortCircuit(op->a, op->b); }

  void VisitExpr_(const BufferLoadNode* op) override {
    Record(op->buffer, op->indices, op->predicate);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Record(op->buffer, op->indices, op->predicate);
    StmtExprVisitor::VisitStmt_(op);
  }
  // A pointer variable bound to an argument's address (``vp = a.as_ptr("i32x8")``, ``(c + 7)``
  // seen as vectors): what is accessed through it is accessed in the argument, from the
  // variable's byte offset on.
  void VisitStmt_(const LetStmtNode* op) override {
    if (!op->var->pointer && op->var->dtype.is_int() && op->var->dtype.lanes() == 1) {
      if (auto form = Linear(op->value)) {
        lets_[op->var.get()] = *form;
        StmtExprVisitor::VisitStmt_(op);
        lets_.erase(op->var.get());
        return;
      }
    }
    if (op->var->pointer) {
      const Expr& value = op->value;
      if (auto* v = AsPtr<VarNode>(value)) {
        if (index_.count(v) || alias_.count(v)) BindAlias(op->var.get(), v, 0);
      } else if (auto* call = AsPtr<CallNode>(value)) {
        auto* load = call->is_op("tir.address_of") ? AsPtr<BufferLoadNode>(call->args[0]) : nullptr;
        const VarNode* base = load ? load->buffer->data.get() : nullptr;
        if (base && (index_.count(base) || alias_.count(base))) {
          auto c =
              load->indices.size() == 1 ? AsConstInt(SimplifyExpr(load->indices[0])) : std::nullopt;
          int64_t bytes = ElementBytes(load->buffer->dtype);
          BindAlias(op->var.get(), base, (c && *c >= 0 && bytes > 0) ? *c * bytes : kUnknown);
          // A view at a constant offset (``p = a + 100``) is no access: what is reached through
          // it counts, by the rules of its accesses. Only where the pointer escapes (used as a
          // value, e.g. handed to an intrinsic) does the element it names count, as before.
          if (c && *c >= 0 && !Escapes(op->var.get(), op->body)) {
            for (const Expr& i : load->indices) VisitExpr(i);
            VisitStmt(op->body);
            return;
          }
        }
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const CallNode* op) override {
    if (auto* gv = AsPtr<GlobalVarNode>(op->op)) {
      PrimFunc callee = mod_->Lookup(gv->name_hint);
      if (callee) {
        std::vector<int64_t> inner = Of(mod_, callee, memo_);
        for (size_t i = 0; i < op->args.size() && i < inner.size(); ++i) {
          const VarNode* param = i < callee->params.size() ? callee->params[i].get() : nullptr;
          int64_t unit = param && param->pointer ? ScalarBytes(param) : 0;
          Forward(op->args[i], inner[i], unit);
        }
      }
      for (const Expr& a : op->args) {
        if (IsInstance<VarNode>(a.get())) continue;
        // An address handed to a known callee counts by what the callee reaches from it
        // (Forward), not by the element it names.
        auto* addr = callee ? AsPtr<CallNode>(a) : nullptr;
        auto* load =
            addr && addr->is_op("tir.address_of") ? AsPtr<BufferLoadNode>(addr->args[0]) : nullptr;
        if (load && load->indices.size() == 1 && AsConstInt(SimplifyExpr(load->indices[0]))) {
          continue;
        }
        VisitExpr(a);
      }
      if (callee && MayHang(callee)) stuck_ = true;
      return;
    }
    if (op->is_op("tir.if_then_else") && op->args.size() == 3) {
      VisitExpr(op->args[0]);
      int& depth = op->args[0]->dtype.lanes() == 1 ? guarded_ : loop_guarded_;
      ++depth;
      VisitExpr(op->args[1]);
      VisitExpr(op->args[2]);
      --depth;
      return;
    }
    // An address names an element without accessing it (an access through it has its own
    // extent, as the existing rules count it). The element named at a constant index counts
    // (where the address is certainly computed); one indexed by loops stays unknown.
    if (op->is_op("tir.address_of")) ++loop_guarded_;
    StmtExprVisitor::VisitExpr_(op);
    if (op->is_op("tir.address_of")) --loop_guarded_;
  }

  static std::vector<int64_t> Of(const IRModule& mod, const PrimFunc& f,
                                 std::map<const PrimFuncNode*, std::vector<int64_t>>* memo) {
    auto it = memo->find(f.get());
    if (it != memo->end()) return it->second;
    (*memo)[f.get()] = std::vector<int64_t>(f->params.size(), kUnknown);  // guards cycles
    std::vector<int64_t> r = ExtentCollector(mod, f, memo, false).Run();
    (*memo)[f.get()] = r;
    return r;
  }

 private:
  // An argument reaching a callee parameter accessed `inner` elements deep, elements of
  // `unit` bytes (the callee parameter's pointee; 0: the argument's own pointee).
  // A call that may not run (Certain) reaches nothing for sure: the callee's known extents do
  // not count there (an unknown one stays unknown).
  void Forward(const Expr& arg, int64_t inner, int64_t unit) {
    if (inner == 0) return;
    bool skip = inner != kUnknown && !Certain();
    if (auto* v = AsPtr<VarNode>(arg)) {
      if (!skip) Add(v, inner, unit);
      return;
    }
    auto* call = AsPtr<CallNode>(arg);
    if (call && call->is_op("tir.address_of")) {
      if (auto* load = AsPtr<BufferLoadNode>(call->args[0])) {
        auto c = AsConstInt(SimplifyExpr(load->indices.back()));
        if (!c || inner == kUnknown) return Add(load->buffer->data.get(), kUnknown);
        if (skip) return;
        // In bytes: the element the address names, then what the callee reaches from it.
        int64_t from = *c * ElementBytes(load->buffer->dtype);
        int64_t reach = inner * (unit > 0 ? unit : ElementBytes(load->buffer->dtype));
        Add(load->buffer->data.get(), from + reach, 1);
      }
    }
  }

  // Lanes past the last one a constant predicate enables are not accessed (the padding of a
  // vector split to native width); -1 when no lane is, the lane count when unknown.
  static int LastActiveLane(const Expr& pred, int lanes) {
    if (!pred) return lanes - 1;
    if (auto* call = AsPtr<CallNode>(pred)) {
      if (call->is_op("dsl.const_mask")) {
        int last = -1;
        for (size_t i = 0; i < call->args.size(); ++i) {
          if (!IsConstInt(call->args[i], 0)) last = static_cast<int>(i);
        }
        return last;
      }
    }
    if (auto* both = AsPtr<AndNode>(pred)) {
      return std::min(LastActiveLane(both->a, lanes), LastActiveLane(both->b, lanes));
    }
    return lanes - 1;
  }

  void Record(const Buffer& buf, const std::vector<Expr>& indices, const Expr& pred = nullptr) {
    if (indices.size() != 1) return Add(buf->data.get(), kUnknown);
    Expr idx = SimplifyExpr(indices[0]);
    // Counted in the buffer's own elements: a vector view of a scalar pointer indexes lanes.
    const int64_t unit = ElementBytes(buf->dtype);
    // A constant index (or vector of constant lanes) counts where the access certainly runs,
    // with all of its lanes known: no mask, or a constant one. Elsewhere it reaches nothing
    // for sure, and the checked mode (BuildManager(check_bounds=True)) catches it at run time.
    bool certain = Certain() && (!pred || IsConstMask(pred));
    if (auto c = AsConstInt(idx)) {
      if (certain) Add(buf->data.get(), *c + 1, unit);
      return;
    }
    if (auto top = AffineMax(idx, pred)) return Add(buf->data.get(), *top + 1, unit);
    if (auto* ramp = AsPtr<RampNode>(idx)) {
      if (ramp->lanes < 0) return Add(buf->data.get(), kUnknown);  // vscale * k lanes
      auto base = AsConstInt(ramp->base), stride = AsConstInt(ramp->stride);
      int last = LastActiveLane(pred, ramp->lanes);
      if (last < 0) return;
      if (base && stride) {
        if (!certain) return;
        return Add(buf->data.get(), std::max(*base, *base + last * *stride) + 1, unit);
      }
    }
    Add(buf->data.get(), kUnknown);
  }

  // ---- accesses indexed by loops ----------------------------------------------------------
  //
  // An index that is an affine form of the enclosing loops' variables (each with a constant
  // min and a positive constant extent), plus a constant, takes every combination of those
  // values, so its maximum is reached. It counts only where the access runs on every iteration
  // (guarded_ == loop_guarded_ == 0: no if, while, select, short-circuit, address, uncounted
  // loop or non-constant predicate around it; exited_, stuck_: no return, break, continue,
  // assertion or possibly endless loop before it; no jump in its loops, see
  // VisitStmt_(ForNode)). Anything else stays unknown.

  struct Affine {
    std::map<const VarNode*, int64_t> coef;
    int64_t c = 0;
  };
  static constexpr int64_t kLimit = int64_t{1} << 40;  // coefficients and constants kept small

  static bool Small(int64_t v) { return v > -kLimit && v < kLimit; }

  std::optional<Affine> Linear(const Expr& e) const {
    if (!e || e->dtype.lanes() != 1 || !e->dtype.is_int()) return std::nullopt;
    if (auto c = AsConstInt(e)) {
      if (!Small(*c)) return std::nullopt;
      Affine a;
      a.c = *c;
      return a;
    }
    if (auto* v = AsPtr<VarNode>(e)) {
      if (loops_.count(v)) {
        Affine a;
        a.coef[v] = 1;
        return a;
      }
      auto it = lets_.find(v);
      if (it != lets_.end()) return it->second;
      return std::nullopt;
    }
    if (auto* cast = AsPtr<CastNode>(e)) {
      // A widening integer cast keeps the value.
      DataType from = cast->value->dtype;
      if (from.is_int() && from.lanes() == 1 && from.bits() <= e->dtype.bits()) {
        return Linear(cast->value);
      }
      return std::nullopt;
    }
    int sign = IsInstance<AddNode>(e.get()) ? 1 : IsInstance<SubNode>(e.get()) ? -1 : 0;
    bool mul = IsInstance<MulNode>(e.get());
    if (!sign && !mul) return std::nullopt;
    auto* bin = static_cast<const BinaryNode*>(e.get());
    auto a = Linear(bin->a), b = Linear(bin->b);
    if (!a || !b) return std::nullopt;
    if (mul) {
      if (!b->coef.empty()) std::swap(a, b);
      if (!b->coef.empty()) return std::nullopt;  // not affine
      int64_t k = b->c;
      if (!Small(k)) return std::nullopt;
      Affine r;
      for (auto& [v, x] : a->coef) {
        __int128 p = static_cast<__int128>(x) * k;
        if (p <= -kLimit || p >= kLimit) return std::nullopt;
        if (p != 0) r.coef[v] = static_cast<int64_t>(p);
      }
      __int128 c = static_cast<__int128>(a->c) * k;
      if (c <= -kLimit || c >= kLimit) return std::nullopt;
      r.c = static_cast<int64_t>(c);
      return r;
    }
    for (auto& [v, x] : b->coef) {
      int64_t sum = a->coef[v] + sign * x;
      if (!Small(sum)) return std::nullopt;
      if (sum == 0) {
        a->coef.erase(v);
      } else {
        a->coef[v] = sum;
      }
    }
    a->c += sign * b->c;
    return Small(a->c) ? a : std::nullopt;
  }

  // The largest value of `form` and the largest magnitude of a term sum on the way (for the
  // overflow check of the index type).
  std::pair<__int128, __int128> MaxOf(const Affine& form) const {
    __int128 top = form.c, mag = form.c < 0 ? -form.c : form.c;
    for (auto& [v, k] : form.coef) {
      auto [lo, hi] = loops_.at(v);
      if (!Small(lo) || !Small(hi)) return {0, static_cast<__int128>(kLimit) * kLimit};  // too far to tell
      top += static_cast<__int128>(k) * (k > 0 ? hi : lo);
      __int128 far = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi);
      mag += (k < 0 ? -k : k) * far;
    }
    return {top, mag};
  }

  // The largest index that an access `idx` (predicate `pred`) provably reaches, when it is
  // bounded by loops as described above; nullopt otherwise.
  std::optional<int64_t> AffineMax(const Expr& idx, const Expr& pred) const {
    if (!loop_bounds_ || guarded_ > 0 || loop_guarded_ > 0 || exited_ || stuck_ || loops_.empty()) {
      return std::nullopt;
    }
    Expr base = idx;
    int64_t lane_reach = 0;
    int bits = idx->dtype.bits();
    if (auto* ramp = AsPtr<RampNode>(idx)) {
      auto stride = AsConstInt(ramp->stride);
      if (ramp->lanes < 1 || !stride || !Small(*stride)) return std::nullopt;
      if (pred && !IsConstMask(pred)) return std::nullopt;
      int last = LastActiveLane(pred, ramp->lanes);
      if (last < 0) return std::nullopt;
      base = ramp->base;
      lane_reach = std::max<int64_t>(0, last * *stride);
      bits = ramp->base->dtype.bits();
    } else if (pred) {
      return std::nullopt;
    }
    auto form = Linear(base);
    if (!form || form->coef.empty()) return std::nullopt;
    auto [top, mag] = MaxOf(*form);
    top += lane_reach;
    mag += lane_reach;
    int64_t type_max = bits >= 64 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t{1} << (bits - 1)) - 1;
    if (mag > type_max || top < 0) return std::nullopt;
    return static_cast<int64_t>(top);
  }

  // A predicate of constant lanes (and of such), as LastActiveLane reads exactly.
  static bool IsConstMask(const Expr& pred) {
    if (auto* call = AsPtr<CallNode>(pred)) return call->is_op("dsl.const_mask");
    if (auto* both = AsPtr<AndNode>(pred)) return IsConstMask(both->a) && IsConstMask(both->b);
    return false;
  }

  // Whether `node` contains a return, break or continue, or something that may not end (a
  // while loop, an assertion, a call of a function with one): the iterations after it may not
  // run.
  template <typename T>
  bool Jumps(const T& node) const {
    bool found = false;
    PostOrderVisit(node, [&](const ObjectRef& n) {
      if (IsInstance<WhileNode>(n.get()) || IsInstance<AssertStmtNode>(n.get())) found = true;
      auto* call = AsPtr<CallNode>(n);
      if (!call || found) return;
      found = call->is_op("tir.ret") || call->is_op("tir.break") || call->is_op("tir.continue");
      auto* gv = AsPtr<GlobalVarNode>(call->op);
      PrimFunc callee = gv ? mod_->Lookup(gv->name_hint) : PrimFunc();
      found = found || (callee && MayHang(callee));
    });
    return found;
  }

  // Whether a call of `f` may not come back: a while loop in it or in what it calls.
  bool MayHang(const PrimFunc& f) const {
    std::vector<const PrimFuncNode*> todo{f.get()};
    std::set<const PrimFuncNode*> seen;
    bool found = false;
    while (!todo.empty() && !found) {
      const PrimFuncNode* g = todo.back();
      todo.pop_back();
      if (!seen.insert(g).second) continue;
      PostOrderVisit(g->body, [&](const ObjectRef& n) {
        if (IsInstance<WhileNode>(n.get()) || IsInstance<AssertStmtNode>(n.get())) found = true;
        auto* call = AsPtr<CallNode>(n);
        auto* gv = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
        PrimFunc h = gv ? mod_->Lookup(gv->name_hint) : PrimFunc();
        if (h) todo.push_back(h.get());
      });
    }
    return found;
  }

  // Whether the access being visited runs on every call that gets this far into the function:
  // no condition around it (if, while, a loop that may run no iteration, a scalar select or
  // if_then_else, the right operand of a scalar && or ||) and no return, break or continue
  // passed before it. A loop that may never end or a failed assertion does not count: the
  // call does not return normally then, so an access after it refuses no call that would have.
  bool Certain() const { return guarded_ == 0 && !exited_; }

  // Whether `node` contains a return, break or continue.
  static bool Exits(const Expr& node) {
    bool found = false;
    PostOrderVisit(node, [&](const ObjectRef& n) {
      auto* call = AsPtr<CallNode>(n);
      if (call &&
          (call->is_op("tir.ret") || call->is_op("tir.break") || call->is_op("tir.continue"))) {
        found = true;
      }
    });
    return found;
  }

  // Whether pointer variable `var` is used in `body` as a value other than as an argument of a
  // known callee (which Forward follows): an intrinsic or an address computation that the
  // analysis does not follow.
  bool Escapes(const VarNode* var, const Stmt& body) const {
    struct Finder : StmtExprVisitor {
      using StmtExprVisitor::VisitExpr_;
      const IRModule* mod;
      const VarNode* var;
      bool found = false;
      void VisitExpr_(const VarNode* op) override { found = found || op == var; }
      void VisitExpr_(const CallNode* op) override {
        auto* gv = AsPtr<GlobalVarNode>(op->op);
        if (gv && (*mod)->Lookup(gv->name_hint)) {
          for (const Expr& a : op->args) {
            if (!IsInstance<VarNode>(a.get())) VisitExpr(a);
          }
          return;
        }
        StmtExprVisitor::VisitExpr_(op);
      }
    } finder;
    finder.mod = &mod_;
    finder.var = var;
    finder.VisitStmt(body);
    return finder.found;
  }

  // The right operand of a scalar && or || may not run; a vector one is a lane-wise operator
  // that evaluates both (the loop rule keeps it unknown, as before).
  void ShortCircuit(const Expr& a, const Expr& b) {
    VisitExpr(a);
    int& depth = a->dtype.lanes() == 1 ? guarded_ : loop_guarded_;
    ++depth;
    VisitExpr(b);
    --depth;
  }

  static int64_t ElementBytes(DataType t) {
    return t.is_void() ? 1 : (static_cast<int64_t>(t.bits()) * t.lanes() + 7) / 8;
  }
  static int64_t PointeeBytes(const VarNode* v) { return ElementBytes(v->pointer->element); }
  // A parameter's extent counts scalars: the lanes of a pointer to vectors, as the array holds.
  static int64_t ScalarBytes(const VarNode* v) {
    return ElementBytes(v->pointer->element.element_of());
  }

  struct Alias {
    const Object* param;
    int64_t byte_offset;  // kUnknown when not a constant
    int64_t element_bytes;
  };

  // `var` points `byte_offset` bytes into what `base` (a parameter or an alias of one) points to.
  void BindAlias(const VarNode* var, const VarNode* base, int64_t byte_offset) {
    Alias a{base, byte_offset, PointeeBytes(var)};
    auto it = alias_.find(base);
    if (it != alias_.end()) {
      a.param = it->second.param;
      a.byte_offset = (it->second.byte_offset == kUnknown || byte_offset == kUnknown)
                          ? kUnknown
                          : it->second.byte_offset + byte_offset;
    }
    alias_[var] = a;
  }

  // `extent` elements of `unit_bytes` bytes each; 0 means elements of the variable's pointee.
  void Add(const Object* var, int64_t extent, int64_t unit_bytes = 0) {
    auto al = alias_.find(var);
    if (al != alias_.end()) {
      const Alias& a = al->second;
      auto p = index_.find(a.param);
      if (extent == kUnknown || a.byte_offset == kUnknown || a.element_bytes <= 0) {
        return Add(a.param, extent == 0 ? 0 : kUnknown);
      }
      if (extent == 0) return;
      // The extent is counted in the parameter's scalars (a void pointer is an int8 one).
      int64_t unit = ScalarBytes(func_->params[p->second].get());
      int64_t bytes = a.byte_offset + extent * (unit_bytes > 0 ? unit_bytes : a.element_bytes);
      return Add(a.param, (bytes + unit - 1) / unit, unit);
    }
    auto it = index_.find(var);
    if (it == index_.end()) return;
    // A parameter's extent is counted in its scalars (the lanes of a pointer to vectors);
    // an access in other units (vectors, a scalar view of another type, a callee's) is converted.
    auto* param = static_cast<const VarNode*>(var);
    if (param->pointer && extent > 0) {
      int64_t own = ScalarBytes(param);
      int64_t unit = unit_bytes > 0 ? unit_bytes : PointeeBytes(param);
      if (unit != own && own > 0) extent = (extent * unit + own - 1) / own;
    }
    extents_[it->second] = Merge(extents_[it->second], extent);
  }

  const IRModule& mod_;
  PrimFunc func_;
  std::map<const PrimFuncNode*, std::vector<int64_t>>* memo_;
  std::map<const Object*, size_t> index_;
  std::vector<int64_t> extents_;
  std::map<const Object*, Alias> alias_;  // pointer variables into a parameter
  bool loop_bounds_;
  std::map<const VarNode*, std::pair<int64_t, int64_t>> loops_;  // counted loops: [min, max]
  std::map<const VarNode*, Affine> lets_;  // integer variables bound to affine forms of them
  int guarded_ = 0;       // inside a condition: the access may not run (see Certain)
  int loop_guarded_ = 0;  // where the loop rule stays off, though the access runs (AffineMax)
  bool exited_ = false;   // a return, break or continue was passed
  bool stuck_ = false;    // a possibly endless loop or an assertion was passed (AffineMax)
};

// Which parameters a function may write through (see PointerWrites).
class WriteCollector : public StmtExprVisitor {
 public:
  WriteCollector(const IRModule& mod, const PrimFunc& func,
                 std::map<const PrimFuncNode*, std::vector<bool>>* memo)
      : mod_(mod), func_(func), memo_(memo) {
    for (size_t i = 0; i < func->params.size(); ++i) index_[func->params[i].get()] = i;
    written_.assign(func->params.size(), false);
  }

  static std::vector<bool> Of(const IRModule& mod, const PrimFunc& f,
                              std::map<const PrimFuncNode*, std::vector<bool>>* memo) {
    auto it = memo->find(f.get());
    if (it != memo->end()) return it->second;
    (*memo)[f.get()] = std::vector<bool>(f->params.size(), true);  // guards cycles
    WriteCollector c(mod, f, memo);
    c.VisitStmt(f->body);
    (*memo)[f.get()] = c.written_;
    return c.written_;
  }

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const BufferStoreNode* op) override {
    Mark(op->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  // A pointer used as a value escapes the analysis: count it as written.
  void VisitExpr_(const VarNode* op) override { Mark(op); }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.address_of") && !op->args.empty()) {
      if (auto* load = AsPtr<BufferLoadNode>(op->args[0])) Mark(load->buffer->data.get());
    }
    auto* gv = AsPtr<GlobalVarNode>(op->op);
    PrimFunc callee = gv ? mod_->Lookup(gv->name_hint) : PrimFunc();
    if (!callee) return StmtExprVisitor::VisitExpr_(op);
    std::vector<bool> inner = Of(mod_, callee, memo_);
    for (size_t i = 0; i < op->args.size(); ++i) {
      auto* v = AsPtr<VarNode>(op->args[i]);
      if (v && i < inner.size()) {
        if (inner[i]) Mark(v);
      } else {
        VisitExpr(op->args[i]);
      }
    }
  }

 private:
  void Mark(const Object* var) {
    auto it = index_.find(var);
    if (it != index_.end()) written_[it->second] = true;
  }

  const IRModule& mod_;
  PrimFunc func_;
  std::map<const PrimFuncNode*, std::vector<bool>>* memo_;
  std::map<const Object*, size_t> index_;
  std::vector<bool> written_;
};

}  // namespace

std::vector<bool> PointerWrites(const IRModule& mod, const std::string& entry) {
  PrimFunc f = mod->Lookup(entry);
  if (!f) return {};
  std::map<const PrimFuncNode*, std::vector<bool>> memo;
  return WriteCollector::Of(mod, f, &memo);
}

std::vector<int64_t> PointerAccessExtents(const IRModule& mod, const std::string& entry) {
  PrimFunc f = mod->Lookup(entry);
  if (!f) return {};
  std::map<const PrimFuncNode*, std::vector<int64_t>> memo;
  // The entry again, with the accesses bounded by its loops (its callees' extents, memoized,
  // do not count them: a call may be guarded).
  ExtentCollector::Of(mod, f, &memo);
  return ExtentCollector(mod, f, &memo, true).Run();
}

}  // namespace transform
}  // namespace tessera
