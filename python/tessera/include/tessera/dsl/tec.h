/* tessera/dsl/tec.h: the TECs of a core as host threads: get_local_id, barrier and the launcher.
 * Included by tessera/dsl.h. */
#ifndef TESSERA_DSL_TEC_H_
#define TESSERA_DSL_TEC_H_

/* ---- TECs ---------------------------------------------------------------------------------------
 * A launch runs the kernel on TESSERA_NUM_TECS threads: the caller is TEC 0 and a pool of
 * TESSERA_NUM_TECS - 1 worker threads, started on the first launch and kept for the life of the
 * library, are the others. Workers park between launches (a short spin, then a futex wait) and a
 * destructor stops and joins them before the library is unmapped. The barrier counts only TECs
 * that are still running, because `return` in a kernel ends one TEC and must not leave the others
 * waiting at the kernel's final barrier. */

#define TESSERA_NUM_TECS 4
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* A word that threads wait on until it changes. `sleepers` lets a waker skip the system call
 * when nobody sleeps; both sides use sequentially consistent accesses, so either the waker sees
 * the sleeper or the sleeper sees the new value. */
typedef struct {
  _Atomic unsigned value;
  _Atomic int sleepers;
} __tessera_word;

/* Returns once w->value != seen. The next launch or barrier opening is usually close, so the
 * waiter first yields its CPU a few hundred times (spinning on `pause` instead starves the very
 * threads it waits for when the TECs outnumber the free cores), then sleeps in the kernel. */
static inline void __tessera_wait_change(__tessera_word* w, unsigned seen) {
  for (int i = 0; i < 300; ++i) {
    if (atomic_load(&w->value) != seen) return;
    sched_yield();
  }
  atomic_fetch_add(&w->sleepers, 1);
  while (atomic_load(&w->value) == seen) {
#if defined(__linux__)
    syscall(SYS_futex, (unsigned*)&w->value, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
#else
    sched_yield();
#endif
  }
  atomic_fetch_sub(&w->sleepers, 1);
}

/* Changes the word and wakes every waiter. */
static inline void __tessera_bump(__tessera_word* w) {
  atomic_fetch_add(&w->value, 1);
#if defined(__linux__)
  if (atomic_load(&w->sleepers) > 0) {
    syscall(SYS_futex, (unsigned*)&w->value, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  }
#endif
}

/* The TEC pool of this library (each compiled kernel's library has its own). */
typedef struct {
  pthread_mutex_t launch_mu; /* one launch at a time: shared (__local) arrays are static */
  int started;
  pthread_t workers[TESSERA_NUM_TECS - 1];
  __tessera_word launch;     /* bumped to start a launch (or to stop the workers) */
  __tessera_word finished;   /* bumped by each worker when it is done with a launch */
  __tessera_word generation; /* bumped when a barrier opens */
  _Atomic int stop;
  unsigned seen_at_start; /* the launch word when the workers were created */
  void (*fn)(void*);
  void* data;
  pthread_mutex_t barrier_mu;
  int running; /* TECs that have not returned */
  int arrived; /* TECs waiting at the current barrier */
} __tessera_pool_t;
__TESSERA_SHARED_DATA __tessera_pool_t __tessera_pool __TESSERA_SHARED_INIT(
    {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0, 0}, {0, 0}, {0, 0}, 0, 0, NULL, NULL,
     PTHREAD_MUTEX_INITIALIZER, 0, 0});

__TESSERA_SHARED_DATA __thread int __tessera_tec_id;
__TESSERA_SHARED_DATA __thread int __tessera_in_launch;

static inline int get_local_id(int dim) {
  (void)dim;
  return __tessera_tec_id;
}

static inline int get_local_size(int dim) {
  (void)dim;
  return TESSERA_NUM_TECS;
}

/* Called with barrier_mu held. */
static inline void __tessera_open_barrier(void) {
  __tessera_pool.arrived = 0;
  __tessera_bump(&__tessera_pool.generation);
}

/* The mutex orders every TEC's earlier writes before the barrier opens; the sequentially
 * consistent generation word orders the opening before the others' later reads. */
static inline void barrier(int flags) {
  (void)flags;
  if (!__tessera_in_launch) return; /* called outside a launch: a single TEC */
  pthread_mutex_lock(&__tessera_pool.barrier_mu);
  unsigned generation = atomic_load(&__tessera_pool.generation.value);
  if (++__tessera_pool.arrived >= __tessera_pool.running) {
    __tessera_open_barrier();
    pthread_mutex_unlock(&__tessera_pool.barrier_mu);
    return;
  }
  pthread_mutex_unlock(&__tessera_pool.barrier_mu);
  __tessera_wait_change(&__tessera_pool.generation, generation);
}

static inline void __tessera_tec_retire(void) {
  pthread_mutex_lock(&__tessera_pool.barrier_mu);
  __tessera_pool.running--;
  if (__tessera_pool.arrived > 0 && __tessera_pool.arrived >= __tessera_pool.running) {
    __tessera_open_barrier();
  }
  pthread_mutex_unlock(&__tessera_pool.barrier_mu);
}

/* ---- The arrays of a call ---------------------------------------------------------------------
 * The packed entry point notes the bytes of each array argument (tessera/dsl/packed.h, on the
 * calling thread); a launch makes them the running call's, so that a DMA (tessera/dsl/dma.h)
 * whose pointer lies in an argument but whose extent leaves it is skipped and fails the call
 * with an error instead of writing past the array. */
#define TESSERA_MAX_NOTED_ARRAYS 64
typedef struct {
  const char* lo;
  const char* hi;
} __tessera_array_range_t;
__TESSERA_SHARED_DATA __thread __tessera_array_range_t __tessera_noted[TESSERA_MAX_NOTED_ARRAYS];
__TESSERA_SHARED_DATA __thread int __tessera_noted_count;
__TESSERA_SHARED_DATA __tessera_array_range_t __tessera_call_arrays[TESSERA_MAX_NOTED_ARRAYS];
__TESSERA_SHARED_DATA int __tessera_call_array_count;
__TESSERA_SHARED_DATA atomic_int __tessera_call_failed;
__TESSERA_SHARED_DATA char __tessera_call_error[512];

static inline void __tessera_note_array(const void* data, int64_t bytes) {
  if (__tessera_noted_count >= TESSERA_MAX_NOTED_ARRAYS || data == NULL || bytes < 0) return;
  __tessera_noted[__tessera_noted_count].lo = (const char*)data;
  __tessera_noted[__tessera_noted_count].hi = (const char*)data + bytes;
  ++__tessera_noted_count;
}

/* Whether elements [first, last] (of `size` bytes) from `p` stay inside the argument array that
 * `p` points into; a pointer into no argument (local memory) is not checked. A violation is
 * recorded once per call (the first), for __tessera_run_tecs to report. */
static inline int __tessera_access_in_bounds(const void* p, int64_t first, int64_t last,
                                             size_t size, const char* op, const char* role) {
  const char* c = (const char*)p;
  for (int i = 0; i < __tessera_call_array_count; ++i) {
    const __tessera_array_range_t* r = &__tessera_call_arrays[i];
    if (c < r->lo || c >= r->hi) continue;
    int64_t off = (int64_t)(c - r->lo), bytes = (int64_t)(r->hi - r->lo), sz = (int64_t)size;
    if (off + first * sz >= 0 && off + (last + 1) * sz <= bytes) return 1;
    int expected = 0;
    if (atomic_compare_exchange_strong(&__tessera_call_failed, &expected, 1)) {
      snprintf(__tessera_call_error, sizeof __tessera_call_error,
               "%s: the %s reaches elements [%lld, %lld] from its pointer, outside its array "
               "(%lld elements, the pointer at element %lld); nothing was copied",
               op, role, (long long)first, (long long)last, (long long)(bytes / sz),
               (long long)(off / sz));
    }
    return 0;
  }
  return 1;
}

/* Runs fn(data) on every TEC and returns 0, or returns nonzero with a message in err when the
 * TEC threads cannot be started; then no TEC has run. */
__TESSERA_SHARED int __tessera_run_tecs(void (*fn)(void*), void* data, char* err, int err_len);
__TESSERA_SHARED void __tessera_set_error(char* err, int err_len, const char* fmt, ...);

#if __TESSERA_SHARED_BODIES
static void* __tessera_worker(void* arg) {
  __tessera_tec_id = (int)(intptr_t)arg;
  unsigned seen = __tessera_pool.seen_at_start;
  for (;;) {
    __tessera_wait_change(&__tessera_pool.launch, seen);
    seen = atomic_load(&__tessera_pool.launch.value);
    if (atomic_load(&__tessera_pool.stop)) break;
    __tessera_in_launch = 1;
    __tessera_pool.fn(__tessera_pool.data);
    __tessera_in_launch = 0;
    __tessera_tec_retire();
    __tessera_bump(&__tessera_pool.finished);
  }
  return NULL;
}

__TESSERA_SHARED void __tessera_set_error(char* err, int err_len, const char* fmt, ...) {
  if (err == NULL || err_len <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, (size_t)err_len, fmt, ap);
  va_end(ap);
}

/* Wakes the first `count` workers with the stop flag set and joins them. */
static void __tessera_stop_workers(int count) {
  atomic_store(&__tessera_pool.stop, 1);
  __tessera_bump(&__tessera_pool.launch);
  for (int i = 0; i < count; ++i) pthread_join(__tessera_pool.workers[i], NULL);
  atomic_store(&__tessera_pool.stop, 0);
}

/* Runs before dlclose unmaps the library (and at process exit): no worker may still be parked
 * in this library's code. */
__attribute__((destructor)) static void __tessera_pool_shutdown(void) {
  if (__tessera_pool.started) __tessera_stop_workers(TESSERA_NUM_TECS - 1);
  __tessera_pool.started = 0;
}

/* A forked child has none of the parent's workers: start new ones on its first launch. */
static void __tessera_pool_forget(void) {
  __tessera_pool.started = 0;
  pthread_mutex_init(&__tessera_pool.launch_mu, NULL);
  pthread_mutex_init(&__tessera_pool.barrier_mu, NULL);
}

/* Called with launch_mu held. Returns 0, or the pthread_create error after stopping the workers
 * that did start. */
static int __tessera_pool_start(int* failed) {
  static int at_fork_registered;
  if (!at_fork_registered) {
    pthread_atfork(NULL, NULL, __tessera_pool_forget);
    at_fork_registered = 1;
  }
  __tessera_pool.seen_at_start = atomic_load(&__tessera_pool.launch.value);
  for (int i = 0; i < TESSERA_NUM_TECS - 1; ++i) {
    int rc = pthread_create(&__tessera_pool.workers[i], NULL, __tessera_worker,
                            (void*)(intptr_t)(i + 1));
    if (rc != 0) {
      __tessera_stop_workers(i);
      *failed = i + 1;
      return rc;
    }
  }
  __tessera_pool.started = 1;
  return 0;
}

__TESSERA_SHARED int __tessera_run_tecs(void (*fn)(void*), void* data, char* err, int err_len) {
  pthread_mutex_lock(&__tessera_pool.launch_mu);
  __tessera_call_array_count = __tessera_noted_count;
  for (int i = 0; i < __tessera_noted_count; ++i) __tessera_call_arrays[i] = __tessera_noted[i];
  __tessera_noted_count = 0;
  atomic_store(&__tessera_call_failed, 0);
  if (!__tessera_pool.started) {
    int failed = 0;
    int rc = __tessera_pool_start(&failed);
    if (rc != 0) {
      pthread_mutex_unlock(&__tessera_pool.launch_mu);
      __tessera_set_error(err, err_len, "cannot start TEC thread %d: %s", failed, strerror(rc));
      return 1;
    }
  }
  __tessera_pool.fn = fn;
  __tessera_pool.data = data;
  __tessera_pool.running = TESSERA_NUM_TECS;
  __tessera_pool.arrived = 0;
  unsigned finished = atomic_load(&__tessera_pool.finished.value);
  __tessera_bump(&__tessera_pool.launch);

  int saved_id = __tessera_tec_id, saved_in_launch = __tessera_in_launch;
  __tessera_tec_id = 0;
  __tessera_in_launch = 1;
  fn(data);
  __tessera_tec_retire();
  __tessera_tec_id = saved_id;
  __tessera_in_launch = saved_in_launch;

  for (;;) {
    unsigned now = atomic_load(&__tessera_pool.finished.value);
    if (now - finished >= TESSERA_NUM_TECS - 1) break;
    __tessera_wait_change(&__tessera_pool.finished, now);
  }
  __tessera_call_array_count = 0;
  int failed = atomic_load(&__tessera_call_failed);
  if (failed) __tessera_set_error(err, err_len, "%s", __tessera_call_error);
  pthread_mutex_unlock(&__tessera_pool.launch_mu);
  return failed ? 1 : 0;
}
#endif /* __TESSERA_SHARED_BODIES */

#endif /* TESSERA_DSL_TEC_H_ */
