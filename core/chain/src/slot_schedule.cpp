// slot_schedule: the per-slot transaction counts of blocks on the chain's clock
// (slot_schedule.hpp): parsing, printing and the deterministic draw.
#include "apiary/core/chain/slot_schedule.hpp"

#include <charconv>
#include <cmath>
#include <random>

#include "apiary/core/base/number_text.hpp"

namespace apiary::core {

namespace {

// SplitMix64's finalizer: a well-mixed 64-bit value from the seed and the block number, so
// neighbouring blocks and seeds draw unrelated counts.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::optional<std::uint32_t> whole(std::string_view s) {
  std::uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || v > slot_schedule::most) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::uint32_t slot_schedule::count(std::uint32_t block_num) const {
  switch (form) {
    case shape::constant: return low;
    case shape::uniform:
      return low + static_cast<std::uint32_t>(mix(seed ^ mix(block_num)) % (std::uint64_t{high} - low + 1));
    case shape::poisson: {
      std::mt19937_64 rng(mix(seed ^ mix(block_num)));
      std::poisson_distribution<std::uint32_t> draw(mean);
      return std::min(draw(rng), most);
    }
  }
  return low;
}

slot_schedule_parse parse_slot_schedule(std::string_view text) {
  const std::string allowed =
      "expected a count per slot (e.g. 1000), poisson:MEAN (e.g. poisson:1000) or "
      "uniform:LOW..HIGH (e.g. uniform:800..1200), counts up to " +
      std::to_string(slot_schedule::most);
  slot_schedule s;
  if (auto n = whole(text)) {
    s.low = s.high = *n;
    return {s, {}};
  }
  if (text.starts_with("poisson:")) {
    auto m = number(text.substr(8));
    if (!m || !(*m > 0) || *m > slot_schedule::most) return {std::nullopt, allowed + "; a mean above 0"};
    s.form = slot_schedule::shape::poisson;
    s.mean = *m;
    return {s, {}};
  }
  if (text.starts_with("uniform:")) {
    const std::string_view range = text.substr(8);
    const std::size_t dots = range.find("..");
    auto lo = dots == std::string_view::npos ? std::nullopt : whole(range.substr(0, dots));
    auto hi = dots == std::string_view::npos ? std::nullopt : whole(range.substr(dots + 2));
    if (!lo || !hi || *lo > *hi) return {std::nullopt, allowed + "; LOW at most HIGH"};
    s.form = slot_schedule::shape::uniform;
    s.low = *lo;
    s.high = *hi;
    return {s, {}};
  }
  return {std::nullopt, allowed};
}

std::string to_string(const slot_schedule& s) {
  switch (s.form) {
    case slot_schedule::shape::constant: return std::to_string(s.low);
    case slot_schedule::shape::poisson: return "poisson:" + number_text(s.mean);
    case slot_schedule::shape::uniform: return "uniform:" + std::to_string(s.low) + ".." + std::to_string(s.high);
  }
  return std::to_string(s.low);
}

}  // namespace apiary::core
