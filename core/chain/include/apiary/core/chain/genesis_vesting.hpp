// genesis_vesting: how much vesting each genesis account gets (chain_options::genesis_vesting):
// one constant for every account, or a distribution with bounds, so that the accounts' RC
// maxima span orders of magnitude as Hive's do (docs/rc.md, "Who pays: vesting and activity").
//
//   100000000000                                     every account the same (micro-VESTS)
//   lognormal:median=1e11,sigma=2,min=1e6,max=1e15   log-normal: ln(vesting) ~ N(ln median, sigma)
//   pareto:alpha=1.2,min=1e9,max=1e15                Pareto with scale min and tail index alpha
//
// A distribution is truncated to [min, max] (not clamped: no mass piles up at a bound).
// Account i's vesting is a pure function of the spec and i: a counter-based hash of i gives a
// uniform u in (0, 1), mapped into the truncated range of the CDF, and Boost.Math's inverse
// CDF gives the amount, rounded to whole micro-VESTS. Genesis, the colony's payer weights and
// the tests all call vesting_of, so they agree on every account without sharing any state.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiary/core/base/named_enum.hpp"

namespace apiary::core {

enum class vesting_law : std::uint8_t { constant, lognormal, pareto };

inline constexpr std::array<enum_name<vesting_law>, 3> vesting_law_names{
    {{"constant", vesting_law::constant}, {"lognormal", vesting_law::lognormal}, {"pareto", vesting_law::pareto}}};

struct vesting_spec {
  // The largest constant the option takes: with ten million accounts the total fits in 64 bits.
  static constexpr std::uint64_t max_constant = 900'000'000'000;
  // The largest bound of a distribution: what a 64-bit total holds (the sum is checked too).
  static constexpr std::uint64_t max_bound = 9'000'000'000'000'000'000u;

  vesting_law law = vesting_law::constant;
  std::uint64_t constant = 100'000'000'000;  // law constant: every account's vesting
  double median = 0;                         // lognormal: exp of the log's mean, > 0
  double sigma = 0;                          // lognormal: the log's standard deviation, > 0
  double alpha = 0;                          // pareto: the tail index, > 0
  std::uint64_t min = 0;                     // a distribution's bounds, min <= max (pareto: min >= 1)
  std::uint64_t max = 0;

  vesting_spec() = default;
  // A constant converts, as the option was a plain number before distributions.
  vesting_spec(std::uint64_t constant_value) : constant(constant_value) {}  // NOLINT(google-explicit-constructor)
  bool operator==(const vesting_spec&) const = default;
  // The most any account gets.
  std::uint64_t upper() const { return law == vesting_law::constant ? constant : max; }
};

// Parses a spec (the syntax above), or returns one line naming what is wrong.
std::optional<std::string> parse_vesting_spec(std::string_view text, vesting_spec& out);
// The spec's canonical text, which parses back to it: the digits alone for a constant (as a
// snapshot recorded before distributions existed), else law:key=value,... in a fixed order.
std::string to_string(const vesting_spec& spec);
// What is wrong with a spec's values (one line), or nullopt.
std::optional<std::string> check_vesting_spec(const vesting_spec& spec);

// Genesis account i's vesting in micro-VESTS, within [min, max]: what vesting_sampler gives.
// Each call evaluates the bounds' CDF again; for many accounts, make one sampler.
std::uint64_t vesting_of(const vesting_spec& spec, std::uint32_t index);

// vesting_of for one spec, with the truncation's CDF bounds evaluated once. The spec must check.
class vesting_sampler {
 public:
  explicit vesting_sampler(const vesting_spec& spec);
  std::uint64_t operator()(std::uint32_t index) const;
  const vesting_spec& spec() const { return spec_; }

 private:
  double quantile(double p) const;

  vesting_spec spec_;
  double cdf_min_ = 0;  // the CDF at min and at max: u in (0, 1) maps into [cdf_min_, cdf_max_]
  double cdf_max_ = 1;
};

// The vesting of accounts 0..accounts-1 summed, or nullopt when it does not fit in an int64
// (every RC price scales with it).
std::optional<std::int64_t> total_vesting_of(const vesting_spec& spec, std::uint32_t accounts);

}  // namespace apiary::core
