#include "apiary/core/protocol/asset.hpp"

#include <cstring>

namespace apiary::core {

namespace {
// Hive keeps Steem's legacy symbol names on the wire.
std::uint64_t word(const char (&name)[8]) {
  std::uint64_t w;
  std::memcpy(&w, name, 8);
  return w;
}
const char hive_legacy[8] = {asset::precision, 'S', 'T', 'E', 'E', 'M', 0, 0};
const char hbd_legacy[8] = {asset::precision, 'S', 'B', 'D', 0, 0, 0, 0};
}  // namespace

std::uint64_t asset::legacy_symbol_word(asset_symbol s) {
  return s == asset_symbol::hive ? word(hive_legacy) : word(hbd_legacy);
}

std::optional<asset_symbol> asset::from_legacy_symbol_word(std::uint64_t w) {
  if (w == word(hive_legacy)) return asset_symbol::hive;
  if (w == word(hbd_legacy)) return asset_symbol::hbd;
  return std::nullopt;
}

}  // namespace apiary::core
