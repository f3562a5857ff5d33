// Shared includes and helpers of the nanobind layer.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "tessera/ir/function.h"
#include "tessera/support/span.h"
#include "tessera/support/stack.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera {
namespace bindings {

inline Span OrEmpty(const std::optional<Span>& s) { return s ? *s : Span(); }

/*! \brief A dtype as Python sees it: an instance of tessera.ir.DataType (a str subclass) once
 *  that class has registered itself with `_core._set_dtype_class`, else a plain str. */
nb::object PyDType(const DataType& t);

/*! \brief The node `name` built by tessera.tir's normaliser from TVM's spellings of its
 *  constructor arguments (Python numbers for expressions, tuples for ranges, None for defaults);
 *  throws nb::next_overload when the normaliser does not apply, so the other overloads and
 *  nanobind's error message stay as they are. */
nb::object ConstructorFallback(const char* name, nb::args args, nb::kwargs kwargs);

/*! \brief Adds the normaliser above as the last overload of `cl`'s constructor, so that calls
 *  whose arguments are nodes never reach it. (A `__new__(cls, *args, **kwargs)` added by hand:
 *  nb::new_ would take it for a zero-argument constructor, which must come first.) */
template <class Class>
void WithConstructorFallback(Class& cl, const char* name) {
  cl.def_static("__new__", [name](nb::handle cls, nb::args args, nb::kwargs kwargs) {
    return ConstructorFallback(name, std::move(args), std::move(kwargs));
  });
  cl.def("__init__", [](nb::handle, nb::args, nb::kwargs) {});
}

void BindIR(nb::module_& m);
void BindBuilder(nb::module_& m);
void BindTIR(nb::module_& m);
void BindTransform(nb::module_& m);
void BindSchedule(nb::module_& m);
void BindHostRuntime(nb::module_& m);
void BindCUDA(nb::module_& m);
void BindTE(nb::module_& m);
void BindTarget(nb::module_& m);
void BindAutoSchedule(nb::module_& m);
void BindArithSolve(nb::module_& m);

}  // namespace bindings
}  // namespace tessera
