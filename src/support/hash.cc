// Hasher128: an FNV-1a lane and a multiply-rotate lane, each finished with a 64-bit avalanche.
#include "tessera/support/hash.h"

namespace tessera {
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
// The second lane starts elsewhere and mixes differently, so the lanes fail independently.
constexpr uint64_t kMixSeed = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kMixMul = 0xc2b2ae3d27d4eb4fULL;

uint64_t RotateLeft(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Murmur3's finaliser: every input bit affects every output bit.
uint64_t Avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

Hasher128::Hasher128() : lo_(kFnvOffset), hi_(kMixSeed), length_(0) {}

Hasher128& Hasher128::Update(std::string_view bytes) {
  for (unsigned char c : bytes) {
    lo_ = (lo_ ^ c) * kFnvPrime;
    hi_ = RotateLeft(hi_ ^ (c * kMixSeed), 29) * kMixMul;
  }
  length_ += bytes.size();
  return *this;
}

Hasher128& Hasher128::UpdateField(std::string_view field) {
  uint64_t n = field.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  Update(std::string_view(len, 8));
  return Update(field);
}

std::string Hasher128::HexDigest() const {
  uint64_t a = Avalanche(lo_ ^ length_);
  uint64_t b = Avalanche(hi_ + RotateLeft(length_, 17) + a);
  static const char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(a >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(b >> (4 * i)) & 0xf];
  }
  return out;
}

std::string Hash128Hex(std::string_view bytes) { return Hasher128().Update(bytes).HexDigest(); }

}  // namespace tessera

// ---- SHA-256 through OpenSSL's EVP interface ----
#include <openssl/evp.h>

#include "tessera/support/error.h"

namespace tessera {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
    throw InternalError("SHA-256: cannot initialise OpenSSL's digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

Sha256& Sha256::Update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
  return *this;
}

Sha256& Sha256::UpdateField(std::string_view field) {
  uint64_t n = field.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  Update(std::string_view(len, 8));
  return Update(field);
}

std::string Sha256::HexDigest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &n);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::string Sha256Hex(std::string_view bytes) { return Sha256().Update(bytes).HexDigest(); }

}  // namespace tessera
