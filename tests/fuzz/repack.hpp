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

#include <cstddef>
#include <cstdint>
#include <span>

#include "apiary/core/protocol/asset.hpp"

namespace apiary::fuzz {

namespace detail {

inline std::uint64_t word_at(std::span<const std::uint8_t> bytes, std::size_t at) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < 8; ++i) w |= std::uint64_t{bytes[at + i]} << (8 * i);
  return w;
}

// Whether `in` holds a test-net word at `at` and `repacked` the same symbol's main-net word.
inline bool testnet_word_read_as_mainnet(std::span<const std::uint8_t> repacked, std::span<const std::uint8_t> in,
                                         std::size_t at) {
  if (in.size() - at < 8) return false;
  const std::uint64_t read = word_at(in, at);
  const std::uint64_t written = word_at(repacked, at);
  for (const core::symbol_info& s : core::known_symbols)
    if (s.testnet_legacy_word() != s.legacy_word() && read == s.testnet_legacy_word() && written == s.legacy_word())
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
