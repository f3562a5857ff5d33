// Affine iterator maps (see tessera/arith/iter_affine_map.h).
#include "tessera/arith/iter_affine_map.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "iter_map_detail.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {
namespace {

using namespace iter_map_detail;

struct RewriteOptions {
  bool free_terms = false;        // terms without iterators go to the base (TVM's behaviour)
  bool simplify_trivial = false;  // iterators of extent 1 are constants
  bool fold_tiles = false;        // a fuse of splits that tile one mark's low part is that part
  bool tvm_padding = false;       // TVM's padding: one padded mark per mark, left pads allowed
  bool tvm_fuse = false;          // TVM's fuse: its order among equal scales, splits combined
  bool allow_overlap = false;     // a surjective fuse may overlap (x * 7 + y, y in [0, 8))
};

class IterMapRewriter {
 public:
  explicit IterMapRewriter(const std::vector<IterDomain>& iters, RewriteOptions options = {})
      : options_(options) {
    for (const IterDomain& d : iters) {
      if (d.extent == 0) continue;
      auto mark = std::make_shared<IterMarkNode>();
      mark->var = d.var;
      mark->extent = d.extent;
      if (options_.tvm_fuse && d.min != 0) {  // TVM: the mark of var - min, plus min
        mark->var = nullptr;
        mark->expr = SubE(d.var, IntConst(d.var->dtype, d.min));
      }
      vars_[d.var.get()] = {mark, d.min};
      input_marks_.push_back(mark);
    }
  }

  // TVM's RewriteIterConstraint: `e` in [lower, upper) bounds the mark its iterators fuse into.
  void AddConstraint(const Expr& e, std::optional<int64_t> lower, std::optional<int64_t> upper) {
    IterSum sum = Visit(e);
    if (sum->free_base) Unsupported("a predicate bounds iterators plus terms free of them");
    if (lower) *lower -= sum->base;
    if (upper) *upper -= sum->base;
    IterSum fused = FuseTVM(MakeSum(sum->args, 0), /*allow_early_skip=*/false);
    auto key = fused->args.size() == 1 && fused->args[0]->scale == 1
                   ? mark_keys_.find(fused->args[0]->source.get())
                   : mark_keys_.end();
    if (key == mark_keys_.end()) Unsupported("a predicate bounds iterators that do not fuse");
    FusedMark& entry = tvm_fused_.at(key->second);
    IterMark mark = entry.mark;
    int64_t low = entry.offset, high = low + mark->extent, delta = 0;
    if (lower) {
      delta = std::max(*lower, low) - low;
      low = std::max(*lower, low);
    }
    if (upper) high = std::min(*upper, high);
    if (delta != 0) mark->sum = MakeSum(mark->sum->args, mark->sum->base - delta);
    mark->extent = high - low;
    entry.offset = low;
    constraints_.push_back(entry.flattened);
  }

  // TVM's CheckConstraints: two bounded groups of splits are nested or disjoint.
  bool ConstraintsNestOrDisjoint() const {
    for (size_t i = 0; i < constraints_.size(); ++i) {
      for (size_t j = i + 1; j < constraints_.size(); ++j) {
        int state = 0;  // 1: inside so far, -1: disjoint so far
        for (const IterSplit& a : constraints_[i]) {
          bool found = std::any_of(constraints_[j].begin(), constraints_[j].end(),
                                   [&](const IterSplit& b) { return SameSplit(a, b); });
          if (state == 0) {
            state = found ? 1 : -1;
          } else if ((state == -1 && found) || (state == 1 && !found)) {
            return false;
          }
        }
      }
    }
    return true;
  }

  // An index as a sum of splits, not fused.
  IterSum RewriteFlat(const Expr& e) { return Visit(e); }

  const std::vector<IterMark>& input_marks() const { return input_marks_; }

  // TVM's two-pass padding: the first pass records, for every mark that a division does not
  // divide evenly, the padding every division of it needs; the second pass pads it once.
  void set_collect_padding(bool collect) { collect_padding_ = collect; }
  bool requires_padding() const { return requires_padding_; }

  // A top-level index: sums of several splits are fused into one mark.
  IterSum Rewrite(const Expr& e) {
    IterSum sum = Visit(e);
    if (options_.tvm_fuse) return sum->args.empty() ? sum : FuseTVM(sum);
    if (sum->args.size() <= 1) return sum;
    return Fuse(sum);
  }

 private:
  struct VarEntry {
    IterMark mark;
    int64_t min;
  };

  IterSum Visit(const Expr& e) {
    if (auto c = AsConstInt(e)) return MakeSum({}, *c);
    if (options_.free_terms && !UsesVar(e, [&](const VarNode* v) { return vars_.count(v) != 0; })) {
      IterSum free = MakeSum({}, 0);
      free->free_base = e;
      return free;
    }
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = vars_.find(v);
      if (it == vars_.end()) Unsupported("the variable " + v->name + " is not an iterator");
      if (options_.simplify_trivial && it->second.mark->extent == 1)
        return MakeSum({}, it->second.min);
      if (it->second.min != 0 && options_.tvm_fuse)
        return MakeSum({MakeSplit(it->second.mark, 1, it->second.mark->extent, 1)}, it->second.min);
      if (it->second.min != 0) Unsupported("the iterator " + v->name + " does not start at 0");
      return MakeSum({MakeSplit(it->second.mark, 1, it->second.mark->extent, 1)}, 0);
    }
    if (auto* add = AsPtr<AddNode>(e)) return Combine(Visit(add->a), Visit(add->b), 1);
    if (auto* sub = AsPtr<SubNode>(e)) return Combine(Visit(sub->a), Visit(sub->b), -1);
    if (auto* mul = AsPtr<MulNode>(e)) {
      IterSum a = Visit(mul->a), b = Visit(mul->b);
      if (!a->args.empty() && !b->args.empty()) Unsupported("a product of two iterators");
      if (a->args.empty()) std::swap(a, b);
      if (b->free_base) {
        if (!a->args.empty()) Unsupported("an iterator scaled by a non-constant factor");
        IterSum free = MakeSum({}, 0);
        free->free_base = MulE(FullBase(a, e->dtype), FullBase(b, e->dtype));
        return free;
      }
      return Scale(a, b->base);
    }
    if (auto* div = AsPtr<FloorDivNode>(e)) {
      auto c = AsConstInt(div->b);
      if (!c || *c <= 0) Unsupported("a division by a non-constant or non-positive divisor");
      return FloorDivConst(Visit(div->a), *c);
    }
    if (auto* mod = AsPtr<FloorModNode>(e)) {
      auto c = AsConstInt(mod->b);
      if (!c || *c <= 0) Unsupported("a modulo by a non-constant or non-positive divisor");
      return FloorModConst(Visit(mod->a), *c);
    }
    Unsupported("the expression is not affine in the iterators");
  }

  static IterSum Combine(const IterSum& a, const IterSum& b, int sign) {
    IterSum out = MakeSum({}, sign > 0 ? a->base + b->base : a->base - b->base);
    out->free_base = a->free_base;
    if (b->free_base) {
      Expr term = sign > 0 ? b->free_base : Times(b->free_base, -1);
      out->free_base = out->free_base ? AddE(out->free_base, term) : term;
    }
    for (const IterSplit& s : a->args) out->args.push_back(CopySplit(s));
    for (const IterSplit& s : b->args) {
      int64_t scale = sign > 0 ? s->scale : -s->scale;
      bool merged = false;
      for (IterSplit& l : out->args) {
        if (l->source == s->source && l->lower_factor == s->lower_factor &&
            l->extent == s->extent) {
          l->scale += scale;
          merged = true;
          break;
        }
      }
      if (!merged) out->args.push_back(MakeSplit(s->source, s->lower_factor, s->extent, scale));
    }
    out->args.erase(std::remove_if(out->args.begin(), out->args.end(),
                                   [](const IterSplit& s) { return s->scale == 0; }),
                    out->args.end());
    return out;
  }

  static IterSum Scale(const IterSum& a, int64_t c) {
    if (c == 0) return MakeSum({}, 0);
    IterSum out = MakeSum({}, a->base * c);
    if (a->free_base) out->free_base = Times(a->free_base, c);
    for (const IterSplit& s : a->args)
      out->args.push_back(MakeSplit(s->source, s->lower_factor, s->extent, s->scale * c));
    return out;
  }

  // The sum as one split (fusing several) plus its base.
  IterSum Preprocess(const IterSum& sum) {
    if (sum->args.size() <= 1) return sum;
    return Fuse(sum);
  }

  // Fuses the splits of `sum` into one mark when their scales are a mixed radix of their
  // extents (innermost scale times the product of the inner extents).
  IterSum Fuse(const IterSum& sum) {
    if (options_.tvm_fuse) return FuseTVM(sum);
    std::vector<bool> used(sum->args.size(), false);
    // The innermost split: the smallest scale (a non-unit extent first).
    int base_index = -1;
    for (size_t i = 0; i < sum->args.size(); ++i) {
      const IterSplit& s = sum->args[i];
      if (s->scale <= 0) Unsupported("a negative scale");
      if (base_index < 0) {
        base_index = static_cast<int>(i);
        continue;
      }
      const IterSplit& b = sum->args[base_index];
      if (s->scale < b->scale || (s->scale == b->scale && b->extent == 1 && s->extent != 1))
        base_index = static_cast<int>(i);
    }
    int64_t base_scale = sum->args[base_index]->scale;
    std::vector<IterSplit> flattened;  // innermost first
    int64_t expected = base_scale;
    for (size_t n = 0; n < sum->args.size(); ++n) {
      int pos = -1;
      if (n == 0) {
        pos = base_index;
      } else {
        // An exact scale, preferring a split of non-unit extent.
        for (size_t i = 0; i < sum->args.size(); ++i) {
          if (used[i] || sum->args[i]->scale != expected) continue;
          if (pos < 0 || (sum->args[pos]->extent == 1 && sum->args[i]->extent != 1))
            pos = static_cast<int>(i);
        }
      }
      if (pos < 0) Unsupported("the iterators cannot be fused (their scales do not match)");
      used[pos] = true;
      const IterSplit& s = sum->args[pos];
      if (s->scale % base_scale != 0) Unsupported("the iterators cannot be fused");
      flattened.push_back(MakeSplit(s->source, s->lower_factor, s->extent, s->scale / base_scale));
      if (s->extent < 0 && n + 1 != sum->args.size())
        Unsupported("an iterator of symbolic extent is fused below another");
      expected = s->extent < 0 ? -1 : s->extent * s->scale;
    }
    int64_t extent = expected < 0 ? -1 : expected / base_scale;
    if (options_.fold_tiles) {
      if (IterSplit whole = FoldTiles(flattened, base_scale)) {
        IterSum out = MakeSum({whole}, sum->base);
        out->free_base = sum->free_base;
        return out;
      }
    }
    std::vector<std::tuple<const IterMarkNode*, int64_t, int64_t, int64_t>> key;
    for (const IterSplit& s : flattened)
      key.emplace_back(s->source.get(), s->lower_factor, s->extent, s->scale);
    IterMark mark;
    auto it = fused_.find(key);
    if (it != fused_.end()) {
      mark = it->second;
    } else {
      mark = std::make_shared<IterMarkNode>();
      mark->sum = MakeSum({flattened.rbegin(), flattened.rend()}, 0);
      mark->extent = extent;
      fused_[key] = mark;
    }
    IterSum out = MakeSum({MakeSplit(mark, 1, extent, base_scale)}, sum->base);
    out->free_base = sum->free_base;
    return out;
  }

  // TVM's choice among splits of the smallest scale, searched from the last: a unit extent
  // first, else the last one.
  static int FindBase(const std::vector<IterSplit>& args, const std::vector<bool>& skip,
                      const IterMarkNode* source, int rbegin) {
    int base = -1;
    for (int i = rbegin; i >= 0; --i) {
      if (skip[i] || (source && args[i]->source.get() != source)) continue;
      if (base < 0 || args[i]->scale < args[base]->scale ||
          (args[i]->scale == args[base]->scale && args[i]->extent == 1 && args[base]->extent != 1))
        base = i;
    }
    return base;
  }

  // The split of scale `scale`, searched from the last: a unit extent at once, else the last
  // one, unless a unit extent may still come before `first_unit`.
  static int FindExactScale(const std::vector<IterSplit>& args, const std::vector<bool>& skip,
                            int64_t scale, const IterMarkNode* source, int rbegin, int first_unit) {
    int matched = -1;
    for (int j = rbegin; j >= 0; --j) {
      if (skip[j] || (source && args[j]->source.get() != source)) continue;
      if (args[j]->scale != scale) continue;
      if (args[j]->extent == 1) return j;
      if (matched < 0) matched = j;
      if (j <= first_unit) return matched;
    }
    return matched;
  }

  static int FirstUnitExtent(const std::vector<IterSplit>& args) {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i]->extent == 1) return static_cast<int>(i);
    return static_cast<int>(args.size());
  }

  // Adjacent splits of one mark become one: x // 4 % 8 * 4 + x % 4 is x % 32.
  static std::vector<IterSplit> CombineSameSource(const std::vector<IterSplit>& args) {
    std::unordered_map<const IterMarkNode*, int> hits;
    bool repeated = false;
    for (const IterSplit& a : args) repeated |= ++hits[a->source.get()] > 1;
    if (!repeated) return args;
    std::vector<bool> visited(args.size(), false);
    std::vector<IterSplit> reversed;
    int first_unit = FirstUnitExtent(args);
    for (int rend = static_cast<int>(args.size()) - 1; rend >= 0;) {
      if (visited[rend]) {
        --rend;
        continue;
      }
      if (hits[args[rend]->source.get()] == 1) {
        reversed.push_back(args[rend]);
        visited[rend] = true;
        --rend;
        continue;
      }
      const IterMarkNode* source = args[rend]->source.get();
      int index = FindBase(args, visited, source, rend);
      visited[index] = true;
      IterSplit rhs = CopySplit(args[index]);
      while (true) {
        int j = FindExactScale(args, visited, rhs->extent * rhs->scale, source, rend, first_unit);
        if (j < 0 || args[j]->lower_factor != rhs->lower_factor * rhs->extent) break;
        visited[j] = true;
        rhs->extent *= args[j]->extent;
      }
      reversed.push_back(rhs);
    }
    return {reversed.rbegin(), reversed.rend()};
  }

  using SplitKey = std::vector<std::tuple<const IterMarkNode*, int64_t, int64_t, int64_t>>;
  static SplitKey KeyOf(const std::vector<IterSplit>& splits) {
    SplitKey key;
    for (const IterSplit& s : splits)
      key.emplace_back(s->source.get(), s->lower_factor, s->extent, s->scale);
    return key;
  }
  static bool SameSplit(const IterSplit& a, const IterSplit& b) {  // scales aside
    return a->source == b->source && a->lower_factor == b->lower_factor && a->extent == b->extent;
  }

  // TVM's fuse of a sum into one mark (TryFuseIters). A group of splits that a predicate bounds
  // (a constraint) is taken whole, as its bounded mark.
  IterSum FuseTVM(const IterSum& sum, bool allow_early_skip = true) {
    auto finish = [&](std::vector<IterSplit> args, int64_t extra) {
      IterSum out = MakeSum(std::move(args), sum->base + extra);
      out->free_base = sum->free_base;
      return out;
    };
    std::vector<IterSplit> args = CombineSameSource(sum->args);
    for (const IterSplit& a : args) {
      if (a->scale == 0) Unsupported("a zero scale");
      if (a->extent < 0) Unsupported("a fuse of an iterator of symbolic extent");
    }
    bool combined = args.size() != sum->args.size();
    if (args.empty() || (combined && args.size() == 1 && allow_early_skip)) return finish(args, 0);
    std::vector<bool> visited(args.size(), false);
    int last = static_cast<int>(args.size()) - 1;
    int base = FindBase(args, visited, nullptr, last);
    int64_t base_scale = args[base]->scale;
    int64_t expected = base_scale, tail = 0, extra = 0;
    int first_unit = FirstUnitExtent(args);
    std::vector<IterSplit> flattened, grouped;  // innermost first
    for (size_t n = 0; n < args.size();) {
      int64_t matched_scale = expected;
      bool exact = true;
      int pos = n == 0 ? base : FindExactScale(args, visited, expected, nullptr, last, first_unit);
      if (pos < 0 && options_.allow_overlap && base_scale == 1) {
        // the largest scale below the expected one: the iterators overlap
        exact = false;
        for (int j = last; j >= 0; --j) {
          if (visited[j] || args[j]->scale > expected) continue;
          if (pos < 0 || args[j]->scale > matched_scale) {
            pos = j;
            matched_scale = args[j]->scale;
          }
        }
      }
      if (pos < 0) Unsupported("the iterators cannot be fused (their scales do not match)");
      if (!exact) tail += expected - matched_scale;
      // the largest constraint whose innermost split this is
      const std::vector<IterSplit>* constraint = nullptr;
      for (const std::vector<IterSplit>& c : constraints_) {
        if (SameSplit(args[pos], c.back()) && (!constraint || constraint->size() < c.size()))
          constraint = &c;
      }
      if (constraint) {
        for (auto it = constraint->rbegin(); it != constraint->rend(); ++it) {
          size_t k = 0;
          while (k < args.size() && (visited[k] || !SameSplit(args[k], *it) ||
                                     args[k]->scale != (*it)->scale * matched_scale))
            ++k;
          if (k == args.size()) Unsupported("the iterators do not match a constraint on them");
          visited[k] = true;
          flattened.push_back(args[k]);
        }
        const FusedMark& group = tvm_fused_.at(KeyOf(*constraint));
        if (matched_scale % base_scale != 0) Unsupported("the iterators cannot be fused");
        grouped.push_back(MakeSplit(group.mark, 1, group.mark->extent, matched_scale / base_scale));
        extra += group.offset * matched_scale;
        expected = group.mark->extent * matched_scale;
        n += constraint->size();
        continue;
      }
      visited[pos] = true;
      if (args[pos]->scale % base_scale != 0) Unsupported("the iterators cannot be fused");
      IterSplit arg = CopySplit(args[pos]);
      arg->scale /= base_scale;
      flattened.push_back(arg);
      grouped.push_back(arg);
      expected = args[pos]->extent * matched_scale;
      ++n;
    }
    SplitKey key = KeyOf({flattened.rbegin(), flattened.rend()});
    auto found = tvm_fused_.find(key);
    if (found != tvm_fused_.end()) {
      if (extra != found->second.offset * base_scale)
        Unsupported("the iterators are bounded differently than a constraint says");
      const IterMark& mark = found->second.mark;
      return finish({MakeSplit(mark, 1, mark->extent, base_scale)}, extra);
    }
    auto mark = std::make_shared<IterMarkNode>();
    mark->sum = MakeSum({grouped.rbegin(), grouped.rend()}, 0);
    mark->extent = expected / base_scale + tail;
    tvm_fused_[key] = {mark, extra, {flattened.rbegin(), flattened.rend()}};
    mark_keys_[mark.get()] = key;
    return finish({MakeSplit(mark, 1, mark->extent, base_scale)}, extra);
  }

  // (x // 4 % 2) * 4 + x % 4, innermost first, is x % 8: one split of x (TVM's fused form).
  static IterSplit FoldTiles(const std::vector<IterSplit>& flattened, int64_t base_scale) {
    const IterMark& source = flattened[0]->source;
    int64_t next = 1;
    for (const IterSplit& s : flattened) {
      if (s->source != source || s->lower_factor != next || s->scale != next || s->extent < 0)
        return nullptr;
      next *= s->extent;
    }
    if (source->extent < 0 || source->extent % next != 0) return nullptr;
    return MakeSplit(source, 1, next, base_scale);
  }

  // `split` over [0, ceil(extent / c) * c): a split of a whole mark may be padded.
  IterSplit Padded(const IterSplit& split, int64_t c) {
    if (split->extent < 0 || split->extent % c == 0) return split;
    if (split->lower_factor != 1 || split->extent != split->source->extent) {
      Unsupported("a division of a partial iterator that does not divide evenly");
    }
    int64_t padded = (split->extent + c - 1) / c * c;
    auto key = std::make_pair(split->source.get(), padded);
    IterMark& mark = padded_[key];
    if (!mark) {
      mark = std::make_shared<IterMarkNode>(*split->source);
      mark->extent = padded;
      mark->unpadded_extent = split->source->extent;
    }
    return MakeSplit(mark, 1, padded, split->scale);
  }

  IterSum FloorDivConst(const IterSum& dividend, int64_t c) {
    IterSum pre = Preprocess(dividend);
    if (pre->free_base && options_.tvm_padding && pre->args.size() == 1 && c != 1) {
      auto [split, left] = PadFreeOffset(pre, c);
      IterSum out = MakeSum({MakeSplit(split->source, c, split->extent / c, 1)}, 0);
      Analyzer ana;
      out->free_base = ana.Simplify(Div(SubE(FullBase(pre, left->dtype), left), c));
      return out;
    }
    if (pre->free_base) Unsupported("a division of iterators plus terms free of them");
    if (pre->args.empty()) return MakeSum({}, FloorDiv(pre->base, c));
    IterSplit s = CopySplit(pre->args[0]);
    int64_t base = pre->base;
    if (c == 1) return pre;
    if (s->scale != 1) {
      if (s->scale % c == 0 && base == 0) {
        s->scale /= c;
        return MakeSum({s}, 0);
      } else if (options_.tvm_padding && s->scale % c == 0 && base % c == 0) {
        s->scale /= c;
        return MakeSum({s}, base / c);
      } else if (c % s->scale == 0 && (base == 0 || base % s->scale == 0)) {
        base /= s->scale;
        c /= s->scale;
        s->scale = 1;
      } else {
        Unsupported("the scale of the dividend does not divide the divisor");
      }
    }
    if (options_.tvm_padding) {
      auto [padded, left] = PadDividend(s, base, c);
      IterSplit split;
      if (padded->extent % c == 0) {
        split = MakeSplit(padded->source, padded->lower_factor * c, padded->extent / c, 1);
      } else if (padded->lower_factor == 1 && padded->extent == padded->source->extent) {
        split = MakeSplit(padded->source, c, CeilDiv(padded->extent, c), 1);
      } else {
        auto mark = std::make_shared<IterMarkNode>();
        mark->sum = MakeSum({padded}, 0);
        mark->extent = padded->extent;
        split = MakeSplit(mark, c, CeilDiv(padded->extent, c), 1);
      }
      return MakeSum({split}, FloorDiv(base - left, c));
    }
    if (base % c != 0) Unsupported("the offset of the dividend is not a multiple of the divisor");
    s = Padded(s, c);
    int64_t extent = s->extent < 0 ? -1 : s->extent / c;
    return MakeSum({MakeSplit(s->source, s->lower_factor * c, extent, s->scale)}, base / c);
  }

  IterSum FloorModConst(const IterSum& dividend, int64_t c) {
    IterSum pre = Preprocess(dividend);
    if (pre->free_base && options_.tvm_padding && pre->args.size() == 1 && c != 1) {
      IterSplit split = PadFreeOffset(pre, c).first;
      return MakeSum({MakeSplit(split->source, 1, c, 1)}, 0);
    }
    if (pre->free_base) Unsupported("a modulo of iterators plus terms free of them");
    if (pre->args.empty()) return MakeSum({}, FloorMod(pre->base, c));
    IterSplit s = CopySplit(pre->args[0]);
    int64_t base = pre->base;
    if (c == 1) return MakeSum({}, 0);
    if (s->scale != 1) {
      if (s->scale % c == 0 && base % c == 0) {
        return MakeSum({}, 0);
      } else if (c % s->scale == 0 && (base == 0 || base % s->scale == 0)) {
        base /= s->scale;
        c /= s->scale;
      } else {
        Unsupported("the scale of the dividend does not divide the modulus");
      }
    }
    int64_t scale = s->scale;
    s->scale = 1;
    if (options_.tvm_padding) {
      IterSplit padded = PadDividend(s, base, c).first;
      return MakeSum({MakeSplit(padded->source, padded->lower_factor, c, scale)}, 0);
    }
    if (base % c != 0) Unsupported("the offset of the dividend is not a multiple of the modulus");
    s = Padded(s, c);
    return MakeSum({MakeSplit(s->source, s->lower_factor, c, scale)}, 0);
  }

  static int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

  // (split + offset) divided by c, where the offset has terms free of the iterators (TVM's
  // symbolic left pad floormod(offset, c)): the split over its mark padded on the left by that
  // expression, and the pad. Only a whole mark of unit scale, divided by one c, and only when
  // every value the pad can take (by the offset's modular set) pads the mark to the same
  // constant extent: (x*360 + y) // 16, y in [0, 360), pads by (x % 2) * 8 to 368.
  std::pair<IterSplit, Expr> PadFreeOffset(const IterSum& pre, int64_t c) {
    const IterSplit& s = pre->args[0];
    if (s->scale != 1 || s->lower_factor != 1 || s->extent < 0 || s->extent != s->source->extent)
      Unsupported("a division of part of an iterator plus terms free of it");
    const IterMarkNode* key = s->source.get();
    if (pad_info_.count(key))
      Unsupported("an iterator divided both with and without terms free of it");
    Expr offset = FullBase(pre, pre->free_base->dtype);
    Analyzer ana;
    ModularSet residues = ana.GetModularSet(offset);
    int64_t step = residues.coeff == 0 ? c : std::gcd(residues.coeff, c);
    int64_t extent = -1;
    for (int64_t left = FloorMod(residues.base, step); left < c; left += step) {
      int64_t padded = CeilDiv(left + s->extent, c) * c;
      if (extent >= 0 && padded != extent)
        Unsupported("terms free of an iterator pad it to an extent that is not constant");
      extent = padded;
    }
    Expr left = ana.Simplify(Mod(offset, c));
    auto it = free_pads_.find(key);
    if (it == free_pads_.end()) {
      auto mark = std::make_shared<IterMarkNode>();
      mark->sum = MakeSum({MakeSplit(s->source, 1, s->extent, 1)}, 0);
      mark->sum->free_base = left;
      mark->extent = extent;
      mark->unpadded_extent = s->extent;
      it = free_pads_.emplace(key, FreePad{mark, c, left}).first;
    } else if (it->second.divisor != c || !StructuralEqual(it->second.left, left)) {
      Unsupported("an iterator divided with different terms free of it");
    }
    return {MakeSplit(it->second.padded, 1, extent, 1), left};
  }
  struct FreePad {
    IterMark padded;
    int64_t divisor;
    Expr left;
  };
  std::unordered_map<const IterMarkNode*, FreePad> free_pads_;

  // (split + base) divided by c: the split over a mark padded so that c divides it, and the
  // left pad that padding put below this split (TVM's PadDividendToDivisor).
  std::pair<IterSplit, int64_t> PadDividend(const IterSplit& s, int64_t base, int64_t c) {
    if (s->extent < 0 || s->source->extent < 0) {
      if (FloorMod(base, c) != 0) Unsupported("an offset division of a symbolic extent");
      return {s, 0};
    }
    int64_t left = FloorMod(base, c);
    int64_t right = FloorMod(-(left + s->extent), c);
    const IterMarkNode* mark = s->source.get();
    if (free_pads_.count(mark))
      Unsupported("an iterator divided both with and without terms free of it");
    if (collect_padding_) {
      PadInfo& info = pad_info_[mark];
      info.factor = std::lcm(info.factor, c * s->lower_factor);
      if (left == 0 && right == 0) return {s, 0};
      requires_padding_ = true;
      info.left_pad = std::max(info.left_pad, left * s->lower_factor);
      IterSplit out = CopySplit(s);
      out->extent = left + s->extent + right;
      return {out, left};
    }
    auto it = pad_info_.find(mark);
    if (it == pad_info_.end()) return {s, left};
    PadInfo& info = it->second;
    if (info.left_pad == 0 && mark->extent % info.factor == 0) return {s, left};
    if (info.factor % s->lower_factor != 0 || info.factor % c != 0)
      Unsupported("the padding of an iterator does not suit all of its divisions");
    if (!info.padded) {
      if (info.left_pad % s->lower_factor != 0)
        Unsupported("the left padding of an iterator does not suit one of its splits");
      left = info.left_pad / s->lower_factor;
      int64_t edge = mark->extent + info.left_pad;
      auto padded = std::make_shared<IterMarkNode>();
      padded->sum = MakeSum({MakeSplit(s->source, 1, mark->extent, 1)}, info.left_pad);
      padded->extent = edge + FloorMod(-edge, info.factor);
      padded->unpadded_extent = mark->extent;
      info.padded = padded;
    }
    IterSplit out = CopySplit(s);
    out->source = info.padded;
    out->extent = info.padded->extent / s->lower_factor;
    return {out, left};
  }

  struct FusedMark {
    IterMark mark;
    int64_t offset = 0;                // the fused sum is mark + offset
    std::vector<IterSplit> flattened;  // outermost first
  };
  std::map<SplitKey, FusedMark> tvm_fused_;
  std::unordered_map<const IterMarkNode*, SplitKey> mark_keys_;
  std::vector<std::vector<IterSplit>> constraints_;  // flattened, outermost first

  struct PadInfo {
    int64_t factor = 1;    // the least common multiple of the divisors (times lower factors)
    int64_t left_pad = 0;  // the largest left pad, in units of the mark
    IterMark padded;
  };

  RewriteOptions options_;
  bool collect_padding_ = false;
  bool requires_padding_ = false;
  std::unordered_map<const IterMarkNode*, PadInfo> pad_info_;
  std::unordered_map<const VarNode*, VarEntry> vars_;
  std::vector<IterMark> input_marks_;
  std::map<std::vector<std::tuple<const IterMarkNode*, int64_t, int64_t, int64_t>>, IterMark>
      fused_;
  std::map<std::pair<const IterMarkNode*, int64_t>, IterMark> padded_;
};

}  // namespace

std::optional<std::vector<IterSum>> DetectIterMap(const std::vector<Expr>& indices,
                                                  const std::vector<IterDomain>& iters,
                                                  std::string* error) {
  IterMapRewriter rewriter(iters);
  std::vector<IterSum> result;
  try {
    for (const Expr& index : indices) result.push_back(rewriter.Rewrite(index));
  } catch (const RewriteFailure& f) {
    if (error) *error = f.reason;
    return std::nullopt;
  }
  return result;
}

bool IsBijective(const std::vector<IterSum>& map, const std::vector<IterDomain>& iters) {
  // The splits taken of every mark, from the indices and, for fused marks, from their sums.
  std::unordered_map<const IterMarkNode*, std::vector<const IterSplitNode*>> uses;
  std::vector<const IterMarkNode*> order;
  auto use = [&](const IterSplit& s) {
    if (!uses.count(s->source.get())) order.push_back(s->source.get());
    uses[s->source.get()].push_back(s.get());
  };
  for (const IterSum& sum : map) {
    if (sum->args.size() > 1) return false;
    for (const IterSplit& s : sum->args) use(s);
  }
  // Every fused mark passes its sum's splits on to their sources.
  for (size_t k = 0; k < order.size(); ++k) {
    const IterMarkNode* mark = order[k];
    if (!mark->sum) continue;
    for (const IterSplit& s : mark->sum->args) {
      if (s->lower_factor != 1 || s->extent != s->source->extent) return false;
      use(s);
    }
  }
  std::unordered_set<const VarNode*> covered;
  for (const IterMarkNode* mark : order) {
    std::vector<const IterSplitNode*> splits = uses[mark];
    std::sort(splits.begin(), splits.end(), [](const IterSplitNode* a, const IterSplitNode* b) {
      return a->lower_factor < b->lower_factor;
    });
    int64_t expected = 1;
    for (const IterSplitNode* s : splits) {
      if (s->lower_factor != expected || s->extent < 0) return false;
      expected *= s->extent;
    }
    if (mark->extent < 0 || expected != mark->extent) return false;
    if (mark->var) {
      auto it = std::find_if(iters.begin(), iters.end(),
                             [&](const IterDomain& d) { return d.var.get() == mark->var.get(); });
      if (it == iters.end() || it->extent != mark->extent) return false;  // padded
      if (!covered.insert(mark->var.get()).second) return false;
    }
  }
  for (const IterDomain& d : iters) {
    if (d.extent != 1 && !covered.count(d.var.get())) return false;
  }
  return true;
}

std::optional<std::vector<std::pair<Var, Expr>>> InverseAffineIterMap(
    const std::vector<IterSum>& map, const std::vector<Expr>& outputs) {
  if (map.size() != outputs.size()) return std::nullopt;
  // Sums and splits in reverse post-order: every node before the nodes it reads from.
  struct NodeRef {
    const IterSumNode* sum = nullptr;
    const IterSplitNode* split = nullptr;
  };
  std::vector<NodeRef> order;
  std::unordered_set<const void*> visited;
  std::function<void(const IterSumNode*)> visit_sum;
  std::function<void(const IterSplitNode*)> visit_split = [&](const IterSplitNode* s) {
    if (!visited.insert(s).second) return;
    if (s->source->sum) visit_sum(s->source->sum.get());
    order.push_back({nullptr, s});
  };
  visit_sum = [&](const IterSumNode* sum) {
    if (!visited.insert(sum).second) return;
    for (const IterSplit& s : sum->args) visit_split(s.get());
    order.push_back({sum, nullptr});
  };
  for (const IterSum& sum : map) visit_sum(sum.get());
  std::reverse(order.begin(), order.end());

  std::unordered_map<const void*, Expr> backprop;
  for (size_t i = 0; i < map.size(); ++i) backprop[map[i].get()] = outputs[i];
  auto acc = [&](const void* node, const Expr& like) -> Expr {
    auto it = backprop.find(node);
    return it == backprop.end() ? Const(like, 0) : it->second;
  };
  std::vector<std::pair<Var, Expr>> inverse;
  for (const NodeRef& node : order) {
    if (node.sum) {
      const IterSumNode* sum = node.sum;
      auto bit = backprop.find(sum);
      if (bit == backprop.end()) continue;  // not reached from an output
      Expr input = Minus(bit->second, sum->base);
      if (sum->args.size() == 1) {
        const IterSplit& s = sum->args[0];
        if (s->scale != 1 && s->scale != -1) return std::nullopt;
        backprop[s.get()] = Times(Plus(acc(s.get(), input), input), s->scale);
        continue;
      }
      // A fuse pattern: scales from the innermost are the products of the inner extents.
      int64_t expected = sum->args.empty() ? 1 : sum->args.back()->scale;
      for (size_t i = sum->args.size(); i > 0; --i) {
        if (sum->args[i - 1]->scale != expected) return std::nullopt;
        expected *= sum->args[i - 1]->extent;
      }
      for (size_t i = sum->args.size(); i > 0; --i) {
        const IterSplit& s = sum->args[i - 1];
        Expr value = Div(input, s->scale);
        if (i > 1) value = Mod(value, s->extent);
        backprop[s.get()] = Plus(acc(s.get(), value), value);
      }
    } else {
      const IterSplitNode* s = node.split;
      auto bit = backprop.find(s);
      if (bit == backprop.end()) continue;
      Expr input = Times(bit->second, s->lower_factor);
      if (s->source->sum) {
        const IterSumNode* src = s->source->sum.get();
        backprop[src] = Plus(acc(src, input), input);
      } else {
        const Var& var = s->source->var;
        if (!var) return std::nullopt;  // a mark over another expression
        auto it = std::find_if(inverse.begin(), inverse.end(),
                               [&](const auto& p) { return p.first.get() == var.get(); });
        if (it != inverse.end()) {
          it->second = Plus(it->second, input);
        } else {
          inverse.emplace_back(var, input);
        }
      }
    }
  }
  return inverse;
}

namespace {

std::string MarkName(const IterMarkNode* mark) {
  if (mark->var) return "the iterator " + mark->var->name;
  Expr value = mark->sum ? IterSumToExpr(mark->sum, DataType::Int(32)) : mark->expr;
  return "the iterator " + AsScript(value);
}

// TVM's surjective/bijective check of the splits taken of one mark (lower factors as a chain
// from 1; surjective maps may skip a factor when the next one is a multiple of it).
bool CheckSplits(const IterMarkNode* mark, const std::vector<const IterSplitNode*>& splits,
                 IterMapLevel level, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = MarkName(mark) + ": " + why;
    return false;
  };
  if (mark->extent < 0) return fail("its extent is symbolic, which the check cannot reason about");
  std::vector<bool> used(splits.size(), false);
  int64_t expected = 1;
  for (size_t n = 0; n < splits.size(); ++n) {
    size_t j = 0;
    while (j < splits.size() && (used[j] || splits[j]->lower_factor != expected)) ++j;
    if (j == splits.size()) {
      if (level == IterMapLevel::kBijective) return fail("its splits overlap or leave a gap");
      for (size_t i = 0; i < splits.size(); ++i) {
        if (used[i]) continue;
        if (splits[i]->lower_factor % expected != 0) return fail("its splits overlap");
        if (j == splits.size() || splits[j]->lower_factor % splits[i]->lower_factor == 0) j = i;
      }
      if (j == splits.size()) return fail("its splits overlap");
    }
    if (splits[j]->extent < 0) return fail("a split of symbolic extent");
    used[j] = true;
    expected = splits[j]->lower_factor * splits[j]->extent;
  }
  bool padded = mark->unpadded_extent > 0;
  bool full = expected == mark->extent;
  bool divides = full || mark->extent % expected == 0;
  if (level == IterMapLevel::kBijective) {
    if (padded) return fail("a bijective map cannot pad an iterator");
    if (!full) return fail("its splits do not cover its whole extent");
  } else if (!padded) {
    if (!divides) return fail("its splits do not divide its extent");
  } else if (full) {
    if (splits.size() != 1) return fail("several splits of a padded iterator depend on each other");
    if (splits[0]->extent == expected && mark->unpadded_extent < expected)
      return fail("a split as large as the padded extent does not reach every value");
  } else if (!divides || mark->unpadded_extent < expected) {
    return fail("its splits of the padded extent do not reach every value");
  }
  return true;
}

bool CheckMapping(const std::vector<IterSum>& map, const std::vector<IterMark>& inputs,
                  IterMapLevel level, std::string* error) {
  std::vector<const IterMarkNode*> order;
  std::unordered_map<const IterMarkNode*, std::vector<const IterSplitNode*>> splits;
  std::function<void(const IterSplit&)> collect = [&](const IterSplit& s) {
    const IterMarkNode* mark = s->source.get();
    if (!splits.count(mark)) {
      splits[mark];
      order.push_back(mark);
      if (mark->sum)
        for (const IterSplit& inner : mark->sum->args) collect(inner);
    }
    splits[mark].push_back(s.get());
  };
  for (const IterSum& sum : map)
    for (const IterSplit& s : sum->args) collect(s);
  for (const IterMarkNode* mark : order)
    if (!CheckSplits(mark, splits[mark], level, error)) return false;
  if (level == IterMapLevel::kBijective) {
    for (const IterMark& mark : inputs) {
      if (mark->extent != 1 && !splits.count(mark.get())) {
        if (error) *error = MarkName(mark.get()) + " is not used, so the map is not bijective";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<IterSum>> DetectIterMapChecked(const std::vector<Expr>& indices,
                                                         const std::vector<IterDomain>& input_iters,
                                                         IterMapLevel level, bool simplify_trivial,
                                                         std::string* error,
                                                         const Expr& predicate) {
  std::vector<IterDomain> iters = input_iters;
  std::vector<IterConstraint> constraints;
  if (predicate && !ParsePredicate(predicate, &iters, &constraints, error)) return std::nullopt;
  RewriteOptions options;
  options.free_terms = true;
  options.simplify_trivial = simplify_trivial;
  options.fold_tiles = true;
  options.tvm_padding = true;
  options.tvm_fuse = true;
  options.allow_overlap = level != IterMapLevel::kBijective;
  IterMapRewriter rewriter(iters, options);
  std::vector<IterSum> result;
  try {
    for (const IterConstraint& c : constraints) rewriter.AddConstraint(c.iter, c.lower, c.upper);
    if (!rewriter.ConstraintsNestOrDisjoint())
      Unsupported("two bounded sums of the predicate overlap without one holding the other");
    if (level != IterMapLevel::kBijective) {
      rewriter.set_collect_padding(true);
      for (const Expr& index : indices) result.push_back(rewriter.Rewrite(index));
      rewriter.set_collect_padding(false);
    }
    if (level == IterMapLevel::kBijective || rewriter.requires_padding()) {
      result.clear();
      for (const Expr& index : indices) result.push_back(rewriter.Rewrite(index));
    }
  } catch (const RewriteFailure& f) {
    if (error) *error = f.reason;
    return std::nullopt;
  }
  if (level != IterMapLevel::kNoCheck &&
      !CheckMapping(result, rewriter.input_marks(), level, error))
    return std::nullopt;
  return result;
}

std::optional<IterSum> NormalizeToIterSum(const Expr& index, const std::vector<IterDomain>& iters,
                                          std::string* error) {
  RewriteOptions options;
  options.free_terms = true;
  IterMapRewriter rewriter(iters, options);
  try {
    IterSum sum = rewriter.RewriteFlat(index);
    std::stable_sort(sum->args.begin(), sum->args.end(),
                     [](const IterSplit& a, const IterSplit& b) { return a->scale > b->scale; });
    return sum;
  } catch (const RewriteFailure& f) {
    if (error) *error = f.reason;
    return std::nullopt;
  }
}

}  // namespace arith
}  // namespace tessera
