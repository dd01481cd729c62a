// Hive's RC statistics (rc_stats.hpp): the op kinds, the payer ranks at their boundaries, the
// cost split per resource, and a small chain's archives counted by hand in every switch
// combination that decides where charges live, without changing the state.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "chain_test_support.hpp"

namespace apiary::chain_test {

namespace {

using core::rc_op_kind;
using core::rc_usage;

core::signed_transaction of(std::vector<core::operation> ops) {
  core::transaction t;
  for (core::operation& op : ops) t.operations.push_back(std::move(op));
  return signed_without_signatures(std::move(t));
}

TEST(RcStats, OpKinds) {
  EXPECT_EQ(core::rc_op_kind_of(of({vote(user(1), user(2), "p", 1)})), rc_op_kind::vote);
  EXPECT_EQ(core::rc_op_kind_of(of({post(user(1), "p")})), rc_op_kind::comment);
  EXPECT_EQ(core::rc_op_kind_of(of({transfer(user(1), user(2), 1)})), rc_op_kind::transfer);
  EXPECT_EQ(core::rc_op_kind_of(of({custom_json(user(1))})), rc_op_kind::custom_json);
  // comment_options goes with a comment: alone, or after the comment it sets the options of.
  EXPECT_EQ(core::rc_op_kind_of(of({options(user(1), "p")})), rc_op_kind::comment);
  EXPECT_EQ(core::rc_op_kind_of(of({post(user(1), "p"), options(user(1), "p", {{user(2), 100}})})),
            rc_op_kind::comment);
  // Anything else of several operations is multi.
  EXPECT_EQ(core::rc_op_kind_of(of({post(user(1), "p"), options(user(1), "q")})), rc_op_kind::multi);
  EXPECT_EQ(core::rc_op_kind_of(of({options(user(1), "p"), post(user(1), "p")})), rc_op_kind::multi);
  EXPECT_EQ(core::rc_op_kind_of(of({custom_json(user(1)), custom_json(user(1))})), rc_op_kind::multi);
  EXPECT_EQ(core::rc_op_kind_of(of({post(user(1), "p"), options(user(1), "p"), vote(user(1), user(1), "p", 1)})),
            rc_op_kind::multi);
  EXPECT_EQ(core::rc_op_kind_name(rc_op_kind::custom_json), "custom_json");
  EXPECT_EQ(core::rc_op_kind_name(rc_op_kind::multi), "multi");
}

TEST(RcStats, PayerRanksByOrderOfMagnitude) {
  EXPECT_EQ(core::rc_payer_rank(0), 0u);
  EXPECT_EQ(core::rc_payer_rank(1'000'000'000), 0u);           // 10^9
  EXPECT_EQ(core::rc_payer_rank(9'999'999'999), 0u);           // 10^10 - 1
  EXPECT_EQ(core::rc_payer_rank(10'000'000'000), 1u);          // 10^10
  EXPECT_EQ(core::rc_payer_rank(99'999'999'999), 1u);          // 10^11 - 1
  EXPECT_EQ(core::rc_payer_rank(100'000'000'000), 2u);         // 10^11: apiary's default vesting
  EXPECT_EQ(core::rc_payer_rank(999'999'999'999'999), 5u);     // 10^15 - 1
  EXPECT_EQ(core::rc_payer_rank(1'000'000'000'000'000), 6u);   // 10^15
  EXPECT_EQ(core::rc_payer_rank(9'999'999'999'999'999), 6u);   // 10^16 - 1
  EXPECT_EQ(core::rc_payer_rank(10'000'000'000'000'000), 7u);  // 10^16
  EXPECT_EQ(core::rc_payer_rank(INT64_MAX), 7u);               // clamped
  EXPECT_EQ(core::rc_payer_rank(-1), 0u);
}

TEST(RcStats, CostSplitsPerResource) {
  const core::rc_parameters params = core::rc_scaled(core::rc_default_params, 1);
  const rc_usage pools = core::rc_initial_pools(params);
  const std::int64_t vesting = 1'000'000'000'000'000;
  const rc_usage usage{1'000, 2'000, 30'000'000, 100'000};
  rc_usage split;
  const std::int64_t total = core::rc_cost(usage, pools, vesting, params, split);
  EXPECT_EQ(total, core::rc_cost(usage, pools, vesting, params));
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < core::rc_resource_count; ++i) {
    rc_usage alone{};
    alone[i] = usage[i];
    EXPECT_EQ(split[i], core::rc_cost(alone, pools, vesting, params)) << i;
    sum += split[i];
  }
  EXPECT_EQ(sum, total);
  rc_usage none{};
  EXPECT_EQ(core::rc_cost(none, pools, vesting, params, split), 0);
  EXPECT_EQ(split, rc_usage{});
}

TEST(RcStats, SamplesCountBelowSharesAndReferenceCosts) {
  const core::rc_reference_costs reference{50, 200, 10};
  const rc_usage cost{1, 2, 3, 4};
  // max 1,000: under 20% is below 200, under 10% below 100, under 5% below 50.
  struct want {
    std::int64_t mana;
    int below;
    std::array<bool, 3> cant;
  };
  for (const want& w :
       {want{1'000, 0, {false, false, false}}, want{200, 0, {false, false, false}}, want{199, 1, {false, true, false}},
        want{100, 1, {false, true, false}}, want{99, 2, {false, true, false}}, want{50, 2, {false, true, false}},
        want{49, 3, {true, true, false}}, want{9, 3, {true, true, true}}}) {
    const core::rc_charge_sample s = core::make_rc_sample(rc_op_kind::vote, 1'000, w.mana, cost, cost, reference);
    EXPECT_EQ(s.below, w.below) << w.mana;
    EXPECT_EQ(s.cant_afford, w.cant) << w.mana;
  }
  core::rc_stats st;
  st.add(core::make_rc_sample(rc_op_kind::transfer, 1'000, 40, cost, cost, reference));
  st.add(core::make_rc_sample(rc_op_kind::transfer, 1'000, 150, cost, cost, reference));
  EXPECT_EQ(st.payers[0].count, 2u);
  EXPECT_EQ(st.payers[0].below_20, 2u);
  EXPECT_EQ(st.payers[0].below_10, 1u);
  EXPECT_EQ(st.payers[0].below_5, 1u);
  EXPECT_EQ(st.ops[2].count, 2u);
  EXPECT_EQ(st.ops[2].cost, (rc_usage{2, 4, 6, 8}));
  // The transfer's average total cost (10) replaces its reference; the others are kept.
  EXPECT_EQ(st.reference_costs({50, 200, 7}), (core::rc_reference_costs{50, 200, 10}));
  st.subtract(core::make_rc_sample(rc_op_kind::transfer, 1'000, 40, cost, cost, reference));
  core::rc_stats one;
  one.add(core::make_rc_sample(rc_op_kind::transfer, 1'000, 150, cost, cost, reference));
  EXPECT_EQ(st, one);
}

// ---- a small chain, by hand ---------------------------------------------------------------------

// A chain where every payer has 103 mana and nothing regenerates in a few blocks (regen per
// block 0): every resource used costs exactly 1, so a transfer (history, market, state,
// execution) costs 4 and a custom_json 3.
struct stats_switches {
  core::rc_mode rc;
  bool reuse_pending;
};

class ChainRcStats : public ::testing::TestWithParam<stats_switches> {
 protected:
  static core::chain_options stats_options(std::uint32_t stats_blocks) {
    core::chain_options o = small_options(20);
    o.genesis_vesting = 103;
    o.rc = GetParam().rc;
    o.reuse_pending = GetParam().reuse_pending;
    o.rc_stats_blocks = stats_blocks;
    return o;
  }

  // Block 1: 25 transfers by user 1 (mana 103, 99, ..., 7 before each: 4 under 20%, one under
  // 10%, none under 5%); block 2: a custom_json by user 2; block 3: a custom_json by user 1, with
  // 3 left: under 5%, and under the average transfer (4) of the archive at block 2; block 4:
  // empty.
  static void play(harness& h) {
    for (int i = 0; i < 25; ++i)
      ASSERT_EQ(h.push(h.make(transfer(user(1), user(2), 1 + i), user(1), key_role::active)), reject::none) << i;
    h.produce();
    ASSERT_EQ(h.push(h.make(custom_json(user(2)), user(2))), reject::none);
    h.produce();
    ASSERT_EQ(h.chain().rc_mana(user(1)), 3);
    ASSERT_EQ(h.push(h.make(custom_json(user(1), "last"), user(1))), reject::none);
    ASSERT_EQ(h.push(h.make(custom_json(user(1), "more"), user(1))), reject::insufficient_rc);
    h.produce();
    h.produce();
  }
};

TEST_P(ChainRcStats, ArchivesCountedByHand) {
  harness h(stats_options(2));
  play(h);
  const std::vector<core::rc_archive>& a = h.chain().rc_archives();
  ASSERT_EQ(a.size(), 2u);

  EXPECT_EQ(a[0].block, 2u);
  EXPECT_EQ(a[0].first_block, 1u);
  EXPECT_EQ(a[0].accepted, 26u);
  EXPECT_EQ(a[0].rejected_rc, 0u);
  EXPECT_EQ(a[0].regen, 0);
  const core::rc_op_stats& transfers = a[0].stats.ops[static_cast<std::size_t>(rc_op_kind::transfer)];
  EXPECT_EQ(transfers.count, 25u);
  EXPECT_EQ(transfers.cost, (rc_usage{25, 25, 25, 25}));
  const core::rc_op_stats& customs = a[0].stats.ops[static_cast<std::size_t>(rc_op_kind::custom_json)];
  EXPECT_EQ(customs.count, 1u);
  EXPECT_EQ(customs.cost, (rc_usage{1, 0, 1, 1}));
  EXPECT_GT(customs.usage[0], 0);
  EXPECT_EQ(a[0].stats.ops[static_cast<std::size_t>(rc_op_kind::vote)].count, 0u);
  const core::rc_payer_stats& p0 = a[0].stats.payers[0];
  EXPECT_EQ(p0.count, 26u);
  EXPECT_EQ(p0.below_20, 4u);
  EXPECT_EQ(p0.below_10, 1u);
  EXPECT_EQ(p0.below_5, 0u);
  EXPECT_EQ(p0.cant_afford, (std::array<std::uint64_t, 3>{0, 0, 0}));  // no archive before
  for (std::size_t r = 1; r < core::rc_payer_rank_count; ++r) EXPECT_EQ(a[0].stats.payers[r].count, 0u);

  EXPECT_EQ(a[1].block, 4u);
  EXPECT_EQ(a[1].first_block, 3u);
  EXPECT_EQ(a[1].accepted, 1u);
  EXPECT_EQ(a[1].rejected_rc, 1u);
  const core::rc_payer_stats& p1 = a[1].stats.payers[0];
  EXPECT_EQ(p1.count, 1u);
  EXPECT_EQ(p1.below_5, 1u);
  EXPECT_EQ(p1.below_10, 1u);
  EXPECT_EQ(p1.below_20, 1u);
  // No vote or comment was archived yet: their reference stays 0, which nobody is below.
  EXPECT_EQ(p1.cant_afford, (std::array<std::uint64_t, 3>{0, 0, 1}));
  // The archive's pools and prices are the chain's at its block.
  EXPECT_EQ(a[1].pools, h.chain().rc().pools);
  EXPECT_EQ(a[1].levels, core::rc_pool_levels(a[1].pools, h.chain().rc_params()));
  EXPECT_EQ(a[1].prices, core::rc_unit_prices(a[1].pools, h.chain().rc().total_vesting, h.chain().rc_params()));
  EXPECT_EQ(h.chain().rc_statistics(), core::rc_stats{});  // all archived
  EXPECT_TRUE(h.chain().audit().ok());
}

TEST_P(ChainRcStats, StatisticsLeaveTheStateAlone) {
  harness with(stats_options(1));
  harness without(stats_options(0));
  play(with);
  play(without);
  EXPECT_EQ(with.chain().rc_archives().size(), 4u);
  EXPECT_TRUE(without.chain().rc_archives().empty());
  EXPECT_EQ(without.chain().rc_statistics(), core::rc_stats{});
  EXPECT_EQ(with.chain().state_digest(), without.chain().state_digest());
}

TEST_P(ChainRcStats, PayersRankedByTheirVesting) {
  core::chain_options o = stats_options(1);
  o.genesis_vesting = 10'000'000'000;  // 10^10: rank 1
  harness h(o);
  ASSERT_EQ(h.push(h.make(custom_json(user(3)), user(3))), reject::none);
  h.produce();
  ASSERT_EQ(h.chain().rc_archives().size(), 1u);
  const core::rc_stats& s = h.chain().rc_archives()[0].stats;
  EXPECT_EQ(s.payers[0].count, 0u);
  EXPECT_EQ(s.payers[1].count, 1u);
  EXPECT_EQ(s.payers[1].below_20, 0u);
}

INSTANTIATE_TEST_SUITE_P(Switches, ChainRcStats,
                         ::testing::Values(stats_switches{core::rc_mode::state, true},
                                           stats_switches{core::rc_mode::state, false},
                                           stats_switches{core::rc_mode::volatile_charges, false}),
                         [](const ::testing::TestParamInfo<stats_switches>& p) {
                           return std::string(p.param.rc == core::rc_mode::state ? "State" : "Volatile") +
                                  (p.param.reuse_pending ? "Reuse" : "Reapply");
                         });

}  // namespace

}  // namespace apiary::chain_test
