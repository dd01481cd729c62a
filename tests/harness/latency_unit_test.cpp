// The latency histograms (harness/latency.hpp): the percentile rule against exact
// nearest-rank values, exact merging, per-kind counts, the flow bins and the .hgrm text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "apiary/harness/cycle/latency.hpp"

namespace apiary::harness {
namespace {

double nearest_rank(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const auto rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))));
  return static_cast<double>(v[rank - 1]);
}

std::vector<std::int64_t> log_uniform(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(2.5, 10.5);  // 300 ns .. 30 s
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(std::pow(10.0, exponent(rng)));
  return v;
}

TEST(Latency, PercentilesAreWithinOnePercentOfTheExactOnes) {
  const auto values = log_uniform(20'000, 1);
  latency_histogram h;
  for (auto v : values) h.add(0, v);
  const latency_summary s = h.summary();
  EXPECT_EQ(s.count, values.size());
  EXPECT_EQ(s.min_ns, static_cast<double>(*std::min_element(values.begin(), values.end())));
  EXPECT_EQ(s.max_ns, static_cast<double>(*std::max_element(values.begin(), values.end())));
  for (std::size_t q = 0; q < latency_quantiles.size(); ++q) {
    const double exact = nearest_rank(values, latency_quantiles[q]);
    EXPECT_NEAR(s.quantile_ns[q], exact, exact * 0.01) << latency_quantile_names[q];
  }
}

TEST(Latency, MergingEqualsRecordingEverythingInOne) {
  const auto a = log_uniform(5000, 2);
  const auto b = log_uniform(3000, 3);
  latency_histogram ha, hb, all;
  for (auto v : a) ha.add(1, v), all.add(1, v);
  for (auto v : b) hb.add(2, v), all.add(2, v);
  ha += hb;
  EXPECT_EQ(ha.bins(), all.bins());
  const latency_summary m = ha.summary(), w = all.summary();
  EXPECT_EQ(m.count, w.count);
  EXPECT_EQ(m.mean_ns, w.mean_ns);
  EXPECT_EQ(m.quantile_ns, w.quantile_ns);
  EXPECT_EQ(ha.summary(1).count, a.size());
  EXPECT_EQ(ha.summary(2).count, b.size());
  EXPECT_EQ(ha.summary(0).count, 0u);
}

TEST(Latency, FlowBinsReadAsTheExtremes) {
  latency_histogram h;
  h.add(0, 10);               // below 100 ns
  h.add(0, 200'000'000'000);  // above 100 s
  h.add(0, -5);               // a clock stepping back reads as no time
  const latency_summary s = h.summary();
  EXPECT_EQ(s.min_ns, 0.0);
  EXPECT_EQ(s.max_ns, 2e11);
  EXPECT_EQ(s.quantile_ns[0], 0.0);   // the median falls in the underflow bin
  EXPECT_EQ(s.quantile_ns[4], 2e11);  // p99.99 in the overflow bin
  const auto bins = h.bins();
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins.front(), (std::pair<int, std::uint64_t>{-1, 2}));
  EXPECT_EQ(bins.back(), (std::pair<int, std::uint64_t>{static_cast<int>(latency_bins), 1}));
}

TEST(Latency, KindsBeyondTheLastCountAsTheLast) {
  latency_histogram h;
  h.add(200, 1000);
  EXPECT_EQ(h.summary(latency_kinds - 1).count, 1u);
}

TEST(Latency, RecorderSortsRecordsIntoStages) {
  latency_recorder r;
  queen::tx_timing included{100, 1'000, 3'000, 50'000, {}, 4, core::reject::none};
  queen::tx_timing rejected{100, 1'000, 2'000, 2'000, {}, 2, core::reject::duplicate};
  r.add(included);
  r.add(rejected);
  EXPECT_EQ(r.stage(latency_stage::queue_wait).summary().max_ns, 2'000);
  EXPECT_EQ(r.stage(latency_stage::inclusion).summary().max_ns, 49'000);
  EXPECT_EQ(r.stage(latency_stage::end_to_end).summary().max_ns, 49'900);
  EXPECT_EQ(r.stage(latency_stage::end_to_end).summary(4).count, 1u);
  EXPECT_EQ(r.stage(latency_stage::rejection).summary().count, 1u);
  EXPECT_EQ(r.stage(latency_stage::rejection).summary().max_ns, 1'000);
}

// The run's last interval record is written only when something came since the one before:
// a rejection alone is something.
TEST(Latency, RecorderIsEmptyUntilARecordAndAfterReset) {
  latency_recorder r;
  EXPECT_TRUE(r.empty());
  r.add(queen::tx_timing{100, 1'000, 2'000, 2'000, {}, 2, core::reject::duplicate});
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.stage(latency_stage::rejection).count(), 1u);
  EXPECT_EQ(r.stage(latency_stage::inclusion).count(), 0u);
  r.reset();
  EXPECT_TRUE(r.empty());
}

TEST(Latency, HgrmEndsAtTheTotalAndTheMaximum) {
  latency_histogram h;
  for (auto v : log_uniform(1000, 4)) h.add(0, v);
  std::istringstream in(hgrm_text(h));
  std::string line, last_row;
  std::getline(in, line);
  EXPECT_NE(line.find("1/(1-Percentile)"), std::string::npos);
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') last_row = line;
  std::istringstream row(last_row);
  double value = 0, percentile = 0;
  std::uint64_t count = 0;
  row >> value >> percentile >> count;
  EXPECT_NEAR(value, h.summary().max_ns / 1e3, 1e-3);
  EXPECT_EQ(percentile, 1.0);
  EXPECT_EQ(count, 1000u);
}

}  // namespace
}  // namespace apiary::harness
