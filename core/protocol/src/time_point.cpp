#include "apiary/core/protocol/time_point.hpp"

#include <cstdint>

namespace apiary::core {

namespace {

// Days since 1970-01-01 to a civil date, and back (the proleptic Gregorian calendar).
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void two(char* out, unsigned v) {
  out[0] = static_cast<char>('0' + v / 10);
  out[1] = static_cast<char>('0' + v % 10);
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& v) {
  v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return true;
}

}  // namespace

void time_point_sec::to_iso(char* out) const {
  std::int64_t y;
  unsigned m, d;
  civil_from_days(secs / 86400, y, m, d);
  unsigned rem = secs % 86400;
  auto year = static_cast<unsigned>(y);
  two(out, year / 100);
  two(out + 2, year % 100);
  out[4] = '-';
  two(out + 5, m);
  out[7] = '-';
  two(out + 8, d);
  out[10] = 'T';
  two(out + 11, rem / 3600);
  out[13] = ':';
  two(out + 14, rem / 60 % 60);
  out[16] = ':';
  two(out + 17, rem % 60);
}

std::optional<time_point_sec> time_point_sec::from_iso(std::string_view s) {
  if (s.size() == 20 && s.back() == 'Z') s.remove_suffix(1);
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return std::nullopt;
  unsigned y, mo, d, h, mi, se;
  if (!digits(s, 0, 4, y) || !digits(s, 5, 2, mo) || !digits(s, 8, 2, d) || !digits(s, 11, 2, h) ||
      !digits(s, 14, 2, mi) || !digits(s, 17, 2, se))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return std::nullopt;
  std::int64_t days = days_from_civil(y, mo, d);
  std::int64_t t = days * 86400 + h * 3600 + mi * 60 + se;
  if (t < 0 || t > static_cast<std::int64_t>(UINT32_MAX)) return std::nullopt;
  time_point_sec tp{static_cast<std::uint32_t>(t)};
  // Reject dates such as February 30 that the arithmetic above would roll over.
  char back[19];
  tp.to_iso(back);
  if (std::string_view(back, 19) != s) return std::nullopt;
  return tp;
}

}  // namespace apiary::core
