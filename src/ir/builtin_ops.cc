// Registration of the target-independent intrinsics ("tir.*"): math, casts, memory, externs.
#include "tessera/ir/op.h"

namespace tessera {
namespace {

// Unary float math, lowered for C to the libm function of the operand width.
#define TESSERA_REGISTER_MATH(name, cname)                            \
  TESSERA_REGISTER_OP("tir." #name)                                   \
      .set_num_inputs(1)                                              \
      .set_effect(CallEffect::kPure)                                  \
      .set_attr("c.name", cname)                                      \
      .describe("Lane-wise " #name " of a floating-point value.")

TESSERA_REGISTER_MATH(exp, "exp");
TESSERA_REGISTER_MATH(exp2, "exp2");
TESSERA_REGISTER_MATH(log, "log");
TESSERA_REGISTER_MATH(log2, "log2");
TESSERA_REGISTER_MATH(sqrt, "sqrt");
TESSERA_REGISTER_MATH(rsqrt, "");
TESSERA_REGISTER_MATH(tanh, "tanh");
TESSERA_REGISTER_MATH(sigmoid, "");
TESSERA_REGISTER_MATH(erf, "erf");
TESSERA_REGISTER_MATH(sin, "sin");
TESSERA_REGISTER_MATH(cos, "cos");
TESSERA_REGISTER_MATH(floor, "floor");
TESSERA_REGISTER_MATH(ceil, "ceil");
TESSERA_REGISTER_MATH(round, "nearbyint");
TESSERA_REGISTER_MATH(trunc, "trunc");
TESSERA_REGISTER_MATH(fabs, "fabs");
TESSERA_REGISTER_MATH(tan, "tan");
TESSERA_REGISTER_MATH(asin, "asin");
TESSERA_REGISTER_MATH(acos, "acos");
TESSERA_REGISTER_MATH(atan, "atan");
TESSERA_REGISTER_MATH(sinh, "sinh");
TESSERA_REGISTER_MATH(cosh, "cosh");
TESSERA_REGISTER_MATH(asinh, "asinh");
TESSERA_REGISTER_MATH(acosh, "acosh");
TESSERA_REGISTER_MATH(atanh, "atanh");
TESSERA_REGISTER_MATH(log10, "log10");
TESSERA_REGISTER_MATH(log1p, "log1p");
TESSERA_REGISTER_MATH(expm1, "expm1");
TESSERA_REGISTER_MATH(exp10, "");
TESSERA_REGISTER_MATH(nearbyint, "nearbyint");
#undef TESSERA_REGISTER_MATH

TESSERA_REGISTER_OP("tir.pow").set_num_inputs(2).set_effect(CallEffect::kPure).set_attr("c.name", "pow");
TESSERA_REGISTER_OP("tir.abs").set_num_inputs(1).set_effect(CallEffect::kPure)
    .describe("Absolute value of an integer or float.");
TESSERA_REGISTER_OP("tir.isnan").set_num_inputs(1).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.isinf").set_num_inputs(1).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.isfinite").set_num_inputs(1).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.reinterpret").set_num_inputs(1).set_effect(CallEffect::kPure)
    .describe("Bit cast to the call's dtype.");
TESSERA_REGISTER_OP("tir.if_then_else").set_num_inputs(3).set_effect(CallEffect::kPure)
    .describe("cond ? a : b evaluating only the chosen side.");
TESSERA_REGISTER_OP("tir.likely").set_num_inputs(1).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.address_of").set_num_inputs(1).set_effect(CallEffect::kPure)
    .describe("Address of a BufferLoad's element.");
TESSERA_REGISTER_OP("tir.call_extern").set_effect(CallEffect::kOpaque)
    .describe("Call of an external C function; args[0] is its name.");
TESSERA_REGISTER_OP("tir.call_pure_extern").set_effect(CallEffect::kPure)
    .describe("Call of a pure external C function; args[0] is its name.");
TESSERA_REGISTER_OP("tir.ret").set_num_inputs(1).set_effect(CallEffect::kOpaque)
    .describe("Return a value from the enclosing function.");
// Two-operand float math, lowered for C to the libm function of the same name.
#define TESSERA_REGISTER_MATH2(name)                                  \
  TESSERA_REGISTER_OP("tir." #name)                                   \
      .set_num_inputs(2)                                              \
      .set_effect(CallEffect::kPure)                                  \
      .set_attr("c.name", #name)

TESSERA_REGISTER_MATH2(atan2);
TESSERA_REGISTER_MATH2(fmod);
TESSERA_REGISTER_MATH2(hypot);
TESSERA_REGISTER_MATH2(copysign);
TESSERA_REGISTER_MATH2(nextafter);
TESSERA_REGISTER_MATH2(ldexp);
#undef TESSERA_REGISTER_MATH2
TESSERA_REGISTER_OP("tir.popcount")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .describe("Number of set bits of an integer.");
TESSERA_REGISTER_OP("tir.clz")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .describe("Number of leading zero bits of an integer.");
TESSERA_REGISTER_OP("tir.assume")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .describe("A condition the compiler may assume to hold.");
TESSERA_REGISTER_OP("tir.prefetch")
    .set_num_inputs(4)
    .set_effect(CallEffect::kOpaque)
    .describe(
        "Prefetch hint: (address, rw: 0 read / 1 write, locality 0..3, cache type: 1 data / 0 "
        "instruction); the C targets emit __builtin_prefetch for data.");
TESSERA_REGISTER_OP("tir.tvm_static_handle")
    .set_num_inputs(0)
    .set_effect(CallEffect::kOpaque)
    .describe(
        "The address of a static pointer-sized slot, one per call site, NULL at first: a handle "
        "that persists across calls of the function (TVM's static-initialisation handle).");
TESSERA_REGISTER_OP("tir.break")
    .set_num_inputs(0)
    .set_effect(CallEffect::kOpaque)
    .describe("Leave the innermost loop (`break`).");
TESSERA_REGISTER_OP("tir.continue")
    .set_num_inputs(0)
    .set_effect(CallEffect::kOpaque)
    .describe("Go to the next iteration of the innermost loop (`continue`).");
TESSERA_REGISTER_OP("tir.shift_left").set_num_inputs(2).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.shift_right").set_num_inputs(2).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.bitwise_and").set_num_inputs(2).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.bitwise_or").set_num_inputs(2).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.bitwise_xor").set_num_inputs(2).set_effect(CallEffect::kPure);
TESSERA_REGISTER_OP("tir.bitwise_not").set_num_inputs(1).set_effect(CallEffect::kPure);

}  // namespace
}  // namespace tessera
