// tx_timing: one transaction once its fate is settled (the transaction, its outcome and its
// four moments), and the outbox through which the writer thread hands what it knows of them
// to the harness. The outbox's stream of settled transactions and applied blocks is the one
// way the harness learns what became of a transaction (latency histograms, dumps, audit): the
// writer neither builds the records nor does any statistics, and the submit path carries
// nothing for the harness.
//
//   intended   when the producer's rate schedule meant to send it (core::tx_intent)
//   submitted  handed to the writer queue
//   accepted   the writer's push returned (accepted, or rejected: then `settled` is the same)
//   settled    the block holding it was applied; for a rejected transaction, the rejection
//
// All core::steady_now_ns. The writer hands over only what it holds anyway, without a copy:
//
//   hand_over        a batch it took from the queue, once it has answered every transaction
//                    in it, with each push's outcome and end time (the first outcomes.size()
//                    of the batch were pushed, in order; the rest were answered
//                    reject::shutdown). It gets back empty vectors that the consumer has
//                    emptied, so, once they have grown, neither the writer nor the queue
//                    allocates.
//   hand_over_block  an applied block: how many pushes came before it, the block (number,
//                    ids, timestamp, when it was applied, its transactions: the consumer
//                    releases them, so the writer thread frees none) and the ids of those
//                    still pending after it.
//
// "Settled" means one thing here and in the harness: a transaction's fate is known. The
// consumer's take() walks the pushes in order and builds the records on its own thread: a
// rejection is settled at its push; an accepted transaction when the block holding it is
// applied; one that the chain dropped (it no longer applied when a block was built) when that
// block is applied, marked dropped. One still pending at the end gets no record. A block
// whose pushes are not all handed over yet (a batch the writer is still pushing) waits for a
// later take(), and the blocks come out of take() in order, after the records they settle.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/time_point.hpp"
#include "apiary/core/protocol/transaction.hpp"
#include "apiary/queen/writer_queue.hpp"

namespace apiary::queen {

struct tx_timing {
  std::int64_t intended_ns = 0;
  std::int64_t submitted_ns = 0;
  std::int64_t accepted_ns = 0;
  std::int64_t settled_ns = 0;
  core::full_transaction_ptr tx;
  std::uint8_t kind = 0;                      // core::tx_intent::kind
  core::reject outcome = core::reject::none;  // the push's: none when it was accepted
  bool dropped = false;                       // accepted, then left out of a block: it no longer applied

  bool included() const { return outcome == core::reject::none && !dropped; }
  const core::transaction_id& id() const { return tx->id(); }
};

// An applied block as the outbox passes it on.
struct settled_block {
  std::uint32_t num = 0;
  core::block_id id;
  core::block_id previous;
  core::time_point_sec timestamp;
  std::int64_t applied_ns = 0;
  std::vector<core::full_transaction_ptr> transactions;
};

// One push: what the chain said and when the push ended.
struct push_outcome {
  core::reject outcome = core::reject::none;
  std::int64_t pushed_ns = 0;
};

// Single producer (the writer), single consumer. Thread-safe between the two.
class timing_outbox {
 public:
  // Writer: a batch it has answered entirely; outcomes[i] is txs[i]'s push, for every i
  // below outcomes.size() (the rest were not pushed). Both are moved in and replaced by
  // empty vectors, with capacity when the consumer has returned some.
  void hand_over(std::vector<queued_tx>& txs, std::vector<push_outcome>& outcomes);
  // Writer: a block applied after `pushes` pushes over the whole run (those of batches
  // handed over and of the one in hand), and the chain's pending transactions after it.
  void hand_over_block(std::uint64_t pushes, settled_block&& b, const std::vector<core::full_transaction_ptr>& pending);
  // Consumer: appends the record of every transaction settled in what was handed over
  // since the last call to `into`, which must be empty, and the blocks that settled them to
  // `blocks` when it is given (else they are released); releases the batches it is done
  // with (outside the lock).
  void take(std::vector<tx_timing>& into, std::vector<settled_block>* blocks = nullptr);

 private:
  struct batch {
    std::vector<queued_tx> txs;
    std::vector<push_outcome> outcomes;
  };
  struct block {
    std::uint64_t pushes = 0;
    settled_block settled;
    std::vector<core::transaction_id> pending;
  };
  // Consumer: the block's included records to `into`; keeps pending_ what is still pending.
  void settle_block(const block& b, std::vector<tx_timing>& into);

  // Emptied vectors kept for the writer beyond this many are freed.
  static constexpr std::size_t spare_limit = 64;

  core::mutex mutex_;
  std::vector<batch> batches_ APIARY_GUARDED_BY(mutex_);  // handed over, not taken yet
  std::vector<block> blocks_ APIARY_GUARDED_BY(mutex_);   // settled, not taken yet
  std::vector<batch> spare_ APIARY_GUARDED_BY(mutex_);    // emptied, for hand_over to give back

  // Consumer only.
  std::vector<batch> taken_;        // this take's batches (capacity reused)
  std::vector<block> arrived_;      // this take's blocks (capacity reused)
  std::deque<block> waiting_;       // blocks after pushes not handed over yet, in order
  std::vector<tx_timing> pending_;  // accepted, not in a block yet, in push order
  std::uint64_t walked_ = 0;        // pushes turned into records or pending_ so far
};

}  // namespace apiary::queen
