// colony_stats: what a colony's producer threads did, per thread or merged (leveldb
// db_bench's way: each thread counts its own, the report adds them up). Plain values; the
// producers' own tallies among them are the table of colony_counters.hpp.
//
// Per thread, it holds what Hive's colony prints for each thread at the end: transactions
// built (generated) and per kind their count, share, average extra and packed size; replies
// and votes that became articles; failed transactions (outcomes, by reason); how often the
// in-flight limit locked the thread out (in_flight_brake.waits) and how often only an empty
// backlog released it (in_flight_late_resumes). Beyond Hive's: how long each brake held
// the thread, the in-flight peak, and CPU time.
//
// Invariants once the threads are joined and the sink has completed every transaction:
//   sum of kinds[k].count == generated;  sum of faults == injected;
//   article_substitutions == reply_substitutions + vote_substitutions;
//   in_flight_peak <= the highest in-flight limit in force (1 in sync mode), plus 1 when
//   faults are on (a companion follows its transaction past the brake);
//   submitted <= generated + injected (a closed sink refuses one);
//   accepted() + rejected() + shutdown() == completed() == submitted;  in_flight == 0.
// A snapshot taken while threads run reads the counters one by one, so these hold only
// approximately then.
#pragma once

#include <array>
#include <cstdint>

#include "apiary/colony/colony_counters.hpp"
#include "apiary/colony/faults.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/reject.hpp"

namespace apiary::colony {

// Transactions generated of one kind (an article that replaced a reply or vote with no
// target counts as an article).
struct kind_totals {
  std::uint64_t count = 0;
  std::uint64_t extra_bytes = 0;   // sum of the drawn extra payload sizes
  std::uint64_t packed_bytes = 0;  // sum of the packed signed sizes
};

// How often threads were held by one brake, and for how long (wall time).
struct brake_totals {
  std::uint64_t waits = 0;
  std::uint64_t wait_ns = 0;
};

struct colony_stats {
  std::uint32_t threads = 0;
  std::uint64_t accounts = 0;                            // genesis accounts the threads act for
  std::uint64_t injected = 0;                            // faulty companions submitted (faults.hpp), not in `generated`
  std::array<std::uint64_t, fault_kind_count> faults{};  // injected, by kind
  // Completions by outcome; reject::none counts the accepted ones, reject::shutdown those the
  // sink never pushed because the run stopped first.
  core::reject_counts outcomes;
  std::uint64_t in_flight = 0;  // submitted, completion not called yet
  std::array<kind_totals, op_kind_count> kinds{};
  std::uint64_t article_substitutions = 0;  // reply_substitutions + vote_substitutions

  // The producers' own counters (colony_counters.hpp: what each means, how threads merge).
#define APIARY_COLONY_COUNTER_FIELD(name, merge, unit, report, hive_line, description) std::uint64_t name = 0;
  APIARY_COLONY_COUNTERS(APIARY_COLONY_COUNTER_FIELD)
#undef APIARY_COLONY_COUNTER_FIELD

  brake_totals in_flight_brake;  // at the in-flight limit
  brake_totals budget_brake;     // block budget exhausted, waiting for the next block
  brake_totals tps_brake;        // waiting for a token
  brake_totals result_wait;      // sync submission: waiting for each outcome
  // The in-flight brake's and outcome waits still going on when the stats were read: their
  // time so far (the totals above count a wait once it ends). 0 after join.
  std::uint64_t held_ongoing_ns = 0;
  bool sink_closed = false;  // a thread found the sink closed

  std::uint64_t accepted() const { return outcomes[core::reject::none]; }
  std::uint64_t rejected() const { return outcomes.rejected(); }  // by the chain
  std::uint64_t shutdown() const { return outcomes[core::reject::shutdown]; }
  std::uint64_t completed() const { return accepted() + rejected() + shutdown(); }
  std::uint64_t packed_bytes() const;

  // Per kind, over the generated transactions; 0 when there are none.
  double share(op_kind k) const;
  double average_extra_bytes(op_kind k) const;
  double average_packed_bytes(op_kind k) const;
  double average_packed_bytes() const;
  const kind_totals& operator[](op_kind k) const { return kinds[index_of(k)]; }

  colony_stats& operator+=(const colony_stats& o);
};

// The table of colony_counters.hpp, each entry with its colony_stats member.
inline constexpr std::array colony_counters{
#define APIARY_COLONY_COUNTER_INFO(name_, merge_, unit_, report_, hive_line_, description_) \
  colony_counter_info{#name_,                                                               \
                      &colony_stats::name_,                                                 \
                      colony_counter_info::merge::merge_,                                   \
                      colony_counter_info::unit::unit_,                                     \
                      colony_counter_info::report::report_,                                 \
                      hive_line_,                                                           \
                      description_},
    APIARY_COLONY_COUNTERS(APIARY_COLONY_COUNTER_INFO)
#undef APIARY_COLONY_COUNTER_INFO
};
inline constexpr std::size_t colony_counter_count = colony_counters.size();

}  // namespace apiary::colony
