// The colony's producer threads against the real writer and queue, stopped as the harness
// stops a run (writer.request_stop, producers.request_stop, queue.close, writer.join,
// producers.join): afterwards nothing is in flight, and every transaction the queue took was
// answered once, by the chain or with reject::shutdown.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "apiary/colony/colony.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"
#include "on_each_block.hpp"

namespace apiary::queen {
namespace {

using std::chrono::steady_clock;

constexpr std::uint32_t threads = 2;
constexpr std::uint32_t in_flight_limit = 100;

core::chain_options unsigned_chain() {
  core::chain_options o;
  o.genesis_accounts = 64;
  o.check_authority = false;  // unsigned transactions: the producers outrun the writer
  return o;
}

colony::colony_config colony_of(const core::chain_options& chain) {
  colony::colony_config c;
  c.threads = threads;
  c.seed = 3;
  c.use_genesis_of(chain);
  c.sign = false;
  c.measure_cpu = false;
  c.in_flight_limit = in_flight_limit;
  // A producer resumes as soon as it is below its limit. With the default fifth, a writer
  // held inside a block could find both producers waiting to fall to their resume level
  // with fewer than 64 in flight between them, and wait for them in vain (1 run in 40).
  c.resume_fraction = 1.0;
  return c;
}

colony::head_info head_of(const core::chain& chain) {
  return {chain.head_block_num(), chain.head_block_id(), chain.head_block_time()};
}

// Waits up to 20 s for `done`.
template <class F>
bool eventually(F done) {
  const auto until = steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Every producer is braked at its in-flight limit.
bool all_braked(const colony::colony& c) { return c.stats().in_flight == threads * in_flight_limit; }

// The ledger identity the report relies on, once every thread is joined.
void expect_ledger(const colony::colony_stats& s, const writer& w, const core::chain& chain) {
  EXPECT_EQ(s.in_flight, 0u) << "a submitted transaction was never answered";
  EXPECT_EQ(s.accepted() + s.rejected() + s.shutdown(), s.submitted);
  EXPECT_EQ(s.completed(), s.submitted);
  const writer_breakdown& b = w.breakdown();
  EXPECT_EQ(b.transactions_accepted, s.accepted());
  EXPECT_EQ(b.transactions_rejected, s.rejected());
  EXPECT_EQ(b.transactions_shutdown, s.shutdown());
  std::uint64_t in_blocks = 0;
  std::uint64_t dropped = 0;
  for (const block_record& r : w.blocks()) {
    in_blocks += r.transactions;
    dropped += r.dropped;
  }
  EXPECT_EQ(s.accepted(), in_blocks + dropped + chain.pending_count());
}

// The writer is held inside its third block until the producers are braked with at least 64
// transactions in flight, so the stop finds transactions in the writer's batch and the queue.
TEST(ColonyWriter, StoppedRunLeavesNothingInFlight) {
  for (queue_policy policy : {queue_policy::unbounded, queue_policy::bounded}) {
    SCOPED_TRACE(to_string(policy));
    const core::chain_options options = unsigned_chain();
    core::chain chain(options);
    writer_queue queue(policy, 64);
    colony::colony producers(colony_of(options), queue, head_of(chain));
    writer_config wc;
    wc.block_transactions = 50;
    bool braked = false;  // written on the writer thread, read after join
    on_each_block observer([&](const block_record& r, const core::chain& c) {
      producers.on_block(head_of(c), {.transactions = r.transactions, .pending_after = r.pending_after});
      if (r.num < 3) return true;
      // Unbounded: the producers stop at their in-flight limit; bounded: on the full queue.
      braked = eventually([&] { return producers.stats().in_flight >= 64; });
      return false;
    });
    writer w(chain, queue, wc);
    w.observe(observer);
    producers.start();
    w.start();
    ASSERT_TRUE(eventually([&] { return queue.closed(); }));

    w.request_stop();
    producers.request_stop();
    queue.close();
    w.join();
    producers.join();
    ASSERT_FALSE(w.failed()) << w.error_message();
    EXPECT_TRUE(braked);

    const colony::colony_stats s = producers.stats();
    EXPECT_GT(s.accepted(), 0u);
    EXPECT_GT(s.shutdown(), 0u) << "the stop left transactions queued";
    expect_ledger(s, w, chain);
  }
}

// Stopped with no synchronisation at all, a few times over: the identity holds wherever the
// stop falls.
TEST(ColonyWriter, StopAnywhereKeepsTheLedger) {
  for (int round = 0; round < 6; ++round) {
    const queue_policy policy = round % 2 == 0 ? queue_policy::unbounded : queue_policy::bounded;
    SCOPED_TRACE(round);
    const core::chain_options options = unsigned_chain();
    core::chain chain(options);
    writer_queue queue(policy, 32);
    colony::colony producers(colony_of(options), queue, head_of(chain));
    writer_config wc;
    wc.block_transactions = 40;
    std::atomic<std::uint32_t> blocks{0};
    on_each_block observer([&](const block_record& r, const core::chain& c) {
      producers.on_block(head_of(c), {.transactions = r.transactions, .pending_after = r.pending_after});
      ++blocks;
      return true;
    });
    writer w(chain, queue, wc);
    w.observe(observer);
    producers.start();
    w.start();
    ASSERT_TRUE(eventually([&] { return blocks.load() >= static_cast<std::uint32_t>(1 + round); }));

    w.request_stop();
    producers.request_stop();
    queue.close();
    w.join();
    producers.join();
    ASSERT_FALSE(w.failed()) << w.error_message();
    expect_ledger(producers.stats(), w, chain);
  }
}

// Interrupted before the writer started: the producers filled the queue, and joining the
// writer that never ran answers all of it.
TEST(ColonyWriter, StoppedBeforeTheWriterStartedLeavesNothingInFlight) {
  const core::chain_options options = unsigned_chain();
  core::chain chain(options);
  writer_queue queue;
  colony::colony producers(colony_of(options), queue, head_of(chain));
  writer w(chain, queue, {});
  producers.start();
  ASSERT_TRUE(eventually([&] { return all_braked(producers); }));

  w.request_stop();
  producers.request_stop();
  queue.close();
  w.join();
  producers.join();

  const colony::colony_stats s = producers.stats();
  EXPECT_EQ(s.shutdown(), s.submitted);
  EXPECT_EQ(s.submitted, threads * in_flight_limit);
  expect_ledger(s, w, chain);
}

}  // namespace
}  // namespace apiary::queen
