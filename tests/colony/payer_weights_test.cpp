// Who pays (colony_config.hpp's payer_weighting, generator's payer weights): uniform takes the
// accounts in turn as before; weighted picks follow their weights (a chi-square test over
// 100,000 transactions) and never pick a weight of 0; vesting:E weighs each account of a thread
// by its genesis vesting (core::vesting_of) to the power E; --payer-weights' text.
#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "apiary/colony/colony_config.hpp"
#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/core/chain/genesis_vesting.hpp"

namespace {

using namespace apiary;

colony::generator make(colony::comment_ring& ring, const std::vector<core::account_name>& accounts,
                       const std::vector<double>& weights = {}) {
  colony::generator g(colony::mix_config{}, colony::generator_options{5, 0, true}, accounts, ring, weights);
  core::block_id head;
  head.data[3] = 9;
  g.set_head(head, core::time_point_sec{1'700'000'000});
  return g;
}

TEST(PayerWeights, UniformTakesTheAccountsInTurn) {
  colony::comment_ring ring;
  const auto accounts = colony::genesis_account_names(7);
  colony::generator g = make(ring, accounts);
  for (std::size_t i = 0; i < 700; ++i) {
    const colony::generated_transaction t = g.next();
    ASSERT_EQ(t.signer, accounts[i % 7]) << i;
    if (t.kind == colony::op_kind::transfer) {
      EXPECT_EQ(std::get<core::transfer_operation>(t.tx.operations[0]).to, accounts[(i + 1) % 7]);
    }
  }
}

TEST(PayerWeights, WeightedPicksFollowTheWeights) {
  colony::comment_ring ring;
  const auto accounts = colony::genesis_account_names(12);
  // Orders of magnitude apart, and one account that must never pay.
  const std::vector<double> weights{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 0, 1000};
  colony::generator g = make(ring, accounts, weights);
  constexpr std::size_t n = 100'000;
  std::map<core::account_name, std::uint64_t> count;
  for (std::size_t i = 0; i < n; ++i) {
    const colony::generated_transaction t = g.next();
    ++count[t.signer];
    if (t.kind == colony::op_kind::transfer) {
      EXPECT_NE(std::get<core::transfer_operation>(t.tx.operations[0]).to, t.signer);
    }
  }
  EXPECT_EQ(count[accounts[10]], 0u) << "an account of weight 0 paid";
  double sum = 0;
  for (double w : weights) sum += w;
  double chi2 = 0;
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    if (weights[i] == 0) continue;
    const double expected = static_cast<double>(n) * weights[i] / sum;
    const double d = static_cast<double>(count[accounts[i]]) - expected;
    chi2 += d * d / expected;
  }
  // 10 degrees of freedom (11 accounts that can pay); a one-in-a-million bound.
  const double bound = boost::math::quantile(boost::math::complement(boost::math::chi_squared(10), 1e-6));
  EXPECT_LT(chi2, bound);
  // Round-robin frequencies would be far off: the heaviest account pays most.
  EXPECT_GT(count[accounts[11]], n * 8 / 10);
}

TEST(PayerWeights, WeightsThatSumToNothingCountAsEqual) {
  colony::comment_ring ring;
  const auto accounts = colony::genesis_account_names(4);
  colony::generator g = make(ring, accounts, {0, 0, 0, 0});
  std::map<core::account_name, int> count;
  for (int i = 0; i < 4000; ++i) ++count[g.next().signer];
  for (const auto& a : accounts) EXPECT_GT(count[a], 800) << a.view();
}

TEST(PayerWeights, VestingWeightsAreTheThreadsAccountsVestingToThePowerE) {
  colony::colony_config c;
  c.threads = 3;
  c.genesis_accounts = 1000;
  ASSERT_FALSE(core::parse_vesting_spec("lognormal:median=1e11,sigma=2,min=1e6,max=1e15", c.genesis_vesting));
  EXPECT_TRUE(c.thread_payer_weights(1).empty()) << "uniform: no weights";
  ASSERT_FALSE(colony::parse_payer_weighting("vesting:0.5", c.payers));
  ASSERT_FALSE(c.validate().has_value()) << *c.validate();
  const auto genesis = colony::genesis_account_names(1000);
  for (std::uint32_t t = 0; t < 3; ++t) {
    const std::vector<double> w = c.thread_payer_weights(t);
    const auto mine = colony::deal_accounts(genesis, t, 3);
    ASSERT_EQ(w.size(), mine.size());
    for (std::size_t j = 0; j < w.size(); ++j) {
      const std::uint32_t index = t + 3 * static_cast<std::uint32_t>(j);
      ASSERT_EQ(mine[j], genesis[index]);
      EXPECT_DOUBLE_EQ(w[j], std::sqrt(static_cast<double>(core::vesting_of(c.genesis_vesting, index))));
    }
  }
}

TEST(PayerWeights, TheOptionsText) {
  colony::payer_weighting p;
  EXPECT_EQ(colony::to_string(p), "uniform");
  ASSERT_FALSE(colony::parse_payer_weighting("vesting:1", p));
  EXPECT_TRUE(p.by_vesting);
  EXPECT_EQ(p.exponent, 1.0);
  EXPECT_EQ(colony::to_string(p), "vesting:1");
  ASSERT_FALSE(colony::parse_payer_weighting("vesting:0.25", p));
  EXPECT_EQ(colony::to_string(p), "vesting:0.25");
  ASSERT_FALSE(colony::parse_payer_weighting("uniform", p));
  EXPECT_FALSE(p.by_vesting);
  for (const std::string bad : {"vesting:-1", "vesting:4.5", "vesting:", "vesting:x", "stake", "vesting:nan", ""}) {
    const colony::payer_weighting before = p;
    const auto problem = colony::parse_payer_weighting(bad, p);
    ASSERT_TRUE(problem.has_value()) << bad;
    EXPECT_NE(problem->find("'" + bad + "': expected uniform, or vesting:E with an exponent E from 0 to 4"),
              std::string::npos)
        << *problem;
    EXPECT_EQ(p, before);
  }
}

}  // namespace
