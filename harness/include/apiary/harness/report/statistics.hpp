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

}  // namespace apiary::harness
