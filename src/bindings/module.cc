// Placeholder extension module; replaced by the real bindings.
#include <nanobind/nanobind.h>

NB_MODULE(_core, m) { m.attr("__version__") = "0.1.0"; }
