// A 128-bit content hash for cache keys: two independently mixed 64-bit lanes, printed as hex.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

/*! \brief Streaming 128-bit hash. Not cryptographic: it names build artefacts by content, where
 *  an accidental collision is the only concern. */
class Hasher128 {
 public:
  Hasher128();
  /*! \brief Feed raw bytes. */
  Hasher128& Update(std::string_view bytes);
  /*! \brief Feed one field of a composite key, length first, so ("ab","c") != ("a","bc"). */
  Hasher128& UpdateField(std::string_view field);
  /*! \brief The 32 lowercase hex digits of the hash of everything fed so far. */
  std::string HexDigest() const;

 private:
  uint64_t lo_, hi_, length_;
};

/*! \brief The 32-hex-digit Hasher128 digest of `bytes`. */
std::string Hash128Hex(std::string_view bytes);

}  // namespace tessera

namespace tessera {

/*! \brief Streaming SHA-256 (OpenSSL): the build cache's keys and artifact digests. */
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& Update(std::string_view bytes);
  /*! \brief One field of a composite key, length first, so ("ab","c") != ("a","bc"). */
  Sha256& UpdateField(std::string_view field);
  /*! \brief The 64 lowercase hex digits of the digest (the hasher is finished afterwards). */
  std::string HexDigest();

 private:
  void* ctx_;
};

/*! \brief The SHA-256 hex digest of `bytes`. */
std::string Sha256Hex(std::string_view bytes);

}  // namespace tessera
