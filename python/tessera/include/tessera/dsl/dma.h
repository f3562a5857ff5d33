/* tessera/dsl/dma.h: DMA and its events on the host. Every transfer is a synchronous copy, so an
 * asynchronous copy has completed when it returns and waiting on its event returns at once.
 * Counts and strides are in elements of the pointers' types. Included by tessera/dsl.h. */
#ifndef TESSERA_DSL_DMA_H_
#define TESSERA_DSL_DMA_H_

/* `times` rows of `width` elements of `size` bytes; rows start every src_stride / dst_stride
 * elements. memmove: a program may copy within one buffer. */
static inline void __tessera_dma(void* dst, const void* src, size_t size, int width,
                                 int src_stride, int times, int dst_stride) {
  if (width <= 0 || times <= 0) return;
  {
    int64_t lo_d = dst_stride < 0 ? (int64_t)(times - 1) * dst_stride : 0;
    int64_t lo_s = src_stride < 0 ? (int64_t)(times - 1) * src_stride : 0;
    int64_t hi_d = (dst_stride > 0 ? (int64_t)(times - 1) * dst_stride : 0) + width - 1;
    int64_t hi_s = (src_stride > 0 ? (int64_t)(times - 1) * src_stride : 0) + width - 1;
    if (!__tessera_access_in_bounds(dst, lo_d, hi_d, size, "S.dma_copy", "destination") ||
        !__tessera_access_in_bounds(src, lo_s, hi_s, size, "S.dma_copy", "source"))
      return;
  }
  if (times == 1 || (src_stride == width && dst_stride == width)) {
    memmove(dst, src, size * (size_t)width * (size_t)times);
    return;
  }
  for (int t = 0; t < times; ++t) {
    memmove((char*)dst + size * (size_t)t * (size_t)dst_stride,
            (const char*)src + size * (size_t)t * (size_t)src_stride, size * (size_t)width);
  }
}

/* One-dimensional DMA between DDR and SRAM: direction 1 copies into SRAM, 0 out of it. */
#define DMA1D(ddr, sram, count, dir)                                                  \
  ((dir) ? __tessera_dma((sram), (ddr), sizeof(*(sram)), (count), (count), 1, (count)) \
         : __tessera_dma((ddr), (sram), sizeof(*(ddr)), (count), (count), 1, (count)))

#define __dma_copy(dst, src, width, src_stride, times, dst_stride) \
  __tessera_dma((dst), (src), sizeof(*(dst)), (width), (src_stride), (times), (dst_stride))

/* ---- Events ----------------------------------------------------------------------------------
 * A TEC's events are bits of a per-thread set; alloc hands out the lowest free one. */

static __thread uint32_t __tessera_events_in_use;

static inline int __alloc_event(void) {
  for (int e = 0; e < 32; ++e) {
    if (!(__tessera_events_in_use & (1u << e))) {
      __tessera_events_in_use |= 1u << e;
      return e;
    }
  }
  return -1;
}
static inline void __wait_event(int event) { (void)event; }
static inline void __free_event(int event) {
  if (event >= 0 && event < 32) __tessera_events_in_use &= ~(1u << event);
}

#define __async_dma_copy(dst, src, width, src_stride, times, dst_stride, event) \
  (__dma_copy(dst, src, width, src_stride, times, dst_stride), __wait_event(event))

/* ---- Other DMA forms ------------------------------------------------------------------------- */

#define __dma_memset(ptr, value, num)                                  \
  do {                                                                 \
    __auto_type __tessera_p = (ptr);                                   \
    __typeof__(*__tessera_p) __tessera_value = (value);                \
    int __tessera_n = (num);                                           \
    if (__tessera_n > 0 &&                                             \
        !__tessera_access_in_bounds(__tessera_p, 0, __tessera_n - 1,   \
                                    sizeof(*__tessera_p),              \
                                    "S.dma_memset", "destination"))    \
      __tessera_n = 0;                                                 \
    for (int __tessera_i = 0; __tessera_i < __tessera_n; ++__tessera_i) \
      __tessera_p[__tessera_i] = __tessera_value;                      \
  } while (0)

/* Whether a row x col transpose stays inside the argument arrays its pointers point into. */
static inline int __tessera_transpose2d_in_bounds(const void* dst, const void* src, size_t size,
                                                  int row, int col, int dst_stride,
                                                  int src_stride) {
  if (row <= 0 || col <= 0) return 1;
  int64_t d = (int64_t)(col - 1) * dst_stride, s = (int64_t)(row - 1) * src_stride;
  return __tessera_access_in_bounds(dst, d < 0 ? d : 0, (d > 0 ? d : 0) + row - 1, size,
                                    "S.dma_transpose2d", "destination") &&
         __tessera_access_in_bounds(src, s < 0 ? s : 0, (s > 0 ? s : 0) + col - 1, size,
                                    "S.dma_transpose2d", "source");
}

/* dst[c * dst_stride + r] = src[r * src_stride + c] for a row x col source. */
#define __dma_transpose2d(dst, src, row, col, dst_stride, src_stride)                    \
  do {                                                                                   \
    __auto_type __tessera_d = (dst);                                                     \
    __auto_type __tessera_s = (src);                                                     \
    int __tessera_rows = (row), __tessera_cols = (col);                                  \
    if (!__tessera_transpose2d_in_bounds(__tessera_d, __tessera_s, sizeof(*__tessera_d), \
                                         __tessera_rows, __tessera_cols, (dst_stride),   \
                                         (src_stride)))                                  \
      __tessera_rows = 0;                                                                \
    for (int __tessera_r = 0; __tessera_r < __tessera_rows; ++__tessera_r)               \
      for (int __tessera_c = 0; __tessera_c < __tessera_cols; ++__tessera_c)             \
        __tessera_d[__tessera_c * (dst_stride) + __tessera_r] =                          \
            __tessera_s[__tessera_r * (src_stride) + __tessera_c];                       \
  } while (0)

/* A w x c (WC) source plane, rows every src_c_stride elements, repeated h_scale times in H and
 * each row w_scale times in W: destination rows (one per W position) every dst_c_stride
 * elements, planes (one per H position) every dst_w_stride rows. */
#define __dma_upsample(dst, src, h_scale, w_scale, c, w, src_c_stride, dst_c_stride,        \
                       dst_w_stride)                                                        \
  do {                                                                                      \
    __auto_type __tessera_d = (dst);                                                        \
    __auto_type __tessera_s = (src);                                                        \
    for (int __tessera_w = 0; __tessera_w < (w); ++__tessera_w)                             \
      for (int __tessera_h = 0; __tessera_h < (h_scale); ++__tessera_h)                     \
        for (int __tessera_k = 0; __tessera_k < (w_scale); ++__tessera_k)                   \
          __tessera_dma(__tessera_d + (__tessera_h * (dst_w_stride) +                       \
                                       __tessera_w * (w_scale) + __tessera_k) *             \
                                          (dst_c_stride),                                   \
                        __tessera_s + __tessera_w * (src_c_stride), sizeof(*__tessera_d), (c), \
                        (c), 1, (c));                                                       \
  } while (0)

/* The data cache is the host's: nothing to write back. */
static inline void __flush_cache(int invalidate) { (void)invalidate; }

#endif /* TESSERA_DSL_DMA_H_ */
