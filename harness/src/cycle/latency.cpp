#include "apiary/harness/cycle/latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace apiary::harness {

namespace bh = boost::histogram;

// ---- latency_histogram ----------------------------------------------------------------------

void latency_histogram::exact::add(std::int64_t ns) {
  if (count == 0 || ns < min_ns) min_ns = ns;
  if (count == 0 || ns > max_ns) max_ns = ns;
  ++count;
  sum_ns += ns;
}

latency_histogram::exact& latency_histogram::exact::operator+=(const exact& o) {
  if (o.count == 0) return *this;
  min_ns = count == 0 ? o.min_ns : std::min(min_ns, o.min_ns);
  max_ns = count == 0 ? o.max_ns : std::max(max_ns, o.max_ns);
  count += o.count;
  sum_ns += o.sum_ns;
  return *this;
}

latency_histogram::latency_histogram()
    : h_(bh::make_histogram_with(bh::dense_storage<std::uint64_t>(), kind_axis(0, static_cast<int>(latency_kinds)),
                                 time_axis(latency_bins, latency_lowest_ns, latency_highest_ns))) {}

void latency_histogram::add(std::size_t kind, std::int64_t ns) {
  const std::size_t k = std::min(kind, latency_kinds - 1);
  // A clock that stepped back by a few nanoseconds reads as no time, not as a negative one.
  ns = std::max<std::int64_t>(ns, 0);
  h_(static_cast<int>(k), static_cast<double>(ns));
  exact_[k].add(ns);
}

latency_histogram& latency_histogram::operator+=(const latency_histogram& other) {
  // Same axes by construction, so the cells line up one to one: add the counts directly
  // (cheaper than the histogram's own += with its index translation).
  auto& mine = bh::unsafe_access::storage(h_);
  const auto& theirs = bh::unsafe_access::storage(other.h_);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += theirs[i];
  for (std::size_t k = 0; k < latency_kinds; ++k) exact_[k] += other.exact_[k];
  return *this;
}

void latency_histogram::reset() {
  h_.reset();
  exact_ = {};
}

double latency_histogram::bin_value_ns(int i) {
  const double log_width = std::log(latency_highest_ns / latency_lowest_ns) / latency_bins;
  return latency_lowest_ns * std::exp((i + 0.5) * log_width);
}

template <class CountAt>
latency_summary latency_histogram::summarize(const exact& e, CountAt count_at) const {
  latency_summary s;
  s.count = e.count;
  if (e.count == 0) return s;
  s.mean_ns = static_cast<double>(e.sum_ns) / static_cast<double>(e.count);
  s.min_ns = static_cast<double>(e.min_ns);
  s.max_ns = static_cast<double>(e.max_ns);
  // Nearest rank: the first bin whose cumulative count reaches ceil(q * count).
  std::uint64_t cumulative = 0;
  std::size_t q = 0;
  for (int i = -1; i <= static_cast<int>(latency_bins) && q < latency_quantiles.size(); ++i) {
    cumulative += count_at(i);
    while (q < latency_quantiles.size()) {
      const auto rank = std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(std::ceil(latency_quantiles[q] * static_cast<double>(e.count))));
      if (cumulative < rank) break;
      const double v = i < 0 ? s.min_ns : i >= static_cast<int>(latency_bins) ? s.max_ns : bin_value_ns(i);
      s.quantile_ns[q++] = std::clamp(v, s.min_ns, s.max_ns);
    }
  }
  return s;
}

std::uint64_t latency_histogram::count() const {
  std::uint64_t n = 0;
  for (const exact& e : exact_) n += e.count;
  return n;
}

latency_summary latency_histogram::summary() const {
  exact all;
  for (const exact& e : exact_) all += e;
  return summarize(all, [this](int i) {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < latency_kinds; ++k) n += h_.at(static_cast<int>(k), i);
    return n;
  });
}

latency_summary latency_histogram::summary(std::size_t kind) const {
  const int k = static_cast<int>(std::min(kind, latency_kinds - 1));
  return summarize(exact_[static_cast<std::size_t>(k)], [this, k](int i) { return h_.at(k, i); });
}

std::vector<std::pair<int, std::uint64_t>> latency_histogram::bins() const {
  std::vector<std::pair<int, std::uint64_t>> out;
  for (int i = -1; i <= static_cast<int>(latency_bins); ++i) {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < latency_kinds; ++k) n += h_.at(static_cast<int>(k), i);
    if (n != 0) out.emplace_back(i, n);
  }
  return out;
}

// ---- latency_recorder -----------------------------------------------------------------------

void latency_recorder::add(const queen::tx_timing& t) {
  const auto stage = [this](latency_stage s) -> latency_histogram& { return stages_[static_cast<std::size_t>(s)]; };
  if (t.dropped) return;  // neither included nor rejected at its push: no stage of its own
  if (!t.included()) {
    stage(latency_stage::rejection).add(t.kind, t.settled_ns - t.submitted_ns);
    return;
  }
  stage(latency_stage::queue_wait).add(t.kind, t.accepted_ns - t.submitted_ns);
  stage(latency_stage::inclusion).add(t.kind, t.settled_ns - t.submitted_ns);
  stage(latency_stage::end_to_end).add(t.kind, t.settled_ns - t.intended_ns);
}

latency_recorder& latency_recorder::operator+=(const latency_recorder& other) {
  for (std::size_t s = 0; s < latency_stage_count; ++s) stages_[s] += other.stages_[s];
  return *this;
}

void latency_recorder::reset() {
  for (latency_histogram& h : stages_) h.reset();
}

bool latency_recorder::empty() const {
  return std::all_of(stages_.begin(), stages_.end(), [](const latency_histogram& h) { return h.count() == 0; });
}

// ---- latency_tracker ------------------------------------------------------------------------

void latency_tracker::read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block>) {
  interval_.add(transactions);
  for (const queen::tx_timing& t : transactions)
    if (t.included()) ++included_;
}

void latency_tracker::roll() {
  total_ += interval_;
  interval_.reset();
}

// ---- .hgrm ----------------------------------------------------------------------------------

std::string hgrm_path(const std::string& dir, latency_stage s) {
  return dir + (dir.ends_with('/') ? "" : "/") + std::string(to_string(s)) + ".hgrm";
}

std::string hgrm_text(const latency_histogram& h) {
  const latency_summary s = h.summary();
  std::string out =
      fmt::format("{:>12} {:>14} {:>10} {:>14}\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
  const double total = static_cast<double>(s.count);
  std::uint64_t cumulative = 0;
  double square_sum = 0;
  for (const auto& [i, n] : h.bins()) {
    cumulative += n;
    // The last line is the maximum, as HdrHistogram's is.
    const double v = i < 0 ? s.min_ns
                     : i >= static_cast<int>(latency_bins) || cumulative == s.count
                         ? s.max_ns
                         : std::clamp(latency_histogram::bin_value_ns(i), s.min_ns, s.max_ns);
    square_sum += static_cast<double>(n) * (v - s.mean_ns) * (v - s.mean_ns);
    const double p = static_cast<double>(cumulative) / total;
    if (cumulative == s.count)
      out += fmt::format("{:12.3f} {:1.12f} {:10d}\n", v / 1e3, p, cumulative);
    else
      out += fmt::format("{:12.3f} {:1.12f} {:10d} {:14.2f}\n", v / 1e3, p, cumulative, 1.0 / (1.0 - p));
  }
  const double stddev = s.count == 0 ? 0.0 : std::sqrt(square_sum / total);
  out += fmt::format("#[Mean    = {:12.3f}, StdDeviation   = {:12.3f}]\n", s.mean_ns / 1e3, stddev / 1e3);
  out += fmt::format("#[Max     = {:12.3f}, Total count    = {:12d}]\n", s.max_ns / 1e3, s.count);
  out += fmt::format("#[Buckets = {:12d}, SubBuckets     = {:12d}]\n", latency_bins, 1);
  return out;
}

}  // namespace apiary::harness
