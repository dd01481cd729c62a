// What the writer measures: one record per block and the split of the writer's time.
#pragma once

#include <cstdint>

#include "apiary/core/protocol/bytes.hpp"

namespace apiary::queen {

struct block_record {
  std::uint32_t num = 0;
  std::uint32_t transactions = 0;
  std::uint32_t size_bytes = 0;
  std::uint32_t pending_after = 0;  // carried over to the next block
  std::uint32_t dropped = 0;        // pending transactions that no longer applied
  std::int64_t produced_ns = 0;     // generate_block: select, merkle root, sign
  std::int64_t applied_ns = 0;      // apply_block: undo pending, apply, re-apply leftovers
  std::int64_t processing_ns = 0;   // produced + applied
  std::int64_t cycle_ns = -1;       // since the previous block completed; -1 for the first
  std::int64_t completed_ns = 0;    // since the writer started
  core::block_id id;                // as the chain recorded it
  core::block_id previous;          // the header's: the id of the block before
};

// The writer loop's time, as in Hive's writer-loop breakdown, plus what the harness does after
// each block (observe: the timing outbox and the block observers, block_observer.hpp).
// `unknown` is what is left: completions, queue handling, failed transactions.
struct writer_breakdown {
  std::int64_t total_ns = 0;
  std::int64_t wait_work_ns = 0;  // the queue was empty
  std::int64_t wait_lock_ns = 0;  // acquiring the queue's mutex
  std::int64_t tx_ns = 0;         // successful pushes into the chain
  std::int64_t block_ns = 0;      // producing and applying blocks
  std::int64_t observe_ns = 0;    // after each block: the timing outbox and the observers
  std::uint64_t transactions_accepted = 0;
  std::uint64_t transactions_rejected = 0;
  std::uint64_t transactions_shutdown = 0;  // never pushed: completed with reject::shutdown

  std::int64_t unknown_ns() const { return total_ns - wait_work_ns - wait_lock_ns - tx_ns - block_ns - observe_ns; }
  writer_breakdown operator-(const writer_breakdown& o) const {
    return {total_ns - o.total_ns,
            wait_work_ns - o.wait_work_ns,
            wait_lock_ns - o.wait_lock_ns,
            tx_ns - o.tx_ns,
            block_ns - o.block_ns,
            observe_ns - o.observe_ns,
            transactions_accepted - o.transactions_accepted,
            transactions_rejected - o.transactions_rejected,
            transactions_shutdown - o.transactions_shutdown};
  }
};

}  // namespace apiary::queen
