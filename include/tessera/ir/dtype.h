// DataType: scalar or vector element type of an expression (code, bits, lanes).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace tessera {

/*! \brief A scalar or vector value type, e.g. int32, float16x16, boolx8, handle, void.
 *
 *  A scalable vector ("float32xvscalex4", TVM's SVE form) has vscale * k lanes, vscale known only
 *  on the hardware; it is stored as lanes = -k. Its lane count is not a compile-time number, so
 *  lanes() refuses it (an Error, never a wrong count): code that handles scalable vectors asks
 *  is_scalable_vector() and vscale_factor() first. */
class DataType {
 public:
  // The narrow float formats carry the type codes DLPack (v1.1) gives them, in its order; their
  // names say the exponent and mantissa widths, "fn" finite only (no infinity), "uz" no negative
  // zero (the sign bit alone is NaN), "b11" an exponent bias of 11, "u" unsigned.
  enum Code : uint8_t {
    kInt = 0,
    kUInt = 1,
    kFloat = 2,
    kBFloat = 3,
    kBool = 4,
    kHandle = 5,
    kVoid = 6,
    kFloat8E3M4 = 7,
    kFloat8E4M3 = 8,
    kFloat8E4M3B11FNUZ = 9,
    kFloat8E4M3FN = 10,
    kFloat8E4M3FNUZ = 11,
    kFloat8E5M2 = 12,
    kFloat8E5M2FNUZ = 13,
    kFloat8E8M0FNU = 14,
    kFloat6E2M3FN = 15,
    kFloat6E3M2FN = 16,
    kFloat4E2M1FN = 17,
  };

  constexpr DataType() : code_(kVoid), bits_(0), lanes_(1) {}
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<int16_t>(lanes)) {}
  /*! \brief The scalable vector of vscale * `vscale_factor` lanes (vscale_factor > 1). */
  static DataType Scalable(Code code, int bits, int vscale_factor);

  static constexpr DataType Int(int bits, int lanes = 1) { return {kInt, bits, lanes}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {kUInt, bits, lanes}; }
  static constexpr DataType Float(int bits, int lanes = 1) { return {kFloat, bits, lanes}; }
  static constexpr DataType BFloat16(int lanes = 1) { return {kBFloat, 16, lanes}; }
  static constexpr DataType Bool(int lanes = 1) { return {kBool, 1, lanes}; }
  static constexpr DataType Handle() { return {kHandle, 64, 1}; }
  static constexpr DataType Void() { return {kVoid, 0, 1}; }

  /*! \brief Parse "int32", "int32x8", "i32", "u8", "fp16x16", "bf16", "bool", "handle", "void",
   *  and the scalable forms "float32xvscalex4", "boolxvscalex8".
   *  Throws tessera::Error (kType) on an unknown name. */
  static DataType Parse(const std::string& name);
  /*! \brief Canonical long name: "int32x8", "float16", "bfloat16x16", "boolx8". */
  std::string ToString() const;

  Code code() const { return static_cast<Code>(code_); }
  int bits() const { return bits_; }
  /*! \brief The lane count; throws tessera::Error for a scalable vector (see vscale_factor). */
  int lanes() const {
    if (lanes_ < 0) ThrowScalableLanes();
    return lanes_;
  }
  int bytes() const { return (bits_ * lanes() + 7) / 8; }
  /*! \brief Whether the lanes are vscale * k (TVM's scalable vectors, Arm SVE). */
  bool is_scalable_vector() const { return lanes_ < -1; }
  bool is_fixed_length_vector() const { return lanes_ > 1; }
  /*! \brief k of a scalable vector's vscale * k lanes; throws for other types. */
  int vscale_factor() const;
  /*! \brief vscale_factor() of a scalable vector, lanes() of any other type. */
  int lanes_or_vscale_factor() const { return lanes_ < 0 ? -lanes_ : lanes_; }
  /*! \brief lanes() for a fixed type, -k for a scalable vector of vscale * k lanes (the
   *  encoding of RampNode::lanes and BroadcastNode::lanes). */
  int raw_lanes() const { return lanes_; }
  /*! \brief A bool mask element: bool or uint1 (TVM takes either for a predicate). */
  bool is_predicate_dtype() const { return code_ == kBool || (code_ == kUInt && bits_ == 1); }

  bool is_int() const { return code_ == kInt; }
  bool is_uint() const { return code_ == kUInt; }
  bool is_integer() const { return code_ == kInt || code_ == kUInt; }
  bool is_float() const { return code_ == kFloat || code_ == kBFloat || is_narrow_float(); }
  /*! \brief The float8/float6/float4 formats (float8_e4m3fn, float4_e2m1fn, ...). */
  bool is_narrow_float() const { return code_ >= kFloat8E3M4 && code_ <= kFloat4E2M1FN; }
  bool is_float8() const { return code_ >= kFloat8E3M4 && code_ <= kFloat8E8M0FNU; }
  bool is_bfloat16() const { return code_ == kBFloat; }
  bool is_bool() const { return code_ == kBool; }
  bool is_handle() const { return code_ == kHandle; }
  bool is_void() const { return code_ == kVoid; }
  bool is_scalar() const { return lanes_ == 1; }
  bool is_vector() const { return lanes_ > 1 || lanes_ < -1; }
  /*! \brief Integers and bools: the types with exact arithmetic. */
  bool is_int_or_bool() const { return is_integer() || is_bool(); }

  DataType element_of() const { return DataType(code(), bits_, 1); }
  DataType with_lanes(int lanes) const { return DataType(code(), bits_, lanes); }
  /*! \brief The same element type as a scalable vector of vscale * `vscale_factor` lanes. */
  DataType with_scalable_vscale_factor(int vscale_factor) const {
    return Scalable(code(), bits_, vscale_factor);
  }
  /*! \brief with_lanes(n) or with_scalable_vscale_factor(n), as `scalable` says. */
  DataType with_lanes_or_vscale_factor(int n, bool scalable) const {
    return scalable ? with_scalable_vscale_factor(n) : with_lanes(n);
  }
  DataType with_bits(int bits) const { return DataType(code(), bits, lanes_); }
  DataType with_code(Code code) const { return DataType(code, bits_, lanes_); }

  bool operator==(const DataType& o) const {
    return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }
  size_t Hash() const {
    return (size_t(code_) << 24) ^ (size_t(bits_) << 16) ^ static_cast<uint16_t>(lanes_);
  }

 private:
  [[noreturn]] static void ThrowScalableLanes();
  uint8_t code_;
  uint8_t bits_;
  int16_t lanes_;  // < -1: a scalable vector of vscale * -lanes_ lanes
};

inline std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.ToString(); }

}  // namespace tessera
