// The DSL intrinsics declared once, as data: each entry gives what the op registry, the Python
// argument checks of S.<name> and PySim's dispatch are derived from (tessera/dsl.h holds the
// C implementation CodeGenDSL calls).
#pragma once

#include <string>
#include <vector>

namespace tessera {

/*! \brief One DSL intrinsic. */
struct DslIntrinsic {
  std::string name;    ///< S.<name>
  std::string op;      ///< the IR op, "dsl.<name>"
  std::string c_name;  ///< the tessera/dsl.h function CodeGenDSL prints ("dsl.name")
  /*! \brief The argument form, which fixes the operand and result types:
   *  "pairwise": (x, y), two vectors of one type (a scalar operand is broadcast), of a native or
   *  multiple width; the result has that type, the pairs of x then the pairs of y
   *  (dsl.AlignVectorWidth splits a multiple width by the op's "dsl.form" attribute).
   *  "math": (x), a float vector or scalar (a number literal is float32); the result has x's type.
   *  "bits": (x), an integer vector or scalar; the result has x's type (out_sign= reinterprets it).
   *  "classify": (x), a float vector or scalar (a literal as the parser types it); the result is a
   *  mask of x's lanes (a bool for a scalar).
   *  "reduce": (x), a vector; lane 0 of the result holds the reduction of x's active lanes, the
   *  other lanes 0 (with return_idx=True lane 1 holds the index of the first extreme lane).
   *  The result has x's type, except for a sum of 16-bit floats (float32x8). A multiple width
   *  is allowed where `split` is "sum" (without a mask): the result then has x's lanes.
   *  "shift": (x, shift), an integer vector and a count (a scalar, a literal or a vector of x's
   *  lanes and width, read as unsigned); the result has x's type. With the entry's flag keyword
   *  (with_round, saturate) the call is `op`, else `plain_op`. */
  std::string form;
  /*! \brief Element types of a vector operand, at every width the form allows, in the order
   *  errors list. */
  std::vector<std::string> elements;
  /*! \brief Element types of a scalar operand; empty: vectors only. The parser emits the op
   *  on the scalar; dsl.AlignVectorWidth computes it in lane 0 of a native vector (the op's
   *  "dsl.scalar" attribute). */
  std::vector<std::string> scalar_elements;
  /*! \brief Which lanes are computed: "all" (the intrinsic takes no mask), "undefined" (mask=:
   *  inactive lanes are undefined), "false" (the op takes the mask; inactive lanes are false),
   *  "excluded" (the op takes the mask; inactive lanes are left out of the reduction). */
  std::string mask;
  /*! \brief Keyword arguments of S.<name> beyond the form's: "out_sign" (the result read with
   *  that signedness); "return_idx" (reduce: the index of the extreme lane in lane 1; X3
   *  targets only, checked by dsl.VerifyTargetFeatures through the op attributes "dsl.x3_arg"
   *  and "dsl.x3_feature"); "with_round", "saturate" (shift: the flag that selects `op` over
   *  `plain_op`); "r" (with mask=, inactive lanes from r instead of undefined). */
  std::vector<std::string> keywords;
  /*! \brief The lane function, as PySim computes it: "add", "sub", "max", "min" (pairwise); the
   *  math function "exp", "log", ... (math); "clz", "cls", "brevs", "popcount" (bits); "isnan",
   *  "isinf", "isfinite" (classify); "add", "max", "min" (reduce); "asr_round",
   *  "lsl_saturate", "ror" (shift: the lane function of `op`). */
  std::string lane_fn;
  /*! \brief Whether integer results saturate (else they wrap). */
  bool saturate = false;
  std::string doc;       ///< S.<name>.__doc__
  std::string describe;  ///< the op's description (its IR arguments)
  /*! \brief How dsl.AlignVectorWidth splits a multiple width where the form does not say it (the
   *  op's "dsl.split" attribute): "" (native widths only), "sum" (each native part reduced, the
   *  part results added into part 0, the other parts 0). */
  std::string split;
  /*! \brief shift: the op without the flag keyword, an op of TIR the table does not register
   *  ("tir.shift_right"); empty: the call is always `op`. */
  std::string plain_op;
};

/*! \brief Every intrinsic declared in the table, in declaration order. */
const std::vector<DslIntrinsic>& DslIntrinsics();

}  // namespace tessera
