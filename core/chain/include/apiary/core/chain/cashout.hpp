// Cashout: after Hive's comment rewards, reduced to what keeps the state bounded and the
// supply honest.
//
// A vote gives the comment reward shares (rshares): 2% of the voter's vesting at a full vote,
// scaled by the weight, signed. A comment pays out once, cashout_blocks after it was created
// (chain_options; Hive's 7 days by default). The reward fund grows by reward_per_block new
// HIVE every block; recent_claims, the sum of the claims paid lately, decays linearly over 15
// days. At a block, the comments due first add their claims (positive net rshares) to
// recent_claims; each then takes balance x claims / recent_claims from the fund, capped by its
// max_accepted_payout. Half goes to the curators (the voters with positive rshares, in
// proportion), the rest to the beneficiaries by weight and the remainder to the author; what
// rounding or a missing curator leaves stays in the fund. Then the comment's votes and the
// comment leave the state: nothing is archived (docs/cashout.md says what differs from Hive).
//
// This header holds the pure arithmetic; chain_cashout.cpp applies it.
#pragma once

#include <cstdint>

namespace apiary::core {

struct cashout_constants {
  static constexpr std::uint32_t default_window_blocks = 7 * 24 * 3600 / 3;  // 201,600
  static constexpr std::int64_t reward_per_block = 2'000;                    // 2.000 HIVE of new supply
  static constexpr std::uint32_t claims_decay_secs = 15 * 24 * 3600;
  static constexpr std::int64_t curation_percent = 50;
  static constexpr std::int64_t full_vote_percent = 2;  // of the vesting, at weight 10,000
};

// The reward shares of a vote of `weight` (-10,000..10,000) by a voter with `vesting`.
std::int64_t vote_rshares(std::int64_t vesting, std::int16_t weight);
// recent_claims after `secs` of linear decay over claims_decay_secs.
std::uint64_t decay_claims(std::uint64_t recent_claims, std::uint32_t secs);
// A comment's reward from a fund holding `balance`: balance x claims / recent_claims (0 when
// either is 0), at most `cap`.
std::int64_t comment_reward(std::int64_t balance, std::uint64_t claims, std::uint64_t recent_claims, std::int64_t cap);
// part x numerator / denominator, rounded down, without overflow (0 when denominator is 0).
std::int64_t share_of(std::int64_t part, std::uint64_t numerator, std::uint64_t denominator);

}  // namespace apiary::core
