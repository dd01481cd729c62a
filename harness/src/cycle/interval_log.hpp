// interval_log: the live figures of a run, one record per --interval while it goes, as a
// JSON line flushed to --interval-log and as a Prometheus text exposition that replaces
// --prometheus-textfile atomically (for node_exporter's textfile collector).
//
// A record covers the blocks applied and the transactions settled in its interval: their
// count and rate, the mean and max of each block figure (block_figures.hpp) over its blocks,
// the latency percentiles of its transactions, the writer's time split over it; and, at its
// end, the writer queue's depth, the transactions in flight and the process's resident
// memory; the state's object counts and bytes at its last block (chain::census), the RC
// pools' levels and rejections so far, and the share of accounts under low_mana_percent of
// their RC, estimated from low_mana_samples accounts at the interval's first block (a walk
// over every account would lengthen a block's cycle). With --counters, each counted thread's
// counts over the interval (thread_counters.hpp), read by the main thread as it writes the
// record. The RC archives (rc_stats.hpp) the chain made in the interval's blocks go to the
// log before its record, each as its own line {"rc_archive": {...}} (rc_stats_json.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "apiary/harness/cycle/block_figures.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/cycle/thread_counters.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

// "Low on mana": resource credits under this percent of the account's maximum.
inline constexpr std::int64_t low_mana_percent = 10;
inline constexpr std::size_t low_mana_samples = 1024;

// What the interval sampler adds up between two records (writer thread).
struct interval_blocks {
  std::uint64_t blocks = 0;        // in the interval
  std::uint64_t transactions = 0;  // in its blocks
  block_figure_sums figures;
  void add(const queen::block_record& r) {
    ++blocks;
    transactions += r.transactions;
    figures.add(r);
  }
};

// One counted thread's counts over an interval.
struct named_counts {
  std::string_view thread;  // "writer", "producer-0", ..., "main": the counters' own names
  thread_counts counts;
};

struct interval_record {
  double t_s = 0;         // since the writer started
  double interval_s = 0;  // this interval's length
  std::uint64_t blocks_total = 0;
  std::uint64_t transactions_total = 0;  // included so far
  interval_blocks blocks;
  // Of the transactions settled in the interval: queue_wait, inclusion, end_to_end.
  latency_summary queue_wait;
  latency_summary inclusion;
  latency_summary end_to_end;
  queen::writer_breakdown writer;  // over the interval
  std::uint64_t queue_depth = 0;
  std::uint64_t in_flight = 0;
  std::int64_t rss_bytes = 0;
  core::state_census state;
  core::rc_status rc;
  double rc_low_share = -1;                   // < 0: not sampled yet
  std::vector<named_counts> counters;         // empty: --counters off or unavailable
  std::vector<core::rc_archive> rc_archives;  // lines of their own, before the record's
};

std::string interval_json(const interval_record& r);    // one line, with its newline
std::string prometheus_text(const interval_record& r);  // the whole exposition

// The two outputs; either may be off (an empty path).
class interval_outputs {
 public:
  interval_outputs(std::string log_path, std::string textfile_path);
  ~interval_outputs();
  interval_outputs(const interval_outputs&) = delete;
  interval_outputs& operator=(const interval_outputs&) = delete;

  bool enabled() const { return log_ != nullptr || !textfile_.empty(); }
  // Throws std::runtime_error naming the path that could not be written.
  void write(const interval_record& r);

 private:
  std::string log_path_;
  std::FILE* log_ = nullptr;
  std::string textfile_;
};

}  // namespace apiary::harness
