// time_point_sec: seconds since the Unix epoch, as Hive stores times (uint32 on the wire,
// "YYYY-MM-DDTHH:MM:SS" in JSON, UTC without a zone suffix).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace apiary::core {

struct time_point_sec {
  std::uint32_t secs = 0;

  // Writes exactly 19 characters.
  void to_iso(char* out) const;
  static std::optional<time_point_sec> from_iso(std::string_view s);

  friend time_point_sec operator+(time_point_sec t, std::uint32_t s) { return {t.secs + s}; }
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the defaulted comparison
  auto operator<=>(const time_point_sec&) const = default;
};

}  // namespace apiary::core
