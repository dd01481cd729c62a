// schedule: how a rate-limited colony (--rate N transactions per second) kept to its
// schedule. The main thread samples the colony's counters every schedule_sample_ns while the
// run goes; the report's analysis (report/validity.hpp) turns the samples into the
// generator's lag per second and decides whether the generator itself fell behind.
//
// The schedule is the colony's tokens: rate transactions per second from the writer's start
// (token_bucket.hpp). What the producers submitted short of it is the lag, in seconds of the
// schedule. Part of it is the system under test pushing back: time a producer was held by the
// in-flight brake or (sync submission) waiting for an outcome, which a result measures and a
// run is not faulted for. The rest is the generator's own: building and signing took longer
// than the schedule allowed, or its threads got no CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "apiary/colony/colony_stats.hpp"

namespace apiary::harness {

inline constexpr std::int64_t schedule_sample_ns = 250'000'000;

// The colony's counters at one moment, summed over its producer threads.
struct schedule_sample {
  std::int64_t t_ns = 0;  // since the writer's start (the clock of block_record::completed_ns)
  std::uint64_t submitted = 0;
  std::int64_t held_ns = 0;        // in the in-flight brake and waiting for outcomes, ongoing waits included
  std::int64_t generating_ns = 0;  // building transactions (CPU, with measure_cpu)
  std::int64_t signing_ns = 0;     // packing, hashing and signing them (CPU, with measure_cpu)
};

struct schedule_trace {
  double rate = 0;  // transactions per second for the colony; 0: not a tps run, nothing sampled
  std::uint32_t threads = 0;
  std::vector<schedule_sample> samples;  // the first at the writer's start
};

// The sample of `s` at t_ns (since the writer's start).
schedule_sample schedule_sample_of(std::int64_t t_ns, const colony::colony_stats& s);

// Appends a sample when the trace is on and schedule_sample_ns passed since its last one (or
// it has none). Main thread.
void sample_schedule(schedule_trace& t, std::int64_t t_ns, const colony::colony_stats& s);

}  // namespace apiary::harness
