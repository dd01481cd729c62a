// analysis: the figures derived from a run, computed once so that the human summary and the
// JSON report always agree. Statistics cover the measured blocks only (warm-up excluded);
// cycle statistics cover the measured blocks that have a cycle time (the very first block
// of a run has none).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apiary/harness/context.hpp"
#include "apiary/harness/run.hpp"
#include "apiary/harness/run_config.hpp"
#include "apiary/harness/statistics.hpp"

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

struct analysis {
  std::uint32_t measured_blocks = 0;
  block_series cycle_us;
  block_series produced_us;
  block_series applied_us;
  block_series processing_us;
  block_series transactions;  // per block
  block_series size_bytes;

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

  // The writer's time in the window and its shares (0..1) of the writer's total.
  queen::writer_breakdown writer;
  double wait_work_share = 0;
  double wait_lock_share = 0;
  double tx_share = 0;
  double block_share = 0;
  double unknown_share = 0;

  // Signing: the colony's signing CPU time in the window, per measured block, and the bound
  // it puts on the cycle when spread over every core.
  double signing_ms_per_block = 0;
  double signing_bound_us = 0;
  double cycle_to_signing_bound = 0;  // avg cycle / bound; 0 without signing

  // The whole run's ledger: every accepted transaction is in a block, was dropped when a
  // block left it behind and it no longer applied, or is still pending.
  std::uint64_t in_blocks = 0;
  std::uint64_t dropped = 0;

  std::vector<target_check> targets;
};

analysis analyze(const run_config& c, const run_context& ctx, const run_result& r);

}  // namespace apiary::harness
