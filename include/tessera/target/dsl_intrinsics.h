// The DSL intrinsics declared once, as data: each entry gives what the op registry, the Python
// argument checks of S.<name> and PySim's dispatch are derived from (tessera/dsl.h holds the
// C implementation CodeGenDSL calls).
#pragma once

#include <string>
#include <vector>

namespace tessera {

/*! \brief One DSL intrinsic. */
struct DslIntrinsic {
  std::string name;  ///< S.<name>
  /*! \brief the IR op, "dsl.<name>", which the table registers; empty where the intrinsic is
   *  TIR only (`plain_op`). */
  std::string op;
  std::string c_name;  ///< the tessera/dsl.h function CodeGenDSL prints ("dsl.name")
  /*! \brief The argument form, which fixes the operand and result types:
   *  "pairwise": (x, y), two vectors of one type (a scalar operand is broadcast), of a native or
   *  multiple width; the result has that type, the pairs of x then the pairs of y
   *  (dsl.AlignVectorWidth splits a multiple width by the op's "dsl.form" attribute).
   *  "math": (x), a float vector or scalar (a number literal is float32); the result has x's type
   *  (`op`, or the TIR op `plain_op` where `op` is empty: S.floor's tir.floor).
   *  "bits": (x), an integer vector or scalar; the result has x's type (out_sign= reinterprets it).
   *  "classify": (x), a float vector or scalar (a literal as the parser types it); the result is a
   *  mask of x's lanes (a bool for a scalar).
   *  "reduce": (x), a vector; lane 0 of the result holds the reduction of x's active lanes, the
   *  other lanes 0 (with return_idx=True lane 1 holds the index of the first extreme lane).
   *  The result has x's type, except for a sum of 16-bit floats (float32x8). A multiple width
   *  is allowed where `split` is "sum" (without a mask): the result then has x's lanes.
   *  "shift": (x, shift), an integer vector and a count (a scalar, a literal or a vector of x's
   *  lanes and width, read as unsigned); the result has x's type. With the entry's flag keyword
   *  (with_round, saturate) the call is `op`, else `plain_op`.
   *  "compare": (x, y), two vectors of one type (a scalar operand is broadcast); the result is a
   *  mask of their lanes, the TIR comparison `plain_op` ("EQ", "NE", "GE", "GT", "LE", "LT").
   *  "minmax": (x, y), vectors or scalars of one type; the result has that type, the TIR node
   *  `plain_op` ("Max", "Min").
   *  "logic": (x, y), integer vectors or masks of one type; "invert": (x), an integer vector or
   *  a mask; the result has x's type, the TIR op `plain_op` ("tir.bitwise_and", ...).
   *  "arith": (x, y), two vectors of one type (a scalar operand is broadcast; out_sign= makes
   *  both operands that sign); the result has that type: the TIR node `plain_op` ("Add", "Sub",
   *  "Mul", "Div", "Mod"), or `op` with saturate=True (integers only).
   *  "narrow": (x, shift), a native 16- or 32-bit integer vector and a count (as "shift"); the
   *  lanes shifted right and narrowed to 8 bits (16 with to_h=True: `variant_op`), each at its
   *  source position (every 2nd or 4th lane of a native vector), the gaps and inactive lanes 0;
   *  signed as x unless out_sign= says.
   *  "widen": (x, y), native integer vectors of one type (out_sign= as "arith"); the products of
   *  the low ("mul_low") or high ("mul_high") half of the lanes at double width (32-bit lanes:
   *  64-bit products as word pairs); with mask= and r= (a constant mask) lanes from r.
   *  "dot": (x, y), vectors of one type of a native or multiple width (split "parts"): the sums
   *  of 2 ("dot2") or 4 ("dot4") adjacent products at 2 or 4 times the bits (16-bit floats:
   *  float32 sums in the even lanes); a signed and an unsigned vector give a signed result.
   *  "dot_acc": (acc, x, y), acc plus the "dot" of x and y, saturated once (vdpa: `op`; vqdpa:
   *  S.vqdot's op, then dsl.vadds, for integers); a float32 acc (vqdpa) plus the float16 or
   *  bfloat16 products summed exactly and rounded once (`op`).
   *  "fma_half": (acc, x, y), a float32x8 acc plus the products of the even ("fma_even") or odd
   *  ("fma_odd") lanes of two float16x16 or bfloat16x16 vectors.
   *  "unary": (x), a vector or scalar; the result has x's type ("abs": saturate= an argument of
   *  the op; an integer scalar is a TIR select, a float scalar the op in lane 0; "rint").
   *  "fma": (acc, x, y), float32 vectors or scalars: acc + x * y rounded to float32 once
   *  (`op`, a fused multiply-add; a scalar in lane 0, its 3 operands broadcast).
   *  "clip": (x, min_val, max_val), a vector or scalar and two values of its type (TIR nodes
   *  Max, `plain_op`). "select": (x, y), vectors or masks of one type, the TIR node `plain_op`
   *  choosing by the mask.
   *  "matrix": (ptr, x, y), two float16x16 or bfloat16x16 vectors and a pointer to 16 float32:
   *  the 4x4 product of x (row-major) and y (column-major) written there ("matmul") or added
   *  to what is there ("matmul_acc"); no result.
   *  "mask_reduce": (mask), a mask (or a compile-time bool list): a bool, whether "all" or
   *  "any" of its lanes are active.
   *  "power": (x, exponent), a float vector or scalar and an exponent of its type (a number is
   *  broadcast); the result has x's type.
   *  "ceildiv": (x, y), two integer scalars (of `scalar_elements`, unified as the parser's
   *  arithmetic does): ceil(x / y) as (x + y - 1) / y, the TIR nodes Add, Sub and `plain_op`
   *  ("Div", truncating); two numbers are folded at compile time.
   *  "const_mask": (x), a compile-time bool list or mask string: a mask of its lanes.
   *  "tail_mask": (n, lanes), a count and a compile-time lane count: a mask whose lanes below n
   *  are active (constant lanes where n is a constant, else `op`).
   *  Permutations, the TIR node `plain_op` (Shuffle: constant lane indices; Broadcast) or `op`
   *  where lanes depend on runtime values: "concat": (inps, part), 2-4 vectors or masks of one
   *  type, all lanes or one half ("low", "high", "even", "odd") of each, in order; "split": (x),
   *  a multiple-width vector or mask: a tuple of native parts; "zip": (x, y, part), x0 y0 x1
   *  y1 ... (of one half with part); "reverse": (x), the lanes in reverse order; "replicate":
   *  (x, index), lane index in every lane (a runtime index: a Broadcast); "slide": (x, y,
   *  shift), x[shift:] then y[:shift] (an immediate shift); "rotate": (x, shift), lane i from
   *  x[(i + shift) mod n] (a runtime shift: `op`, a two-vector lookup); "lookup": (table,
   *  indices), 2-4 native vectors read as one array, lane i from table[indices[i]] or 0 (`op`
   *  on each pair); "compress": (x, mask) or (x, y, mask), the active lanes of x packed to the
   *  bottom, then zeros ("zeros") or y's lanes ("concat"); "broadcast": (x, lanes), a scalar
   *  in every lane.
   *  Conversions: "cast": (x, dtype, part, saturate), a number, vector or tuple of vectors
   *  converted to dtype (the TIR node `plain_op`, Cast; the lanes that part selects: `op`,
   *  one native vector per call); "same_bits": (x), an integer read as signed ("signed") or
   *  unsigned (`plain_op`, tir.reinterpret); "reinterpret": (x, dtype), a value, literal or
   *  pointer as dtype of the same bits (`plain_op`); "extend": (x), the "low" or "high" half of
   *  a native 8- or 16-bit integer vector at double width (`op`).
   *  Memory: "load": (ptr, lanes, stride), a vector of the pointee's type read at ptr (the TIR
   *  node `plain_op`, a BufferLoad of a ramp); "store": (value, ptr, stride), the vector
   *  written there (BufferStore); "gather": (ptr, indices), lane i read at ptr[indices[i]], a
   *  16-bit index vector of the result's lanes (`op`); "scatter": (value, ptr, indices), lane
   *  i written at ptr[indices[i]] (`op`).
   *  DMA (effect opaque; counts and strides in elements): "dma_copy": (dst, src, width,
   *  src_stride, times, dst_stride), rows copied between two pointers of one element type
   *  (`op`; one plain row between DDR and SRAM: `variant_op`, dsl.dma1d), with "async" also
   *  an event; "dma_memset": (ptr, value, num); "dma_transpose2d": (dst, src, row, col,
   *  dst_stride, src_stride); "dma_upsample": (dst, src, h_scale, w_scale, c, w, src_c_stride,
   *  dst_c_stride, dst_w_stride); "events": (count) "alloc" events (let-bound calls of `op`),
   *  or (*events) "wait" for or "free" each; "flush_cache": (invalidate).
   *  "tec": (), the running TEC's "local_id", the "local_size" of a core (int32), or a
   *  "barrier" of the core's TECs. "perf_tick": (cid), the "begin" or "end" of a profiled
   *  region. */
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
   *  "excluded" (the op takes the mask; inactive lanes are left out of the reduction),
   *  "undefined_masks_false" (undefined for integer vectors, false for masks), "keep"
   *  (inactive lanes keep the first operand: the accumulator, x), "select" (the mask chooses
   *  between x and y; no mask: x), "operand" (the mask is the operand: mask_reduce),
   *  "packed" (the mask picks the lanes packed: compress), "zero" (inactive lanes are zero:
   *  load, gather), "skip" (inactive lanes are not written: store, scatter). */
  std::string mask;
  /*! \brief Keyword arguments of S.<name> beyond the form's: "out_sign" (the result read with
   *  that signedness); "return_idx" (reduce: the index of the extreme lane in lane 1; X3
   *  targets only, checked by dsl.VerifyTargetFeatures through the op attributes "dsl.x3_arg"
   *  and "dsl.x3_feature"); "with_round", "saturate" (shift: the flag that selects `op` over
   *  `plain_op`); "r" (with mask=, inactive lanes from r instead of undefined); the
   *  permutations' "part", "index", "lanes"; the loads' and stores' "lanes", "stride". */
  std::vector<std::string> keywords;
  /*! \brief The lane function, as PySim computes it: "add", "sub", "max", "min" (pairwise); the
   *  math function "exp", "log", ... (math); "clz", "cls", "brevs", "popcount" (bits); "isnan",
   *  "isinf", "isfinite" (classify); "add", "max", "min" (reduce); "asr_round",
   *  "lsl_saturate", "ror" (shift: the lane function of `op`); "add_saturate", "sub_saturate"
   *  (arith: the lane function of `op`); for TIR-only entries, `plain_op`. */
  std::string lane_fn;
  /*! \brief Whether integer results saturate (else they wrap); narrow: whether they always
   *  saturate and round (S.vnsrsr), where the others take the keywords saturate, with_round. */
  bool saturate = false;
  std::string doc;       ///< S.<name>.__doc__
  std::string describe;  ///< the op's description (its IR arguments)
  /*! \brief How dsl.AlignVectorWidth splits a multiple width where the form does not say it (the
   *  op's "dsl.split" attribute): "" (native widths only), "sum" (each native part reduced, the
   *  part results added into part 0, the other parts 0). */
  std::string split;
  /*! \brief The TIR the intrinsic builds where it does not call `op` (without the flag
   *  keyword, or always where `op` is empty), which the table does not register: a TIR op
   *  ("tir.shift_right", "tir.bitwise_and"; PySim's handler of that op) or an expression node
   *  ("Add", "EQ", "Max"; PySim's evaluation of that node). Empty: the call is always `op`. */
  std::string plain_op;
  /*! \brief An op the form calls instead of `op` in one case, which the table registers with
   *  the entry's effect (once where entries share it): narrow's op of to_h=True (32-bit lanes to
   *  16-bit results, dsl.vnsr_h); dma_copy's op of one plain row between DDR and SRAM
   *  (dsl.dma1d: ddr, sram, count, direction). Empty: none. */
  std::string variant_op;
  std::string variant_c_name;    ///< its "dsl.name", the C function CodeGenDSL prints
  std::string variant_describe;  ///< its description
  int variant_num_inputs = -1;   ///< its argument count (checked where a call is built); -1: any
  /*! \brief What a call does besides computing its result: "pure" (nothing), "reads_memory",
   *  "writes_memory" (through a pointer operand), "opaque" (anything); the op's CallEffect. */
  std::string effect = "pure";
  /*! \brief The op's argument count (checked where a call is built); -1: any. */
  int num_inputs = -1;
};

/*! \brief Every intrinsic declared in the table, in declaration order. */
const std::vector<DslIntrinsic>& DslIntrinsics();

}  // namespace tessera
