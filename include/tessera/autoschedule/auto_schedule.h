// The automatic schedule: analytical rules that turn an unscheduled TensorIR module into a
// tir.Schedule whose trace is the chosen schedule (no measurement runs).
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/target.h"
#include "tessera/schedule/schedule.h"

namespace tessera {
namespace autoschedule {

// The target facts live in ir/target.h (every layer reads them); the names stay usable here.
using tessera::FactsForTarget;
using tessera::HostFacts;
using tessera::TargetFacts;

/*!
 * \brief Whether `func` carries no schedule, so that the automatic schedule may take it.
 *
 * The rule: the function has a root block whose blocks sit directly under loop nests of
 * their own (no nested blocks, no loop holding several statements); every loop is serial,
 * starts at 0 and has no annotation and no thread binding; every block binds its iterators one
 * to one, in order, to the loops above it (the default loop structure of te.create_prim_func
 * and T.grid); no block has a schedule annotation (meta_schedule.*, pragma_*, tir.*, tessera.*,
 * software_pipeline*, buffer_dim_align: attributes te.compute copies from `attrs` do not
 * count); every allocated buffer is global. Each schedule
 * primitive breaks one of these (split and fuse change the bindings, reorder their order,
 * parallel/vectorize/unroll/bind the loop kinds, compute_at and decompose_reduction put
 * several blocks under one loop, cache_read/cache_write "local"/"shared" allocate non-global
 * buffers, annotate adds annotations), so a function scheduled by hand is left alone. The body
 * of an opaque computation (a block without iterators and without blocks inside, the root or a
 * block of the root outside every loop: a te.extern written with tir.ir_builder) is the
 * computation itself, parallel loops included, and is not looked at. A
 * function attribute "tessera.auto_schedule" (bool) forces the decision
 * either way. `why` receives the reason when the answer is no.
 */
bool CarriesNoSchedule(const PrimFunc& func, std::string* why = nullptr);

/*!
 * \brief Schedule every function of `mod` that carries no schedule for the target `facts`
 *  describe. Each rule runs through the schedule's primitives (checked); a rule whose
 *  primitive refuses a block is rolled back and the block left to the next rule.
 */
schedule::Schedule AutoSchedule(const IRModule& mod, const TargetFacts& facts);

/*! \brief A point of the automatic schedule's design space (see AutoScheduleSpace). */
struct SpacePoint {
  schedule::Schedule sch;
  std::vector<int64_t> decisions;  ///< the index taken at each choice, in order
  std::vector<int64_t> sizes;      ///< the number of candidates of each choice
};

/*!
 * \brief The automatic schedule as a design space for the tuner: every choice the rules make
 *  (register tile, packing of either matmul operand, loop order, unrolling, vector chunks) is
 *  drawn by `sample_categorical` (recorded in the trace with its decision), the rules'
 *  analytical choice being the most likely. `given[k]` fixes the k-th choice (an index; -1,
 *  out of range or absent: drawn from `seed`, or the preferred candidate when `draw_missing` is
 *  false, so that an empty `given` then gives the automatic schedule itself). The same `given`
 *  and `seed` give the same point.
 */
SpacePoint AutoScheduleSpace(const IRModule& mod, const TargetFacts& facts,
                             const std::vector<int64_t>& given, int64_t seed,
                             bool draw_missing = true);

/*!
 * \brief For GPU targets: the parallel loops of opaque computations (te.extern bodies, which
 *  hold no block for the rules to bind) bound to threads. Each outermost parallel loop outside
 *  every thread binding becomes blockIdx.x x threadIdx.x (up to 256 threads, one per iteration,
 *  guarded when they do not divide the extent); parallel loops inside a thread become serial.
 *  tir.AutoSchedule runs it on the functions it schedules.
 */
PrimFunc BindParallelLoops(const PrimFunc& func, const TargetFacts& facts);
/*! \brief Schedule one function of a schedule in place (the function it works on). */
void AutoScheduleFunction(schedule::Schedule& sch, const std::string& func_name,
                          const TargetFacts& facts);

}  // namespace autoschedule
}  // namespace tessera
