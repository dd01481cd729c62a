// run_result: the hand-over from a cycle test to its summary and report: how the run ended,
// the blocks the writer recorded, the measured window's edges, and what the threads counted.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "apiary/colony/colony_stats.hpp"
#include "apiary/core/base/named_enum.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/audit.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/cpu_pinning.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/cycle/profile_result.hpp"
#include "apiary/harness/cycle/schedule.hpp"
#include "apiary/harness/cycle/thread_counters.hpp"
#include "apiary/queen/block_observer.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

enum class run_status : std::uint8_t { completed, interrupted, failed };
std::string_view to_string(run_status s);

// Why a run ended: a limit, a signal, or a failure.
enum class stop_reason : std::uint8_t {
  none,
  blocks,
  transactions,
  duration,
  sigint,
  sigterm,
  sighup,  // the terminal or ssh session closed: handled as SIGTERM
  other_signal,
  stall,
  error
};
inline constexpr std::array<core::enum_name<stop_reason>, 10> stop_reason_names{{
    {"none", stop_reason::none},
    {"blocks", stop_reason::blocks},
    {"transactions", stop_reason::transactions},
    {"duration", stop_reason::duration},
    {"SIGINT", stop_reason::sigint},
    {"SIGTERM", stop_reason::sigterm},
    {"SIGHUP", stop_reason::sighup},
    {"signal", stop_reason::other_signal},
    {"stall", stop_reason::stall},
    {"error", stop_reason::error},
}};
constexpr std::string_view to_string(stop_reason r) { return core::name_of(stop_reason_names, r); }

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

// The per-thread counters over the measured window (thread_counters.hpp): the writer's from
// the last warm-up block to the last measured block; the other threads' from the last warm-up
// block to the last measured block when a block or transaction limit ended the run, else to
// when the main thread saw the stop (within 50 ms of it). The analysis derives the rates.
struct counted_thread {
  std::string name;  // "writer", "producer-0", ..., "main"
  int tid = 0;
  thread_counts window;
};

struct counter_results {
  bool enabled = false;     // --counters
  std::string unavailable;  // why nothing was counted; "" when something was
  std::array<event_availability, counter_event_count> events{};
  std::vector<counted_thread> threads;  // empty when unavailable or off
};

struct run_result {
  run_status status = run_status::completed;
  stop_reason stopped_by = stop_reason::none;
  int signal = 0;
  std::string error;  // what failed

  std::int64_t genesis_ns = 0;       // building the chain
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
  // What the harness cost the writer after each block, over the whole run: the timing
  // outbox and each block observer (their names are string literals).
  std::vector<queen::observer_cost> observer_costs;
  colony::colony_stats colony_total;                 // the whole run, after join
  std::vector<colony::colony_stats> colony_threads;  // the same per producer thread
  std::uint32_t colony_block_budget = 0;
  std::uint32_t block_transactions = 0;  // the writer's transaction-count target (0: size only)
  std::uint64_t pending_at_end = 0;      // accepted, in no block when the run ended
  std::uint64_t queue_high_water = 0;
  std::uint64_t queue_full_waits = 0;
  process_usage usage_end;  // peak RSS
  // Every transaction settled in the run (warm-up included): latency.hpp.
  latency_recorder latency;

  std::string log_file;                // empty: none
  std::uint64_t log_dropped = 0;       // log messages dropped because the log's queue was full
  std::uint64_t log_write_errors = 0;  // log messages the log file could not take (a full disk)

  std::uint64_t dumped_transactions = 0;
  std::uint64_t dumped_blocks = 0;
  std::uint64_t block_log_blocks = 0;         // --block-log
  audit_result audit;                         // --audit; audit.ran is false without it
  core::rc_status rc;                         // the chain's resource credits at the end
  double rc_low_share = 0;                    // accounts under 10% of their RC at the end
  std::vector<core::rc_archive> rc_archives;  // Hive's RC statistics, every --rc-stats-blocks blocks
  core::state_census state;
  counter_results counters;
  cpu_pinning pinning;      // --pin; pinning.requested is false without it
  schedule_trace schedule;  // tps runs: the colony against its schedule
  profile_result profile;   // --profile; profile.dir is empty without it
};

// Where the report of this run goes: the configured path, or results/<start>-<name>.json.
}  // namespace apiary::harness
