#include "apiary/core/protocol/hash.hpp"

// SHA-256's own functions (SHA256_Init and the rest) are deprecated in OpenSSL 3 in favour of
// EVP, but remain its fastest way to hash a few dozen bytes: see sha256(a, b).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "apiary/core/base/check.hpp"

namespace apiary::core {

namespace {

// One fetched algorithm per process and one reusable context per thread: fetching by name
// and allocating a context on every call would cost more than hashing a transaction.
struct algorithms {
  EVP_MD* sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_MD* sha224 = EVP_MD_fetch(nullptr, "SHA224", nullptr);
  EVP_MD* ripemd160 = EVP_MD_fetch(nullptr, "RIPEMD160", nullptr);
  algorithms() { APIARY_CHECK(sha256 && sha224 && ripemd160); }
  ~algorithms() {
    EVP_MD_free(sha256);
    EVP_MD_free(sha224);
    EVP_MD_free(ripemd160);
  }
  algorithms(const algorithms&) = delete;
  algorithms& operator=(const algorithms&) = delete;
};

const algorithms& algos() {
  static const algorithms a;
  return a;
}

struct context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  context() { APIARY_CHECK(ctx != nullptr); }
  ~context() { EVP_MD_CTX_free(ctx); }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
};

EVP_MD_CTX* thread_context() {
  thread_local context c;
  return c.ctx;
}

template <std::size_t N>
fixed_bytes<N> digest(const EVP_MD* md, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  EVP_MD_CTX* ctx = thread_context();
  fixed_bytes<N> out;
  unsigned int len = 0;
  APIARY_CHECK(EVP_DigestInit_ex2(ctx, md, nullptr) == 1);
  APIARY_CHECK(EVP_DigestUpdate(ctx, a.data(), a.size()) == 1);
  if (!b.empty()) APIARY_CHECK(EVP_DigestUpdate(ctx, b.data(), b.size()) == 1);
  APIARY_CHECK(EVP_DigestFinal_ex(ctx, out.begin(), &len) == 1);
  APIARY_CHECK(len == N);
  return out;
}

std::span<const std::uint8_t> bytes_of(const void* p, std::size_t n) {
  return {static_cast<const std::uint8_t*>(p), n};
}

}  // namespace

sha256_digest sha256(const void* data, std::size_t n) { return digest<32>(algos().sha256, bytes_of(data, n), {}); }
// A block's merkle tree hashes one pair of digests per transaction (64 bytes, two compression
// rounds). EVP's init and final take longer than those rounds, so the pair goes straight to
// OpenSSL's SHA-256 (the same assembly, SHA extensions where the CPU has them).
// BM_MerkleRoot (bench/core_bench.cpp) times the tree; docs/measured/scale.md has both.
sha256_digest sha256(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  SHA256_CTX ctx;
  APIARY_CHECK(SHA256_Init(&ctx) == 1);
  APIARY_CHECK(SHA256_Update(&ctx, a.data(), a.size()) == 1);
  if (!b.empty()) APIARY_CHECK(SHA256_Update(&ctx, b.data(), b.size()) == 1);
  sha256_digest out;
  APIARY_CHECK(SHA256_Final(out.begin(), &ctx) == 1);
  return out;
}
sha224_digest sha224(const void* data, std::size_t n) { return digest<28>(algos().sha224, bytes_of(data, n), {}); }
ripemd160_digest ripemd160(const void* data, std::size_t n) {
  return digest<20>(algos().ripemd160, bytes_of(data, n), {});
}

}  // namespace apiary::core
