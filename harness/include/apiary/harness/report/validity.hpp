// validity: whether a run's figures can be used as a result, and what to be careful about.
//
// A run is invalid when the load generator itself could not keep to its schedule: in a tps
// run (--rate N), the producers' own lag (schedule.hpp: the lag less the time the system
// under test held them back) grew by more than generator_behind_limit of the time over a
// span longer than generator_behind_span_s within the measured window. The offered load was
// then not the configured one, so the run measured the generator. Being held back by the
// in-flight brake is a result (the system under test pushing back), not a fault.
//
// Warnings leave a run valid but name what moves its figures: a measured window whose cycle
// series changes level (Pettitt's test, statistics.hpp) or drifts (the warm-up was too short,
// or the state grows); the machine's frequency governor, boost and SMT; the hypervisor's
// steal time and other processes' share of the machine over the window.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/schedule.hpp"

namespace apiary::harness {

inline constexpr double generator_behind_limit = 0.05;
inline constexpr double generator_behind_span_s = 1.0;

// One second of a tps run's schedule (the last interval may be shorter).
struct schedule_interval {
  double t_s = 0;  // its end, since the writer's start
  double interval_s = 0;
  double intended = 0;  // transactions the schedule asked for in it
  std::uint64_t submitted = 0;
  double lag_ms = 0;            // behind the schedule at its end, since the writer's start
  double held_ms = 0;           // of it, per thread, held back by the system under test
  double generator_lag_ms = 0;  // lag_ms - held_ms: the generator's own
  double generating_ms = 0;     // per thread, in the interval (0 without measure_cpu)
  double signing_ms = 0;
};

struct schedule_analysis {
  bool traced = false;  // a tps run with samples
  double rate = 0;
  std::uint32_t threads = 0;
  std::vector<schedule_interval> intervals;
  // The fastest the generator's own lag grew over a span of more than a second in the
  // window, as a share of the span (0.05: it fell behind by 5% of the time), and where.
  double worst_fall_behind = 0;
  double worst_at_s = 0;
  double behind_s = 0;  // the time in spans where it grew faster than the limit
  bool behind = false;
};

// window_start_ns, window_end_ns: the measured window on the writer's clock.
schedule_analysis analyze_schedule(const schedule_trace& t, std::int64_t window_start_ns, std::int64_t window_end_ns);

// The measured window's cycle series: a change of level or a drift.
inline constexpr std::size_t steadiness_min_blocks = 20;
inline constexpr double steadiness_max_p = 0.001;
inline constexpr double steadiness_min_shift = 0.05;  // of the median before the change
inline constexpr double steadiness_min_trend = 0.10;  // of the mean, over the window

struct steadiness {
  bool checked = false;
  std::string not_checked;         // why not
  std::uint32_t change_block = 0;  // the first block after the change Pettitt's test places
  double p_value = 1;
  double shift = 0;  // median after / median before - 1
  double trend = 0;  // the least-squares line's rise over the window / the series' mean
  bool level_changed = false;
  bool drifts = false;
};

steadiness check_steadiness(std::span<const double> cycle_us, std::span<const std::uint32_t> block_nums);

struct validity {
  bool valid = true;
  std::vector<std::string> reasons;   // why not valid
  std::vector<std::string> warnings;  // what to be careful about
};

// steal_share, other_share: of the machine over the window; negative when unknown.
validity judge_validity(const schedule_analysis& s, const steadiness& w, const machine_tuning& tuning,
                        double steal_share, double other_share);

}  // namespace apiary::harness
