// Bindings of the IR: DataType, Span, expression and statement nodes, buffers, functions, ops.
#include <cstring>

#include "common.h"
#include "tessera/arith/const_fold.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/printer_verbose.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_equal_path.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/transform/buffer_offset.h"

namespace tessera {
namespace bindings {
namespace {

DataType DT(const std::string& s) { return DataType::Parse(s); }

// The Python class dtypes are returned as (tessera.ir.DataType); owned for the process lifetime.
PyObject* g_dtype_class = nullptr;

// tessera.tir's normaliser of TVM's constructor spellings (Python values where nodes are
// expected: `BufferStore(buf, 0.1, [0])`, `IterVar((0, 8), "v", 1)`); owned for the process.
PyObject* g_constructor_fallback = nullptr;

std::string Script(const ObjectRef& node, const std::string& ir_prefix, const std::string& tir_prefix,
                   bool syntax_sugar, bool show_meta, bool print_line_numbers,
                   bool verbose_expr, const std::vector<ObjectRef>& underline = {},
                   const std::vector<std::pair<ObjectRef, std::string>>& annotate = {},
                   bool show_object_address = false) {
  PrinterConfig cfg;
  cfg.ir_prefix = ir_prefix;
  cfg.tir_prefix = tir_prefix;
  cfg.syntax_sugar = syntax_sugar;
  cfg.show_meta = show_meta;
  cfg.print_line_numbers = print_line_numbers;
  ScriptOptions options;
  options.verbose_expr = verbose_expr;
  options.show_object_address = show_object_address;
  // TVM's path_to_underline / obj_to_underline and obj_to_annotate.
  for (const ObjectRef& obj : underline) options.underline.insert(obj.get());
  for (const auto& [obj, tag] : annotate) cfg.comments[obj.get()] = tag;
  return CallWithLargeStack([&] { return AsScript(node, cfg, options); });
}

template <NodeKind K>
void BindBinary(nb::module_& m, const char* name) {
  using N = BinaryOpNode<K>;
  auto cls = nb::class_<N, BinaryNode>(m, name).def(
      nb::new_([](Expr a, Expr b, std::optional<Span> span) { return N::Make(a, b, OrEmpty(span)); }),
      "a"_a, "b"_a, "span"_a = nb::none());
  cls.def_static(
      "fold",
      [](Expr a, Expr b, std::optional<Span> span) {
        return arith::FoldBinary(K, a, b, OrEmpty(span));
      },
      "a"_a, "b"_a, "span"_a = nb::none(),
      "The operation of `a` and `b` (one type) folded as TVM's expression operators fold it "
      "(two constants, x + 0, x * 1 ...), else the node.");
  WithConstructorFallback(cls, name);
}

// TVM's ir.PrimType / ir.PointerType: the type annotations a Var is built with. tessera's IR keeps
// them as the Var's dtype and pointer (element, scope), so these are values, not IR nodes.
struct PrimTypeAnnotation {
  DataType dtype;
};
struct PointerTypeAnnotation {
  PrimTypeAnnotation element;
  std::string scope;
};

// The lanes of a Ramp/Broadcast given as an expression: a constant, or TVM's scalable
// `T.vscale() * k` (returned as -k, the nodes' encoding).
int LanesOf(const Expr& lanes, const Span& span) {
  if (auto c = AsConstInt(lanes)) return static_cast<int>(*c);
  if (auto k = MatchScalableLanes(lanes)) return -*k;
  TESSERA_THROW_KIND(span.defined() ? span : lanes->span, ErrorKind::kType)
      << "the lanes of a vector must be an integer constant or T.vscale() * k (k > 1)";
}

// A Ramp's or Broadcast's lanes as TVM gives them: an int32 constant, or T.vscale() * k.
nb::object LanesValue(int lanes) {
  if (lanes < 0) return nb::cast(ScalableLanesExpr(-lanes));
  return nb::cast(Expr(IntImmNode::Make(DataType::Int(32), lanes)));
}

}  // namespace

namespace {

// Whether a constructor argument is already what the C++ overloads take: a node (or another
// bound value), a string, None, an enum, or a list of those. Anything else (Python numbers,
// tuples, dicts, ...) goes to the normaliser.
bool IsBoundValue(nb::handle h) {
  PyObject* o = h.ptr();
  if (o == Py_None || PyUnicode_Check(o) || nb::inst_check(h)) return true;
  if (PyLong_Check(o)) return !PyLong_CheckExact(o) && !PyBool_Check(o);  // an IntEnum
  if (PyList_Check(o)) {
    for (nb::handle item : nb::borrow<nb::list>(h)) {
      if (!IsBoundValue(item)) return false;
    }
    return true;
  }
  if (PyDict_Check(o)) {  // annotations / attributes that are already nodes
    for (auto [key, value] : nb::borrow<nb::dict>(h)) {
      if (!PyUnicode_Check(key.ptr()) || !IsBoundValue(value)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

nb::object ConstructorFallback(const char* name, nb::args args, nb::kwargs kwargs) {
  if (g_constructor_fallback == nullptr) throw nb::next_overload();
  bool bound = true;
  for (nb::handle a : args) bound = bound && IsBoundValue(a);
  for (auto [key, value] : kwargs) bound = bound && IsBoundValue(value);
  // The common case: no Python call. (PrimFunc and Block always ask: TVM's parameter list and
  // a block's regions may hold Buffers, which are nodes too; Call asks for TVM's "" (void)
  // dtype and string arguments.)
  bool asks = std::strcmp(name, "PrimFunc") == 0 || std::strcmp(name, "Block") == 0 ||
              std::strcmp(name, "Call") == 0;
  if (bound && !asks) throw nb::next_overload();
  nb::object built = nb::handle(g_constructor_fallback)(name, args, kwargs);
  if (built.is_none()) throw nb::next_overload();
  return built;
}

nb::object PyDType(const DataType& t) {
  nb::str name(t.ToString().c_str());
  if (g_dtype_class == nullptr) return std::move(name);
  return nb::handle(g_dtype_class)(name);
}

void BindIR(nb::module_& m) {
  nb::class_<Span>(m, "Span")
      .def(nb::init<>())  // the empty span: no source location
      .def(nb::init<std::string, int, int, int, int>(), "file"_a, "line"_a, "column"_a,
           "end_line"_a = 0, "end_column"_a = 0)
      .def_prop_ro("file", [](const Span& s) { return s.file_name(); })
      .def_ro("line", &Span::line)
      .def_ro("column", &Span::column)
      .def_ro("end_line", &Span::end_line)
      .def_ro("end_column", &Span::end_column)
      .def("__repr__", &Span::ToString);

  nb::class_<DataType>(m, "DataType")
      .def(nb::new_([](const std::string& s) { return DataType::Parse(s); }), "name"_a)
      .def_prop_ro("bits", &DataType::bits)
      .def_prop_ro("lanes", &DataType::lanes)
      .def_prop_ro("is_scalable_vector", &DataType::is_scalable_vector)
      .def_prop_ro("lanes_or_vscale_factor", &DataType::lanes_or_vscale_factor)
      .def_prop_ro("raw_lanes", &DataType::raw_lanes)
      .def_prop_ro("type_code", [](const DataType& t) { return static_cast<int>(t.code()); })
      .def("with_lanes", &DataType::with_lanes)
      .def("__str__", &DataType::ToString)
      .def("__repr__", [](const DataType& t) { return "DataType(\"" + t.ToString() + "\")"; })
      .def("__eq__", [](const DataType& a, const DataType& b) { return a == b; })
      .def("__hash__", &DataType::Hash);
  m.def(
      "_set_dtype_class",
      [](nb::object cls) {
        Py_XDECREF(g_dtype_class);
        g_dtype_class = cls.release().ptr();
      },
      "cls"_a, "Register the Python class that dtypes returned to Python are instances of.");
  m.def(
      "_set_constructor_fallback",
      [](nb::object fn) {
        Py_XDECREF(g_constructor_fallback);
        g_constructor_fallback = fn.release().ptr();
      },
      "fn"_a,
      "Register fn(name, args, kwargs) -> node or None: TVM's spellings of node constructors.");
  m.def("scalable_lanes_factor", [](const Expr& e) { return MatchScalableLanes(e); }, "lanes"_a,
        "k when `lanes` is the expression T.vscale() * k (the lanes of a scalable vector), else None.");
  m.def("canonical_dtype", [](const std::string& s) { return DataType::Parse(s).ToString(); },
        "name"_a, "The canonical long name of a dtype string (\"fp16x16\" -> \"float16x16\").");

  m.def(
      "set_script_header_package", [](const std::string& name) { ScriptHeaderPackage() = name; },
      "name"_a, "The package printed headers name (\"tessera\", or \"tvm\" under tessera.compat).");
  nb::class_<PrimTypeAnnotation>(m, "PrimType")
      .def(nb::new_([](const std::string& t) { return PrimTypeAnnotation{DT(t)}; }), "dtype"_a)
      .def_prop_ro("dtype", [](const PrimTypeAnnotation& p) { return PyDType(p.dtype); })
      .def("__eq__", [](const PrimTypeAnnotation& a,
                        const PrimTypeAnnotation& b) { return a.dtype == b.dtype; })
      .def("__hash__", [](const PrimTypeAnnotation& p) { return p.dtype.Hash(); })
      .def("script", [](const PrimTypeAnnotation& p) { return "T." + p.dtype.ToString(); })
      .def("__str__", [](const PrimTypeAnnotation& p) { return "T." + p.dtype.ToString(); })
      .def("__repr__", [](const PrimTypeAnnotation& p) { return "T." + p.dtype.ToString(); });
  nb::class_<PointerTypeAnnotation>(m, "PointerType")
      .def(nb::new_([](const PrimTypeAnnotation& e, const std::string& scope) {
             return PointerTypeAnnotation{e, scope};
           }),
           "element_type"_a, "storage_scope"_a = "")
      .def_prop_ro("element_type", [](const PointerTypeAnnotation& p) { return p.element; })
      .def_ro("storage_scope", &PointerTypeAnnotation::scope)
      .def("__eq__",
           [](const PointerTypeAnnotation& a, const PointerTypeAnnotation& b) {
             auto scope = [](const std::string& s) { return s.empty() ? "global" : s; };
             return a.element.dtype == b.element.dtype && scope(a.scope) == scope(b.scope);
           })
      .def("script", [](const PointerTypeAnnotation& p) {
        std::string text = "T.handle(\"" + p.element.dtype.ToString() + "\"";
        if (!p.scope.empty()) text += ", \"" + p.scope + "\"";
        return text + ")";
      });

  nb::class_<Object>(m, "Object")
      .def("same_as", [](const Object& a, const Object& b) { return &a == &b; })
      // As TVM's: a node hashes by its identity, whichever Python handle reaches it.
      .def("__hash__", [](const Object& o) { return reinterpret_cast<size_t>(&o); })
      .def_prop_ro("_kind", [](const Object& o) { return NodeKindName(o.kind); })
      .def("script",
           [](const Object& o, const std::string& ir_prefix, const std::string& tir_prefix,
              bool sugar, bool show_meta, bool line_numbers, bool verbose_expr,
              std::optional<std::vector<ObjectRef>> underline,
              std::optional<std::vector<std::pair<ObjectRef, std::string>>> annotate,
              bool show_object_address) {
             return Script(GetRef(&o), ir_prefix, tir_prefix, sugar, show_meta, line_numbers,
                           verbose_expr,
                           underline.value_or(std::vector<ObjectRef>{}),
                           annotate.value_or(std::vector<std::pair<ObjectRef, std::string>>{}),
                           show_object_address);
           },
           "ir_prefix"_a = "I", "tir_prefix"_a = "T", "syntax_sugar"_a = true,
           "show_meta"_a = false, "print_line_numbers"_a = false, "verbose_expr"_a = false,
           "path_to_underline"_a = nb::none(), "obj_to_annotate"_a = nb::none(),
           "show_object_address"_a = false,
           "Script text; `path_to_underline` (objects to underline) and `obj_to_annotate` "
           "((statement, tag) pairs) mark nodes for diagnostics.")
      .def("__str__", [](const Object& o) {
        return CallWithLargeStack([&] { return AsScript(GetRef(&o)); });
      });

  // ---- expressions ----
  nb::class_<ExprNode, Object>(m, "PrimExpr")
      .def_prop_ro("dtype", [](const ExprNode& e) { return PyDType(e.dtype); })
      .def_ro("span", &ExprNode::span);
  nb::class_<IntImmNode, ExprNode>(m, "IntImm")
      .def(nb::new_([](const std::string& t, int64_t v, std::optional<Span> s) {
             return IntImmNode::Make(DT(t), v, OrEmpty(s));
           }),
           "dtype"_a, "value"_a, "span"_a = nb::none())
      // A uint64 constant holds its 64-bit pattern; Python sees the unsigned value.
      .def_prop_ro("value", [](const IntImmNode& n) -> nb::object {
        if (n.dtype.is_uint() && n.dtype.bits() == 64 && n.value < 0) {
          return nb::cast(static_cast<uint64_t>(n.value));
        }
        return nb::cast(n.value);
      });
  nb::class_<FloatImmNode, ExprNode>(m, "FloatImm")
      .def(nb::new_([](const std::string& t, double v, std::optional<Span> s) {
             return FloatImmNode::Make(DT(t), v, OrEmpty(s));
           }),
           "dtype"_a, "value"_a, "span"_a = nb::none())
      .def_ro("value", &FloatImmNode::value);
  nb::class_<StringImmNode, ExprNode>(m, "StringImm")
      .def(nb::new_([](const std::string& v, std::optional<Span> s) {
             return StringImmNode::Make(v, OrEmpty(s));
           }),
           "value"_a, "span"_a = nb::none())
      .def_ro("value", &StringImmNode::value);
  auto var_class = nb::class_<VarNode, ExprNode>(m, "Var")
      .def(nb::new_([](const std::string& name, const std::string& t, std::optional<Span> s) {
             return VarNode::Make(name, DT(t), OrEmpty(s));
           }),
           "name"_a, "dtype"_a, "span"_a = nb::none())
      // tir.Var("p", ir.PointerType(ir.PrimType("float32"), "local")); TVM's "" scope is global.
      .def(nb::new_([](const std::string& name, const PointerTypeAnnotation& t,
                       std::optional<Span> s) {
             return VarNode::MakePointer(name, t.element.dtype,
                                         t.scope.empty() ? "global" : t.scope, OrEmpty(s));
           }),
           "name"_a, "dtype"_a, "span"_a = nb::none())
      .def(nb::new_([](const std::string& name, const PrimTypeAnnotation& t,
                       std::optional<Span> s) { return VarNode::Make(name, t.dtype, OrEmpty(s)); }),
           "name"_a, "dtype"_a, "span"_a = nb::none())
      .def_prop_ro("type_annotation",
                   [](const VarNode& v) -> nb::object {
                     if (v.pointer) {
                       return nb::cast(PointerTypeAnnotation{{v.pointer->element}, v.pointer->scope});
                     }
                     return nb::cast(PrimTypeAnnotation{v.dtype});
                   })
      .def_static(
          "pointer",
          [](const std::string& name, const std::string& elem, const std::string& scope,
             std::optional<Span> s) {
            return VarNode::MakePointer(name, DT(elem), scope, OrEmpty(s));
          },
          "name"_a, "element"_a, "scope"_a = "global", "span"_a = nb::none())
      .def_ro("name", &VarNode::name)
      .def_prop_ro("pointer_element",
                   [](const VarNode& v) -> nb::object {
                     if (!v.pointer) return nb::none();
                     return PyDType(v.pointer->element);
                   })
      .def_prop_ro("scope", [](const VarNode& v) -> std::optional<std::string> {
        if (!v.pointer) return std::nullopt;
        return v.pointer->scope;
      });
  WithConstructorFallback(var_class, "Var");
  nb::class_<SizeVarNode, VarNode>(m, "SizeVar")
      .def(nb::new_([](const std::string& name, const std::string& t, std::optional<Span> s) {
             return SizeVarNode::Make(name, DT(t), OrEmpty(s));
           }),
           "name"_a, "dtype"_a = "int32", "span"_a = nb::none());
  auto cast_class = nb::class_<CastNode, ExprNode>(m, "Cast")
      .def(nb::new_([](const std::string& t, Expr v, std::optional<Span> s) {
             return CastNode::Make(DT(t), v, OrEmpty(s));
           }),
           "dtype"_a, "value"_a, "span"_a = nb::none())
      .def_ro("value", &CastNode::value);
  WithConstructorFallback(cast_class, "Cast");
  nb::class_<BinaryNode, ExprNode>(m, "BinaryOp")
      .def_ro("a", &BinaryNode::a)
      .def_ro("b", &BinaryNode::b);
#define TESSERA_BIND_BINARY(name) BindBinary<NodeKind::k##name>(m, #name);
  TESSERA_BINARY_NODES(TESSERA_BIND_BINARY)
#undef TESSERA_BIND_BINARY
  m.def(
      "fold_intrinsic",
      [](const std::string& op, Expr a, Expr b, std::optional<Span> span) -> nb::object {
        Expr r = arith::TryConstFoldIntrinsic(op, a, b, OrEmpty(span));
        return r ? nb::cast(r) : nb::none();
      },
      "op"_a, "a"_a, "b"_a, "span"_a = nb::none(),
      "The constant that TVM folds the bitwise/shift intrinsic `op` of `a` and `b` to, or None.");
  nb::class_<NotNode, ExprNode>(m, "Not")
      .def(nb::new_([](Expr a, std::optional<Span> s) { return NotNode::Make(a, OrEmpty(s)); }),
           "a"_a, "span"_a = nb::none())
      .def_static(
          "fold",
          [](Expr a, std::optional<Span> s) { return arith::FoldNot(a, OrEmpty(s)); }, "a"_a,
          "span"_a = nb::none(), "`!a`: the constant when `a` is one, else the node.")
      .def_ro("a", &NotNode::a);
  auto select_class = nb::class_<SelectNode, ExprNode>(m, "Select")
      .def(nb::new_([](Expr c, Expr t, Expr f, std::optional<Span> s) {
             return SelectNode::Make(c, t, f, OrEmpty(s));
           }),
           "condition"_a, "true_value"_a, "false_value"_a, "span"_a = nb::none())
      .def_ro("condition", &SelectNode::condition)
      .def_ro("true_value", &SelectNode::true_value)
      .def_ro("false_value", &SelectNode::false_value);
  WithConstructorFallback(select_class, "Select");
  auto ramp_class = nb::class_<RampNode, ExprNode>(m, "Ramp")
      .def(nb::new_([](Expr b, Expr st, int lanes, std::optional<Span> s) {
             return RampNode::Make(b, st, lanes, OrEmpty(s));
           }),
           "base"_a, "stride"_a, "lanes"_a, "span"_a = nb::none())
      .def(nb::new_([](Expr b, Expr st, Expr lanes, std::optional<Span> s) {
             return RampNode::Make(b, st, LanesOf(lanes, OrEmpty(s)), OrEmpty(s));
           }),
           "base"_a, "stride"_a, "lanes"_a, "span"_a = nb::none())
      .def_ro("base", &RampNode::base)
      .def_ro("stride", &RampNode::stride)
      .def_prop_ro("lanes", [](const RampNode& r) { return LanesValue(r.lanes); });
  WithConstructorFallback(ramp_class, "Ramp");
  auto broadcast_class = nb::class_<BroadcastNode, ExprNode>(m, "Broadcast")
      .def(nb::new_([](Expr v, int lanes, std::optional<Span> s) {
             return BroadcastNode::Make(v, lanes, OrEmpty(s));
           }),
           "value"_a, "lanes"_a, "span"_a = nb::none())
      .def(nb::new_([](Expr v, Expr lanes, std::optional<Span> s) {
             return BroadcastNode::Make(v, LanesOf(lanes, OrEmpty(s)), OrEmpty(s));
           }),
           "value"_a, "lanes"_a, "span"_a = nb::none())
      .def_ro("value", &BroadcastNode::value)
      .def_prop_ro("lanes", [](const BroadcastNode& b) { return LanesValue(b.lanes); });
  WithConstructorFallback(broadcast_class, "Broadcast");
  auto shuffle_class = nb::class_<ShuffleNode, ExprNode>(m, "Shuffle")
      .def(nb::new_([](std::vector<Expr> v, std::vector<Expr> i, std::optional<Span> s) {
             return ShuffleNode::Make(v, i, OrEmpty(s));
           }),
           "vectors"_a, "indices"_a, "span"_a = nb::none())
      .def_ro("vectors", &ShuffleNode::vectors)
      .def_ro("indices", &ShuffleNode::indices);
  WithConstructorFallback(shuffle_class, "Shuffle");
  auto let_class = nb::class_<LetNode, ExprNode>(m, "Let")
      .def(nb::new_([](Var v, Expr val, Expr body, std::optional<Span> s) {
             return LetNode::Make(v, val, body, OrEmpty(s));
           }),
           "var"_a, "value"_a, "body"_a, "span"_a = nb::none())
      .def_ro("var", &LetNode::var)
      .def_ro("value", &LetNode::value)
      .def_ro("body", &LetNode::body);
  WithConstructorFallback(let_class, "Let");
  auto call_class = nb::class_<CallNode, ExprNode>(m, "Call")
      .def(nb::new_(
               [](const std::string& t, ObjectRef op, std::vector<Expr> args,
                  std::optional<Span> s) { return CallNode::Make(DT(t), op, args, OrEmpty(s)); }),
           "dtype"_a, "op"_a, "args"_a, "span"_a = nb::none())
      // As TVM's tir.Call: the op may be given by its registered name ("tir.exp").
      .def(nb::new_([](const std::string& t, const std::string& op, std::vector<Expr> args,
                       std::optional<Span> s) {
             return CallNode::Make(DT(t), OpNode::Get(op), args, OrEmpty(s));
           }),
           "dtype"_a, "op"_a, "args"_a, "span"_a = nb::none())
      .def_ro("op", &CallNode::op)
      .def_ro("args", &CallNode::args)
      .def_prop_ro("op_name", &CallNode::op_name);
  WithConstructorFallback(call_class, "Call");
  auto bufferLoad_class = nb::class_<BufferLoadNode, ExprNode>(m, "BufferLoad")
      .def(nb::new_([](Buffer b, std::vector<Expr> idx, Expr pred, std::optional<Span> s) {
             return BufferLoadNode::Make(b, idx, pred, OrEmpty(s));
           }),
           "buffer"_a, "indices"_a, "predicate"_a.none() = nb::none(), "span"_a = nb::none())
      .def_ro("buffer", &BufferLoadNode::buffer)
      .def_ro("indices", &BufferLoadNode::indices)
      .def_ro("predicate", &BufferLoadNode::predicate);
  WithConstructorFallback(bufferLoad_class, "BufferLoad");

  // TVM's Range(begin, end): [begin, end), or [0, begin) without an end.
  auto range_class = nb::class_<RangeNode, Object>(m, "Range")
      .def(nb::new_([](Expr begin, Expr end, std::optional<Span> s) {
             if (!end) return RangeNode::Make(IntConst(begin->dtype, 0), begin, OrEmpty(s));
             bool zero = begin->kind == NodeKind::kIntImm && As<IntImmNode>(begin)->value == 0;
             return RangeNode::Make(begin, zero ? end : SubE(end, begin), OrEmpty(s));
           }),
           "begin"_a, "end"_a.none() = nb::none(), "span"_a = nb::none())
      .def_static(
          "from_min_extent",
          [](Expr min, Expr extent, std::optional<Span> s) {
            return RangeNode::Make(min, extent, OrEmpty(s));
          },
          "min"_a, "extent"_a, "span"_a = nb::none())
      .def_ro("min", &RangeNode::min)
      .def_ro("extent", &RangeNode::extent);
  WithConstructorFallback(range_class, "Range");
  nb::class_<ArrayNode, Object>(m, "Array")
      .def(nb::new_([](std::vector<ObjectRef> items) { return ArrayNode::Make(items); }), "items"_a)
      .def_ro("items", &ArrayNode::items)
      .def("__len__", [](const ArrayNode& a) { return a.items.size(); });
  nb::class_<CommReducerNode, Object>(m, "CommReducer")
      .def(nb::new_([](std::vector<Var> lhs, std::vector<Var> rhs, std::vector<Expr> result,
                       std::vector<Expr> identity, std::optional<Span> s) {
             return CommReducerNode::Make(lhs, rhs, result, identity, OrEmpty(s));
           }),
           "lhs"_a, "rhs"_a, "result"_a, "identity_element"_a, "span"_a = nb::none())
      .def_ro("lhs", &CommReducerNode::lhs)
      .def_ro("rhs", &CommReducerNode::rhs)
      .def_ro("result", &CommReducerNode::result)
      .def_ro("identity_element", &CommReducerNode::identity_element)
      .def_ro("span", &CommReducerNode::span);
  // A Map key from Python: a str (by value) or an IR object; a Python number matches a constant
  // key of any dtype by value.
  auto find_key = [](const MapNode& m, nb::handle key) -> const ObjectRef* {
    if (nb::isinstance<nb::str>(key)) {
      auto it = m.items.find(nb::cast<std::string>(key));
      return it == m.items.end() ? nullptr : &it->second;
    }
    ObjectRef obj;
    if (nb::try_cast<ObjectRef>(key, obj) && obj) {
      const auto* kv = m.FindObject(obj);
      return kv == nullptr ? nullptr : &kv->second;
    }
    if (nb::isinstance<nb::bool_>(key)) return nullptr;
    if (nb::isinstance<nb::int_>(key) || nb::isinstance<nb::float_>(key)) {
      const double value = nb::cast<double>(key);
      for (const auto& kv : m.object_items) {
        if (auto* i = AsPtr<IntImmNode>(kv.first)) {
          if (nb::isinstance<nb::int_>(key) && i->value == nb::cast<int64_t>(key)) return &kv.second;
        } else if (auto* f = AsPtr<FloatImmNode>(kv.first)) {
          if (f->value == value) return &kv.second;
        }
      }
    }
    return nullptr;
  };
  auto py_key = [](const ObjectRef& key) { return nb::cast(key); };
  nb::class_<MapNode, Object>(m, "Map")
      .def(nb::new_([](nb::dict items) {
             auto map = MapNode::Make({});
             for (auto [k, v] : items) {
               ObjectRef value;
               if (!v.is_none() && !nb::try_cast<ObjectRef>(v, value)) {
                 throw nb::type_error(("a Map value must be an IR object, got " +
                                       std::string(nb::str(nb::type_name(v.type())).c_str()))
                                          .c_str());
               }
               if (nb::isinstance<nb::str>(k)) {
                 map->items[nb::cast<std::string>(k)] = value;
                 continue;
               }
               ObjectRef key;
               if (!nb::try_cast<ObjectRef>(k, key) || !key) {
                 throw nb::type_error(("a Map key must be a str or an IR object, got " +
                                       std::string(nb::str(nb::type_name(k.type())).c_str()))
                                          .c_str());
               }
               map->SetObject(key, value);
             }
             return map;
           }),
           "items"_a)
      .def("items",
           [py_key](const MapNode& m) {
             nb::list out;
             for (const auto& kv : m.items) out.append(nb::make_tuple(kv.first, kv.second));
             for (const auto& kv : m.object_items)
               out.append(nb::make_tuple(py_key(kv.first), kv.second));
             return out;
           })
      .def("__len__", [](const MapNode& m) { return m.size(); })
      .def("__contains__",
           [find_key](const MapNode& m, nb::handle k) { return find_key(m, k) != nullptr; })
      .def("__getitem__",
           [find_key](const MapNode& m, nb::handle k) {
             const ObjectRef* found = find_key(m, k);
             if (found == nullptr) throw nb::key_error(nb::str(nb::repr(k)).c_str());
             return *found;
           })
      .def("keys", [py_key](const MapNode& m) {
        nb::list keys;
        for (const auto& kv : m.items) keys.append(nb::str(kv.first.c_str()));
        for (const auto& kv : m.object_items) keys.append(py_key(kv.first));
        return keys;
      });

  // ---- buffers ----
  nb::class_<BufferNode, Object>(m, "Buffer")
      .def(nb::new_([](Var data, const std::string& t, std::vector<Expr> shape,
                       std::vector<Expr> strides, Expr elem_offset, const std::string& name,
                       int align, int offset_factor, std::optional<Span> s,
                       std::vector<int64_t> axis_separators) {
             transform::CheckAxisSeparators(axis_separators, shape.size(), OrEmpty(s));
             Buffer b = BufferNode::Make(data, DT(t), shape, strides, elem_offset, name, align,
                                         offset_factor, OrEmpty(s));
             b->axis_separators = std::move(axis_separators);
             return b;
           }),
           "data"_a, "dtype"_a, "shape"_a, "strides"_a = std::vector<Expr>(),
           "elem_offset"_a.none() = nb::none(), "name"_a = "", "data_alignment"_a = 64,
           "offset_factor"_a = 1, "span"_a = nb::none(),
           "axis_separators"_a = std::vector<int64_t>())
      .def_prop_ro("axis_separators",
                   [](const BufferNode& b) {
                     nb::list out;
                     for (int64_t s : b.axis_separators)
                       out.append(nb::cast(IntImmNode::Make(DataType::Int(32), s)));
                     return out;
                   })
      .def_static(
          "decl",
          [](const std::string& name, const std::string& t, std::vector<Expr> shape,
             const std::string& scope, std::optional<Span> s) {
            return BufferNode::Decl(name, DT(t), shape, scope, OrEmpty(s));
          },
          "name"_a, "dtype"_a, "shape"_a, "scope"_a = "global", "span"_a = nb::none())
      .def(
          "offset_of",
          [](const BufferNode& b, std::vector<Expr> indices) {
            return transform::BufferOffsetOf(GetRef(&b), indices);
          },
          "indices"_a, "The offsets of the element at `indices`, one per physical axis.")
      .def(
          "get_flattened_buffer",
          [](const BufferNode& b) { return transform::FlattenedBuffer(GetRef(&b)); },
          "The buffer with one dimension per physical axis, over the same data.")
      .def_ro("data", &BufferNode::data)
      .def_prop_ro("dtype", [](const BufferNode& b) { return PyDType(b.dtype); })
      .def_ro("shape", &BufferNode::shape)
      .def_ro("strides", &BufferNode::strides)
      .def_ro("elem_offset", &BufferNode::elem_offset)
      .def_ro("name", &BufferNode::name)
      .def_ro("data_alignment", &BufferNode::data_alignment)
      .def_ro("offset_factor", &BufferNode::offset_factor)
      .def("scope", &BufferNode::scope);

  // ---- statements ----
  nb::class_<StmtNode, Object>(m, "Stmt")
      .def_ro("span", &StmtNode::span)
      // TVM's copy protocol, `stmt.__setstate__(stmt.__getstate__())`: the state is a copy of
      // the statement (new statement nodes, fresh loop and block variables), and __setstate__
      // makes the statement that copy. Statements are not pickled (no file format holds them).
      .def("__getstate__",
           [](const StmtNode& s) {
             return nb::make_tuple("tessera.Stmt", CopyStmt(GetRef(&s)));
           })
      // (tessera.ir installs it as __setstate__: nanobind takes a bound __setstate__ for an
      // initializer of a new instance.)
      .def("_setstate",
           [](StmtNode& self, nb::handle state) {
             Stmt copy;
             if (nb::isinstance<nb::tuple>(state) && nb::len(state) == 2 &&
                 nb::isinstance<nb::str>(state[0]) &&
                 nb::cast<std::string>(state[0]) == "tessera.Stmt" &&
                 nb::isinstance<StmtNode>(state[1])) {
               copy = nb::cast<Stmt>(state[1]);
             }
             if (!copy || copy->kind != self.kind)
               TESSERA_THROW_KIND(Span(), ErrorKind::kType)
                   << "__setstate__ of a " << NodeKindName(self.kind)
                   << " expects the state its __getstate__ returns";
             // The Python handle is the only holder: changing the node changes no other IR.
             if (self.weak_from_this().use_count() != 1)
               TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
                   << "__setstate__: this " << NodeKindName(self.kind)
                   << " is part of other IR, which must not change; build a new statement";
             Stmt fresh = CopyStmt(copy);
             SwapStmtFields(&self, fresh.get());
           },
           "state"_a)
      .def("__deepcopy__", [](const StmtNode& s, nb::handle) { return CopyStmt(GetRef(&s)); },
           "memo"_a)
      .def("__reduce__", [](const StmtNode& s) -> nb::object {
        TESSERA_THROW_KIND(Span(), ErrorKind::kType)
            << "a " << NodeKindName(s.kind)
            << " cannot be pickled; save its PrimFunc or IRModule with tessera.ir.save_json";
      });
  nb::enum_<ForKind>(m, "ForKind", nb::is_arithmetic())
      .value("SERIAL", ForKind::kSerial)
      .value("PARALLEL", ForKind::kParallel)
      .value("VECTORIZED", ForKind::kVectorized)
      .value("UNROLLED", ForKind::kUnrolled)
      .value("THREAD_BINDING", ForKind::kThreadBinding);
  nb::enum_<IterVarType>(m, "IterVarType", nb::is_arithmetic())
      .value("DataPar", IterVarType::kDataPar)
      .value("ThreadIndex", IterVarType::kThreadIndex)
      .value("CommReduce", IterVarType::kCommReduce)
      .value("Ordered", IterVarType::kOrdered)
      .value("Opaque", IterVarType::kOpaque);
  auto iterVar_class = nb::class_<IterVarNode, Object>(m, "IterVar")
      .def(nb::new_(
               [](Range dom, Var v, IterVarType t, const std::string& tag, std::optional<Span> s) {
                 return IterVarNode::Make(dom, v, t, tag, OrEmpty(s));
               }),
           "dom"_a.none(), "var"_a, "iter_type"_a, "thread_tag"_a = "", "span"_a = nb::none())
      .def_ro("dom", &IterVarNode::dom)
      .def_ro("var", &IterVarNode::var)
      .def_ro("iter_type", &IterVarNode::iter_type)
      .def_ro("thread_tag", &IterVarNode::thread_tag);
  WithConstructorFallback(iterVar_class, "IterVar");
  auto letStmt_class = nb::class_<LetStmtNode, StmtNode>(m, "LetStmt")
      .def(nb::new_([](Var v, Expr val, Stmt body, std::optional<Span> s) {
             return LetStmtNode::Make(v, val, body, OrEmpty(s));
           }),
           "var"_a, "value"_a, "body"_a, "span"_a = nb::none())
      .def_ro("var", &LetStmtNode::var)
      .def_ro("value", &LetStmtNode::value)
      .def_ro("body", &LetStmtNode::body);
  WithConstructorFallback(letStmt_class, "LetStmt");
  auto attrStmt_class = nb::class_<AttrStmtNode, StmtNode>(m, "AttrStmt")
      .def(nb::new_([](ObjectRef node, const std::string& key, Expr v, Stmt body,
                       std::optional<Span> s) {
             return AttrStmtNode::Make(node, key, v, body, OrEmpty(s));
           }),
           "node"_a.none(), "attr_key"_a, "value"_a, "body"_a, "span"_a = nb::none())
      .def_ro("node", &AttrStmtNode::node)
      .def_ro("attr_key", &AttrStmtNode::attr_key)
      .def_ro("value", &AttrStmtNode::value)
      .def_ro("body", &AttrStmtNode::body);
  WithConstructorFallback(attrStmt_class, "AttrStmt");
  auto assertStmt_class = nb::class_<AssertStmtNode, StmtNode>(m, "AssertStmt")
      .def(nb::new_([](Expr c, Expr msg, Stmt body, std::optional<Span> s) {
             return AssertStmtNode::Make(c, msg, body, OrEmpty(s));
           }),
           "condition"_a, "message"_a, "body"_a, "span"_a = nb::none())
      // AssertStmt(cond, "message", body): a Python string message is a StringImm, as in TVM.
      .def(nb::new_([](Expr c, const std::string& msg, Stmt body, std::optional<Span> s) {
             return AssertStmtNode::Make(c, StringImmNode::Make(msg), body, OrEmpty(s));
           }),
           "condition"_a, "message"_a, "body"_a, "span"_a = nb::none())
      .def_ro("condition", &AssertStmtNode::condition)
      .def_ro("message", &AssertStmtNode::message)
      .def_ro("body", &AssertStmtNode::body);
  WithConstructorFallback(assertStmt_class, "AssertStmt");
  auto bufferStore_class = nb::class_<BufferStoreNode, StmtNode>(m, "BufferStore")
      .def(nb::new_([](Buffer b, Expr v, std::vector<Expr> idx, Expr pred, std::optional<Span> s) {
             return BufferStoreNode::Make(b, v, idx, pred, OrEmpty(s));
           }),
           "buffer"_a, "value"_a, "indices"_a, "predicate"_a.none() = nb::none(),
           "span"_a = nb::none())
      .def_ro("buffer", &BufferStoreNode::buffer)
      .def_ro("value", &BufferStoreNode::value)
      .def_ro("indices", &BufferStoreNode::indices)
      .def_ro("predicate", &BufferStoreNode::predicate);
  WithConstructorFallback(bufferStore_class, "BufferStore");
  auto allocate_class = nb::class_<AllocateNode, StmtNode>(m, "Allocate")
      .def(nb::new_([](Var v, const std::string& t, std::vector<Expr> ext, Expr cond, Stmt body,
                       AttrMap ann, std::optional<Span> s) {
             return AllocateNode::Make(v, DT(t), ext, cond, body, ann, OrEmpty(s));
           }),
           "buffer_var"_a, "dtype"_a, "extents"_a, "condition"_a.none(), "body"_a,
           "annotations"_a = AttrMap(), "span"_a = nb::none())
      .def_ro("buffer_var", &AllocateNode::buffer_var)
      .def_prop_ro("dtype", [](const AllocateNode& a) { return PyDType(a.dtype); })
      .def_ro("extents", &AllocateNode::extents)
      .def_ro("condition", &AllocateNode::condition)
      .def_ro("body", &AllocateNode::body)
      .def_ro("annotations", &AllocateNode::annotations);
  WithConstructorFallback(allocate_class, "Allocate");
  auto allocate_const_class =
      nb::class_<AllocateConstNode, StmtNode>(m, "AllocateConst")
          .def(nb::new_([](Var v, const std::string& t, std::vector<Expr> ext, nb::bytes data,
                           Stmt body, AttrMap ann, std::optional<Span> s) {
                 const auto* p = static_cast<const uint8_t*>(data.data());
                 return AllocateConstNode::Make(v, DT(t), ext,
                                                std::vector<uint8_t>(p, p + data.size()), body,
                                                ann, OrEmpty(s));
               }),
               "buffer_var"_a, "dtype"_a, "extents"_a, "data"_a, "body"_a,
               "annotations"_a = AttrMap(), "span"_a = nb::none())
          .def_ro("buffer_var", &AllocateConstNode::buffer_var)
          .def_prop_ro("dtype", [](const AllocateConstNode& a) { return PyDType(a.dtype); })
          .def_ro("extents", &AllocateConstNode::extents)
          .def_prop_ro("data_bytes",
                       [](const AllocateConstNode& a) {
                         return nb::bytes(reinterpret_cast<const char*>(a.data.data()),
                                          a.data.size());
                       })
          .def_ro("body", &AllocateConstNode::body)
          .def_ro("annotations", &AllocateConstNode::annotations);
  WithConstructorFallback(allocate_const_class, "AllocateConst");
  nb::class_<DeclBufferNode, StmtNode>(m, "DeclBuffer")
      .def(nb::new_([](Buffer b, Stmt body, std::optional<Span> s) {
             return DeclBufferNode::Make(b, body, OrEmpty(s));
           }),
           "buffer"_a, "body"_a, "span"_a = nb::none())
      .def_ro("buffer", &DeclBufferNode::buffer)
      .def_ro("body", &DeclBufferNode::body);
  auto for_class = nb::class_<ForNode, StmtNode>(m, "For")
      .def(nb::new_([](Var v, Expr min, Expr ext, ForKind k, Stmt body, IterVar tb, AttrMap ann,
                       Expr step, std::optional<Span> s) {
             return ForNode::Make(v, min, ext, k, body, tb, ann, OrEmpty(s), step);
           }),
           "loop_var"_a, "min"_a, "extent"_a, "kind"_a, "body"_a,
           "thread_binding"_a.none() = nb::none(), "annotations"_a = AttrMap(),
           "step"_a.none() = nb::none(), "span"_a = nb::none())
      .def_ro("loop_var", &ForNode::loop_var)
      .def_ro("min", &ForNode::min)
      .def_ro("extent", &ForNode::extent)
      .def_ro("kind", &ForNode::for_kind)
      .def_ro("body", &ForNode::body)
      .def_ro("thread_binding", &ForNode::thread_binding)
      .def_ro("annotations", &ForNode::annotations)
      .def_ro("step", &ForNode::step);
  WithConstructorFallback(for_class, "For");
  auto realize_class = nb::class_<BufferRealizeNode, StmtNode>(m, "BufferRealize")
      .def(nb::new_([](Buffer buffer, std::vector<Range> bounds, Expr condition, Stmt body,
                       std::optional<Span> s) {
             return BufferRealizeNode::Make(buffer, bounds, condition, body, OrEmpty(s));
           }),
           "buffer"_a, "bounds"_a, "condition"_a, "body"_a, "span"_a = nb::none())
      .def_ro("buffer", &BufferRealizeNode::buffer)
      .def_ro("bounds", &BufferRealizeNode::bounds)
      .def_ro("condition", &BufferRealizeNode::condition)
      .def_ro("body", &BufferRealizeNode::body);
  WithConstructorFallback(realize_class, "BufferRealize");
  nb::class_<WhileNode, StmtNode>(m, "While")
      .def(nb::new_([](Expr c, Stmt body, std::optional<Span> s) {
             return WhileNode::Make(c, body, OrEmpty(s));
           }),
           "condition"_a, "body"_a, "span"_a = nb::none())
      .def_ro("condition", &WhileNode::condition)
      .def_ro("body", &WhileNode::body);
  auto ifThenElse_class = nb::class_<IfThenElseNode, StmtNode>(m, "IfThenElse")
      .def(nb::new_([](Expr c, Stmt t, Stmt e, std::optional<Span> s) {
             return IfThenElseNode::Make(c, t, e, OrEmpty(s));
           }),
           "condition"_a, "then_case"_a, "else_case"_a.none() = nb::none(), "span"_a = nb::none())
      .def_ro("condition", &IfThenElseNode::condition)
      .def_ro("then_case", &IfThenElseNode::then_case)
      .def_ro("else_case", &IfThenElseNode::else_case);
  WithConstructorFallback(ifThenElse_class, "IfThenElse");
  nb::class_<SeqStmtNode, StmtNode>(m, "SeqStmt")
      .def(nb::new_([](std::vector<Stmt> seq, std::optional<Span> s) {
             return SeqStmtNode::Make(seq, OrEmpty(s));
           }),
           "seq"_a, "span"_a = nb::none())
      .def_ro("seq", &SeqStmtNode::seq)
      .def("__len__", [](const SeqStmtNode& s) { return s.seq.size(); });
  nb::class_<EvaluateNode, StmtNode>(m, "Evaluate")
      .def(
          nb::new_([](Expr v, std::optional<Span> s) { return EvaluateNode::Make(v, OrEmpty(s)); }),
          "value"_a, "span"_a = nb::none())
      .def(nb::new_([](int64_t v, std::optional<Span> s) {
             // tir.Evaluate(0): a Python int is an int32 constant, as in TVM.
             return EvaluateNode::Make(IntImmNode::Make(DataType::Int(32), v), OrEmpty(s));
           }),
           "value"_a, "span"_a = nb::none())
      .def_ro("value", &EvaluateNode::value);

  // ---- functions and modules ----
  nb::class_<GlobalVarNode, Object>(m, "GlobalVar")
      .def(nb::new_([](const std::string& n) { return GlobalVarNode::Make(n); }), "name_hint"_a)
      .def_ro("name_hint", &GlobalVarNode::name_hint);
  // dynamic_attr: the script parser sets __name__ (the Python function's name), as TVM's does.
  auto primFunc_class = nb::class_<PrimFuncNode, Object>(m, "PrimFunc", nb::dynamic_attr())
      // ret_type: a dtype name, an ir.PrimType, or None (void), as TVM takes it.
      .def(nb::new_([](std::vector<Var> params, Stmt body, nb::object ret,
                       std::optional<std::vector<std::pair<Var, Buffer>>> bmap,
                       std::optional<AttrMap> attrs, std::optional<Span> s) {
             DataType ret_type = DataType::Void();
             if (nb::isinstance<PrimTypeAnnotation>(ret)) {
               ret_type = nb::cast<PrimTypeAnnotation>(ret).dtype;
             } else if (!ret.is_none()) {
               ret_type = DT(nb::cast<std::string>(nb::str(ret)));
             }
             return PrimFuncNode::Make(params, bmap.value_or(std::vector<std::pair<Var, Buffer>>{}),
                                       body, ret_type, attrs.value_or(AttrMap{}), OrEmpty(s));
           }),
           "params"_a, "body"_a, "ret_type"_a.none() = nb::none(),
           "buffer_map"_a.none() = nb::none(), "attrs"_a.none() = nb::none(),
           "span"_a = nb::none())
      .def_ro("params", &PrimFuncNode::params)
      .def_ro("buffer_map", &PrimFuncNode::buffer_map)
      .def_ro("body", &PrimFuncNode::body)
      .def_prop_ro("ret_type", [](const PrimFuncNode& f) { return PyDType(f.ret_type); })
      .def_ro("attrs", &PrimFuncNode::attrs)
      .def_ro("span", &PrimFuncNode::span)
      .def("with_attr", [](const PrimFuncNode& f, const std::string& k,
                           ObjectRef v) { return f.WithAttr(k, v); })
      // Plain Python values as attributes: func.with_attr("global_symbol", "name").
      .def("with_attr", [](const PrimFuncNode& f, const std::string& k,
                           const std::string& v) { return f.WithAttr(k, StringImmNode::Make(v)); })
      .def("with_attr", [](const PrimFuncNode& f, const std::string& k,
                           bool v) { return f.WithAttr(k, Bool(v)); })
      .def("with_attr",
           [](const PrimFuncNode& f, const std::string& k, int64_t v) {
             return f.WithAttr(k, MakeConst(DataType::Int(v == int32_t(v) ? 32 : 64), v));
           })
      // TVM's func.with_attr({"k": v, ...}): several attributes at once.
      .def("with_attr",
           [](const PrimFuncNode& f, nb::dict attrs) {
             auto out = std::static_pointer_cast<const PrimFuncNode>(f.shared_from_this());
             PrimFunc result = std::const_pointer_cast<PrimFuncNode>(out);
             for (auto [key, value] : attrs) {
               std::string k = nb::cast<std::string>(key);
               ObjectRef v;
               if (nb::isinstance<nb::bool_>(value)) {
                 v = Bool(nb::cast<bool>(value));
               } else if (nb::isinstance<nb::int_>(value)) {
                 int64_t i = nb::cast<int64_t>(value);
                 v = MakeConst(DataType::Int(i == int32_t(i) ? 32 : 64), i);
               } else if (nb::isinstance<nb::str>(value)) {
                 v = StringImmNode::Make(nb::cast<std::string>(value));
               } else {
                 v = nb::cast<ObjectRef>(value);
               }
               result = result->WithAttr(k, v);
             }
             return result;
           })
      .def("with_body", [](const PrimFuncNode& f, Stmt b) { return f.WithBody(b); });
  WithConstructorFallback(primFunc_class, "PrimFunc");
  nb::class_<IRModuleNode, Object>(m, "IRModule", nb::dynamic_attr())
      .def(nb::new_([](std::vector<std::pair<GlobalVar, PrimFunc>> fns, AttrMap attrs) {
             return IRModuleNode::Make(fns, attrs);
           }),
           "functions"_a = std::vector<std::pair<GlobalVar, PrimFunc>>(), "attrs"_a = AttrMap())
      // TVM's IRModule({"main": func}) / IRModule({GlobalVar("main"): func}), in dict order;
      // IRModule(None, None) is the empty module.
      .def(nb::new_([](nb::object functions, nb::object attrs) {
             std::vector<std::pair<GlobalVar, PrimFunc>> entries;
             if (!functions.is_none() && !nb::isinstance<nb::dict>(functions)) {
               TESSERA_THROW_KIND(Span(), ErrorKind::kType)
                   << "IRModule: functions must be a dict of name -> PrimFunc, got "
                   << nb::str(functions.type()).c_str();
             }
             nb::dict fns = functions.is_none() ? nb::dict() : nb::borrow<nb::dict>(functions);
             for (auto [key, value] : fns) {
               GlobalVar gv = nb::isinstance<GlobalVarNode>(key)
                                  ? nb::cast<GlobalVar>(key)
                                  : GlobalVarNode::Make(nb::cast<std::string>(key));
               if (!nb::isinstance<PrimFuncNode>(value)) {
                 TESSERA_THROW_KIND(Span(), ErrorKind::kType)
                     << "IRModule: the value of '" << gv->name_hint << "' must be a PrimFunc, got "
                     << nb::str(value.type()).c_str();
               }
               entries.emplace_back(gv, nb::cast<PrimFunc>(value));
             }
             AttrMap attr_map = attrs.is_none() ? AttrMap() : nb::cast<AttrMap>(attrs);
             return IRModuleNode::Make(std::move(entries), std::move(attr_map));
           }),
           "functions"_a.none(), "attrs"_a.none() = nb::none())
      .def_static("from_func", &IRModuleNode::FromFunc, "func"_a, "name"_a = "main")
      // TVM's from_expr: the function's global_symbol names it, else "main".
      .def_static(
          "from_expr",
          [](PrimFunc func) {
            return IRModuleNode::FromFunc(func, func->GetStrAttr("global_symbol", "main"));
          },
          "expr"_a)
      // mod["f"] = func / mod[gv] = func: add or replace in place, as TVM's does.
      .def("__setitem__",
           [](IRModuleNode& m, nb::object key, PrimFunc func) {
             GlobalVar gv = nb::isinstance<GlobalVarNode>(key)
                                ? nb::cast<GlobalVar>(key)
                                : GlobalVarNode::Make(nb::cast<std::string>(key));
             for (auto& entry : m.functions) {
               if (entry.first->name_hint == gv->name_hint) {
                 entry.second = std::move(func);
                 return;
               }
             }
             m.functions.emplace_back(gv, std::move(func));
           })
      .def("__contains__",
           [](const IRModuleNode& m, nb::object key) {
             std::string name = nb::isinstance<GlobalVarNode>(key)
                                    ? nb::cast<GlobalVar>(key)->name_hint
                                    : nb::cast<std::string>(key);
             return static_cast<bool>(m.GetGlobalVar(name));
           })
      .def_ro("functions", &IRModuleNode::functions)
      .def_ro("attrs", &IRModuleNode::attrs)
      .def("get_global_var", &IRModuleNode::GetGlobalVar)
      .def("lookup", [](const IRModuleNode& m, const std::string& n) { return m.Lookup(n); })
      .def("with_function", &IRModuleNode::WithFunction)
      .def("__len__", [](const IRModuleNode& m) { return m.functions.size(); });

  nb::class_<OpNode, Object>(m, "Op")
      .def_static("get", &OpNode::Get, "name"_a)
      .def_static("exists", &OpNode::Exists, "name"_a)
      .def_static("list_names", &OpNode::ListNames)
      .def_ro("name", &OpNode::name)
      .def_ro("num_inputs", &OpNode::num_inputs)
      .def_prop_ro("effect", [](const OpNode& o) { return static_cast<int>(o.effect); },
                   "The CallEffect: 0 pure, 1 reads state, 2 writes state, 3 opaque.")
      .def_ro("description", &OpNode::description)
      .def("get_attr", &OpNode::GetStrAttr, "key"_a, "default"_a = "");

  m.def("structural_equal",
        [](ObjectRef a, ObjectRef b, bool map_free_vars, bool bind_free_buffers) {
          return CallWithLargeStack(
              [&] { return StructuralEqual(a, b, map_free_vars, bind_free_buffers); });
        },
        "a"_a.none(), "b"_a.none(), "map_free_vars"_a = false, "bind_free_buffers"_a = false);
  m.def("structural_equal_failure",
        [](ObjectRef a, ObjectRef b, bool map_free_vars, bool bind_free_buffers) {
          return CallWithLargeStack(
              [&] { return StructuralEqualFailure(a, b, map_free_vars, bind_free_buffers); });
        },
        "a"_a.none(), "b"_a.none(), "map_free_vars"_a = false, "bind_free_buffers"_a = false);
  // (reason, steps) of the first mismatch, or None: TVM's AccessPath steps as ("attr", name),
  // ("array_item", index), ("map_item", key) or ("map_item", key of a, key of b); an item one
  // side lacks as ("array_item_missing", index, side) / ("map_item_missing", key, side), side 1
  // when the first object lacks it, 2 when the second does.
  m.def("structural_equal_mismatch",
        [](ObjectRef a, ObjectRef b, bool map_free_vars, bool bind_free_buffers) -> nb::object {
          auto mismatch = CallWithLargeStack(
              [&] { return FindStructuralMismatch(a, b, map_free_vars, bind_free_buffers); });
          if (!mismatch) return nb::none();
          nb::list steps;
          for (const MismatchStep& step : mismatch->steps) {
            switch (step.kind) {
              case MismatchStep::Kind::kAttr:
                steps.append(nb::make_tuple("attr", step.name));
                break;
              case MismatchStep::Kind::kArrayItem:
                if (step.missing_side != 0) {
                  steps.append(nb::make_tuple("array_item_missing", step.index, step.missing_side));
                } else {
                  steps.append(nb::make_tuple("array_item", step.index));
                }
                break;
              case MismatchStep::Kind::kMapItem:
                if (step.missing_side != 0) {
                  if (step.key_a || step.key_b) {
                    steps.append(nb::make_tuple("map_item_missing",
                                                step.missing_side == 1 ? step.key_b : step.key_a,
                                                step.missing_side));
                  } else {
                    steps.append(
                        nb::make_tuple("map_item_missing", step.str_key, step.missing_side));
                  }
                } else if (step.key_a) {
                  steps.append(nb::make_tuple("map_item", step.key_a, step.key_b));
                } else {
                  steps.append(nb::make_tuple("map_item", step.str_key));
                }
                break;
            }
          }
          return nb::make_tuple(mismatch->reason, steps);
        },
        "a"_a.none(), "b"_a.none(), "map_free_vars"_a = false, "bind_free_buffers"_a = false);
  m.def("structural_hash",
        [](ObjectRef a, bool m) { return CallWithLargeStack([&] { return StructuralHash(a, m); }); },
        "node"_a,
        "map_free_vars"_a = false);
}

}  // namespace bindings
}  // namespace tessera
