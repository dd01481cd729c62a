#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core {

void byte_reader::truncated(const char* what, std::size_t need) const {
  throw decode_error("truncated input: " + std::string(what) + " needs " + std::to_string(need) + " byte(s), " +
                         std::to_string(remaining()) + " left",
                     offset());
}

std::uint32_t unpack_varint(byte_reader& r, const char* what) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    std::uint8_t b = r.get(what);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      // An overlong form (a zero last byte after the first) would decode to the same
      // value but pack differently, so ids hashed from input bytes would not match Hive's.
      if (b == 0 && shift > 0) r.fail(std::string(what) + ": overlong varint");
      if (v > UINT32_MAX) r.fail(std::string(what) + ": varint exceeds 32 bits");
      return static_cast<std::uint32_t>(v);
    }
  }
  r.fail(std::string(what) + ": varint longer than 5 bytes");
}

void unpack(byte_reader& r, std::string& str) {
  std::uint32_t n = unpack_varint(r, "string length");
  const std::uint8_t* p = r.take(n, "string bytes");
  str.assign(reinterpret_cast<const char*>(p), n);
}

void unpack(byte_reader& r, account_name& a) {
  std::uint32_t n = unpack_varint(r, "account name length");
  if (n > account_name::max_size) r.fail("account name of " + std::to_string(n) + " bytes exceeds the maximum of 16");
  const std::uint8_t* p = r.take(n, "account name");
  a = account_name(std::string_view(reinterpret_cast<const char*>(p), n));
}

void unpack(byte_reader& r, asset& a) {
  unpack(r, a.amount);
  std::uint64_t w;
  unpack(r, w);
  auto s = asset::from_legacy_symbol_word(w);
  // A test-net build's words (TESTS, TBD) read as HIVE and HBD: packing again writes the main
  // net's, so a test-net block is hashed and verified from its bytes as read, not packed again.
  for (asset_symbol t : {asset_symbol::hive, asset_symbol::hbd})
    if (!s && w == known_symbols[static_cast<std::size_t>(t)].testnet_legacy_word()) s = t;
  if (!s) r.fail("unknown asset symbol (apiary knows HIVE and HBD with precision 3, TESTS and TBD in a test net)");
  a.symbol = *s;
}

}  // namespace apiary::core
