// colony_stats: what a colony's producer threads did, per thread or merged (leveldb
// db_bench's way: each thread counts its own, the report adds them up). Plain values.
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
  std::uint64_t generated = 0;                           // built (and signed, with signing on)
  std::uint64_t submitted = 0;                           // taken by the sink (normal and faulty)
  std::uint64_t injected = 0;                            // faulty companions submitted (faults.hpp), not in `generated`
  std::array<std::uint64_t, fault_kind_count> faults{};  // injected, by kind
  // Completions by outcome; reject::none counts the accepted ones, reject::shutdown those the
  // sink never pushed because the run stopped first.
  core::reject_counts outcomes;
  std::uint64_t in_flight = 0;  // submitted, completion not called yet
  std::array<kind_totals, op_kind_count> kinds{};
  std::uint64_t article_substitutions = 0;  // replies and votes made articles: empty ring
  std::uint64_t reply_substitutions = 0;    // of which replies
  std::uint64_t vote_substitutions = 0;     // and votes

  // CPU time of the producer threads (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
  std::uint64_t thread_cpu_ns = 0;      // everything the threads did, updated once a block
  std::uint64_t generation_cpu_ns = 0;  // building unsigned transactions (measure_cpu)
  // Packing, hashing and signing in full_transaction, key lookups included, first-use key
  // derivations excluded (measure_cpu). With signing on, signatures are nearly all of it:
  // per block and divided by the cores, the colony's signing bound on the full cycle.
  std::uint64_t signing_cpu_ns = 0;
  std::uint64_t key_cpu_ns = 0;  // deriving keys on first use (or warm-up)

  brake_totals in_flight_brake;  // at the in-flight limit
  brake_totals budget_brake;     // block budget exhausted, waiting for the next block
  brake_totals tps_brake;        // waiting for a token
  brake_totals result_wait;      // sync submission: waiting for each outcome
  // The in-flight brake's and outcome waits still going on when the stats were read: their
  // time so far (the totals above count a wait once it ends). 0 after join.
  std::uint64_t held_ongoing_ns = 0;
  // In-flight brakes released only once nothing was in flight: the writer had worked off
  // the thread's whole backlog while it waited (Hive's "late unlocks"; its wait was too long).
  std::uint64_t in_flight_late_resumes = 0;
  // The most transactions the thread had in flight at once; merged, the highest of any
  // thread (not their sum: the threads' peaks need not coincide).
  std::uint64_t in_flight_peak = 0;
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

}  // namespace apiary::colony
