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

double median_of(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

namespace {

// 1-based ranks, ties given their mean rank.
std::vector<double> mean_ranks(std::span<const double> values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    i = j;
  }
  return ranks;
}

}  // namespace

change_point pettitt(std::span<const double> values) {
  change_point c;
  const std::size_t n = values.size();
  if (n < 3) return c;
  const std::vector<double> ranks = mean_ranks(values);
  const double np1 = static_cast<double>(n) + 1;
  double prefix = 0;
  double k = -1;
  for (std::size_t t = 1; t < n; ++t) {
    prefix += ranks[t - 1];
    const double u = std::abs(2 * prefix - static_cast<double>(t) * np1);
    if (u > k) {
      k = u;
      c.at = t;
    }
  }
  const double nd = static_cast<double>(n);
  c.p_value = std::min(1.0, 2 * std::exp(-6 * k * k / (nd * nd * nd + nd * nd)));
  return c;
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
