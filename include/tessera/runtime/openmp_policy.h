// The OpenMP wait policy of tessera's kernels: a bounded spin, chosen before OpenMP starts.
#pragma once

namespace tessera {
namespace runtime {

/*!
 * \brief Before the first kernel library that uses OpenMP is loaded: unless the user chose a
 *  policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME), idle OpenMP threads spin for a
 *  bounded time (GOMP_SPINCOUNT=kOpenMPSpinCount for libgomp, KMP_BLOCKTIME=1 ms for libomp)
 *  and then sleep. Short kernels called back to back then find their threads awake (a passive
 *  policy puts them to sleep after each call), while a numpy call that follows after a pause
 *  does not share the cores with spinning threads (an unbounded spin does). Takes effect only
 *  if the OpenMP runtime has not started yet in this process; idempotent.
 */
void ConfigureOpenMPWaitPolicy();

/*! \brief Spin iterations of an idle libgomp thread before it sleeps (about 0.1-0.5 ms). */
constexpr int kOpenMPSpinCount = 10000;

}  // namespace runtime
}  // namespace tessera
