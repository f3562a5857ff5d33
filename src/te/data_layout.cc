// Layout strings ("NCHW16c") and the conversions between two layouts of the same axes.
#include "tessera/te/data_layout.h"

#include <cctype>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"

namespace tessera {
namespace te {
namespace {

char Letter(const IterVar& axis) { return axis->var->name[0]; }
bool IsPrimal(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
char Primal(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
char Subordinate(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

Expr CeilDiv(const Expr& a, const Expr& b) {
  return FloorDivE(SubE(AddE(a, b), IntConst(a->dtype, 1)), b);
}

// Each axis of `dst` as an expression of the axes of `src` (index rule) and as a size (shape
// rule); false when an axis of `dst` has no counterpart in `src`.
bool StoreRules(const Layout& src, const Layout& dst, std::vector<Expr>* index_rule,
                std::vector<Expr>* shape_rule) {
  if (src.name.empty() || dst.name.empty()) return false;
  for (size_t i = 0; i < dst.axes.size(); ++i) {
    char store = Letter(dst.axes[i]);
    DataType t = dst.axes[i]->var->dtype;
    Expr index;
    for (size_t j = 0; j < src.axes.size(); ++j) {
      char orig = Letter(src.axes[j]);
      if (Primal(orig) != Primal(store)) continue;
      Expr term = src.axes[j]->var;
      if (IsPrimal(orig)) {
        int64_t factor = src.FactorOf(std::string(1, orig));
        if (factor > 0) term = MulE(term, IntConst(t, factor));
      } else {
        // A subordinate axis counts in units of the subordinate axes of its letter after it.
        Expr factor = IntConst(t, 1);
        for (size_t k = j + 1; k < src.axes.size(); ++k) {
          if (Letter(src.axes[k]) == orig) factor = MulE(factor, src.axes[k]->dom->extent);
        }
        term = MulE(term, factor);
      }
      index = index ? AddE(index, term) : term;
    }
    if (!index) return false;
    Expr shape = index;
    if (IsPrimal(store)) {
      int64_t factor = dst.FactorOf(std::string(1, store));
      if (factor > 0) {
        shape = CeilDiv(index, IntConst(t, factor));
        index = FloorDivE(index, IntConst(t, factor));
      }
    } else {
      Expr stride = IntConst(t, 1), inner = IntConst(t, 1);
      for (size_t j = i; j < dst.axes.size(); ++j) {
        if (Letter(dst.axes[j]) != store) continue;
        stride = MulE(stride, dst.axes[j]->dom->extent);
        if (j > i) inner = MulE(inner, dst.axes[j]->dom->extent);
      }
      index = FloorDivE(FloorModE(index, stride), inner);
      shape = index;
    }
    index_rule->push_back(index);
    shape_rule->push_back(shape);
  }
  return true;
}

std::vector<Expr> Apply(const char* what, const std::vector<Expr>& values,
                        const std::vector<IterVar>& axes, const std::vector<Expr>& rule) {
  if (values.size() != axes.size()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "BijectiveLayout." << what << ": the layout has " << axes.size() << " axes, got "
        << values.size() << " values";
  }
  VarMap bind;
  for (size_t i = 0; i < values.size(); ++i) bind[axes[i]->var.get()] = values[i];
  arith::Analyzer ana;
  std::vector<Expr> out;
  for (const Expr& r : rule) out.push_back(ana.Simplify(Substitute(r, bind)));
  return out;
}

// A shape in the target layout: primal sizes from the rule with the source's primal sizes
// bound (its subordinate axes at 0), subordinate sizes their own extents.
std::vector<Expr> ApplyShape(const char* what, const std::vector<Expr>& shape,
                             const std::vector<IterVar>& from, const std::vector<IterVar>& to,
                             const std::vector<Expr>& rule) {
  if (shape.size() != from.size()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "BijectiveLayout." << what << ": the layout has " << from.size() << " axes, got a "
        << shape.size() << "-dimensional shape";
  }
  VarMap bind;
  for (size_t i = 0; i < shape.size(); ++i) {
    const IterVar& axis = from[i];
    if (IsPrimal(Letter(axis))) {
      bind[axis->var.get()] = CastTo(axis->var->dtype, shape[i]);
      continue;
    }
    auto given = AsConstInt(shape[i]), extent = AsConstInt(axis->dom->extent);
    if (given && extent && *given != *extent) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "BijectiveLayout." << what << ": dimension " << i << " ('" << Letter(axis)
          << "') must be " << *extent << ", got " << *given;
    }
    bind[axis->var.get()] = IntConst(axis->var->dtype, 0);
  }
  arith::Analyzer ana;
  std::vector<Expr> out;
  for (size_t i = 0; i < rule.size(); ++i) {
    out.push_back(IsPrimal(Letter(to[i])) ? ana.Simplify(Substitute(rule[i], bind))
                                          : to[i]->dom->extent);
  }
  return out;
}

}  // namespace

std::optional<Layout> Layout::Parse(const std::string& name, DataType dtype) {
  if (!dtype.is_integer() || !dtype.is_scalar()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kType)
        << "layout: the index type must be an integer type, got " << dtype.ToString();
  }
  if (name == "__undef__") return std::nullopt;
  Layout layout;
  layout.name = name;
  int64_t factor = 0;
  auto bad = [&](const std::string& why) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "invalid layout '" << name << "': " << why;
  };
  for (char c : name) {
    std::string letter(1, c);
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (factor != 0) bad("a size before the primal axis " + letter);
      Var extent = VarNode::Make(letter + "_shape", dtype);
      layout.axes.push_back(IterVarNode::Make(RangeNode::Make(IntConst(dtype, 0), extent),
                                              VarNode::Make(letter, dtype), IterVarType::kDataPar));
    } else if (std::islower(static_cast<unsigned char>(c))) {
      if (factor <= 0) bad("the subordinate axis " + letter + " needs a size before it");
      layout.axes.push_back(
          IterVarNode::Make(RangeNode::Make(IntConst(dtype, 0), IntConst(dtype, factor)),
                            VarNode::Make(letter, dtype), IterVarType::kDataPar));
      factor = 0;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      factor = factor * 10 + (c - '0');
    } else {
      bad(std::string("'") + c + "' is not an axis letter or a digit");
    }
  }
  if (factor != 0) bad("a size at the end names no axis");
  for (const IterVar& axis : layout.axes) {
    char c = Letter(axis);
    if (!IsPrimal(c) && layout.IndexOf(std::string(1, Primal(c))) < 0) {
      bad(std::string("the subordinate axis ") + c + " has no primal axis " + Primal(c));
    }
  }
  return layout;
}

int Layout::IndexOf(const std::string& axis) const {
  if (axis.size() != 1) return -1;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (Letter(axes[i]) == axis[0]) return static_cast<int>(i);
  }
  return -1;
}

int64_t Layout::FactorOf(const std::string& axis) const {
  if (axis.size() != 1) return -1;
  char sub = Subordinate(axis[0]);
  int64_t factor = 1;
  bool found = false;
  for (const IterVar& a : axes) {
    if (Letter(a) != sub) continue;
    found = true;
    factor *= AsConstInt(a->dom->extent).value_or(1);
  }
  return found ? factor : -1;
}

std::optional<BijectiveLayout> BijectiveLayout::Make(const Layout& src, const Layout& dst) {
  BijectiveLayout b{src, dst, {}, {}, {}, {}};
  if (!StoreRules(src, dst, &b.index_forward, &b.shape_forward)) return std::nullopt;
  if (!StoreRules(dst, src, &b.index_backward, &b.shape_backward)) return std::nullopt;
  return b;
}

std::vector<Expr> BijectiveLayout::ForwardIndex(const std::vector<Expr>& index) const {
  return Apply("forward_index", index, src.axes, index_forward);
}
std::vector<Expr> BijectiveLayout::BackwardIndex(const std::vector<Expr>& index) const {
  return Apply("backward_index", index, dst.axes, index_backward);
}
std::vector<Expr> BijectiveLayout::ForwardShape(const std::vector<Expr>& shape) const {
  return ApplyShape("forward_shape", shape, src.axes, dst.axes, shape_forward);
}
std::vector<Expr> BijectiveLayout::BackwardShape(const std::vector<Expr>& shape) const {
  return ApplyShape("backward_shape", shape, dst.axes, src.axes, shape_backward);
}

}  // namespace te
}  // namespace tessera
