// Blocks: generate_block's order and limits, apply_block's re-application of what did not
// fit, simulated time, reversible blocks, failures; conservation of funds; genesis.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

class ChainBlocks : public ::testing::TestWithParam<bool> {  // apply_block_in_session
 protected:
  ChainBlocks() : h(options_for(GetParam())) {}
  static core::chain_options options_for(bool in_session) {
    core::chain_options o = small_options(40);
    o.apply_block_in_session = in_session;
    return o;
  }
  // n custom_json transactions of about `payload` bytes, by accounts in turn, pushed.
  std::vector<core::full_transaction_ptr> push_many(std::size_t n, std::size_t payload, const std::string& tag) {
    std::vector<core::full_transaction_ptr> txs;
    for (std::size_t i = 0; i < n; ++i) {
      const account_name who = user(static_cast<std::uint32_t>(i % 40));
      auto t = h.make(custom_json(who, tag + std::to_string(i), "\"" + std::string(payload, 'z') + "\""), who);
      EXPECT_EQ(h.push(t), reject::none);
      txs.push_back(std::move(t));
    }
    return txs;
  }
  harness h;
};

TEST_P(ChainBlocks, GenerateBlockTakesPendingInOrderWithinSizeLimit) {
  const std::vector<core::full_transaction_ptr> txs = push_many(150, 300, "t");
  constexpr std::uint32_t limit = 10'000;
  std::size_t next = 0;  // the first transaction not yet in a block
  while (next < txs.size()) {
    SCOPED_TRACE(next);
    ASSERT_EQ(h.chain().pending_count(), txs.size() - next);
    std::size_t reported = 0;
    const core::full_block b = h.chain().generate_block(limit, 0, &reported);
    ASSERT_FALSE(b.transactions.empty());
    EXPECT_LE(b.packed_size(), limit);
    // The size the selection reports is the block's, byte for byte.
    EXPECT_EQ(reported, b.packed_size());
    core::out_buffer packed;
    b.pack_into(packed);
    EXPECT_EQ(reported, packed.size());
    // A prefix of the pending list, in order, and the next one would not have fitted.
    for (std::size_t i = 0; i < b.transactions.size(); ++i) EXPECT_EQ(b.transactions[i], txs[next + i]);
    const std::size_t end = next + b.transactions.size();
    if (end < txs.size()) {
      core::full_block bigger = b;
      bigger.transactions.push_back(txs[end]);
      EXPECT_GT(bigger.packed_size(), limit);
    }
    // generate_block changes nothing.
    EXPECT_EQ(h.chain().pending_count(), txs.size() - next);
    const core::block_result r = h.chain().apply_block(b);
    EXPECT_EQ(r.applied, b.transactions.size());
    EXPECT_EQ(r.reapplied, txs.size() - end);
    EXPECT_EQ(r.dropped, 0u);
    // What did not fit leads the pending list, in the same order.
    for (std::size_t i = 0; i < h.chain().pending().size(); ++i) EXPECT_EQ(h.chain().pending()[i], txs[end + i]);
    next = end;
  }
  EXPECT_EQ(h.chain().pending_count(), 0u);
  EXPECT_EQ(h.transaction_index_size(), txs.size());
  for (const auto& t : txs) EXPECT_TRUE(h.chain().is_known_transaction(t->id()));
}

TEST_P(ChainBlocks, MaxTransactions) {
  push_many(10, 10, "m");
  const core::full_block b = h.chain().generate_block(core::chain_limits::max_block_size, 4);
  EXPECT_EQ(b.transactions.size(), 4u);
  EXPECT_EQ(h.chain().generate_block().transactions.size(), 10u);
  const core::block_result r = h.chain().apply_block(b);
  EXPECT_EQ(r.applied, 4u);
  EXPECT_EQ(r.reapplied, 6u);
  EXPECT_EQ(h.chain().pending_count(), 6u);
}

TEST_P(ChainBlocks, HeaderIsSignedAndChained) {
  push_many(5, 20, "h");
  const core::block_id parent = h.chain().head_block_id();
  const core::time_point_sec parent_time = h.chain().head_block_time();
  const core::full_block b = h.chain().generate_block();
  EXPECT_EQ(b.header.previous, parent);
  EXPECT_EQ(b.header.timestamp, parent_time + core::chain_limits::block_interval_secs);
  EXPECT_EQ(b.header.witness, account_name(h.chain().options().witness));
  EXPECT_EQ(b.header.transaction_merkle_root, b.compute_merkle_root());
  EXPECT_EQ(core::recover_public_key(b.header.witness_signature, core::header_digest(b.header)),
            h.chain().witness_key().public_key());
  h.chain().apply_block(b);
  EXPECT_EQ(h.chain().head_block_num(), 1u);
  EXPECT_EQ(h.chain().head_block_id(), core::compute_block_id(b.header));
  EXPECT_EQ(h.chain().head_block_time(), parent_time + 3);
  // Transactions can name the new head as their reference block.
  EXPECT_EQ(h.push(h.make(custom_json(user(1), "after"), user(1))), reject::none);
}

TEST_P(ChainBlocks, SimulatedTimeOneSlotPerBlock) {
  const core::time_point_sec start = h.chain().head_block_time();
  for (std::uint32_t i = 1; i <= 20; ++i) {
    h.produce();
    EXPECT_EQ(h.chain().head_block_num(), i);
    EXPECT_EQ(h.chain().head_block_time(), start + 3 * i);
  }
}

TEST_P(ChainBlocks, ReversibleBlocksAreCommitted) {
  for (int i = 0; i < 10; ++i) {
    push_many(3, 5, std::string("r").append(std::to_string(i)).append("_"));
    h.produce();
  }
  // Block sessions are kept for reversible_blocks, then committed; the pending one on top.
  const std::size_t blocks = GetParam() ? h.chain().options().reversible_blocks : 0;
  EXPECT_EQ(h.chain().db().undo_depth(), blocks + 1);
}

TEST_P(ChainBlocks, BlockNotOnHeadRejected) {
  push_many(3, 5, "x");
  core::full_block b = h.chain().generate_block();
  b.header.previous.data[5] ^= 1;
  const core::sha256_digest before = h.chain().state_digest();
  EXPECT_THROW(h.chain().apply_block(b), std::invalid_argument);
  EXPECT_EQ(h.chain().state_digest(), before);
  EXPECT_EQ(h.chain().pending_count(), 3u);
}

TEST_P(ChainBlocks, FailingBlockRestoresPending) {
  push_many(3, 5, "x");
  // A block from elsewhere whose second transaction cannot apply here.
  core::full_block b = h.chain().generate_block();
  b.transactions.insert(b.transactions.begin() + 1,
                        h.make(transfer(user(30), user(31), genesis_balance + 1), user(30), key_role::active));
  const core::sha256_digest before = h.chain().state_digest();
  const core::block_id head = h.chain().head_block_id();
  EXPECT_THROW(h.chain().apply_block(b), std::invalid_argument);
  EXPECT_EQ(h.chain().head_block_id(), head);
  if (GetParam()) {
    // strong: the block is undone and every pending transaction is back.
    EXPECT_EQ(h.chain().state_digest(), before);
    EXPECT_EQ(h.chain().pending_count(), 3u);
    EXPECT_EQ(h.produce().applied, 3u);
  } else {
    // basic: the first transaction stayed applied (and included), the others are pending.
    EXPECT_EQ(h.chain().pending_count(), 2u);
    EXPECT_EQ(h.produce().applied, 2u);
  }
  // The chain goes on.
  EXPECT_EQ(h.push(h.make(custom_json(user(1), "later"), user(1))), reject::none);
  h.produce();
  EXPECT_EQ(h.chain().pending_count(), 0u);
}

// A block that is not a prefix of the pending list (another producer's): what it included
// leaves the pending list, the rest is applied again.
TEST_P(ChainBlocks, ForeignBlockOrder) {
  const std::vector<core::full_transaction_ptr> txs = push_many(6, 5, "f");
  core::full_block b = h.chain().generate_block();
  b.transactions = {txs[3], txs[1]};
  b.header.transaction_merkle_root = b.compute_merkle_root();
  const core::block_result r = h.chain().apply_block(b);
  EXPECT_EQ(r.applied, 2u);
  EXPECT_EQ(r.reapplied, 4u);
  ASSERT_EQ(h.chain().pending_count(), 4u);
  EXPECT_EQ(h.chain().pending()[0], txs[0]);
  EXPECT_EQ(h.chain().pending()[1], txs[2]);
  EXPECT_EQ(h.chain().pending()[3], txs[5]);
}

INSTANTIATE_TEST_SUITE_P(Session, ChainBlocks, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& p) {
  return p.param ? std::string("InSession") : std::string("NoSession");
});

// ---- conservation -----------------------------------------------------------------------

class ChainConservation : public ::testing::TestWithParam<modes> {};

TEST_P(ChainConservation, RandomTransfersNeverChangeTheSum) {
  constexpr std::uint32_t accounts = 12;
  harness h(small_options(accounts, GetParam()));
  const std::int64_t total = h.chain().total_hive() + h.chain().total_hbd();
  ASSERT_EQ(total, 2 * genesis_balance * accounts);
  std::mt19937_64 rng(7);
  std::uint64_t accepted = 0, rejected = 0;
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 60; ++i) {
      const auto from = static_cast<std::uint32_t>(rng() % accounts);
      // Sometimes an account that does not exist, sometimes the wrong key.
      const account_name to =
          rng() % 20 == 0 ? account_name("nobody") : user(static_cast<std::uint32_t>(rng() % accounts));
      const auto amount = static_cast<std::int64_t>(rng() % (genesis_balance / 2)) + 1;
      const key_role role = rng() % 15 == 0 ? key_role::posting : key_role::active;
      core::transaction t =
          h.tx(60, transfer(user(from), to, amount, rng() % 2 == 0, "r" + std::to_string(round * 100 + i)));
      // Now and then a second transfer in the same transaction, which may fail on its own.
      if (rng() % 4 == 0) t.operations.emplace_back(transfer(user(from), user(0), amount, rng() % 2 == 0));
      const reject r = h.push(h.sign(std::move(t), {{user(from), role}}));
      (r == reject::none ? accepted : rejected) += 1;
      ASSERT_EQ(h.chain().total_hive() + h.chain().total_hbd(), total);
    }
    // Small blocks so that some transfers are carried over and applied again.
    const core::block_result b = h.produce(3'000);
    EXPECT_GT(b.reapplied, 0u);
    ASSERT_EQ(h.chain().total_hive() + h.chain().total_hbd(), total);
    const core::chain_audit audit = h.chain().audit();
    EXPECT_TRUE(audit.ok()) << audit.violations.front();
  }
  while (h.chain().pending_count() > 0) {
    h.produce();
    ASSERT_EQ(h.chain().total_hive() + h.chain().total_hbd(), total);
  }
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(rejected, 50u);
  for (std::uint32_t i = 0; i < accounts; ++i) {
    EXPECT_GE(h.chain().find_account(user(i))->hive, 0);
    EXPECT_GE(h.chain().find_account(user(i))->hbd, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ChainConservation, ::testing::ValuesIn(all_modes()),
                         [](const ::testing::TestParamInfo<modes>& p) { return mode_name(p.param); });

// ---- audit ------------------------------------------------------------------------------

}  // namespace

namespace apiary::chain_test {

class ChainAudit : public ::testing::TestWithParam<bool> {
 protected:
  // A chain with blocks behind it (in sessions or not) and transactions pending.
  void SetUp() override {
    core::chain_options o = small_options(8);
    o.apply_block_in_session = GetParam();
    h_ = std::make_unique<harness>(o);
    for (std::uint32_t b = 0; b < 5; ++b) {
      for (std::uint32_t i = 0; i < 4; ++i)
        ASSERT_EQ(
            h_->push(h_->make(custom_json(user(i), std::string("a").append(std::to_string(b * 10 + i))), user(i))),
            reject::none);
      h_->produce();
    }
    ASSERT_EQ(h_->push(h_->make(custom_json(user(0), "pending"), user(0))), reject::none);
  }
  core::chain& chain() { return h_->chain(); }
  // The single violation audit() reports, which must mention `what`.
  void expect_one(std::string_view what) {
    const core::chain_audit a = h_->chain().audit();
    ASSERT_EQ(a.violations.size(), 1u) << (a.violations.empty() ? std::string("none") : a.violations.back());
    EXPECT_NE(a.violations.front().find(what), std::string::npos) << a.violations.front();
  }
  std::unique_ptr<harness> h_;
};

TEST_P(ChainAudit, AConsistentChainPasses) {
  const core::chain_audit a = h_->chain().audit();
  EXPECT_TRUE(a.ok()) << a.violations.front();
  EXPECT_EQ(a.undo_depth, GetParam() ? 4u : 1u);  // 3 reversible blocks and the pending session
  EXPECT_EQ(a.known_transactions, 21u);           // 20 included, 1 pending
}

TEST_P(ChainAudit, SupplyChange) {
  core::chain_test_access::mint(chain(), user(3), 1);
  expect_one("supply");
}

TEST_P(ChainAudit, AnExtraUndoSession) {
  core::database::session extra = core::chain_test_access::open_session(chain());
  expect_one("sessions");
  extra.undo();
}

TEST_P(ChainAudit, AnExpiredIdLeftBehind) {
  core::chain_test_access::remember_expired_id(chain());
  expect_one("expired");
}

TEST_P(ChainAudit, PendingIdsLost) {
  core::chain_test_access::forget_pending_ids(chain());
  const core::chain_audit a = h_->chain().audit();
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.violations.front().find("dedup"), std::string::npos) << a.violations.front();
}

TEST_P(ChainAudit, ManaBelowZero) {
  core::chain_test_access::overdraw_mana(chain(), user(2));
  expect_one("mana below zero");
}

TEST_P(ChainAudit, APendingChargeThatIsNotPositive) {
  core::chain_test_access::overcharge_pending(chain(), user(2));
  expect_one("pending charges");
}

TEST_P(ChainAudit, APoolAboveItsMaximum) {
  core::chain_test_access::overfill_pool(chain());
  expect_one("state_bytes pool");
}

TEST_P(ChainAudit, VestingThatDoesNotAddUp) {
  core::chain_test_access::mint_vesting(chain(), user(2));
  expect_one("vesting sums");
}

TEST_P(ChainAudit, CustomOpsAboveTheLimit) {
  core::chain_test_access::exceed_custom_ops(chain(), user(5));
  expect_one("custom ops");
}

INSTANTIATE_TEST_SUITE_P(Session, ChainAudit, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& p) {
  return p.param ? std::string("InSession") : std::string("NoSession");
});

// ---- genesis ----------------------------------------------------------------------------

TEST(ChainGenesis, Accounts) {
  harness h(small_options(100));
  EXPECT_EQ(h.chain().head_block_num(), 0u);
  EXPECT_EQ(h.chain().total_hive(), 100 * genesis_balance);
  const core::account_object* a = h.chain().find_account(user(42));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->posting_key, h.keys().public_key(user(42), key_role::posting));
  EXPECT_EQ(a->active_key, h.keys().public_key(user(42), key_role::active));
  EXPECT_EQ(h.chain().find_account(user(100)), nullptr);
  EXPECT_EQ(h.chain().pending_count(), 0u);
}

// Timed for the record (printed), not asserted: machines differ.
TEST(ChainGenesis, HundredThousandAccounts) {
  core::chain_options o;
  o.genesis_accounts = 100'000;
  const auto start = std::chrono::steady_clock::now();
  core::chain c(o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ genesis  ] 100,000 accounts in %.2f s\n", secs);
  RecordProperty("genesis_100k_ms", static_cast<int>(secs * 1000));
  EXPECT_EQ(c.db().get_index<core::account_index>().size(), 100'001u);  // and the witness's
  EXPECT_NE(c.find_account(core::genesis_account_name("user", 99'999)), nullptr);
  EXPECT_EQ(c.find_account(core::genesis_account_name("user", 99'999))->active_key,
            core::private_key::from_login("user99999", key_role::active, o.key_password).public_key());
  EXPECT_EQ(c.total_hive(), o.genesis_hive * 100'000);
}

// A cancelled genesis stops within a few hundred accounts per worker, not after all of them.
TEST(ChainGenesis, CancelledGenesisStopsAtOnceAndThrows) {
  core::chain_options o;
  o.genesis_accounts = 1'000'000;
  std::atomic<int> asked{0};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(core::chain(o, [&] { return ++asked > 3; }), core::genesis_cancelled);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 5.0);  // all of them: tens of seconds
  EXPECT_GE(asked.load(), 4);
  // Never cancelled: the callback is asked, and the genesis is whole.
  o.genesis_accounts = 3'000;
  core::chain c(o, [] { return false; });
  EXPECT_EQ(c.db().get_index<core::account_index>().size(), 3'001u);  // and the witness's
}

}  // namespace apiary::chain_test
