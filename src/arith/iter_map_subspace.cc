// TVM's SubspaceDivide: an iterator map divided into an outer and an inner subspace.
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "iter_map_detail.h"

namespace tessera {
namespace arith {

using namespace iter_map_detail;

namespace {

// One side of a division: a split of a mark, or a sum (one of the two is set).
struct DivisionPart {
  IterSplit split;
  IterSum sum;
};

struct Division {
  enum Kind { kInner, kOuter, kMixed };
  DivisionPart outer;
  int64_t outer_extent;
  DivisionPart inner;
  int64_t inner_extent;
  Kind kind;
};

DivisionPart PartOf(IterSum sum) { return {nullptr, std::move(sum)}; }
DivisionPart PartOf(IterSplit split) { return {std::move(split), nullptr}; }
Division InnerOnly(DivisionPart part, int64_t extent) {
  return {PartOf(MakeSum({}, 0)), 1, std::move(part), extent, Division::kInner};
}
Division OuterOnly(DivisionPart part, int64_t extent) {
  return {std::move(part), extent, PartOf(MakeSum({}, 0)), 1, Division::kOuter};
}

IterSum AsSum(const DivisionPart& part) { return part.sum ? part.sum : MakeSum({part.split}, 0); }

IterMark MarkOf(IterSum sum, int64_t extent) {
  auto mark = std::make_shared<IterMarkNode>();
  mark->sum = std::move(sum);
  mark->extent = extent;
  return mark;
}

IterSplit AsSplit(const DivisionPart& part, int64_t extent) {
  if (part.split) return part.split;
  return MakeSplit(MarkOf(part.sum, extent), 1, extent, 1);
}

// TVM's SubspaceDivider: splits of input iterators go wholly to one side; a fused mark is
// divided where its inner splits reach the extent of its inner part.
class SubspaceDivider {
 public:
  SubspaceDivider(const std::vector<IterSum>& map, const std::vector<Var>& sub_iters,
                  DataType dtype)
      : dtype_(dtype) {
    for (const Var& v : sub_iters) sub_iters_.insert(v.get());
    std::function<void(const IterSplit&)> collect = [&](const IterSplit& s) {
      const IterMarkNode* mark = s->source.get();
      if (!splits_.count(mark) && mark->sum)
        for (const IterSplit& inner : mark->sum->args) collect(inner);
      splits_[mark].push_back(s);
    };
    for (const IterSum& sum : map)
      for (const IterSplit& s : sum->args) collect(s);
  }

  Division DivideSum(const IterSum& expr, int64_t mark_extent) {
    if (expr->args.empty()) {
      IterSum base = MakeSum({}, expr->base);
      base->free_base = expr->free_base;
      return {PartOf(MakeSum({}, 0)), 1, PartOf(base), 1, Division::kMixed};
    }
    if (expr->args.size() == 1) {
      if (expr->args[0]->scale != 1) Unsupported("a scaled index cannot be divided");
      Division res = DivideSplit(expr->args[0]);
      if (expr->base != 0 || expr->free_base) {
        IterSum inner = AsSum(res.inner);
        IterSum with_base = MakeSum(inner->args, inner->base + expr->base);
        with_base->free_base = inner->free_base;
        if (expr->free_base)
          with_base->free_base =
              with_base->free_base ? AddE(with_base->free_base, expr->free_base) : expr->free_base;
        res.inner = PartOf(with_base);
      }
      return res;
    }
    int64_t extent = 1;
    std::vector<IterSplit> outer_args, inner_args;
    bool inner = true, scale_is_one = false;
    for (auto it = expr->args.rbegin(); it != expr->args.rend(); ++it) {
      if ((*it)->scale == 1) scale_is_one = true;
      Division d = DivideSplit(*it);
      IterSplit arg;
      if (d.kind == Division::kInner) {
        if (!inner) Unsupported("an inner iterator above an outer one");
        arg = AsSplit(d.inner, d.inner_extent);
        inner_args.push_back(arg);
      } else if (d.kind == Division::kOuter) {
        arg = AsSplit(d.outer, d.outer_extent);
        outer_args.push_back(arg);
        inner = false;
      } else {
        Unsupported("a fused iterator mixes the subspaces");
      }
      extent *= arg->extent;
    }
    if (!scale_is_one) Unsupported("a fused sum without an innermost iterator");
    IterMark outer_mark = MarkFromArgs(outer_args, 0);
    IterMark inner_mark = MarkFromArgs(inner_args, expr->base);
    if (extent != mark_extent) {
      auto bound = [&](const IterMark& m) {
        return LTNode::Make(IterSumToExpr(m->sum, dtype_), IntConst(dtype_, mark_extent));
      };
      if (inner_args.empty()) {
        outer_predicate_ = AndE(outer_predicate_, bound(outer_mark));
        return OuterOnly(PartOf(outer_mark->sum), mark_extent);
      }
      if (outer_args.empty()) {
        inner_predicate_ = AndE(inner_predicate_, bound(inner_mark));
        return InnerOnly(PartOf(inner_mark->sum), mark_extent);
      }
      Unsupported("a padded fused iterator mixes the subspaces");
    }
    return {PartOf(outer_mark->sum), outer_mark->extent, PartOf(inner_mark->sum),
            inner_mark->extent, Division::kMixed};
  }

  Expr outer_predicate() const { return outer_predicate_; }
  Expr inner_predicate() const { return inner_predicate_; }

 private:
  static IterMark MarkFromArgs(const std::vector<IterSplit>& args, int64_t base) {
    std::vector<IterSplit> scaled;
    int64_t extent = 1;
    for (const IterSplit& a : args) {
      IterSplit s = CopySplit(a);
      s->scale = extent;
      extent *= s->extent;
      scaled.push_back(s);
    }
    return MarkOf(MakeSum({scaled.rbegin(), scaled.rend()}, base), extent);
  }

  Division DivideSplit(const IterSplit& expr) {
    auto found = divided_.find(expr.get());
    if (found != divided_.end()) return found->second;
    const std::vector<IterSplit>& splits = splits_.at(expr->source.get());
    const IterMarkNode* source = expr->source.get();
    if (source->var) {
      bool inner = sub_iters_.count(source->var.get()) != 0;
      for (const IterSplit& s : splits)
        divided_.emplace(s.get(),
                         inner ? InnerOnly(PartOf(s), s->extent) : OuterOnly(PartOf(s), s->extent));
    } else if (source->sum) {
      Division whole = DivideSum(source->sum, source->extent);
      if (splits.size() == 1) return whole;
      if (whole.outer.split || whole.inner.split) Unsupported("a split of a divided iterator");
      IterMark outer_mark = MarkOf(whole.outer.sum, whole.outer_extent);
      IterMark inner_mark = MarkOf(whole.inner.sum, whole.inner_extent);
      bool boundary = whole.kind == Division::kOuter;
      std::vector<bool> used(splits.size(), false);
      std::vector<IterSplit> inner_iters, outer_iters;
      int64_t expected = 1;
      for (size_t i = 0; i < splits.size(); ++i) {
        size_t j = 0;
        while (j < splits.size() && (used[j] || splits[j]->lower_factor != expected)) ++j;
        if (j == splits.size()) Unsupported("the splits of a fused iterator leave a gap");
        used[j] = true;
        (boundary ? outer_iters : inner_iters).push_back(splits[j]);
        expected *= splits[j]->extent;
        if (expected == whole.inner_extent) boundary = true;
      }
      if (!boundary) Unsupported("the splits of a fused iterator cross the subspaces");
      for (const IterSplit& s : inner_iters) {
        IterSplit moved = CopySplit(s);
        moved->source = inner_mark;
        divided_.emplace(s.get(), InnerOnly(PartOf(moved), s->extent));
      }
      for (const IterSplit& s : outer_iters) {
        IterSplit moved = CopySplit(s);
        moved->source = outer_mark;
        moved->lower_factor = s->lower_factor / outer_iters[0]->lower_factor;
        divided_.emplace(s.get(), OuterOnly(PartOf(moved), s->extent));
      }
    } else {
      Unsupported("a mark over an expression cannot be divided");
    }
    return divided_.at(expr.get());
  }

  DataType dtype_;
  std::unordered_set<const VarNode*> sub_iters_;
  std::unordered_map<const IterMarkNode*, std::vector<IterSplit>> splits_;
  std::unordered_map<const IterSplitNode*, Division> divided_;
  Expr outer_predicate_, inner_predicate_;
};

}  // namespace

std::optional<SubspaceDivision> SubspaceDivide(const std::vector<IterSum>& map,
                                               const std::vector<Var>& sub_iters, DataType dtype) {
  SubspaceDivider divider(map, sub_iters, dtype);
  SubspaceDivision result;
  try {
    for (const IterSum& sum : map) {
      Division d = divider.DivideSum(sum, 0);
      result.parts.emplace_back(MarkOf(AsSum(d.outer), d.outer_extent),
                                MarkOf(AsSum(d.inner), d.inner_extent));
    }
  } catch (const RewriteFailure&) {
    return std::nullopt;
  }
  Expr yes = IntConst(DataType::Bool(), 1);
  result.outer_predicate = divider.outer_predicate() ? divider.outer_predicate() : yes;
  result.inner_predicate = divider.inner_predicate() ? divider.inner_predicate() : yes;
  return result;
}

}  // namespace arith
}  // namespace tessera
