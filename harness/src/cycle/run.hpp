// run: one cycle test. Builds the chain (genesis), the writer queue, the colony and the
// writer, runs them until a stop condition, shuts them down in order and hands back
// everything the summary and the report are made of.
//
// Signals (signals.hpp: SIGINT, SIGTERM, SIGHUP; the caller holds the interrupt_guard, so
// that it covers the report's writing too) stop the run in order and keep its report;
// one during genesis or the producers' key warm-up stops those within milliseconds (the
// report then holds no block).
//
// Threads: the calling (main) thread waits, polls for signals, the duration and failures,
// draws the progress line, drains the settled stream (settled.hpp: latency, dumps, audit)
// and writes the interval records; the writer thread runs the block observers
// (observers.hpp), which only count, snapshot and notify (no I/O but --profile's two
// writes to perf's control pipe); the colony's producer
// threads produce.
//
// Shutdown, in this order: writer.request_stop() (the block in hand is finished), colony
// request_stop(), queue close(), join the writer, join the colony. A watchdog ends the
// process if that takes longer than a minute, so a run never hangs on exit.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "apiary/core/chain/chain.hpp"

#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/run_result.hpp"
#include "cycle/profile.hpp"

namespace apiary::harness {

std::string report_path(const run_config& c, const run_context& ctx);

// Runs the test. Never throws: a failure is a result with status failed and the error.
// `progress`: draw the live progress line on stderr.
// `log`: where the run's log lines go (run_log.hpp).
// `profile`: --profile's profiler, started (profile.hpp): the run opens and closes its
// window and names its threads; the caller finishes it. Null without --profile.
// `loaded`: the chain loaded from --state (io/state_file.hpp), which the run takes instead of
// building the genesis (genesis_ns stays 0); null: the genesis.
run_result run_cycle_test(const run_config& c, bool progress, spdlog::logger& log, profiler* profile = nullptr,
                          std::unique_ptr<core::chain> loaded = nullptr);

}  // namespace apiary::harness
