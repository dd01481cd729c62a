#include "apiary/queen/writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/core/base/clock.hpp"
#include "on_each_block.hpp"

namespace apiary::queen {
namespace {

core::chain_options small_chain() {
  core::chain_options o;
  o.genesis_accounts = 200;
  return o;
}

// Signed custom_json transactions on the chain's head, from every genesis account in turn.
std::vector<core::full_transaction_ptr> make_transactions(const core::chain& chain, std::size_t n) {
  colony::comment_ring ring;
  colony::generator_options go;
  go.base_seed = 5;
  colony::generator gen({}, go, colony::genesis_account_names(chain.options().genesis_accounts), ring);
  gen.set_head(chain.head_block_id(), chain.head_block_time());
  colony::key_cache keys(chain.options().key_password);
  std::vector<core::full_transaction_ptr> out;
  for (std::size_t i = 0; i < n; ++i) {
    colony::generated_transaction g = gen.next(colony::op_kind::custom_json);
    const core::private_key k[] = {keys.private_key(g.signer, g.role)};
    const core::public_key p[] = {keys.public_key(g.signer, g.role)};
    out.push_back(std::make_shared<const core::full_transaction>(std::move(g.tx), chain.options().chain, k, p));
  }
  return out;
}

struct outcome_counter {
  std::atomic<int> accepted{0};
  std::atomic<int> rejected{0};
  static void count(void* ctx, const core::full_transaction&, core::reject r) {
    auto* self = static_cast<outcome_counter*>(ctx);
    (r == core::reject::none ? self->accepted : self->rejected)++;
  }
};

// Every completion, by transaction: proves each is called exactly once and with what.
class completion_log {
 public:
  core::tx_completion completion() { return {&completion_log::record, this}; }

  // After the writer is joined.
  std::size_t calls(const core::full_transaction_ptr& tx) const {
    std::lock_guard lock(mutex_);
    const auto it = outcomes_.find(tx.get());
    return it == outcomes_.end() ? 0 : it->second.size();
  }
  core::reject outcome(const core::full_transaction_ptr& tx) const {
    std::lock_guard lock(mutex_);
    return outcomes_.at(tx.get()).front();
  }
  std::size_t count(core::reject r) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [tx, outcomes] : outcomes_)
      for (core::reject o : outcomes) n += o == r ? 1 : 0;
    return n;
  }
  // Each of `txs` completed exactly once, none of them with an outcome outside `allowed`.
  void expect_each_once(const std::vector<core::full_transaction_ptr>& txs) const {
    for (std::size_t i = 0; i < txs.size(); ++i) EXPECT_EQ(calls(txs[i]), 1u) << "transaction " << i;
    std::lock_guard lock(mutex_);
    EXPECT_EQ(outcomes_.size(), txs.size());
  }

 private:
  static void record(void* ctx, const core::full_transaction& tx, core::reject r) {
    auto* self = static_cast<completion_log*>(ctx);
    std::lock_guard lock(self->mutex_);
    self->outcomes_[&tx].push_back(r);
  }

  mutable std::mutex mutex_;
  std::map<const core::full_transaction*, std::vector<core::reject>> outcomes_;
};

TEST(Writer, FillsBlocksWithinTheTargetAndCompletesEveryTransaction) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 600);
  txs.push_back(txs.front());  // a duplicate, rejected
  writer_queue queue;
  outcome_counter counter;
  writer_config cfg;
  cfg.block_size = 8 * 1024;
  std::uint64_t in_blocks = 0;
  on_each_block observer([&](const block_record& r, const core::chain&) {
    in_blocks += r.transactions;
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  for (auto& tx : txs) ASSERT_TRUE(queue.submit(tx, {&outcome_counter::count, &counter}));
  w.start();
  // Every transaction answered, then stop.
  while (counter.accepted + counter.rejected < static_cast<int>(txs.size())) std::this_thread::yield();
  w.request_stop();
  w.join();
  ASSERT_FALSE(w.failed()) << w.error_message();

  EXPECT_EQ(counter.accepted.load(), 600);
  EXPECT_EQ(counter.rejected.load(), 1);
  ASSERT_GE(w.blocks().size(), 5u);
  EXPECT_EQ(in_blocks + chain.pending_count(), 600u) << "every accepted transaction is in a block or pending";
  for (std::size_t i = 0; i < w.blocks().size(); ++i) {
    const block_record& r = w.blocks()[i];
    EXPECT_EQ(r.num, i + 1);
    EXPECT_LE(r.size_bytes, cfg.block_size);
    // Full: the next transaction (about 150 bytes here) would not have fitted.
    EXPECT_GT(r.size_bytes, cfg.block_size - 600);
    EXPECT_EQ(r.cycle_ns < 0, i == 0) << "only the first block has no cycle time";
    EXPECT_EQ(r.processing_ns, r.produced_ns + r.applied_ns);
  }
  const writer_breakdown& b = w.breakdown();
  EXPECT_EQ(b.transactions_accepted, 600u);
  EXPECT_EQ(b.transactions_rejected, 1u);
  EXPECT_GT(b.tx_ns, 0);
  EXPECT_GT(b.block_ns, 0);
  EXPECT_GE(b.unknown_ns(), 0);
}

TEST(Writer, TransactionCountTargetEndsBlocks) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 100);
  writer_queue queue;
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block observer([](const block_record&, const core::chain&) { return true; });
  writer w(chain, queue, cfg);
  w.observe(observer);
  outcome_counter counter;
  for (auto& tx : txs) queue.submit(tx, {&outcome_counter::count, &counter});
  w.start();
  while (counter.accepted + counter.rejected < 100) std::this_thread::yield();
  w.request_stop();
  w.join();
  ASSERT_EQ(w.blocks().size(), 10u);
  for (const block_record& r : w.blocks()) EXPECT_EQ(r.transactions, 10u);
}

// On the chain's clock a block comes after each slot's count of pushes, accepted or not: ten
// slots of 10 pushes, every other one a duplicate of the one before, are ten blocks of 5.
TEST(Writer, ClockCutsABlockAfterEachSlotsPushesWhateverTheirOutcomes) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 50);
  writer_queue queue;
  outcome_counter counter;
  for (const auto& tx : txs)
    for (int twice = 0; twice < 2; ++twice) ASSERT_TRUE(queue.submit(tx, {&outcome_counter::count, &counter}));
  queue.close();
  writer_config cfg;
  cfg.clock = *core::parse_slot_schedule("10").schedule;
  writer w(chain, queue, cfg);
  w.serve_here();
  ASSERT_FALSE(w.failed()) << w.error_message();
  EXPECT_EQ(counter.accepted, 50);
  EXPECT_EQ(counter.rejected, 50);
  ASSERT_EQ(w.blocks().size(), 10u);
  for (const block_record& r : w.blocks()) EXPECT_EQ(r.transactions, 5u);
}

// Nothing accepted (no vesting, so no resource credits): every slot is an empty block, the ones
// that offer nothing at once; the blocks end with the last slot whose pushes all came.
TEST(Writer, ClockProducesEmptyBlocksWhenNothingIsAccepted) {
  core::chain_options o = small_chain();
  o.genesis_vesting = 0;
  core::chain chain(o);
  const auto txs = make_transactions(chain, 60);
  writer_queue queue;
  outcome_counter counter;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, {&outcome_counter::count, &counter}));
  queue.close();
  writer_config cfg;
  cfg.clock = *core::parse_slot_schedule("uniform:0..4").schedule;
  cfg.clock->seed = 9;
  std::uint32_t expected = 0;
  bool zero_slot = false;
  for (std::uint32_t pushed = 0;; ++expected) {
    const std::uint32_t n = cfg.clock->count(expected + 1);
    if (pushed + n > txs.size()) break;
    pushed += n;
    zero_slot = zero_slot || n == 0;
  }
  ASSERT_TRUE(zero_slot) << "the seed draws no empty slot; pick another";
  writer w(chain, queue, cfg);
  w.serve_here();
  ASSERT_FALSE(w.failed()) << w.error_message();
  EXPECT_EQ(counter.rejected, 60);
  ASSERT_EQ(w.blocks().size(), expected);
  for (const block_record& r : w.blocks()) EXPECT_EQ(r.transactions, 0u);
  EXPECT_EQ(chain.head_block_num(), expected);
}

// A window's edges are snapshots an observer takes while the writer observes a block: the
// observing before the snapshot (here a slow first observer, as a preempted writer would be)
// belongs to the snapshot's side, so that between two edges the observing time never exceeds
// the wall time.
TEST(Writer, ASnapshotSplitsWallAndObservingTimeAtTheSameMoment) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 40);
  writer_queue queue;
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block slow([](const block_record&, const core::chain&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return true;
  });
  std::vector<writer_breakdown> edges;  // the writer's; read after join()
  std::atomic<std::size_t> taken{0};
  writer* self = nullptr;
  on_each_block snapshot([&](const block_record&, const core::chain&) {
    edges.push_back(self->breakdown_now());
    taken.store(edges.size());
    return true;
  });
  writer w(chain, queue, cfg);
  self = &w;
  w.observe(slow);
  w.observe(snapshot);
  for (auto& tx : txs) queue.submit(tx, {});
  w.start();
  while (taken.load() < 4) std::this_thread::yield();
  w.request_stop();
  w.join();
  ASSERT_GE(edges.size(), 4U);
  EXPECT_GE(edges[0].observe_ns, 20'000'000) << "the observing before the first snapshot is in it";
  for (std::size_t i = 1; i < edges.size(); ++i) {
    const writer_breakdown d = edges[i] - edges[i - 1];
    EXPECT_LE(d.observe_ns, d.total_ns) << "between edges " << i - 1 << " and " << i;
    EXPECT_GE(d.unknown_ns(), 0);
  }
}

TEST(Writer, AnObserverCanStopTheWriterAndProducersAreReleased) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 300);
  writer_queue queue;
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block observer([](const block_record& r, const core::chain&) { return r.num < 3; });
  writer w(chain, queue, cfg);
  w.observe(observer);
  for (auto& tx : txs) queue.submit(tx, {});
  w.start();
  w.join();
  EXPECT_EQ(w.blocks().size(), 3u);
  EXPECT_TRUE(queue.closed()) << "a finished writer closes the queue so producers stop";
  EXPECT_FALSE(queue.submit(txs.front(), {}));
}

// Every observer sees every block, in the order they were added, even after an earlier one
// asked to stop at that block; each one's time is its own, and all of it is the breakdown's
// observing part.
TEST(Writer, ObserversRunInOrderAndTheirTimeIsTheirOwn) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 300);
  writer_queue queue;
  writer_config cfg;
  cfg.block_transactions = 10;
  std::vector<std::pair<char, std::uint32_t>> calls;  // writer thread, read after join
  on_each_block first([&](const block_record& r, const core::chain&) {
    calls.emplace_back('a', r.num);
    return r.num < 4;
  });
  on_each_block slow([&](const block_record& r, const core::chain& c) {
    calls.emplace_back('b', r.num);
    EXPECT_EQ(c.head_block_num(), r.num) << "observers see the chain with the block applied";
    const std::int64_t until = core::steady_now_ns() + 2'000'000;
    while (core::steady_now_ns() < until) {
    }
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(first);
  w.observe(slow);
  for (auto& tx : txs) queue.submit(tx, {});
  w.start();
  w.join();
  ASSERT_FALSE(w.failed()) << w.error_message();
  ASSERT_EQ(w.blocks().size(), 4u);
  std::vector<std::pair<char, std::uint32_t>> want;
  for (std::uint32_t n = 1; n <= 4; ++n) want.insert(want.end(), {{'a', n}, {'b', n}});
  EXPECT_EQ(calls, want);

  const std::vector<observer_cost> costs = w.observer_costs();
  ASSERT_EQ(costs.size(), 2u) << "no timing outbox: only the two observers";
  EXPECT_EQ(costs[0].name, "test");
  EXPECT_GE(costs[1].ns, 4 * 2'000'000) << "the slow one's four blocks";
  EXPECT_LT(costs[0].ns, costs[1].ns);
  EXPECT_GE(w.breakdown().observe_ns, costs[0].ns + costs[1].ns) << "the observers' time is not the blocks'";
}

TEST(Writer, ExternalBlockRequestProducesABlock) {
  core::chain chain(small_chain());
  writer_queue queue;
  std::atomic<int> blocks{0};
  on_each_block observer([&](const block_record& r, const core::chain&) {
    ++blocks;
    EXPECT_EQ(r.transactions, 0u);
    return true;
  });
  writer w(chain, queue, {});
  w.observe(observer);
  w.start();
  queue.request_block();
  while (blocks.load() == 0) std::this_thread::yield();
  w.request_stop();
  w.join();
  EXPECT_GE(w.blocks().size(), 1u);
  EXPECT_EQ(chain.head_block_num(), w.blocks().back().num);
}

// An observer stops the writer inside a batch after it queued more: the rest of the batch
// and the queue are completed with shutdown, each exactly once, and the queue is closed.
TEST(Writer, StopCompletesTheBatchInHandAndTheQueueWithShutdown) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 400);
  writer_queue queue;
  completion_log log;
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block observer([&](const block_record& r, const core::chain&) {
    if (r.num < 2) return true;
    for (std::size_t i = 300; i < txs.size(); ++i) EXPECT_TRUE(queue.submit(txs[i], log.completion()));
    return false;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_TRUE(queue.submit(txs[i], log.completion()));
  w.start();
  w.join();
  ASSERT_FALSE(w.failed()) << w.error_message();

  log.expect_each_once(txs);
  EXPECT_EQ(log.count(core::reject::none), 20u);
  EXPECT_EQ(log.count(core::reject::shutdown), 380u);
  for (std::size_t i = 0; i < txs.size(); ++i)
    EXPECT_EQ(log.outcome(txs[i]), i < 20 ? core::reject::none : core::reject::shutdown) << i;
  EXPECT_EQ(w.breakdown().transactions_accepted, 20u);
  EXPECT_EQ(w.breakdown().transactions_shutdown, 380u);
  EXPECT_TRUE(queue.closed());
  EXPECT_FALSE(queue.submit(txs.front(), log.completion())) << "nothing is queued after the writer ended";
  EXPECT_EQ(log.calls(txs.front()), 1u);
}

// The harness's order: stop the writer, close the queue, join. The writer is held inside a
// block while more transactions queue up, so the stop finds a batch in hand and a queue.
TEST(Writer, RequestStopThenCloseCompletesEverythingOnce) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 200);
  writer_queue queue;
  completion_log log;
  writer_config cfg;
  cfg.block_transactions = 10;
  std::mutex mutex;
  std::condition_variable cv;
  bool in_block = false;
  bool release = false;
  on_each_block observer([&](const block_record&, const core::chain&) {
    std::unique_lock lock(mutex);
    in_block = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  for (std::size_t i = 0; i < 100; ++i) ASSERT_TRUE(queue.submit(txs[i], log.completion()));
  w.start();
  {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return in_block; });
  }
  for (std::size_t i = 100; i < 150; ++i) ASSERT_TRUE(queue.submit(txs[i], log.completion()));
  w.request_stop();
  queue.close();
  for (std::size_t i = 150; i < txs.size(); ++i) EXPECT_FALSE(queue.submit(txs[i], log.completion()));
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  cv.notify_all();
  w.join();
  ASSERT_FALSE(w.failed()) << w.error_message();

  const std::vector<core::full_transaction_ptr> taken(txs.begin(), txs.begin() + 150);
  log.expect_each_once(taken);
  EXPECT_EQ(log.count(core::reject::none), 10u) << "stopped inside the first block";
  EXPECT_EQ(log.count(core::reject::shutdown), 140u);
  for (std::size_t i = 150; i < txs.size(); ++i) EXPECT_EQ(log.calls(txs[i]), 0u) << "refused, never completed";
}

// Producer threads submit until the queue refuses while the writer runs and is stopped as the
// harness stops it: every submit that returned true gets exactly one completion.
TEST(Writer, ConcurrentSubmitsAreEachCompletedOnceAcrossTheStop) {
  for (queue_policy policy : {queue_policy::unbounded, queue_policy::bounded}) {
    core::chain chain(small_chain());
    const auto txs = make_transactions(chain, 64);
    writer_queue queue(policy, 32);
    writer_config cfg;
    cfg.block_transactions = 20;
    std::atomic<std::uint32_t> blocks{0};
    on_each_block observer([&](const block_record&, const core::chain&) {
      ++blocks;
      return true;
    });
    writer w(chain, queue, cfg);
    w.observe(observer);
    struct producer {
      std::atomic<std::uint64_t> completed{0};
      std::atomic<std::uint64_t> shutdown{0};
      std::uint64_t taken = 0;  // its own thread, read after join
      static void done(void* ctx, const core::full_transaction&, core::reject r) {
        auto* self = static_cast<producer*>(ctx);
        ++self->completed;
        if (r == core::reject::shutdown) ++self->shutdown;
      }
    };
    std::vector<producer> producers(3);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < producers.size(); ++p)
      threads.emplace_back([&, p] {
        // The same transactions again and again: the chain accepts each once, then rejects
        // duplicates; all that matters here is the count of completions.
        for (std::size_t i = p; !stop.load(); i = (i + 1) % txs.size()) {
          if (!queue.submit(txs[i], {&producer::done, &producers[p]})) break;
          ++producers[p].taken;
        }
      });
    w.start();
    while (blocks.load() < 2) std::this_thread::yield();
    w.request_stop();
    stop = true;
    queue.close();
    w.join();
    for (std::thread& t : threads) t.join();
    ASSERT_FALSE(w.failed()) << w.error_message();

    std::uint64_t taken = 0;
    std::uint64_t shutdown = 0;
    for (const producer& p : producers) {
      EXPECT_EQ(p.completed.load(), p.taken) << to_string(policy);
      taken += p.taken;
      shutdown += p.shutdown.load();
    }
    const writer_breakdown& b = w.breakdown();
    EXPECT_EQ(b.transactions_accepted + b.transactions_rejected + b.transactions_shutdown, taken) << to_string(policy);
    EXPECT_EQ(b.transactions_shutdown, shutdown);
  }
}

// The replay: fill, close, run on this thread. Without a stop everything is pushed; when the
// an observer stops it, the rest is completed with shutdown before serve_here() returns.
TEST(Writer, RunHereOnAClosedQueuePushesEverything) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 100);
  writer_queue queue;
  completion_log log;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, log.completion()));
  queue.close();
  writer w(chain, queue, {});
  w.serve_here();
  ASSERT_FALSE(w.failed()) << w.error_message();
  log.expect_each_once(txs);
  EXPECT_EQ(log.count(core::reject::none), 100u);
  EXPECT_EQ(w.breakdown().transactions_shutdown, 0u);
}

TEST(Writer, RunHereStoppedByAnObserverCompletesTheRestWithShutdown) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 100);
  writer_queue queue;
  completion_log log;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, log.completion()));
  queue.close();
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block observer([](const block_record& r, const core::chain&) { return r.num < 3; });
  writer w(chain, queue, cfg);
  w.observe(observer);
  w.serve_here();
  ASSERT_FALSE(w.failed()) << w.error_message();
  log.expect_each_once(txs);
  EXPECT_EQ(log.count(core::reject::none), 30u);
  EXPECT_EQ(log.count(core::reject::shutdown), 70u);
  EXPECT_EQ(w.blocks().size(), 3u);
}

// An observer that throws fails the writer; what it did not push is still answered, once.
TEST(Writer, FailingWriterCompletesWhatItDidNotPush) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 100);
  writer_queue queue;
  completion_log log;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, log.completion()));
  writer_config cfg;
  cfg.block_transactions = 10;
  on_each_block observer([](const block_record& r, const core::chain&) {
    if (r.num == 2) throw std::runtime_error("injected");
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  w.start();
  w.join();
  ASSERT_TRUE(w.failed());
  EXPECT_EQ(w.error_message(), "injected");
  log.expect_each_once(txs);
  EXPECT_EQ(log.count(core::reject::none), 20u) << "the 20th was completed before its block threw";
  EXPECT_EQ(log.count(core::reject::shutdown), 80u);
  EXPECT_TRUE(queue.closed());
}

// Stopped before the writer ever started (an interrupt during key warm-up): join() answers
// what producers queued.
TEST(Writer, JoinWithoutStartCompletesTheQueueWithShutdown) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 10);
  writer_queue queue;
  completion_log log;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, log.completion()));
  writer w(chain, queue, {});
  w.request_stop();
  queue.close();
  w.join();
  log.expect_each_once(txs);
  EXPECT_EQ(log.count(core::reject::shutdown), 10u);
  EXPECT_EQ(chain.pending_count(), 0u);
  w.join();  // once only
  EXPECT_EQ(log.count(core::reject::shutdown), 10u);
}

}  // namespace
}  // namespace apiary::queen

namespace apiary::queen {
namespace {

TEST(WriterTimings, EveryIncludedAndRejectedTransactionIsPublishedInOrder) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 500);
  txs.push_back(txs[10]);  // a duplicate, rejected
  writer_queue queue;
  completion_log log;
  std::int64_t intended = core::steady_now_ns() - 1'000'000;
  for (const auto& tx : txs) ASSERT_TRUE(queue.submit(tx, log.completion(), core::tx_intent{intended++, 3}));
  queue.close();
  writer_config cfg;
  cfg.block_size = 8 * 1024;
  std::vector<std::int64_t> block_ends;  // when each block's observer ran
  std::uint64_t in_blocks = 0;
  on_each_block observer([&](const block_record& r, const core::chain&) {
    in_blocks += r.transactions;
    block_ends.push_back(core::steady_now_ns());
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  timing_outbox outbox;
  w.record_timings(outbox);
  w.serve_here();
  ASSERT_FALSE(w.failed()) << w.error_message();

  std::vector<tx_timing> records;
  outbox.take(records);
  std::uint64_t included = 0, rejected = 0;
  for (const tx_timing& t : records) {
    EXPECT_LE(t.intended_ns, t.submitted_ns);
    EXPECT_LE(t.submitted_ns, t.accepted_ns);
    EXPECT_LE(t.accepted_ns, t.settled_ns);
    EXPECT_EQ(t.kind, 3);
    if (t.included()) {
      ++included;
      // Settled when its block was applied: before that block's observer ran.
      EXPECT_TRUE(std::any_of(block_ends.begin(), block_ends.end(), [&](std::int64_t e) { return t.settled_ns <= e; }));
    } else {
      ++rejected;
      EXPECT_EQ(t.outcome, core::reject::duplicate);
      EXPECT_EQ(t.settled_ns, t.accepted_ns);
    }
  }
  EXPECT_EQ(included, in_blocks) << "one record per transaction in a block, no more";
  EXPECT_EQ(rejected, 1u);
  EXPECT_EQ(included + chain.pending_count(), 500u);
}

// A batch as the writer hands it over: the transactions, with one outcome (pushed at
// 1000 + its index) for each of the first outcomes.size().
struct handed_batch {
  std::vector<queued_tx> txs;
  std::vector<push_outcome> outcomes;
};
handed_batch batch_of(const std::vector<core::full_transaction_ptr>& txs, std::size_t first, std::size_t count,
                      const std::vector<core::reject>& outcomes) {
  handed_batch b;
  for (std::size_t i = first; i < first + count; ++i)
    b.txs.push_back({txs[i], {}, core::tx_intent{static_cast<std::int64_t>(i), 2}, static_cast<std::int64_t>(100 + i)});
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    b.outcomes.push_back({outcomes[i], static_cast<std::int64_t>(1000 + first + i)});
  return b;
}

// The records by transaction: settled time (negated for one dropped from that block), or -1
// for a rejection at its push.
std::map<core::transaction_id, std::int64_t> settled_by_id(const std::vector<tx_timing>& records) {
  std::map<core::transaction_id, std::int64_t> out;
  for (const tx_timing& t : records) {
    const std::int64_t settled = t.included() ? t.settled_ns : t.dropped ? -t.settled_ns : -1;
    EXPECT_TRUE(out.emplace(t.id(), settled).second) << "one record per transaction";
    if (t.outcome != core::reject::none) {
      EXPECT_EQ(t.settled_ns, t.accepted_ns);
    }
    EXPECT_EQ(t.kind, 2);
  }
  return out;
}

// An applied block as the writer hands it over: its number, when it was applied, its transactions.
settled_block block_of(std::uint32_t num, std::int64_t applied_ns, std::vector<core::full_transaction_ptr> txs) {
  settled_block b;
  b.num = num;
  b.applied_ns = applied_ns;
  b.transactions = std::move(txs);
  return b;
}

TEST(TimingOutbox, BuildsRecordsOnlyOncePushesAndTheirBlockAreHandedOver) {
  const core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 7);
  const auto id = [&](std::size_t i) { return txs[i]->id(); };
  constexpr auto ok = core::reject::none;
  timing_outbox outbox;
  std::vector<tx_timing> records;
  std::vector<settled_block> blocks;

  // Block 1 is applied after the first three pushes, while their batch is still the
  // writer's: nothing can be settled yet, not even the rejection.
  handed_batch b1 = batch_of(txs, 0, 3, {ok, core::reject::duplicate, ok});
  outbox.hand_over_block(3, block_of(1, 5000, {txs[0], txs[2]}), {});
  outbox.take(records, &blocks);
  EXPECT_TRUE(records.empty());
  EXPECT_TRUE(blocks.empty()) << "a block comes out with the records it settles";
  outbox.hand_over(b1.txs, b1.outcomes);
  EXPECT_TRUE(b1.txs.empty());
  EXPECT_TRUE(b1.outcomes.empty());
  outbox.take(records, &blocks);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].num, 1u);
  EXPECT_EQ(blocks[0].transactions, (std::vector<core::full_transaction_ptr>{txs[0], txs[2]}));
  auto got = settled_by_id(records);
  EXPECT_EQ(got, (std::map<core::transaction_id, std::int64_t>{{id(0), 5000}, {id(1), -1}, {id(2), 5000}}));
  for (const tx_timing& t : records) {
    const std::size_t i = t.id() == id(0) ? 0 : t.id() == id(1) ? 1 : 2;
    EXPECT_EQ(t.intended_ns, static_cast<std::int64_t>(i));
    EXPECT_EQ(t.submitted_ns, static_cast<std::int64_t>(100 + i));
    EXPECT_EQ(t.accepted_ns, static_cast<std::int64_t>(1000 + i));
  }

  // Block 2 comes after pushes 3, 4 and 5 of a batch of four whose last one was never pushed
  // (the writer stopped). It holds push 3; push 4 no longer applied (dropped: settled with the
  // block, marked so); push 5 stays pending. The batch handed over gets back the capacity the
  // consumer emptied.
  records.clear();
  handed_batch b2 = batch_of(txs, 3, 4, {ok, ok, ok});
  outbox.hand_over_block(6, block_of(2, 6000, {txs[3]}), {txs[5]});
  outbox.hand_over(b2.txs, b2.outcomes);
  EXPECT_GT(b2.txs.capacity(), 0u) << "the first batch's vector, emptied by take";
  outbox.take(records);
  EXPECT_EQ(settled_by_id(records), (std::map<core::transaction_id, std::int64_t>{{id(3), 6000}, {id(4), -6000}}));

  // Block 3 holds a transaction the chain had without a record, then push 5.
  records.clear();
  outbox.hand_over_block(6, block_of(3, 7000, {txs[6], txs[5]}), {});
  outbox.take(records);
  EXPECT_EQ(settled_by_id(records), (std::map<core::transaction_id, std::int64_t>{{id(5), 7000}}));
  records.clear();
  outbox.take(records);
  EXPECT_TRUE(records.empty()) << "each record once";
}

// A running writer with a consumer taking while it works: each block's records carry that
// block's applied time, so grouped by settled time, in order, they have the blocks' sizes.
TEST(WriterTimings, RecordsTakenDuringTheRunBelongToTheirBlocks) {
  core::chain chain(small_chain());
  const auto txs = make_transactions(chain, 1200);
  writer_queue queue;
  outcome_counter counter;
  writer_config cfg;
  cfg.block_size = 8 * 1024;
  std::mutex blocks_mutex;
  std::vector<std::uint32_t> block_sizes;
  on_each_block observer([&](const block_record& r, const core::chain&) {
    std::lock_guard lock(blocks_mutex);
    block_sizes.push_back(r.transactions);
    return true;
  });
  writer w(chain, queue, cfg);
  w.observe(observer);
  timing_outbox outbox;
  w.record_timings(outbox);
  w.start();
  std::vector<tx_timing> all, taken;
  // Submitted in rounds of uneven size, so that blocks fall inside batches and batches
  // inside blocks, with takes in between.
  std::size_t next = 0;
  for (std::size_t round = 0; next < txs.size(); ++round) {
    const std::size_t n = std::min<std::size_t>(txs.size() - next, 37 + (round * 53) % 211);
    for (std::size_t i = 0; i < n; ++i, ++next)
      ASSERT_TRUE(queue.submit(txs[next], {&outcome_counter::count, &counter}));
    outbox.take(taken);
    all.insert(all.end(), taken.begin(), taken.end());
    taken.clear();
  }
  while (counter.accepted + counter.rejected < static_cast<int>(txs.size())) std::this_thread::yield();
  w.request_stop();
  w.join();
  ASSERT_FALSE(w.failed()) << w.error_message();
  outbox.take(taken);
  all.insert(all.end(), taken.begin(), taken.end());

  ASSERT_EQ(counter.rejected.load(), 0);
  std::map<std::int64_t, std::uint32_t> by_settled;
  for (const tx_timing& t : all) {
    ASSERT_TRUE(t.included());
    EXPECT_LE(t.accepted_ns, t.settled_ns);
    ++by_settled[t.settled_ns];
  }
  std::vector<std::uint32_t> groups;
  for (const auto& [at, n] : by_settled) groups.push_back(n);
  ASSERT_GE(block_sizes.size(), 10u);
  EXPECT_EQ(groups, block_sizes);
  EXPECT_EQ(all.size() + chain.pending_count(), txs.size());
}
}  // namespace
}  // namespace apiary::queen
