// genesis_vesting: parsing and printing a vesting spec, and each genesis account's vesting
// drawn from it by a counter-based hash of the account's index and Boost.Math's inverse CDFs.
#include "apiary/core/chain/genesis_vesting.hpp"

#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/pareto.hpp>
#include <boost/math/policies/policy.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "apiary/core/base/check.hpp"
#include "apiary/core/base/number_text.hpp"

namespace apiary::core {

namespace {

// Plain double arithmetic (no promotion to long double): the amounts are rounded to whole
// micro-VESTS, far coarser than a double's error.
using math_policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
using lognormal = boost::math::lognormal_distribution<double, math_policy>;
using pareto = boost::math::pareto_distribution<double, math_policy>;

// The keys each law takes, in the order to_string writes them.
const std::vector<std::string_view>& keys_of(vesting_law law) {
  static const std::vector<std::string_view> lognormal_keys{"median", "sigma", "min", "max"};
  static const std::vector<std::string_view> pareto_keys{"alpha", "min", "max"};
  static const std::vector<std::string_view> none;
  return law == vesting_law::lognormal ? lognormal_keys : law == vesting_law::pareto ? pareto_keys : none;
}

// 'text', built by appending: "'" + std::string(...) makes GCC 12 warn falsely (-Wrestrict, bug 105329).
std::string quoted(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 2);
  s.append(1, '\'').append(text).append(1, '\'');
  return s;
}

std::string joined(const std::vector<std::string_view>& keys) {
  std::string out;
  for (std::string_view k : keys) out.append(out.empty() ? "" : ", ").append(k);
  return out;
}

std::optional<double> number_of(std::string_view text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// A bound: a whole number of micro-VESTS, written in digits or as 1e15.
std::optional<std::uint64_t> bound_of(double v) {
  if (!(v >= 0) || v != std::floor(v) || v > static_cast<double>(vesting_spec::max_bound)) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// Sets one key=value of a distribution, or says what is wrong with it.
std::optional<std::string> set_key(vesting_spec& s, std::string_view key, std::string_view value) {
  const std::string item = std::string(key) + "=" + std::string(value);
  const std::optional<double> v = number_of(value);
  if (!v) return item + ": expected a number";
  if (key == "min" || key == "max") {
    const std::optional<std::uint64_t> b = bound_of(*v);
    if (!b) return item + ": expected a whole number of micro-VESTS from 0 to 9e18";
    (key == "min" ? s.min : s.max) = *b;
    return std::nullopt;
  }
  (key == "median" ? s.median : key == "sigma" ? s.sigma : s.alpha) = *v;
  return std::nullopt;
}

std::optional<std::string> parse_distribution(std::string_view law_name, std::string_view rest, vesting_spec& s) {
  const std::optional<vesting_law> law = value_of(vesting_law_names, law_name);
  if (!law || *law == vesting_law::constant)
    return std::string("unknown distribution ") + quoted(law_name) + " (expected lognormal or pareto)";
  s.law = *law;
  const std::vector<std::string_view>& keys = keys_of(*law);
  std::vector<bool> seen(keys.size(), false);
  for (std::size_t start = 0; start <= rest.size();) {
    const std::size_t end = std::min(rest.find(',', start), rest.size());
    const std::string_view item = rest.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (eq == std::string_view::npos || at == keys.end())
      return quoted(item) + ": expected key=value with a key of " + std::string(law_name) + " (" + joined(keys) + ")";
    const auto i = static_cast<std::size_t>(at - keys.begin());
    if (seen[i]) return std::string(key) + " given twice";
    seen[i] = true;
    if (auto problem = set_key(s, key, item.substr(eq + 1))) return problem;
  }
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!seen[i]) return std::string(law_name) + " needs " + joined(keys) + "; " + std::string(keys[i]) + " is missing";
  return check_vesting_spec(s);
}

// A uniform in (0, 1) from the index alone: SplitMix64's finalizer of the index (a bijection,
// so neighbouring indexes give unrelated values), its top 53 bits centred in their interval.
double unit_of(std::uint32_t index) {
  std::uint64_t z = (std::uint64_t{index} + 1) * 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

std::optional<std::string> parse_vesting_spec(std::string_view text, vesting_spec& out) {
  vesting_spec s;
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    std::uint64_t v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v > vesting_spec::max_constant)
      return quoted(text) + ": expected a whole number of micro-VESTS from 0 to " +
             std::to_string(vesting_spec::max_constant) +
             ", or a distribution: lognormal:median=M,sigma=S,min=A,max=B or pareto:alpha=K,min=A,max=B";
    out = vesting_spec(v);
    return std::nullopt;
  }
  if (auto problem = parse_distribution(text.substr(0, colon), text.substr(colon + 1), s))
    return quoted(text) + ": " + *problem;
  out = s;
  return std::nullopt;
}

std::optional<std::string> check_vesting_spec(const vesting_spec& s) {
  switch (s.law) {
    case vesting_law::constant: return std::nullopt;  // total_vesting_of checks the sum
    case vesting_law::lognormal:
      if (!(s.median > 0) || !std::isfinite(s.median)) return "median=" + number_text(s.median) + ": must be above 0";
      if (!(s.sigma > 0) || !std::isfinite(s.sigma)) return "sigma=" + number_text(s.sigma) + ": must be above 0";
      break;
    case vesting_law::pareto:
      if (!(s.alpha > 0) || !std::isfinite(s.alpha)) return "alpha=" + number_text(s.alpha) + ": must be above 0";
      if (s.min < 1) return "min=0: a Pareto distribution's scale must be at least 1";
      break;
  }
  if (s.max > vesting_spec::max_bound) return "max=" + std::to_string(s.max) + ": above 9e18";
  if (s.min > s.max) return "min=" + std::to_string(s.min) + " is above max=" + std::to_string(s.max);
  // Truncated far from its median, the distribution leaves every draw at the nearer bound.
  if (s.law == vesting_law::lognormal &&
      (s.median < static_cast<double>(s.min) || s.median > static_cast<double>(s.max)))
    return "median=" + number_text(s.median) + " is outside [min=" + std::to_string(s.min) +
           ", max=" + std::to_string(s.max) + "]: every account would get a bound, not the distribution";
  return std::nullopt;
}

std::string to_string(const vesting_spec& s) {
  if (s.law == vesting_law::constant) return std::to_string(s.constant);
  std::string out(name_of(vesting_law_names, s.law));
  char sep = ':';
  for (std::string_view key : keys_of(s.law)) {
    const std::string value = key == "min"      ? std::to_string(s.min)
                              : key == "max"    ? std::to_string(s.max)
                              : key == "median" ? number_text(s.median)
                              : key == "sigma"  ? number_text(s.sigma)
                                                : number_text(s.alpha);
    out.append(1, sep).append(key).append("=").append(value);
    sep = ',';
  }
  return out;
}

vesting_sampler::vesting_sampler(const vesting_spec& spec) : spec_(spec) {
  APIARY_CHECK(!check_vesting_spec(spec).has_value());
  const auto lo = static_cast<double>(spec.min);
  const auto hi = static_cast<double>(spec.max);
  if (spec.law == vesting_law::lognormal) {
    const lognormal d(std::log(spec.median), spec.sigma);
    cdf_min_ = boost::math::cdf(d, lo);
    cdf_max_ = boost::math::cdf(d, hi);
  } else if (spec.law == vesting_law::pareto) {
    const pareto d(lo, spec.alpha);
    cdf_min_ = 0;
    cdf_max_ = boost::math::cdf(d, hi);
  }
}

double vesting_sampler::quantile(double p) const {
  if (spec_.law == vesting_law::lognormal)
    return boost::math::quantile(lognormal(std::log(spec_.median), spec_.sigma), p);
  return boost::math::quantile(pareto(static_cast<double>(spec_.min), spec_.alpha), p);
}

std::uint64_t vesting_sampler::operator()(std::uint32_t index) const {
  if (spec_.law == vesting_law::constant) return spec_.constant;
  const double p = cdf_min_ + unit_of(index) * (cdf_max_ - cdf_min_);
  // Where the bounds' CDFs round to 0 or 1 the quantile would be 0 or infinite: the bound.
  const double x = !(p > 0) ? static_cast<double>(spec_.min) : !(p < 1) ? static_cast<double>(spec_.max) : quantile(p);
  const double clamped = std::clamp(std::round(x), static_cast<double>(spec_.min), static_cast<double>(spec_.max));
  return std::clamp(static_cast<std::uint64_t>(clamped), spec_.min, spec_.max);
}

std::uint64_t vesting_of(const vesting_spec& spec, std::uint32_t index) { return vesting_sampler(spec)(index); }

std::optional<std::int64_t> total_vesting_of(const vesting_spec& spec, std::uint32_t accounts) {
  std::int64_t total = 0;
  if (spec.law == vesting_law::constant) {
    if (spec.constant > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_mul_overflow(static_cast<std::int64_t>(spec.constant), std::int64_t{accounts}, &total))
      return std::nullopt;
    return total;
  }
  const vesting_sampler sample(spec);
  for (std::uint32_t i = 0; i < accounts; ++i) {
    const std::uint64_t v = sample(i);
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    if (__builtin_add_overflow(total, static_cast<std::int64_t>(v), &total)) return std::nullopt;
  }
  return total;
}

}  // namespace apiary::core
