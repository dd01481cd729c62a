#include "apiary/queen/writer.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"

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

TEST(Writer, FillsBlocksWithinTheTargetAndCompletesEveryTransaction) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 600);
  txs.push_back(txs.front());  // a duplicate, rejected
  writer_queue queue;
  outcome_counter counter;
  writer_config cfg;
  cfg.block_size = 8 * 1024;
  std::uint64_t in_blocks = 0;
  writer w(chain, queue, cfg, [&](const block_record& r, const core::chain&) {
    in_blocks += r.transactions;
    return true;
  });
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
  writer w(chain, queue, cfg, [](const block_record&, const core::chain&) { return true; });
  outcome_counter counter;
  for (auto& tx : txs) queue.submit(tx, {&outcome_counter::count, &counter});
  w.start();
  while (counter.accepted + counter.rejected < 100) std::this_thread::yield();
  w.request_stop();
  w.join();
  ASSERT_EQ(w.blocks().size(), 10u);
  for (const block_record& r : w.blocks()) EXPECT_EQ(r.transactions, 10u);
}

TEST(Writer, CallbackCanStopTheWriterAndProducersAreReleased) {
  core::chain chain(small_chain());
  auto txs = make_transactions(chain, 300);
  writer_queue queue;
  writer_config cfg;
  cfg.block_transactions = 10;
  writer w(chain, queue, cfg, [](const block_record& r, const core::chain&) { return r.num < 3; });
  for (auto& tx : txs) queue.submit(tx, {});
  w.start();
  w.join();
  EXPECT_EQ(w.blocks().size(), 3u);
  EXPECT_TRUE(queue.closed()) << "a finished writer closes the queue so producers stop";
  EXPECT_FALSE(queue.submit(txs.front(), {}));
}

TEST(Writer, ExternalBlockRequestProducesABlock) {
  core::chain chain(small_chain());
  writer_queue queue;
  std::atomic<int> blocks{0};
  writer w(chain, queue, {}, [&](const block_record& r, const core::chain&) {
    ++blocks;
    EXPECT_EQ(r.transactions, 0u);
    return true;
  });
  w.start();
  queue.request_block();
  while (blocks.load() == 0) std::this_thread::yield();
  w.request_stop();
  w.join();
  EXPECT_GE(w.blocks().size(), 1u);
  EXPECT_EQ(chain.head_block_num(), w.blocks().back().num);
}

}  // namespace
}  // namespace apiary::queen
