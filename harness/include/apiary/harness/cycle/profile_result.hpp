// profile_result: what `apiary run --profile DIR` hands the summary and the report: the
// window's samples per thread, the top functions, what the profile cost and what failed.
// The files themselves are in DIR (docs/profile.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apiary/harness/cycle/profile_stacks.hpp"

namespace apiary::harness {

struct profile_result {
  std::string dir;  // as given; empty: no profile was asked for
  unsigned frequency_hz = 0;
  bool window_opened = false;  // perf was told to record (a run stopped before: no samples)
  std::uint64_t samples = 0;
  std::vector<std::pair<std::string, std::uint64_t>> threads;  // by samples, most first
  std::vector<function_samples> top;                           // by self samples, the first 20

  // What it cost. perf's CPU time covers its whole life: attaching, the window, and writing
  // perf.data at the end.
  std::int64_t perf_user_ns = 0;
  std::int64_t perf_system_ns = 0;
  std::uint32_t control_writes = 0;  // "enable" and "disable", each one write to perf's control pipe
  std::int64_t control_ns = 0;       // their time on the threads that made them (the writer's)
  std::int64_t postprocess_ns = 0;   // after the run: stopping perf, perf script, the files
  std::uint64_t data_bytes = 0;      // perf.data

  std::string error;  // what failed; empty: nothing
};

}  // namespace apiary::harness
