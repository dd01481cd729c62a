// Microbenchmarks of the writer queue (queen/writer_queue.hpp), the seam every transaction
// crosses between the colony's producer threads and the writer.
//
//   BM_WriterQueueSubmit                 one thread submitting into the unbounded queue,
//                                        taking everything every 1,024 submits: the
//                                        uncontended cost of a submit
//   BM_WriterQueueProducers/producers:N  N producer threads each submitting 10,000
//                                        transactions while one consumer (the benchmark's
//                                        thread, as the writer) takes whatever is queued
//                                        and answers each; items are transactions through
//                                        the queue, in wall time. items_per_take is the
//                                        consumer's average batch.
//   BM_TimingOutboxWriter                the writer's side of the latency records
//                                        (queen/tx_timing.hpp): handing over a batch of
//                                        10,000 answered transactions and settling the
//                                        block that holds them all
//   BM_TimingOutboxTake                  the consumer's side: building those 10,000
//                                        records and releasing the batch and the block
//                                        (the harness's main thread, every 50 ms)
//
// A transaction is one full_transaction built once per thread and submitted again and again:
// the queue never looks inside it. Each submit copies its pointer (one atomic increment the
// colony, which moves its new transaction in, does not pay) and each answered item releases
// it, on the consumer's side, as the writer does.
#include <benchmark/benchmark.h>

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/submission.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/transaction.hpp"
#include "apiary/queen/tx_timing.hpp"
#include "apiary/queen/writer_queue.hpp"

namespace {

using namespace apiary;

constexpr std::size_t per_producer = 10'000;
constexpr std::size_t take_every = 1024;

core::full_transaction_ptr make_tx() {
  core::signed_transaction tx;
  tx.ref_block_num = 1;
  return std::make_shared<const core::full_transaction>(tx, core::hive_mainnet_chain_id());
}

// The consumer's completion: counts the answers.
void count_answer(void* ctx, const core::full_transaction&, core::reject) { ++*static_cast<std::uint64_t*>(ctx); }

void BM_WriterQueueSubmit(benchmark::State& state) {
  const core::full_transaction_ptr tx = make_tx();
  queen::writer_queue queue;
  queen::queue_batch batch;
  queen::queue_wait wait;
  std::size_t queued = 0;
  for (auto _ : state) {
    queue.submit(tx, {});
    if (++queued == take_every) {
      queue.take(batch, wait);
      batch.txs.clear();
      queued = 0;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WriterQueueSubmit);

// N producer threads that, at each round, submit their share and wait for the next round.
class producer_threads {
 public:
  producer_threads(queen::writer_queue& queue, std::size_t n, core::tx_completion done)
      : start_(static_cast<std::ptrdiff_t>(n + 1)), finished_(static_cast<std::ptrdiff_t>(n + 1)) {
    for (std::size_t i = 0; i < n; ++i) threads_.emplace_back([this, &queue, done] { produce(queue, done); });
  }
  ~producer_threads() {
    stop_.store(true);
    start_.arrive_and_wait();
    for (std::thread& t : threads_) t.join();
  }
  producer_threads(const producer_threads&) = delete;
  producer_threads& operator=(const producer_threads&) = delete;

  void start_round() { start_.arrive_and_wait(); }
  void end_round() { finished_.arrive_and_wait(); }

 private:
  void produce(queen::writer_queue& queue, core::tx_completion done) {
    const core::full_transaction_ptr tx = make_tx();  // its own: no shared reference count
    for (;;) {
      start_.arrive_and_wait();
      if (stop_.load()) return;
      for (std::size_t k = 0; k < per_producer; ++k) queue.submit(tx, done);
      finished_.arrive_and_wait();
    }
  }

  std::barrier<> start_;
  std::barrier<> finished_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

void BM_WriterQueueProducers(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  queen::writer_queue queue;
  std::uint64_t answered = 0;
  std::uint64_t takes = 0;
  {
    producer_threads producers(queue, n, core::tx_completion{&count_answer, &answered});
    queen::queue_batch batch;
    queen::queue_wait wait;
    for (auto _ : state) {
      producers.start_round();
      std::size_t got = 0;
      while (got < n * per_producer) {
        queue.take(batch, wait);
        ++takes;
        got += batch.txs.size();
        for (const queen::queued_tx& q : batch.txs) q.done(*q.tx, core::reject::none);
        batch.txs.clear();
      }
      producers.end_round();
    }
  }
  const std::int64_t items = state.iterations() * static_cast<std::int64_t>(n * per_producer);
  if (answered != static_cast<std::uint64_t>(items)) state.SkipWithError("not every transaction was answered");
  state.SetItemsProcessed(items);
  state.counters["items_per_take"] = takes == 0 ? 0.0 : static_cast<double>(answered) / static_cast<double>(takes);
}
BENCHMARK(BM_WriterQueueProducers)->ArgName("producers")->Arg(1)->Arg(2)->Arg(4)->UseRealTime();

// ---- the latency records' outbox ----

constexpr std::size_t block_transactions = 10'000;

// Distinct transactions (their ids differ), as a block holds.
const std::vector<core::full_transaction_ptr>& block_of_transactions() {
  static const std::vector<core::full_transaction_ptr> txs = [] {
    std::vector<core::full_transaction_ptr> out;
    for (std::size_t i = 0; i < block_transactions; ++i) {
      core::signed_transaction tx;
      tx.ref_block_num = static_cast<std::uint16_t>(i);
      tx.ref_block_prefix = static_cast<std::uint32_t>(i >> 16);
      out.push_back(std::make_shared<const core::full_transaction>(tx, core::hive_mainnet_chain_id()));
    }
    return out;
  }();
  return txs;
}

// One block's worth at a time: the batch every transaction came in, all accepted, then the
// block holding them all, handed over and taken.
struct outbox_rounds {
  queen::timing_outbox outbox;
  std::vector<queen::queued_tx> batch;
  std::vector<queen::push_outcome> outcomes;
  std::vector<core::full_transaction_ptr> block;
  std::vector<queen::tx_timing> records;
  std::uint64_t pushes = 0;

  void fill() {
    const auto& txs = block_of_transactions();
    for (std::size_t i = 0; i < txs.size(); ++i) {
      const auto t = static_cast<std::int64_t>(i);
      batch.push_back({txs[i], {}, core::tx_intent{t, 1}, t + 1});
      outcomes.push_back({core::reject::none, t + 2});
    }
    block = txs;
  }
  void hand_over() {
    outbox.hand_over(batch, outcomes);
    pushes += block_transactions;
    queen::settled_block b;
    b.applied_ns = static_cast<std::int64_t>(pushes);
    b.transactions = std::move(block);
    outbox.hand_over_block(pushes, std::move(b), {});
  }
  void take() { outbox.take(records); }
  void check(benchmark::State& state) {
    if (records.size() != block_transactions) state.SkipWithError("a record is missing");
    records.clear();
  }
};

void BM_TimingOutboxWriter(benchmark::State& state) {
  outbox_rounds r;
  for (auto _ : state) {
    state.PauseTiming();
    r.fill();
    state.ResumeTiming();
    r.hand_over();
    state.PauseTiming();
    r.take();
    r.check(state);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(block_transactions));
}
BENCHMARK(BM_TimingOutboxWriter);

void BM_TimingOutboxTake(benchmark::State& state) {
  outbox_rounds r;
  for (auto _ : state) {
    state.PauseTiming();
    r.fill();
    r.hand_over();
    state.ResumeTiming();
    r.take();
    state.PauseTiming();
    r.check(state);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(block_transactions));
}
BENCHMARK(BM_TimingOutboxTake);

}  // namespace

BENCHMARK_MAIN();
