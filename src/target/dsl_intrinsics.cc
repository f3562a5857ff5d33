// The table of DSL intrinsics (tessera/target/dsl_intrinsics.h) and the ops it registers.
#include "tessera/target/dsl_intrinsics.h"

#include <set>
#include <stdexcept>

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
  // An empty op: the intrinsic builds TIR (plain_op), and the table registers nothing.
  d.op = op.empty() ? "" : "dsl." + op;
  d.c_name = op.empty() ? "" : "__" + op;
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

// A comparison of two vectors of one type into a mask; inactive lanes false. The call is the TIR
// comparison node `node` ("EQ", ...), which the table does not register.
DslIntrinsic Compare(const std::string& name, const std::string& node, const std::string& doc) {
  DslIntrinsic d = Entry(name, "", "compare", With(kInts, kFloats), {}, "false", {}, node, doc, "");
  d.plain_op = node;
  return d;
}

// The lane-wise maximum or minimum (the TIR node `node`) of vectors or scalars; inactive lanes
// from r (undefined without it).
DslIntrinsic MinMax(const std::string& name, const std::string& node, const std::string& doc) {
  DslIntrinsic d = Entry(name, "", "minmax", With(kInts, kFloats), With(kInts, kFloats),
                         "undefined", {"r"}, node, doc, "");
  d.plain_op = node;
  return d;
}

// Bitwise logic (the TIR op `tir_op`) of integer vectors or of masks: form "logic" (x, y) or
// "invert" (x); inactive lanes undefined (false for masks).
DslIntrinsic Logic(const std::string& name, const std::string& form, const std::string& tir_op,
                   const std::string& doc) {
  DslIntrinsic d = Entry(name, "", form, kInts, {}, "undefined_masks_false", {}, tir_op, doc, "");
  d.plain_op = tir_op;
  return d;
}

// Lane-wise arithmetic of two vectors of one type: the TIR node `node` ("Add", ...), or with
// saturate=True the entry's op (`sat_op`, empty: no saturate keyword).
DslIntrinsic Arith(const std::string& name, const std::string& sat_op, const std::string& node,
                   std::vector<std::string> elements, std::vector<std::string> keywords,
                   const std::string& lane_fn, const std::string& doc,
                   const std::string& describe) {
  DslIntrinsic d = Entry(name, sat_op, "arith", std::move(elements), {}, "undefined",
                         std::move(keywords), lane_fn, doc, describe);
  d.plain_op = node;
  return d;
}

// A right shift that narrows 16/32-bit lanes to 8 bits (16 with to_h); S.vnsrsr (`always`)
// always saturates and rounds.
DslIntrinsic Narrow(const std::string& name, bool always, std::vector<std::string> keywords,
                    const std::string& doc) {
  DslIntrinsic d = Entry(name, "vnsr", "narrow", {"int16", "uint16", "int32", "uint32"}, {},
                         "undefined", std::move(keywords), "shift_narrow", doc,
                         "args: x, shift, mask, saturate, with_round, out_signed: shift right "
                         "then narrow in place.");
  d.saturate = always;
  d.split = "parts";  // a multiple width narrows native part by native part
  d.variant_op = "dsl.vnsr_h";
  d.variant_c_name = "__vnsr_h";
  d.variant_describe = d.op + " with 16-bit results (to_h).";
  return d;
}

// An intrinsic of the arithmetic that calls its own op ("dsl.<name>") in `form`, split into
// native parts by `split`.
DslIntrinsic Own(const std::string& name, const std::string& form,
                 std::vector<std::string> elements, std::vector<std::string> scalar_elements,
                 const std::string& mask, std::vector<std::string> keywords,
                 const std::string& lane_fn, bool saturate, const std::string& split,
                 const std::string& doc, const std::string& describe) {
  DslIntrinsic d = Entry(name, name, form, std::move(elements), std::move(scalar_elements), mask,
                         std::move(keywords), lane_fn, doc, describe);
  d.saturate = saturate;
  d.split = split;
  return d;
}

// A 4x4 matrix product of two 16-bit float vectors into the 16 float32 a pointer addresses.
DslIntrinsic Matrix(const std::string& name, const std::string& lane_fn, const std::string& doc,
                    const std::string& describe) {
  DslIntrinsic d =
      Entry(name, name, "matrix", {"float16", "bfloat16"}, {}, "all", {}, lane_fn, doc, describe);
  d.effect = "writes_memory";
  return d;
}

// Whether all or any lanes of a mask are active.
DslIntrinsic MaskReduce(const std::string& name, const std::string& lane_fn, const std::string& doc,
                        const std::string& describe) {
  DslIntrinsic d =
      Entry(name, name, "mask_reduce", {"bool"}, {}, "operand", {}, lane_fn, doc, describe);
  d.num_inputs = 1;
  return d;
}

// A permutation of lanes: the TIR node `node` (Shuffle: constant lane indices), or `op` where
// the lanes depend on runtime values.
DslIntrinsic Permute(const std::string& name, const std::string& op, const std::string& form,
                     std::vector<std::string> elements, std::vector<std::string> keywords,
                     const std::string& node, const std::string& doc, const std::string& describe) {
  DslIntrinsic d = Entry(name, op, form, std::move(elements), {}, "all", std::move(keywords),
                         node.empty() ? op : node, doc, describe);
  d.plain_op = node;
  return d;
}

// The bits of an integer read as signed or unsigned (TIR's reinterpret).
DslIntrinsic SameBits(const std::string& name, const std::string& lane_fn, const std::string& doc) {
  DslIntrinsic d = Entry(name, "", "same_bits", kInts, kInts, "all", {}, lane_fn, doc, "");
  d.plain_op = "tir.reinterpret";
  return d;
}

// A half of an 8- or 16-bit integer vector at double width (dsl.vcvt of that half).
DslIntrinsic Extend(const std::string& name, const std::string& lane_fn, const std::string& doc) {
  DslIntrinsic d = Entry(name, "vcvt", "extend", {"int8", "uint8", "int16", "uint16"}, {}, "all",
                         {}, lane_fn, doc, "");
  d.num_inputs = 3;
  return d;
}

// A load or store of the elements of ints and floats through a pointer: the TIR node `node`
// (BufferLoad, BufferStore of a ramp) or `op` (a gather or scatter by a 16-bit index vector).
DslIntrinsic Memory(const std::string& name, const std::string& op, const std::string& form,
                    const std::string& node, const std::string& effect, const std::string& mask,
                    std::vector<std::string> keywords, const std::string& doc,
                    const std::string& describe) {
  DslIntrinsic d = Entry(name, op, form, With(kInts, kFloats), {}, mask, std::move(keywords),
                         node.empty() ? op : node, doc, describe);
  d.plain_op = node;
  d.effect = effect;
  return d;
}

// A DMA transfer or event operation of a TEC: `op` with `num_inputs` arguments, effect opaque.
DslIntrinsic Dma(const std::string& name, const std::string& op, const std::string& form,
                 const std::string& lane_fn, int num_inputs, const std::string& doc,
                 const std::string& describe) {
  DslIntrinsic d =
      Entry(name, op, form, With(kInts, kFloats), {}, "all", {}, lane_fn, doc, describe);
  d.effect = "opaque";
  d.num_inputs = num_inputs;
  return d;
}

// An operation of the TEC running the kernel: dsl.<name>, printed as the C function <name>.
DslIntrinsic Tec(const std::string& name, const std::string& lane_fn, const std::string& effect,
                 int num_inputs, const std::string& doc, const std::string& describe) {
  DslIntrinsic d = Entry(name, name, "tec", {}, {}, "all", {}, lane_fn, doc, describe);
  d.c_name = name;
  d.effect = effect;
  d.num_inputs = num_inputs;
  return d;
}

CallEffect EffectOf(const DslIntrinsic& d) {
  if (d.effect == "pure") return CallEffect::kPure;
  if (d.effect == "reads_memory") return CallEffect::kReadState;
  if (d.effect == "writes_memory") return CallEffect::kUpdateState;
  if (d.effect == "opaque") return CallEffect::kOpaque;
  throw std::logic_error("DSL intrinsic S." + d.name + ": unknown effect '" + d.effect + "'");
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
      [] {
        // TIR's floor (tir.floor), which the table does not register.
        DslIntrinsic d = Math("floor", "Largest integer value not above x.", "");
        d.op = d.c_name = "";
        d.plain_op = "tir.floor";
        return d;
      }(),
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
      // ---- Comparisons (TIR comparison nodes) ----
      Compare("vceq", "EQ", "Lane-wise x == y as a mask; inactive lanes False."),
      Compare("vcneq", "NE", "Lane-wise x != y as a mask; inactive lanes False."),
      Compare("vcge", "GE", "Lane-wise x >= y as a mask; inactive lanes False."),
      Compare("vcgt", "GT", "Lane-wise x > y as a mask; inactive lanes False."),
      Compare("vcle", "LE", "Lane-wise x <= y as a mask; inactive lanes False."),
      Compare("vclt", "LT", "Lane-wise x < y as a mask; inactive lanes False."),
      MinMax("max", "Max", "Lane-wise maximum; inactive lanes from ``r``. Scalars too."),
      MinMax("min", "Min", "Lane-wise minimum; inactive lanes from ``r``. Scalars too."),
      // ---- Bitwise logic (TIR ops) ----
      Logic("vand", "logic", "tir.bitwise_and",
            "Bitwise AND of integer vectors, or AND of masks (inactive lanes False)."),
      Logic("vor", "logic", "tir.bitwise_or", "Bitwise OR of integer vectors, or OR of masks."),
      Logic("vxor", "logic", "tir.bitwise_xor", "Bitwise XOR of integer vectors, or XOR of masks."),
      Logic("vinv", "invert", "tir.bitwise_not",
            "Bitwise NOT of an integer vector, or NOT of a mask."),
      // ---- Arithmetic (TIR nodes; saturate=True: the entry's op) ----
      Arith("vadd", "vadds", "Add", With(kInts, kFloats), {"saturate", "out_sign", "r"},
            "add_saturate",
            "Lane-wise ``x + y``; a scalar operand is broadcast; inactive lanes from ``r``.",
            "args: x, y: lane-wise x + y clamped to the element range."),
      Arith("vsub", "vsubs", "Sub", With(kInts, kFloats), {"saturate", "out_sign", "r"},
            "sub_saturate",
            "Lane-wise ``x - y``; a scalar operand is broadcast; inactive lanes from ``r``.",
            "args: x, y: lane-wise x - y clamped to the element range."),
      Arith("vmul", "", "Mul", With({"int16", "uint16", "int32", "uint32"}, kFloats),
            {"out_sign", "r"}, "",
            "Lane-wise ``x * y`` on 16/32-bit integers and floats (wrapping).", ""),
      Arith("vdiv", "", "Div", With(kInts, {"float32"}), {}, "",
            "Truncating integer or float32 division; x / 0 gives 0 and MIN / -1 saturates.", ""),
      Arith("vmod", "", "Mod", kInts, {}, "",
            "Integer remainder with the dividend's sign; divisor 0 gives 0.", ""),
      // ---- Narrowing shifts ----
      Narrow("vnsr", false, {"saturate", "out_sign", "with_round", "to_h"},
             "Right shift, then narrow 16->8, 32->8 (32->16 with ``to_h``); results keep their "
             "source positions (every 2nd or 4th lane), the gaps and inactive lanes are zero."),
      Narrow("vnsrsr", true, {"out_sign", "to_h"},
             "S.vnsr with saturate=True and with_round=True."),
      // ---- Widening products, dot products, fused multiply-adds ----
      Own("vmull", "widen", kInts, {}, "undefined", {"out_sign", "r"}, "mul_low", false, "",
          "Widening product of the low half (8->16, 16->32 bit); for 32-bit operands the 64-bit "
          "products of lanes 0-3 as (low word, high word) pairs.",
          "args: x, y: widening product of the low half."),
      Own("vmulh", "widen", kInts, {}, "undefined", {"out_sign", "r"}, "mul_high", false, "",
          "As S.vmull on the high half.", "args: x, y: widening product of the high half."),
      Own("vdot", "dot", {"int8", "uint8", "int16", "uint16"}, {}, "excluded", {}, "dot2", true,
          "parts",
          "Pairwise dot products into double width (8->16, 16->32 bit), saturated; inactive "
          "input lanes contribute nothing.",
          "args: x, y, mask: saturated pairwise dot products into double width."),
      Own("vqdot", "dot", {"int8", "uint8", "float16", "bfloat16"}, {}, "excluded", {}, "dot4",
          false, "parts", "Dot products of 4 lanes: int8/uint8 -> int32/uint32.",
          "args: x, y, mask: 4-lane dot products into quadruple width."),
      Own("vdpa", "dot_acc", {"int8", "uint8", "int16", "uint16"}, {}, "excluded", {}, "dot2_acc",
          true, "parts", "``acc + S.vdot(x, y, mask)``.",
          "args: acc, x, y, mask: acc plus the pairwise dot products of x and y (signs may "
          "differ), exact, saturated once to acc's type."),
      // An integer acc: acc + S.vqdot, the quadruple-width sums being exact, added with
      // dsl.vadds (one saturation). A float acc (float32, float16/bfloat16 operands): the op,
      // acc and its 4 products summed exactly (in double) and rounded to float32 once, as
      // Compass computes it; rounding the dot product first is off by up to 1 ULP of the total.
      Own("vqdpa", "dot_acc", {"int8", "uint8", "float16", "bfloat16"}, {}, "excluded", {},
          "dot4_acc", false, "parts",
          "``acc + S.vqdot(x, y, mask)``; for floats the sum of acc and the products rounded "
          "once.",
          "args: acc, x, y, mask: a float32 acc plus the 4-lane dot products of float16/bfloat16 "
          "x and y in its even lanes, rounded once (odd lanes keep acc)."),
      Own("vfmae", "fma_half", {"float16", "bfloat16"}, {}, "keep", {}, "fma_even", false, "",
          "``acc[i] + x[2i] * y[2i]`` (float16/bfloat16 products into a float32 accumulator).",
          "args: acc, x, y, mask: acc + even-lane products."),
      Own("vfmao", "fma_half", {"float16", "bfloat16"}, {}, "keep", {}, "fma_odd", false, "",
          "``acc[i] + x[2i+1] * y[2i+1]``.", "args: acc, x, y, mask: acc + odd-lane products."),
      // ---- Lane-wise functions of one operand (scalars in lane 0 of a vector) ----
      Entry("abs", "vabs", "unary", With(kInts, kFloats), With(kInts, kFloats), "undefined",
            {"saturate"}, "abs", "Absolute value; with ``saturate`` abs(MIN) is MAX. Scalars too.",
            "args: x, saturate: lane-wise absolute value."),
      Entry("rint", "vrint", "unary", kFloats, kFloats, "undefined", {}, "rint",
            "Round to nearest, ties to even (floats). Scalars too.",
            "args: x: round to nearest, ties to even."),
      // acc + x * y rounded once (a fused multiply-add), as Compass computes it; a Mul and an
      // Add round twice. (Compass's PySim sums in double and rounds that to float32: the same
      // but where the double sum falls exactly halfway between two float32.)
      Entry("fma", "vfma", "fma", {"float32"}, {"float32"}, "keep", {}, "fused",
            "``acc + x * y`` on float32 (vectors or scalars), rounded once (fused "
            "multiply-add); inactive lanes keep ``acc``.",
            "args: acc, x, y: acc + x * y rounded to float32 once."),
      // ---- Built from TIR nodes only ----
      [] {
        DslIntrinsic d =
            Entry("clip", "", "clip", With(kInts, kFloats), With(kInts, kFloats), "keep", {}, "Min",
                  "``min(max(x, min_val), max_val)``; inactive lanes keep ``x``. "
                  "Scalars too.",
                  "");
        d.plain_op = "Min";  // of the Max of x and min_val, and max_val
        return d;
      }(),
      [] {
        DslIntrinsic d =
            Entry("vsel", "", "select", With(kInts, kFloats), {}, "select", {}, "Select",
                  "Active lanes from ``x``, the others from ``y`` (vectors or masks).", "");
        d.plain_op = "Select";
        return d;
      }(),
      // ---- Matrix products into memory ----
      Matrix("vmml", "matmul",
             "4x4 matrix product of ``x`` (row-major) and ``y`` (column-major) as 16 float32 at "
             "ptr.",
             "args: ptr, x, y: 4x4 matrix product written as 16 floats."),
      Matrix("vmma", "matmul_acc", "As S.vmml, added to the 16 float32 at ``acc_ptr``.",
             "args: ptr, x, y: 4x4 matrix product added to 16 floats."),
      // ---- Masks ----
      MaskReduce("vall", "all", "Whether every lane of the mask is active (a scalar bool).",
                 "Whether every lane of a mask is active."),
      MaskReduce("vany", "any", "Whether any lane of the mask is active (a scalar bool).",
                 "Whether any lane of a mask is active."),
      [] {
        DslIntrinsic d =
            Entry("const_mask", "const_mask", "const_mask", {}, {}, "all", {}, "const_mask",
                  "A constant mask from a bool list or a mask string; its lanes are "
                  "the list's (the string's expansion).",
                  "A constant mask: one bool immediate per lane, lane 0 first.");
        d.c_name = "__vmov";
        return d;
      }(),
      [] {
        DslIntrinsic d =
            Entry("tail_mask", "tail_mask", "tail_mask", {}, {}, "all", {}, "tail_mask",
                  "Lanes below ``n`` are active; ``n`` may be a "
                  "runtime value.",
                  "Lanes below the (runtime) count are active.");
        d.c_name = "__vtail_mask";
        d.num_inputs = 1;
        return d;
      }(),
      // ---- Permutations (constant ones are Shuffle nodes; runtime ones dsl.vperm) ----
      Permute("vconcat", "", "concat", With(With(kInts, kFloats), {"bool"}), {"part"}, "Shuffle",
              "Concatenate 2-4 vectors (or masks), or the ``part`` half of each.", ""),
      Permute("vsplit", "", "split", With(With(kInts, kFloats), {"bool"}), {}, "Shuffle",
              "A multiple-width vector as a tuple of native vectors. A mask splits into native "
              "masks (8, 16 or 32 lanes): those of the data it compares (``x_i16x32 > 0``: two "
              "of 16 lanes), else as few as possible (parts of 32 lanes, else 16, else 8).",
              ""),
      Permute("vzip", "", "zip", With(With(kInts, kFloats), {"bool"}), {"part"}, "Shuffle",
              "Interleave ``x0 y0 x1 y1 ...``; with ``part`` only that half of each input.", ""),
      Permute("vrevs", "", "reverse", With(With(kInts, kFloats), {"bool"}), {}, "Shuffle",
              "Lane order reversed (vectors or masks).", ""),
      Permute("vreplic", "", "replicate", With(kInts, kFloats), {"index"}, "Shuffle",
              "Lane ``index`` of ``x`` broadcast to every lane. On a native vector ``index`` "
              "may be a runtime value; one that is not a lane fails the kernel's call (PySim "
              "raises).",
              ""),
      Permute("vsldl", "", "slide", With(kInts, kFloats), {}, "Shuffle",
              "``concat(x[shift:], y[:shift])``; ``shift`` is an immediate.", ""),
      Permute("vshfl", "vperm", "rotate", With(kInts, kFloats), {}, "Shuffle",
              "Rotate lanes toward lane 0: lane i <- x[(i + shift) mod n]; ``shift`` may be "
              "runtime. A multiple-width vector rotates as one vector (with an immediate "
              "``shift``).",
              "args: x, y, indices: lane i is x[indices[i]] below n, y[indices[i] - n] below 2n, "
              "else 0."),
      Permute("vtbl", "vperm", "lookup", With(kInts, kFloats), {}, "",
              "``table`` is 2-4 vectors read as one array; lane i <- table[indices[i]], 0 when "
              "the index is out of range.",
              "args: x, y, indices: lane i is x[indices[i]] below n, y[indices[i] - n] below 2n, "
              "else 0."),
      [] {
        DslIntrinsic d = Permute("vcompt", "vcompt", "compress", With(kInts, kFloats), {}, "",
                                 "Active lanes packed to the bottom; the rest are zero.",
                                 "args: x, mask: active lanes packed to the bottom, zeros above.");
        d.mask = "packed";
        d.lane_fn = "zeros";
        return d;
      }(),
      [] {
        DslIntrinsic d =
            Permute("vcompc", "vcompc", "compress", With(kInts, kFloats), {}, "",
                    "Active lanes of ``x`` packed to the bottom, then ``y[0], y[1], ...``.",
                    "args: x, y, mask: active lanes of x packed, then y from lane 0.");
        d.mask = "packed";
        d.lane_fn = "concat";
        return d;
      }(),
      [] {
        DslIntrinsic d = Permute("vbcast", "", "broadcast", {}, {"lanes"}, "Broadcast",
                                 "The scalar ``x`` in every lane (native lanes of its type unless "
                                 "``lanes`` is given).",
                                 "");
        d.scalar_elements = With(kInts, kFloats);
        d.mask = "undefined";
        return d;
      }(),
      // ---- Conversions (TIR Cast and reinterpret; dsl.vcvt converts selected lanes) ----
      [] {
        DslIntrinsic d = Entry(
            "cast", "vcvt", "cast", With(With(kInts, kFloats), {"bool"}), {}, "all",
            {"part", "saturate"}, "convert",
            "Convert ``x`` to ``dtype``: scalars, scalar to vector (broadcast), vector to vector. "
            "A scalar ``dtype`` takes x's lanes. ``part`` selects the lanes of a widening cast; "
            "``S.cast((lo, hi), \"int8\")`` narrows two vectors into one; a list of scalars is a "
            "vector of them (``S.cast([0, 1, 2], \"float32\")`` is a float32x3).",
            "args: x, first, stride: lanes first, first + stride, ... of x converted to the "
            "call's native vector type (zero where x runs out).");
        // Scalars convert through the TIR node Cast, never the op (no "dsl.scalar"): the form
        // takes numbers and scalars without scalar_elements.
        d.plain_op = "Cast";
        d.num_inputs = 3;
        return d;
      }(),
      SameBits("i", "signed", "The same bits as a signed integer of the same width and lanes."),
      SameBits("u", "unsigned",
               "The same bits as an unsigned integer of the same width and lanes."),
      [] {
        DslIntrinsic d =
            Entry("reinterpret", "", "reinterpret", With(kInts, kFloats), With(kInts, kFloats),
                  "all", {}, "tir.reinterpret",
                  "Bit cast of a value, literal or pointer: the total bits must match.", "");
        d.plain_op = "tir.reinterpret";
        return d;
      }(),
      Extend("vxtl", "low",
             "The low half of ``x`` extended to double width (sign- or zero-extended)."),
      Extend("vxth", "high",
             "The high half of ``x`` extended to double width (sign- or zero-extended)."),
      // ---- Vector loads and stores ----
      Memory("vload", "", "load", "BufferLoad", "reads_memory", "zero", {"lanes", "stride"},
             "Load a vector from ``ptr`` (native width of the pointee unless ``lanes`` is given); "
             "``stride`` takes every stride-th element; inactive lanes are zero.",
             ""),
      Memory("vstore", "", "store", "BufferStore", "writes_memory", "skip", {"stride"},
             "Store the active lanes of the vector ``value`` at ``ptr``, contiguous or strided.",
             ""),
      Memory("vload_gather", "vload_gather", "gather", "", "reads_memory", "zero", {},
             "Lane i is ``ptr[indices[i]]``; inactive lanes are zero. ``indices`` is a 16-bit "
             "vector (int16 or uint16) whose lane count is the result's (flexible and multiple "
             "widths).",
             "args: ptr, indices (uint16, the result's lanes), mask: lane i is ptr[indices[i]]; "
             "after dsl.AlignVectorWidth: ptr, lo, hi, first, mask (index i: lane first + i of lo "
             "++ hi)."),
      Memory("vstore_scatter", "vstore_scatter", "scatter", "", "writes_memory", "skip", {},
             "``ptr[indices[i]] = value[i]`` for the active lanes; ``indices`` is a 16-bit vector "
             "with ``value``'s lane count.",
             "args: value, ptr, indices (uint16), mask: ptr[indices[i]] = value[i]; after "
             "dsl.AlignVectorWidth: value, ptr, lo, hi, first, mask as in dsl.vload_gather."),
      // ---- DMA and events (opaque: they move data between memories or wait) ----
      [] {
        DslIntrinsic d = Dma("dma_copy", "dma_copy", "dma_copy", "", 6,
                             "Copy ``times`` rows of ``width`` elements; rows start every "
                             "``src_stride`` / ``dst_stride`` elements (default ``width``).",
                             "args: dst, src, width, src_stride, times, dst_stride.");
        // One plain row between DDR and SRAM.
        d.variant_op = "dsl.dma1d";
        d.variant_c_name = "DMA1D";
        d.variant_describe = "args: ddr, sram, count, direction (1: into SRAM, 0: out of SRAM).";
        d.variant_num_inputs = 4;
        return d;
      }(),
      Dma("async_dma_copy", "async_dma_copy", "dma_copy", "async", 7,
          "As S.dma_copy, tied to ``event``: the data is valid after ``S.wait_events(event)``.",
          "args: dst, src, width, src_stride, times, dst_stride, event."),
      Dma("alloc_events", "alloc_event", "events", "alloc", 0,
          "``count`` DMA events: one event, or a tuple of them when ``count > 1``.",
          "A free DMA event of this TEC."),
      Dma("wait_events", "wait_event", "events", "wait", 1,
          "Block until every listed event is idle.", "Block until the event is idle."),
      Dma("free_events", "free_event", "events", "free", 1, "Wait for, then release, the events.",
          "Wait for, then release, the event."),
      Dma("dma_memset", "dma_memset", "dma_memset", "", 3,
          "Set ``num`` scalar elements at ``ptr`` to ``value``.", "args: ptr, value, num."),
      Dma("dma_transpose2d", "dma_transpose2d", "dma_transpose2d", "", 6,
          "Transpose a ``row`` x ``col`` matrix; strides default to ``col`` (source) and ``row`` "
          "(destination).",
          "args: dst, src, row, col, dst_stride, src_stride."),
      Dma("dma_upsample", "dma_upsample", "dma_upsample", "", 9,
          "Replicate a ``w`` x ``c`` (WC) plane ``h_scale`` times in H and ``w_scale`` times in W "
          "into HWC; only between DDR and SRAM.",
          "args: dst, src, h_scale, w_scale, c, w, src_c_stride, dst_c_stride, dst_w_stride."),
      Dma("flush_cache", "flush_cache", "flush_cache", "", 1,
          "Write back the data cache (a no-op on tessera's host).", "Write back the data cache."),
      // ---- TECs and profiling ----
      Tec("get_local_id", "local_id", "reads_memory", 0, "This TEC's index, 0 to 3.",
          "Index of the running TEC (0-3)."),
      Tec("get_local_size", "local_size", "pure", 0, "The number of TECs of a core: 4.",
          "Number of TECs of a core (4)."),
      Tec("barrier", "barrier", "opaque", 0,
          "Wait until every TEC of the core reaches the barrier; their earlier writes are then "
          "visible to each other.",
          "Wait for every running TEC of the core."),
      [] {
        DslIntrinsic d = Tec("perf_tick_begin", "begin", "opaque", -1,
                             "Start of a profiled region: reads the clock (see Executor.profile).",
                             "Profiling marker (a no-op on the host).");
        d.form = "perf_tick";
        d.c_name = "__perf_tick_begin";
        return d;
      }(),
      [] {
        DslIntrinsic d =
            Tec("perf_tick_end", "end", "opaque", -1,
                "End of a profiled region: adds the ticks since its begin (see Executor.profile).",
                "Profiling marker (a no-op on the host).");
        d.form = "perf_tick";
        d.c_name = "__perf_tick_end";
        return d;
      }(),
      // ---- Power (a float vector or scalar and an exponent) ----
      Entry("pow", "vpow", "power", kFloats, {"float16", "float32"}, "all", {}, "pow",
            "``x ** exponent`` lane-wise; a scalar exponent is broadcast.",
            "args: x, y: lane-wise x^y."),
      // ---- Integer scalars (TIR nodes only) ----
      [] {
        DslIntrinsic d = Entry("ceildiv", "", "ceildiv", {}, kInts, "all", {}, "ceildiv",
                               "``(x + y - 1) / y`` on integer scalars (truncating).", "");
        d.plain_op = "Div";
        return d;
      }(),
  };
  return *table;
}

namespace {

// The ops of the table, registered with the hand-written ones of dsl_ops.cc.
const bool kRegistered = [] {
  std::set<std::string> done;  // entries may share an op (S.vnsr, S.vnsrsr)
  for (const DslIntrinsic& d : DslIntrinsics()) {
    if (!d.variant_op.empty() && done.insert(d.variant_op).second) {
      OpRegEntry& variant = (*new OpRegEntry(d.variant_op))
                                .set_effect(EffectOf(d))
                                .set_attr("dsl.name", d.variant_c_name)
                                .describe(d.variant_describe);
      if (d.variant_num_inputs >= 0) variant.set_num_inputs(d.variant_num_inputs);
      if (!d.split.empty()) variant.set_attr("dsl.split", d.split);
    }
    // An empty op: a TIR node or op (plain_op), not registered here.
    if (d.op.empty() || !done.insert(d.op).second) continue;
    OpRegEntry& reg = (*new OpRegEntry(d.op))
                          .set_effect(EffectOf(d))
                          .set_attr("dsl.name", d.c_name)
                          .set_attr("dsl.form", d.form)
                          .describe(d.describe);
    if (d.num_inputs >= 0) reg.set_num_inputs(d.num_inputs);
    if (!d.split.empty()) reg.set_attr("dsl.split", d.split);
    // A scalar operand: dsl.AlignVectorWidth computes the call in lane 0 of a native vector
    // (with an all-lanes mask where the op takes one).
    if (!d.scalar_elements.empty()) {
      reg.set_attr("dsl.scalar", d.mask == "false" ? "lane0_mask" : "lane0");
      // The power form's exponent is a data operand too, and so are fma's x and y.
      if (d.form == "power") reg.set_attr("dsl.scalar_operands", "2");
      if (d.form == "fma") reg.set_attr("dsl.scalar_operands", "3");
    }
    // return_idx=True (the reduce form's argument 2) needs an X3 target: the op attributes
    // dsl.VerifyTargetFeatures reads.
    for (const std::string& k : d.keywords) {
      if (k != "return_idx") continue;
      reg.set_attr("dsl.x3_arg", "2");
      reg.set_attr("dsl.x3_feature", "S." + d.name + "(return_idx=True)");
    }
    // The 4x4 matrix products (S.vmml, S.vmma) are X2 instructions: X3 targets have none, as
    // Compass refuses them there. dsl.VerifyTargetFeatures reads the attribute.
    if (d.form == "matrix") reg.set_attr("dsl.x2_feature", "S." + d.name);
  }
  return true;
}();

}  // namespace
}  // namespace tessera
