// tx_timing: the four moments of one transaction, as the writer knows them once its fate is
// settled, and the outbox that hands them from the writer thread to whoever turns them into
// histograms (the harness), so the writer does no statistics itself.
//
//   intended   when the producer's rate schedule meant to send it (core::tx_intent)
//   submitted  handed to the writer queue
//   accepted   the writer's push returned (accepted, or rejected: then `settled` is the same)
//   settled    the block holding it was applied; for a rejected transaction, the rejection
//
// All core::steady_now_ns. The writer appends a record when a push is rejected and when a
// block is applied (one per transaction in it), into a vector of its own, and publishes that
// vector once per block: one lock and a swap, no copy and, once the vectors have grown, no
// allocation. Accepted transactions that a block never includes (dropped when they no longer
// apply, or still pending at the end) get no record.
//
// The outbox also takes each applied block's transactions off the writer's hands (retire):
// the consumer's take() drops them, so the writer thread frees no transaction.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "apiary/core/full_transaction.hpp"
#include "apiary/core/reject.hpp"
#include "apiary/core/transaction.hpp"

namespace apiary::queen {

struct tx_timing {
  std::int64_t intended_ns = 0;
  std::int64_t submitted_ns = 0;
  std::int64_t accepted_ns = 0;
  std::int64_t settled_ns = 0;
  core::transaction_id id;
  std::uint8_t kind = 0;                      // core::tx_intent::kind
  core::reject outcome = core::reject::none;  // none: included in a block

  bool included() const { return outcome == core::reject::none; }
};

// Single producer (the writer), single consumer. Thread-safe.
class timing_outbox {
 public:
  // Writer: moves every record of `batch` in and leaves it empty (with a capacity to reuse
  // when the outbox was empty and the two were swapped).
  void publish(std::vector<tx_timing>& batch);
  // Writer: an applied block's transactions, for the consumer to release.
  void retire(std::vector<core::full_transaction_ptr>&& transactions);
  // Consumer: moves every published record into `into`, which must be empty, and releases
  // the retired transactions (outside the lock).
  void take(std::vector<tx_timing>& into);

 private:
  std::mutex mutex_;
  std::vector<tx_timing> items_;                                  // guarded by mutex_
  std::vector<std::vector<core::full_transaction_ptr>> retired_;  // guarded by mutex_
};

}  // namespace apiary::queen
