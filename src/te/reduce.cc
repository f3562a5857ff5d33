// Commutative reducers and Reduce: construction checks and the built-in sum, max and min.
#include "tessera/te/reduce.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"
#include "tessera/te/tensor.h"

namespace tessera {
namespace te {
namespace {

[[noreturn]] void TypeError(const std::string& msg) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kType) << msg;
}

[[noreturn]] void ValueError(const std::string& msg) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << msg;
}

CommReducer MakeBinaryReducer(const std::string& name, DataType dtype, Expr identity,
                              Expr (*combine)(Expr, Expr)) {
  Var x = VarNode::Make("x", dtype), y = VarNode::Make("y", dtype);
  return CommReducerNode::Make(name, x, y, combine(x, y), std::move(identity));
}

// The reduce axes used in `e` that are not in `allowed`.
std::vector<const AxisVarNode*> StrayReduceAxes(const Expr& e,
                                                const std::vector<IterVar>& allowed) {
  std::vector<const AxisVarNode*> out;
  if (!e) return out;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    auto* v = AsPtr<VarNode>(n);
    const AxisVarNode* axis = v ? AsAxisVar(v) : nullptr;
    if (!axis || axis->iter_type != IterVarType::kCommReduce) return;
    for (const IterVar& iv : allowed) {
      if (iv->var.get() == axis) return;
    }
    for (const AxisVarNode* seen : out) {
      if (seen == axis) return;
    }
    out.push_back(axis);
  });
  return out;
}

}  // namespace

CommReducer CommReducerNode::Make(std::string name, Var lhs, Var rhs, Expr result, Expr identity) {
  if (!lhs || !rhs || !result || !identity) {
    ValueError("comm_reducer " + name + ": lhs, rhs, result and identity must all be given");
  }
  DataType t = result->dtype;
  if (!t.is_scalar()) TypeError("comm_reducer " + name + ": reduces scalars, got " + t.ToString());
  if (lhs->dtype != t || rhs->dtype != t) {
    TypeError("comm_reducer " + name + ": the combination of two " + lhs->dtype.ToString() +
              " values has type " + t.ToString());
  }
  if (identity->dtype != t) {
    TypeError("comm_reducer " + name + ": the identity has type " + identity->dtype.ToString() +
              " but the values are " + t.ToString());
  }
  return std::make_shared<CommReducerNode>(std::move(name), std::move(lhs), std::move(rhs),
                                           std::move(result), std::move(identity));
}

Expr CommReducerNode::Combine(const Expr& a, const Expr& b) const {
  return Substitute(result, VarMap{{lhs.get(), a}, {rhs.get(), b}});
}

Expr MinValue(DataType t) {
  if (t.is_bool()) return Bool(false);
  if (t.is_uint()) return MakeConst(t, int64_t{0});
  if (t.is_int()) {
    return MakeConst(
        t, t.bits() >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (t.bits() - 1)));
  }
  if (t.is_float()) {
    Expr max = MaxValue(t);
    return MakeConst(t, -static_cast<const FloatImmNode*>(max.get())->value);
  }
  TypeError("no minimum value for type " + t.ToString());
}

Expr MaxValue(DataType t) {
  if (t.is_bool()) return Bool(true);
  if (t.is_uint()) {
    // 64-bit constants are bit patterns: all ones is the uint64 maximum.
    return MakeConst(t, t.bits() >= 64 ? int64_t{-1} : (int64_t{1} << t.bits()) - 1);
  }
  if (t.is_int()) {
    return MakeConst(t, t.bits() >= 64 ? std::numeric_limits<int64_t>::max()
                                       : (int64_t{1} << (t.bits() - 1)) - 1);
  }
  if (t.is_bfloat16()) return MakeConst(t, 3.3895313892515355e38);
  if (t.is_float() && t.bits() == 16) return MakeConst(t, 65504.0);
  if (t.is_float() && t.bits() == 32) {
    return MakeConst(t, static_cast<double>(std::numeric_limits<float>::max()));
  }
  if (t.is_float() && t.bits() == 64) return MakeConst(t, std::numeric_limits<double>::max());
  TypeError("no maximum value for type " + t.ToString());
}

CommReducer SumReducer(DataType t) {
  return MakeBinaryReducer("sum", t, MakeConst(t, int64_t{0}),
                           [](Expr a, Expr b) -> Expr { return AddNode::Make(a, b); });
}

CommReducer MaxReducer(DataType t) {
  return MakeBinaryReducer("max", t, MinValue(t),
                           [](Expr a, Expr b) -> Expr { return MaxNode::Make(a, b); });
}

CommReducer MinReducer(DataType t) {
  return MakeBinaryReducer("min", t, MaxValue(t),
                           [](Expr a, Expr b) -> Expr { return MinNode::Make(a, b); });
}

Reduce ReduceNode::Make(CommReducer combiner, Expr source, std::vector<IterVar> axis,
                        Expr condition, Expr init) {
  if (!combiner || !source) ValueError("a reduction needs a reducer and a value to reduce");
  const std::string& name = combiner->name;
  if (source->dtype != combiner->dtype()) {
    TypeError("te." + name + ": the reducer combines " + combiner->dtype().ToString() +
              " values but the value reduced is " + source->dtype.ToString());
  }
  if (axis.empty())
    ValueError("te." + name + ": reduces over no axis; give axis=te.reduce_axis(...)");
  for (size_t i = 0; i < axis.size(); ++i) {
    const IterVar& iv = axis[i];
    const AxisVarNode* v = iv ? AsAxisVar(iv->var.get()) : nullptr;
    if (!v || iv->iter_type != IterVarType::kCommReduce ||
        v->iter_type != IterVarType::kCommReduce) {
      ValueError("te." + name + ": axis " + (iv ? "'" + iv->var->name + "' " : std::string()) +
                 "is not a reduce axis; make reduction axes with te.reduce_axis");
    }
    for (size_t j = 0; j < i; ++j) {
      if (axis[j]->var == iv->var) {
        ValueError("te." + name + ": reduce axis '" + iv->var->name + "' is listed twice");
      }
    }
  }
  if (condition && condition->dtype != DataType::Bool()) {
    TypeError("te." + name + ": where= needs a bool condition, got " + condition->dtype.ToString());
  }
  if (init && init->dtype != combiner->dtype()) {
    TypeError("te." + name + ": init= has type " + init->dtype.ToString() + " but the values are " +
              combiner->dtype().ToString());
  }
  for (const Expr* e : {&source, &condition}) {
    auto stray = StrayReduceAxes(*e, axis);
    if (!stray.empty()) {
      ValueError("te." + name + ": reduce axis '" + stray[0]->name +
                 "' is used but not reduced over here (axis= does not list it)");
    }
  }
  if (!StrayReduceAxes(init, {}).empty()) {
    ValueError("te." + name + ": init= cannot depend on a reduce axis");
  }
  return std::make_shared<ReduceNode>(std::move(combiner), std::move(source), std::move(axis),
                                      std::move(condition), std::move(init));
}

std::string ReduceNode::ToString() const {
  std::ostringstream os;
  os << combiner->name << "(" << AsScript(source) << ", axis=[";
  for (size_t i = 0; i < axis.size(); ++i) os << (i ? ", " : "") << axis[i]->var->name;
  os << "]";
  if (condition) os << ", where=" << AsScript(condition);
  if (init) os << ", init=" << AsScript(init);
  os << ")";
  return os.str();
}

Reduce Sum(Expr source, std::vector<IterVar> axis, Expr condition, Expr init) {
  if (!source) ValueError("te.sum needs a value");
  return ReduceNode::Make(SumReducer(source->dtype), source, std::move(axis), std::move(condition),
                          std::move(init));
}

Reduce Max(Expr source, std::vector<IterVar> axis, Expr condition, Expr init) {
  if (!source) ValueError("te.max needs a value");
  return ReduceNode::Make(MaxReducer(source->dtype), source, std::move(axis), std::move(condition),
                          std::move(init));
}

Reduce Min(Expr source, std::vector<IterVar> axis, Expr condition, Expr init) {
  if (!source) ValueError("te.min needs a value");
  return ReduceNode::Make(MinReducer(source->dtype), source, std::move(axis), std::move(condition),
                          std::move(init));
}

}  // namespace te
}  // namespace tessera
