// Resource credits: the arithmetic (regeneration, prices, pool decay, resource counts, the
// payer), and the chain's use of it in both rc modes (charging, undo, blocks, rejection).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "apiary/core/chain/rc.hpp"
#include "chain_test_support.hpp"

namespace apiary::chain_test {

namespace {

using core::manabar;
using core::rc_resource;
using core::rc_usage;
using core::time_point_sec;

// The built-in parameters at rc_scale 1, what a chain with default options holds.
const core::rc_parameters defaults = core::rc_scaled(core::rc_default_params, 1);

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
  const rc_usage pools = core::rc_initial_pools(defaults);
  const std::int64_t vesting = 1'000'000'000'000'000;  // regen per block: 6,944,444,444
  rc_usage u{};
  EXPECT_EQ(core::rc_cost(u, pools, vesting, defaults), 0);  // nothing used, nothing paid
  u[history] = 1'000;
  // By hand: (regen * a >> 32) + 1 per byte, over b + pool, plus 1.
  const core::rc_resource_params& p = defaults[history];
  const std::int64_t regen = vesting / 144'000;
  __extension__ using u128 = unsigned __int128;
  const u128 price = (static_cast<u128>(regen) * p.coeff_a >> 32) + 1;
  const auto expected = static_cast<std::int64_t>(price * 1'000 / static_cast<u128>(p.coeff_b + pools[history]) + 1);
  EXPECT_EQ(core::rc_cost(u, pools, vesting, defaults), expected);
  EXPECT_GT(expected, 1);
  // Using the whole budget at the equilibrium costs about 1.5% of a block's regeneration.
  u[history] = p.budget;
  const double share = static_cast<double>(core::rc_cost(u, pools, vesting, defaults)) / static_cast<double>(regen);
  EXPECT_NEAR(share, 0.015, 0.0005);
  // An emptier pool is dearer, up to 129 times at an empty (or negative) one.
  rc_usage low = pools;
  low[history] = pools[history] / 2;
  EXPECT_GT(core::rc_cost(u, low, vesting, defaults), core::rc_cost(u, pools, vesting, defaults));
  low[history] = 0;
  const std::int64_t at_empty = core::rc_cost(u, low, vesting, defaults);
  low[history] = -5;
  EXPECT_EQ(core::rc_cost(u, low, vesting, defaults), at_empty);
  EXPECT_NEAR(static_cast<double>(at_empty) / static_cast<double>(core::rc_cost(u, pools, vesting, defaults)), 129.0,
              0.5);
  // At least one mana per resource used, even with no vesting at all.
  rc_usage all{1, 1, 1, 1};
  EXPECT_EQ(core::rc_cost(all, pools, 0, defaults), 4);
}

TEST(RcArithmetic, PoolsDecayTowardsTheirEquilibrium) {
  const rc_usage none{};
  // Left alone, a pool at its equilibrium stays there (within rounding), a fuller one falls
  // and an emptier one rises.
  rc_usage pools = core::rc_initial_pools(defaults);
  for (int i = 0; i < 100; ++i) pools = core::rc_next_pools(pools, none, defaults);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r)
    EXPECT_NEAR(static_cast<double>(pools[r]), static_cast<double>(defaults[r].equilibrium),
                static_cast<double>(defaults[r].equilibrium) * 1e-6);
  rc_usage empty{};
  const rc_usage one = core::rc_next_pools(empty, none, defaults);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) EXPECT_EQ(one[r], defaults[r].budget);
  rc_usage full;
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) full[r] = defaults[r].max_pool;
  const rc_usage fell = core::rc_next_pools(full, none, defaults);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    const core::rc_resource_params& p = defaults[r];
    // The pool loses 1/tau of itself (twice the budget at twice the equilibrium), gains the budget.
    EXPECT_NEAR(static_cast<double>(fell[r]), static_cast<double>(p.max_pool - p.budget), 2.0);
  }
  // Execution time decays fastest: after ten of its characteristic times an empty pool is
  // within 0.01% of its equilibrium.
  rc_usage exec = empty;
  for (int i = 0; i < 10 * 1'732; ++i) exec = core::rc_next_pools(exec, none, defaults);
  EXPECT_NEAR(static_cast<double>(exec[execution]), static_cast<double>(defaults[execution].equilibrium),
              static_cast<double>(defaults[execution].equilibrium) * 1e-4);
  // Usage comes off first, and a pool may go below zero; it decays back towards zero.
  rc_usage used{};
  used[history] = defaults[history].max_pool * 3;
  const rc_usage below = core::rc_next_pools(core::rc_initial_pools(defaults), used, defaults);
  EXPECT_LT(below[history], 0);
  EXPECT_GT(core::rc_next_pools(below, none, defaults)[history], below[history]);
  // Never above the maximum.
  rc_usage over = full;
  over[state] *= 3;
  EXPECT_EQ(core::rc_next_pools(over, none, defaults)[state], defaults[state].max_pool);
}

// ---- parameters -----------------------------------------------------------------------------

struct todays_values {
  std::int64_t budget, tau, equilibrium, max_pool, coeff_b;
  std::uint64_t coeff_a, decay_num;
};

// The constants apiary had before its parameters were data (docs/rc.md's table): rc_scale 1
// must give exactly these, or every state digest moves.
constexpr std::array<todays_values, core::rc_resource_count> todays{{
    {1'388'896, 623'243, 865'619'709'728, 1'731'239'419'456, 6'762'653'982, 40'152'124'536'913, 451'629'584},
    {2'314'816, 27'701, 64'122'718'016, 128'245'436'032, 500'958'734, 1'784'623'335'997, 10'161'184'676},
    {1'393'478'272, 623'243, 868'475'578'676'096, 1'736'951'157'352'192, 6'784'965'458'407, 40'152'124'536'913,
     451'629'584},
    {1'280'000'000, 1'732, 2'216'960'000'000, 4'433'920'000'000, 17'320'000'000, 111'583'250'350, 162'514'420'734},
}};

TEST(RcParams, ScaleOneGivesTodaysConstants) {
  const core::rc_parameters p = core::rc_scaled(core::rc_default_params, 1);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    SCOPED_TRACE(core::rc_resource_name(static_cast<rc_resource>(r)));
    EXPECT_EQ(p[r].budget, todays[r].budget);
    EXPECT_EQ(p[r].tau_blocks, todays[r].tau);
    EXPECT_EQ(p[r].equilibrium, todays[r].equilibrium);
    EXPECT_EQ(p[r].max_pool, todays[r].max_pool);
    EXPECT_EQ(p[r].coeff_a, todays[r].coeff_a);
    EXPECT_EQ(p[r].coeff_b, todays[r].coeff_b);
    EXPECT_EQ(p[r].decay_num, todays[r].decay_num);
    EXPECT_EQ(p[r].shift, core::rc_price_shift);
    EXPECT_EQ(p[r].price_scale, 10'000u);
    EXPECT_EQ(p[r].initial_pool, todays[r].equilibrium);
    EXPECT_EQ(core::rc_params_problem(core::rc_default_params[r], 1), "");
  }
  EXPECT_EQ(p[market].unit, 10);
  // Hive's scale factors.
  const std::array<std::uint32_t, 4> budget_factors{10'000, 10'000, 967, 10'000};
  const std::array<std::uint32_t, 4> price_factors{0, 0, 161, 3'548};
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    EXPECT_EQ(p[r].budget_scale_factor, budget_factors[r]);
    EXPECT_EQ(p[r].price_scale_factor, price_factors[r]);
  }
}

TEST(RcParams, ScaleFollowsHivesFormulas) {
  __extension__ using i128 = __int128;
  for (const std::uint32_t s : {2u, 5u, 17u, 32u}) {
    const core::rc_parameters p = core::rc_scaled(core::rc_default_params, s);
    for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
      SCOPED_TRACE(std::string(core::rc_resource_name(static_cast<rc_resource>(r))) + " at " + std::to_string(s));
      const core::rc_base_params& base = core::rc_default_params[r];
      EXPECT_EQ(core::rc_params_problem(base, s), "");
      // budget = base + base * budget_scale_factor * (s - 1) / 10,000, the equilibrium from it.
      const i128 budget = base.budget + static_cast<i128>(base.budget) * base.budget_scale_factor * (s - 1) / 10'000;
      EXPECT_EQ(p[r].budget, static_cast<std::int64_t>(budget));
      EXPECT_EQ(p[r].equilibrium, p[r].budget * p[r].tau_blocks);
      EXPECT_EQ(p[r].max_pool, 2 * p[r].equilibrium);
      EXPECT_EQ(p[r].decay_num, todays[r].decay_num);
      const i128 b = base.coeff_b + static_cast<i128>(base.coeff_b) * base.price_scale_factor * (s - 1) / 10'000;
      EXPECT_EQ(p[r].coeff_b, static_cast<std::int64_t>(b));
      EXPECT_EQ(p[r].coeff_a, todays[r].coeff_a);
      EXPECT_EQ(p[r].price_scale, 10'000 + base.price_scale_factor * (s - 1));
    }
  }
  // By hand: execution time grows 100% a step, state bytes 9.67%.
  const core::rc_parameters at32 = core::rc_scaled(core::rc_default_params, 32);
  EXPECT_EQ(at32[execution].budget, 40'960'000'000);
  EXPECT_EQ(at32[execution].price_scale, 10'000u + 3'548u * 31);
  EXPECT_EQ(core::rc_scaled(core::rc_default_params, 2)[state].budget, 1'528'227'620);
  EXPECT_EQ(at32[state].budget, 5'570'708'087);
  EXPECT_EQ(at32[history].coeff_b, todays[history].coeff_b);  // price_scale_factor 0
}

TEST(RcParams, PriceScaleMultipliesTheCost) {
  const core::rc_parameters one = core::rc_scaled(core::rc_default_params, 1);
  core::rc_parameters scaled = one;
  scaled[execution].price_scale = 13'548;  // one step of execution time's 3,548
  const std::int64_t vesting = 1'000'000'000'000'000;
  rc_usage u{};
  u[execution] = 2'000'000;
  const rc_usage pools = core::rc_initial_pools(one);
  // Each resource's cost before its +1, times 13,548 / 10,000.
  const std::int64_t plain = core::rc_cost(u, pools, vesting, one) - 1;
  EXPECT_GT(plain, 1'000);
  EXPECT_EQ(core::rc_cost(u, pools, vesting, scaled), plain * 13'548 / 10'000 + 1);
}

TEST(RcParams, UnusedPoolSettlesAtBudgetTimesTau) {
  // Not the defaults: small characteristic times, so that a few thousand blocks are many taus,
  // pools started empty, half full and above the equilibrium.
  core::rc_base_parameters base = core::rc_default_params;
  const std::array<std::int64_t, 4> budgets{1'000, 7, 123'456, 50};
  const std::array<std::int64_t, 4> taus{50, 3, 200, 10};
  const std::array<double, 4> levels{0.0, 0.5, 1.9, 1.0};
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    base[r].budget = budgets[r];
    base[r].tau_blocks = taus[r];
    base[r].coeff_b = 1;
    base[r].initial_level = levels[r];
    ASSERT_EQ(core::rc_params_problem(base[r], 1), "");
  }
  const core::rc_parameters p = core::rc_scaled(base, 1);
  rc_usage pools = core::rc_initial_pools(p);
  EXPECT_EQ(pools[history], 0);
  EXPECT_EQ(pools[market], 11);         // half of 21, to the nearest
  EXPECT_EQ(pools[state], 46'913'280);  // 1.9 x 24,691,200
  EXPECT_EQ(pools[execution], 500);
  const rc_usage none{};
  for (int i = 0; i < 3'000; ++i) pools = core::rc_next_pools(pools, none, p);
  for (std::size_t r = 0; r < core::rc_resource_count; ++r) {
    SCOPED_TRACE(core::rc_resource_name(static_cast<rc_resource>(r)));
    EXPECT_EQ(p[r].equilibrium, budgets[r] * taus[r]);
    // The decay rounds down, so the pool rests at most a tau above budget * tau.
    EXPECT_GE(pools[r], budgets[r] * taus[r]);
    EXPECT_LE(pools[r], budgets[r] * taus[r] + taus[r]);
    EXPECT_EQ(core::rc_next_pools(pools, none, p), pools);  // settled
  }
}

TEST(RcParams, BadValuesAreNamed) {
  const auto problem = [](auto change, std::uint32_t scale = 1) {
    core::rc_base_params p = core::rc_default_params[state];
    change(p);
    return core::rc_params_problem(p, scale);
  };
  EXPECT_TRUE(problem([](auto& p) { p.tau_blocks = 0; }).starts_with("tau_blocks: 0:"));
  EXPECT_TRUE(problem([](auto& p) { p.budget = -1; }).starts_with("budget: -1:"));
  EXPECT_TRUE(problem([](auto& p) { p.unit = 0; }).starts_with("unit: 0:"));
  EXPECT_TRUE(problem([](auto&) {}, 0).starts_with("rc_scale: 0:"));
  EXPECT_TRUE(problem([](auto&) {}, 33).starts_with("rc_scale: 33:"));
  EXPECT_TRUE(problem([](auto& p) { p.budget_scale_factor = 32'768; }).starts_with("budget_scale_factor: 32768:"));
  EXPECT_TRUE(problem([](auto& p) { p.price_scale_factor = 40'000; }).starts_with("price_scale_factor: 40000:"));
  EXPECT_TRUE(problem([](auto& p) { p.max_pool = 5; }).starts_with("max_pool: 5 is below the equilibrium"));
  EXPECT_TRUE(problem([](auto& p) { p.shift = 128; }).starts_with("shift: 128:"));
  EXPECT_TRUE(problem([](auto& p) { p.shift = 8; }).starts_with("shift: 8: with coeff_a"));  // a price above 2^64
  EXPECT_TRUE(problem([](auto& p) { p.coeff_b = 0; }).starts_with("coeff_b: 0:"));
  EXPECT_TRUE(problem([](auto& p) { p.initial_level = 2.5; }).starts_with("initial_level: 2.5:"));
  EXPECT_TRUE(problem([](auto& p) { p.budget = std::int64_t{1} << 50; }).starts_with("budget: the maximum pool"));
  // A given maximum grows with the budget: still above the equilibrium at rc_scale 32.
  EXPECT_EQ(problem([](auto& p) { p.max_pool = p.budget * p.tau_blocks * 11 / 10; }, 32), "");
  // The chain refuses them too.
  core::chain_options o = small_options();
  o.rc_params[history].tau_blocks = 0;
  EXPECT_THROW(core::chain c(o), std::invalid_argument);
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
  const rc_usage v = core::count_resources(signed_tx(vote(user(1), user(2), "p", 100), 60, 1), 123, now, defaults);
  EXPECT_EQ(v[history], 123);
  EXPECT_EQ(v[market], 0);
  EXPECT_EQ(v[state], s::vote_state + s::transaction_state);  // one started hour
  EXPECT_EQ(v[execution], s::vote_time + s::transaction_time + s::signature_time);
  // A transfer is a market operation (in tenths of a byte); it holds no state of its own.
  const rc_usage t = core::count_resources(signed_tx(transfer(user(1), user(2), 5), 3'601, 2), 150, now, defaults);
  EXPECT_EQ(t[market], 1'500);
  EXPECT_EQ(t[state], 2 * s::transaction_state);  // two started hours
  EXPECT_EQ(t[execution], s::transfer_time + s::transaction_time + 2 * s::signature_time);
  const rc_usage c = core::count_resources(signed_tx(post(user(1), "abcd"), 60, 0), 200, now, defaults);
  EXPECT_EQ(c[state], s::comment_state + 4 * s::comment_permlink_char + s::transaction_state);
  EXPECT_EQ(c[execution], s::comment_time + s::transaction_time);
  const rc_usage o = core::count_resources(signed_tx(options(user(1), "abcd", {{user(2), 100}, {user(3), 100}}), 60, 1),
                                           90, now, defaults);
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
    return core::rc_cost(core::count_resources(t.tx(), t.packed_size(), c.head_block_time(), c.rc_params()), s.pools,
                         s.total_vesting, c.rc_params());
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
  const core::rc_usage used =
      core::count_resources(t->tx(), t->packed_size(), h.chain().head_block_time(), h.chain().rc_params());
  h.produce();
  // In state now, in both modes, and regenerated by one block of three seconds.
  const core::account_object* a = h.chain().find_account(user(1));
  EXPECT_EQ(a->rc.current, full - cost);
  EXPECT_EQ(h.chain().rc_mana(user(1)), std::min(full, full - cost + full * 3 / 432'000));
  // The pools moved on by the block's usage.
  EXPECT_EQ(h.chain().rc().pools, core::rc_next_pools(pools, used, h.chain().rc_params()));
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
    const reject r = h.push(h.make(custom_json(user(1), std::string("t").append(std::to_string(i))), user(1)));
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
