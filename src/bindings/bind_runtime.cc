// Bindings of the runtime: calling a built DSL kernel with packed argument slots.
#include <cstring>

#include "common.h"
#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/guarded_call.h"
#include "tessera/runtime/module.h"
#include "tessera/support/error.h"

namespace tessera {
namespace bindings {
namespace {

// Round-to-nearest-even float32 -> float16 bits, for half scalar parameters.
uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  if (((x >> 23) & 0xff) == 0xff) return sign | 0x7c00u | (mant ? 0x200u : 0);
  if (exp >= 31) return sign | 0x7c00u;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000u;
    int shift = 14 - exp;
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | half;
  }
  uint32_t half = sign | (exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return half;
}

// Kind codes chosen by the Python executor: -1 is a pointer, otherwise code * 256 + bits.
void FillSlot(int kind, nb::handle value, uint64_t* slot) {
  *slot = 0;
  if (kind < 0) {
    uintptr_t p = value.is_none() ? 0 : nb::cast<uintptr_t>(value);
    std::memcpy(slot, &p, sizeof(p));
    return;
  }
  int code = kind >> 8, bits = kind & 0xff;
  if (code == DataType::kFloat || code == DataType::kBFloat) {
    double d = nb::cast<double>(value);
    if (code == DataType::kBFloat) {
      float f = static_cast<float>(d);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      uint16_t b = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
      std::memcpy(slot, &b, 2);
    } else if (bits == 16) {
      uint16_t h = FloatToHalfBits(static_cast<float>(d));
      std::memcpy(slot, &h, 2);
    } else if (bits == 32) {
      float f = static_cast<float>(d);
      std::memcpy(slot, &f, 4);
    } else {
      std::memcpy(slot, &d, 8);
    }
    return;
  }
  int64_t v = nb::cast<int64_t>(value);
  std::memcpy(slot, &v, (bits + 7) / 8 > 8 ? 8 : std::max(1, (bits + 7) / 8));
}

}  // namespace

void BindRuntime(nb::module_& m) {
  m.def(
      "call_dsl",
      [](const runtime::ModuleNode& mod, const std::vector<int>& kinds, nb::sequence values) {
        if (!mod.library) TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << "module is not loaded";
        void* fn = mod.library->GetFunction("__tessera_launch");
        if (!fn) TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << "kernel entry not found in " << mod.lib_path;
        size_t n = kinds.size();
        if (nb::len(values) != n) throw nb::value_error("argument count does not match kinds");
        std::vector<uint64_t> storage(n);
        std::vector<void*> slots(n);
        for (size_t i = 0; i < n; ++i) {
          FillSlot(kinds[i], values[i], &storage[i]);
          slots[i] = &storage[i];
        }
        nb::gil_scoped_release release;
        CallDSLLauncher(fn, slots);
      },
      "module"_a, "kinds"_a, "values"_a,
      "Run a built DSL kernel; pointer values are addresses, scalars are Python numbers.");
  m.def(
      "call_dsl_checked",
      [](const runtime::ModuleNode& mod, const std::vector<int>& kinds, nb::sequence values,
         const std::string& kernel, const std::vector<std::string>& names,
         const std::vector<int64_t>& bytes, const std::vector<int64_t>& itemsizes,
         const std::vector<bool>& copy_back) {
        if (!mod.library) TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << "module is not loaded";
        void* fn = mod.library->GetFunction("__tessera_launch");
        if (!fn) TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << "kernel entry not found in " << mod.lib_path;
        size_t n = kinds.size();
        if (nb::len(values) != n || names.size() != n || bytes.size() != n ||
            itemsizes.size() != n || copy_back.size() != n) {
          throw nb::value_error("argument count does not match kinds");
        }
        std::vector<uint64_t> storage(n);
        std::vector<runtime::GuardedArg> guarded(n);
        for (size_t i = 0; i < n; ++i) {
          FillSlot(kinds[i], values[i], &storage[i]);
          if (kinds[i] < 0) {
            void* p = nullptr;
            std::memcpy(&p, &storage[i], sizeof(p));
            guarded[i].data = p;
            guarded[i].bytes = size_t(std::max<int64_t>(bytes[i], 0));
            guarded[i].itemsize = size_t(std::max<int64_t>(itemsizes[i], 1));
            guarded[i].copy_back = copy_back[i];
            guarded[i].name = names[i];
          }
        }
        nb::gil_scoped_release release;
        runtime::CallWithGuards(kernel, guarded, [&](const std::vector<void*>& copies) {
          std::vector<uint64_t> checked = storage;
          std::vector<void*> slots(n);
          for (size_t i = 0; i < n; ++i) {
            if (copies[i] != nullptr) std::memcpy(&checked[i], &copies[i], sizeof(void*));
            slots[i] = &checked[i];
          }
          CallDSLLauncher(fn, slots);
        });
      },
      "module"_a, "kinds"_a, "values"_a, "kernel"_a, "names"_a, "bytes"_a, "itemsizes"_a,
      "copy_back"_a,
      "Run a built DSL kernel with each array argument copied between guard pages: an access "
      "outside an array is an error naming the kernel, the argument and the offset.");
}

}  // namespace bindings
}  // namespace tessera
