#include "apiary/harness/report/validity.hpp"

#include <algorithm>
#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/report/statistics.hpp"

namespace apiary::harness {

namespace {

constexpr double ns_per_s = 1e9;

double seconds(std::int64_t ns) { return static_cast<double>(ns) / ns_per_s; }

// The generator's own lag at a sample, in seconds of the schedule: what the colony submitted
// short of the schedule since the first sample, less the time (per thread) it was held back.
double own_lag_s(const schedule_trace& t, const schedule_sample& s) {
  const schedule_sample& first = t.samples.front();
  const double due = t.rate * seconds(s.t_ns - first.t_ns);
  const double lag = (due - static_cast<double>(s.submitted - first.submitted)) / t.rate;
  return lag - seconds(s.held_ns - first.held_ns) / t.threads;
}

void add_intervals(schedule_analysis& a, const schedule_trace& t) {
  const schedule_sample& first = t.samples.front();
  const schedule_sample* from = &first;
  for (std::size_t i = 1; i < t.samples.size(); ++i) {
    const schedule_sample& s = t.samples[i];
    if (s.t_ns - from->t_ns < static_cast<std::int64_t>(ns_per_s) && i + 1 != t.samples.size()) continue;
    schedule_interval x;
    x.t_s = seconds(s.t_ns);
    x.interval_s = seconds(s.t_ns - from->t_ns);
    x.intended = t.rate * x.interval_s;
    x.submitted = s.submitted - from->submitted;
    const double lag_s =
        (t.rate * seconds(s.t_ns - first.t_ns) - static_cast<double>(s.submitted - first.submitted)) / t.rate;
    x.lag_ms = lag_s * 1e3;
    x.held_ms = seconds(s.held_ns - first.held_ns) / t.threads * 1e3;
    x.generator_lag_ms = own_lag_s(t, s) * 1e3;
    x.generating_ms = seconds(s.generating_ns - from->generating_ns) / t.threads * 1e3;
    x.signing_ms = seconds(s.signing_ns - from->signing_ns) / t.threads * 1e3;
    a.intervals.push_back(x);
    from = &s;
  }
}

// The samples within the window: [first, last].
struct window_samples {
  std::size_t first = 0;
  std::size_t last = 0;
  bool empty() const { return last <= first; }
};

window_samples samples_within(const schedule_trace& t, std::int64_t start_ns, std::int64_t end_ns) {
  window_samples w;
  while (w.first < t.samples.size() && t.samples[w.first].t_ns < start_ns) ++w.first;
  w.last = w.first;
  while (w.last + 1 < t.samples.size() && t.samples[w.last + 1].t_ns <= end_ns) ++w.last;
  return w;
}

// The generator's own lag grew from sample i to sample j, per second, beyond the schedule's
// granularity (one transaction per thread: submissions come whole, tokens accrue evenly).
double growth(const schedule_trace& t, std::size_t i, std::size_t j) {
  const double span_s = seconds(t.samples[j].t_ns - t.samples[i].t_ns);
  if (span_s <= 0) return 0;
  return (own_lag_s(t, t.samples[j]) - own_lag_s(t, t.samples[i]) - t.threads / t.rate) / span_s;
}

// Runs of behind steps (a sample to the next, the lag growing faster than the limit) lasting
// more than the span: each makes the run invalid; worst_fall_behind is the fastest of them.
void find_behind(schedule_analysis& a, const schedule_trace& t, window_samples w) {
  const auto span_ns = static_cast<std::int64_t>(generator_behind_span_s * ns_per_s);
  std::size_t from = w.first;
  for (std::size_t i = w.first; i <= w.last; ++i) {
    const bool behind = i < w.last && growth(t, i, i + 1) > generator_behind_limit;
    if (behind) continue;
    if (t.samples[i].t_ns - t.samples[from].t_ns > span_ns) {
      if (!a.behind) a.worst_fall_behind = 0;
      a.behind = true;
      a.behind_s += seconds(t.samples[i].t_ns - t.samples[from].t_ns);
      if (const double g = growth(t, from, i); g > a.worst_fall_behind) {
        a.worst_fall_behind = g;
        a.worst_at_s = seconds(t.samples[from].t_ns);
      }
    }
    from = i + 1;
  }
}

// Without such a run, the fastest growth over any span of more than a second, for the summary.
void find_worst_span(schedule_analysis& a, const schedule_trace& t, window_samples w) {
  const auto span_ns = static_cast<std::int64_t>(generator_behind_span_s * ns_per_s);
  std::size_t j = w.first;
  for (std::size_t i = w.first; i < w.last; ++i) {
    while (j <= w.last && t.samples[j].t_ns - t.samples[i].t_ns <= span_ns) ++j;
    if (j > w.last) return;
    if (const double g = growth(t, i, j); g > a.worst_fall_behind) {
      a.worst_fall_behind = g;
      a.worst_at_s = seconds(t.samples[i].t_ns);
    }
  }
}

void machine_warnings(validity& v, const machine_tuning& tuning, double steal_share, double other_share) {
  if (!tuning.governor.empty() && tuning.governor != "performance")
    v.warnings.push_back(fmt::format(
        "the CPU frequency governor is '{}', not 'performance': the clock moves with the load", tuning.governor));
  if (tuning.boost.value_or(false))
    v.warnings.emplace_back("frequency boost is on: the clock depends on temperature and on the other cores' load");
  if (tuning.smt.value_or(false))
    v.warnings.emplace_back("SMT is on: a sibling hardware thread can share a core with a measured thread");
  if (steal_share > 0.02)
    v.warnings.push_back(
        fmt::format("the hypervisor took {} of the CPUs while measuring (steal time)", percent_text(steal_share)));
  if (other_share > 0.05)
    v.warnings.push_back(
        fmt::format("other processes took {} of the machine while measuring", percent_text(other_share)));
}

}  // namespace

schedule_analysis analyze_schedule(const schedule_trace& t, std::int64_t window_start_ns, std::int64_t window_end_ns) {
  schedule_analysis a;
  if (t.rate <= 0 || t.threads == 0 || t.samples.size() < 2) return a;
  a.traced = true;
  a.rate = t.rate;
  a.threads = t.threads;
  add_intervals(a, t);
  const window_samples w = samples_within(t, window_start_ns, window_end_ns);
  if (w.empty()) return a;
  find_behind(a, t, w);
  if (!a.behind) find_worst_span(a, t, w);
  return a;
}

steadiness check_steadiness(std::span<const double> cycle_us, std::span<const std::uint32_t> block_nums) {
  steadiness w;
  const std::size_t n = cycle_us.size();
  if (n < steadiness_min_blocks) {
    w.not_checked = fmt::format("{} measured blocks with a cycle time, fewer than {}", n, steadiness_min_blocks);
    return w;
  }
  w.checked = true;
  const change_point c = pettitt(cycle_us);
  w.p_value = c.p_value;
  w.change_block = block_nums[c.at];
  const double before = median_of(cycle_us.first(c.at));
  const double after = median_of(cycle_us.subspan(c.at));
  w.shift = before > 0 ? after / before - 1 : 0;
  // The least-squares line over the block index, its rise over the window against the mean.
  const double mean_x = static_cast<double>(n - 1) / 2;
  double mean_y = 0;
  for (const double y : cycle_us) mean_y += y;
  mean_y /= static_cast<double>(n);
  double sxy = 0;
  double sxx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - mean_x;
    sxy += dx * (cycle_us[i] - mean_y);
    sxx += dx * dx;
  }
  w.trend = mean_y > 0 ? sxy / sxx * static_cast<double>(n - 1) / mean_y : 0;
  const bool significant = w.p_value < steadiness_max_p;
  w.level_changed = significant && std::abs(w.shift) >= steadiness_min_shift;
  w.drifts = significant && std::abs(w.trend) >= steadiness_min_trend;
  return w;
}

validity judge_validity(const schedule_analysis& s, const steadiness& w, const machine_tuning& tuning,
                        double steal_share, double other_share) {
  validity v;
  if (s.behind) {
    v.valid = false;
    v.reasons.push_back(fmt::format(
        "the load generator fell behind its schedule of {:.0f} transactions/s: its own lag grew by {} of the "
        "elapsed time from {:.1f} s, for {:.1f} s of the window in all (more than {} for over {:.0f} s); the offered "
        "load was not the configured one (time the system under test held the producers back is not counted)",
        s.rate, percent_text(s.worst_fall_behind), s.worst_at_s, s.behind_s, percent_text(generator_behind_limit),
        generator_behind_span_s));
  }
  if (w.level_changed)
    v.warnings.push_back(fmt::format(
        "the measured cycle changes level by {:+.1f}% at block {} (Pettitt p = {:.2g}): the warm-up was too short, "
        "the series settles from block {}",
        w.shift * 100, w.change_block, w.p_value, w.change_block));
  if (w.drifts && !w.level_changed)
    v.warnings.push_back(fmt::format(
        "the measured cycle drifts by {:+.1f}% over the window (Pettitt p = {:.2g}): the state grows, or the warm-up "
        "was too short",
        w.trend * 100, w.p_value));
  machine_warnings(v, tuning, steal_share, other_share);
  return v;
}

}  // namespace apiary::harness
