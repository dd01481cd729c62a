#include "apiary/harness/report/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace apiary::harness {

double nearest_rank(std::span<const double> sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

series_stats summarize(std::span<const double> values) {
  series_stats s;
  s.count = values.size();
  if (values.empty()) return s;
  s.min = values[0];
  s.max = values[0];
  double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    sum += v;
    if (v < s.min) {
      s.min = v;
      s.min_at = i;
    }
    if (v > s.max) {
      s.max = v;
      s.max_at = i;
    }
  }
  const double n = static_cast<double>(values.size());
  s.avg = sum / n;
  double sq = 0;
  for (double v : values) sq += (v - s.avg) * (v - s.avg);
  s.population_stddev = std::sqrt(sq / n);

  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  s.median = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  s.p90 = nearest_rank(sorted, 90);
  s.p99 = nearest_rank(sorted, 99);
  return s;
}

}  // namespace apiary::harness
