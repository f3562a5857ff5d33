// The table of DSL intrinsics (tessera/target/dsl_intrinsics.h) and the ops it registers.
#include "tessera/target/dsl_intrinsics.h"

#include "tessera/ir/op.h"

namespace tessera {
namespace {

const std::vector<std::string> kInts = {"int8", "uint8", "int16", "uint16", "int32", "uint32"};

std::vector<std::string> With(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

const std::vector<DslIntrinsic>& DslIntrinsics() {
  static const std::vector<DslIntrinsic>* table = new std::vector<DslIntrinsic>{
      // ---- Pairwise: x[2i] op x[2i+1] fill the low half, the pairs of y the high half ----
      {"vaddh", "dsl.vaddh", "__vaddh", "pairwise", With(kInts, {"float16", "float32"}), "all",
       "add", true,
       "Saturating pairwise sums: pairs of ``x`` fill the low half, pairs of ``y`` the high.",
       "args: x, y: saturating pairwise sums, x pairs low, y pairs high."},
      {"vsubh", "dsl.vsubh", "__vsubh", "pairwise", With(kInts, {"float16", "float32"}), "all",
       "sub", true, "Saturating pairwise differences ``x[2i] - x[2i+1]``, as S.vaddh.",
       "args: x, y: saturating pairwise differences."},
      {"vmaxh", "dsl.vmaxh", "__vmaxh", "pairwise", With(kInts, {"float16", "float32", "bfloat16"}),
       "all", "max", false,
       "Pairwise maxima: pairs of ``x`` fill the low half, pairs of ``y`` the high half.",
       "args: x, y: pairwise maxima."},
      {"vminh", "dsl.vminh", "__vminh", "pairwise", With(kInts, {"float16", "float32", "bfloat16"}),
       "all", "min", false, "Pairwise minima, as S.vmaxh.", "args: x, y: pairwise minima."},
  };
  return *table;
}

namespace {

// The ops of the table, registered with the hand-written ones of dsl_ops.cc.
const bool kRegistered = [] {
  for (const DslIntrinsic& d : DslIntrinsics()) {
    (*new OpRegEntry(d.op))
        .set_effect(CallEffect::kPure)
        .set_attr("dsl.name", d.c_name)
        .describe(d.describe);
  }
  return true;
}();

}  // namespace
}  // namespace tessera
