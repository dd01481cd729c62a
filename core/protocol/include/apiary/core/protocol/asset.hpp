// asset: an amount of HIVE or HBD with Hive's fixed precision of 3. On the wire it is the
// legacy form: int64 amount, then the 8-byte legacy symbol (precision byte + "STEEM" for
// HIVE or "SBD" for HBD, zero padded). In JSON it is Hive's legacy text: "1.000 HIVE".
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace apiary::core {

// The symbols of Hive's main net, one line each: the text of today's JSON, the name before
// Hive's fork from Steem (still the name in the legacy wire word and in old JSON), the NAI
// of the HF26 JSON form, the precision, and the legacy name a test-net build of hived
// (IS_TEST_NET, asset_symbol.hpp) writes instead of the old name. The legacy wire word is the
// precision byte and the old name, zero padded to 8 bytes.
struct symbol_info {
  std::string_view name;
  std::string_view old_name;
  std::string_view nai;
  std::uint8_t precision;
  std::string_view testnet_name;

  constexpr std::uint64_t legacy_word() const { return word_of(old_name); }
  constexpr std::uint64_t testnet_legacy_word() const { return word_of(testnet_name); }

 private:
  constexpr std::uint64_t word_of(std::string_view legacy_name) const {
    std::uint64_t w = precision;
    for (std::size_t i = 0; i < legacy_name.size(); ++i)
      w |= std::uint64_t{static_cast<unsigned char>(legacy_name[i])} << (8 * (i + 1));
    return w;
  }
};
inline constexpr symbol_info known_symbols[] = {
    {"HIVE", "STEEM", "@@000000021", 3, "TESTS"},
    {"HBD", "SBD", "@@000000013", 3, "TBD"},
    {"VESTS", "VESTS", "@@000000037", 6, "VESTS"},
};

// apiary's own assets: HIVE and HBD, the first two of known_symbols.
enum class asset_symbol : std::uint8_t { hive, hbd };

struct asset {
  static constexpr int precision = 3;

  std::int64_t amount = 0;  // in thousandths
  asset_symbol symbol = asset_symbol::hive;

  static asset hive(std::int64_t thousandths) { return {thousandths, asset_symbol::hive}; }
  static asset hbd(std::int64_t thousandths) { return {thousandths, asset_symbol::hbd}; }

  // The 8 legacy wire bytes of a symbol, as a little-endian word.
  static constexpr std::uint64_t legacy_symbol_word(asset_symbol s) {
    return known_symbols[static_cast<std::size_t>(s)].legacy_word();
  }
  static constexpr std::optional<asset_symbol> from_legacy_symbol_word(std::uint64_t w) {
    if (w == legacy_symbol_word(asset_symbol::hive)) return asset_symbol::hive;
    if (w == legacy_symbol_word(asset_symbol::hbd)) return asset_symbol::hbd;
    return std::nullopt;
  }
  static constexpr std::string_view symbol_text(asset_symbol s) {
    return known_symbols[static_cast<std::size_t>(s)].name;
  }

  auto operator<=>(const asset&) const = default;
};

static_assert(known_symbols[static_cast<std::size_t>(asset_symbol::hive)].precision == asset::precision &&
              known_symbols[static_cast<std::size_t>(asset_symbol::hbd)].precision == asset::precision);

}  // namespace apiary::core
