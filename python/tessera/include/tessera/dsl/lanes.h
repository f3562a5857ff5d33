/* tessera/dsl/lanes.h: single lanes of vectors and masks, vectors built from lanes, and the
 * mask forms the code generator emits (tail masks, lane lists, regrouped masks). Included by
 * tessera/dsl.h. */
#ifndef TESSERA_DSL_LANES_H_
#define TESSERA_DSL_LANES_H_

/* ---- Lanes of data vectors ----------------------------------------------------------------------
 * Ordinary vectors are subscripted directly (`v[i]`); bfloat16x16 keeps its lanes as bits. */

#define __TESSERA_GET_char32(v, i) ((v)[i])
#define __TESSERA_GET_uchar32(v, i) ((v)[i])
#define __TESSERA_GET_short16(v, i) ((v)[i])
#define __TESSERA_GET_ushort16(v, i) ((v)[i])
#define __TESSERA_GET_int8(v, i) ((v)[i])
#define __TESSERA_GET_uint8(v, i) ((v)[i])
#define __TESSERA_GET_half16(v, i) ((v)[i])
#define __TESSERA_GET_float8(v, i) ((v)[i])
#define __TESSERA_GET_bfloat16x16(v, i) ((bfloat16){(v).bits[i]})
#define __TESSERA_SET_char32(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_uchar32(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_short16(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_ushort16(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_int8(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_uint8(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_half16(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_float8(v, i, x) ((v)[i] = (x))
#define __TESSERA_SET_bfloat16x16(v, i, x) ((v).bits[i] = (x).bits)

/* Lane `i` of `v`, which may be any expression. */
#define __vget_lane(v, i)               \
  ({                                    \
    __auto_type __tessera_v = (v);      \
    __tessera_v[(i)];                   \
  })

/* `v` with lane `i` replaced by `x`. */
#define __vset_lane(v, i, x)            \
  ({                                    \
    __auto_type __tessera_v = (v);      \
    __tessera_v[(i)] = (x);             \
    __tessera_v;                        \
  })
#define __vset_lane_bf16(v, i, x)       \
  ({                                    \
    bfloat16x16 __tessera_v = (v);      \
    __tessera_v.bits[(i)] = (x).bits;   \
    __tessera_v;                        \
  })
#define __vget_lane_bf16(v, i) ((bfloat16){(v).bits[(i)]})

/* ---- Masks --------------------------------------------------------------------------------------
 * A mask of n lanes gives each lane 32/n predicate bits; lane i is on when its lowest bit is. */

static inline uint32_t __tessera_lane_bits(int lanes, int i) { return __TESSERA_LANE_BITS(i, lanes); }

static inline bool __vmask_get(uint32_t m, int i, int lanes) {
  return __TESSERA_LANE_ON(m, i, lanes);
}

static inline uint32_t __vmask_set(uint32_t m, int i, int lanes, bool on) {
  uint32_t bits = __tessera_lane_bits(lanes, i);
  return on ? (m | bits) : (m & ~bits);
}

/* Lanes below n are on: the tail of a loop over n elements. */
static inline uint32_t __vtail_mask(int n, int lanes) {
  if (n <= 0) return 0;
  if (n >= lanes) return 0xFFFFFFFFu;
  return (uint32_t)((1ull << (n * (32 / lanes))) - 1ull);
}

/* A mask from `lanes` bools (lane 0 first). */
static inline uint32_t __vmask_from_bools(int lanes, const bool* on) {
  uint32_t m = 0;
  for (int i = 0; i < lanes; ++i)
    if (on[i]) m |= __tessera_lane_bits(lanes, i);
  return m;
}

/* Lanes [first, first + lanes) of a mask held as parts of `src_lanes` lanes each, regrouped into
 * one mask of `lanes` lanes: the parts of a mask split for one element width, used with data of
 * another. Lanes past the last part are off. */
static inline uint32_t __vmask_repack(int lanes, int src_lanes, int first, const uint32_t* parts,
                                      int num_parts) {
  uint32_t m = 0;
  for (int i = 0; i < lanes; ++i) {
    int k = first + i, part = k / src_lanes;
    if (part < num_parts && __TESSERA_LANE_ON(parts[part], k % src_lanes, src_lanes))
      m |= __tessera_lane_bits(lanes, i);
  }
  return m;
}

/* Scalar bool of all / any active lanes. */
static inline bool __vall(uint32_t m, int lanes) {
  for (int i = 0; i < lanes; ++i)
    if (!__TESSERA_LANE_ON(m, i, lanes)) return false;
  return true;
}
static inline bool __vany(uint32_t m, int lanes) {
  for (int i = 0; i < lanes; ++i)
    if (__TESSERA_LANE_ON(m, i, lanes)) return true;
  return false;
}

/* ---- Bit casts ------------------------------------------------------------------------------- */

/* The bits of `x` as a T of the same size. */
#define __vreinterpret(x, T)                                                  \
  ({                                                                          \
    __auto_type __tessera_r = (x);                                            \
    _Static_assert(sizeof(__tessera_r) == sizeof(T), "reinterpret: sizes differ"); \
    T __tessera_o;                                                            \
    memcpy(&__tessera_o, &__tessera_r, sizeof __tessera_o);                   \
    __tessera_o;                                                              \
  })

/* ---- Pointers -------------------------------------------------------------------------------- */

#define __is_nullptr(p) ((p) == 0)

/* ---- Float lanes: floor (the `//` of float vectors) ------------------------------------------ */

static inline float8 __vfloor_float8(float8 x) {
  for (int i = 0; i < 8; ++i) x[i] = floorf(x[i]);
  return x;
}
__TESSERA_IF_HALF(static inline half16 __vfloor_half16(half16 x) {
  for (int i = 0; i < 16; ++i) x[i] = (half)floorf((float)x[i]);
  return x;
})
static inline bfloat16x16 __vfloor_bfloat16x16(bfloat16x16 x) {
  for (int i = 0; i < 16; ++i)
    x.bits[i] = __bfloat16_from_float(floorf(__bfloat16_to_float((bfloat16){x.bits[i]}))).bits;
  return x;
}
#define __vfloor(x)                                                                          \
  _Generic((x), float8: __vfloor_float8, bfloat16x16: __vfloor_bfloat16x16                 \
           __TESSERA_IF_HALF(, half16: __vfloor_half16))(x)

#endif /* TESSERA_DSL_LANES_H_ */
