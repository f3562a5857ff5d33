// Bindings of host libraries: NDArray, packed calls with Python arguments, time evaluation and
// loading exported libraries.
#include <nanobind/ndarray.h>

#include <cstdlib>
#include <cstring>
#include <deque>

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

// Everything a packed call's arguments point into, alive until the call returns.
struct ArgStorage {
  PackedArgs args;
  std::vector<TesseraDLTensor> tensors;
  std::vector<nb::ndarray<>> arrays;  // their shape and stride arrays are what tensors point at
  std::vector<nb::ndarray<nb::ro>> readonly_arrays;
  std::deque<std::vector<int64_t>> dims;  // shapes and strides of arrays read without DLPack
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

void AddNumber(ArgStorage& s, nb::handle h, const std::string& label,
               const std::string& int_dtype = "") {
  if (PyBool_Check(h.ptr())) {
    s.args.AddInt(h.ptr() == Py_True ? 1 : 0);
  } else if (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr())) {
    int overflow = 0;
    nb::object index = nb::steal(PyNumber_Index(h.ptr()));
    if (!index.is_valid()) throw nb::python_error();
    long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow) {
      throw nb::value_error(
          (label + " = " + nb::cast<std::string>(nb::str(h)) + " does not fit a 64-bit integer")
              .c_str());
    }
    if (!FitsIntType(v, int_dtype)) {
      throw nb::value_error((label + " = " + std::to_string(v) + " is out of range for " +
                             int_dtype)
                                .c_str());
    }
    s.args.AddInt(v);
  } else {
    // A float for an int parameter is passed as it is: the library reports the mismatch in
    // its own words ("Expect arg[i] to be int").
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    s.args.AddFloat(v);
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

// An array argument. Read-only arrays are refused here, except for DSL kernels, whose entry
// point refuses them only for the pointers it writes through.
void AddArray(ArgStorage& s, nb::handle h, const std::string& label, bool dsl) {
  if (nb::isinstance<NDArray>(h)) {
    s.args.AddTensor(nb::cast<const NDArray&>(h).dltensor());
    return;
  }
  TesseraDLTensor t{};
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
    throw nb::type_error((label +
                          (dsl ? " must be a numpy array, got "
                               : " must be an array (ts.nd.array, numpy or another DLPack "
                                 "array), got ") +
                          type)
                             .c_str());
  }
  if (readonly && !dsl) {
    throw nb::type_error(
        (label + " is a read-only array; pass a writable one (e.g. a copy)").c_str());
  }
  s.tensors.push_back(t);
  s.args.AddTensor(nullptr);  // pointed at the stable storage below
  if (readonly) s.args.codes.back() = TESSERA_ARG_DLTENSOR_READONLY;
}

// Converts Python arguments by the kinds the library's metadata gives; anything the library
// checks itself (count, kinds, shapes) is passed on for it to report.
void PackArguments(ArgStorage& s, const PackedFunctionInfo& f, nb::sequence values) {
  size_t n = nb::len(values);
  s.tensors.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    nb::object h = nb::borrow(values[i]);
    std::string kind = i < f.params.size() ? f.params[i].kind : "";
    std::string label = ParamLabel(f, i);
    bool scalar = kind == "int" || kind == "float" || kind == "bool";
    // A DSL kernel takes a 0-d array for a scalar, as numpy code often has one.
    if (f.dsl && scalar && nb::hasattr(h, "ndim") && nb::hasattr(h, "item") &&
        !nb::isinstance<NDArray>(h) && nb::cast<int>(h.attr("ndim")) == 0) {
      h = h.attr("item")();
    }
    if (h.is_none()) {
      s.args.AddNull();
    } else if (nb::isinstance<NDArray>(h) || (!IsNumber(h) && !scalar)) {
      AddArray(s, h, label, f.dsl);
    } else if (IsNumber(h)) {
      AddNumber(s, h, label, kind == "int" ? f.params[i].dtype : "");
    } else {
      std::string type = nb::cast<std::string>(nb::str(h.type().attr("__name__")));
      bool integer = f.dsl && kind != "float";
      throw nb::type_error((label + (integer ? " must be an integer (" : " must be a number (") +
                            f.params[i].dtype + "), got " + type)
                               .c_str());
    }
  }
  size_t t = 0;
  for (size_t i = 0; i < s.args.codes.size(); ++i) {
    bool tensor = s.args.codes[i] == TESSERA_ARG_DLTENSOR ||
                  s.args.codes[i] == TESSERA_ARG_DLTENSOR_READONLY;
    if (tensor && s.args.values[i].v_handle == nullptr) {
      s.args.values[i].v_handle = &s.tensors[t++];
    }
  }
}

nb::object ReturnValue(const PackedFunctionInfo& f, const runtime::PackedResult& r) {
  if (f.ret == "void" || r.code == TESSERA_ARG_NULL) return nb::none();
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
      "host_call",
      [](const ModuleNode& mod, const std::string& name, nb::sequence values) {
        const PackedFunctionInfo& f = runtime::GetFunction(mod, name);
        ArgStorage s;
        PackArguments(s, f, values);
        runtime::PackedResult r;
        {
          nb::gil_scoped_release release;
          r = runtime::CallPacked(mod, f, s.args);
        }
        return ReturnValue(f, r);
      },
      "module"_a, "name"_a, "args"_a, "Call a function of a host library (\"\" is the entry).");
  m.def(
      "host_call_checked",
      [](const ModuleNode& mod, const std::string& name, nb::sequence values,
         const std::string& kernel) {
        const PackedFunctionInfo& f = runtime::GetFunction(mod, name);
        ArgStorage s;
        PackArguments(s, f, values);
        // Each host array argument is copied between guard pages for the call (the packed entry
        // then checks the copies as it checks the arrays themselves).
        std::vector<runtime::GuardedArg> guarded;
        std::vector<TesseraDLTensor*> tensors;
        for (size_t i = 0; i < s.args.codes.size(); ++i) {
          int32_t code = s.args.codes[i];
          if (code != TESSERA_ARG_DLTENSOR && code != TESSERA_ARG_DLTENSOR_READONLY) continue;
          auto* t = static_cast<TesseraDLTensor*>(s.args.values[i].v_handle);
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
            r = runtime::CallPacked(mod, f, s.args);
          });
        }
        return ReturnValue(f, r);
      },
      "module"_a, "name"_a, "args"_a, "kernel"_a,
      "Call a DSL kernel with each array argument copied between guard pages: an access "
      "outside an array is an error naming the kernel, the argument and the offset.");
  m.def(
      "host_time",
      [](const ModuleNode& mod, const std::string& name, nb::sequence values, int number,
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
        nb::gil_scoped_release release;
        return runtime::TimeEvaluate(mod, f, s.args, o);
      },
      "module"_a, "name"_a, "args"_a, "number"_a, "repeat"_a, "min_repeat_ms"_a,
      "limit_zero_time_iterations"_a, "cooldown_interval_ms"_a, "repeats_to_cooldown"_a,
      "cache_flush_bytes"_a);
  m.def("load_module", &runtime::LoadModule, "path"_a,
        "Load a library that a host build produced or exported.");
}

}  // namespace bindings
}  // namespace tessera
