// analysis: the figures derived from a run, computed once so that the human summary and the
// JSON report always agree. Statistics cover the measured blocks only (warm-up excluded);
// cycle statistics cover the measured blocks that have a cycle time (the very first block
// of a run has none).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/block_figures.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/run_result.hpp"
#include "apiary/harness/report/statistics.hpp"
#include "apiary/harness/report/validity.hpp"

namespace apiary::harness {

// A series over blocks, with the block numbers of its first minimum and maximum.
struct block_series {
  series_stats stats;
  std::uint32_t min_block = 0;
  std::uint32_t max_block = 0;
};

struct target_check {
  std::string name;         // "transactions_per_block", ...
  std::string description;  // what is checked, in words
  double target = 0;
  double value = 0;
  bool met = false;
};

// The process's CPU in the measured window, per measured block (ms), in three parts. The
// core's part is the writer's wall time in those two phases of its loop, so a writer that
// was descheduled inside them counts that time as the core's; the harness's part is
// whatever is left: the producers' generation (with signing off also packing and hashing),
// submission, completions, queue handling, the block observers, the latency records,
// logging. It can fall below zero only when the writer's wall time overstates its CPU.
struct cpu_split {
  bool known = false;
  double process_ms = 0;
  double signing_ms = 0;
  double core_ms = 0;
  double harness_ms = 0;     // process - signing - core
  double harness_share = 0;  // harness_ms / process_ms
};

// The parts from the window's totals (ns): process CPU, the colony's signing CPU, the
// writer's transaction and block time, over `blocks` measured blocks.
cpu_split split_cpu(std::int64_t process_ns, std::int64_t signing_ns, std::int64_t core_ns, std::uint32_t blocks);

// One counted thread's window counts (run_result::counters) per measured block and per
// transaction included in those blocks, and its instructions per cycle; nullopt where the
// count is missing or there is nothing to divide by.
struct thread_counter_rates {
  std::array<std::optional<double>, counter_event_count> per_block{};
  std::array<std::optional<double>, counter_event_count> per_transaction{};
  std::optional<double> ipc;
};

thread_counter_rates counter_rates(const thread_counts& window, std::uint32_t blocks, std::uint64_t transactions);

struct analysis {
  std::uint32_t measured_blocks = 0;
  // Each block figure (block_figures.hpp) over the measured blocks that have it.
  std::array<block_series, block_figure_count> figures;
  const block_series& figure(std::size_t i) const { return figures[i]; }
  const block_series& cycle_us() const { return figures[block_figure_index("cycle_us")]; }

  // The measured window.
  double window_s = 0;
  std::uint64_t measured_transactions = 0;
  std::uint64_t measured_bytes = 0;
  double tx_per_s = 0;
  double blocks_per_s = 0;
  double cpu_s = 0;            // process CPU time in the window
  double cpu_utilization = 0;  // cpu_s / (window_s * cores)
  // The machine over (about) the window: the share of all cores busy, and the part of it
  // other processes took. Negative shares from sampling jitter are clamped to 0.
  bool machine_known = false;
  double machine_busy_share = 0;
  double other_processes_share = 0;
  double steal_share = 0;  // of the machine, taken by the hypervisor (known with machine_known)

  // Whether the figures can be used (validity.hpp): a tps run's schedule, the measured
  // cycle's steadiness, and the verdict with its reasons and warnings.
  schedule_analysis schedule;
  steadiness steady;
  validity verdict;

  // The writer's time in the window and its shares (0..1) of the writer's total.
  queen::writer_breakdown writer;
  double wait_work_share = 0;
  double wait_lock_share = 0;
  double tx_share = 0;
  double block_share = 0;
  double observe_share = 0;  // the harness after each block: the timing outbox, the observers
  double unknown_share = 0;

  // Signing: the colony's signing CPU time in the window, per measured block, and the bound
  // it puts on the cycle when spread over every core (information, not a target).
  double signing_ms_per_block = 0;
  double signing_bound_us = 0;
  double cycle_to_signing_bound = 0;  // avg cycle / bound; 0 without signing

  // The process-CPU bound: all the CPU the process used in the window, per measured block,
  // spread over every core: the cycle the machine reaches doing the same work with every
  // core busy all the time.
  double cpu_ms_per_block = 0;
  double cpu_bound_us = 0;
  double cycle_to_cpu_bound = 0;  // avg cycle / bound; 0 without a cycle or CPU time

  // Where the process's CPU went, per measured block: the colony's signing (0 with signing
  // off), the core (the writer's time pushing transactions and producing and applying
  // blocks) and the harness, the rest. Known with signing off, or on with measure_cpu.
  cpu_split split;

  // The whole run's ledger: every accepted transaction is in a block, was dropped when a
  // block left it behind and it no longer applied, or is still pending.
  std::uint64_t in_blocks = 0;
  std::uint64_t dropped = 0;

  std::vector<target_check> targets;

  // Each counted thread's rates, in the order of run_result::counters.threads.
  std::vector<thread_counter_rates> counters;
};

analysis analyze(const run_config& c, const run_context& ctx, const run_result& r);

}  // namespace apiary::harness
