#include "apiary/queen/writer_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace apiary::queen {
namespace {

core::full_transaction_ptr dummy_tx(std::uint16_t n) {
  core::signed_transaction tx;
  tx.ref_block_num = n;
  return std::make_shared<const core::full_transaction>(tx, core::hive_mainnet_chain_id());
}

// A take on an empty queue, and `action` from another thread 20 ms later: what the take
// returned, and how long it waited.
template <class Action>
std::pair<queue_batch, queue_wait> take_until(writer_queue& q, Action action) {
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    action();
  });
  queue_batch b;
  queue_wait w;
  q.take(b, w);
  other.join();
  return {std::move(b), w};
}

TEST(WriterQueue, TakesEverythingQueuedInOrder) {
  writer_queue q;
  for (std::uint16_t i = 0; i < 5; ++i) ASSERT_TRUE(q.submit(dummy_tx(i), {}));
  queue_batch b;
  queue_wait w;
  q.take(b, w);
  ASSERT_EQ(b.txs.size(), 5u);
  for (std::uint16_t i = 0; i < 5; ++i) EXPECT_EQ(b.txs[i].tx->tx().ref_block_num, i);
  EXPECT_EQ(b.block_requests, 0u);
  EXPECT_FALSE(b.closed);
  EXPECT_EQ(q.high_water(), 5u);
}

TEST(WriterQueue, BlockRequestsComeWithTheBatch) {
  writer_queue q;
  q.request_block();
  q.request_block();
  queue_batch b;
  queue_wait w;
  q.take(b, w);
  EXPECT_EQ(b.block_requests, 2u);
  EXPECT_TRUE(b.txs.empty());
}

TEST(WriterQueue, CloseWakesTheWriterAndRefusesSubmits) {
  writer_queue q;
  const auto [b, w] = take_until(q, [&] { q.close(); });  // returns once closed
  EXPECT_TRUE(b.closed);
  EXPECT_GT(w.work_ns, 0);
  EXPECT_FALSE(q.submit(dummy_tx(1), {}));
}

// wake() makes a waiting take return with nothing: no block request, not closed, and the
// queue goes on (the writer uses it to look at its stop flag). A wake is used once.
TEST(WriterQueue, WakeReturnsAWaitingTakeWithNothing) {
  writer_queue q;
  auto [b, w] = take_until(q, [&] { q.wake(); });  // returns once woken
  EXPECT_TRUE(b.txs.empty());
  EXPECT_EQ(b.block_requests, 0u);
  EXPECT_FALSE(b.closed);
  EXPECT_GT(w.work_ns, 0);
  ASSERT_TRUE(q.submit(dummy_tx(1), {}));
  q.take(b, w);  // the wake was used: this take returns for the submit
  EXPECT_EQ(b.txs.size(), 1u);
}

// A writer woken from an empty queue waits the gather time before it takes: what comes
// meanwhile is in the same batch.
TEST(WriterQueue, GatherTimeBringsLaterSubmitsIntoTheSameBatch) {
  writer_queue q(queue_policy::unbounded, 0, 300'000'000);
  queue_batch b;
  queue_wait w;
  std::thread writer([&] { q.take(b, w); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the writer waits on an empty queue
  ASSERT_TRUE(q.submit(dummy_tx(1), {}));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(q.submit(dummy_tx(2), {}));
  writer.join();
  ASSERT_EQ(b.txs.size(), 2u);
  EXPECT_EQ(b.txs[1].tx->tx().ref_block_num, 2);
  EXPECT_GE(w.work_ns, 300'000'000);  // the gather counts as waiting for work
}

// A block request (or close) does not wait out the gather time.
TEST(WriterQueue, BlockRequestCutsTheGatherShort) {
  writer_queue q(queue_policy::unbounded, 0, 60'000'000'000);
  queue_batch b;
  queue_wait w;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread writer([&] { q.take(b, w); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(q.submit(dummy_tx(1), {}));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  q.request_block();
  writer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(b.txs.size(), 1u);
  EXPECT_EQ(b.block_requests, 1u);
}

TEST(WriterQueue, BoundedQueueMakesProducersWait) {
  writer_queue q(queue_policy::bounded, 2);
  ASSERT_TRUE(q.submit(dummy_tx(0), {}));
  ASSERT_TRUE(q.submit(dummy_tx(1), {}));
  std::atomic<bool> third_in{false};
  std::thread producer([&] {
    q.submit(dummy_tx(2), {});
    third_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(third_in.load()) << "a full bounded queue must block the producer";
  queue_batch b;
  queue_wait w;
  q.take(b, w);
  EXPECT_EQ(b.txs.size(), 2u);
  producer.join();
  EXPECT_TRUE(third_in.load());
  EXPECT_EQ(q.full_waits(), 1u);
  EXPECT_LE(q.high_water(), 2u);
}

TEST(WriterQueue, ClosingReleasesAProducerWaitingOnAFullQueue) {
  writer_queue q(queue_policy::bounded, 1);
  ASSERT_TRUE(q.submit(dummy_tx(0), {}));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = q.submit(dummy_tx(1), {}) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  q.close();
  producer.join();
  EXPECT_EQ(result.load(), 0);
}

TEST(WriterQueue, DrainClosesAndReturnsEverythingQueuedInOrder) {
  writer_queue q;
  for (std::uint16_t i = 0; i < 3; ++i) ASSERT_TRUE(q.submit(dummy_tx(i), {}));
  q.request_block();
  const std::vector<queued_tx> rest = q.drain();
  ASSERT_EQ(rest.size(), 3u);
  for (std::uint16_t i = 0; i < 3; ++i) EXPECT_EQ(rest[i].tx->tx().ref_block_num, i);
  EXPECT_TRUE(q.closed());
  EXPECT_FALSE(q.submit(dummy_tx(3), {})) << "nothing is queued after the drain";
  EXPECT_TRUE(q.drain().empty());
}

TEST(WriterQueue, DrainRefusesAProducerWaitingOnAFullQueue) {
  writer_queue q(queue_policy::bounded, 1);
  ASSERT_TRUE(q.submit(dummy_tx(0), {}));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = q.submit(dummy_tx(1), {}) ? 1 : 0; });
  while (q.full_waits() == 0) std::this_thread::yield();
  const std::vector<queued_tx> rest = q.drain();
  producer.join();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].tx->tx().ref_block_num, 0u);
  EXPECT_EQ(result.load(), 0) << "the waiting submit is refused, not queued behind the drain";
}

// Producers submit until refused while the consumer takes, closes and drains: every submit
// that returned true is in exactly one batch or in the drain, none is lost.
TEST(WriterQueue, EveryTakenSubmitIsTakenOrDrainedOnce) {
  for (queue_policy policy : {queue_policy::unbounded, queue_policy::bounded}) {
    writer_queue q(policy, 16);
    constexpr int producers = 3;
    std::atomic<std::uint64_t> taken_by_queue{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        const core::full_transaction_ptr tx = dummy_tx(static_cast<std::uint16_t>(p));
        std::uint64_t n = 0;
        while (q.submit(tx, {})) ++n;
        taken_by_queue += n;
      });
    std::uint64_t handed_out = 0;
    queue_batch b;
    queue_wait w;
    for (int i = 0; i < 20; ++i) {
      q.take(b, w);
      handed_out += b.txs.size();
      b.txs.clear();
    }
    q.close();
    handed_out += q.drain().size();
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(handed_out, taken_by_queue.load()) << to_string(policy);
  }
}

TEST(QueuePolicy, NameTableRoundTrips) {
  EXPECT_EQ(to_string(queue_policy::unbounded), "unbounded");
  EXPECT_EQ(to_string(queue_policy::bounded), "bounded");
  for (const auto& entry : queue_policy_names) {
    EXPECT_EQ(to_string(entry.value), entry.name);
    EXPECT_EQ(core::value_of(queue_policy_names, entry.name), entry.value);
  }
  EXPECT_EQ(core::names_text(queue_policy_names), "unbounded|bounded");
  EXPECT_FALSE(core::value_of(queue_policy_names, "lossy").has_value());
}

}  // namespace
}  // namespace apiary::queen
