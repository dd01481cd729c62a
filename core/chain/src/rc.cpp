#include "apiary/core/chain/rc.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <variant>

namespace apiary::core {

namespace {

// Prices and decays multiply two 64-bit numbers before dividing.
__extension__ using u128 = unsigned __int128;
__extension__ using i128 = __int128;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

std::int64_t saturated(u128 v) { return v > static_cast<u128>(int64_max) ? int64_max : static_cast<std::int64_t>(v); }

struct operation_usage {
  std::int64_t state = 0;
  std::int64_t time = 0;
  bool market = false;
};

operation_usage usage_of(const operation& op) {
  return std::visit(
      [](const auto& o) -> operation_usage {
        using T = std::decay_t<decltype(o)>;
        using s = rc_sizes;
        if constexpr (std::is_same_v<T, vote_operation>) {
          return {s::vote_state, s::vote_time, false};
        } else if constexpr (std::is_same_v<T, comment_operation>) {
          // Edits pay as much as new comments, as in Hive: the size cannot tell them apart.
          const auto chars = static_cast<std::int64_t>(o.permlink.size());
          return {s::comment_state + s::comment_permlink_char * chars, s::comment_time, false};
        } else if constexpr (std::is_same_v<T, comment_options_operation>) {
          std::int64_t routes = 0;
          for (const auto& e : o.extensions) routes += static_cast<std::int64_t>(e.beneficiaries.size());
          return {s::beneficiary_state * routes, s::comment_options_time, false};
        } else if constexpr (std::is_same_v<T, transfer_operation>) {
          return {0, s::transfer_time, true};
        } else {
          static_assert(std::is_same_v<T, custom_json_operation>);
          return {0, s::custom_json_time, false};
        }
      },
      op);
}

// The numerator of a resource's price: regen * a / 2^shift, plus one (never free).
u128 price_numerator(std::int64_t regen, const rc_resource_params& p) {
  return ((static_cast<u128>(regen) * p.a) >> rc_price_shift) + 1;
}

}  // namespace

std::string_view rc_resource_name(rc_resource r) {
  switch (r) {
    case rc_resource::history_bytes: return "history_bytes";
    case rc_resource::market_bytes: return "market_bytes";
    case rc_resource::state_bytes: return "state_bytes";
    case rc_resource::execution_time: return "execution_time";
  }
  return "unknown";
}

rc_usage count_resources(const signed_transaction& tx, std::size_t packed_size, time_point_sec now) {
  std::int64_t state = 0;
  std::int64_t time =
      rc_sizes::transaction_time + rc_sizes::signature_time * static_cast<std::int64_t>(tx.signatures.size());
  bool market = false;
  for (const operation& op : tx.operations) {
    const operation_usage u = usage_of(op);
    state += u.state;
    time += u.time;
    market = market || u.market;
  }
  // The transaction's id stays in the state until it expires, counted in started hours.
  const std::int64_t lives = tx.expiration.secs > now.secs ? std::int64_t{tx.expiration.secs} - now.secs : 0;
  state += rc_sizes::transaction_state * ((lives + 3599) / 3600);
  const auto bytes = static_cast<std::int64_t>(packed_size);
  rc_usage u{};
  u[static_cast<std::size_t>(rc_resource::history_bytes)] = bytes;
  u[static_cast<std::size_t>(rc_resource::market_bytes)] = market ? bytes : 0;
  u[static_cast<std::size_t>(rc_resource::state_bytes)] = state;
  u[static_cast<std::size_t>(rc_resource::execution_time)] = time;
  for (std::size_t i = 0; i < rc_resource_count; ++i) u[i] *= rc_params[i].unit;
  return u;
}

std::optional<account_name> rc_payer(const signed_transaction& tx) {
  if (tx.operations.empty()) return std::nullopt;
  return std::visit(
      [](const auto& o) -> std::optional<account_name> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, vote_operation>) {
          return o.voter;
        } else if constexpr (std::is_same_v<T, comment_operation> || std::is_same_v<T, comment_options_operation>) {
          return o.author;
        } else if constexpr (std::is_same_v<T, transfer_operation>) {
          return o.from;
        } else {
          // Hive takes the smallest name of the first non-empty authority set, active first.
          const account_set& set = o.required_auths.empty() ? o.required_posting_auths : o.required_auths;
          if (set.empty()) return std::nullopt;
          return *std::min_element(set.begin(), set.end());
        }
      },
      tx.operations.front());
}

std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting) {
  rc_usage unused;
  return rc_cost(usage, pools, total_vesting, unused);
}

std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting, rc_usage& per_resource) {
  // Hive makes everything free while nothing regenerates (a chain without vesting); apiary
  // charges the floor of one mana per resource even then, so that a tiny --genesis-vesting
  // runs out of mana instead of paying nothing.
  const std::int64_t regen = std::max<std::int64_t>(rc_regen_per_block(total_vesting), 0);
  u128 total = 0;
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    per_resource[i] = 0;
    if (usage[i] <= 0) continue;
    const rc_resource_params& p = rc_params[i];
    const auto denominator = static_cast<u128>(p.b + std::max<std::int64_t>(pools[i], 0));
    const u128 cost = price_numerator(regen, p) * static_cast<u128>(usage[i]) / denominator + 1;
    per_resource[i] = saturated(cost);
    total += cost;
  }
  return saturated(total);
}

rc_levels rc_pool_levels(const rc_usage& pools) {
  rc_levels out{};
  for (std::size_t i = 0; i < rc_resource_count; ++i)
    out[i] = static_cast<double>(pools[i]) / static_cast<double>(rc_params[i].equilibrium);
  return out;
}

rc_prices rc_unit_prices(const rc_usage& pools, std::int64_t total_vesting) {
  const std::int64_t regen = std::max<std::int64_t>(rc_regen_per_block(total_vesting), 0);
  rc_prices out{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    const rc_resource_params& p = rc_params[i];
    out[i] =
        static_cast<double>(price_numerator(regen, p)) / static_cast<double>(p.b + std::max<std::int64_t>(pools[i], 0));
  }
  return out;
}

manabar rc_regenerated(const manabar& m, std::int64_t max, time_point_sec now) {
  if (now.secs <= m.last_update.secs) return m;
  const std::uint32_t elapsed = now.secs - m.last_update.secs;
  manabar out{max, now};
  if (elapsed < rc_constants::regen_secs) {
    const i128 refilled = static_cast<i128>(m.current) + static_cast<i128>(max) * elapsed / rc_constants::regen_secs;
    if (refilled < max) out.current = static_cast<std::int64_t>(refilled);
  }
  return out;
}

rc_usage rc_next_pools(const rc_usage& pools, const rc_usage& used) {
  rc_usage next{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    const rc_resource_params& p = rc_params[i];
    const std::int64_t left = pools[i] - used[i];
    // A pool below zero decays back towards zero, as one above it does.
    const u128 magnitude = static_cast<u128>(left < 0 ? -left : left);
    const auto decay = static_cast<std::int64_t>(magnitude * p.decay_num >> rc_decay_shift);
    next[i] = std::min(p.max_pool, (left < 0 ? left + decay : left - decay) + p.budget);
  }
  return next;
}

rc_usage rc_initial_pools() {
  rc_usage pools{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) pools[i] = rc_params[i].equilibrium;
  return pools;
}

}  // namespace apiary::core
