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
  return Make(std::move(name), std::vector<Var>{std::move(lhs)}, std::vector<Var>{std::move(rhs)},
              std::vector<Expr>{std::move(result)}, std::vector<Expr>{std::move(identity)});
}

CommReducer CommReducerNode::Make(std::string name, std::vector<Var> lhs, std::vector<Var> rhs,
                                  std::vector<Expr> result, std::vector<Expr> identity) {
  size_t n = result.size();
  if (n == 0) ValueError("comm_reducer " + name + ": combines no value");
  if (lhs.size() != n || rhs.size() != n || identity.size() != n) {
    ValueError("comm_reducer " + name + ": the combination gives " + std::to_string(n) +
               " values but there are " + std::to_string(lhs.size()) + " lhs, " +
               std::to_string(rhs.size()) + " rhs and " + std::to_string(identity.size()) +
               " identity values; give one of each per value");
  }
  for (size_t i = 0; i < n; ++i) {
    if (!lhs[i] || !rhs[i] || !result[i] || !identity[i]) {
      ValueError("comm_reducer " + name + ": lhs, rhs, result and identity must all be given");
    }
    std::string which = n == 1 ? "" : " (value " + std::to_string(i) + ")";
    DataType t = result[i]->dtype;
    if (!t.is_scalar()) {
      TypeError("comm_reducer " + name + which + ": reduces scalars, got " + t.ToString());
    }
    if (lhs[i]->dtype != t || rhs[i]->dtype != t) {
      TypeError("comm_reducer " + name + which + ": the combination of two " +
                lhs[i]->dtype.ToString() + " values has type " + t.ToString());
    }
    if (identity[i]->dtype != t) {
      TypeError("comm_reducer " + name + which + ": the identity has type " +
                identity[i]->dtype.ToString() + " but the values are " + t.ToString());
    }
  }
  return std::make_shared<CommReducerNode>(std::move(name), std::move(lhs), std::move(rhs),
                                           std::move(result), std::move(identity));
}

Expr CommReducerNode::Combine(const Expr& a, const Expr& b) const {
  return Combine(std::vector<Expr>{a}, std::vector<Expr>{b}).at(0);
}

std::vector<Expr> CommReducerNode::Combine(const std::vector<Expr>& a,
                                           const std::vector<Expr>& b) const {
  TESSERA_ICHECK(a.size() == size() && b.size() == size()) << "Combine of the wrong arity";
  VarMap map;
  for (size_t i = 0; i < size(); ++i) {
    map[lhs[i].get()] = a[i];
    map[rhs[i].get()] = b[i];
  }
  std::vector<Expr> out;
  for (const Expr& r : result) out.push_back(Substitute(r, map));
  return out;
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
  std::vector<Expr> inits;
  if (init) inits.push_back(std::move(init));
  return Make(std::move(combiner), std::vector<Expr>{std::move(source)}, std::move(axis),
              std::move(condition), std::move(inits));
}

Reduce ReduceNode::Make(CommReducer combiner, std::vector<Expr> sources, std::vector<IterVar> axis,
                        Expr condition, std::vector<Expr> inits) {
  if (!combiner || sources.empty()) ValueError("a reduction needs a reducer and a value to reduce");
  const std::string& name = combiner->name;
  if (sources.size() != combiner->size()) {
    ValueError("te." + name + ": the reducer combines " + std::to_string(combiner->size()) +
               " values but " + std::to_string(sources.size()) + " are reduced");
  }
  if (!inits.empty() && inits.size() != sources.size()) {
    ValueError("te." + name + ": init= gives " + std::to_string(inits.size()) +
               " values for a reduction of " + std::to_string(sources.size()));
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i]) ValueError("a reduction needs a reducer and a value to reduce");
    if (sources[i]->dtype != combiner->dtype(i)) {
      TypeError("te." + name + ": the reducer combines " + combiner->dtype(i).ToString() +
                " values but the value reduced is " + sources[i]->dtype.ToString());
    }
    if (!inits.empty() && (!inits[i] || inits[i]->dtype != combiner->dtype(i))) {
      TypeError("te." + name + ": init= has type " +
                (inits[i] ? inits[i]->dtype.ToString() : std::string("none")) +
                " but the values are " + combiner->dtype(i).ToString());
    }
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
  std::vector<const Expr*> checked{&condition};
  for (const Expr& s : sources) checked.push_back(&s);
  for (const Expr* e : checked) {
    auto stray = StrayReduceAxes(*e, axis);
    if (!stray.empty()) {
      ValueError("te." + name + ": reduce axis '" + stray[0]->name +
                 "' is used but not reduced over here (axis= does not list it)");
    }
  }
  for (const Expr& i : inits) {
    if (!StrayReduceAxes(i, {}).empty()) {
      ValueError("te." + name + ": init= cannot depend on a reduce axis");
    }
  }
  return std::make_shared<ReduceNode>(std::move(combiner), std::move(sources), std::move(axis),
                                      std::move(condition), std::move(inits));
}

std::string ReduceNode::ToString() const {
  std::ostringstream os;
  os << combiner->name << "(";
  if (sources.size() == 1) {
    os << AsScript(source);
  } else {
    os << "(";
    for (size_t i = 0; i < sources.size(); ++i) os << (i ? ", " : "") << AsScript(sources[i]);
    os << ")";
  }
  os << ", axis=[";
  for (size_t i = 0; i < axis.size(); ++i) os << (i ? ", " : "") << axis[i]->var->name;
  os << "]";
  if (condition) os << ", where=" << AsScript(condition);
  for (size_t i = 0; i < inits.size(); ++i) {
    os << (i ? ", " : ", init=") << AsScript(inits[i]);
  }
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
