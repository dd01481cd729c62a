// Fixed-size byte strings (hashes, ids, keys, signatures) and their hex text form.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace apiary::core {

template <std::size_t N>
struct fixed_bytes {
  std::array<std::uint8_t, N> data{};

  static constexpr std::size_t size() { return N; }
  const std::uint8_t* begin() const { return data.data(); }
  std::uint8_t* begin() { return data.data(); }
  const std::uint8_t* end() const { return data.data() + N; }
  std::uint8_t* end() { return data.data() + N; }
  bool is_zero() const {
    for (auto b : data)
      if (b != 0) return false;
    return true;
  }
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted comparison
  auto operator<=>(const fixed_bytes&) const = default;
};

using sha256_digest = fixed_bytes<32>;
using ripemd160_digest = fixed_bytes<20>;
using sha224_digest = fixed_bytes<28>;
using chain_id = fixed_bytes<32>;
using transaction_id = fixed_bytes<20>;
using block_id = fixed_bytes<20>;

namespace detail {
// Two hex characters per byte value, so encoding copies pairs instead of single chars.
extern const char hex_pairs[513];
}  // namespace detail

// Writes 2*n hex characters to out.
inline void to_hex(const std::uint8_t* in, std::size_t n, char* out) {
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out + 2 * i, detail::hex_pairs + 2 * in[i], 2);
}
std::string to_hex(const std::uint8_t* in, std::size_t n);
template <std::size_t N>
std::string to_hex(const fixed_bytes<N>& b) {
  return to_hex(b.begin(), N);
}

// Parses exactly 2*N hex characters; nullopt on any other length or a non-hex character.
bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t n);
template <std::size_t N>
std::optional<fixed_bytes<N>> fixed_from_hex(std::string_view hex) {
  fixed_bytes<N> b;
  if (!from_hex(hex, b.begin(), N)) return std::nullopt;
  return b;
}

// Hive's main-net chain id: beeab0de followed by 28 zero bytes.
chain_id hive_mainnet_chain_id();

}  // namespace apiary::core

template <std::size_t N>
struct std::hash<apiary::core::fixed_bytes<N>> {
  // The bytes are already uniformly distributed digests: the first word is a good hash.
  std::size_t operator()(const apiary::core::fixed_bytes<N>& b) const noexcept {
    static_assert(N >= sizeof(std::size_t));
    std::size_t h;
    std::memcpy(&h, b.begin() + (N - sizeof(std::size_t)), sizeof h);
    return h;
  }
};

namespace apiary::core {
// For Boost's hashed containers.
template <std::size_t N>
std::size_t hash_value(const fixed_bytes<N>& b) {
  return std::hash<fixed_bytes<N>>{}(b);
}
}  // namespace apiary::core
