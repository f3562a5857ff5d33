// The vector DSL's intrinsics ("dsl.*"): "dsl.name" is the C function CodeGenDSL prints.
#include "tessera/ir/op.h"

namespace tessera {
namespace {

// ---- TECs ----
TESSERA_REGISTER_OP("dsl.get_local_id")
    .set_num_inputs(0)
    .set_effect(CallEffect::kReadState)
    .set_attr("dsl.name", "get_local_id")
    .describe("Index of the running TEC (0-3).");
TESSERA_REGISTER_OP("dsl.get_local_size")
    .set_num_inputs(0)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "get_local_size")
    .describe("Number of TECs of a core (4).");
TESSERA_REGISTER_OP("dsl.barrier")
    .set_num_inputs(0)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "barrier")
    .describe("Wait for every running TEC of the core.");

// ---- Masks and lanes ----
TESSERA_REGISTER_OP("dsl.const_mask")
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vmov")
    .describe("A constant mask: one bool immediate per lane, lane 0 first.");
TESSERA_REGISTER_OP("dsl.tail_mask")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vtail_mask")
    .describe("Lanes below the (runtime) count are active.");
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
TESSERA_REGISTER_OP("dsl.set_lane")
    .set_num_inputs(3)
    .set_effect(CallEffect::kPure)
    .describe("Vector or mask args[0] with lane args[1] replaced by args[2].");
TESSERA_REGISTER_OP("dsl.vall")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vall")
    .describe("Whether every lane of a mask is active.");
TESSERA_REGISTER_OP("dsl.vany")
    .set_num_inputs(1)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vany")
    .describe("Whether any lane of a mask is active.");

// ---- Conversions between native vectors ----
TESSERA_REGISTER_OP("dsl.vcvt")
    .set_num_inputs(3)
    .set_effect(CallEffect::kPure)
    .set_attr("dsl.name", "__vcvt")
    .describe(
        "args: x, first, stride: lanes first, first + stride, ... of x converted to the "
        "call's native vector type (zero where x runs out).");
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

// ---- DMA and events (counts in elements of the pointers' types) ----
TESSERA_REGISTER_OP("dsl.dma1d")
    .set_num_inputs(4)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "DMA1D")
    .describe("args: ddr, sram, count, direction (1: into SRAM, 0: out of SRAM).");
TESSERA_REGISTER_OP("dsl.dma_copy")
    .set_num_inputs(6)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__dma_copy")
    .describe("args: dst, src, width, src_stride, times, dst_stride.");
TESSERA_REGISTER_OP("dsl.async_dma_copy")
    .set_num_inputs(7)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__async_dma_copy")
    .describe("args: dst, src, width, src_stride, times, dst_stride, event.");
TESSERA_REGISTER_OP("dsl.dma_memset")
    .set_num_inputs(3)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__dma_memset")
    .describe("args: ptr, value, num.");
TESSERA_REGISTER_OP("dsl.dma_transpose2d")
    .set_num_inputs(6)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__dma_transpose2d")
    .describe("args: dst, src, row, col, dst_stride, src_stride.");
TESSERA_REGISTER_OP("dsl.dma_upsample")
    .set_num_inputs(9)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__dma_upsample")
    .describe(
        "args: dst, src, h_scale, w_scale, c, w, src_c_stride, dst_c_stride, "
        "dst_w_stride.");
TESSERA_REGISTER_OP("dsl.alloc_event")
    .set_num_inputs(0)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__alloc_event")
    .describe("A free DMA event of this TEC.");
TESSERA_REGISTER_OP("dsl.wait_event")
    .set_num_inputs(1)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__wait_event")
    .describe("Block until the event is idle.");
TESSERA_REGISTER_OP("dsl.free_event")
    .set_num_inputs(1)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__free_event")
    .describe("Wait for, then release, the event.");
TESSERA_REGISTER_OP("dsl.flush_cache")
    .set_num_inputs(1)
    .set_effect(CallEffect::kOpaque)
    .set_attr("dsl.name", "__flush_cache")
    .describe("Write back the data cache.");

}  // namespace
}  // namespace tessera
