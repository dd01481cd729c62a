// asset: an amount of HIVE or HBD with Hive's fixed precision of 3. On the wire it is the
// legacy form: int64 amount, then the 8-byte legacy symbol (precision byte + "STEEM" for
// HIVE or "SBD" for HBD, zero padded). In JSON it is Hive's legacy text: "1.000 HIVE".
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace apiary::core {

enum class asset_symbol : std::uint8_t { hive, hbd };

struct asset {
  static constexpr int precision = 3;

  std::int64_t amount = 0;  // in thousandths
  asset_symbol symbol = asset_symbol::hive;

  static asset hive(std::int64_t thousandths) { return {thousandths, asset_symbol::hive}; }
  static asset hbd(std::int64_t thousandths) { return {thousandths, asset_symbol::hbd}; }

  // The 8 legacy wire bytes of a symbol, as a little-endian word.
  static std::uint64_t legacy_symbol_word(asset_symbol s);
  static std::optional<asset_symbol> from_legacy_symbol_word(std::uint64_t w);
  static std::string_view symbol_text(asset_symbol s) { return s == asset_symbol::hive ? "HIVE" : "HBD"; }

  auto operator<=>(const asset&) const = default;
};

}  // namespace apiary::core
