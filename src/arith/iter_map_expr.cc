// Iterator-map nodes as the expressions they stand for, and their structural equality.
#include "iter_map_detail.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {

using namespace iter_map_detail;

Expr IterMarkToExpr(const IterMark& mark, DataType dtype) {
  if (mark->var) return mark->var;
  if (mark->sum) return IterSumToExpr(mark->sum, dtype);
  return mark->expr;
}

// As TVM writes them: the whole mark; its top part as a division (0 for a unit top part);
// a middle part as floordiv(floormod(source, lower_factor * extent), lower_factor).
Expr IterSplitToExpr(const IterSplit& split, DataType dtype) {
  const IterMark& mark = split->source;
  Expr source = IterMarkToExpr(mark, dtype);
  int64_t lf = split->lower_factor;
  if (lf == 1 && split->extent == mark->extent) return Times(source, split->scale);
  if (mark->extent >= 0 && lf * split->extent == mark->extent) {
    if (split->extent == 1 && mark->extent != 1) return IntConst(dtype, 0);
    return Times(Div(source, lf), split->scale);
  }
  return Times(Div(Mod(source, lf * split->extent), lf), split->scale);
}

Expr IterSumToExpr(const IterSum& sum, DataType dtype) {
  Expr value = IntConst(dtype, 0);
  for (const IterSplit& s : sum->args) value = Plus(value, IterSplitToExpr(s, dtype));
  if (sum->free_base) value = Plus(value, sum->free_base);
  return Plus(value, IntConst(dtype, sum->base));
}

bool IterMarkEqual(const IterMark& a, const IterMark& b) {
  if (a == b) return true;
  if (!a || !b || a->extent != b->extent) return false;
  if (a->var || b->var) return a->var == b->var;
  if (a->sum || b->sum) return a->sum && b->sum && IterSumEqual(a->sum, b->sum);
  return a->expr && b->expr && StructuralEqual(a->expr, b->expr);
}

bool IterSplitEqual(const IterSplit& a, const IterSplit& b) {
  if (a == b) return true;
  return a && b && a->lower_factor == b->lower_factor && a->extent == b->extent &&
         a->scale == b->scale && IterMarkEqual(a->source, b->source);
}

bool IterSumEqual(const IterSum& a, const IterSum& b) {
  if (a == b) return true;
  if (!a || !b || a->args.size() != b->args.size()) return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!IterSplitEqual(a->args[i], b->args[i])) return false;
  DataType dtype = a->free_base   ? a->free_base->dtype
                   : b->free_base ? b->free_base->dtype
                                  : DataType::Int(32);
  return StructuralEqual(FullBase(a, dtype), FullBase(b, dtype));
}

}  // namespace arith
}  // namespace tessera
