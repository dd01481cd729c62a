// repack: whether the bytes packed again from a decoded value are the bytes it was decoded
// from. Core's decoders accept one encoding per value, with one deliberate exception: the
// legacy symbol words a test-net build of hived writes (TESTS, TBD) read as HIVE and HBD,
// so packing again writes the main net's word (STEEM, SBD) in the same eight bytes. Blocks
// and transactions are therefore hashed from the bytes they came in, never packed again.
//
// same_but_testnet_symbols(repacked, in) holds when both have the same length and differ
// only in whole eight-byte windows where `in` holds a test-net word and `repacked` the main
// net's word of the same symbol.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "apiary/core/protocol/asset.hpp"

namespace apiary::fuzz {

// A legacy symbol word's eight wire bytes (the word is little-endian on the wire).
constexpr std::array<std::uint8_t, 8> word_bytes(std::uint64_t word) {
  std::array<std::uint8_t, 8> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(word >> (8 * i));
  return out;
}

namespace detail {

// Whether `in` holds a test-net word at `at` and `repacked` the same symbol's main-net word.
inline bool testnet_word_read_as_mainnet(std::span<const std::uint8_t> repacked, std::span<const std::uint8_t> in,
                                         std::size_t at) {
  if (in.size() - at < 8) return false;
  for (const core::symbol_info& s : core::known_symbols)
    if (std::ranges::equal(in.subspan(at, 8), word_bytes(s.testnet_legacy_word())) &&
        std::ranges::equal(repacked.subspan(at, 8), word_bytes(s.legacy_word())))
      return true;
  return false;
}

}  // namespace detail

inline bool same_but_testnet_symbols(std::span<const std::uint8_t> repacked, std::span<const std::uint8_t> in) {
  if (repacked.size() != in.size()) return false;
  std::size_t i = 0;
  while (i < in.size()) {
    if (detail::testnet_word_read_as_mainnet(repacked, in, i)) {
      i += 8;
    } else if (repacked[i] == in[i]) {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace apiary::fuzz
