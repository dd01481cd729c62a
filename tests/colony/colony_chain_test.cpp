// The colony against the real chain: a minimal writer thread (a stand-in for the queen)
// pushes every transaction into core::chain, calls the completion, and makes a block every
// `block_txs` pushes, reporting the new head to the colony. Proves the seam end to end: the
// genesis names and keys match, TaPoS and expiration follow the head, nonces never collide,
// and replies and votes only target comments the chain has; and the colony builds the mix
// the replay's workload builds from the same seed.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "apiary/colony/colony.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/colony/workload.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/submission.hpp"

namespace {

using namespace apiary;
using core::reject;

class chain_writer final : public core::transaction_sink {
 public:
  chain_writer(core::chain_options options, std::uint32_t block_txs)
      : chain_(std::move(options)), block_txs_(block_txs), writer_([this] { loop(); }) {}
  ~chain_writer() override { shutdown(); }

  colony::head_info head() const { return {chain_.head_block_num(), chain_.head_block_id(), chain_.head_block_time()}; }
  // Before the colony starts; read by the writer thread only after the first submission.
  void attach(colony::colony& c) { colony_ = &c; }

  using core::transaction_sink::submit;
  bool submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent /*intent*/) override {
    {
      std::lock_guard lock(mutex_);
      if (quit_) return false;
      queue_.push_back({std::move(tx), done});
    }
    cv_.notify_one();
    return true;
  }

  void shutdown() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    cv_.notify_one();
    if (writer_.joinable()) writer_.join();
  }

  // After shutdown(): the writer thread is gone.
  const core::chain& chain() const { return chain_; }
  std::uint32_t blocks() const { return blocks_; }
  std::uint64_t pushed() const { return pushed_; }
  const core::reject_counts& outcomes() const { return outcomes_; }

 private:
  struct item {
    core::full_transaction_ptr tx;
    core::tx_completion done;
  };

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || !queue_.empty(); });
      if (quit_) return;
      item it = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      const reject r = chain_.push_transaction(it.tx);
      outcomes_.add(r);
      it.done(*it.tx, r);
      if (++pushed_ % block_txs_ == 0) {
        const core::block_result applied = chain_.apply_block(chain_.generate_block());
        ++blocks_;
        colony_->on_block(head(), {applied.applied, chain_.pending_count()});
      }
      lock.lock();
    }
  }

  core::chain chain_;
  const std::uint32_t block_txs_;
  colony::colony* colony_ = nullptr;
  std::uint32_t blocks_ = 0;
  std::uint64_t pushed_ = 0;
  core::reject_counts outcomes_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<item> queue_;
  bool quit_ = false;
  std::thread writer_;
};

void run_against_chain(core::signer_source signers, bool attach) {
  core::chain_options options;
  options.genesis_accounts = 64;
  options.signers = signers;
  chain_writer writer(options, 120);

  colony::colony_config c;
  c.threads = 2;
  c.seed = 11;
  c.use_genesis_of(options);
  c.attach_signer_keys = attach;
  c.in_flight_limit = 50;
  c.transactions_per_thread = 600;

  std::optional<colony::colony> k(std::in_place, c, writer, writer.head());
  writer.attach(*k);
  k->start();
  k->join();
  for (int i = 0; i < 10000 && k->stats().in_flight > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  writer.shutdown();

  const colony::colony_stats s = k->stats();
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.submitted, 1200u);
  EXPECT_EQ(writer.pushed(), 1200u);
  EXPECT_EQ(writer.blocks(), 10u);
  for (std::size_t i = 1; i < core::reject_count; ++i)
    EXPECT_EQ(s.outcomes.by_reason[i], 0u) << core::reject_name(static_cast<reject>(i));
  EXPECT_EQ(s.accepted(), 1200u);
  EXPECT_EQ(s.outcomes.by_reason, writer.outcomes().by_reason);
  EXPECT_GT(s[colony::op_kind::vote].count, 100u);  // the ring filled from accepted comments
  EXPECT_GT(s.signing_cpu_ns, 0u);
  EXPECT_EQ(writer.chain().head_block_num(), 10u);
}

TEST(ColonyChain, EverySignedTransactionIsAcceptedWithAttachedKeys) {
  run_against_chain(core::signer_source::attached, true);
}

TEST(ColonyChain, EverySignedTransactionIsAcceptedWithRecoveredKeys) {
  run_against_chain(core::signer_source::recover, false);
}

// The colony and the workload `apiary replay` generates build one mix from one seed: kind by
// kind the same count, extra and packed bytes, although the colony's transactions reference
// the blocks made while it runs (30 here) and the workload's all reference the genesis. One
// thread waiting for each outcome, so that at every draw the ring holds the comments the
// workload's does (it remembers each as it is made, the colony each the chain accepted).
TEST(ColonyChain, BuildsTheWorkloadsMixKindByKind) {
  core::chain_options options;
  options.genesis_accounts = 300;
  chain_writer writer(options, 100);
  const colony::head_info genesis = writer.head();

  colony::colony_config c;
  c.threads = 1;
  c.seed = 5;
  c.use_genesis_of(options);
  c.submit = colony::submit_mode::sync;
  c.transactions_per_thread = 3000;

  std::optional<colony::colony> k(std::in_place, c, writer, genesis);
  writer.attach(*k);
  k->start();
  k->join();
  writer.shutdown();
  const colony::colony_stats s = k->stats();
  ASSERT_EQ(s.accepted(), c.transactions_per_thread);
  ASSERT_EQ(writer.blocks(), 30u);

  const colony::workload w = colony::generate_workload(c, c.transactions_per_thread, genesis);
  for (colony::op_kind kind : colony::all_op_kinds) {
    const colony::kind_totals& run = s[kind];
    const colony::kind_totals& replay = w.kinds[colony::index_of(kind)];
    EXPECT_EQ(run.count, replay.count) << colony::op_kind_name(kind);
    EXPECT_EQ(run.extra_bytes, replay.extra_bytes) << colony::op_kind_name(kind);
    EXPECT_EQ(run.packed_bytes, replay.packed_bytes)
        << colony::op_kind_name(kind) << ": " << s.average_packed_bytes(kind) << " bytes on average in the colony, "
        << static_cast<double>(replay.packed_bytes) / static_cast<double>(replay.count) << " in the workload";
  }
  EXPECT_GT(s[colony::op_kind::reply].count, 0u);  // every kind was made
  EXPECT_GT(s[colony::op_kind::transfer].count, 0u);
}

}  // namespace
