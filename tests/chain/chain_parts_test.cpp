// The chain's two switch-owning parts on their own, in both modes each: dedup_index and
// custom_op_counter, driven over a bare database in the order the chain drives them; and its
// RC books (rc_books), driven as the chain's pushes and blocks drive them.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/custom_op_counter.hpp"
#include "apiary/core/chain/dedup_index.hpp"
#include "apiary/core/chain/rc_books.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/state/database.hpp"
#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using core::reject;
using core::time_point_sec;

// ---- dedup_index --------------------------------------------------------------------------

core::full_transaction_ptr unsigned_tx(std::uint32_t expiration, const std::string& tag) {
  core::signed_transaction t;
  t.expiration = time_point_sec{expiration};
  t.operations.emplace_back(chain_test::custom_json(chain_test::user(0), tag));
  return std::make_shared<const core::full_transaction>(std::move(t), core::hive_mainnet_chain_id());
}

class DedupIndex : public ::testing::TestWithParam<core::dedup_mode> {
 protected:
  DedupIndex()
      : index_(db_.add_index<core::transaction_index>()),
        dedup_(GetParam(), index_),
        pending_(db_.start_undo_session()) {}
  bool unified() const { return GetParam() == core::dedup_mode::unified; }

  // As chain::push_transaction: the id goes in around the squash of the transaction's session.
  void push(const core::full_transaction_ptr& tx) {
    core::database::session s = db_.start_undo_session();
    dedup_.add_pending_before_squash(*tx);
    s.squash();
    dedup_.add_pending_after_squash(tx->id());
  }
  // As chain::clear_pending.
  void clear_pending() {
    pending_.undo();
    dedup_.clear_pending();
    pending_ = db_.start_undo_session();
  }

  core::database db_;
  core::transaction_index& index_;
  core::dedup_index dedup_;
  core::database::session pending_;
};

TEST_P(DedupIndex, PendingIdIsKnownUntilCleared) {
  const auto tx = unsigned_tx(100, "a");
  EXPECT_FALSE(dedup_.contains(tx->id()));
  push(tx);
  EXPECT_TRUE(dedup_.contains(tx->id()));
  EXPECT_EQ(index_.size(), unified() ? 1u : 0u);  // unified: pending ids in the index too
  clear_pending();
  EXPECT_FALSE(dedup_.contains(tx->id()));
  EXPECT_EQ(index_.size(), 0u);
}

TEST_P(DedupIndex, FailureBeforeTheSquashLeavesNoId) {
  const auto tx = unsigned_tx(100, "a");
  {
    core::database::session s = db_.start_undo_session();
    dedup_.add_pending_before_squash(*tx);
    // The transaction fails here: its session is undone, add_pending_after_squash never runs.
  }
  EXPECT_FALSE(dedup_.contains(tx->id()));
  EXPECT_EQ(index_.size(), 0u);
}

TEST_P(DedupIndex, IncludedIdsStayUntilTheyExpire) {
  const auto early = unsigned_tx(100, "early");
  const auto late = unsigned_tx(200, "late");
  dedup_.record_included(*early);
  dedup_.record_included(*late);
  EXPECT_TRUE(dedup_.contains(early->id()));
  EXPECT_EQ(dedup_.prune_expired(time_point_sec{99}), 0u);
  EXPECT_EQ(dedup_.prune_expired(time_point_sec{100}), 1u);  // expiring at `now` is expired
  EXPECT_FALSE(dedup_.contains(early->id()));
  EXPECT_TRUE(dedup_.contains(late->id()));
  EXPECT_EQ(dedup_.prune_expired(time_point_sec{500}), 1u);
  EXPECT_EQ(index_.size(), 0u);
}

// A block's worth of ids expiring at once goes through prune_expired's pipeline, which reads
// a few dozen ids ahead of each removal: in the expiration order, past the last expired id
// and within one session, exactly the expired ids go, and undoing the session brings them back.
TEST_P(DedupIndex, ABatchOfExpiredIdsGoesAndComesBackWithItsSession) {
  std::vector<core::full_transaction_ptr> txs;
  for (std::uint32_t i = 0; i < 1'000; ++i) txs.push_back(unsigned_tx(100 + (i * 7919) % 200, std::to_string(i)));
  for (const auto& tx : txs) dedup_.record_included(*tx);
  pending_.push();  // what was recorded so far stays
  const time_point_sec now{150};
  std::uint32_t expired = 0;
  for (const auto& tx : txs) expired += tx->tx().expiration <= now ? 1u : 0u;
  ASSERT_GT(expired, 100u);
  {
    core::database::session block = db_.start_undo_session();
    EXPECT_EQ(dedup_.prune_expired(now), expired);
    for (const auto& tx : txs) EXPECT_EQ(dedup_.contains(tx->id()), tx->tx().expiration > now);
    EXPECT_EQ(index_.size(), txs.size() - expired);
    EXPECT_EQ(dedup_.prune_expired(now), 0u);
  }  // undone
  EXPECT_EQ(index_.size(), txs.size());
  for (const auto& tx : txs) EXPECT_TRUE(dedup_.contains(tx->id()));
  EXPECT_EQ(dedup_.prune_expired(time_point_sec{1'000}), txs.size());
  EXPECT_EQ(index_.size(), 0u);
}

// The stall fix: a table sized for the ids it will hold never rehashes while it fills (its
// bucket count stays), where one left to grow rehashes each time it doubles.
TEST_P(DedupIndex, ATableSizedAheadNeverRehashesWhileItFills) {
  constexpr std::size_t expected = 20'000;
  core::database db;
  auto& index = db.add_index<core::transaction_index>();
  core::dedup_index sized(GetParam(), index, expected);
  const auto& by_id = index.get<core::by_trx_id>();
  const std::size_t buckets = by_id.bucket_count();
  EXPECT_GE(buckets, expected);
  core::database other;
  auto& grown = other.add_index<core::transaction_index>();
  core::dedup_index unsized(GetParam(), grown);
  std::size_t rehashes = 0;
  std::size_t last = grown.get<core::by_trx_id>().bucket_count();
  for (std::size_t i = 0; i < expected; ++i) {
    std::string memo = "t";
    memo += std::to_string(i);
    const auto tx = unsigned_tx(1'000, memo);
    sized.record_included(*tx);
    unsized.record_included(*tx);
    ASSERT_EQ(by_id.bucket_count(), buckets) << "rehashed at " << i;
    if (grown.get<core::by_trx_id>().bucket_count() != last) {
      ++rehashes;
      last = grown.get<core::by_trx_id>().bucket_count();
    }
  }
  EXPECT_GE(rehashes, 5u);  // what the sizing saves
}

TEST_P(DedupIndex, AuditCountsKnownIdsAndFindsBrokenOnes) {
  const auto included = unsigned_tx(200, "included");
  const auto pending = unsigned_tx(200, "pending");
  dedup_.record_included(*included);
  push(pending);
  const std::vector<core::full_transaction_ptr> list{pending};
  std::vector<std::string> violations;
  EXPECT_EQ(dedup_.audit(list, time_point_sec{100}, violations), 2u);
  EXPECT_TRUE(violations.empty()) << violations.front();

  // Expired ids left behind, a transaction pending twice, one pending and unknown.
  const auto unknown = unsigned_tx(50, "unknown");
  const std::vector<core::full_transaction_ptr> broken{pending, pending, unknown};
  dedup_.audit(broken, time_point_sec{300}, violations);
  ASSERT_GE(violations.size(), 4u);
  EXPECT_NE(violations[0].find("expired ids"), std::string::npos) << violations[0];
  EXPECT_NE(violations[1].find("pending twice"), std::string::npos) << violations[1];
  EXPECT_NE(violations[2].find("not known"), std::string::npos) << violations[2];
  EXPECT_NE(violations[3].find("have expired"), std::string::npos) << violations[3];
  // split also counts its volatile ids against the pending transactions.
  EXPECT_EQ(violations.size(), unified() ? 4u : 5u);
}

INSTANTIATE_TEST_SUITE_P(Modes, DedupIndex, ::testing::Values(core::dedup_mode::split, core::dedup_mode::unified),
                         [](const ::testing::TestParamInfo<core::dedup_mode>& p) {
                           return p.param == core::dedup_mode::split ? std::string("Split") : std::string("Unified");
                         });

// ---- custom_op_counter ----------------------------------------------------------------------

class CustomOpCounter : public ::testing::TestWithParam<core::counter_mode> {
 protected:
  CustomOpCounter()
      : index_(db_.add_index<core::custom_op_counter_index>()),
        counter_(GetParam(), index_),
        pending_(db_.start_undo_session()) {}

  // As chain::push_transaction: one count per custom operation's account, in the
  // transaction's session; committed after the squash, undone on a rejection.
  reject push(std::initializer_list<core::account_name> accounts) {
    core::database::session s = db_.start_undo_session();
    counter_.begin_transaction();
    for (const core::account_name& a : accounts)
      if (reject r = counter_.count(a); r != reject::none) return r;
    s.squash();
    counter_.commit_transaction();
    return reject::none;
  }
  // As chain::apply_block's start: a new block.
  void next_block() {
    pending_.undo();
    counter_.reset();
    pending_ = db_.start_undo_session();
  }

  core::database db_;
  core::custom_op_counter_index& index_;
  core::custom_op_counter counter_;
  core::database::session pending_;
  const core::account_name alice{"alice"};
  const core::account_name bob{"bob"};
};

TEST_P(CustomOpCounter, CountsUpToTheBlockLimit) {
  constexpr std::uint32_t limit = core::chain_limits::custom_op_block_limit;
  for (std::uint32_t i = 0; i < limit; ++i) ASSERT_EQ(push({alice}), reject::none);
  EXPECT_EQ(counter_.in_block(alice), limit);
  EXPECT_EQ(push({alice}), reject::custom_op_limit);
  EXPECT_EQ(counter_.in_block(alice), limit);
  EXPECT_EQ(push({bob}), reject::none);
  EXPECT_EQ(counter_.in_block(bob), 1u);
  EXPECT_EQ(counter_.accounts_above_limit(), 0u);
}

TEST_P(CustomOpCounter, ARejectedTransactionLeavesNoCount) {
  ASSERT_EQ(push({alice, alice, alice}), reject::none);
  // Within one transaction the counts add up too: the sixth is over the limit.
  EXPECT_EQ(push({bob, alice, alice, alice}), reject::custom_op_limit);
  EXPECT_EQ(counter_.in_block(alice), 3u);
  EXPECT_EQ(counter_.in_block(bob), 0u);
  EXPECT_EQ(push({alice, alice}), reject::none);
  EXPECT_EQ(counter_.in_block(alice), 5u);
}

TEST_P(CustomOpCounter, ANewBlockStartsFromZero) {
  ASSERT_EQ(push({alice, bob}), reject::none);
  next_block();
  EXPECT_EQ(counter_.in_block(alice), 0u);
  EXPECT_EQ(counter_.in_block(bob), 0u);
  EXPECT_EQ(index_.size(), 0u);
  EXPECT_EQ(push({alice}), reject::none);
  EXPECT_EQ(counter_.in_block(alice), 1u);
}

INSTANTIATE_TEST_SUITE_P(Modes, CustomOpCounter,
                         ::testing::Values(core::counter_mode::local, core::counter_mode::state),
                         [](const ::testing::TestParamInfo<core::counter_mode>& p) {
                           return p.param == core::counter_mode::local ? std::string("Local") : std::string("State");
                         });

// ---- rc_books ---------------------------------------------------------------------------------

core::rc_charge_sample vote_sample(std::int64_t cost) {
  core::rc_charge_sample s;
  s.kind = core::rc_op_kind::vote;
  s.cost[0] = cost;
  return s;
}

core::chain_options books_options(std::uint32_t rc_stats_blocks) {
  core::chain_options o;
  o.rc_stats_blocks = rc_stats_blocks;
  return o;
}

TEST(RcBooks, TheLastPendingTransactionTakenBackLeavesTheOthersUsage) {
  core::rc_books books(books_options(10));
  books.add_pending({1, 2, 3, 4}, vote_sample(5));
  books.remember_last({10, 20, 30, 40}, vote_sample(7));
  books.add_pending({10, 20, 30, 40}, vote_sample(7));
  EXPECT_EQ(books.pending_usage(), (core::rc_usage{11, 22, 33, 44}));
  EXPECT_EQ(books.pending_stats().transactions(), 2u);
  books.take_back_last();
  EXPECT_EQ(books.pending_usage(), (core::rc_usage{1, 2, 3, 4}));
  core::rc_stats one;
  one.add(vote_sample(5));
  EXPECT_EQ(books.pending_stats(), one);
  books.forget_pending();
  EXPECT_EQ(books.pending_usage(), core::rc_usage{});
  EXPECT_EQ(books.pending_stats(), core::rc_stats{});
}

TEST(RcBooks, BlocksArchiveAtMultiplesOfRcStatsBlocks) {
  core::rc_books books(books_options(2));
  core::global_properties_object g;
  core::rc_stats block;
  block.add(vote_sample(5));
  for (std::uint32_t num = 1; num <= 5; ++num) {
    if (num == 3) {
      books.count_rejection();
      books.count_rejection();
    }
    g.head_block_number = num;
    books.finish_block(block, g);
  }
  ASSERT_EQ(books.archives().size(), 2u);
  EXPECT_EQ(books.archives()[0].first_block, 1u);
  EXPECT_EQ(books.archives()[0].block, 2u);
  EXPECT_EQ(books.archives()[0].accepted, 2u);
  EXPECT_EQ(books.archives()[1].first_block, 3u);
  EXPECT_EQ(books.archives()[1].rejected_rc, 2u);
  EXPECT_EQ(books.stats().transactions(), 1u);  // block 5's, not archived yet
  EXPECT_EQ(books.reference()[0], 5);           // the archived votes' average cost
  const core::rc_status status = books.status(g);
  EXPECT_EQ(status.blocks, 5u);
  EXPECT_EQ(status.rejected, 2u);
  EXPECT_EQ(status.max_block_rejected, 2u);
}

TEST(RcBooks, WithoutStatisticsNoSampleIsKept) {
  core::rc_books books(books_options(0));
  EXPECT_FALSE(books.keeps_stats());
  books.add_pending({1, 0, 0, 0}, vote_sample(5));
  EXPECT_EQ(books.pending_stats(), core::rc_stats{});
  core::global_properties_object g;
  g.head_block_number = 1;
  books.finish_block(books.pending_stats(), g);
  EXPECT_TRUE(books.archives().empty());
  EXPECT_EQ(books.status(g).blocks, 1u);
}

TEST(RcBooks, ABadParameterIsRefusedByName) {
  core::chain_options o;
  o.rc_params[2].budget = -1;
  try {
    core::rc_books books(o);
    FAIL() << "a negative budget was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("state_bytes budget"), std::string::npos) << e.what();
  }
}

}  // namespace
