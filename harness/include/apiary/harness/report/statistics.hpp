// Summary statistics of a series (cycle times, block sizes, ...), as the report gives them.
// Definitions, so that anyone can recompute them from the per-block records:
//   avg     the arithmetic mean
//   median  the middle value, or the mean of the two middle values
//   pNN     nearest rank: the sorted value at 1-based rank ceil(NN/100 * n)
//   stddev  the population standard deviation (divided by n)
//   min_at / max_at  the index of the first minimum / maximum in input order
#pragma once

#include <cstddef>
#include <span>

namespace apiary::harness {

struct series_stats {
  std::size_t count = 0;  // the rest is 0 when count is 0
  double min = 0;
  double max = 0;
  double avg = 0;
  double median = 0;
  double p90 = 0;
  double p99 = 0;
  double population_stddev = 0;  // divided by n; the report names it "stddev"
  std::size_t min_at = 0;
  std::size_t max_at = 0;
};

series_stats summarize(std::span<const double> values);

// Nearest-rank percentile of a sorted, non-empty series; p in [0, 100].
double nearest_rank(std::span<const double> sorted, double p);

// The median of a non-empty series (copied and partly sorted).
double median_of(std::span<const double> values);

// Pettitt's test for one change in the level of a series (A. N. Pettitt, "A non-parametric
// approach to the change-point problem", Applied Statistics 28(2), 1979): rank-based, so a
// long tail of slow blocks does not make a change. The statistic is U_t = 2 * (sum of the
// ranks of the first t values) - t * (n + 1), ties given their mean rank; the change is
// where |U_t| is largest, K, and its two-sided p-value is approximated by
// 2 * exp(-6 K^2 / (n^3 + n^2)) (at most 1). Accurate for p-values below 0.5, which is where
// it decides. O(n log n).
struct change_point {
  std::size_t at = 0;    // the first value of the second segment (1..n-1); 0: no series to test
  double p_value = 1.0;  // 1 with fewer than 3 values
};
change_point pettitt(std::span<const double> values);

}  // namespace apiary::harness
