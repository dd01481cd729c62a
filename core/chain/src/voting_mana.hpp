// The voting manabar's constants and regeneration, shared by genesis (every account starts
// full) and the vote evaluator (a vote spends from it). Private to the chain.
#pragma once

#include <algorithm>
#include <cstdint>

#include "apiary/core/chain/state_objects.hpp"

namespace apiary::core::detail {

constexpr std::int64_t max_mana = 10'000'000;             // per account, arbitrary units
constexpr std::uint32_t mana_regen_secs = 5 * 24 * 3600;  // full regeneration, as Hive

inline void regenerate(manabar& m, time_point_sec now) {
  if (now.secs <= m.last_update.secs) return;
  std::int64_t elapsed = now.secs - m.last_update.secs;
  m.current = std::min(max_mana, m.current + max_mana * elapsed / mana_regen_secs);
  m.last_update = now;
}

}  // namespace apiary::core::detail
