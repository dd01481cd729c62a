// Dedup across pending, blocks and expiry; the custom-operation limit; the evaluators.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

// ---- dedup ------------------------------------------------------------------------------

class ChainDedup : public ::testing::TestWithParam<modes> {
 protected:
  ChainDedup() : h(small_options(20, GetParam())) {}
  bool unified() const { return GetParam().dedup == core::dedup_mode::unified; }
  harness h;
};

TEST_P(ChainDedup, PendingDuplicateRejected) {
  auto t = h.make(custom_json(user(1), "once"), user(1));
  EXPECT_FALSE(h.chain().is_known_transaction(t->id()));
  ASSERT_EQ(h.push(t), reject::none);
  EXPECT_TRUE(h.chain().is_known_transaction(t->id()));
  // Pending ids live in the transaction index only in the unified variant.
  EXPECT_EQ(h.transaction_index_size(), unified() ? 1u : 0u);
  EXPECT_EQ(h.push(t), reject::duplicate);
  EXPECT_EQ(h.chain().pending_count(), 1u);
}

TEST_P(ChainDedup, IncludedDuplicateRejected) {
  auto t = h.make(custom_json(user(1), "once"), user(1));
  ASSERT_EQ(h.push(t), reject::none);
  const core::block_result r = h.produce();
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(h.chain().pending_count(), 0u);
  EXPECT_TRUE(h.chain().is_known_transaction(t->id()));
  EXPECT_EQ(h.transaction_index_size(), 1u);
  EXPECT_EQ(h.push(t), reject::duplicate);
  EXPECT_EQ(h.chain().pending_count(), 0u);
}

TEST_P(ChainDedup, ExpiredIdsArePruned) {
  // Expires 6 s after the head: still known after one block (+3 s), pruned at the second.
  auto t = h.make(custom_json(user(1), "short"), user(1), key_role::posting, 6);
  ASSERT_EQ(h.push(t), reject::none);
  core::block_result r = h.produce();
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(r.pruned, 0u);
  EXPECT_TRUE(h.chain().is_known_transaction(t->id()));
  EXPECT_EQ(h.transaction_index_size(), 1u);
  EXPECT_EQ(h.push(t), reject::duplicate);

  r = h.produce();
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(r.pruned, 1u);
  EXPECT_FALSE(h.chain().is_known_transaction(t->id()));
  EXPECT_EQ(h.transaction_index_size(), 0u);
  // Pruning loses nothing: the transaction is too old to be accepted again.
  EXPECT_EQ(h.push(t), reject::expired);
  EXPECT_EQ(h.chain().pending_count(), 0u);
}

TEST_P(ChainDedup, OnlyExpiredIdsArePruned) {
  std::vector<core::full_transaction_ptr> txs;
  for (std::uint32_t i = 0; i < 6; ++i) {
    txs.push_back(h.make(custom_json(user(i), "exp"), user(i), key_role::posting, 3 * (i + 1)));
    ASSERT_EQ(h.push(txs.back()), reject::none);
  }
  EXPECT_EQ(h.transaction_index_size(), unified() ? 6u : 0u);
  h.produce();  // head +3: the first expires with this block
  EXPECT_EQ(h.transaction_index_size(), 5u);
  for (std::uint32_t block = 2; block <= 6; ++block) {
    const core::block_result r = h.produce();
    EXPECT_EQ(r.pruned, 1u);
    EXPECT_EQ(h.transaction_index_size(), 6u - block);
    for (std::uint32_t i = 0; i < 6; ++i) EXPECT_EQ(h.chain().is_known_transaction(txs[i]->id()), i >= block);
  }
}

// A pending transaction that a block leaves out stays pending and known.
TEST_P(ChainDedup, CarriedOverTransactionStaysKnown) {
  auto a = h.make(custom_json(user(1), "a"), user(1));
  auto b = h.make(custom_json(user(2), "b"), user(2));
  ASSERT_EQ(h.push(a), reject::none);
  ASSERT_EQ(h.push(b), reject::none);
  const core::block_result r = h.produce(core::chain_limits::max_block_size, 1);
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(r.reapplied, 1u);
  EXPECT_TRUE(h.chain().is_known_transaction(a->id()));
  EXPECT_TRUE(h.chain().is_known_transaction(b->id()));
  EXPECT_EQ(h.push(b), reject::duplicate);
  EXPECT_EQ(h.transaction_index_size(), unified() ? 2u : 1u);
}

// A carried-over transaction that expires meanwhile is dropped and forgotten.
TEST_P(ChainDedup, CarriedOverTransactionDroppedWhenExpired) {
  auto a = h.make(custom_json(user(1), "a"), user(1));
  auto b = h.make(custom_json(user(2), "b"), user(2), key_role::posting, 3);
  ASSERT_EQ(h.push(a), reject::none);
  ASSERT_EQ(h.push(b), reject::none);
  const core::block_result r = h.produce(core::chain_limits::max_block_size, 1);
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(r.reapplied, 0u);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(h.chain().pending_count(), 0u);
  EXPECT_FALSE(h.chain().is_known_transaction(b->id()));
  EXPECT_EQ(h.chain().custom_ops_in_block(user(2)), 0u);
}

TEST_P(ChainDedup, ClearPendingForgetsPendingIds) {
  auto a = h.make(custom_json(user(1), "a"), user(1));
  ASSERT_EQ(h.push(a), reject::none);
  h.produce();
  const core::sha256_digest after_block = h.chain().state_digest();
  auto b = h.make(transfer(user(2), user(3), 7), user(2), key_role::active);
  ASSERT_EQ(h.push(b), reject::none);
  h.chain().clear_pending();
  EXPECT_EQ(h.chain().pending_count(), 0u);
  EXPECT_FALSE(h.chain().is_known_transaction(b->id()));
  EXPECT_TRUE(h.chain().is_known_transaction(a->id()));
  EXPECT_EQ(h.chain().state_digest(), after_block);
  EXPECT_EQ(h.push(b), reject::none);
}

INSTANTIATE_TEST_SUITE_P(Modes, ChainDedup, ::testing::ValuesIn(all_modes()),
                         [](const ::testing::TestParamInfo<modes>& p) { return mode_name(p.param); });

// ---- custom-operation limit -------------------------------------------------------------

class ChainCustomOps : public ::testing::TestWithParam<modes> {
 protected:
  ChainCustomOps() : h(small_options(20, GetParam())) {}
  reject push_cj(std::uint32_t who, const std::string& id) {
    return h.push(h.make(custom_json(user(who), id), user(who)));
  }
  harness h;
};

TEST_P(ChainCustomOps, FiveAcceptedSixthRejected) {
  for (std::uint32_t i = 0; i < core::chain_limits::custom_op_block_limit; ++i) {
    EXPECT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
    EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), i + 1);
  }
  EXPECT_EQ(push_cj(1, "op5"), reject::custom_op_limit);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 5u);
  // Other accounts are counted on their own.
  EXPECT_EQ(push_cj(2, "op0"), reject::none);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(2)), 1u);
  EXPECT_EQ(h.chain().find_account(user(1))->custom_op_count, 5u);
}

TEST_P(ChainCustomOps, CounterResetsAfterBlock) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  const core::block_result r = h.produce();
  EXPECT_EQ(r.applied, 5u);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 0u);
  for (int i = 5; i < 10; ++i) EXPECT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  EXPECT_EQ(push_cj(1, "op10"), reject::custom_op_limit);
  EXPECT_EQ(h.chain().find_account(user(1))->custom_op_count, 10u);
}

TEST_P(ChainCustomOps, SecondOperationOverLimitLeavesNoTrace) {
  for (int i = 0; i < 4; ++i) ASSERT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  auto two = h.sign(h.tx(60, custom_json(user(1), "first"), custom_json(user(1), "second")), {{user(1)}});
  const trace before = h.snapshot(two->id(), user(1));
  EXPECT_EQ(h.push(two), reject::custom_op_limit);
  EXPECT_EQ(h.snapshot(two->id(), user(1)), before);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 4u);
  // One more still fits.
  EXPECT_EQ(push_cj(1, "op4"), reject::none);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 5u);
}

TEST_P(ChainCustomOps, FailedTransactionDoesNotCount) {
  // The custom_json applies, then the transfer fails: its count must not stay.
  auto t = h.sign(h.tx(60, custom_json(user(1), "ok"), transfer(user(1), user(2), genesis_balance + 1)),
                  {{user(1), key_role::active}});
  EXPECT_EQ(h.push(t), reject::insufficient_funds);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 0u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
}

TEST_P(ChainCustomOps, EveryAuthorityCounts) {
  core::custom_json_operation op = custom_json(user(1), "pair");
  op.required_posting_auths.push_back(user(2));
  for (int i = 0; i < 3; ++i) {
    op.id = "pair" + std::to_string(i);
    ASSERT_EQ(h.push(h.sign(h.tx(60, op), {{user(1)}, {user(2)}})), reject::none);
  }
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 3u);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(2)), 3u);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(push_cj(2, "solo" + std::to_string(i)), reject::none);
  op.id = "pair3";
  EXPECT_EQ(h.push(h.sign(h.tx(60, op), {{user(1)}, {user(2)}})), reject::custom_op_limit);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 3u);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(2)), 5u);
}

// Transactions a block leaves out are applied again after it and count towards the next.
TEST_P(ChainCustomOps, CarriedOverTransactionsCountInNextBlock) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  const core::block_result r = h.produce(core::chain_limits::max_block_size, 3);
  EXPECT_EQ(r.applied, 3u);
  EXPECT_EQ(r.reapplied, 2u);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 2u);
  for (int i = 5; i < 8; ++i) EXPECT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  EXPECT_EQ(push_cj(1, "op8"), reject::custom_op_limit);
}

TEST_P(ChainCustomOps, ClearPendingResetsCounter) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(push_cj(1, "op" + std::to_string(i)), reject::none);
  h.chain().clear_pending();
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 0u);
  EXPECT_EQ(push_cj(1, "op0"), reject::none);
}

INSTANTIATE_TEST_SUITE_P(Modes, ChainCustomOps, ::testing::ValuesIn(all_modes()),
                         [](const ::testing::TestParamInfo<modes>& p) { return mode_name(p.param); });

// ---- evaluators -------------------------------------------------------------------------

class ChainEvaluators : public ::testing::Test {
 protected:
  ChainEvaluators() : h(small_options(20)) {}
  reject push(auto op, const account_name& by, key_role role = key_role::posting) {
    return h.push(h.make(std::move(op), by, role));
  }
  harness h;
};

TEST_F(ChainEvaluators, VoteCreatesAndChanges) {
  ASSERT_EQ(push(post(user(1), "p"), user(1)), reject::none);
  EXPECT_EQ(push(vote(user(2), user(1), "p", 0), user(2)), reject::invalid_operation);  // a new vote of 0
  EXPECT_EQ(push(vote(user(2), user(1), "p", 100), user(2)), reject::none);
  const core::comment_object* c = h.chain().find_comment(user(1), "p");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->vote_count, 1u);
  EXPECT_EQ(c->net_votes, 1);
  // Changed to a downvote: still one vote, net -1.
  EXPECT_EQ(push(vote(user(2), user(1), "p", -50), user(2)), reject::none);
  c = h.chain().find_comment(user(1), "p");
  EXPECT_EQ(c->vote_count, 1u);
  EXPECT_EQ(c->net_votes, -1);
  // Not to the same weight again (a later expiration makes it a new transaction).
  EXPECT_EQ(h.push(h.make(vote(user(2), user(1), "p", -50), user(2), key_role::posting, 61)),
            reject::invalid_operation);
  // Changed to 0 (a vote removal is allowed as a change).
  EXPECT_EQ(push(vote(user(2), user(1), "p", 0), user(2)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->net_votes, 0);
  // At most five changes.
  EXPECT_EQ(push(vote(user(2), user(1), "p", 1), user(2)), reject::none);
  EXPECT_EQ(push(vote(user(2), user(1), "p", 2), user(2)), reject::none);
  EXPECT_EQ(push(vote(user(2), user(1), "p", 3), user(2)), reject::none);
  EXPECT_EQ(push(vote(user(2), user(1), "p", 4), user(2)), reject::invalid_operation);
  EXPECT_EQ(h.chain().find_account(user(2))->vote_count, 6u);
  // A second voter.
  EXPECT_EQ(push(vote(user(3), user(1), "p", 10000), user(3)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->vote_count, 2u);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->net_votes, 2);
  // Votes spend voting mana.
  EXPECT_LT(h.chain().find_account(user(3))->voting.current, h.chain().find_account(user(4))->voting.current);
}

TEST_F(ChainEvaluators, VoteOnMissingComment) {
  EXPECT_EQ(push(vote(user(2), user(1), "nothing", 100), user(2)), reject::unknown_comment);
}

TEST_F(ChainEvaluators, CommentEdit) {
  ASSERT_EQ(push(post(user(1), "p", "short"), user(1)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->body_size, 5u);
  EXPECT_EQ(h.chain().find_account(user(1))->post_count, 1u);
  EXPECT_EQ(push(post(user(1), "p", "a longer body"), user(1)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->body_size, 13u);
  EXPECT_EQ(h.chain().find_account(user(1))->post_count, 1u);  // an edit is not a new post
  // The parent cannot change in an edit.
  core::comment_operation moved = post(user(1), "p", "moved");
  moved.parent_permlink = "other";
  EXPECT_EQ(push(moved, user(1)), reject::invalid_operation);
  // Someone else's comment of the same permlink is a different comment.
  EXPECT_EQ(push(post(user(2), "p"), user(2)), reject::none);
  EXPECT_EQ(h.chain().find_account(user(2))->post_count, 1u);
}

TEST_F(ChainEvaluators, Replies) {
  EXPECT_EQ(push(reply(user(2), "r", user(1), "p"), user(2)), reject::unknown_parent);
  ASSERT_EQ(push(post(user(1), "p"), user(1)), reject::none);
  EXPECT_EQ(push(reply(user(2), "r", user(1), "p"), user(2)), reject::none);
  EXPECT_EQ(push(reply(user(3), "rr", user(2), "r"), user(3)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "p")->children, 1u);
  EXPECT_EQ(h.chain().find_comment(user(2), "r")->children, 1u);
  EXPECT_EQ(h.chain().find_comment(user(2), "r")->parent_author, user(1));
  // A root post needs a category; a comment needs a body and a permlink.
  core::comment_operation no_category = post(user(1), "q");
  no_category.parent_permlink.clear();
  EXPECT_EQ(push(no_category, user(1)), reject::invalid_operation);
  EXPECT_EQ(push(post(user(1), "q", ""), user(1)), reject::invalid_operation);
  EXPECT_EQ(push(post(user(1), ""), user(1)), reject::invalid_operation);
}

TEST_F(ChainEvaluators, CommentOptionsBeneficiaries) {
  for (const char* p : {"a", "b", "c", "d", "e", "f", "g"}) ASSERT_EQ(push(post(user(1), p), user(1)), reject::none);
  // Sorted, existing, summing to at most 100%.
  EXPECT_EQ(push(options(user(1), "a", {{user(2), 500}, {user(3), 500}}), user(1)), reject::none);
  const core::comment_object* a = h.chain().find_comment(user(1), "a");
  ASSERT_EQ(a->beneficiaries.size(), 2u);
  EXPECT_EQ(a->beneficiaries[1].account, user(3));
  // Only once.
  EXPECT_EQ(push(options(user(1), "a", {{user(4), 500}}), user(1)), reject::invalid_operation);
  // Not sorted, or repeated.
  EXPECT_EQ(push(options(user(1), "b", {{user(3), 500}, {user(2), 500}}), user(1)), reject::invalid_operation);
  EXPECT_EQ(push(options(user(1), "b", {{user(2), 500}, {user(2), 500}}), user(1)), reject::invalid_operation);
  // Over 100%, or a zero weight.
  EXPECT_EQ(push(options(user(1), "c", {{user(2), 5000}, {user(3), 5001}}), user(1)), reject::invalid_operation);
  EXPECT_EQ(push(options(user(1), "c", {{user(2), 10000}}), user(1)), reject::none);
  EXPECT_EQ(push(options(user(1), "d", {{user(2), 0}}), user(1)), reject::invalid_operation);
  // Every beneficiary must exist.
  EXPECT_EQ(push(options(user(1), "d", {{"nobody", 100}}), user(1)), reject::unknown_account);
  // Not after a vote.
  ASSERT_EQ(push(vote(user(5), user(1), "e", 100), user(5)), reject::none);
  EXPECT_EQ(push(options(user(1), "e", {{user(2), 100}}), user(1)), reject::invalid_operation);
  // At most Hive's 8 routes (HIVE_MAX_COMMENT_BENEFICIARIES), every one an existing account.
  std::vector<core::beneficiary_route> nine;
  for (std::uint32_t i = 11; i <= 19; ++i) nine.push_back({user(i), 100});
  EXPECT_EQ(push(options(user(1), "f", nine), user(1)), reject::invalid_operation);
  nine.pop_back();
  EXPECT_EQ(push(options(user(1), "f", nine), user(1)), reject::none);
  EXPECT_EQ(h.chain().find_comment(user(1), "f")->beneficiaries.size(), 8u);
  // Options without beneficiaries on a voted comment are fine; they only get stricter.
  core::comment_options_operation stricter = options(user(1), "e");
  stricter.allow_votes = false;
  stricter.percent_hbd = 5000;
  EXPECT_EQ(push(stricter, user(1)), reject::none);
  EXPECT_FALSE(h.chain().find_comment(user(1), "e")->allow_votes);
  EXPECT_EQ(push(vote(user(6), user(1), "e", 100), user(6)), reject::invalid_operation);  // votes now off
  core::comment_options_operation looser = options(user(1), "e");
  looser.allow_votes = false;
  looser.percent_hbd = 6000;
  EXPECT_EQ(push(looser, user(1)), reject::invalid_operation);
  looser.percent_hbd = 5000;
  looser.allow_votes = true;
  EXPECT_EQ(push(looser, user(1)), reject::invalid_operation);
  // The payout must be in HBD.
  core::comment_options_operation hive_payout = options(user(1), "g");
  hive_payout.max_accepted_payout = core::asset::hive(1);
  EXPECT_EQ(push(hive_payout, user(1)), reject::invalid_operation);
  // Only the author's posting authority.
  EXPECT_EQ(h.push(h.make(options(user(1), "g"), user(2))), reject::missing_authority);
}

TEST_F(ChainEvaluators, Transfers) {
  EXPECT_EQ(push(transfer(user(1), user(2), genesis_balance + 1), user(1), key_role::active),
            reject::insufficient_funds);
  EXPECT_EQ(push(transfer(user(1), user(2), genesis_balance), user(1), key_role::active), reject::none);
  EXPECT_EQ(h.chain().find_account(user(1))->hive, 0);
  EXPECT_EQ(h.chain().find_account(user(2))->hive, 2 * genesis_balance);
  EXPECT_EQ(push(transfer(user(1), user(2), 1, false, "again"), user(1), key_role::active), reject::insufficient_funds);
  // HBD is a separate balance.
  EXPECT_EQ(push(transfer(user(1), user(3), 1, true), user(1), key_role::active), reject::none);
  EXPECT_EQ(h.chain().find_account(user(1))->hbd, genesis_balance - 1);
  EXPECT_EQ(h.chain().find_account(user(1))->transfer_count, 2u);
  // Memos are shorter than 2,048 bytes; amounts are positive.
  EXPECT_EQ(push(transfer(user(4), user(5), 1, true, std::string(2047, 'm')), user(4), key_role::active), reject::none);
  EXPECT_EQ(push(transfer(user(4), user(5), 1, true, std::string(2048, 'm')), user(4), key_role::active),
            reject::invalid_operation);
  EXPECT_EQ(push(transfer(user(4), user(5), -1), user(4), key_role::active), reject::invalid_operation);
  // To oneself: allowed, changes nothing but the count.
  EXPECT_EQ(push(transfer(user(6), user(6), 5, true, "self"), user(6), key_role::active), reject::none);
  EXPECT_EQ(h.chain().find_account(user(6))->hbd, genesis_balance);
}

TEST_F(ChainEvaluators, CustomJsonLimits) {
  EXPECT_EQ(push(custom_json(user(1), std::string(32, 'i')), user(1)), reject::none);
  EXPECT_EQ(push(custom_json(user(2), std::string(33, 'i')), user(2)), reject::custom_json_id_too_long);
  const std::string max_json = "\"" + std::string(8190, 'j') + "\"";
  ASSERT_EQ(max_json.size(), core::chain_limits::max_custom_json_size);
  EXPECT_EQ(push(custom_json(user(3), "max", max_json), user(3)), reject::none);
  EXPECT_EQ(push(custom_json(user(4), "over", max_json + " "), user(4)), reject::custom_json_too_large);
  EXPECT_EQ(push(custom_json(user(5), "trailing", "{} {}"), user(5)), reject::invalid_json);
  EXPECT_EQ(push(custom_json(user(5), "empty", ""), user(5)), reject::invalid_json);
  EXPECT_EQ(push(custom_json(user(5), "scalar", "42"), user(5)), reject::none);
}

}  // namespace
