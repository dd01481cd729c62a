// The facts a report needs to be compared with another: the machine, the build, the source
// commit, when the run started, the state snapshot the chain started from (if any). And the process's resource usage
// (getrusage), read at any moment from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "apiary/harness/io/state_file.hpp"

namespace apiary::harness {

// The machine's settings that move results (read from /sys at the start): each unknown where
// the kernel does not expose it (a virtual machine often has no cpufreq).
struct machine_tuning {
  std::string governor;       // cpufreq scaling governor of CPU 0 ("performance", ...); "" unknown
  std::optional<bool> boost;  // frequency boost (turbo) enabled
  std::optional<bool> smt;    // simultaneous multithreading active
};
machine_tuning read_machine_tuning();

struct run_context {
  std::string cpu_model;                  // /proc/cpuinfo "model name"; "unknown" elsewhere
  unsigned cores = 1;                     // std::thread::hardware_concurrency(), at least 1
  std::string compiler;                   // e.g. "gcc 12.2.0"
  std::string build_type;                 // CMAKE_BUILD_TYPE
  std::string sanitizer;                  // APIARY_SANITIZE: "", "address" or "thread"
  std::uint32_t planted_push_rounds = 0;  // core::planted_push_rounds(): a planted slowdown, 0 none
  std::string commit;                     // short hash, "-dirty" with uncommitted changes, or "unknown"
  std::string version;                    // the project version
  std::string hostname;
  std::string command_line;  // argv joined by spaces
  std::chrono::system_clock::time_point start;
  std::string start_time;     // ISO 8601 UTC: 2026-11-21T15:00:51Z
  std::string start_compact;  // for file names: 20261121T150051Z
  machine_tuning tuning;
  state_source state;  // the command fills it in once the chain is loaded; path empty: the genesis
};

run_context collect_context(int argc, const char* const* argv);

// False when the numbers a run produces are not the ones to quote: not a release build, a
// sanitizer on, or a slowdown planted (APIARY_PLANT_PUSH_ROUNDS).
bool measuring_build(const run_context& c);
// What makes a build not a measuring one, for the warnings: "a Debug build", "a Release build
// with address", "a Release build planting 40 rounds of work in every push (...)".
std::string build_caveat(const run_context& c);

struct process_usage {
  std::int64_t user_ns = 0;
  std::int64_t system_ns = 0;
  std::int64_t peak_rss_bytes = 0;
  std::int64_t minor_faults = 0;  // page faults served from memory (a first touch, a copy-on-write)
  std::int64_t major_faults = 0;  // page faults that read from a file
  std::int64_t cpu_ns() const { return user_ns + system_ns; }
};

// getrusage(RUSAGE_SELF): every thread of the process. Async-signal-safe, about a microsecond.
process_usage read_usage();
// The process's resident memory now (/proc/self/statm); 0 when it cannot be read.
std::int64_t current_rss_bytes();

// The whole machine's CPU time from /proc/stat, in clock ticks summed over every core: how
// busy the machine was, so a run on a shared machine can say how much others took.
struct machine_usage {
  bool valid = false;            // false where /proc/stat is missing
  std::int64_t busy_ticks = 0;   // user, nice, system, irq, softirq, steal
  std::int64_t total_ticks = 0;  // busy plus idle and iowait
  std::int64_t steal_ticks = 0;  // taken by the hypervisor for other guests
};
machine_usage read_machine_usage();
long clock_ticks_per_second();

}  // namespace apiary::harness
