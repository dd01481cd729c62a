#include "apiary/core/protocol/bytes.hpp"

namespace apiary::core {

namespace detail {
// clang-format off
const char hex_pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
// clang-format on
}  // namespace detail

std::string to_hex(const std::uint8_t* in, std::size_t n) {
  std::string s(2 * n, '\0');
  to_hex(in, n, s.data());
  return s;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool from_hex(std::string_view hex, std::uint8_t* out, std::size_t n) {
  if (hex.size() != 2 * n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    int hi = hex_value(hex[2 * i]);
    int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

chain_id hive_mainnet_chain_id() {
  chain_id id;
  id.data[0] = 0xbe;
  id.data[1] = 0xea;
  id.data[2] = 0xb0;
  id.data[3] = 0xde;
  return id;
}

}  // namespace apiary::core
