// colony_counters: the counters each producer thread keeps, each defined once here. An entry
// makes, from its one line:
//   - the producer's counter (colony.cpp's worker: one writer, read at any time),
//   - the colony_stats member of its name, filled per thread by colony::thread_stats() and
//     merged over the threads by colony_stats::operator+= (summed, or the highest),
//   - its key in the report, in the run's totals (colony.<key>) and/or in each thread's
//     (colony.per_thread[].<key>); a time in nanoseconds is reported in milliseconds, its key
//     ending in _ms instead of _ns,
//   - its description there, which harness/report.schema.json must give word for word (a
//     harness test checks the schema against this table both ways),
//   - and, when it has one, Hive's line for it among each thread's statistics at the end of
//     the log, printed when the count is not 0.
//
// A new counter is one more entry in the table below and its increment in the producer,
//   w.count(colony_counter::NAME).add(n);
// then the schema's key for it, which the harness test names when it is missing.
//
// Counts that are not a producer's own tally stay hand-written in colony_stats: the
// outcomes (counted by the completions), the kinds, faults and brakes (arrays by their own
// enumerations), and what is derived from them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// X(name, merge, unit, report, hive_line, description)
//   merge:     sum | max             over the threads
//   unit:      count | ns
//   report:    total | thread | both where the report prints it
//   hive_line: Hive's per-thread line for it ("{}" the count), or "" for none
#define APIARY_COLONY_COUNTERS(X)                                                                                      \
  X(generated, sum, count, both, "",                                                                                   \
    "Transactions built (and signed, with signing on); faulty companions not included.")                               \
  X(submitted, sum, count, both, "", "Transactions the sink took, normal and faulty.")                                 \
  X(reply_substitutions, sum, count, thread, "", "Replies made articles: no comment to reply to.")                     \
  X(vote_substitutions, sum, count, thread, "", "Votes made articles: no comment to vote on.")                         \
  X(thread_cpu_ns, sum, ns, total, "", "CPU time of the producer threads: everything they did, updated once a block.") \
  X(generation_cpu_ns, sum, ns, total, "",                                                                             \
    "Of it, building unsigned transactions, estimated from the timed ones (0 without measure_cpu).")                   \
  X(signing_cpu_ns, sum, ns, total, "",                                                                                \
    "Of it, packing, hashing and signing the transactions, key lookups included, first-use key derivations "           \
    "excluded, estimated from the timed ones (0 without measure_cpu).")                                                \
  X(cpu_timed, sum, count, total, "",                                                                                  \
    "Transactions whose generation and signing were timed: a thread's first, then one in every cpu_sample_every "      \
    "(colony_config.hpp); the two CPU times above count each for itself and the untimed ones after it (0 without "     \
    "measure_cpu).")                                                                                                   \
  X(key_cpu_ns, sum, ns, total, "", "Of it, deriving keys on first use or in the warm-up.")                            \
  X(in_flight_peak, max, count, both, "",                                                                              \
    "Most transactions one producer had in flight at once (over the threads, the highest).")                           \
  X(in_flight_late_resumes, sum, count, thread,                                                                        \
    "{} times production loop was unlocked only after all transactions were cleared from queue",                       \
    "Waits at the in-flight limit that ended only once nothing was in flight: the writer had worked off the "          \
    "thread's whole backlog (Hive's late unlocks).")

namespace apiary::colony {

struct colony_stats;

// The counters by name, in the table's order.
enum class colony_counter : std::size_t {
#define APIARY_COLONY_COUNTER_ID(name, merge, unit, report, hive_line, description) name,
  APIARY_COLONY_COUNTERS(APIARY_COLONY_COUNTER_ID)
#undef APIARY_COLONY_COUNTER_ID
};

struct colony_counter_info {
  enum class merge : std::uint8_t { sum, max };
  enum class unit : std::uint8_t { count, ns };
  enum class report : std::uint8_t { total, thread, both };

  std::string_view name;  // the colony_stats member
  std::uint64_t colony_stats::*member;
  merge how;
  unit in;
  report where;
  std::string_view hive_line;
  std::string_view description;

  bool in_total() const { return where != report::thread; }
  bool per_thread() const { return where != report::total; }
  // Its key in the report: the name, or for a time in nanoseconds the name ending in _ms.
  std::string report_key() const {
    if (in == unit::count) return std::string(name);
    return std::string(name.substr(0, name.size() - 3)) + "_ms";
  }
};

}  // namespace apiary::colony
