#include "apiary/core/chain/cashout.hpp"

#include <algorithm>
#include <cstdlib>

namespace apiary::core {

namespace {
__extension__ using u128 = unsigned __int128;
__extension__ using i128 = __int128;
}  // namespace

std::int64_t vote_rshares(std::int64_t vesting, std::int16_t weight) {
  const auto v = static_cast<i128>(vesting) * cashout_constants::full_vote_percent * weight;
  return static_cast<std::int64_t>(v / (100 * 10'000));
}

std::uint64_t decay_claims(std::uint64_t recent_claims, std::uint32_t secs) {
  if (secs >= cashout_constants::claims_decay_secs) return 0;
  const auto decay = static_cast<u128>(recent_claims) * secs / cashout_constants::claims_decay_secs;
  return recent_claims - static_cast<std::uint64_t>(decay);
}

std::int64_t share_of(std::int64_t part, std::uint64_t numerator, std::uint64_t denominator) {
  if (denominator == 0 || part <= 0) return 0;
  return static_cast<std::int64_t>(static_cast<u128>(part) * numerator / denominator);
}

std::int64_t comment_reward(std::int64_t balance, std::uint64_t claims, std::uint64_t recent_claims, std::int64_t cap) {
  if (claims == 0 || recent_claims == 0) return 0;
  return std::min(
      {share_of(balance, std::min(claims, recent_claims), recent_claims), std::max<std::int64_t>(cap, 0), balance});
}

}  // namespace apiary::core
