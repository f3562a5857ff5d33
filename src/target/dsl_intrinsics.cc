// The table of DSL intrinsics (tessera/target/dsl_intrinsics.h) and the ops it registers.
#include "tessera/target/dsl_intrinsics.h"

#include "tessera/ir/op.h"

namespace tessera {
namespace {

const std::vector<std::string> kInts = {"int8", "uint8", "int16", "uint16", "int32", "uint32"};
const std::vector<std::string> kFloats = {"float16", "float32", "bfloat16"};

std::vector<std::string> With(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// The fields every entry sets; the helpers below fill in the rest.
DslIntrinsic Entry(const std::string& name, const std::string& op, const std::string& form,
                   std::vector<std::string> elements, std::vector<std::string> scalar_elements,
                   const std::string& mask, std::vector<std::string> keywords,
                   const std::string& lane_fn, const std::string& doc,
                   const std::string& describe) {
  DslIntrinsic d;
  d.name = name;
  d.op = "dsl." + op;
  d.c_name = "__" + op;
  d.form = form;
  d.elements = std::move(elements);
  d.scalar_elements = std::move(scalar_elements);
  d.mask = mask;
  d.keywords = std::move(keywords);
  d.lane_fn = lane_fn;
  d.doc = doc;
  d.describe = describe;
  return d;
}

// x[2i] op x[2i+1] fill the low half, the pairs of y the high half.
DslIntrinsic Pairwise(const std::string& name, std::vector<std::string> elements,
                      const std::string& lane_fn, bool saturate, const std::string& doc,
                      const std::string& describe) {
  DslIntrinsic d =
      Entry(name, name, "pairwise", std::move(elements), {}, "all", {}, lane_fn, doc, describe);
  d.saturate = saturate;
  return d;
}

// S.<name> of a float vector or scalar: dsl.v<name>, computed by PySim as the math function.
DslIntrinsic Math(const std::string& name, const std::string& doc, const std::string& describe) {
  return Entry(name, "v" + name, "math", kFloats, {"float16", "float32"}, "all", {}, name,
               "Lane-wise " + doc + " Float vectors and float16/float32 scalars.", describe);
}

// A bit count or permutation of each integer lane; inactive lanes undefined.
DslIntrinsic Bits(const std::string& name, const std::string& op, std::vector<std::string> elements,
                  std::vector<std::string> scalar_elements, std::vector<std::string> keywords,
                  const std::string& lane_fn, const std::string& doc, const std::string& describe) {
  return Entry(name, op, "bits", std::move(elements), std::move(scalar_elements), "undefined",
               std::move(keywords), lane_fn, doc, describe);
}

// A mask of the float lanes of one class; inactive lanes false.
DslIntrinsic Classify(const std::string& name, const std::string& doc,
                      const std::string& describe) {
  return Entry(name, "v" + name, "classify", kFloats, kFloats, "false", {}, name, doc, describe);
}

// A reduction of the active lanes into lane 0.
DslIntrinsic Reduce(const std::string& name, const std::string& lane_fn,
                    std::vector<std::string> keywords, const std::string& split,
                    const std::string& doc, const std::string& describe) {
  DslIntrinsic d = Entry(name, name, "reduce", With(kInts, kFloats), {}, "excluded",
                         std::move(keywords), lane_fn, doc, describe);
  d.split = split;
  return d;
}

// A shift of each integer lane by a count; `op` where the flag keyword is set, else plain_op.
DslIntrinsic Shift(const std::string& name, const std::string& op, const std::string& plain_op,
                   std::vector<std::string> keywords, const std::string& lane_fn,
                   const std::string& doc, const std::string& describe) {
  DslIntrinsic d =
      Entry(name, op, "shift", kInts, {}, "undefined", std::move(keywords), lane_fn, doc, describe);
  d.plain_op = plain_op;
  return d;
}

}  // namespace

const std::vector<DslIntrinsic>& DslIntrinsics() {
  static const std::vector<DslIntrinsic>* table = new std::vector<DslIntrinsic>{
      // ---- Pairwise ----
      Pairwise("vaddh", With(kInts, {"float16", "float32"}), "add", true,
               "Saturating pairwise sums: pairs of ``x`` fill the low half, pairs of ``y`` the "
               "high.",
               "args: x, y: saturating pairwise sums, x pairs low, y pairs high."),
      Pairwise("vsubh", With(kInts, {"float16", "float32"}), "sub", true,
               "Saturating pairwise differences ``x[2i] - x[2i+1]``, as S.vaddh.",
               "args: x, y: saturating pairwise differences."),
      Pairwise("vmaxh", With(kInts, kFloats), "max", false,
               "Pairwise maxima: pairs of ``x`` fill the low half, pairs of ``y`` the high half.",
               "args: x, y: pairwise maxima."),
      Pairwise("vminh", With(kInts, kFloats), "min", false, "Pairwise minima, as S.vmaxh.",
               "args: x, y: pairwise minima."),
      // ---- Math functions (AlignVectorWidth splits them part by part) ----
      Math("exp", "e to the power x.", "Lane-wise e^x."),
      Math("log", "Natural logarithm.", "Lane-wise natural logarithm."),
      Math("tanh", "Hyperbolic tangent.", "Lane-wise tanh."),
      Math("sin", "Sine.", "Lane-wise sine."),
      Math("cos", "Cosine.", "Lane-wise cosine."),
      Math("rsqrt", "1 / sqrt(x).", "Lane-wise 1/sqrt(x)."),
      Math("sqrt", "Square root.", "Lane-wise square root."),
      Math("ceil", "Smallest integer value not below x.", "Lane-wise ceiling."),
      Math("erf", "Error function.", "Lane-wise error function."),
      Math("exp2", "2 to the power x.", "Lane-wise 2^x."),
      // ---- Bit counts and permutations ----
      Bits("vcls", "vcls", {"int8", "int16", "int32"}, {}, {"out_sign"}, "cls",
           "Leading bits equal to the sign bit, the sign bit excluded (signed integers).",
           "args: x: leading bits equal to the sign bit, sign excluded."),
      Bits("clz", "vclz", kInts, kInts, {}, "clz", "Leading zero bits of each lane. Scalars too.",
           "args: x: leading zero bits."),
      Bits("vbrevs", "vbrevs", kInts, {}, {}, "brevs", "The bit order of each lane reversed.",
           "args: x: bit order of each lane reversed."),
      Bits("vpcnt", "vpcnt", kInts, {}, {"out_sign"}, "popcount", "Population count of each lane.",
           "args: x: set bits of each lane."),
      // ---- Classification ----
      Classify("isnan", "Lanes that are NaN (a scalar gives a bool).",
               "args: x, mask: lanes that are NaN."),
      Classify("isinf", "Lanes that are +-inf.", "args: x, mask: lanes that are infinite."),
      Classify("isfinite", "Lanes that are neither NaN nor infinite.",
               "args: x, mask: lanes that are finite."),
      // ---- Reductions across lanes ----
      Reduce("vrpadd", "add", {}, "sum",
             "Sum of the active lanes into lane 0 (float16/bfloat16 sum into float32x8). A "
             "multiple-width vector sums all its lanes into lane 0 of a result of its lanes "
             "(float32 for float16/bfloat16), the other lanes 0.",
             "args: x, mask: sum of active lanes in lane 0, the other lanes 0 (a native x: a "
             "native result, float32x8 for 16-bit floats; a multiple-width x: a result of x's "
             "lanes)."),
      Reduce("vrpmax", "max", {"return_idx"}, "",
             "Maximum of the active lanes into lane 0; with ``return_idx`` (X3) lane 1 holds the "
             "index of its first occurrence.",
             "args: x, mask, return_idx: maximum of active lanes in lane 0 (index in lane 1)."),
      Reduce("vrpmin", "min", {"return_idx"}, "",
             "Minimum of the active lanes into lane 0, as S.vrpmax.",
             "args: x, mask, return_idx: minimum of active lanes in lane 0 (index in lane 1)."),
      // ---- Shifts ----
      Shift("vsr", "vasrr", "tir.shift_right", {"with_round", "r"}, "asr_round",
            "Right shift (arithmetic for signed, logical for unsigned); counts >= bits give 0 (-1 "
            "for negative signed); ``with_round`` rounds to nearest, ties to even.",
            "args: x, shift: right shift rounding to nearest, ties to even."),
      Shift("vsl", "vlsls", "tir.shift_left", {"saturate", "r"}, "lsl_saturate",
            "Left shift; counts >= bits give 0; ``saturate`` clamps to the element range.",
            "args: x, shift: left shift clamped to the element range."),
      Shift("vror", "vror", "", {}, "ror", "Rotate right by ``shift mod bits``.",
            "args: x, shift: rotate right by shift mod bits."),
  };
  return *table;
}

namespace {

// The ops of the table, registered with the hand-written ones of dsl_ops.cc.
const bool kRegistered = [] {
  for (const DslIntrinsic& d : DslIntrinsics()) {
    OpRegEntry& reg = (*new OpRegEntry(d.op))
                          .set_effect(CallEffect::kPure)
                          .set_attr("dsl.name", d.c_name)
                          .set_attr("dsl.form", d.form)
                          .describe(d.describe);
    if (!d.split.empty()) reg.set_attr("dsl.split", d.split);
    // A scalar operand: dsl.AlignVectorWidth computes the call in lane 0 of a native vector
    // (with an all-lanes mask where the op takes one).
    if (!d.scalar_elements.empty()) {
      reg.set_attr("dsl.scalar", d.mask == "false" ? "lane0_mask" : "lane0");
    }
    // return_idx=True (the reduce form's argument 2) needs an X3 target: the op attributes
    // dsl.VerifyTargetFeatures reads.
    for (const std::string& k : d.keywords) {
      if (k != "return_idx") continue;
      reg.set_attr("dsl.x3_arg", "2");
      reg.set_attr("dsl.x3_feature", "S." + d.name + "(return_idx=True)");
    }
  }
  return true;
}();

}  // namespace
}  // namespace tessera
