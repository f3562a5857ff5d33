// IdentifyMemCpy: whether a loop nest only copies one contiguous region of a buffer into one of
// another, in the same element order (TVM's tir::IdentifyMemCpy, used to turn such nests into
// memcpy calls).
#include <algorithm>
#include <tuple>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_set.h"
#include "tessera/arith/int_solver.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/printer.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/buffer_offset.h"

namespace tessera {
namespace transform {
namespace {

std::string Text(const ObjectRef& node) { return AsScript(node); }

// The flat offset of an access, or the reason there is none.
std::optional<Expr> FlatOffset(const Buffer& buffer, const std::vector<Expr>& indices,
                               const char* side, std::string* why) {
  std::vector<Expr> offsets = BufferOffsetOf(buffer, indices);
  if (offsets.size() != 1) {
    *why = std::string("the ") + side + " buffer " + buffer->name + " has " +
           std::to_string(offsets.size()) +
           " physical axes; only copies between buffers that flatten to one axis are recognized";
    return std::nullopt;
  }
  return offsets[0];
}

}  // namespace

MemCpyResult IdentifyMemCpy(const For& loop, arith::Analyzer& ana) {
  MemCpyResult result;
  auto fail = [&result](std::string why) {
    result.reason = std::move(why);
    return result;
  };
  // The perfect nest from `loop` down to the first statement that is not a loop.
  std::vector<arith::IterDomain> iters;
  std::vector<std::pair<Var, arith::IntervalSet>> intervals;
  Expr trips;
  Stmt body = loop;
  while (auto* f = AsPtr<ForNode>(body)) {
    auto min = AsConstInt(f->min);
    auto extent = AsConstInt(f->extent);
    if (!min || !extent) {
      return fail("loop " + f->loop_var->name + " has a non-constant range [" + Text(f->min) +
                  ", " + Text(f->min) + " + " + Text(f->extent) +
                  "); only constant loops are recognized");
    }
    iters.push_back({f->loop_var, *min, *extent});
    Expr last = ana.Simplify(SubE(AddE(f->min, f->extent), IntConst(f->extent->dtype, 1)));
    intervals.emplace_back(f->loop_var, arith::IntervalSet{f->min, last});
    trips = trips ? MulE(trips, f->extent) : f->extent;
    body = f->body;
  }
  auto* store = AsPtr<BufferStoreNode>(body);
  if (!store) {
    return fail(std::string("the loop nest's body is a ") + NodeKindName(body->kind) +
                ", not a single buffer store, so it is no plain copy");
  }
  auto* load = AsPtr<BufferLoadNode>(store->value);
  if (!load) {
    return fail("the value stored to " + store->buffer->name + " is computed (" +
                Text(store->value) + "), not loaded unchanged from a buffer");
  }
  std::string why;
  auto src = FlatOffset(load->buffer, load->indices, "source", &why);
  if (!src) return fail(why);
  auto dst = FlatOffset(store->buffer, store->indices, "destination", &why);
  if (!dst) return fail(why);

  // 1. Each side's flat offset is a bijective affine map of the loop iterators.
  std::string map_error;
  auto src_map = arith::DetectIterMapChecked({*src}, iters, arith::IterMapLevel::kBijective,
                                             /*simplify_trivial=*/true, &map_error);
  if (!src_map) {
    return fail("the source offset " + Text(*src) +
                " is not a one-to-one affine map of the loop iterators (" + map_error + ")");
  }
  auto dst_map = arith::DetectIterMapChecked({*dst}, iters, arith::IterMapLevel::kBijective,
                                             /*simplify_trivial=*/true, &map_error);
  if (!dst_map) {
    return fail("the destination offset " + Text(*dst) +
                " is not a one-to-one affine map of the loop iterators (" + map_error + ")");
  }

  // 2. Each side touches a contiguous range: as many offsets between its ends as iterations.
  trips = ana.Simplify(trips);
  for (const auto& [side, offset] : {std::pair<const char*, Expr>{"source", *src},
                                     std::pair<const char*, Expr>{"destination", *dst}}) {
    arith::IntervalSet span = arith::EvalIntervalSet(offset, intervals, ana);
    if (!span.HasLowerBound() || !span.HasUpperBound()) {
      return fail(std::string("the ") + side + " offset " + Text(offset) +
                  " has no known lower and upper end over the loops");
    }
    Expr count = AddE(SubE(span.max_value, span.min_value), IntConst(span.max_value->dtype, 1));
    Expr same = EQNode::Make(CastTo(count->dtype, trips), count);
    if (!ana.CanProve(ana.Simplify(same))) {
      return fail(std::string("the ") + side + " offsets run from " + Text(span.min_value) +
                  " to " + Text(span.max_value) + ", which is not exactly the " + Text(trips) +
                  " elements the loops visit: the copy would skip or repeat elements");
    }
  }

  // 3. Both sides split the iterators the same way, so elements keep their order.
  std::vector<arith::IterSplit> src_terms = (*src_map)[0]->args;
  std::vector<arith::IterSplit> dst_terms = (*dst_map)[0]->args;
  if (src_terms.size() != dst_terms.size()) {
    return fail("the source offset is made of " + std::to_string(src_terms.size()) +
                " iterator splits and the destination offset of " +
                std::to_string(dst_terms.size()) + ": the elements are reordered");
  }
  auto key = [](const arith::IterSplit& s) {
    return std::make_tuple(s->scale, s->lower_factor, s->extent);
  };
  auto by_key = [&key](const arith::IterSplit& a, const arith::IterSplit& b) {
    return key(a) < key(b);
  };
  std::sort(src_terms.begin(), src_terms.end(), by_key);
  std::sort(dst_terms.begin(), dst_terms.end(), by_key);
  for (size_t i = 0; i < src_terms.size(); ++i) {
    if (!arith::IterSplitEqual(src_terms[i], dst_terms[i])) {
      DataType t = src->get()->dtype;
      return fail("split " + std::to_string(i) + " of the source offset (" +
                  Text(arith::IterSplitToExpr(src_terms[i], t)) +
                  ") does not match the destination's (" +
                  Text(arith::IterSplitToExpr(dst_terms[i], t)) + "): the elements are reordered");
    }
  }

  auto region = [&loop](const Buffer& buffer) {
    return BufferRegionNode::Make(buffer, arith::DomainTouched(loop, buffer, true, true));
  };
  result.source = region(load->buffer);
  result.dest = region(store->buffer);
  return result;
}

std::vector<MemCpyResult> IdentifyMemCpyLoops(const Stmt& stmt) {
  struct Visitor : StmtVisitor {
    arith::Analyzer ana;
    std::vector<MemCpyResult> out;
    void VisitStmt_(const ForNode* op) override {
      For loop = GetRef(op);
      out.push_back(IdentifyMemCpy(loop, ana));
      ana.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
      StmtVisitor::VisitStmt_(op);
    }
  };
  Visitor visitor;
  visitor.VisitStmt(stmt);
  return visitor.out;
}

}  // namespace transform
}  // namespace tessera
