// The vector DSL's ops ("dsl.*") that the intrinsic table (dsl_intrinsics.cc) does not declare:
// "dsl.name" is the C function CodeGenDSL prints. The table registers the ops of its entries
// (dsl.vaddh ... dsl.vminh, dsl.vexp ... dsl.vexp2, dsl.vcls, dsl.vclz, dsl.vbrevs, dsl.vpcnt,
// dsl.visnan, dsl.visinf, dsl.visfinite, dsl.vrpadd, dsl.vrpmax, dsl.vrpmin, dsl.vasrr,
// dsl.vlsls, dsl.vror, dsl.vadds, dsl.vsubs, dsl.vnsr, dsl.vnsr_h, dsl.vmull, dsl.vmulh,
// dsl.vdot, dsl.vqdot, dsl.vdpa, dsl.vfmae, dsl.vfmao, dsl.vabs, dsl.vrint, dsl.vmml, dsl.vmma,
// dsl.vall, dsl.vany, dsl.const_mask, dsl.tail_mask, dsl.vpow, dsl.vperm, dsl.vcompt,
// dsl.vcompc, dsl.vcvt, dsl.vload_gather, dsl.vstore_scatter, dsl.dma_copy, dsl.dma1d,
// dsl.async_dma_copy, dsl.alloc_event, dsl.wait_event, dsl.free_event, dsl.dma_memset,
// dsl.dma_transpose2d, dsl.dma_upsample, dsl.flush_cache, dsl.get_local_id, dsl.get_local_size,
// dsl.barrier, dsl.perf_tick_begin, dsl.perf_tick_end). dsl.AlignVectorWidth splits a multiple width by the op's
// "dsl.split": "parts", result part j from part j of each operand; "sum", each native part reduced
// into lane 0 and the part results added into part 0.
#include "tessera/ir/op.h"

namespace tessera {
namespace {

// ---- Masks and lanes ----
TESSERA_REGISTER_OP("dsl.mask_repack")
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vmask_repack")
    .describe(
        "args: first lane, source lanes, source parts: a mask regrouped into the call's "
        "lane count (a mask split for one element width, used with another).");
TESSERA_REGISTER_OP("dsl.vmake")
    .set_effect(CallEffect::kPure)
    .describe("A vector (or mask) from one scalar per lane, lane 0 first.");
TESSERA_REGISTER_OP("dsl.get_lane")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .describe("Lane args[1] of vector or mask args[0].");
TESSERA_REGISTER_OP("dsl.vreplic")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vreplic")
    .describe(
        "args: x (a native vector), index (int32, known only at run time): lane `index` of x in "
        "every lane (S.vreplic; a constant index is a Shuffle). An index outside the lanes "
        "fails the call, as PySim refuses it.");
TESSERA_REGISTER_OP("dsl.set_lane")
    .set_num_inputs(3)
    .set_effect(CallEffect::kPure)
    .describe("Vector or mask args[0] with lane args[1] replaced by args[2].");

// ---- Conversions between native vectors ----
TESSERA_REGISTER_OP("dsl.cast_no_zip")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .describe(
        "arg: x (16-bit floats, whole native parts): x converted to the call's float32 type, "
        "before X3 each part of x as its even lanes then its odd lanes (S.tag \"no_zip\"; "
        "dsl.AlignVectorWidth lowers it; PySim keeps the lanes in order).");
TESSERA_REGISTER_OP("dsl.vcvt_into")
    .set_num_inputs(3)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvt_into")
    .describe("args: acc, x, first: acc with lanes from `first` on replaced by x converted.");

// ---- Pointers ----
TESSERA_REGISTER_OP("dsl.nullptr")
    .set_num_inputs(0)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "NULL")
    .describe("The null pointer.");
TESSERA_REGISTER_OP("dsl.is_nullptr")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__is_nullptr")
    .describe("Whether a pointer is null.");

// ---- Intrinsic library: lane-wise ops (AlignVectorWidth splits them part by part) ----
// "dsl.scalar": a scalar call is computed in lane 0 of a native vector (dsl.AlignVectorWidth).
TESSERA_REGISTER_OP("dsl.undef_inactive")
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vundef_inactive")
    .describe(
        "args: x, mask: x, whose inactive lanes the program must not read (the value itself on "
        "the host; PySim fills them with a fixed pattern).");

// ---- Combined logic (dsl.CombineInstructions) ----
TESSERA_REGISTER_OP("dsl.vbclr")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vbclr")
    .describe("x & ~y, lane-wise, of integer vectors or masks.");
TESSERA_REGISTER_OP("dsl.vbset")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vbset")
    .describe("x | ~y, lane-wise, of integer vectors or masks.");
TESSERA_REGISTER_OP("dsl.vnand")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vnand")
    .describe("~(x & y), lane-wise, of integer vectors or masks.");
TESSERA_REGISTER_OP("dsl.vnor")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vnor")
    .describe("~(x | y), lane-wise, of integer vectors or masks.");
TESSERA_REGISTER_OP("dsl.vnsr_into")
    .set_num_inputs(6)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vnsr_into")
    .describe(
        "args: acc, x, shift, first, saturate, with_round: x's lanes shifted right (rounded to "
        "nearest, ties to even, with_round), narrowed to acc's type (clamped to its range when "
        "saturate, else wrapped) into acc from lane first (dsl.CombineInstructions).");
TESSERA_REGISTER_OP("dsl.vmull_to")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vmull_to")
    .describe(
        "args: x, y: native integer vectors of one width (signs may differ): the products of "
        "the low half of the lanes, each factor extended by its own sign, in the result type "
        "(double width), modulo 2^bits (dsl.CombineInstructions).");
TESSERA_REGISTER_OP("dsl.vmulh_to")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vmulh_to")
    .describe("dsl.vmull_to of the high half of the lanes.");
TESSERA_REGISTER_OP("dsl.vcvtue_tw")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvtue_tw")
    .describe(
        "arg: x (16-bit floats): the even lanes rounded to nearest (ties to even) and "
        "converted to 32-bit integers (X1/X2; dsl.CombineInstructions).");
TESSERA_REGISTER_OP("dsl.vcvtuo_tw")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvtuo_tw")
    .describe("dsl.vcvtue_tw of the odd lanes.");
TESSERA_REGISTER_OP("dsl.vcvtul_tw")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvtul_tw")
    .describe("dsl.vcvtue_tw of the low half of the lanes (X3).");
TESSERA_REGISTER_OP("dsl.vcvtuh_tw")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvtuh_tw")
    .describe("dsl.vcvtue_tw of the high half of the lanes (X3).");
TESSERA_REGISTER_OP("dsl.vzip_low")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vzip_low")
    .describe("args: a, b: a0 b0 a1 b1 ... of the low halves.");
TESSERA_REGISTER_OP("dsl.vzip_high")
    .set_num_inputs(2)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vzip_high")
    .describe("args: a, b: the high halves interleaved.");

// ---- Intrinsic library: printing ----
TESSERA_REGISTER_OP("dsl.printf")
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "printf")
    .describe("C printf; args[0] is the format.");

}  // namespace
}  // namespace tessera
