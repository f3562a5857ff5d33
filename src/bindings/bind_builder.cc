// Bindings of the IRBuilder used by the Python parsers.
#include "common.h"
#include "tessera/ir/ir_builder.h"

namespace tessera {
namespace bindings {

void BindBuilder(nb::module_& m) {
  nb::class_<IRBuilder>(m, "IRBuilder")
      .def(nb::init<>())
      .def("begin_function", &IRBuilder::BeginFunction, "name"_a, "span"_a = Span())
      .def("add_param", &IRBuilder::AddParam)
      .def("bind_param_buffer", &IRBuilder::BindParamBuffer)
      .def("set_return_type",
           [](IRBuilder& b, const std::string& t) { b.SetReturnType(DataType::Parse(t)); })
      .def("set_function_attr", &IRBuilder::SetFunctionAttr)
      .def("end_function", &IRBuilder::EndFunction)
      .def("emit", &IRBuilder::Emit)
      .def("emit_binder", &IRBuilder::EmitBinder, "binder"_a)
      .def("emit_let", &IRBuilder::EmitLet, "var"_a, "value"_a, "span"_a = Span())
      .def("emit_decl_buffer", &IRBuilder::EmitDeclBuffer, "buffer"_a, "span"_a = Span())
      .def(
          "emit_allocate",
          [](IRBuilder& b, Var v, const std::string& t, std::vector<Expr> ext, AttrMap ann,
             const Span& s) { b.EmitAllocate(v, DataType::Parse(t), ext, ann, s); },
          "buffer_var"_a, "dtype"_a, "extents"_a, "annotations"_a = AttrMap(), "span"_a = Span())
      .def("begin_for", &IRBuilder::BeginFor, "loop_var"_a, "min"_a, "extent"_a, "kind"_a,
           "thread_binding"_a.none() = nb::none(), "annotations"_a = AttrMap(), "span"_a = Span(),
           "step"_a.none() = nb::none())
      .def("end_for", &IRBuilder::EndFor)
      .def("begin_while", &IRBuilder::BeginWhile, "condition"_a, "span"_a = Span())
      .def("end_while", &IRBuilder::EndWhile)
      .def("begin_if", &IRBuilder::BeginIf, "condition"_a, "span"_a = Span())
      .def("begin_then", &IRBuilder::BeginThen)
      .def("end_then", &IRBuilder::EndThen)
      .def("begin_else", &IRBuilder::BeginElse)
      .def("end_else", &IRBuilder::EndElse)
      .def("end_if", &IRBuilder::EndIf)
      .def("begin_root", &IRBuilder::BeginRoot)
      .def("end_root", &IRBuilder::EndRoot)
      .def("begin_scope", &IRBuilder::BeginScope)
      .def("end_scope", &IRBuilder::EndScope)
      .def("begin_block", &IRBuilder::BeginBlock, "name"_a, "no_realize"_a = false,
           "span"_a = Span())
      .def("add_block_iter", &IRBuilder::AddBlockIter, "iter_var"_a, "value"_a)
      .def("set_block_reads", &IRBuilder::SetBlockReads, "regions"_a)
      .def("set_block_writes", &IRBuilder::SetBlockWrites, "regions"_a)
      .def("set_block_predicate", &IRBuilder::SetBlockPredicate, "predicate"_a)
      .def("set_block_attrs", &IRBuilder::SetBlockAttrs, "attrs"_a)
      .def("alloc_buffer", &IRBuilder::AllocBuffer, "buffer"_a)
      .def("add_match_buffer", &IRBuilder::AddMatchBuffer, "match"_a)
      .def("begin_init", &IRBuilder::BeginInit, "span"_a = Span())
      .def("end_init", &IRBuilder::EndInit)
      .def("end_block", &IRBuilder::EndBlock)
      .def_prop_ro("in_block", &IRBuilder::InBlock)
      .def_prop_ro("depth", &IRBuilder::depth);
  // TVM's `IRBuilder.name(s, v)`: names a variable or buffer the builder made unnamed. Only the
  // name hint changes (it takes no part in structural equality or hashing).
  m.def("set_name_hint", [](nb::handle obj, const std::string& name) {
    if (nb::isinstance<VarNode>(obj)) {
      nb::cast<VarNode&>(obj).name = name;
    } else if (nb::isinstance<BufferNode>(obj)) {
      auto& buffer = nb::cast<BufferNode&>(obj);
      buffer.name = name;
      const_cast<VarNode*>(buffer.data.get())->name = name;
    } else {
      throw nb::type_error("set_name_hint names a Var or a Buffer");
    }
  });
}

}  // namespace bindings
}  // namespace tessera
