// Resource credits: the arithmetic (regeneration, prices, pool decay, resource counts, the
// payer), and the chain's use of it in both rc modes (charging, undo, blocks, rejection).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "apiary/core/chain/rc.hpp"
#include "chain_test_support.hpp"

namespace apiary::chain_test {

namespace {

using core::manabar;
using core::rc_resource;
using core::rc_usage;
using core::time_point_sec;

constexpr std::size_t history = static_cast<std::size_t>(rc_resource::history_bytes);
constexpr std::size_t market = static_cast<std::size_t>(rc_resource::market_bytes);
constexpr std::size_t state = static_cast<std::size_t>(rc_resource::state_bytes);
constexpr std::size_t execution = static_cast<std::size_t>(rc_resource::execution_time);

// ---- arithmetic -----------------------------------------------------------------------------

TEST(RcArithmetic, ManaRegeneratesLinearlyOverFiveDays) {
  constexpr std::int64_t max = 432'000'000;  // 1,000 per second of the 432,000
  const manabar empty{0, time_point_sec{1000}};
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1000}), empty);  // no time, no change
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{999}), empty);   // nor backwards
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1003}).current, 3'000);
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1000 + 216'000}).current, max / 2);
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1000 + 431'999}).current, max - 1'000);
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1000 + 432'000}).current, max);
  EXPECT_EQ(core::rc_regenerated(empty, max, time_point_sec{1000 + 900'000}).current, max);  // never above
  const manabar half{max / 2, time_point_sec{1000}};
  EXPECT_EQ(core::rc_regenerated(half, max, time_point_sec{1000 + 300'000}).current, max);
  const manabar later = core::rc_regenerated(half, max, time_point_sec{1010});
  EXPECT_EQ(later.current, max / 2 + 10'000);
  EXPECT_EQ(later.last_update.secs, 1010u);
  // Rounds down: 7 of mana over five days gives nothing in three seconds.
  EXPECT_EQ(core::rc_regenerated(manabar{0, time_point_sec{0}}, 7, time_point_sec{3}).current, 0);
}

TEST(RcArithmetic, CostFollowsThePriceCurve) {
  const rc_usage pools = core::rc_initial_pools();
  const std::int64_t vesting = 1'000'000'000'000'000;  // regen per block: 6,944,444,444
  rc_usage u{};
  EXPECT_EQ(core::rc_cost(u, pools, vesting), 0);  // nothing used, nothing paid
  u[history] = 1'000;
  // By hand: (regen * a >> 32) + 1 per byte, over b + pool, plus 1.
  const core::rc_resource_params& p = core::rc_params[history];
  const std::int64_t regen = vesting / 144'000;
  __extension__ using u128 = unsigned __int128;
  const u128 price = (static_cast<u128>(regen) * p.a >> 32) + 1;
  const auto expected = static_cast<std::int64_t>(price * 1'000 / static_cast<u128>(p.b + pools[history]) + 1);
  EXPECT_EQ(core::rc_cost(u, pools, vesting), expected);
  EXPECT_GT(expected, 1);
  // Using the whole budget at the equilibrium costs about 1.5% of a block's regeneration.
  u[history] = p.budget;
  const double share = static_cast<double>(core::rc_cost(u, pools, vesting)) / static_cast<double>(regen);
  EXPECT_NEAR(share, 0.015, 0.0005);
  // An emptier pool is dearer, up to 129 times at an empty (or negative) one.
  rc_usage low = pools;
  low[history] = pools[history] / 2;
  EXPECT_GT(core::rc_cost(u, low, vesting), core::rc_cost(u, pools, vesting));
  low[history] = 0;
  const std::int64_t at_empty = core::rc_cost(u, low, vesting);
  low[history] = -5;
  EXPECT_EQ(core::rc_cost(u, low, vesting), at_empty);
  EXPECT_NEAR(static_cast<double>(at_empty) / static_cast<double>(core::rc_cost(u, pools, vesting)), 129.0, 0.5);
  // At least one mana per resource used, even with no vesting at all.
  rc_usage all{1, 1, 1, 1};
  EXPECT_EQ(core::rc_cost(all, pools, 0), 4);
}

TEST(RcArithmetic, PoolsDecayTowardsTheirEquilibrium) {
  const rc_usage none{};
  // Left alone, a pool at its equilibrium stays there (within rounding), a fuller one falls
  // and an emptier one rises.
  rc_usage pools = core::rc_initial_pools();
  for (int i = 0; i < 100; ++i) pools = core::rc_next_pools(pools, none);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r)
    EXPECT_NEAR(static_cast<double>(pools[r]), static_cast<double>(core::rc_params[r].equilibrium),
                static_cast<double>(core::rc_params[r].equilibrium) * 1e-6);
  rc_usage empty{};
  const rc_usage one = core::rc_next_pools(empty, none);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) EXPECT_EQ(one[r], core::rc_params[r].budget);
  rc_usage full;
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) full[r] = core::rc_params[r].max_pool;
  const rc_usage fell = core::rc_next_pools(full, none);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    const core::rc_resource_params& p = core::rc_params[r];
    // The pool loses 1/tau of itself (twice the budget at twice the equilibrium), gains the budget.
    EXPECT_NEAR(static_cast<double>(fell[r]), static_cast<double>(p.max_pool - p.budget), 2.0);
  }
  // Execution time decays fastest: after ten of its characteristic times an empty pool is
  // within 0.01% of its equilibrium.
  rc_usage exec = empty;
  for (int i = 0; i < 10 * 1'732; ++i) exec = core::rc_next_pools(exec, none);
  EXPECT_NEAR(static_cast<double>(exec[execution]), static_cast<double>(core::rc_params[execution].equilibrium),
              static_cast<double>(core::rc_params[execution].equilibrium) * 1e-4);
  // Usage comes off first, and a pool may go below zero; it decays back towards zero.
  rc_usage used{};
  used[history] = core::rc_params[history].max_pool * 3;
  const rc_usage below = core::rc_next_pools(core::rc_initial_pools(), used);
  EXPECT_LT(below[history], 0);
  EXPECT_GT(core::rc_next_pools(below, none)[history], below[history]);
  // Never above the maximum.
  rc_usage over = full;
  over[state] *= 3;
  EXPECT_EQ(core::rc_next_pools(over, none)[state], core::rc_params[state].max_pool);
}

core::signed_transaction signed_tx(core::operation op, std::uint32_t expires_in, int signatures) {
  core::transaction t;
  t.expiration = time_point_sec{1'000 + expires_in};
  t.operations.push_back(std::move(op));
  core::signed_transaction st = signed_without_signatures(std::move(t));
  st.signatures.resize(static_cast<std::size_t>(signatures));
  return st;
}

TEST(RcArithmetic, ResourcesByOperationKind) {
  using s = core::rc_sizes;
  const time_point_sec now{1'000};
  const rc_usage v = core::count_resources(signed_tx(vote(user(1), user(2), "p", 100), 60, 1), 123, now);
  EXPECT_EQ(v[history], 123);
  EXPECT_EQ(v[market], 0);
  EXPECT_EQ(v[state], s::vote_state + s::transaction_state);  // one started hour
  EXPECT_EQ(v[execution], s::vote_time + s::transaction_time + s::signature_time);
  // A transfer is a market operation (in tenths of a byte); it holds no state of its own.
  const rc_usage t = core::count_resources(signed_tx(transfer(user(1), user(2), 5), 3'601, 2), 150, now);
  EXPECT_EQ(t[market], 1'500);
  EXPECT_EQ(t[state], 2 * s::transaction_state);  // two started hours
  EXPECT_EQ(t[execution], s::transfer_time + s::transaction_time + 2 * s::signature_time);
  const rc_usage c = core::count_resources(signed_tx(post(user(1), "abcd"), 60, 0), 200, now);
  EXPECT_EQ(c[state], s::comment_state + 4 * s::comment_permlink_char + s::transaction_state);
  EXPECT_EQ(c[execution], s::comment_time + s::transaction_time);
  const rc_usage o =
      core::count_resources(signed_tx(options(user(1), "abcd", {{user(2), 100}, {user(3), 100}}), 60, 1), 90, now);
  EXPECT_EQ(o[state], 2 * s::beneficiary_state + s::transaction_state);
}

TEST(RcArithmetic, PayerIsTheFirstOperationsFirstAuthority) {
  EXPECT_EQ(core::rc_payer(signed_tx(vote(user(4), user(2), "p", 1), 60, 1)), user(4));
  EXPECT_EQ(core::rc_payer(signed_tx(transfer(user(5), user(1), 1), 60, 1)), user(5));
  core::custom_json_operation both = custom_json(user(9));
  both.required_posting_auths.push_back(user(3));
  both.required_auths.push_back(user(7));
  EXPECT_EQ(core::rc_payer(signed_tx(both, 60, 1)), user(7));  // active before posting
  core::custom_json_operation posting = custom_json(user(9));
  posting.required_posting_auths.push_back(user(3));
  EXPECT_EQ(core::rc_payer(signed_tx(posting, 60, 1)), user(3));  // the smallest name
  EXPECT_EQ(core::rc_payer(core::signed_transaction{}), std::nullopt);
}

// ---- the chain ------------------------------------------------------------------------------

class ChainRc : public ::testing::TestWithParam<core::rc_mode> {
 protected:
  static core::chain_options rc_options(std::uint64_t vesting = 100'000'000'000) {
    core::chain_options o = small_options(20);
    o.genesis_vesting = vesting;
    o.rc = GetParam();
    return o;
  }
  // The cost the chain charges for `t` now.
  static std::int64_t cost_of(const core::chain& c, const core::full_transaction& t) {
    const core::rc_status s = c.rc();
    return core::rc_cost(core::count_resources(t.tx(), t.packed_size(), c.head_block_time()), s.pools, s.total_vesting);
  }
};

TEST_P(ChainRc, PushChargesThePayerAndTheBlockChargesState) {
  harness h(rc_options());
  const std::int64_t full = h.chain().rc_mana(user(1));
  EXPECT_EQ(full, 100'000'000'000);
  const auto t = h.make(custom_json(user(1)), user(1));
  const std::int64_t cost = cost_of(h.chain(), *t);
  EXPECT_GT(cost, 3);
  ASSERT_EQ(h.push(t), reject::none);
  EXPECT_EQ(h.chain().rc_mana(user(1)), full - cost);
  EXPECT_EQ(h.chain().rc_mana(user(2)), full);
  // Where the pending charge lives is the mode's business.
  const bool in_state = GetParam() == core::rc_mode::state;
  EXPECT_EQ(h.chain().find_account(user(1))->rc.current, in_state ? full - cost : full);
  const core::rc_usage pools = h.chain().rc().pools;
  const core::rc_usage used = core::count_resources(t->tx(), t->packed_size(), h.chain().head_block_time());
  h.produce();
  // In state now, in both modes, and regenerated by one block of three seconds.
  const core::account_object* a = h.chain().find_account(user(1));
  EXPECT_EQ(a->rc.current, full - cost);
  EXPECT_EQ(h.chain().rc_mana(user(1)), std::min(full, full - cost + full * 3 / 432'000));
  // The pools moved on by the block's usage.
  EXPECT_EQ(h.chain().rc().pools, core::rc_next_pools(pools, used));
  EXPECT_EQ(h.chain().rc().blocks, 1u);
  EXPECT_TRUE(h.chain().audit().ok());
}

TEST_P(ChainRc, RejectedAndUndoneTransactionsLeaveTheManabar) {
  harness h(rc_options());
  const std::int64_t full = h.chain().rc_mana(user(1));
  const core::manabar before = h.chain().find_account(user(1))->rc;
  // Rejected for another reason after its operations ran: no charge.
  const auto broke = h.make(transfer(user(1), user(2), genesis_balance + 1), user(1), key_role::active);
  const trace t0 = h.snapshot(broke->id(), user(1));
  EXPECT_EQ(h.push(broke), reject::insufficient_funds);
  EXPECT_EQ(h.snapshot(broke->id(), user(1)), t0);
  EXPECT_EQ(h.chain().rc_mana(user(1)), full);
  // Accepted, then dropped with the pending list: the charge goes with it.
  ASSERT_EQ(h.push(h.make(custom_json(user(1)), user(1))), reject::none);
  EXPECT_LT(h.chain().rc_mana(user(1)), full);
  h.chain().clear_pending();
  EXPECT_EQ(h.chain().rc_mana(user(1)), full);
  EXPECT_EQ(h.chain().find_account(user(1))->rc, before);
  EXPECT_EQ(h.snapshot(broke->id(), user(1)), t0);
}

TEST_P(ChainRc, APayerWithoutVestingIsRejectedWithoutATrace) {
  harness h(rc_options());
  const account_name witness(core::default_witness);
  ASSERT_NE(h.chain().find_account(witness), nullptr);
  EXPECT_EQ(h.chain().rc_mana(witness), 0);
  const auto t = h.make(custom_json(witness, "no-rc"), witness);
  const trace before = h.snapshot(t->id(), witness);
  EXPECT_EQ(h.push(t), reject::insufficient_rc);
  EXPECT_EQ(h.snapshot(t->id(), witness), before);
  EXPECT_EQ(h.chain().rc().rejected, 1u);
  // Its transfer fails first for the funds it lacks: rules come before the payment.
  EXPECT_EQ(h.push(h.make(transfer(witness, user(1), 1), witness, key_role::active)), reject::insufficient_funds);
  EXPECT_EQ(h.chain().rc().rejected, 1u);
  h.produce();
  EXPECT_EQ(h.chain().rc().max_block_rejected, 1u);
  EXPECT_TRUE(h.chain().audit().ok());
}

TEST_P(ChainRc, TinyVestingRunsOutOfMana) {
  // 10 micro-VESTS: nothing regenerates in a few blocks and every transaction costs at least
  // 3 (history, state, execution), so three custom_json operations use it all.
  harness h(rc_options(10));
  int accepted = 0;
  int starved = 0;
  for (int i = 0; i < 8; ++i) {
    const reject r = h.push(h.make(custom_json(user(1), "t" + std::to_string(i)), user(1)));
    if (r == reject::none) ++accepted;
    if (r == reject::insufficient_rc) ++starved;
  }
  EXPECT_EQ(accepted, 3);
  EXPECT_EQ(starved, 5);
  EXPECT_EQ(h.chain().rc_mana(user(1)), 1);
  h.produce();
  EXPECT_EQ(h.push(h.make(custom_json(user(1), "after"), user(1))), reject::insufficient_rc);
  EXPECT_EQ(h.push(h.make(custom_json(user(2), "other"), user(2))), reject::none);  // others still can
  EXPECT_EQ(h.chain().rc().rejected, 6u);
  EXPECT_TRUE(h.chain().audit().ok());
}

TEST_P(ChainRc, PendingChargesCarriedOverAreCheckedAgain) {
  // Two blocks' worth for one account: the block takes one, the other stays pending, charged
  // again against the state the block left.
  harness h(rc_options(10));
  ASSERT_EQ(h.push(h.make(custom_json(user(1), "a"), user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(custom_json(user(1), "b"), user(1))), reject::none);
  const core::block_result r = h.produce(core::chain_limits::max_block_size, 1);
  EXPECT_EQ(r.reapplied, 1u);
  EXPECT_EQ(h.chain().rc_mana(user(1)), 10 - 3 - 3);
  EXPECT_EQ(h.chain().find_account(user(1))->rc.current, GetParam() == core::rc_mode::state ? 4 : 7);
  EXPECT_TRUE(h.chain().audit().ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, ChainRc, ::testing::Values(core::rc_mode::state, core::rc_mode::volatile_charges),
                         [](const ::testing::TestParamInfo<core::rc_mode>& p) {
                           return p.param == core::rc_mode::state ? std::string("State") : std::string("Volatile");
                         });

}  // namespace

}  // namespace apiary::chain_test
