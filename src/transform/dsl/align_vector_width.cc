// dsl.AlignVectorWidth: flexible- and multiple-width vectors become native 256-bit vectors.
//
// A data vector of L lanes of an element with N native lanes becomes ceil(L / N) parts of N
// lanes; the last part is padded, and its padding lanes are masked off in loads and stores. A
// mask has no element width of its own: it is split into parts of the lane count of the data it
// controls (requested by the user of the mask), and a mask computed for one width (a comparison
// of int32 lanes: parts of 8) is regrouped with dsl.mask_repack when data of another width uses
// it. Variables, mutable locals, loads, stores, arithmetic, selects, casts, shuffles and the
// lane-wise calls are split, and so are conversions of selected lanes (dsl.vcvt: S.cast with
// part=) and bit casts (tir.reinterpret) that give more lanes than a native vector, and dot
// products of mixed signs (dsl.vdot, dsl.vqdot); scalars that read lanes (v[i], vall) pick the
// right part.
//
// Sub-functions take and return virtual-width vectors too, as Compass's do: a parameter of such
// a type becomes one parameter per native part (`a: int32x16` -> `a_0, a_1: int32x8`; a mask of
// a width that is not native becomes a mask of the next native width), and a function returning
// one gets a last parameter `ret`, a pointer to its native parts, and returns nothing. A caller
// passes the parts, and a call that returns a virtual-width vector becomes a call statement before
// the statement that uses it, into a private array of its parts.
#include <optional>
#include <unordered_map>

#include "tessera/ir/dsl_target.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/dsl_passes.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

using Parts = std::vector<Expr>;

int NativeLanes(DataType t) { return 256 / t.bits(); }
int NumParts(int lanes, int per_part) { return (lanes + per_part - 1) / per_part; }

bool IsMaskLanes(int lanes) { return lanes == 8 || lanes == 16 || lanes == 32; }
// The part size of a mask whose users do not ask for one: as few parts as possible.
int DefaultMaskLanes(int lanes) { return lanes <= 8 ? 8 : lanes <= 16 ? 16 : 32; }

bool SameParts(const Parts& parts, const Expr& original) {
  return parts.size() == 1 && parts[0] == original;
}

Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

Expr Op(const char* name, DataType t, std::vector<Expr> args, const Span& span) {
  return CallNode::Make(t, OpNode::Get(name), std::move(args), span);
}

// A constant mask of `lanes` lanes with the first `active` on.
Expr PrefixMask(int lanes, int active, const Span& span) {
  std::vector<Expr> on;
  for (int i = 0; i < lanes; ++i) on.push_back(Bool(i < active));
  return Op("dsl.const_mask", DataType::Bool(lanes), std::move(on), span);
}

// The lanes of a dsl.const_mask of constant lanes, empty for any other mask.
std::vector<bool> ConstLanes(const Expr& mask) {
  std::vector<bool> on;
  auto* call = AsPtr<CallNode>(mask);
  if (!call || !call->is_op("dsl.const_mask")) return on;
  for (const Expr& e : call->args) {
    auto c = AsConstInt(e);
    if (!c) return {};
    on.push_back(*c != 0);
  }
  return on;
}

Expr AndMask(const Expr& a, const Expr& b, const Span& span) {
  if (!a) return b;
  if (!b) return a;
  // Two constant masks are one (a narrow tail padded to the native vector: Compass's single
  // __vmov_b(0x0000003F), not __vand of two).
  std::vector<bool> x = ConstLanes(a), y = ConstLanes(b);
  if (!x.empty() && x.size() == y.size()) {
    std::vector<Expr> on;
    for (size_t i = 0; i < x.size(); ++i) on.push_back(Bool(x[i] && y[i]));
    return Op("dsl.const_mask", a->dtype, std::move(on), span);
  }
  return AndNode::Make(a, b, span);
}

// Whether a statement uses the storage of the local vector variable `var` (of type `t`) other
// than by loading or storing the whole vector: its address handed to a call (`S.vmml(v.addr,
// ...)`), or a view of it as another type. Such a local must stay one piece of memory.
class LocalAddressFinder : public StmtExprVisitor {
 public:
  LocalAddressFinder(const VarNode* var, DataType t) : var_(var), t_(t) {}
  bool found = false;

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  void VisitExpr_(const VarNode* op) override { found = found || op == var_; }
  void VisitExpr_(const BufferLoadNode* op) override {
    found = found || (op->buffer->data.get() == var_ && op->buffer->dtype != t_);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    found = found || (op->buffer->data.get() == var_ && op->buffer->dtype != t_);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  const VarNode* var_;
  DataType t_;
};

// How a function's signature splits: per parameter, its number of native parts (1: unchanged)
// and their lanes; whether the result returns through a `ret` pointer to `ret_parts` parts.
struct SignaturePlan {
  struct Param {
    int parts = 1;
    int lanes = 0;  // lanes of each part (split parameters only)
    bool split = false;
  };
  std::vector<Param> params;
  bool ret_split = false;
  DataType ret_part_type;
  int ret_parts = 1;
};
using SignaturePlans = std::unordered_map<std::string, SignaturePlan>;

SignaturePlan PlanSignature(const PrimFunc& f) {
  SignaturePlan plan;
  for (const Var& p : f->params) {
    SignaturePlan::Param pp;
    DataType t = p->dtype;
    if (!p->pointer && t.is_vector()) {
      int n = t.is_bool() ? (IsMaskLanes(t.lanes()) ? t.lanes() : DefaultMaskLanes(t.lanes()))
                          : NativeLanes(t);
      if (t.lanes() != n) {
        pp.split = true;
        pp.lanes = n;
        pp.parts = NumParts(t.lanes(), n);
      }
    }
    plan.params.push_back(pp);
  }
  DataType r = f->ret_type;
  if (r.is_vector()) {
    if (r.is_bool()) {
      if (!IsMaskLanes(r.lanes())) {
        TESSERA_THROW(f->span) << "a function returning a " << r
                               << " mask is not supported: a returned mask must have 8, 16 or 32 "
                                  "lanes";
      }
    } else if (r.lanes() != NativeLanes(r)) {
      plan.ret_split = true;
      plan.ret_part_type = r.with_lanes(NativeLanes(r));
      plan.ret_parts = NumParts(r.lanes(), NativeLanes(r));
    }
  }
  return plan;
}

class VectorWidthAligner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit VectorWidthAligner(const SignaturePlans* plans = nullptr) : plans_(plans) {}

  void SetX3(bool x3) { x3_ = x3; }

  // The parameters of a function planned by `plan`: split ones replaced by their parts (their
  // uses in the body read the parts), and the `ret` pointer when the result is split.
  std::vector<Var> SplitParams(const PrimFunc& f, const SignaturePlan& plan) {
    std::vector<Var> out;
    for (size_t i = 0; i < f->params.size(); ++i) {
      const Var& p = f->params[i];
      const SignaturePlan::Param& pp = plan.params[i];
      if (!pp.split) {
        out.push_back(p);
        continue;
      }
      Parts parts;
      DataType part_type = p->dtype.with_lanes(pp.lanes);
      for (int j = 0; j < pp.parts; ++j) {
        Var v = VarNode::Make(p->name + "_" + std::to_string(j), part_type, p->span);
        parts.push_back(v);
        out.push_back(v);
      }
      var_parts_[p.get()] = parts;
      if (p->dtype.is_bool()) mask_lanes_[p.get()] = pp.lanes;
    }
    if (plan.ret_split) {
      Var ret = VarNode::MakePointer("ret", plan.ret_part_type, "private", f->span);
      ret_buffer_ = BufferNode::Make(ret, plan.ret_part_type, {I32(plan.ret_parts)}, {}, nullptr,
                                     "ret", 64, 1, f->span);
      out.push_back(ret);
    }
    return out;
  }

  // Calls of a sub-function that returns a virtual-width vector are hoisted before the statement
  // holding them (see the top of this file).
  Stmt VisitStmt(const Stmt& s) override {
    std::vector<Hoisted> outer = std::move(hoisted_);
    hoisted_.clear();
    Stmt out = StmtExprMutator::VisitStmt(s);
    if (!hoisted_.empty()) {
      if (AsPtr<WhileNode>(s)) {
        TESSERA_THROW(s->span) << "a call of " << hoisted_[0].callee
                               << "(), which returns a virtual-width vector, cannot be part of a "
                                  "while loop's condition: assign its result to a variable first";
      }
      std::vector<Stmt> seq;
      for (const Hoisted& h : hoisted_) seq.push_back(h.call);
      seq.push_back(out);
      out = SeqStmtNode::Flatten(seq, s->span);
      for (size_t i = hoisted_.size(); i-- > 0;) {
        const Buffer& buf = hoisted_[i].buffer;
        out = DeclBufferNode::Make(buf, out, s->span);
        out = AllocateNode::Make(buf->data, buf->dtype, buf->shape, Bool(true), out, {}, s->span);
      }
    }
    hoisted_ = std::move(outer);
    return out;
  }

  // ---- entry points for expressions -------------------------------------------------------

  // Scalars go through the mutator; a vector in a place that takes one native vector (a call
  // argument, a returned value) must have one part.
  Expr VisitExpr(const Expr& e) override {
    if (!e->dtype.is_vector()) return StmtExprMutator::VisitExpr(e);
    Parts parts = e->dtype.is_bool() ? Mask(e, e->dtype.lanes()) : Data(e);
    if (parts.size() != 1) {
      TESSERA_THROW(e->span) << "a " << e->dtype
                             << " vector cannot be used here: only vectors of the native width "
                                "can";
    }
    return parts[0];
  }

  // ---- data vectors ---------------------------------------------------------------------------

  Parts Data(const Expr& e) {
    DataType t = e->dtype;
    int n = NativeLanes(t), k = NumParts(t.lanes(), n);
    DataType part_type = t.with_lanes(n);
    const Span& span = e->span;
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = var_parts_.find(v);
      if (it != var_parts_.end()) return it->second;
      CheckNative(e);
      return {e};
    }
    if (auto* load = AsPtr<BufferLoadNode>(e)) return Load(load);
    if (auto* b = AsPtr<BroadcastNode>(e)) {
      Expr value = VisitExpr(b->value);
      if (k == 1 && t.lanes() == n && value == b->value) return {e};
      return Parts(k, BroadcastNode::Make(value, n, span));
    }
    if (auto* bin = AsPtr<BinaryNode>(e)) {
      Parts a = Data(bin->a), bb = Data(bin->b);
      if (k == 1 && a[0] == bin->a && bb[0] == bin->b) return {e};
      Parts out;
      for (int j = 0; j < k; ++j) out.push_back(MakeBinary(bin->kind, a[j], bb[j], span));
      return out;
    }
    if (auto* ramp = AsPtr<RampNode>(e)) {
      // A vectorized loop's variable used as a value: part j counts on from lane j * n.
      Expr base = VisitExpr(ramp->base), stride = VisitExpr(ramp->stride);
      if (k == 1 && t.lanes() == n && base == ramp->base && stride == ramp->stride) return {e};
      Parts out;
      for (int j = 0; j < k; ++j) {
        out.push_back(RampNode::Make(PartBase(base, stride, j * n), stride, n, span));
      }
      return out;
    }
    if (auto* sel = AsPtr<SelectNode>(e)) return Select(sel, n, k);
    if (auto* cast = AsPtr<CastNode>(e)) return Cast(cast);
    if (auto* shuffle = AsPtr<ShuffleNode>(e)) return Shuffle(shuffle);
    if (auto* call = AsPtr<CallNode>(e)) return CallParts(call, n, k, part_type);
    TESSERA_THROW(span) << "dsl.AlignVectorWidth: cannot split " << NodeKindName(e->kind) << " of "
                        << t;
  }

  Parts Load(const BufferLoadNode* op) {
    DataType t = op->dtype;
    auto local = local_parts_.find(op->buffer->data.get());
    if (local != local_parts_.end()) {
      Parts out;
      const LocalParts& lp = local->second;
      for (size_t j = 0; j < lp.buffers.size(); ++j) {
        out.push_back(BufferLoadNode::Make(lp.buffers[j], {lp.indices[j]}, nullptr, op->span));
      }
      return out;
    }
    const auto* ramp = AsPtr<RampNode>(op->indices.back());
    if (ramp == nullptr) {
      // A vector element of a vector pointer, or a native gather: one part.
      Expr e = StmtExprMutator::VisitExpr_(op);
      CheckNative(e);
      return {e};
    }
    int n = NativeLanes(t), k = NumParts(t.lanes(), n);
    std::vector<Expr> indices(op->indices.begin(), op->indices.end() - 1);
    for (Expr& i : indices) i = VisitExpr(i);
    Expr base = VisitExpr(ramp->base), stride = VisitExpr(ramp->stride);
    Parts preds = op->predicate ? Mask(op->predicate, n) : Parts(k, nullptr);
    if (k == 1 && t.lanes() == n && base == ramp->base && stride == ramp->stride &&
        (!op->predicate || preds[0] == op->predicate)) {
      return {GetRef(op)};
    }
    Parts out;
    for (int j = 0; j < k; ++j) {
      std::vector<Expr> idx = indices;
      idx.push_back(RampNode::Make(PartBase(base, stride, j * n), stride, n, ramp->span));
      Expr pred = AndMask(preds[j], TailOf(t.lanes(), n, j, op->span), op->span);
      out.push_back(BufferLoadNode::Make(op->buffer, idx, pred, op->span));
    }
    return out;
  }

  Parts Select(const SelectNode* op, int n, int k) {
    bool mask = op->dtype.is_bool();
    auto parts_of = [&](const Expr& e) { return mask ? Mask(e, n) : Data(e); };
    Parts t = parts_of(op->true_value), f = parts_of(op->false_value);
    Parts c = op->condition->dtype.is_vector() ? Mask(op->condition, n)
                                               : Parts(k, VisitExpr(op->condition));
    if (k == 1 && t[0] == op->true_value && f[0] == op->false_value && c[0] == op->condition) {
      return {GetRef(op)};
    }
    Parts out;
    for (int j = 0; j < k; ++j) out.push_back(SelectNode::Make(c[j], t[j], f[j], op->span));
    return out;
  }

  Parts Cast(const CastNode* op) {
    DataType to = op->dtype, from = op->value->dtype;
    if (to.is_bool() || from.is_bool()) {
      TESSERA_THROW(op->span) << "cannot convert between masks and data vectors (" << from << " to "
                              << to << ")";
    }
    int n_to = NativeLanes(to), n_from = NativeLanes(from), lanes = to.lanes();
    Parts src = Data(op->value);
    int k = NumParts(lanes, n_to);
    DataType part_type = to.with_lanes(n_to);
    Parts out;
    if (n_to == n_from) {
      if (k == 1 && src[0] == op->value) return {GetRef(op)};
      for (const Expr& s : src) out.push_back(CastNode::Make(part_type, s, op->span));
      return out;
    }
    for (int j = 0; j < k; ++j) {
      int first = j * n_to;
      if (n_to < n_from) {  // widening: one source part holds the whole destination part
        out.push_back(Op("dsl.vcvt", part_type, {src[first / n_from], I32(first % n_from), I32(1)},
                         op->span));
        continue;
      }
      // Narrowing: several source parts fill one destination part.
      Expr acc = MakeConst(part_type, int64_t(0), op->span);
      for (int i = first / n_from; i < static_cast<int>(src.size()) && i * n_from < first + n_to;
           ++i) {
        acc = Op("dsl.vcvt_into", part_type, {acc, src[i], I32(i * n_from - first)}, op->span);
      }
      out.push_back(acc);
    }
    return out;
  }

  // S.tag(S.cast(x, "float32"), "no_zip") of a 16-bit float vector x (whole native parts): before
  // X3, each part of x converts as its even lanes, then its odd lanes (no interleave back into
  // order); on X3, an ordinary conversion.
  Parts CastNoZip(const CallNode* op, int k, DataType part_type) {
    const Expr& x = op->args[0];
    if (x3_) return Cast(AsPtr<CastNode>(CastNode::Make(op->dtype, x, op->span)));
    Parts src = Data(x);
    if (static_cast<int>(src.size()) * 2 != k) {
      TESSERA_THROW(op->span) << "dsl.cast_no_zip: " << x->dtype << " to " << op->dtype
                              << " is not a conversion of whole native parts";
    }
    Parts out;
    for (const Expr& s : src) {
      for (int first = 0; first < 2; ++first) {
        out.push_back(Op("dsl.vcvt", part_type, {s, I32(first), I32(2)}, op->span));
      }
    }
    return out;
  }

  static bool MixedSigns(DataType a, DataType b) {
    return (a.is_int() && b.is_uint()) || (a.is_uint() && b.is_int());
  }

  // dsl.vdot(s, u, mask) / dsl.vqdot of a signed s and an unsigned u of one width (S.vdot of
  // mixed signs; no instruction takes them): both widen to the result's element width, where
  // each product is exact; the products of the active lanes are summed in pairs by saturating
  // pairwise additions (dsl.vaddh, twice for dsl.vqdot), which keep the order of the lanes.
  Parts MixedDot(const CallNode* op) {
    const Expr &s = op->args[0], &u = op->args[1];
    DataType t = s->dtype;
    int factor = op->is_op("dsl.vqdot") ? 4 : 2;
    if (!s->dtype.is_int() || s->dtype.bits() != u->dtype.bits() ||
        s->dtype.lanes() != u->dtype.lanes() || t.lanes() % NativeLanes(t) != 0 ||
        op->dtype.bits() != factor * t.bits() || op->dtype.lanes() * factor != t.lanes()) {
      TESSERA_THROW(op->span) << op->op_name() << " of " << s->dtype << " and " << u->dtype
                              << " into " << op->dtype
                              << ": a mixed-sign dot product takes a signed, then an unsigned "
                                 "native or multiple-width vector of one width";
    }
    const Span& span = op->span;
    DataType wide = DataType::Int(op->dtype.bits(), t.lanes());
    Expr prod = MulNode::Make(CastNode::Make(wide, s, span), CastNode::Make(wide, u, span), span);
    prod = SelectNode::Make(op->args[2], prod, MakeConst(wide, int64_t(0), span), span);
    Parts sums = Data(prod);
    for (int round = 0; round < factor / 2; ++round) {
      Parts pairs;
      for (size_t i = 0; i + 1 < sums.size(); i += 2) {
        pairs.push_back(Op("dsl.vaddh", sums[i]->dtype, {sums[i], sums[i + 1]}, span));
      }
      sums = std::move(pairs);
    }
    return sums;
  }

  // dsl.vcvt(x, first, stride) of more lanes than a native vector (S.cast with part="low",
  // "high", "even" or "odd" from 8 to 32 bits: 16 lanes): lane i converts lane first + i * stride
  // of the native x, so part j is the conversion from lane first + j * n * stride.
  Parts SelectedLanesCast(const CallNode* op, int n, int k, DataType part_type) {
    std::optional<int64_t> first, stride;
    if (op->args.size() == 3) {
      first = AsConstInt(op->args[1]);
      stride = AsConstInt(op->args[2]);
    }
    if (!first || !stride) {
      TESSERA_THROW(op->span) << "dsl.vcvt into " << op->dtype
                              << ": a conversion of more lanes than a native vector needs a "
                                 "constant first lane and stride";
    }
    Expr x = VisitExpr(op->args[0]);
    Parts out;
    for (int j = 0; j < k; ++j) {
      out.push_back(
          Op("dsl.vcvt", part_type, {x, I32(*first + j * n * *stride), I32(*stride)}, op->span));
    }
    return out;
  }

  // A bit cast between element widths of a multiple-width vector (int8x64 as int32x16): each
  // 256-bit part of x is one native part of the result.
  Parts ReinterpretParts(const CallNode* op, int k, DataType part_type) {
    const Expr& x = op->args[0];
    if (x->dtype.is_bool() || op->dtype.is_bool() ||
        x->dtype.bits() * x->dtype.lanes() != op->dtype.bits() * op->dtype.lanes() ||
        x->dtype.lanes() % NativeLanes(x->dtype) != 0 ||
        op->dtype.lanes() % NativeLanes(op->dtype) != 0) {
      TESSERA_THROW(op->span) << "tir.reinterpret of " << x->dtype << " as " << op->dtype
                              << ": a vector that is not native must have a multiple of 256 bits";
    }
    Parts src = Data(x);
    if (k == 1 && src[0] == x) return {GetRef(op)};
    Parts out;
    for (const Expr& s : src) out.push_back(Op("tir.reinterpret", part_type, {s}, op->span));
    return out;
  }

  // Lanes picked from the concatenated inputs: a destination part that is a whole source part
  // is reused; any other is assembled lane by lane.
  Parts Shuffle(const ShuffleNode* op) {
    DataType t = op->dtype;
    if (t.is_bool()) TESSERA_THROW(op->span) << "shuffles of masks are not supported";
    int n = NativeLanes(t), k = NumParts(t.lanes(), n);
    std::vector<std::pair<int, int>> lane_source;  // global lane -> (input part, lane in part)
    std::vector<Expr> inputs;
    bool changed = false;
    for (const Expr& v : op->vectors) {
      Parts p = Data(v);
      changed = changed || !SameParts(p, v);
      for (int lane = 0; lane < v->dtype.lanes(); ++lane) {
        lane_source.emplace_back(static_cast<int>(inputs.size()) + lane / n, lane % n);
      }
      inputs.insert(inputs.end(), p.begin(), p.end());
    }
    Parts out;
    for (int j = 0; j < k; ++j) {
      int count = std::min(n, t.lanes() - j * n);
      std::optional<int> whole;
      for (int i = 0; i < count; ++i) {
        auto idx = AsConstInt(op->indices[j * n + i]);
        auto [part, lane] = lane_source[*idx];
        if (lane != i || (whole && *whole != part)) {
          whole.reset();
          break;
        }
        whole = part;
      }
      if (whole) {
        out.push_back(inputs[*whole]);
        continue;
      }
      Expr acc = MakeConst(t.with_lanes(n), int64_t(0), op->span);
      for (int i = 0; i < count; ++i) {
        auto [part, lane] = lane_source[*AsConstInt(op->indices[j * n + i])];
        Expr value = Op("dsl.get_lane", t.element_of(), {inputs[part], I32(lane)}, op->span);
        acc = Op("dsl.set_lane", acc->dtype, {acc, I32(i), value}, op->span);
      }
      out.push_back(acc);
    }
    (void)changed;
    return out;
  }

  // A call of a sub-function: vector arguments are passed as the parts the callee's signature
  // takes; a virtual-width result comes back through a private array (hoisted, see VisitStmt).
  Parts SubCall(const CallNode* op) {
    const auto* gv = AsPtr<GlobalVarNode>(op->op);
    const SignaturePlan* plan = nullptr;
    if (plans_) {
      auto it = plans_->find(gv->name_hint);
      if (it != plans_->end()) plan = &it->second;
    }
    std::vector<Expr> args;
    bool changed = false;
    for (size_t i = 0; i < op->args.size(); ++i) {
      const Expr& a = op->args[i];
      if (plan && i < plan->params.size() && plan->params[i].split) {
        const SignaturePlan::Param& pp = plan->params[i];
        Parts parts = a->dtype.is_bool() ? Mask(a, pp.lanes) : Data(a);
        if (static_cast<int>(parts.size()) != pp.parts) {
          TESSERA_THROW(a->span) << "argument " << i + 1 << " of " << gv->name_hint << "(): a "
                                 << a->dtype << " value in " << parts.size()
                                 << " parts where the parameter takes " << pp.parts;
        }
        args.insert(args.end(), parts.begin(), parts.end());
        changed = true;
        continue;
      }
      Expr v = VisitExpr(a);
      changed = changed || v != a;
      args.push_back(v);
    }
    if (!plan || !plan->ret_split) {
      if (!changed) return {GetRef(op)};
      return {CallNode::Make(op->dtype, op->op, std::move(args), op->span)};
    }
    DataType part_type = plan->ret_part_type;
    Var tmp = VarNode::MakePointer(gv->name_hint + "_ret" + std::to_string(hoist_count_++),
                                   part_type, "private", op->span);
    Buffer buf = BufferNode::Make(tmp, part_type, {I32(plan->ret_parts)}, {}, nullptr, tmp->name,
                                  64, 1, op->span);
    args.push_back(Op("tir.address_of", DataType::Handle(),
                      {BufferLoadNode::Make(buf, {I32(0)}, nullptr, op->span)}, op->span));
    Stmt call = EvaluateNode::Make(
        CallNode::Make(DataType::Void(), op->op, std::move(args), op->span), op->span);
    hoisted_.push_back({gv->name_hint, buf, call});
    Parts out;
    for (int j = 0; j < plan->ret_parts; ++j) {
      out.push_back(BufferLoadNode::Make(buf, {I32(j)}, nullptr, op->span));
    }
    return out;
  }

  Parts CallParts(const CallNode* op, int n, int k, DataType part_type) {
    DataType t = op->dtype;
    if (AsPtr<GlobalVarNode>(op->op)) return SubCall(op);
    if (op->is_op("dsl.vmake")) {
      if (k == 1 && t.lanes() == n) return {StmtExprMutator::VisitExpr_(op)};
      Parts out;
      for (int j = 0; j < k; ++j) {
        std::vector<Expr> lanes;
        for (int i = 0; i < n; ++i) {
          size_t g = j * n + i;
          lanes.push_back(g < op->args.size() ? VisitExpr(op->args[g])
                                              : MakeConst(t.element_of(), int64_t(0)));
        }
        out.push_back(Op("dsl.vmake", part_type, std::move(lanes), op->span));
      }
      return out;
    }
    if (op->is_op("dsl.set_lane"))
      return SetLane(op, t.is_bool() ? Mask(op->args[0], n) : Data(op->args[0]), n);
    if (op->is_op("dsl.vload_gather")) return Gather(op, n, k, part_type);
    if (op->is_op("dsl.cast_no_zip")) return CastNoZip(op, k, part_type);
    if (op->is_op("dsl.vcvt") && k > 1) return SelectedLanesCast(op, n, k, part_type);
    if (op->is_op("tir.reinterpret") && op->args.size() == 1 &&
        op->args[0]->dtype.lanes() != t.lanes()) {
      return ReinterpretParts(op, k, part_type);
    }
    if ((op->is_op("dsl.vdot") || op->is_op("dsl.vqdot")) && op->args.size() == 3 &&
        MixedSigns(op->args[0]->dtype, op->args[1]->dtype)) {
      return MixedDot(op);
    }
    const auto* callee = AsPtr<OpNode>(op->op);
    if (callee != nullptr && callee->GetStrAttr("dsl.form") == "pairwise") return Pairwise(op, k);
    if (callee != nullptr && callee->GetStrAttr("dsl.split") == "parts") {
      return ByParts(op, k, part_type);
    }
    if (callee != nullptr && callee->GetStrAttr("dsl.split") == "sum" &&
        NumParts(op->args[0]->dtype.lanes(), NativeLanes(op->args[0]->dtype)) > 1) {
      return SumParts(op, k, part_type);
    }
    // Calls whose vector arguments have the result's lanes work part by part (arithmetic,
    // bitwise, math, if_then_else); scalar arguments are shared.
    std::vector<Parts> args;
    bool changed = false;
    for (const Expr& a : op->args) {
      Parts p;
      if (!a->dtype.is_vector()) {
        p = Parts(k, VisitExpr(a));
      } else if (a->dtype.lanes() != t.lanes()) {
        Expr single = VisitExpr(a);  // a native operand of another shape (dsl.vcvt's source)
        p = Parts(k, single);
        if (k != 1) {
          TESSERA_THROW(op->span) << op->op_name() << " on " << t
                                  << ": it works on vectors of the native width only";
        }
      } else {
        p = a->dtype.is_bool() ? Mask(a, n) : Data(a);
        if (static_cast<int>(p.size()) != k) {
          TESSERA_THROW(op->span) << op->op_name() << " on " << t << ": its " << a->dtype
                                  << " operand splits into " << p.size() << " parts, not " << k;
        }
      }
      changed = changed || p[0] != a || p.size() != 1;
      args.push_back(std::move(p));
    }
    if (k == 1 && t.lanes() == n && !changed) return {GetRef(op)};
    Parts out;
    for (int j = 0; j < k; ++j) {
      std::vector<Expr> part_args;
      for (const Parts& p : args) part_args.push_back(p[j]);
      out.push_back(CallNode::Make(part_type, op->op, std::move(part_args), op->span));
    }
    return out;
  }

  // A pairwise op (the form of the intrinsic table): the result is the pairs of x, then the pairs
  // of y, so two consecutive native parts of x ++ y fill one native part of the result.
  Parts Pairwise(const CallNode* op, int k) {
    DataType t = op->dtype;
    if (t.lanes() % NativeLanes(t) != 0 || op->args.size() != 2) {
      TESSERA_THROW(op->span) << op->op_name() << " on " << t
                              << ": this API expects a native or multiple-width vector type";
    }
    Parts x = Data(op->args[0]), y = Data(op->args[1]);
    if (k == 1 && x[0] == op->args[0] && y[0] == op->args[1]) return {GetRef(op)};
    Parts halves = x;
    halves.insert(halves.end(), y.begin(), y.end());
    Parts out;
    for (int j = 0; j < k; ++j) {
      out.push_back(CallNode::Make(halves[2 * j]->dtype, op->op, {halves[2 * j], halves[2 * j + 1]},
                                   op->span));
    }
    return out;
  }

  // An op whose result part j comes from part j of each vector operand, the operands split at
  // their own native width (dsl.vdot: int8x64 operands and mask give int16x32 in two parts).
  Parts ByParts(const CallNode* op, int k, DataType part_type) {
    std::vector<Parts> args;
    bool changed = false;
    for (const Expr& a : op->args) {
      Parts p;
      if (!a->dtype.is_vector()) {
        p = Parts(k, VisitExpr(a));
      } else if (a->dtype.lanes() % k == 0) {
        p = a->dtype.is_bool() ? Mask(a, a->dtype.lanes() / k) : Data(a);
      }
      if (static_cast<int>(p.size()) != k) {
        TESSERA_THROW(op->span) << op->op_name() << " on " << op->dtype << ": its " << a->dtype
                                << " operand does not split into " << k << " native parts";
      }
      changed = changed || p[0] != a || p.size() != 1;
      args.push_back(std::move(p));
    }
    if (k == 1 && !changed) return {GetRef(op)};
    Parts out;
    for (int j = 0; j < k; ++j) {
      std::vector<Expr> part_args;
      for (const Parts& p : args) part_args.push_back(p[j]);
      out.push_back(CallNode::Make(part_type, op->op, std::move(part_args), op->span));
    }
    return out;
  }

  // A reduction into lane 0 of a multiple-width x (dsl.vrpadd of int32x16 gives int32x16):
  // each native part of x (and of the mask) reduces into lane 0 of a native result whose other
  // lanes are 0; the part results, added in order, are part 0 and the other parts are 0.
  Parts SumParts(const CallNode* op, int k, DataType part_type) {
    const Expr& x = op->args[0];
    int n = NativeLanes(x->dtype), kx = NumParts(x->dtype.lanes(), n);
    if (x->dtype.lanes() % n != 0 || op->dtype.lanes() != x->dtype.lanes() ||
        op->args.size() != 2) {
      TESSERA_THROW(op->span) << op->op_name() << " of " << x->dtype << " into " << op->dtype
                              << ": expects a multiple-width operand and a result of its lanes";
    }
    Parts xs = Data(x), masks = Mask(op->args[1], n);
    if (static_cast<int>(masks.size()) != kx) {
      TESSERA_THROW(op->span) << op->op_name() << " of " << x->dtype << ": its "
                              << op->args[1]->dtype << " mask does not split into " << kx
                              << " native parts";
    }
    Expr total;
    for (int j = 0; j < kx; ++j) {
      Expr sum = CallNode::Make(part_type, op->op, {xs[j], masks[j]}, op->span);
      total = total ? MakeBinary(NodeKind::kAdd, total, sum, op->span) : sum;
    }
    Parts out{total};
    for (int j = 1; j < k; ++j) out.push_back(MakeConst(part_type, int64_t(0), op->span));
    return out;
  }

  // v with lane i replaced: the part that holds lane i changes.
  Parts SetLane(const CallNode* op, Parts parts, int n) {
    Expr index = VisitExpr(op->args[1]), value = VisitExpr(op->args[2]);
    if (parts.size() == 1 && parts[0] == op->args[0] && index == op->args[1] &&
        value == op->args[2] && op->dtype.lanes() == n) {
      return {GetRef(op)};
    }
    DataType part_type = parts[0]->dtype;
    if (auto c = AsConstInt(index)) {
      int j = static_cast<int>(*c / n);
      parts[j] = Op("dsl.set_lane", part_type, {parts[j], I32(*c % n), value}, op->span);
      return parts;
    }
    for (size_t j = 0; j < parts.size(); ++j) {
      Expr lo = I32(j * n), hi = I32((j + 1) * n);
      Expr inside = AndNode::Make(LENode::Make(lo, index), LTNode::Make(index, hi));
      Expr at = j == 0 ? index : Expr(SubNode::Make(index, lo));
      Expr set = Op("dsl.set_lane", part_type, {parts[j], at, value}, op->span);
      parts[j] = Op("tir.if_then_else", part_type, {inside, set, parts[j]}, op->span);
    }
    return parts;
  }

  // ---- masks ------------------------------------------------------------------------------------

  // The part size a mask has by itself (the lanes of the data compared), if it has one.
  std::optional<int> Natural(const Expr& e) {
    if (auto* bin = AsPtr<BinaryNode>(e)) {
      if (bin->is_comparison()) return NativeLanes(bin->a->dtype);
      if (auto n = Natural(bin->a)) return n;
      return Natural(bin->b);
    }
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = mask_lanes_.find(v);
      if (it != mask_lanes_.end()) return it->second;
      return IsMaskLanes(e->dtype.lanes()) ? std::optional<int>(e->dtype.lanes()) : std::nullopt;
    }
    if (auto* load = AsPtr<BufferLoadNode>(e)) {
      auto it = local_parts_.find(load->buffer->data.get());
      if (it != local_parts_.end()) return it->second.lanes;
      auto native = local_mask_lanes_.find(load->buffer->data.get());
      if (native != local_mask_lanes_.end()) return native->second;
      int lanes = e->dtype.lanes();
      return IsMaskLanes(lanes) ? std::optional<int>(lanes) : std::nullopt;
    }
    if (auto* no = AsPtr<NotNode>(e)) return Natural(no->a);
    if (auto* sel = AsPtr<SelectNode>(e)) {
      if (auto n = Natural(sel->true_value)) return n;
      return Natural(sel->false_value);
    }
    if (auto* call = AsPtr<CallNode>(e)) {
      if (call->is_op("tir.bitwise_xor") || call->is_op("tir.bitwise_and") ||
          call->is_op("tir.bitwise_or") || call->is_op("tir.bitwise_not") ||
          call->is_op("dsl.set_lane")) {
        for (const Expr& a : call->args) {
          if (a->dtype.is_bool() && a->dtype.is_vector()) {
            if (auto n = Natural(a)) return n;
          }
        }
      }
      if (call->is_op("dsl.mask_repack")) return e->dtype.lanes();
      // A lane-wise call that computes a mask from data (S.isnan(x), S.isinf(x)): the part
      // size of that data.
      for (const Expr& a : call->args) {
        if (a->dtype.is_vector() && !a->dtype.is_bool() && a->dtype.lanes() == e->dtype.lanes()) {
          return NativeLanes(a->dtype);
        }
      }
    }
    return std::nullopt;
  }

  // The mask's lanes in parts of n lanes.
  Parts Mask(const Expr& e, int n) {
    DataType t = e->dtype;
    int lanes = t.lanes(), k = NumParts(lanes, n);
    DataType part_type = DataType::Bool(n);
    const Span& span = e->span;
    if (auto natural = Natural(e)) {
      if (*natural != n) return Repack(Mask(e, *natural), *natural, lanes, n, span);
    }
    if (auto* bin = AsPtr<BinaryNode>(e)) {
      Parts out;
      if (bin->is_comparison()) {
        Parts a = Data(bin->a), b = Data(bin->b);
        if (k == 1 && a[0] == bin->a && b[0] == bin->b) return {e};
        for (int j = 0; j < k; ++j) out.push_back(MakeBinary(bin->kind, a[j], b[j], span));
        return out;
      }
      Parts a = Mask(bin->a, n), b = Mask(bin->b, n);
      if (k == 1 && a[0] == bin->a && b[0] == bin->b) return {e};
      for (int j = 0; j < k; ++j) out.push_back(MakeBinary(bin->kind, a[j], b[j], span));
      return out;
    }
    if (auto* no = AsPtr<NotNode>(e)) {
      Parts a = Mask(no->a, n);
      if (k == 1 && a[0] == no->a) return {e};
      Parts out;
      for (const Expr& p : a) out.push_back(NotNode::Make(p, span));
      return out;
    }
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = var_parts_.find(v);
      if (it != var_parts_.end()) return it->second;
      CheckNative(e);
      return {e};
    }
    if (auto* load = AsPtr<BufferLoadNode>(e)) return Load(load);
    if (auto* b = AsPtr<BroadcastNode>(e)) {
      Expr value = VisitExpr(b->value);
      if (k == 1 && lanes == n && value == b->value) return {e};
      return Parts(k, BroadcastNode::Make(value, n, span));
    }
    if (auto* sel = AsPtr<SelectNode>(e)) return Select(sel, n, k);
    if (auto* call = AsPtr<CallNode>(e)) {
      if (call->is_op("dsl.const_mask") || call->is_op("dsl.vmake")) {
        if (k == 1 && lanes == n) return {StmtExprMutator::VisitExpr_(call)};
        Parts out;
        for (int j = 0; j < k; ++j) {
          std::vector<Expr> on;
          for (int i = 0; i < n; ++i) {
            size_t g = j * n + i;
            on.push_back(g < call->args.size() ? VisitExpr(call->args[g]) : Bool(false));
          }
          out.push_back(Op(call->op_name().c_str(), part_type, std::move(on), span));
        }
        return out;
      }
      if (call->is_op("dsl.tail_mask")) {
        Expr count = VisitExpr(call->args[0]);
        if (k == 1 && lanes == n && count == call->args[0]) return {e};
        Parts out;
        for (int j = 0; j < k; ++j) {
          Expr rest = j == 0 ? count : SimplifyExpr(SubNode::Make(count, I32(j * n), span));
          out.push_back(Op("dsl.tail_mask", part_type, {rest}, span));
        }
        return out;
      }
      if (call->is_op("dsl.set_lane")) return SetLane(call, Mask(call->args[0], n), n);
      return CallParts(call, n, k, part_type);
    }
    TESSERA_THROW(span) << "dsl.AlignVectorWidth: cannot split the mask " << NodeKindName(e->kind)
                        << " of " << t;
  }

  // Parts of `from` lanes regrouped into parts of `n` lanes.
  Parts Repack(const Parts& src, int from, int lanes, int n, const Span& span) {
    Parts out;
    for (int j = 0; j < NumParts(lanes, n); ++j) {
      int first = j * n, p0 = first / from;
      int p1 = std::min(static_cast<int>(src.size()) - 1, (first + n - 1) / from);
      std::vector<Expr> args = {I32(first - p0 * from), I32(from)};
      for (int p = p0; p <= p1; ++p) args.push_back(src[p]);
      out.push_back(Op("dsl.mask_repack", DataType::Bool(n), std::move(args), span));
    }
    return out;
  }

  // ---- scalars reading lanes --------------------------------------------------------------------

  Expr VisitExpr_(const CallNode* op) override {
    if (AsPtr<GlobalVarNode>(op->op)) return SubCall(op)[0];
    if ((op->is_op("dsl.get_lane")) && op->args[0]->dtype.is_vector()) return GetLane(op);
    if (op->is_op("dsl.vall") || op->is_op("dsl.vany")) return AllAny(op);
    const auto* callee = AsPtr<OpNode>(op->op);
    std::string scalar = callee != nullptr ? callee->GetStrAttr("dsl.scalar") : "";
    if (!scalar.empty() && !op->dtype.is_vector()) return ScalarInLane0(op, callee, scalar);
    return StmtExprMutator::VisitExpr_(op);
  }

  // A scalar call of a lane-wise intrinsic (op attribute "dsl.scalar", set by the intrinsic
  // table and dsl_ops.cc) is computed in lane 0 of a native vector, as the host C has no scalar
  // form of each: get_lane(op(broadcast(x)..., other args[, all-lanes mask]), 0). The first
  // "dsl.scalar_operands" arguments (default 1) are the data operands; the others (flags) stay.
  Expr ScalarInLane0(const CallNode* op, const OpNode* callee, const std::string& scalar) {
    std::string count = callee->GetStrAttr("dsl.scalar_operands");
    size_t operands = count.empty() ? 1 : std::stoul(count);
    if (op->args.size() < operands) {
      TESSERA_THROW(op->span) << op->op_name() << " of a scalar takes " << operands
                              << " scalar operands";
    }
    int n = 0;
    std::vector<Expr> args;
    for (size_t i = 0; i < op->args.size(); ++i) {
      Expr a = VisitExpr(op->args[i]);
      if (i < operands) {
        if (a->dtype.is_vector()) {
          TESSERA_THROW(op->span) << op->op_name() << " of a scalar takes scalar operands, got "
                                  << a->dtype;
        }
        n = NativeLanes(a->dtype);
        a = BroadcastNode::Make(a, n, op->span);
      }
      args.push_back(a);
    }
    if (scalar == "lane0_mask") args.push_back(PrefixMask(n, n, op->span));
    Expr vec = CallNode::Make(op->dtype.with_lanes(n), op->op, std::move(args), op->span);
    return Op("dsl.get_lane", op->dtype, {vec, I32(0)}, op->span);
  }

  Expr GetLane(const CallNode* op) {
    const Expr& v = op->args[0];
    int lanes = v->dtype.lanes();
    int n =
        v->dtype.is_bool() ? Natural(v).value_or(DefaultMaskLanes(lanes)) : NativeLanes(v->dtype);
    Parts parts = v->dtype.is_bool() ? Mask(v, n) : Data(v);
    Expr index = VisitExpr(op->args[1]);
    if (SameParts(parts, v) && index == op->args[1]) return GetRef(op);
    DataType t = op->dtype;
    if (auto c = AsConstInt(index)) {
      return Op("dsl.get_lane", t, {parts[*c / n], I32(*c % n)}, op->span);
    }
    int last = static_cast<int>(parts.size()) - 1;
    Expr r = Op("dsl.get_lane", t, {parts[last], SubNode::Make(index, I32(last * n))}, op->span);
    for (int j = last - 1; j >= 0; --j) {
      Expr at = j == 0 ? index : Expr(SubNode::Make(index, I32(j * n)));
      Expr lane = Op("dsl.get_lane", t, {parts[j], at}, op->span);
      r = Op("tir.if_then_else", t, {LTNode::Make(index, I32((j + 1) * n)), lane, r}, op->span);
    }
    return r;
  }

  // vall / vany over the parts; the padding lanes of the last part do not count.
  Expr AllAny(const CallNode* op) {
    const Expr& m = op->args[0];
    int lanes = m->dtype.lanes();
    int n = Natural(m).value_or(DefaultMaskLanes(lanes));
    Parts parts = Mask(m, n);
    if (SameParts(parts, m) && lanes == n) return GetRef(op);
    bool all = op->is_op("dsl.vall");
    Expr result;
    for (size_t j = 0; j < parts.size(); ++j) {
      Expr p = parts[j];
      Expr tail = TailOf(lanes, n, static_cast<int>(j), op->span);
      if (tail) p = all ? Expr(OrNode::Make(p, NotNode::Make(tail))) : Expr(AndNode::Make(p, tail));
      Expr r = CallNode::Make(DataType::Bool(), op->op, {p}, op->span);
      result = !result ? r : all ? Expr(AndNode::Make(result, r)) : Expr(OrNode::Make(result, r));
    }
    return result;
  }

  // ---- gathers and scatters -------------------------------------------------------------------

  // dsl.vload_gather(ptr, idx, mask) / dsl.vstore_scatter(value, ptr, idx, mask) take a uint16
  // index vector with the data's lane count, split into native uint16 parts of 16 lanes. Data
  // part j (n lanes) becomes a call with (lo, hi, first): its lane i reads index lane first + i
  // of the 32 lanes lo ++ hi. The padding lanes of the last part are masked off.
  struct IndexArgs {
    Expr lo, hi, first;
  };

  IndexArgs GatherIndex(const Parts& idx, int n, int j) {
    int g = j * n, p = g / 16;
    Expr lo = idx[p];
    Expr hi = p + 1 < static_cast<int>(idx.size()) ? idx[p + 1] : lo;
    return {lo, hi, I32(g - p * 16)};
  }

  Parts Gather(const CallNode* op, int n, int k, DataType part_type) {
    int lanes = op->dtype.lanes();
    Expr ptr = VisitExpr(op->args[0]);
    Parts idx = Data(op->args[1]);
    Parts mask = Mask(op->args[2], n);
    Parts out;
    for (int j = 0; j < k; ++j) {
      IndexArgs ia = GatherIndex(idx, n, j);
      Expr m = AndMask(mask[j], TailOf(lanes, n, j, op->span), op->span);
      out.push_back(Op("dsl.vload_gather", part_type, {ptr, ia.lo, ia.hi, ia.first, m}, op->span));
    }
    return out;
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    const auto* call = AsPtr<CallNode>(op->value);
    if (ret_buffer_ && call != nullptr && call->is_op("tir.ret") && call->args.size() == 1 &&
        call->args[0]->dtype.is_vector()) {
      // The result's parts go to *ret; the function returns nothing.
      Parts values = Data(call->args[0]);
      std::vector<Stmt> seq;
      for (size_t j = 0; j < values.size(); ++j) {
        seq.push_back(BufferStoreNode::Make(ret_buffer_, values[j], {I32(static_cast<int>(j))},
                                            nullptr, op->span));
      }
      seq.push_back(EvaluateNode::Make(
          Op("tir.ret", DataType::Int(32), {I32(0)}, call->span), op->span));
      return SeqStmtNode::Flatten(seq, op->span);
    }
    if (call == nullptr || !call->is_op("dsl.vstore_scatter")) {
      return StmtExprMutator::VisitStmt_(op);
    }
    DataType t = call->args[0]->dtype;
    int lanes = t.lanes(), n = NativeLanes(t), k = NumParts(lanes, n);
    Parts values = Data(call->args[0]);
    Expr ptr = VisitExpr(call->args[1]);
    Parts idx = Data(call->args[2]);
    Parts mask = Mask(call->args[3], n);
    std::vector<Stmt> stores;
    for (int j = 0; j < k; ++j) {
      IndexArgs ia = GatherIndex(idx, n, j);
      Expr m = AndMask(mask[j], TailOf(lanes, n, j, op->span), op->span);
      stores.push_back(
          EvaluateNode::Make(Op("dsl.vstore_scatter", call->dtype,
                                {values[j], ptr, ia.lo, ia.hi, ia.first, m}, call->span),
                             op->span));
    }
    return SeqStmtNode::Flatten(stores, op->span);
  }

  // ---- statements -------------------------------------------------------------------------------

  Stmt VisitStmt_(const LetStmtNode* op) override {
    DataType t = op->var->dtype;
    if (!t.is_vector()) return StmtExprMutator::VisitStmt_(op);
    int n = t.is_bool() ? Natural(op->value).value_or(
                              IsMaskLanes(t.lanes()) ? t.lanes() : DefaultMaskLanes(t.lanes()))
                        : NativeLanes(t);
    Parts values = t.is_bool() ? Mask(op->value, n) : Data(op->value);
    if (values.size() == 1 && t.lanes() == n) {
      if (t.is_bool()) mask_lanes_[op->var.get()] = n;
      Stmt body = VisitStmt(op->body);
      if (values[0] == op->value && body == op->body) return GetRef(op);
      return LetStmtNode::Make(op->var, values[0], body, op->span);
    }
    Parts vars;
    for (size_t j = 0; j < values.size(); ++j) {
      vars.push_back(
          VarNode::Make(op->var->name + "_" + std::to_string(j), values[j]->dtype, op->var->span));
    }
    var_parts_[op->var.get()] = vars;
    if (t.is_bool()) mask_lanes_[op->var.get()] = n;
    Stmt body = VisitStmt(op->body);
    for (size_t j = values.size(); j-- > 0;) {
      body =
          LetStmtNode::Make(std::static_pointer_cast<VarNode>(vars[j]), values[j], body, op->span);
    }
    return body;
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    DataType t = op->dtype;
    if (!t.is_vector() || !op->annotations.count("tessera.local_var")) {
      return StmtExprMutator::VisitStmt_(op);
    }
    int n = t.is_bool() ? StoredMaskLanes(op) : NativeLanes(t);
    if (NumParts(t.lanes(), n) == 1 && t.lanes() == n) {
      if (t.is_bool()) local_mask_lanes_[op->buffer_var.get()] = n;
      return StmtExprMutator::VisitStmt_(op);
    }
    LocalParts parts;
    parts.lanes = n;
    DataType part_type = t.with_lanes(n);
    int k = NumParts(t.lanes(), n);
    LocalAddressFinder finder(op->buffer_var.get(), t);
    finder.VisitStmt(op->body);
    if (finder.found && !t.is_bool()) {
      // Its address is used: an array of the native parts, in one piece of private memory.
      Buffer whole = BufferNode::Make(op->buffer_var, part_type, {I32(k)}, {}, nullptr,
                                      op->buffer_var->name, 64, 1, op->span);
      for (int j = 0; j < k; ++j) {
        parts.buffers.push_back(whole);
        parts.indices.push_back(I32(j));
      }
      local_parts_[op->buffer_var.get()] = parts;
      Stmt body = DeclBufferNode::Make(whole, VisitStmt(op->body), op->span);
      auto annotations = op->annotations;
      annotations.erase("tessera.local_var");
      return AllocateNode::Make(op->buffer_var, part_type, {I32(k)}, op->condition, body,
                                annotations, op->span);
    }
    std::vector<Var> vars;
    for (int j = 0; j < k; ++j) {
      Var v = VarNode::MakePointer(op->buffer_var->name + "_" + std::to_string(j), part_type,
                                   op->buffer_var->pointer->scope, op->buffer_var->span);
      vars.push_back(v);
      parts.buffers.push_back(
          BufferNode::Make(v, part_type, {I32(1)}, {}, nullptr, v->name, 64, 1, op->span));
      parts.indices.push_back(I32(0));
    }
    local_parts_[op->buffer_var.get()] = parts;
    Stmt body = VisitStmt(op->body);
    for (size_t j = vars.size(); j-- > 0;) {
      body = DeclBufferNode::Make(parts.buffers[j], body, op->span);
      body = AllocateNode::Make(vars[j], part_type, {I32(1)}, op->condition, body, op->annotations,
                                op->span);
    }
    return body;
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    if (local_parts_.count(op->buffer->data.get())) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    DataType t = op->value->dtype;
    if (!t.is_vector()) return StmtExprMutator::VisitStmt_(op);
    auto local = local_parts_.find(op->buffer->data.get());
    if (local != local_parts_.end()) {
      const LocalParts& lp = local->second;
      Parts values = t.is_bool() ? Mask(op->value, lp.lanes) : Data(op->value);
      std::vector<Stmt> stores;
      for (size_t j = 0; j < values.size(); ++j) {
        stores.push_back(
            BufferStoreNode::Make(lp.buffers[j], values[j], {lp.indices[j]}, nullptr, op->span));
      }
      return SeqStmtNode::Flatten(stores, op->span);
    }
    auto mask_local = local_mask_lanes_.find(op->buffer->data.get());
    if (mask_local != local_mask_lanes_.end()) {
      Parts values = Mask(op->value, mask_local->second);
      if (values[0] == op->value) return GetRef(op);
      return BufferStoreNode::Make(op->buffer, values[0], op->indices, nullptr, op->span);
    }
    const auto* ramp = AsPtr<RampNode>(op->indices.back());
    if (ramp == nullptr || t.is_bool()) return StmtExprMutator::VisitStmt_(op);
    int n = NativeLanes(t), k = NumParts(t.lanes(), n);
    Parts values = Data(op->value);
    Parts preds = op->predicate ? Mask(op->predicate, n) : Parts(k, nullptr);
    std::vector<Expr> indices(op->indices.begin(), op->indices.end() - 1);
    for (Expr& i : indices) i = VisitExpr(i);
    Expr base = VisitExpr(ramp->base), stride = VisitExpr(ramp->stride);
    if (k == 1 && t.lanes() == n && values[0] == op->value && base == ramp->base &&
        stride == ramp->stride && (!op->predicate || preds[0] == op->predicate)) {
      return GetRef(op);
    }
    std::vector<Stmt> stores;
    for (int j = 0; j < k; ++j) {
      std::vector<Expr> idx = indices;
      idx.push_back(RampNode::Make(PartBase(base, stride, j * n), stride, n, ramp->span));
      Expr pred = AndMask(preds[j], TailOf(t.lanes(), n, j, op->span), op->span);
      stores.push_back(BufferStoreNode::Make(op->buffer, values[j], idx, pred, op->span));
    }
    return SeqStmtNode::Flatten(stores, op->span);
  }

 private:
  struct LocalParts {
    int lanes = 0;
    std::vector<Buffer> buffers;  // part j is buffers[j][indices[j]]
    std::vector<Expr> indices;
  };

  static Expr MakeBinary(NodeKind kind, const Expr& a, const Expr& b, const Span& span) {
    switch (kind) {
#define TESSERA_ALIGN_BINARY(name) \
  case NodeKind::k##name:          \
    return name##Node::Make(a, b, span);
      TESSERA_BINARY_NODES(TESSERA_ALIGN_BINARY)
#undef TESSERA_ALIGN_BINARY
      default:
        throw InternalError("not a binary kind");
    }
  }

  static Expr PartBase(const Expr& base, const Expr& stride, int offset) {
    if (offset == 0) return base;
    return SimplifyExpr(AddNode::Make(base, MulNode::Make(I32(offset), stride)));
  }

  // The padding of part j of a `lanes`-lane vector split into parts of n: null when full.
  static Expr TailOf(int lanes, int n, int j, const Span& span) {
    int active = std::min(n, lanes - j * n);
    return active == n ? nullptr : PrefixMask(n, active, span);
  }

  static void CheckNative(const Expr& e) {
    DataType t = e->dtype;
    bool native = t.is_bool() ? IsMaskLanes(t.lanes()) : t.bits() * t.lanes() == 256;
    if (!native) {
      TESSERA_THROW(e->span) << "dsl.AlignVectorWidth: " << t
                             << " value without parts (virtual vectors cannot cross functions)";
    }
  }

  // The part size of a mask local: that of the first value stored into it with one.
  int StoredMaskLanes(const AllocateNode* op) {
    std::optional<int> found;
    PostOrderVisit(op->body, [&](const ObjectRef& node) {
      const auto* store = AsPtr<BufferStoreNode>(node);
      if (found || !store || store->buffer->data != op->buffer_var) return;
      found = Natural(store->value);
    });
    int lanes = op->dtype.lanes();
    return found.value_or(IsMaskLanes(lanes) ? lanes : DefaultMaskLanes(lanes));
  }

  struct Hoisted {
    std::string callee;
    Buffer buffer;  // the private array of the result's parts
    Stmt call;
  };

  const SignaturePlans* plans_;
  Buffer ret_buffer_;  // *ret of a function whose virtual-width result is split
  std::vector<Hoisted> hoisted_;
  int hoist_count_ = 0;
  bool x3_ = false;  // the target is X3 (S.tag "no_zip" has no effect there)
  std::unordered_map<const Object*, Parts> var_parts_;
  std::unordered_map<const Object*, int> mask_lanes_;
  std::unordered_map<const Object*, LocalParts> local_parts_;
  std::unordered_map<const Object*, int> local_mask_lanes_;
};

PrimFunc AlignVectorWidthFunc(const PrimFunc& f, const SignaturePlan& plan,
                               const SignaturePlans& plans) {
  VectorWidthAligner aligner(&plans);
  aligner.SetX3(IsX3Target(f->GetStrAttr("target")));
  std::vector<Var> params = aligner.SplitParams(f, plan);
  Stmt body = aligner.VisitStmt(f->body);
  bool signature = params != f->params;
  if (!signature && body == f->body) return f;
  if (!signature) return f->WithBody(body);
  return PrimFuncNode::Make(params, f->buffer_map, body,
                            plan.ret_split ? DataType::Void() : f->ret_type, f->attrs, f->span);
}

IRModule AlignVectorWidthModule(IRModule mod, const PassContext&) {
  SignaturePlans plans;
  for (const auto& [gv, f] : mod->functions) plans[gv->name_hint] = PlanSignature(f);
  std::vector<std::pair<GlobalVar, PrimFunc>> functions;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    PrimFunc g = AlignVectorWidthFunc(f, plans.at(gv->name_hint), plans);
    changed = changed || g != f;
    functions.emplace_back(gv, g);
  }
  return changed ? IRModuleNode::Make(functions, mod->attrs) : mod;
}

}  // namespace

Pass AlignVectorWidth() {
  return CreateModulePass(AlignVectorWidthModule, 0, "dsl.AlignVectorWidth");
}
TESSERA_REGISTER_PASS("dsl.AlignVectorWidth", AlignVectorWidth);

}  // namespace transform
}  // namespace tessera
