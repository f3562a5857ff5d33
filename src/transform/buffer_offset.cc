// Buffer.offset_of and Buffer.get_flattened_buffer: the physical offsets of an element and the
// buffer seen as its physical axes.
#include "tessera/transform/buffer_offset.h"

#include <algorithm>
#include <utility>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/const_fold.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace transform {
namespace {

// a + b and a * b with TVM's folding (constants, x + 0, x * 1), in the wider type.
Expr Plus(const Expr& a, const Expr& b) {
  return a->dtype == b->dtype ? arith::FoldBinary(NodeKind::kAdd, a, b) : AddE(a, b);
}
Expr Times(const Expr& a, const Expr& b) {
  return a->dtype == b->dtype ? arith::FoldBinary(NodeKind::kMul, a, b) : MulE(a, b);
}

// The additive terms of `e`, products of sums distributed: (a + b) * c gives a * c, b * c.
void CollectTerms(const Expr& e, std::vector<Expr>* terms) {
  if (auto* add = AsPtr<AddNode>(e)) {
    CollectTerms(add->a, terms);
    CollectTerms(add->b, terms);
    return;
  }
  if (auto* mul = AsPtr<MulNode>(e)) {
    for (const auto& [sum, factor] :
         {std::make_pair(mul->a, mul->b), std::make_pair(mul->b, mul->a)}) {
      if (AsPtr<AddNode>(sum)) {
        std::vector<Expr> parts;
        CollectTerms(sum, &parts);
        for (const Expr& part : parts) CollectTerms(Times(part, factor), terms);
        return;
      }
    }
  }
  terms->push_back(e);
}

bool Same(const Expr& a, const Expr& b) { return a == b || StructuralEqual(a, b); }

// A remainder term floormod(x, c) * k (k a constant, 1 when absent).
bool AsScaledMod(const Expr& term, const FloorModNode** mod, int64_t* k) {
  *k = 1;
  if ((*mod = AsPtr<FloorModNode>(term))) return true;
  auto* mul = AsPtr<MulNode>(term);
  if (mul == nullptr) return false;
  auto factor = AsConstInt(mul->b);
  if (!factor || !(*mod = AsPtr<FloorModNode>(mul->a))) return false;
  *k = *factor;
  return true;
}

// floordiv(x, c) * (c * k) merged with floormod(x', c) * k into x * k, where x' has x's
// remainder (the simplifier may have reduced one side: (49i + q) % 14 is (7i + q) % 14); null
// when `product` and the remainder do not pair.
Expr MergePair(arith::Analyzer* ana, const Expr& product, const FloorModNode* mod, int64_t k) {
  auto* mul = AsPtr<MulNode>(product);
  if (mul == nullptr) return nullptr;
  for (const auto& [div_side, factor] :
       {std::make_pair(mul->a, mul->b), std::make_pair(mul->b, mul->a)}) {
    auto* div = AsPtr<FloorDivNode>(div_side);
    if (div == nullptr || !Same(div->b, mod->b)) continue;
    auto c = AsConstInt(mod->b), f = AsConstInt(factor);
    bool scaled = k == 1 ? Same(factor, mod->b) : c && f && *f == *c * k;
    if (!scaled) continue;
    bool same_rest = Same(div->a, mod->a);
    if (!same_rest && c && *c > 0) {  // x - x' a multiple of c
      arith::ModularSet diff = ana->GetModularSet(ana->Simplify(SubE(div->a, mod->a)));
      same_rest = diff.coeff % *c == 0 && diff.base % *c == 0;
    }
    if (same_rest) return k == 1 ? div->a : Times(div->a, IntConst(div->a->dtype, k));
  }
  return nullptr;
}

// floordiv(x, c) * c + floormod(x, c) merged into x wherever both terms of a sum appear, for
// symbolic c too (TVM's MergeMulMod). The sum is rebuilt as TVM orders it: other terms, then
// the products (a merged pair where its product was), then the remainders left; repeated, as a
// merged x may complete another pair.
Expr MergeMulMod(arith::Analyzer* ana, const Expr& e) {
  std::vector<Expr> terms;
  // Simplified first (as TVM's): equal remainders then read the same, (49i + q) % 14 as
  // (7i + q) % 14.
  CollectTerms(ana->Simplify(e), &terms);
  for (bool merged = true; merged;) {
    merged = false;
    std::vector<Expr> others, products, mods;
    for (const Expr& t : terms) {
      const FloorModNode* mod = nullptr;
      int64_t k = 1;
      (AsScaledMod(t, &mod, &k) ? mods : AsPtr<MulNode>(t) ? products : others).push_back(t);
    }
    for (Expr& product : products) {
      for (size_t j = 0; j < mods.size(); ++j) {
        const FloorModNode* mod = nullptr;
        int64_t k = 1;
        if (!AsScaledMod(mods[j], &mod, &k)) continue;
        Expr whole = MergePair(ana, product, mod, k);
        if (!whole) continue;
        product = whole;
        mods.erase(mods.begin() + j);
        merged = true;
        break;
      }
    }
    terms.clear();
    for (const auto* group : {&others, &products, &mods}) {
      for (const Expr& t : *group) CollectTerms(t, &terms);
    }
  }
  Expr sum;
  for (const Expr& t : terms) sum = sum ? Plus(sum, t) : t;
  return sum ? sum : e;
}

}  // namespace

void CheckAxisSeparators(const std::vector<int64_t>& axis_separators, size_t rank,
                         const Span& span) {
  for (size_t i = 0; i < axis_separators.size(); ++i) {
    int64_t sep = axis_separators[i];
    if (sep < 0 || sep > static_cast<int64_t>(rank)) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "axis separator " << sep << " is outside [0, " << rank << "], the buffer's rank";
    }
    if (i > 0 && sep < axis_separators[i - 1]) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "axis separators must not decrease, got " << axis_separators[i - 1] << " then " << sep;
    }
  }
}

std::vector<Expr> BufferOffsetOf(const Buffer& buffer, const std::vector<Expr>& indices) {
  if (indices.size() != buffer->shape.size()) {
    TESSERA_THROW_KIND(buffer->span, ErrorKind::kValue)
        << "buffer '" << buffer->name << "' has " << buffer->shape.size()
        << " dimensions; offset_of got " << indices.size() << " indices";
  }
  bool strided = !buffer->strides.empty();
  if (strided && buffer->strides.size() != indices.size()) {
    TESSERA_THROW_KIND(buffer->span, ErrorKind::kValue)
        << "buffer '" << buffer->name << "' has " << buffer->strides.size() << " strides for "
        << indices.size() << " dimensions";
  }
  CheckAxisSeparators(buffer->axis_separators, indices.size(), buffer->span);
  arith::Analyzer ana;
  DataType t = indices.empty() ? DataType::Int(32) : indices[0]->dtype;
  std::vector<Expr> offsets(buffer->axis_separators.size() + 1, IntConst(t, 0));
  size_t axis = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    while (axis < buffer->axis_separators.size() &&
           static_cast<int64_t>(i) == buffer->axis_separators[axis]) {
      ++axis;
    }
    Expr& offset = offsets[axis];
    offset = strided ? Plus(offset, Times(indices[i], buffer->strides[i]))
                     : Plus(Times(offset, buffer->shape[i]), indices[i]);
    offset = MergeMulMod(&ana, offset);
  }
  // The element offset applies to a flat (single-axis) buffer, as TVM's does.
  if (buffer->elem_offset && offsets.size() == 1) {
    offsets[0] = Plus(offsets[0], buffer->elem_offset);
  }
  for (Expr& offset : offsets) offset = ana.Simplify(offset);
  return offsets;
}

Buffer FlattenedBuffer(const Buffer& buffer) {
  const std::vector<int64_t>& seps = buffer->axis_separators;
  CheckAxisSeparators(seps, buffer->shape.size(), buffer->span);
  std::vector<Expr> shape;
  if (!buffer->strides.empty()) {
    // The extent of a physical axis is stride * extent of its first dimension.
    if (buffer->strides.size() != buffer->shape.size()) {
      TESSERA_THROW_KIND(buffer->span, ErrorKind::kValue)
          << "buffer '" << buffer->name << "' has " << buffer->strides.size() << " strides for "
          << buffer->shape.size() << " dimensions";
    }
    if (!buffer->shape.empty()) shape.push_back(MulE(buffer->strides[0], buffer->shape[0]));
    for (int64_t sep : seps) {
      if (sep < static_cast<int64_t>(buffer->shape.size())) {
        shape.push_back(MulE(buffer->strides[sep], buffer->shape[sep]));
      }
    }
  } else {
    DataType t = buffer->shape.empty() ? DataType::Int(32) : buffer->shape[0]->dtype;
    shape.assign(seps.size() + 1, IntConst(t, 1));
    size_t axis = 0;
    for (size_t i = 0; i < buffer->shape.size(); ++i) {
      while (axis < seps.size() && static_cast<int64_t>(i) == seps[axis]) ++axis;
      auto one = AsConstInt(shape[axis]);
      shape[axis] = one && *one == 1 ? buffer->shape[i] : MulE(shape[axis], buffer->shape[i]);
    }
  }
  if (shape.size() == buffer->shape.size() && buffer->strides.empty()) return buffer;
  std::vector<int64_t> flat_seps;
  for (size_t i = 0; i < seps.size(); ++i) flat_seps.push_back(static_cast<int64_t>(i) + 1);
  Buffer flat =
      BufferNode::Make(buffer->data, buffer->dtype, std::move(shape), {}, buffer->elem_offset,
                       buffer->name, buffer->data_alignment, buffer->offset_factor, buffer->span);
  flat->axis_separators = std::move(flat_seps);
  return flat;
}

}  // namespace transform
}  // namespace tessera
