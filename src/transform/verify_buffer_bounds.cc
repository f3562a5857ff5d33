// tir.VerifyBufferBounds: a constant index outside a constant extent is a compile-time error, not
// a read or write past the buffer at run time; so is an affine index of loops of constant
// extents that leaves the buffer on some iteration of an unconditional access, and an integer
// division or modulo by a constant 0.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "span_tracking.h"
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class BoundsChecker : public SpanTrackingVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<WellFormedError> errors;

  BoundsChecker(Span span, bool check_indices, bool check_divisors = true)
      : check_indices_(check_indices), check_divisors_(check_divisors) {
    span_ = std::move(span);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Check(op->buffer, op->indices);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (op->predicate) ++guarded_;
    Check(op->buffer, op->indices);
    if (op->predicate) --guarded_;
    StmtExprVisitor::VisitStmt_(op);
  }
  // Loops of constant extent bound their variable; a loop that may not run, a condition or a
  // block predicate makes the accesses inside conditional.
  void VisitStmt_(const ForNode* op) override {
    auto min = AsConstInt(op->min), extent = AsConstInt(op->extent);
    bool bounded = min && extent && *extent > 0;
    if (bounded) ranges_[op->loop_var.get()] = {*min, *min + *extent - 1};
    if (!bounded) ++guarded_;
    StmtExprVisitor::VisitStmt_(op);
    if (!bounded) --guarded_;
    ranges_.erase(op->loop_var.get());
  }
  void VisitStmt_(const IfThenElseNode* op) override {
    VisitExpr(op->condition);
    ++guarded_;
    VisitStmt(op->then_case);
    if (op->else_case) VisitStmt(op->else_case);
    --guarded_;
  }
  void VisitStmt_(const WhileNode* op) override {
    ++guarded_;
    StmtExprVisitor::VisitStmt_(op);
    --guarded_;
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    bool conditional = op->predicate && !IsConstInt(op->predicate, 1);
    if (conditional) ++guarded_;
    StmtExprVisitor::VisitStmt_(op);
    if (conditional) --guarded_;
  }
  void VisitExpr_(const CallNode* op) override {
    // A call's operands may be conditional (T.if_then_else, the predicate of an all-reduce) or
    // not accesses at all (T.address_of(A[i + 8]) of a prefetch): only plain accesses count.
    bool conditional = true;
    if (conditional) ++guarded_;
    StmtExprVisitor::VisitExpr_(op);
    if (conditional) --guarded_;
  }
  void VisitExpr_(const SelectNode* op) override {
    ++guarded_;
    StmtExprVisitor::VisitExpr_(op);
    --guarded_;
  }
  void VisitExpr_(const DivNode* op) override { Divisor(op, "division"); }
  void VisitExpr_(const ModNode* op) override { Divisor(op, "modulo"); }
  void VisitExpr_(const FloorDivNode* op) override { Divisor(op, "division"); }
  void VisitExpr_(const FloorModNode* op) override { Divisor(op, "modulo"); }

 private:
  void Check(const Buffer& buffer, const std::vector<Expr>& indices) {
    if (!check_indices_ || indices.size() != buffer->shape.size()) return;
    for (size_t d = 0; d < indices.size(); ++d) {
      auto extent = AsConstInt(buffer->shape[d]);
      if (!extent) continue;
      int64_t lo = 0, hi = 0;
      if (auto c = AsConstInt(indices[d])) {
        lo = hi = *c;
      } else if (auto* ramp = AsPtr<RampNode>(indices[d])) {
        auto base = AsConstInt(ramp->base), stride = AsConstInt(ramp->stride);
        // vscale * k lanes (lanes < 0): the extent is known only on the hardware.
        if (!base || !stride || ramp->lanes < 0) continue;
        int64_t last = *base + (ramp->lanes - 1) * *stride;
        lo = std::min(*base, last);
        hi = std::max(*base, last);
      } else if (auto range = guarded_ == 0 ? Affine(indices[d]) : std::nullopt) {
        lo = range->first;
        hi = range->second;
      } else {
        continue;
      }
      if (lo < 0 || hi >= *extent) {
        errors.push_back({"Index " + std::to_string(lo < 0 ? lo : hi) +
                              " is out of bounds for dimension " + std::to_string(d) +
                              " of buffer " + buffer->name + " (extent " +
                              std::to_string(*extent) + ")",
                          span_});
      }
    }
  }

  template <class T>
  void Divisor(const T* op, const char* what) {
    StmtExprVisitor::VisitExpr_(op);
    if (!check_divisors_ || (!op->dtype.is_int() && !op->dtype.is_uint())) return;
    if (auto c = AsConstInt(op->b); c && *c == 0) {
      errors.push_back({std::string("integer ") + what + " by zero", span_});
    }
  }

  // The exact range of an affine index (sums and constant multiples of bounded loop variables
  // and constants, each variable at most once), or nothing.
  std::optional<std::pair<int64_t, int64_t>> Affine(const Expr& e) {
    std::unordered_map<const VarNode*, int> seen;
    auto r = AffineRange(e, &seen);
    if (!r) return std::nullopt;
    for (const auto& [v, n] : seen) {
      if (n > 1) return std::nullopt;  // i - i is 0, not [lo - hi, hi - lo]
    }
    return r;
  }
  std::optional<std::pair<int64_t, int64_t>> AffineRange(
      const Expr& e, std::unordered_map<const VarNode*, int>* seen) {
    constexpr int64_t kLimit = int64_t(1) << 62;
    if (auto c = AsConstInt(e)) return std::make_pair(*c, *c);
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = ranges_.find(v);
      if (it == ranges_.end()) return std::nullopt;
      ++(*seen)[v];
      return it->second;
    }
    if (auto* cast = AsPtr<CastNode>(e)) {
      if (!cast->dtype.is_int() || !cast->value->dtype.is_int() ||
          cast->dtype.bits() < cast->value->dtype.bits()) {
        return std::nullopt;
      }
      return AffineRange(cast->value, seen);
    }
    auto* bin = AsPtr<BinaryNode>(e);
    if (!bin || !e->dtype.is_int()) return std::nullopt;
    if (bin->kind == NodeKind::kAdd || bin->kind == NodeKind::kSub) {
      auto a = AffineRange(bin->a, seen), b = AffineRange(bin->b, seen);
      if (!a || !b) return std::nullopt;
      std::pair<int64_t, int64_t> r = bin->kind == NodeKind::kAdd
                                          ? std::make_pair(a->first + b->first, a->second + b->second)
                                          : std::make_pair(a->first - b->second, a->second - b->first);
      if (std::abs(r.first) > kLimit || std::abs(r.second) > kLimit) return std::nullopt;
      return r;
    }
    if (bin->kind == NodeKind::kMul) {
      auto k = AsConstInt(bin->b);
      const Expr& x = k ? bin->a : bin->b;
      if (!k) k = AsConstInt(bin->a);
      if (!k || std::abs(*k) > (int64_t(1) << 30)) return std::nullopt;
      auto a = AffineRange(x, seen);
      if (!a || std::abs(a->first) > (int64_t(1) << 31) || std::abs(a->second) > (int64_t(1) << 31))
        return std::nullopt;
      int64_t p = a->first * *k, q = a->second * *k;
      return std::make_pair(std::min(p, q), std::max(p, q));
    }
    return std::nullopt;
  }

  bool check_indices_, check_divisors_;
  int guarded_ = 0;
  std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> ranges_;
};

PrimFunc VerifyBufferBoundsFunc(PrimFunc f, IRModule, const PassContext&) {
  std::vector<WellFormedError> errors = VerifyConstantBufferBounds(f);
  if (!errors.empty()) TESSERA_THROW(errors.front().span) << errors.front().message;
  return f;
}

}  // namespace

std::vector<WellFormedError> VerifyConstantBufferBounds(const PrimFunc& func) {
  BoundsChecker checker(func->span, true);
  checker.VisitStmt(func->body);
  return std::move(checker.errors);
}

std::vector<WellFormedError> VerifyConstantDivisors(const PrimFunc& func) {
  BoundsChecker checker(func->span, false);
  checker.VisitStmt(func->body);
  return std::move(checker.errors);
}

// As TVM's tir.analysis.OOBChecker: the accesses provably outside their buffer, reported as a
// schedule error (the kind TVM raises) at the first one, naming the buffer and dimension.
static PrimFunc OOBCheckerFunc(PrimFunc f, IRModule, const PassContext&) {
  BoundsChecker checker(f->span, /*check_indices=*/true, /*check_divisors=*/false);
  checker.VisitStmt(f->body);
  if (checker.errors.empty()) return f;
  std::string message = "Out of bounds memory access: " + checker.errors.front().message;
  if (checker.errors.size() > 1) {
    message += " (and " + std::to_string(checker.errors.size() - 1) + " more)";
  }
  throw Error(message, checker.errors.front().span, ErrorKind::kSchedule);
}

Pass OOBChecker() { return CreatePrimFuncPass(OOBCheckerFunc, 0, "tir.analysis.OOBChecker"); }
TESSERA_REGISTER_PASS("tir.analysis.OOBChecker", OOBChecker);

Pass VerifyBufferBounds() {
  return CreatePrimFuncPass(VerifyBufferBoundsFunc, 0, "tir.VerifyBufferBounds");
}
TESSERA_REGISTER_PASS("tir.VerifyBufferBounds", VerifyBufferBounds);

}  // namespace transform
}  // namespace tessera
