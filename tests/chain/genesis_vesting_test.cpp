// The genesis vesting as a distribution (genesis_vesting.hpp): the spec's syntax and the one
// line each bad value gets; vesting_of as a pure function of the spec and the index, within its
// bounds, a constant spec giving today's amount; 100,000 draws whose quantiles match the
// distributions' closed forms; a genesis whose total vesting is the accounts' sum and whose
// audit holds through blocks; a snapshot that refuses a chain with another spec.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/chain/genesis_vesting.hpp"
#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

core::vesting_spec parsed(const std::string& text) {
  core::vesting_spec s;
  const auto problem = core::parse_vesting_spec(text, s);
  EXPECT_FALSE(problem.has_value()) << text << ": " << problem.value_or("");
  return s;
}

const std::string lognormal_text = "lognormal:median=1e11,sigma=2,min=1e6,max=1e15";
const std::string pareto_text = "pareto:alpha=1.2,min=1e9,max=1e15";

TEST(VestingSpec, ParsesAndPrintsBack) {
  const core::vesting_spec c = parsed("100000000000");
  EXPECT_EQ(c, core::chain_options{}.genesis_vesting);  // today's default, as a constant
  EXPECT_EQ(core::to_string(c), "100000000000");
  const core::vesting_spec l = parsed(lognormal_text);
  EXPECT_EQ(l.law, core::vesting_law::lognormal);
  EXPECT_EQ(l.median, 1e11);
  EXPECT_EQ(l.sigma, 2.0);
  EXPECT_EQ(l.min, 1'000'000u);
  EXPECT_EQ(l.max, 1'000'000'000'000'000u);
  EXPECT_EQ(core::to_string(l), "lognormal:median=1e+11,sigma=2,min=1000000,max=1000000000000000");
  EXPECT_EQ(parsed(core::to_string(l)), l);
  // Keys in any order.
  const core::vesting_spec p = parsed("pareto:max=1e15,min=1000000000,alpha=1.2");
  EXPECT_EQ(p, parsed(pareto_text));
  EXPECT_EQ(parsed(core::to_string(p)), p);
}

TEST(VestingSpec, BadValuesGetOneLineNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"-5", "'-5': expected a whole number"},
      {"900000000001", "from 0 to 900000000000"},
      {"12abc", "'12abc'"},
      {"gamma:k=2,min=1,max=2", "unknown distribution 'gamma'"},
      {"lognormal:median=1e11,sigma=0,min=1,max=2", "sigma=0: must be above 0"},
      {"lognormal:median=1e11,sigma=-1,min=1,max=2", "sigma=-1: must be above 0"},
      {"lognormal:median=0,sigma=1,min=1,max=2", "median=0: must be above 0"},
      {"pareto:alpha=0,min=1,max=2", "alpha=0: must be above 0"},
      {"pareto:alpha=-1.5,min=1,max=2", "alpha=-1.5: must be above 0"},
      {"pareto:alpha=1,min=0,max=2", "min=0: a Pareto distribution's scale must be at least 1"},
      {"lognormal:median=1e11,sigma=1,min=1e12,max=1e6", "min=1000000000000 is above max=1000000"},
      {"lognormal:median=1e12,sigma=1,min=1,max=1000", "median=1e+12 is outside [min=1, max=1000]"},
      {"lognormal:median=5,sigma=1,min=10,max=1000", "median=5 is outside [min=10, max=1000]"},
      {"lognormal:median=1e11,sigma=1,min=-1,max=5", "min=-1: expected a whole number of micro-VESTS"},
      {"lognormal:median=1e11,sigma=1,min=1.5,max=5", "min=1.5: expected a whole number"},
      {"lognormal:median=1e11,sigma=1,min=1,max=1e19",
       "max=1e19: expected a whole number of micro-VESTS from 0 to 9e18"},
      {"lognormal:median=1e11,sigma=1,min=1", "max is missing"},
      {"lognormal:median=1e11,sigma=1,min=1,max=5,alpha=2", "'alpha=2': expected key=value with a key of lognormal"},
      {"lognormal:median=1e11,sigma=1,sigma=2,min=1,max=5", "sigma given twice"},
      {"pareto:alpha=x,min=1,max=2", "alpha=x: expected a number"},
      {"pareto:", "expected key=value"},
  };
  for (const auto& [text, words] : cases) {
    core::vesting_spec s;
    const auto problem = core::parse_vesting_spec(text, s);
    ASSERT_TRUE(problem.has_value()) << text << " was accepted";
    EXPECT_NE(problem->find(words), std::string::npos) << text << ": " << *problem;
    EXPECT_EQ(problem->find('\n'), std::string::npos) << *problem;
    EXPECT_EQ(s, core::vesting_spec{}) << text << ": a refused spec changed the value";
  }
}

TEST(VestingOf, AConstantIsTheSameForEveryAccount) {
  const core::vesting_spec c(100'000'000'000);
  const core::vesting_sampler sample(c);
  for (std::uint32_t i : {0u, 1u, 77u, 99'999u, 4'000'000'000u}) {
    EXPECT_EQ(core::vesting_of(c, i), 100'000'000'000u);
    EXPECT_EQ(sample(i), 100'000'000'000u);
  }
  EXPECT_EQ(core::total_vesting_of(c, 100'000), 10'000'000'000'000'000);
  EXPECT_FALSE(core::total_vesting_of(core::vesting_spec(900'000'000'000), 10'300'000).has_value());
}

TEST(VestingOf, IsAPureFunctionOfSpecAndIndexWithinItsBounds) {
  for (const std::string& text :
       {lognormal_text, pareto_text, std::string("lognormal:median=1.5e6,sigma=3,min=1e6,max=2e6"),
        std::string("pareto:alpha=0.5,min=7,max=7")}) {
    const core::vesting_spec s = parsed(text);
    const core::vesting_sampler a(s);
    const core::vesting_sampler b(s);
    std::vector<std::uint64_t> seen;
    for (std::uint32_t i = 0; i < 20'000; ++i) {
      const std::uint64_t v = a(i);
      ASSERT_EQ(v, b(i)) << text << " index " << i;
      ASSERT_GE(v, s.min) << text;
      ASSERT_LE(v, s.max) << text;
      if (i < 50) {
        EXPECT_EQ(core::vesting_of(s, i), v);
      }
      seen.push_back(v);
    }
    // Neighbouring indexes are not ordered: the hash spreads them.
    if (s.min < s.max) {
      EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end())) << text;
    }
  }
  // Another spec gives other amounts to the same index.
  EXPECT_NE(core::vesting_of(parsed(lognormal_text), 3), core::vesting_of(parsed(pareto_text), 3));
}

// The share of 100,000 draws at or below the distribution's p-quantile (a closed form, not
// Boost's) is p within 0.006 (about four standard errors).
void expect_quantiles(const std::string& text, double (*quantile)(double)) {
  const core::vesting_sampler sample(parsed(text));
  constexpr std::uint32_t n = 100'000;
  std::vector<double> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = static_cast<double>(sample(i));
  std::sort(v.begin(), v.end());
  for (double p : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95}) {
    const double q = quantile(p);
    const double share = static_cast<double>(std::upper_bound(v.begin(), v.end(), q) - v.begin()) / n;
    EXPECT_NEAR(share, p, 0.006) << text << ": quantile " << p << " = " << q;
  }
  // The median itself, within 2%.
  EXPECT_NEAR(v[n / 2] / quantile(0.5), 1.0, 0.02) << text;
}

// The standard normal's p-quantile: Phi(z) = p by bisection, Phi by std::erfc.
double normal_quantile(double p) {
  double a = -10;
  double b = 10;
  while (b - a > 1e-12) {
    const double z = (a + b) / 2;
    (0.5 * std::erfc(-z / std::sqrt(2.0)) < p ? a : b) = z;
  }
  return (a + b) / 2;
}

TEST(VestingOf, LognormalDrawsFollowTheDistribution) {
  // Bounds far out in both tails: truncation moves no quantile measurably.
  expect_quantiles("lognormal:median=1e11,sigma=2,min=1,max=9e18",
                   [](double p) { return 1e11 * std::exp(2.0 * normal_quantile(p)); });
  // Bounds at one sigma either side of the median (1e10 / e, 1e10 * e): the draws are the
  // normal's restricted to [-1, 1], whose p-quantile is z(Phi(-1) + p (1 - 2 Phi(-1))).
  expect_quantiles("lognormal:median=1e10,sigma=1,min=3678794412,max=27182818285", [](double p) {
    const double lo = 0.15865525393145707;  // Phi(-1)
    return 1e10 * std::exp(normal_quantile(lo + p * (1 - 2 * lo)));
  });
}

TEST(VestingOf, ParetoDrawsFollowTheDistribution) {
  // x_p = min (1 - p)^(-1/alpha); the bound at 9e18 cuts off 1e-12 of the mass.
  expect_quantiles("pareto:alpha=1.2,min=1e9,max=9e18", [](double p) { return 1e9 * std::pow(1 - p, -1 / 1.2); });
  // Truncated at 10x the scale with alpha 1: F(x) = (1 - min/x) / (1 - 1/10).
  expect_quantiles("pareto:alpha=1,min=1e9,max=1e10", [](double p) { return 1e9 / (1 - p * 0.9); });
}

// ---- genesis ----------------------------------------------------------------------------------

core::chain_options vesting_options(const std::string& spec) {
  core::chain_options o = small_options(300);
  o.genesis_vesting = parsed(spec);
  return o;
}

TEST(GenesisVesting, EachAccountGetsItsDrawAndTheTotalIsTheirSum) {
  for (const std::string& text : {lognormal_text, pareto_text, std::string("60")}) {
    SCOPED_TRACE(text);
    harness h(vesting_options(text));
    const core::chain& c = h.chain();
    const core::vesting_spec& s = c.options().genesis_vesting;
    std::int64_t sum = 0;
    std::int64_t smallest = INT64_MAX;
    std::int64_t largest = 0;
    for (std::uint32_t i = 0; i < 300; ++i) {
      const core::account_object* a = c.find_account(user(i));
      ASSERT_NE(a, nullptr);
      ASSERT_EQ(a->vesting, static_cast<std::int64_t>(core::vesting_of(s, i))) << i;
      EXPECT_EQ(c.rc_mana(user(i)), a->vesting) << "a full manabar at genesis";
      sum += a->vesting;
      smallest = std::min(smallest, a->vesting);
      largest = std::max(largest, a->vesting);
    }
    EXPECT_EQ(c.rc().total_vesting, sum);
    EXPECT_EQ(core::total_vesting_of(s, 300), sum);
    if (s.law != core::vesting_law::constant) {
      EXPECT_GT(largest, 10 * smallest) << "not spread";
    }
    // Blocks of transactions paid by accounts of every size: the audit (the vesting total
    // among its checks) holds.
    for (std::uint32_t b = 0; b < 3; ++b) {
      for (std::uint32_t i = 0; i < 40; ++i)
        h.push(h.make(custom_json(user(b * 40 + i), "v", R"({"n":)" + std::to_string(i) + "}"), user(b * 40 + i)));
      h.produce();
    }
    const core::chain_audit audit = c.audit();
    EXPECT_TRUE(audit.violations.empty()) << audit.violations.front();
  }
}

TEST(GenesisVesting, ATotalBeyond64BitsIsRefused) {
  core::chain_options o = vesting_options("lognormal:median=1e18,sigma=1,min=1e17,max=9e18");
  EXPECT_FALSE(core::total_vesting_of(o.genesis_vesting, 300).has_value());
  EXPECT_THROW(core::chain c(o), std::invalid_argument);
}

TEST(GenesisVesting, ASnapshotRefusesAnotherSpec) {
  const core::chain_options o = vesting_options(lognormal_text);
  core::chain c(o);
  core::out_buffer b;
  c.write_snapshot(b);
  const std::span<const std::uint8_t> file(b.bytes(), b.size());
  auto loaded = core::chain::from_snapshot(o, file);
  EXPECT_EQ(loaded->state_digest(), c.state_digest());
  EXPECT_TRUE(loaded->audit().violations.empty());
  for (const std::string& other :
       {std::string("100000000000"), std::string("lognormal:median=1e11,sigma=2.5,min=1e6,max=1e15"), pareto_text}) {
    SCOPED_TRACE(other);
    try {
      core::chain::from_snapshot(vesting_options(other), file);
      ADD_FAILURE() << "loaded with another genesis vesting";
    } catch (const core::snapshot_error& e) {
      EXPECT_EQ(e.problem(), core::snapshot_problem::options);
      const std::string what = e.what();
      EXPECT_NE(what.find("genesis_vesting=" + core::to_string(o.genesis_vesting)), std::string::npos) << what;
      EXPECT_NE(what.find("this chain has genesis_vesting=" + core::to_string(parsed(other))), std::string::npos)
          << what;
    }
  }
}

}  // namespace
