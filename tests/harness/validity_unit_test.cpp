// Whether a run's figures can be used (validity.hpp), from made-up series: Pettitt's test, the
// steadiness of the measured cycle, a tps run's schedule and the verdict with its warnings.
#include "apiary/harness/report/validity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "apiary/harness/report/statistics.hpp"

namespace apiary::harness {
namespace {

constexpr std::int64_t ms_ns = 1'000'000;  // a millisecond in ns

// Cycle times of 10 ms with a long right tail, as a shared machine gives them.
std::vector<double> noisy_cycles(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> tail(0.0, 0.04);
  std::vector<double> v(n);
  for (double& x : v) x = 10'000 * tail(rng);
  return v;
}

std::vector<std::uint32_t> numbers_from(std::uint32_t first, std::size_t n) {
  std::vector<std::uint32_t> nums(n);
  std::iota(nums.begin(), nums.end(), first);
  return nums;
}

TEST(Pettitt, FindsAStepWhereItIs) {
  std::vector<double> v = noisy_cycles(200, 1);
  for (std::size_t i = 0; i < 60; ++i) v[i] *= 1.3;  // a slow warm-up of 60 blocks
  const change_point c = pettitt(v);
  // The largest |U_t| lies a little past the step when the fast segment's slowest blocks rank
  // above the middle: the test places a change, the magnitude check decides.
  EXPECT_NEAR(static_cast<double>(c.at), 60, 5);
  EXPECT_LT(c.p_value, 1e-6);
}

TEST(Pettitt, AFlatSeriesHasNoSignificantChange) {
  int significant = 0;
  for (unsigned seed = 1; seed <= 50; ++seed) significant += pettitt(noisy_cycles(200, seed)).p_value < 0.001;
  EXPECT_LE(significant, 1);
}

TEST(Pettitt, TiesAndShortSeries) {
  EXPECT_EQ(pettitt(std::vector<double>{1, 2}).p_value, 1.0);
  const std::vector<double> flat(50, 7.0);
  EXPECT_EQ(pettitt(flat).p_value, 1.0);  // every rank the same: U is 0 everywhere
}

TEST(Steadiness, AShortWarmUpIsFlaggedWithTheBlockWhereItSettles) {
  std::vector<double> v = noisy_cycles(100, 2);
  for (std::size_t i = 0; i < 25; ++i) v[i] *= 1.25;
  const steadiness w = check_steadiness(v, numbers_from(11, v.size()));
  ASSERT_TRUE(w.checked);
  EXPECT_TRUE(w.level_changed);
  EXPECT_EQ(w.change_block, 36U);
  EXPECT_NEAR(w.shift, -0.2, 0.03);
  const validity verdict = judge_validity({}, w, {}, 0, 0);
  EXPECT_TRUE(verdict.valid);
  ASSERT_EQ(verdict.warnings.size(), 1U);
  EXPECT_NE(verdict.warnings[0].find("settles from block 36"), std::string::npos) << verdict.warnings[0];
}

TEST(Steadiness, ADriftIsNamedAndASteadySeriesIsNot) {
  std::vector<double> v = noisy_cycles(300, 3);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] *= 1.0 + 0.3 * static_cast<double>(i) / 300;
  const steadiness drift = check_steadiness(v, numbers_from(1, v.size()));
  EXPECT_TRUE(drift.drifts);
  EXPECT_NEAR(drift.trend, 0.26, 0.05);
  const steadiness steady = check_steadiness(noisy_cycles(300, 4), numbers_from(1, 300));
  EXPECT_FALSE(steady.drifts);
  EXPECT_FALSE(steady.level_changed);
  EXPECT_TRUE(judge_validity({}, steady, {}, 0, 0).warnings.empty());
}

TEST(Steadiness, TooFewBlocksAreNotChecked) {
  const steadiness w = check_steadiness(noisy_cycles(10, 5), numbers_from(1, 10));
  EXPECT_FALSE(w.checked);
  EXPECT_NE(w.not_checked.find("fewer than 20"), std::string::npos);
}

// A tps run's samples every 250 ms over `seconds`; `achieved(t)` the share of the schedule
// the generator reached in the quarter second ending at t, `held(t)` the share of it the
// system under test held each thread back.
template <class Achieved, class Held>
schedule_trace trace(double rate, std::uint32_t threads, int quarters, Achieved achieved, Held held) {
  schedule_trace t;
  t.rate = rate;
  t.threads = threads;
  schedule_sample s;
  t.samples.push_back(s);
  double submitted = 0;
  for (int q = 1; q <= quarters; ++q) {
    s.t_ns = q * 250 * ms_ns;
    submitted += rate * 0.25 * achieved(q);
    s.submitted = static_cast<std::uint64_t>(submitted);
    s.held_ns += static_cast<std::int64_t>(250 * ms_ns * held(q)) * threads;
    s.generating_ns += 100 * ms_ns * threads;
    t.samples.push_back(s);
  }
  return t;
}

TEST(Schedule, AGeneratorOnScheduleIsValid) {
  const schedule_trace t = trace(
      2000, 2, 40, [](int) { return 1.0; }, [](int) { return 0.0; });
  const schedule_analysis a = analyze_schedule(t, 0, 10'000 * ms_ns);
  ASSERT_TRUE(a.traced);
  EXPECT_FALSE(a.behind);
  EXPECT_EQ(a.intervals.size(), 10U);
  EXPECT_NEAR(a.intervals[3].intended, 2000, 1e-6);
  EXPECT_NEAR(a.intervals[3].generating_ms, 400, 1e-6);
  EXPECT_TRUE(judge_validity(a, {}, {}, 0, 0).valid);
}

TEST(Schedule, AGeneratorThatFallsBehindForOverASecondMakesTheRunInvalid) {
  // From 4 s to 6 s it reaches 80% of the schedule, held back by nothing.
  const schedule_trace t = trace(
      5000, 1, 40, [](int q) { return q > 16 && q <= 24 ? 0.8 : 1.0; }, [](int) { return 0.0; });
  const schedule_analysis a = analyze_schedule(t, 0, 10'000 * ms_ns);
  EXPECT_TRUE(a.behind);
  EXPECT_NEAR(a.worst_fall_behind, 0.2, 0.02);
  EXPECT_NEAR(a.intervals.back().lag_ms, 400, 1);
  const validity v = judge_validity(a, {}, {}, 0, 0);
  EXPECT_FALSE(v.valid);
  ASSERT_EQ(v.reasons.size(), 1U);
  EXPECT_NE(v.reasons[0].find("fell behind its schedule of 5000"), std::string::npos) << v.reasons[0];
}

TEST(Schedule, BeingHeldBackByTheSystemUnderTestIsAResultNotAFault) {
  // The same shortfall, all of it time the in-flight brake held the threads.
  const schedule_trace t = trace(
      5000, 2, 40, [](int q) { return q > 16 && q <= 24 ? 0.6 : 1.0; },
      [](int q) { return q > 16 && q <= 24 ? 0.4 : 0.0; });
  const schedule_analysis a = analyze_schedule(t, 0, 10'000 * ms_ns);
  EXPECT_FALSE(a.behind);
  EXPECT_NEAR(a.intervals.back().held_ms, 800, 1);
  EXPECT_NEAR(a.intervals.back().generator_lag_ms, 0, 1);
}

TEST(Schedule, ABriefOrOutOfWindowFallIsNotCounted) {
  // Behind by 40% for half a second only; then behind for two seconds after the window.
  const schedule_trace t = trace(
      5000, 1, 40, [](int q) { return q == 9 || q == 10 || q > 32 ? 0.6 : 1.0; }, [](int) { return 0.0; });
  const schedule_analysis a = analyze_schedule(t, 0, 8'000 * ms_ns);
  EXPECT_FALSE(a.behind) << a.worst_fall_behind;
  EXPECT_FALSE(analyze_schedule(trace(
                                    5000, 1, 40, [](int) { return 1.0; }, [](int) { return 0.0; }),
                                0, 0)
                   .behind);
}

TEST(Schedule, NotATpsRun) { EXPECT_FALSE(analyze_schedule({}, 0, 1000 * ms_ns).traced); }

TEST(Validity, TheMachineWarnings) {
  machine_tuning tuning;
  tuning.governor = "powersave";
  tuning.boost = true;
  tuning.smt = false;
  const validity v = judge_validity({}, {}, tuning, 0.03, 0.2);
  EXPECT_TRUE(v.valid);
  ASSERT_EQ(v.warnings.size(), 4U);
  EXPECT_NE(v.warnings[0].find("'powersave'"), std::string::npos);
  EXPECT_NE(v.warnings[1].find("boost"), std::string::npos);
  EXPECT_NE(v.warnings[2].find("3.0%"), std::string::npos);
  EXPECT_NE(v.warnings[3].find("20.0%"), std::string::npos);
  tuning.governor = "performance";
  tuning.boost.reset();
  EXPECT_TRUE(judge_validity({}, {}, tuning, -1, -1).warnings.empty());
}

}  // namespace
}  // namespace apiary::harness
