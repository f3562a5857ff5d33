// The tessera._core extension: error translation and the per-layer bindings.
#include <nanobind/nanobind.h>

#include "common.h"
#include "tessera/support/diagnostic.h"
#include "tessera/support/error.h"

namespace tessera {
namespace bindings {
namespace {

// Python exception classes by ErrorKind, installed by tessera.error at import.
nb::dict& ExceptionClasses() {
  static nb::dict* classes = new nb::dict();
  return *classes;
}

const char* KindKey(ErrorKind k, bool has_span) {
  switch (k) {
    case ErrorKind::kDiagnostic:
      return "diagnostic";
    case ErrorKind::kType:
      return has_span ? "diagnostic" : "type";
    case ErrorKind::kValue:
      return has_span ? "diagnostic_value" : "value";
    case ErrorKind::kRuntime:
      return "runtime";
    case ErrorKind::kAttribute:
      return has_span ? "diagnostic" : "attribute";
    case ErrorKind::kSchedule:
      return "schedule";
    case ErrorKind::kBuild:
      return "build";
  }
  return "diagnostic";
}

void Translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    nb::dict& classes = ExceptionClasses();
    const char* key = KindKey(e.kind(), e.span().defined());
    if (!classes.contains(key) && e.span().defined()) key = "diagnostic";
    if (!classes.contains(key)) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      return;
    }
    nb::object cls = classes[key];
    nb::object file = e.span().defined() ? nb::cast(e.span().file_name()) : nb::none();
    nb::object exc = cls(std::string(e.what()), e.message(), file, e.span().line,
                         e.span().column);
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (const InternalError& e) {
    nb::dict& classes = ExceptionClasses();
    if (classes.contains("internal")) {
      nb::object cls = classes["internal"];
      PyErr_SetObject(cls.ptr(), cls(std::string(e.what())).ptr());
    } else {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  }
}

}  // namespace
}  // namespace bindings
}  // namespace tessera

namespace tessera {
namespace bindings {
void BindIterMap(nb::module_& m);  // bind_arith.cc
}  // namespace bindings
}  // namespace tessera

NB_MODULE(_core, m) {
  using namespace tessera;
  using namespace tessera::bindings;
  m.attr("__version__") = TESSERA_VERSION;
  nb::register_exception_translator(Translate);
  m.def("_set_exception_classes", [](nb::dict d) {
    ExceptionClasses().clear();
    for (auto [k, v] : d) ExceptionClasses()[k] = v;
  });
  m.def("register_source", &RegisterSource, "file"_a, "text"_a,
        "Remember a source text so diagnostics can quote its lines.");
  m.def("render_diagnostic",
        [](const Span& span, const std::string& msg) { return RenderDiagnostic(span, msg); },
        "span"_a, "message"_a);
  BindIR(m);
  BindTIR(m);
  BindBuilder(m);
  BindTE(m);
  BindTarget(m);
  BindTransform(m);
  BindHostRuntime(m);
  BindCUDA(m);
  BindSchedule(m);
  BindAutoSchedule(m);
  BindIterMap(m);
  BindArithSolve(m);
}
