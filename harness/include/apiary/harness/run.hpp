// run: one cycle test. Builds the chain (genesis), the writer queue, the colony and the
// writer, runs them until a stop condition, shuts them down in order and hands back
// everything the summary and the report are made of.
//
// Threads: the calling (main) thread waits, polls for signals, the duration and failures,
// and draws the progress line; the writer thread runs the block callback, which only
// appends, snapshots and notifies (no I/O); the colony's producer threads produce.
//
// Shutdown, in this order: writer.request_stop() (the block in hand is finished), colony
// request_stop(), queue close(), join the writer, join the colony. A watchdog ends the
// process if that takes longer than a minute, so a run never hangs on exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apiary/colony/colony_stats.hpp"
#include "apiary/harness/audit.hpp"
#include "apiary/harness/context.hpp"
#include "apiary/harness/run_config.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

enum class run_status : std::uint8_t { completed, interrupted, failed };
std::string_view to_string(run_status s);

// A snapshot of the counters at the edge of the measured window.
struct window_edge {
  std::int64_t writer_ns = 0;  // the writer's clock (block_record::completed_ns)
  process_usage usage;
  queen::writer_breakdown breakdown;
  colony::colony_stats colony;
};

// The machine and the process at one moment (main thread, within ~50 ms of a window edge).
struct machine_sample {
  machine_usage machine;
  process_usage process;
};

struct run_result {
  run_status status = run_status::completed;
  // Why it ended: "blocks", "transactions", "duration", "SIGINT", "SIGTERM", "stall",
  // "error".
  std::string stop_reason;
  int signal = 0;
  std::string error;  // what failed

  std::int64_t genesis_ns = 0;      // building the chain
  std::int64_t colony_start_ns = 0;  // colony threads started (keys warmed)
  std::int64_t run_ns = 0;           // writer start to everything joined
  std::int64_t shutdown_ns = 0;      // stop requested to everything joined

  // Every block, warm-up first; the first `warmup_blocks` of them are warm-up.
  std::vector<queen::block_record> blocks;
  std::uint32_t warmup_blocks = 0;
  std::uint32_t measured_blocks = 0;
  // The measured window: from the completion of the last warm-up block (the writer's start
  // without warm-up) to the completion of the last measured block.
  window_edge window_start;
  window_edge window_end;

  // The machine around the measured window, to tell what other processes took.
  machine_sample machine_start;
  machine_sample machine_end;

  queen::writer_breakdown writer_total;  // the whole run
  colony::colony_stats colony_total;     // the whole run, after join
  std::uint32_t colony_block_budget = 0;
  std::uint32_t block_transactions = 0;  // the writer's transaction-count target (0: size only)
  std::uint64_t pending_at_end = 0;      // accepted, in no block when the run ended
  std::uint64_t queue_high_water = 0;
  std::uint64_t queue_full_waits = 0;
  process_usage usage_end;               // peak RSS

  std::uint64_t dumped_transactions = 0;
  std::uint64_t dumped_blocks = 0;
  audit_result audit;  // --audit; audit.ran is false without it
};

// Where the report of this run goes: the configured path, or results/<start>-<name>.json.
std::string report_path(const run_config& c, const run_context& ctx);

// Runs the test. Never throws: a failure is a result with status failed and the error.
// `progress`: draw the live progress line on stderr.
run_result run_cycle_test(const run_config& c, const run_context& ctx, bool progress);

}  // namespace apiary::harness
