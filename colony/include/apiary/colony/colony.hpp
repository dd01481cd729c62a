// colony: the producer threads of Hive's cycle test. Each thread owns a generator (seeded
// config.seed + thread index), the genesis accounts dealt to it round-robin and their keys;
// in a loop it builds a transaction of the typical mix, signs it (libsecp256k1, signer key
// attached) and submits it to the sink, fire-and-forget.
//
// How the harness drives it, in this order:
//   0. config.use_genesis_of(chain_options); config.validate() for the CLI's error line
//   1. colony c(config, sink, head);    throws std::invalid_argument naming the bad field
//                                       (config.validate()); derives the block budget
//   2. c.start();                       spawns the threads, which warm their keys (when
//                                       asked), wait until all are ready and start
//                                       together; start() returns once they have started
//   3. after every block, from the thread that owns the chain (the writer):
//        c.on_block(head, {block's transactions, pending_after})
//      from any thread, at any time: c.stats(), c.finished(), c.thread_ids()
//   4. c.request_stop(); c.join();      join() rethrows the first exception a producer
//                                       thread ended with (the run failed); with
//                                       --submit async it then waits for the async tasks,
//                                       so call it once the sink has completed everything
//                                       it took (after the writer is joined)
//   5. shut the sink down, then destroy the colony.
//
// Threads and callbacks:
//   - The completion each transaction is submitted with (core::tx_completion) runs on the
//     sink's writer thread. It counts the outcome, remembers an accepted comment in the
//     shared comment ring (so replies and votes target only comments the chain has),
//     decrements the producer's in-flight count and, when that producer is braked and the
//     count fell low enough, wakes it (a mutex taken only to notify). It never blocks on
//     anything else and never calls back into the sink.
//   - on_block may run concurrently with everything but itself. It publishes the new head
//     (producers copy it before their next transaction: expiration = head time + 3,600 s,
//     TaPoS = head, head number in the nonce) and with it the in-flight limit (the automatic
//     one follows the block's transaction count: auto_in_flight_limit). In block-budget mode
//     it then sets the budget of the next block by Hive's rule (next_block_budget): the full
//     budget after a block that left nothing pending; otherwise the block's count plus a 5%
//     margin (100..500), at most the full budget, less the chain's pending transactions
//     after the block (pending_after); on the chain's clock (colony_config::slots), the
//     schedule's count for the next block instead, whatever this one held (a faulty companion
//     takes a unit too, being one of the slot's transactions). It records what it set
//     (block_plans()).
//   - request_stop() may be called from any thread, also from a completion; every producer
//     returns promptly, also when braked. A closed sink (submit returns false) or an
//     exception in one producer stops them all.
//
// Brakes, checked before each transaction: the in-flight limit (always: a thread with as
// many transactions outstanding as the limit waits until fewer than resume_below(limit)
// are; a thread takes a new limit with a new head), then the rate mode's (a unit of the
// block budget, which the threads share, where Hive gives each thread ceil(budget /
// threads); or a token of the thread's tps_limit / threads bucket). In sync mode the thread
// also waits for each outcome. In async mode it does not: the completion only sets the
// transaction's promise, and a task of the async pool, waiting on its future, does the
// follow-up (counting, the ring, the in-flight count and wake-up) off the writer thread. The in-flight and budget waits
// end by notification, or, with wait_for_work_ms set, by polling as Hive's producers do (sleeping that long, or
// yielding, between checks).
//
// Lifetime: completions point at the colony's per-thread state, so the colony must outlive
// every completion the sink will call for its transactions: after join(), transactions
// still queued complete later (with reject::shutdown when the sink stops before pushing
// them). Destroy the colony after the sink has stopped calling back.
// The destructor requests a stop and joins, swallowing a producer's exception.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apiary/colony/colony_config.hpp"
#include "apiary/colony/colony_stats.hpp"
#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/head_board.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/colony/shared_budget.hpp"
#include "apiary/colony/start_gate.hpp"
#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/submission.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace boost::asio {
class thread_pool;
}  // namespace boost::asio

namespace apiary::colony {

// What the colony learns of a block just applied.
struct block_counts {
  std::uint32_t transactions = 0;  // in the block
  // The chain's pending transactions once the block is applied (not the writer queue's):
  // what did not fit, Hive's overflow.
  std::size_t pending_after = 0;
};

// Hive's automatic in-flight limit per thread (colony_config::in_flight_limit 0) after a
// block of `block_transactions`: ceil(2 x block_transactions / threads), so that the
// threads together brake at about two blocks' worth. At least 1: Hive's is 0 after an empty
// block, which holds its producers for good.
std::uint32_t auto_in_flight_limit(std::uint32_t block_transactions, std::uint32_t threads);

// Hive's per-block budget, adapted to overflow. After a block that left nothing pending, the
// next block's budget is the full max_budget. After one that left transactions pending, it
// is the block's own count plus a margin, at most max_budget, less what is pending:
//   max(0, min(n + margin, max_budget) - pending_after),
//   margin = n x 5%, clamped to [100, 500]  (n = the block's transactions).
// Transactions submitted but not processed yet are not counted, as in Hive.
inline constexpr std::uint32_t budget_margin_bp = 500;  // 5%, in basis points
inline constexpr std::uint32_t budget_margin_min = 100;
inline constexpr std::uint32_t budget_margin_max = 500;
std::uint32_t next_block_budget(std::uint32_t max_budget, const block_counts& block);

// What on_block decided after one block, for a report.
struct block_plan {
  std::uint32_t block_num = 0;        // the block just applied
  std::uint32_t transactions = 0;     // in it
  std::uint32_t pending_after = 0;    // left pending after it
  std::uint32_t budget = 0;           // rate_mode::block_budget: the next block's; 0 otherwise
  std::uint32_t in_flight_limit = 0;  // per thread, from each thread's next transaction on

  bool operator==(const block_plan&) const = default;
};

// The average packed size of the mix's transactions (with one signature when `signed_`),
// from `samples` transactions of a generator over the given accounts with a private ring.
double estimate_average_size(const mix_config& mix, std::span<const core::account_name> accounts, bool signed_,
                             std::uint64_t seed = 1, std::size_t samples = 4000);
// About how many of the mix's transactions fill config.block_size (at least 1): the block
// size over estimate_average_size on about a thousand accounts spread over the genesis (of
// the accounts, only the lengths of their names change the sizes).
std::uint32_t estimate_block_transactions(const colony_config& config);

namespace detail {
struct worker;
struct made;
enum class brake : std::uint8_t;
}  // namespace detail

class colony {
 public:
  colony(const colony_config& config, core::transaction_sink& sink, const head_info& initial_head);
  ~colony();
  colony(const colony&) = delete;
  colony& operator=(const colony&) = delete;

  // Once. Returns when every thread has started producing (or a stop was requested).
  void start();
  void request_stop();
  // Waits for every producer thread to return, then rethrows the first exception one of
  // them ended with. Call from outside the colony's threads and callbacks.
  void join();
  // After each block, from the writer thread; see the top of this file.
  void on_block(const head_info& head, const block_counts& block);

  // Merged over the threads; per thread, in thread order.
  colony_stats stats() const;
  std::vector<colony_stats> thread_stats() const;
  // Every producer thread has returned (stopped, finished its transactions, or failed).
  bool finished() const;
  // Each producer thread's Linux thread id (gettid()), in thread order, published as the
  // thread starts (so every one once start() has returned); 0 for one not started. For a
  // harness that counts the threads by their ids (perf_event_open).
  std::vector<int> thread_ids() const;
  bool stop_requested() const { return stop_.load(); }
  // The message of the exception a producer thread ended with, if one did.
  std::optional<std::string> error() const;

  const colony_config& config() const { return config_; }
  // The most transactions per block in block-budget mode (configured or derived; on the
  // chain's clock, the first block's count); 0 otherwise. A block's own budget is in
  // block_plans().
  std::uint32_t block_budget() const { return budget_per_block_; }
  // The in-flight limit per thread in force now (the configured one, or the automatic one).
  std::uint32_t in_flight_limit() const;
  // One entry per on_block call, in order.
  std::vector<block_plan> block_plans() const;
  const comment_ring& ring() const { return ring_; }

 private:
  // The completion: records the outcome on the writer thread (fire-and-forget, sync), or
  // (async) sets the transaction's promise, whose task records it on the async pool.
  static void on_complete(void* ctx, const core::full_transaction& tx, core::reject outcome);
  static void on_outcome_ready(void* ctx, const core::full_transaction& tx, core::reject outcome);
  // Counts the outcome, remembers an accepted comment, releases the in-flight slot.
  static void record_outcome(detail::worker& w, const core::full_transaction& tx, core::reject outcome);

  // A producer thread's body: prepare, wait for the start, produce.
  void producer_thread(detail::worker& w);
  void prepare(detail::worker& w);
  // The producer's loop, each transaction in three steps: pass the brakes, make it, send it.
  void produce(detail::worker& w);
  // The in-flight limit, then the rate mode's brake. When the rate schedule meant the next
  // transaction to go (tx_intent); none when the thread is to stop instead.
  std::optional<std::int64_t> pass_brakes(detail::worker& w);
  // Whether the next transaction's generation and signing are timed (colony_config.hpp,
  // cpu_sample_every); counts the timed ones.
  bool time_this_one(detail::worker& w) const;
  // Builds and signs the next transaction and, now and then, its faulty companion; counts them.
  detail::made make(detail::worker& w);
  // Submits them (the companion under the slot's budget too, on the chain's clock); in sync
  // mode waits for the outcome. False when the thread is to stop.
  bool send(detail::worker& w, detail::made& m, std::int64_t intended);
  // Each returns false when the thread is to stop instead.
  bool wait_in_flight(detail::worker& w, std::uint32_t at_most, detail::brake b);
  bool take_budget(detail::worker& w);
  bool take_token(detail::worker& w);
  // Hands one transaction over as the submit mode says; false when the sink is closed.
  bool hand_over(detail::worker& w, core::full_transaction_ptr tx, const core::tx_completion& done,
                 core::tx_intent intent);
  // Hands one transaction to the sink; false when the sink is closed (the thread stops).
  bool submit(detail::worker& w, core::full_transaction_ptr tx, const core::tx_completion& done,
              core::tx_intent intent);
  void refresh_head(detail::worker& w);
  void fail(std::exception_ptr e);
  void join_threads();

  const colony_config config_;
  core::transaction_sink& sink_;
  comment_ring ring_;
  std::uint32_t budget_per_block_ = 0;
  std::vector<std::unique_ptr<detail::worker>> workers_;
  // submit_mode::async: the tasks that wait for the outcomes' futures.
  std::unique_ptr<boost::asio::thread_pool> async_pool_;

  std::atomic<bool> stop_{false};  // before the members that watch it
  bool started_ = false;

  start_gate gate_{stop_};
  head_board heads_;
  shared_budget budget_;  // rate_mode::block_budget

  mutable core::mutex plans_mutex_;
  // A deque: a long run's growth never copies it all within one block's on_block.
  std::deque<block_plan> plans_ APIARY_GUARDED_BY(plans_mutex_);

  mutable core::mutex error_mutex_;
  std::exception_ptr error_ APIARY_GUARDED_BY(error_mutex_);  // the first failure
};

}  // namespace apiary::colony
