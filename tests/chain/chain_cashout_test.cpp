// Cashout (cashout.hpp): the reward arithmetic, a comment paying its author, curators and
// beneficiaries from the reward fund and leaving the state with its votes, operations on a
// paid-out comment, and the state's object counts levelling off once the window is passed.
#include <gtest/gtest.h>

#include <string>

#include "apiary/core/chain/cashout.hpp"
#include "chain_test_support.hpp"

namespace apiary::chain_test {
namespace {

using core::cashout_constants;

TEST(CashoutArithmetic, VoteSharesScaleWithVestingAndWeight) {
  EXPECT_EQ(core::vote_rshares(100'000'000'000, 10'000), 2'000'000'000);  // 2% of the vesting
  EXPECT_EQ(core::vote_rshares(100'000'000'000, 5'000), 1'000'000'000);
  EXPECT_EQ(core::vote_rshares(100'000'000'000, -10'000), -2'000'000'000);
  EXPECT_EQ(core::vote_rshares(0, 10'000), 0);
}

TEST(CashoutArithmetic, ClaimsDecayLinearlyOverFifteenDays) {
  const std::uint32_t days15 = cashout_constants::claims_decay_secs;
  EXPECT_EQ(core::decay_claims(1'000'000, 0), 1'000'000u);
  EXPECT_EQ(core::decay_claims(1'000'000, days15 / 2), 500'000u);
  EXPECT_EQ(core::decay_claims(1'000'000, days15), 0u);
  EXPECT_EQ(core::decay_claims(~std::uint64_t{0}, 3), ~std::uint64_t{0} - ~std::uint64_t{0} / (days15 / 3));
}

TEST(CashoutArithmetic, RewardIsTheClaimsShareOfTheFundCapped) {
  EXPECT_EQ(core::comment_reward(1'000, 25, 100, 1'000'000), 250);
  EXPECT_EQ(core::comment_reward(1'000, 25, 100, 100), 100);  // max_accepted_payout
  EXPECT_EQ(core::comment_reward(1'000, 0, 100, 1'000'000), 0);
  EXPECT_EQ(core::comment_reward(1'000, 25, 0, 1'000'000), 0);
  EXPECT_EQ(core::comment_reward(1'000, 200, 100, 1'000'000), 1'000);                       // never more than the fund
  EXPECT_EQ(core::share_of(std::int64_t{1} << 62, 3, 4), (std::int64_t{1} << 62) / 4 * 3);  // no overflow
}

class ChainCashout : public ::testing::Test {
 protected:
  static core::chain_options windowed(std::uint32_t window) {
    core::chain_options o = small_options(20);
    o.cashout_blocks = window;
    return o;
  }
  static std::int64_t hive_of(const harness& h, std::uint32_t i) { return h.chain().find_account(user(i))->hive; }
};

TEST_F(ChainCashout, ACommentPaysOutOnceAndLeavesWithItsVotes) {
  constexpr std::uint32_t window = 10;
  harness h(windowed(window));
  ASSERT_EQ(h.push(h.make(post(user(1), "p"), user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(options(user(1), "p", {{user(4), 2'500}}), user(1))), reject::none);
  h.produce();  // block 1: the post, created at the genesis time
  ASSERT_EQ(h.push(h.make(vote(user(2), user(1), "p", 10'000), user(2))), reject::none);
  ASSERT_EQ(h.push(h.make(vote(user(3), user(1), "p", 5'000), user(3))), reject::none);
  h.produce();
  const core::comment_object* c = h.chain().find_comment(user(1), "p");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->net_rshares, 3'000'000'000);
  EXPECT_EQ(h.chain().census().indexes[2].objects, 2u);  // votes

  const std::int64_t author = hive_of(h, 1), cur2 = hive_of(h, 2), cur3 = hive_of(h, 3), ben = hive_of(h, 4);
  while (h.chain().head_block_num() < window - 1) {
    h.produce();
    ASSERT_NE(h.chain().find_comment(user(1), "p"), nullptr) << "paid early, at block " << h.chain().head_block_num();
  }
  const std::int64_t fund_before = h.chain().census().reward_balance + cashout_constants::reward_per_block;
  const core::block_result r = h.produce();  // block `window`: its time is the cashout time
  EXPECT_EQ(r.paid_out, 1u);
  EXPECT_EQ(h.chain().find_comment(user(1), "p"), nullptr);
  const core::state_census s = h.chain().census();
  EXPECT_EQ(s.indexes[1].objects, 0u);  // comments
  EXPECT_EQ(s.indexes[2].objects, 0u);  // votes
  EXPECT_EQ(s.comments_paid, 1u);

  // The only claims: the whole fund goes out. Curators share half by rshares (2:1), the
  // beneficiary a quarter of the rest, the author what remains.
  const std::int64_t reward = fund_before;
  const std::int64_t curation = reward / 2;
  EXPECT_EQ(hive_of(h, 2) - cur2, curation * 2 / 3);
  EXPECT_EQ(hive_of(h, 3) - cur3, curation / 3);
  EXPECT_EQ(hive_of(h, 4) - ben, (reward - curation) / 4);
  EXPECT_EQ(hive_of(h, 1) - author, reward - curation - (reward - curation) / 4);
  const std::int64_t paid = hive_of(h, 1) - author + hive_of(h, 2) - cur2 + hive_of(h, 3) - cur3 + hive_of(h, 4) - ben;
  EXPECT_EQ(s.reward_balance, fund_before - paid);
  EXPECT_GE(s.reward_balance, 0);
  const core::chain_audit a = h.chain().audit();
  EXPECT_TRUE(a.ok()) << a.violations.front();

  // Hive would take a vote on it as a no-op and a reply as a reply; here it is gone.
  EXPECT_EQ(h.push(h.make(vote(user(5), user(1), "p", 10'000), user(5))), reject::unknown_comment);
  EXPECT_EQ(h.push(h.make(reply(user(5), "r", user(1), "p"), user(5))), reject::unknown_parent);
}

TEST_F(ChainCashout, MaxAcceptedPayoutCapsTheRewardAndTheRestStaysInTheFund) {
  harness h(windowed(5));
  core::comment_options_operation capped = options(user(1), "p");
  capped.max_accepted_payout = core::asset::hbd(7);
  ASSERT_EQ(h.push(h.make(post(user(1), "p"), user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(capped, user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(vote(user(2), user(1), "p", 10'000), user(2))), reject::none);
  const std::int64_t before = hive_of(h, 1) + hive_of(h, 2);
  for (int i = 0; i < 6; ++i) h.produce();
  EXPECT_EQ(h.chain().census().comments_paid, 1u);
  EXPECT_EQ(hive_of(h, 1) + hive_of(h, 2) - before, 7);
  EXPECT_EQ(h.chain().census().reward_balance, 6 * cashout_constants::reward_per_block - 7);
  EXPECT_TRUE(h.chain().audit().ok());
}

// One block of the steady workload: two posts, a reply and votes on the last blocks' posts.
void busy_block(harness& h, std::uint32_t b) {
  const std::string n = std::to_string(b);
  ASSERT_EQ(h.push(h.make(post(user(b % 20), "a" + n), user(b % 20))), reject::none);
  ASSERT_EQ(h.push(h.make(post(user((b + 7) % 20), "b" + n), user((b + 7) % 20))), reject::none);
  if (b > 1) {
    const std::string prev = std::to_string(b - 1);
    ASSERT_EQ(h.push(h.make(reply(user((b + 3) % 20), "r" + n, user((b - 1) % 20), "a" + prev), user((b + 3) % 20))),
              reject::none);
    for (std::uint32_t v = 0; v < 4; ++v)
      ASSERT_EQ(h.push(h.make(vote(user(v), user((b + 6) % 20), "b" + prev, 10'000), user(v))), reject::none);
  }
  h.produce();
}

TEST_F(ChainCashout, ObjectCountsStopGrowingOnceTheWindowIsPassed) {
  constexpr std::uint32_t window = 40;
  harness h(windowed(window));
  std::vector<core::state_census> at;
  core::state_census half;
  for (std::uint32_t b = 1; b <= 8 * window; ++b) {
    busy_block(h, b);
    if (b == window / 2) half = h.chain().census();
    if (b % window == 0) at.push_back(h.chain().census());
  }
  // Until the window: growing. After it: each block adds what the oldest block's payouts
  // remove, so the comment and vote counts (and their bytes) stay where they are.
  EXPECT_LT(half.indexes[1].objects, at[0].indexes[1].objects);
  EXPECT_LT(half.indexes[2].objects, at[0].indexes[2].objects);
  for (std::size_t i = 3; i < at.size(); ++i) {
    for (std::size_t k = 0; k < at[i].indexes.size(); ++k) {
      EXPECT_EQ(at[i].indexes[k].objects, at[2].indexes[k].objects) << at[i].indexes[k].name << " at " << i;
      EXPECT_EQ(at[i].indexes[k].bytes, at[2].indexes[k].bytes) << at[i].indexes[k].name << " at " << i;
    }
    EXPECT_EQ(at[i].object_pool_bytes, at[2].object_pool_bytes) << "the pool grew at " << i;
  }
  // Three comments a block; those of the last window - 1 blocks are alive (a comment made on
  // top of block n pays out at block n + window).
  EXPECT_EQ(at.back().indexes[1].objects, 3u * (window - 1));
  EXPECT_GT(at.back().comments_paid, 0u);
  const core::chain_audit a = h.chain().audit();
  EXPECT_TRUE(a.ok()) << a.violations.front();
}

TEST_F(ChainCashout, EverySwitchPaysOutTheSameState) {
  std::vector<core::sha256_digest> digests;
  for (bool session : {true, false})
    for (auto dedup : {core::dedup_mode::split, core::dedup_mode::unified})
      for (auto rc : {core::rc_mode::state, core::rc_mode::volatile_charges}) {
        core::chain_options o = windowed(15);
        o.apply_block_in_session = session;
        o.dedup = dedup;
        o.rc = rc;
        harness h(o);
        for (std::uint32_t b = 1; b <= 60; ++b) busy_block(h, b);
        EXPECT_TRUE(h.chain().audit().ok());
        digests.push_back(h.chain().state_digest());
      }
  for (const auto& d : digests) EXPECT_EQ(d, digests.front());
}

}  // namespace
}  // namespace apiary::chain_test
