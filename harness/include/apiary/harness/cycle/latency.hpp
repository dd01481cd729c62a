// latency: per-transaction latency histograms (Boost.Histogram) from the writer's settled
// transactions (queen/tx_timing.hpp).
//
// Stages, each over every transaction and per operation kind:
//   queue_wait  accepted - submitted     the writer queue and the push
//   inclusion   included - submitted     until the block holding it was applied
//   end_to_end  included - intended      from when the rate schedule meant to send it, so a
//                                        producer that fell behind is counted, not hidden
//   rejection   rejected - submitted     rejected transactions only, their time to rejection
//
// Bins: log-spaced over [100 ns, 100 s), 1,047 of them (each 1.02 times as wide as the one
// before), plus an underflow and an overflow bin. A percentile is the geometric centre of the
// bin that holds its rank, so it is within 1% of the true value; it is clamped into the
// observed [min, max] (the underflow bin reads as the minimum, the overflow as the maximum).
// Counts, mean, min and max are exact. The same rule is in scripts/apiary_tools/latency.py,
// which merges the report's bins across runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/histogram.hpp>

#include "apiary/colony/mix.hpp"
#include "apiary/core/base/named_enum.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/queen/tx_timing.hpp"

namespace apiary::harness {

enum class latency_stage : std::uint8_t { queue_wait, inclusion, end_to_end, rejection };
inline constexpr std::size_t latency_stage_count = 4;
inline constexpr std::array<core::enum_name<latency_stage>, latency_stage_count> latency_stage_names{{
    {"queue_wait", latency_stage::queue_wait},
    {"inclusion", latency_stage::inclusion},
    {"end_to_end", latency_stage::end_to_end},
    {"rejection", latency_stage::rejection},
}};
constexpr std::string_view to_string(latency_stage s) { return core::name_of(latency_stage_names, s); }

inline constexpr double latency_lowest_ns = 100.0;
inline constexpr double latency_highest_ns = 1e11;
inline constexpr unsigned latency_bins = 1047;
// The operation kinds (colony::op_kind by index); a tag beyond them counts as the last.
inline constexpr std::size_t latency_kinds = colony::op_kind_count;

// The percentiles every summary gives, in this order.
inline constexpr std::array<double, 5> latency_quantiles{0.50, 0.90, 0.99, 0.999, 0.9999};
inline constexpr std::array<std::string_view, 5> latency_quantile_names{"p50", "p90", "p99", "p999", "p9999"};

struct latency_summary {
  std::uint64_t count = 0;
  double mean_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  std::array<double, latency_quantiles.size()> quantile_ns{};  // latency_quantiles
};

// One stage: a kind x time histogram with exact counts, sums and extremes beside it.
class latency_histogram {
 public:
  using kind_axis =
      boost::histogram::axis::integer<int, boost::histogram::use_default, boost::histogram::axis::option::none_t>;
  using time_axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using histogram =
      boost::histogram::histogram<std::tuple<kind_axis, time_axis>, boost::histogram::dense_storage<std::uint64_t>>;

  latency_histogram();

  void add(std::size_t kind, std::int64_t ns);
  latency_histogram& operator+=(const latency_histogram& other);
  void reset();

  // Values added since the last reset, over every kind.
  std::uint64_t count() const;
  // Over every kind, or one kind.
  latency_summary summary() const;
  latency_summary summary(std::size_t kind) const;
  // Every kind's count in each time bin, from the underflow (-1) to the overflow
  // (latency_bins); only bins with a count.
  std::vector<std::pair<int, std::uint64_t>> bins() const;
  // The value a bin reads as (clamped later): the geometric centre of bin i, in ns.
  static double bin_value_ns(int i);

 private:
  struct exact {
    std::uint64_t count = 0;
    std::int64_t sum_ns = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
    void add(std::int64_t ns);
    exact& operator+=(const exact& o);
  };
  template <class CountAt>
  latency_summary summarize(const exact& e, CountAt count_at) const;

  histogram h_;
  std::array<exact, latency_kinds> exact_{};
};

// Every stage, filled from the writer's records (a dropped transaction's record is not added).
class latency_recorder {
 public:
  void add(const queen::tx_timing& t);
  void add(std::span<const queen::tx_timing> records) {
    for (const queen::tx_timing& t : records) add(t);
  }
  latency_recorder& operator+=(const latency_recorder& other);
  void reset();
  // No record added since the last reset.
  bool empty() const;

  const latency_histogram& stage(latency_stage s) const { return stages_[static_cast<std::size_t>(s)]; }

 private:
  std::array<latency_histogram, latency_stage_count> stages_;
};

// The latency histograms of the run (main thread, a reader of the settled stream): fills the
// histograms of the current interval; roll() folds the interval into the run's total and
// starts the next.
class latency_tracker final : public settled_reader {
 public:
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override;

  // The current interval (since the last roll), then its end: added to the total, reset.
  const latency_recorder& interval() const { return interval_; }
  void roll();
  // Every transaction so far (drain the stream and roll first for all of them).
  const latency_recorder& total() const { return total_; }
  std::uint64_t included() const { return included_; }

 private:
  latency_recorder interval_;
  latency_recorder total_;
  std::uint64_t included_ = 0;
};

// Where --hgrm-dir puts a stage's histogram: <dir>/<stage>.hgrm.
std::string hgrm_path(const std::string& dir, latency_stage s);

// HdrHistogram's percentile-distribution text (.hgrm), values in microseconds: one line per
// bin with a count, then the mean, standard deviation, maximum and total count.
std::string hgrm_text(const latency_histogram& h);

}  // namespace apiary::harness
