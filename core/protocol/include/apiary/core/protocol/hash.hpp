// The hash functions Hive's protocol uses, over OpenSSL. Thread-safe: each thread keeps its
// own hashing context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "apiary/core/protocol/bytes.hpp"

namespace apiary::core {

sha256_digest sha256(const void* data, std::size_t n);
sha224_digest sha224(const void* data, std::size_t n);
ripemd160_digest ripemd160(const void* data, std::size_t n);
// sha256(a || b) without building the concatenation.
sha256_digest sha256(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

}  // namespace apiary::core
