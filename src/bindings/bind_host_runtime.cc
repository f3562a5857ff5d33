// Bindings of host libraries: NDArray, packed calls with Python arguments, time evaluation and
// loading exported libraries.
#include <nanobind/ndarray.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "common.h"
#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/cuda/emulator.h"
#include "tessera/runtime/guarded_call.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/runtime/registry.h"
#include "tessera/support/error.h"

namespace tessera {
namespace bindings {
namespace {

using runtime::ModuleNode;
using runtime::NDArray;
using runtime::PackedArgs;
using runtime::PackedFunctionInfo;

// Python types the call path recognises by their type object, set by tessera.runtime at import
// (`_set_call_types`): numpy.ndarray, read through the buffer protocol, and tessera's NDArray
// wrapper, whose `_handle` is passed.
struct CallTypes {
  PyTypeObject* numpy_array = nullptr;
  PyTypeObject* nd_wrapper = nullptr;
  PyObject* handle_attr = nullptr;  // "_handle", interned
};
CallTypes& FastTypes() {
  static CallTypes types;
  return types;
}

// Arguments held inline by ArgStorage (more go to the heap), and the most dimensions of a numpy
// array read through the buffer protocol (more take the DLPack path).
constexpr size_t kInlineArgs = 8;
constexpr int kBufferDims = 8;

// The tensor of one argument read through the buffer protocol: the view holds the array's
// memory until the call returns; its strides, in bytes there, are in elements here.
struct BufferSlot {
  TesseraDLTensor tensor;
  int64_t strides[kBufferDims];
  Py_buffer view;
};
static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "the buffer's shape is passed as it is");

// Everything a packed call's arguments point into, alive until the call returns. The first
// kInlineArgs values, codes and tensors live in the object itself (no allocation per call).
class ArgStorage {
 public:
  ArgStorage() = default;
  ArgStorage(const ArgStorage&) = delete;
  ArgStorage& operator=(const ArgStorage&) = delete;
  ~ArgStorage() {
    for (size_t i = 0; i < views_; ++i) PyBuffer_Release(&slot(held()[i]).view);
  }

  void Reset(size_t n) {
    n_ = n;
    if (n > kInlineArgs) {
      heap_values_.resize(n);
      heap_codes_.resize(n);
      heap_tensors_.resize(n);
      heap_slots_.reset(new BufferSlot[n]);
      heap_held_.resize(n);
    }
  }
  size_t size() const { return n_; }
  TesseraValue* values() { return n_ > kInlineArgs ? heap_values_.data() : values_; }
  int32_t* codes() { return n_ > kInlineArgs ? heap_codes_.data() : codes_; }
  // The descriptor of argument i when it is read by nanobind or from __array_interface__.
  TesseraDLTensor& tensor(size_t i) { return n_ > kInlineArgs ? heap_tensors_[i] : tensors_[i]; }
  BufferSlot& slot(size_t i) { return n_ > kInlineArgs ? heap_slots_[i] : slots_[i]; }
  size_t* held() { return n_ > kInlineArgs ? heap_held_.data() : held_; }
  // Argument i's buffer view is filled: release it with the storage.
  void Hold(size_t i) { held()[views_++] = i; }

  void SetInt(size_t i, int64_t v) {
    values()[i].v_int64 = v;
    codes()[i] = TESSERA_ARG_INT;
  }
  void SetFloat(size_t i, double v) {
    values()[i].v_float64 = v;
    codes()[i] = TESSERA_ARG_FLOAT;
  }
  void SetNull(size_t i) {
    values()[i].v_handle = nullptr;
    codes()[i] = TESSERA_ARG_NULL;
  }
  void SetTensor(size_t i, TesseraDLTensor* t, bool readonly = false) {
    values()[i].v_handle = t;
    codes()[i] = readonly ? TESSERA_ARG_DLTENSOR_READONLY : TESSERA_ARG_DLTENSOR;
  }
  // The arguments as a PackedArgs (a copy, for the time evaluator).
  runtime::PackedArgs Packed() {
    runtime::PackedArgs a;
    a.values.assign(values(), values() + n_);
    a.codes.assign(codes(), codes() + n_);
    return a;
  }

  std::vector<nb::ndarray<>> arrays;  // their shape and stride arrays are what tensors point at
  std::vector<nb::ndarray<nb::ro>> readonly_arrays;
  // Shapes and strides of arrays read from __array_interface__ (each inner vector's data stays
  // where it is when the outer one grows).
  std::vector<std::vector<int64_t>> dims;
  std::vector<nb::object> keep;  // converted arguments (a wrapper's handle, a 0-d array's item)

 private:
  size_t n_ = 0, views_ = 0;
  TesseraValue values_[kInlineArgs];
  int32_t codes_[kInlineArgs];
  TesseraDLTensor tensors_[kInlineArgs];
  BufferSlot slots_[kInlineArgs];
  size_t held_[kInlineArgs];
  std::vector<TesseraValue> heap_values_;
  std::vector<int32_t> heap_codes_;
  std::vector<TesseraDLTensor> heap_tensors_;
  std::unique_ptr<BufferSlot[]> heap_slots_;
  std::vector<size_t> heap_held_;
};

std::string ParamLabel(const PackedFunctionInfo& f, size_t i) {
  if (f.dsl) {
    if (i < f.params.size()) return "argument '" + f.params[i].name + "' of " + f.name + "()";
    return "argument " + std::to_string(i) + " of " + f.name + "()";
  }
  if (i < f.params.size()) return f.name + "." + f.params[i].name;
  return f.name + ": argument " + std::to_string(i);
}

// Python numbers and numpy scalars; arrays (which also define __index__ and __float__ for
// their 0-d case) have a length.
bool IsNumber(nb::handle h) {
  if (PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr())) return true;
  if (nb::hasattr(h, "__len__")) return false;
  return PyIndex_Check(h.ptr()) || nb::hasattr(h, "__float__");
}

// Whether `v` fits the integer type named `dtype` ("int32", "uint8"); other names fit anything.
bool FitsIntType(long long v, const std::string& dtype) {
  bool is_uint = dtype.rfind("uint", 0) == 0;
  if (!is_uint && dtype.rfind("int", 0) != 0) return true;
  int bits = std::atoi(dtype.c_str() + (is_uint ? 4 : 3));
  if (bits <= 0 || bits >= 64) return is_uint ? v >= 0 || bits >= 64 : true;
  if (is_uint) return v >= 0 && v < (1LL << bits);
  return v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1));
}

// Argument i, a number; `int_dtype` is the dtype of an int parameter ("" for others).
void AddNumber(ArgStorage& s, size_t i, nb::handle h, const PackedFunctionInfo& f,
               const std::string& int_dtype) {
  if (PyBool_Check(h.ptr())) {
    s.SetInt(i, h.ptr() == Py_True ? 1 : 0);
  } else if (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())) {
    int overflow = 0;
    nb::object index = nb::steal(PyNumber_Index(h.ptr()));
    if (!index.is_valid()) throw nb::python_error();
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (v == -1 && !overflow && PyErr_Occurred()) throw nb::python_error();
    if (overflow) {
      throw nb::value_error((ParamLabel(f, i) + " = " + nb::cast<std::string>(nb::str(h)) +
                             " does not fit a 64-bit integer")
                                .c_str());
    }
    if (!int_dtype.empty() && !FitsIntType(v, int_dtype)) {
      throw nb::value_error((ParamLabel(f, i) + " = " + std::to_string(v) +
                             " is out of range for " + int_dtype)
                                .c_str());
    }
    s.SetInt(i, v);
  } else {
    // A float for an int parameter is passed as it is: the library reports the mismatch in
    // its own words ("Expect arg[i] to be int").
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    s.SetFloat(i, v);
  }
}

// numpy arrays of ml_dtypes' bfloat16 have no DLPack export: they are read through
// __array_interface__. Returns false for anything else.
bool ReadBFloat16Array(ArgStorage& s, nb::handle h, TesseraDLTensor* t, bool* readonly) {
  if (!nb::hasattr(h, "__array_interface__") || !nb::hasattr(h, "dtype")) return false;
  nb::object dtype = h.attr("dtype");
  if (!nb::hasattr(dtype, "name") || nb::cast<std::string>(nb::str(dtype.attr("name"))) != "bfloat16")
    return false;
  nb::dict ai = nb::cast<nb::dict>(h.attr("__array_interface__"));
  nb::tuple data = nb::cast<nb::tuple>(ai["data"]);
  std::vector<int64_t>& shape = s.dims.emplace_back();
  for (nb::handle d : nb::cast<nb::tuple>(ai["shape"])) shape.push_back(nb::cast<int64_t>(d));
  *t = TesseraDLTensor{};
  t->data = reinterpret_cast<void*>(nb::cast<uintptr_t>(data[0]));
  t->device = {TESSERA_DEVICE_CPU, 0};
  t->ndim = static_cast<int32_t>(shape.size());
  t->dtype = {TESSERA_DL_BFLOAT, 16, 1};
  t->shape = shape.data();
  if (ai.contains("strides") && !ai["strides"].is_none()) {
    std::vector<int64_t>& strides = s.dims.emplace_back();
    for (nb::handle d : nb::cast<nb::tuple>(ai["strides"])) strides.push_back(nb::cast<int64_t>(d) / 2);
    t->strides = strides.data();
  }
  *readonly = nb::cast<bool>(data[1]);
  return true;
}

// The DLPack type code of a buffer's element format: the formats numpy gives its bool,
// integer and float16/32/64 arrays in native byte order. -1 for any other (structured,
// complex, long double, byte-swapped): such arrays take the DLPack path.
int BufferTypeCode(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) return -1;
  if (*format == '@' || *format == '=' || *format == '<') {
    // '<' is the native order only on a little-endian host.
    if (*format == '<' && !(PY_LITTLE_ENDIAN)) return -1;
    ++format;
  }
  if (format[0] == '\0' || format[1] != '\0') return -1;
  bool int_size = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
  switch (format[0]) {
    case 'b': case 'h': case 'i': case 'l': case 'q':
      return int_size ? TESSERA_DL_INT : -1;
    case 'B': case 'H': case 'I': case 'L': case 'Q':
      return int_size ? TESSERA_DL_UINT : -1;
    case 'e': case 'f': case 'd':
      return itemsize == 2 || itemsize == 4 || itemsize == 8 ? TESSERA_DL_FLOAT : -1;
    case '?':
      return itemsize == 1 ? TESSERA_DL_BOOL : -1;
    default:
      return -1;
  }
}

// Argument i, a numpy.ndarray, read through the buffer protocol into the descriptor its DLPack
// export would give (the data pointer, shape, strides in elements, byte offset 0). Returns
// false, having read nothing, for an array this path does not take (its dtype, more than
// kBufferDims dimensions, a stride that is not a whole number of elements); the DLPack path
// then reads it (and reports it) as before.
bool AddBufferArray(ArgStorage& s, size_t i, nb::handle h, const PackedFunctionInfo& f) {
  BufferSlot& slot = s.slot(i);
  Py_buffer& view = slot.view;
  if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  int code = BufferTypeCode(view.format, view.itemsize);
  bool ok = code >= 0 && view.ndim <= kBufferDims && (view.shape != nullptr || view.ndim == 0);
  for (int k = 0; ok && k < view.ndim; ++k) {
    ok = view.strides != nullptr && view.strides[k] % view.itemsize == 0;
    if (ok) slot.strides[k] = view.strides[k] / view.itemsize;
  }
  if (!ok) {
    PyBuffer_Release(&view);
    return false;
  }
  s.Hold(i);
  if (view.readonly && !f.dsl) {
    throw nb::type_error(
        (ParamLabel(f, i) + " is a read-only array; pass a writable one (e.g. a copy)").c_str());
  }
  TesseraDLTensor& t = slot.tensor;
  t.data = view.buf;
  t.device = {TESSERA_DEVICE_CPU, 0};
  t.ndim = view.ndim;
  t.dtype = {static_cast<uint8_t>(code), static_cast<uint8_t>(view.itemsize * 8), 1};
  t.shape = view.ndim == 0 ? slot.strides : reinterpret_cast<int64_t*>(view.shape);
  t.strides = slot.strides;
  t.byte_offset = 0;
  s.SetTensor(i, &t, view.readonly != 0);
  return true;
}

// An array argument. Read-only arrays are refused here, except for DSL kernels, whose entry
// point refuses them only for the pointers it writes through.
void AddArray(ArgStorage& s, size_t i, nb::handle h, const PackedFunctionInfo& f) {
  if (nb::isinstance<NDArray>(h)) {
    s.SetTensor(i, nb::cast<const NDArray&>(h).dltensor());
    return;
  }
  TesseraDLTensor& t = s.tensor(i);
  t = TesseraDLTensor{};
  bool readonly = false;
  nb::ndarray<> arr;
  nb::ndarray<nb::ro> ro;
  auto from = [&](const auto& a) {
    t.data = const_cast<void*>(static_cast<const void*>(a.data()));
    t.device = {a.device_type(), a.device_id()};
    t.ndim = static_cast<int32_t>(a.ndim());
    t.dtype = {a.dtype().code, a.dtype().bits, a.dtype().lanes};
    t.shape = const_cast<int64_t*>(a.shape_ptr());
    t.strides = const_cast<int64_t*>(a.stride_ptr());
  };
  if (nb::try_cast(h, arr, false)) {
    from(arr);
    s.arrays.push_back(std::move(arr));
  } else if (nb::try_cast(h, ro, false)) {
    from(ro);
    s.readonly_arrays.push_back(std::move(ro));
    readonly = true;
  } else if (!ReadBFloat16Array(s, h, &t, &readonly)) {
    std::string type = nb::cast<std::string>(nb::str(h.type().attr("__name__")));
    throw nb::type_error((ParamLabel(f, i) +
                          (f.dsl ? " must be a numpy array, got "
                                 : " must be an array (ts.nd.array, numpy or another DLPack "
                                   "array), got ") +
                          type)
                             .c_str());
  }
  if (readonly && !f.dsl) {
    throw nb::type_error(
        (ParamLabel(f, i) + " is a read-only array; pass a writable one (e.g. a copy)").c_str());
  }
  s.SetTensor(i, &t, readonly);
}

// Argument i of a call as an owned reference (a list may change under a conversion that runs
// Python code).
nb::object ArgAt(nb::handle values, size_t i) {
  PyObject* seq = values.ptr();
  if (PyTuple_Check(seq)) return nb::borrow(PyTuple_GET_ITEM(seq, Py_ssize_t(i)));
  if (PyList_Check(seq)) return nb::borrow(PyList_GET_ITEM(seq, Py_ssize_t(i)));
  nb::object item = nb::steal(PySequence_GetItem(seq, Py_ssize_t(i)));
  if (!item.is_valid()) throw nb::python_error();
  return item;
}

const std::string& NoDType() {
  static const std::string empty;
  return empty;
}

// Converts Python arguments by the kinds the library's metadata gives; anything the library
// checks itself (count, kinds, shapes) is passed on for it to report.
void PackArguments(ArgStorage& s, const PackedFunctionInfo& f, nb::handle values) {
  size_t n = PyTuple_Check(values.ptr())  ? size_t(PyTuple_GET_SIZE(values.ptr()))
             : PyList_Check(values.ptr()) ? size_t(PyList_GET_SIZE(values.ptr()))
                                          : nb::len(values);
  s.Reset(n);
  const CallTypes& types = FastTypes();
  for (size_t i = 0; i < n; ++i) {
    // A list shortened under us by an argument's conversion: the library counts what is left.
    if (PyList_Check(values.ptr()) && i >= size_t(PyList_GET_SIZE(values.ptr()))) {
      throw nb::index_error("list index out of range");
    }
    nb::object h = ArgAt(values, i);
    // (std::string == std::string compares the sizes first; == "literal" calls strlen+memcmp.)
    static const std::string kNone, kInt = "int", kFloat = "float", kBool = "bool";
    const std::string& kind = i < f.params.size() ? f.params[i].kind : kNone;
    bool scalar = kind == kInt || kind == kFloat || kind == kBool;
    if (Py_TYPE(h.ptr()) == types.numpy_array) {
      if (!scalar && AddBufferArray(s, i, h, f)) continue;
    } else if (types.nd_wrapper != nullptr && PyObject_TypeCheck(h.ptr(), types.nd_wrapper)) {
      // tessera's NDArray wrapper: its handle (what tessera.runtime passed before it came here).
      h = nb::steal(PyObject_GetAttr(h.ptr(), types.handle_attr));
      if (!h.is_valid()) throw nb::python_error();
      s.keep.push_back(h);
    }
    // A DSL kernel takes a 0-d array for a scalar, as numpy code often has one.
    if (f.dsl && scalar && nb::hasattr(h, "ndim") && nb::hasattr(h, "item") &&
        !nb::isinstance<NDArray>(h) && nb::cast<int>(h.attr("ndim")) == 0) {
      h = h.attr("item")();
      s.keep.push_back(h);
    }
    if (h.is_none()) {
      s.SetNull(i);
    } else if (nb::isinstance<NDArray>(h) || (!IsNumber(h) && !scalar)) {
      AddArray(s, i, h, f);
    } else if (IsNumber(h)) {
      AddNumber(s, i, h, f, kind == kInt ? f.params[i].dtype : NoDType());
    } else {
      std::string type = nb::cast<std::string>(nb::str(h.type().attr("__name__")));
      bool integer = f.dsl && kind != kFloat;
      throw nb::type_error((ParamLabel(f, i) +
                            (integer ? " must be an integer (" : " must be a number (") +
                            f.params[i].dtype + "), got " + type)
                               .c_str());
    }
  }
}

nb::object ReturnValue(const PackedFunctionInfo& f, const runtime::PackedResult& r) {
  static const std::string kVoid = "void";
  if (r.code == TESSERA_ARG_NULL || f.ret == kVoid) return nb::none();
  if (r.code == TESSERA_ARG_BOOL) return nb::bool_(r.value.v_int64 != 0);
  if (r.code == TESSERA_ARG_FLOAT) return nb::float_(r.value.v_float64);
  if (f.ret.rfind("uint64", 0) == 0) return nb::int_(static_cast<uint64_t>(r.value.v_int64));
  return nb::int_(r.value.v_int64);
}

// A Python callable held by the registry: released with the GIL held, whichever thread drops it.
struct PyCallable {
  nb::object f;
  explicit PyCallable(nb::object fn) : f(std::move(fn)) {}
  ~PyCallable() {
    nb::gil_scoped_acquire gil;
    f.reset();
  }
};

// The Python view of one packed argument; DLTensors become ("dltensor", data, shape, strides,
// dtype, byte_offset, device_type, device_id) for tessera.runtime.registry to wrap.
nb::object PyArg(const TesseraValue& v, int32_t code) {
  switch (code) {
    case TESSERA_ARG_INT:
    case TESSERA_ARG_UINT:
      return nb::int_(v.v_int64);
    case TESSERA_ARG_BOOL:
      return nb::bool_(v.v_int64 != 0);
    case TESSERA_ARG_FLOAT:
      return nb::float_(v.v_float64);
    case TESSERA_ARG_NULL:
      return nb::none();
    case TESSERA_ARG_STR:
      return v.v_handle ? nb::object(nb::str(static_cast<const char*>(v.v_handle))) : nb::none();
    case TESSERA_ARG_DLTENSOR: {
      auto* t = static_cast<const TesseraDLTensor*>(v.v_handle);
      nb::list shape, strides;
      for (int i = 0; i < t->ndim; ++i) {
        shape.append(t->shape[i]);
        if (t->strides) strides.append(t->strides[i]);
      }
      DataType e;
      switch (t->dtype.code) {
        case TESSERA_DL_INT: e = DataType::Int(t->dtype.bits); break;
        case TESSERA_DL_UINT: e = DataType::UInt(t->dtype.bits); break;
        case TESSERA_DL_FLOAT: e = DataType::Float(t->dtype.bits); break;
        case TESSERA_DL_BFLOAT: e = DataType::BFloat16(); break;
        case TESSERA_DL_BOOL: e = DataType::Bool(); break;
        default: e = DataType(static_cast<DataType::Code>(t->dtype.code), t->dtype.bits); break;
      }
      std::string dtype = e.with_lanes(t->dtype.lanes).ToString();
      return nb::make_tuple("dltensor", reinterpret_cast<uintptr_t>(t->data), nb::tuple(shape),
                            t->strides ? nb::object(nb::tuple(strides)) : nb::none(), dtype,
                            t->byte_offset, t->device.device_type, t->device.device_id);
    }
    default:
      // An opaque handle is a ctypes.c_void_p, as TVM passes it (NULL: None).
      if (v.v_handle == nullptr) return nb::none();
      return nb::module_::import_("ctypes").attr("c_void_p")(
          nb::int_(reinterpret_cast<uintptr_t>(v.v_handle)));
  }
}

}  // namespace

void BindHostRuntime(nb::module_& m) {
  m.def(
      "register_global_func",
      [](const std::string& name, nb::object f, bool override) {
        auto holder = std::make_shared<PyCallable>(std::move(f));
        runtime::RegisterGlobalFunction(
            name,
            [holder](const TesseraValue* args, const int32_t* codes, int32_t n, TesseraValue* ret,
                     int32_t* ret_code) {
              nb::gil_scoped_acquire gil;
              try {
                nb::list py;
                for (int32_t i = 0; i < n; ++i) py.append(PyArg(args[i], codes[i]));
                nb::object r = holder->f(*nb::tuple(py));
                if (r.is_none()) {
                  *ret_code = TESSERA_ARG_NULL;
                } else if (nb::isinstance<nb::bool_>(r) || nb::isinstance<nb::int_>(r)) {
                  ret->v_int64 = nb::cast<int64_t>(r);
                  *ret_code = TESSERA_ARG_INT;
                } else if (nb::isinstance<nb::float_>(r)) {
                  ret->v_float64 = nb::cast<double>(r);
                  *ret_code = TESSERA_ARG_FLOAT;
                } else if (nb::isinstance(r, nb::module_::import_("ctypes").attr("c_void_p"))) {
                  nb::object value = r.attr("value");
                  ret->v_handle = value.is_none()
                                      ? nullptr
                                      : reinterpret_cast<void*>(nb::cast<uintptr_t>(value));
                  *ret_code = value.is_none() ? TESSERA_ARG_NULL : TESSERA_ARG_HANDLE;
                } else {
                  *ret_code = TESSERA_ARG_NULL;
                }
              } catch (nb::python_error& e) {
                // "ValueError: message", without the traceback through the interpreter.
                std::string msg;
                try {
                  msg = nb::cast<std::string>(nb::str(e.type().attr("__name__"))) + ": " +
                        nb::cast<std::string>(nb::str(e.value()));
                } catch (...) {
                  msg = e.what();
                }
                throw std::runtime_error(msg);
              }
            },
            override);
      },
      "name"_a, "f"_a, "override"_a = false,
      "Register a Python function that T.call_packed(name, ...) calls.");
  m.def("remove_global_func", &runtime::RemoveGlobalFunction, "name"_a);
  m.def("list_global_funcs", &runtime::ListGlobalFunctions);
  m.def("has_global_func", [](const std::string& name) {
    return runtime::GetGlobalFunction(name) != nullptr;
  });

  nb::class_<NDArray>(m, "NDArrayHandle")
      .def_prop_ro("shape", [](const NDArray& a) { return a.shape(); })
      .def_prop_ro("dtype", [](const NDArray& a) { return PyDType(a.dtype()); })
      .def_prop_ro("device_type", [](const NDArray& a) { return a.device().device_type; })
      .def_prop_ro("device_id", [](const NDArray& a) { return a.device().device_id; })
      .def_prop_ro("nbytes", &NDArray::nbytes)
      .def_prop_ro("byte_offset", &NDArray::byte_offset)
      .def(
          "create_view",
          [](const NDArray& a, std::vector<int64_t> shape, const std::string& dtype,
             int64_t relative_byte_offset) {
            return a.CreateView(std::move(shape), DataType::Parse(dtype), relative_byte_offset);
          },
          "shape"_a, "dtype"_a, "relative_byte_offset"_a = 0)
      .def_prop_ro("data_ptr",
                   [](const NDArray& a) { return reinterpret_cast<uintptr_t>(a.data()); })
      .def("copy_from_ptr",
           [](NDArray& a, uintptr_t ptr, int64_t nbytes) {
             if (nbytes != a.nbytes()) throw nb::value_error("copy size does not match the array");
             a.CopyFromHost(reinterpret_cast<const void*>(ptr), nbytes);
           })
      .def("copy_to_ptr", [](const NDArray& a, uintptr_t ptr, int64_t nbytes) {
        if (nbytes != a.nbytes()) throw nb::value_error("copy size does not match the array");
        a.CopyToHost(reinterpret_cast<void*>(ptr), nbytes);
      });
  // DLPack out: a view that keeps the array alive (torch.from_dlpack, cupy.from_dlpack, numpy).
  m.def("nd_to_dlpack", [](const NDArray& a) {
    if (a.device().device_type == TESSERA_DEVICE_CUDA && runtime::cuda::emu::Enabled()) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
          << "cannot export an array of cuda(" << a.device().device_id
          << ") through DLPack: under the CUDA emulator (TESSERA_CUDA_EMULATOR=1) it lives in "
             "host memory, and torch or cupy would take it for GPU memory; copy it out with "
             ".numpy() instead";
    }
    auto* keep = new NDArray(a);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<NDArray*>(p); });
    std::vector<size_t> shape(a.shape().begin(), a.shape().end());
    TesseraDLDataType t = runtime::ToDLDataType(a.dtype());
    return nb::ndarray<>(a.data(), shape.size(), shape.data(), owner, nullptr,
                         nb::dlpack::dtype{t.code, t.bits, t.lanes}, a.device().device_type,
                         a.device().device_id);
  });
  // DLPack in: a compact copy on the array's own device.
  m.def("nd_from_dlpack", [](nb::handle h) {
    nb::ndarray<> arr;
    if (!nb::try_cast(h, arr, false)) throw nb::type_error("expected a DLPack-capable array");
    DataType dtype;
    auto dt = arr.dtype();
    switch (dt.code) {
      case TESSERA_DL_INT:
        dtype = DataType::Int(dt.bits);
        break;
      case TESSERA_DL_UINT:
        dtype = DataType::UInt(dt.bits);
        break;
      case TESSERA_DL_FLOAT:
        dtype = DataType::Float(dt.bits);
        break;
      case TESSERA_DL_BFLOAT:
        dtype = DataType::BFloat16();
        break;
      case TESSERA_DL_BOOL:
        dtype = DataType::Bool();
        break;
      default:
        throw nb::type_error("unsupported DLPack dtype");
    }
    std::vector<int64_t> shape;
    int64_t expect = 1;
    bool compact = true;
    for (size_t k = arr.ndim(); k-- > 0;) {
      if (arr.shape(k) != 1 && arr.stride(k) != expect) compact = false;
      expect *= int64_t(arr.shape(k));
    }
    for (size_t k = 0; k < arr.ndim(); ++k) shape.push_back(int64_t(arr.shape(k)));
    if (!compact) throw nb::value_error("from_dlpack needs a compact (C-contiguous) array");
    NDArray out = NDArray::Empty(shape, dtype, {arr.device_type(), arr.device_id()});
    if (arr.device_type() == TESSERA_DEVICE_CUDA) {
      runtime::cuda::CopyDeviceToDevice(arr.device_id(), out.data(), arr.data(),
                                        size_t(out.nbytes()));
    } else {
      out.CopyFromHost(arr.data(), out.nbytes());
    }
    return out;
  });
  m.def(
      "nd_empty",
      [](std::vector<int64_t> shape, const std::string& dtype, int device_type, int device_id) {
        return NDArray::Empty(std::move(shape), DataType::Parse(dtype), {device_type, device_id});
      },
      "shape"_a, "dtype"_a, "device_type"_a = 1, "device_id"_a = 0);

  m.def("host_entry", [](const ModuleNode& mod) { return mod.entry; });
  m.def("host_functions", [](const ModuleNode& mod) {
    nb::list out;
    for (const PackedFunctionInfo& f : mod.functions) {
      nb::list params;
      for (const auto& p : f.params) params.append(nb::make_tuple(p.kind, p.dtype, p.name));
      out.append(nb::make_tuple(f.name, f.ret, params));
    }
    return out;
  });
  m.def(
      "_set_call_types",
      [](nb::handle numpy_array, nb::handle nd_wrapper) {
        // Held for the life of the process, as the types themselves are.
        CallTypes& t = FastTypes();
        if (!PyType_Check(numpy_array.ptr()) || !PyType_Check(nd_wrapper.ptr())) {
          throw nb::type_error("_set_call_types takes two types");
        }
        t.numpy_array = reinterpret_cast<PyTypeObject*>(numpy_array.inc_ref().ptr());
        t.nd_wrapper = reinterpret_cast<PyTypeObject*>(nd_wrapper.inc_ref().ptr());
        if (t.handle_attr == nullptr) t.handle_attr = PyUnicode_InternFromString("_handle");
      },
      "numpy_array"_a, "nd_wrapper"_a,
      "The numpy array type (read through the buffer protocol) and tessera's NDArray wrapper "
      "(passed as its _handle) for the argument conversion of host_call.");
  m.def(
      "host_call",
      [](const ModuleNode& mod, const std::string& name, nb::handle values) {
        const PackedFunctionInfo& f = runtime::GetFunction(mod, name);
        ArgStorage s;
        PackArguments(s, f, values);
        runtime::PackedResult r;
        {
          nb::gil_scoped_release release;
          r = runtime::CallPacked(mod, f, s.values(), s.codes(), static_cast<int32_t>(s.size()));
        }
        return ReturnValue(f, r);
      },
      "module"_a, "name"_a, "args"_a,
      "Call a function of a host library (\"\" is the entry) with a tuple or list of arguments.");
  m.def(
      "host_call_checked",
      [](const ModuleNode& mod, const std::string& name, nb::handle values,
         const std::string& kernel) {
        const PackedFunctionInfo& f = runtime::GetFunction(mod, name);
        ArgStorage s;
        PackArguments(s, f, values);
        // Each host array argument is copied between guard pages for the call (the packed entry
        // then checks the copies as it checks the arrays themselves).
        std::vector<runtime::GuardedArg> guarded;
        std::vector<TesseraDLTensor*> tensors;
        for (size_t i = 0; i < s.size(); ++i) {
          int32_t code = s.codes()[i];
          if (code != TESSERA_ARG_DLTENSOR && code != TESSERA_ARG_DLTENSOR_READONLY) continue;
          auto* t = static_cast<TesseraDLTensor*>(s.values()[i].v_handle);
          if (t == nullptr || t->data == nullptr || t->device.device_type != TESSERA_DEVICE_CPU) {
            continue;
          }
          size_t item = size_t(t->dtype.bits) * t->dtype.lanes / 8;
          size_t count = 1;
          bool compact = true;
          int64_t expect = 1;
          for (int k = t->ndim; k-- > 0;) {
            if (t->strides && t->shape[k] != 1 && t->strides[k] != expect) compact = false;
            expect *= t->shape[k];
            count *= size_t(t->shape[k]);
          }
          if (!compact) continue;  // the entry refuses it with its own message
          runtime::GuardedArg g;
          g.data = static_cast<char*>(t->data) + t->byte_offset;
          g.bytes = count * item;
          g.itemsize = item == 0 ? 1 : item;
          g.copy_back = code == TESSERA_ARG_DLTENSOR;
          g.name = i < f.params.size() ? f.params[i].name : "arg" + std::to_string(i);
          guarded.push_back(g);
          tensors.push_back(t);
        }
        runtime::PackedResult r;
        // The descriptors of NDArrays are their own: put back their data and byte offset after
        // the call (a view's byte offset is not 0).
        std::vector<std::pair<void*, uint64_t>> saved;
        for (TesseraDLTensor* t : tensors) saved.emplace_back(t->data, t->byte_offset);
        struct Restore {
          std::vector<TesseraDLTensor*>& tensors;
          std::vector<std::pair<void*, uint64_t>>& saved;
          ~Restore() {
            for (size_t k = 0; k < tensors.size(); ++k) {
              tensors[k]->data = saved[k].first;
              tensors[k]->byte_offset = saved[k].second;
            }
          }
        } restore{tensors, saved};
        {
          nb::gil_scoped_release release;
          runtime::CallWithGuards(kernel, guarded, [&](const std::vector<void*>& copies) {
            for (size_t k = 0; k < tensors.size(); ++k) {
              if (copies[k] == nullptr) continue;
              tensors[k]->data = copies[k];
              tensors[k]->byte_offset = 0;
            }
            r = runtime::CallPacked(mod, f, s.values(), s.codes(), static_cast<int32_t>(s.size()));
          });
        }
        return ReturnValue(f, r);
      },
      "module"_a, "name"_a, "args"_a, "kernel"_a,
      "Call a DSL kernel with each array argument copied between guard pages: an access "
      "outside an array is an error naming the kernel, the argument and the offset.");
  m.def(
      "host_time",
      [](const ModuleNode& mod, const std::string& name, nb::handle values, int number,
         int repeat, int min_repeat_ms, int limit_zero_time_iterations, int cooldown_interval_ms,
         int repeats_to_cooldown, int64_t cache_flush_bytes) {
        const PackedFunctionInfo& f = runtime::GetFunction(mod, name);
        ArgStorage s;
        PackArguments(s, f, values);
        runtime::TimeEvaluatorOptions o;
        o.number = number;
        o.repeat = repeat;
        o.min_repeat_ms = min_repeat_ms;
        o.limit_zero_time_iterations = limit_zero_time_iterations;
        o.cooldown_interval_ms = cooldown_interval_ms;
        o.repeats_to_cooldown = repeats_to_cooldown;
        o.cache_flush_bytes = cache_flush_bytes;
        runtime::PackedArgs args = s.Packed();
        nb::gil_scoped_release release;
        return runtime::TimeEvaluate(mod, f, args, o);
      },
      "module"_a, "name"_a, "args"_a, "number"_a, "repeat"_a, "min_repeat_ms"_a,
      "limit_zero_time_iterations"_a, "cooldown_interval_ms"_a, "repeats_to_cooldown"_a,
      "cache_flush_bytes"_a);
  m.def("load_module", &runtime::LoadModule, "path"_a,
        "Load a library that a host build produced or exported.");
}

}  // namespace bindings
}  // namespace tessera
