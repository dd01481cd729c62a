// writer_queue: the lock-based queue between the colony's producer threads and the writer
// thread (mutex + condition variable; lock-free queues were deliberately not used, as in
// Hive, for portability to weak hardware).
//
// Policy, per method:
//   submit         (any thread) appends the transaction and wakes the writer. Unbounded
//                  policy: never blocks; growth is limited by each producer's in-flight
//                  count. Bounded policy: blocks while `capacity` items are queued, waiting
//                  on a second condition variable the writer signals after taking items.
//                  Never drops. Returns false once the queue is closed.
//   request_block  (any thread) asks the writer for a block; block requests are served
//                  before any queued transaction.
//   wake           (any thread) makes a waiting take return, with whatever is queued
//                  (nothing, perhaps): how the writer is told to look at its stop flag.
//   close          (any thread) wakes every waiter; later submits return false. Items
//                  already queued are still handed to the writer, by take or by drain.
//   take           (writer thread only) waits for work and moves every queued item into
//                  the caller's batch at once, one lock acquisition per batch, so the
//                  producers and the writer contend for the lock as little as possible.
//                  With a gather time, a writer woken from an empty queue waits that much
//                  longer before it takes (unless a block request, a wake or close comes): what is
//                  submitted meanwhile wakes nobody and comes in the same batch, so a writer
//                  faster than its producers wakes once per gather time instead of once per
//                  transaction.
//   drain          (the consumer only, once it takes no more: the writer at its end)
//                  closes the queue and moves out every item still queued, under one lock:
//                  a submit either queued its item before, and drain returns it, or
//                  returns false after. Nothing is left behind, so the writer answers each
//                  returned item (reject::shutdown) and every completion is called exactly
//                  once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "apiary/core/base/mutex.hpp"
#include "apiary/core/base/named_enum.hpp"
#include "apiary/core/chain/submission.hpp"

namespace apiary::queen {

enum class queue_policy : std::uint8_t {
  unbounded,  // producers brake on their own in-flight count (the default, as Hive)
  bounded,    // condition variables on both the full and the empty end (for measurement)
};
// The names the command line, config files and reports use (core/named_enum.hpp).
inline constexpr std::array<core::enum_name<queue_policy>, 2> queue_policy_names{
    {{"unbounded", queue_policy::unbounded}, {"bounded", queue_policy::bounded}}};

constexpr std::string_view to_string(queue_policy p) { return core::name_of(queue_policy_names, p); }

struct queued_tx {
  core::full_transaction_ptr tx;
  core::tx_completion done;
  core::tx_intent intent;         // intended_ns already resolved (never 0)
  std::int64_t submitted_ns = 0;  // core::steady_now_ns when submit was called
};

struct queue_batch {
  std::vector<queued_tx> txs;
  std::uint32_t block_requests = 0;
  bool closed = false;
};

// Where take() spent its time: acquiring the mutex, and waiting for work.
struct queue_wait {
  std::int64_t lock_ns = 0;
  std::int64_t work_ns = 0;
};

class writer_queue final : public core::transaction_sink {
 public:
  // gather_ns: see take (0: take at once).
  explicit writer_queue(queue_policy policy = queue_policy::unbounded, std::size_t capacity = 0,
                        std::int64_t gather_ns = 0);

  using core::transaction_sink::submit;
  // Stamps the submission time (before taking the lock); an intent without an intended
  // time is intended then.
  bool submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent intent) override;
  void request_block();
  void wake();
  void close();
  bool closed() const;

  // Writer thread: blocks until an item, a block request, a wake or close; swaps the queued items
  // into batch.txs (which must be empty; its capacity is reused). Adds its waits to `wait`.
  void take(queue_batch& batch, queue_wait& wait);
  // The consumer, at its end: closes the queue and returns everything still queued, in
  // submission order. Later calls return nothing.
  std::vector<queued_tx> drain();

  queue_policy policy() const { return policy_; }
  // Items queued now (any thread; takes the lock).
  std::size_t size() const;
  // Most items ever queued at once.
  std::size_t high_water() const;
  // Times a producer had to wait because the bounded queue was full.
  std::uint64_t full_waits() const;

 private:
  const queue_policy policy_;
  const std::size_t capacity_;
  const std::int64_t gather_ns_;
  mutable core::mutex mutex_;
  core::condition_variable not_empty_;
  core::condition_variable not_full_;  // bounded policy only
  std::vector<queued_tx> items_ APIARY_GUARDED_BY(mutex_);
  std::uint32_t block_requests_ APIARY_GUARDED_BY(mutex_) = 0;
  bool woken_ APIARY_GUARDED_BY(mutex_) = false;  // wake() since the last take
  bool closed_ APIARY_GUARDED_BY(mutex_) = false;
  std::size_t high_water_ APIARY_GUARDED_BY(mutex_) = 0;
  std::uint64_t full_waits_ APIARY_GUARDED_BY(mutex_) = 0;
};

}  // namespace apiary::queen
