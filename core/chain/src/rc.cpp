#include "apiary/core/chain/rc.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace apiary::core {

namespace {

// Prices and decays multiply two 64-bit numbers before dividing.
__extension__ using u128 = unsigned __int128;
__extension__ using i128 = __int128;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// The most all vesting can regenerate per block: prices must fit 64 bits up to it.
constexpr u128 largest_regen = static_cast<u128>(rc_regen_per_block(std::numeric_limits<std::int64_t>::max()));
// The parameters' bounds (rc_params_problem): pools and products stay well inside 64 bits.
constexpr std::int64_t largest_unit = 1'000'000;
constexpr std::int64_t largest_tau = std::int64_t{1} << 40;
constexpr std::int64_t largest_pool = std::int64_t{1} << 62;
constexpr std::uint32_t largest_shift = 127;

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

// The price of one unit: regen * coeff_a / 2^shift, plus one (never free). It fits 64 bits:
// rc_params_problem checks coeff_a and shift against the largest regen.
std::uint64_t unit_price(std::uint64_t regen, const rc_resource_params& p) {
  return static_cast<std::uint64_t>((static_cast<u128>(regen) * p.coeff_a) >> p.shift) + 1;
}

// v grown by factor basis points per step: v + v * factor * steps / 10,000, in 128 bits.
i128 grown_wide(std::int64_t v, std::uint32_t factor, std::uint32_t steps) {
  return v + static_cast<i128>(v) * factor * steps / rc_factor_one;
}

std::int64_t grown(std::int64_t v, std::uint32_t factor, std::uint32_t steps) {
  return static_cast<std::int64_t>(grown_wide(v, factor, steps));
}

std::string fraction_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

// The scaled values of a base whose keys are each in range: they must fit.
std::string scaled_problem(const rc_base_params& b, std::uint32_t scale) {
  const std::uint32_t steps = scale - 1;
  const i128 budget = grown_wide(b.budget, b.budget_scale_factor, steps);
  const i128 equilibrium =
      b.equilibrium != 0 ? grown_wide(b.equilibrium, b.budget_scale_factor, steps) : budget * b.tau_blocks;
  const i128 max_pool = b.max_pool != 0 ? grown_wide(b.max_pool, b.budget_scale_factor, steps) : 2 * equilibrium;
  const auto text = [](i128 v) {
    return v > largest_pool ? std::string("above 2^62") : std::to_string(static_cast<std::int64_t>(v));
  };
  if (budget > largest_pool)
    return "budget: " + std::to_string(b.budget) + ": above 2^62 at rc_scale " + std::to_string(scale);
  if (equilibrium > largest_pool || max_pool > largest_pool)
    return std::string(b.max_pool != 0 || b.equilibrium != 0 ? "max_pool" : "budget") + ": the maximum pool (" +
           text(max_pool) + " at rc_scale " + std::to_string(scale) + ") must be at most 2^62";
  if (equilibrium < 1)
    return std::string(b.equilibrium != 0 ? "equilibrium" : "budget") +
           ": the equilibrium is 0; a pool's level (pool / equilibrium) needs one above 0";
  if (max_pool < equilibrium)
    return "max_pool: " + text(max_pool) + " is below the equilibrium " + text(equilibrium) +
           (scale == 1 ? std::string() : " (at rc_scale " + std::to_string(scale) + ")");
  if (grown_wide(b.coeff_b, b.price_scale_factor, steps) > largest_pool)
    return "coeff_b: " + std::to_string(b.coeff_b) + " grows above 2^62 at rc_scale " + std::to_string(scale);
  if (!(b.initial_level >= 0) ||
      static_cast<long double>(equilibrium) * b.initial_level > static_cast<long double>(max_pool))
    return "initial_level: " + fraction_text(b.initial_level) + ": expected 0 to max_pool / equilibrium (" +
           fraction_text(equilibrium == 0 ? 0.0 : static_cast<double>(max_pool) / static_cast<double>(equilibrium)) +
           ")";
  return {};
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

rc_usage count_resources(const signed_transaction& tx, std::size_t packed_size, time_point_sec now,
                         const rc_parameters& params) {
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
  for (std::size_t i = 0; i < rc_resource_count; ++i) u[i] *= params[i].unit;
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

std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting,
                     const rc_parameters& params) {
  rc_usage unused;
  return rc_cost(usage, pools, total_vesting, params, unused);
}

std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting,
                     const rc_parameters& params, rc_usage& per_resource) {
  // Hive makes everything free while nothing regenerates (a chain without vesting); apiary
  // charges the floor of one mana per resource even then, so that a tiny --genesis-vesting
  // runs out of mana instead of paying nothing.
  const auto regen = static_cast<std::uint64_t>(std::max<std::int64_t>(rc_regen_per_block(total_vesting), 0));
  u128 total = 0;
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    per_resource[i] = 0;
    if (usage[i] <= 0) continue;
    const rc_resource_params& p = params[i];
    // The price fits 64 bits, so its product with a usage is one 64 x 64 multiplication.
    const std::uint64_t price = unit_price(regen, p);
    // Unsigned before widening: no sign to extend (coeff_b >= 1, a pool below zero counts as 0).
    const auto denominator = static_cast<std::uint64_t>(p.coeff_b + std::max<std::int64_t>(pools[i], 0));
    u128 cost = static_cast<u128>(price) * static_cast<std::uint64_t>(usage[i]) / denominator;
    // Hive's rc_scale price factor; beyond INT64_MAX the total saturates anyway.
    if (p.price_scale != rc_factor_one)
      cost = std::min(cost, static_cast<u128>(int64_max)) * p.price_scale / rc_factor_one;
    per_resource[i] = saturated(cost + 1);
    total += cost + 1;
  }
  return saturated(total);
}

rc_levels rc_pool_levels(const rc_usage& pools, const rc_parameters& params) {
  rc_levels out{};
  for (std::size_t i = 0; i < rc_resource_count; ++i)
    out[i] = static_cast<double>(pools[i]) / static_cast<double>(params[i].equilibrium);
  return out;
}

rc_prices rc_unit_prices(const rc_usage& pools, std::int64_t total_vesting, const rc_parameters& params) {
  const auto regen = static_cast<std::uint64_t>(std::max<std::int64_t>(rc_regen_per_block(total_vesting), 0));
  rc_prices out{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    const rc_resource_params& p = params[i];
    out[i] = static_cast<double>(unit_price(regen, p)) /
             static_cast<double>(p.coeff_b + std::max<std::int64_t>(pools[i], 0)) * static_cast<double>(p.price_scale) /
             static_cast<double>(rc_factor_one);
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

rc_usage rc_next_pools(const rc_usage& pools, const rc_usage& used, const rc_parameters& params) {
  rc_usage next{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) {
    const rc_resource_params& p = params[i];
    const std::int64_t left = pools[i] - used[i];
    // A pool below zero decays back towards zero, as one above it does.
    const u128 magnitude = static_cast<u128>(left < 0 ? -left : left);
    const auto decay = static_cast<std::int64_t>(magnitude * p.decay_num >> rc_decay_shift);
    next[i] = std::min(p.max_pool, (left < 0 ? left + decay : left - decay) + p.budget);
  }
  return next;
}

rc_usage rc_initial_pools(const rc_parameters& params) {
  rc_usage pools{};
  for (std::size_t i = 0; i < rc_resource_count; ++i) pools[i] = params[i].initial_pool;
  return pools;
}

// ---- parameters -------------------------------------------------------------------------

std::string rc_params_problem(const rc_base_params& base, std::uint32_t scale) {
  const rc_base_params& b = base;
  if (scale < 1 || scale > rc_max_scale)
    return "rc_scale: " + std::to_string(scale) + ": expected 1 to " + std::to_string(rc_max_scale);
  if (b.unit < 1 || b.unit > largest_unit)
    return "unit: " + std::to_string(b.unit) + ": expected 1 to " + std::to_string(largest_unit);
  if (b.budget < 0) return "budget: " + std::to_string(b.budget) + ": a budget cannot be negative";
  if (b.tau_blocks < 1 || b.tau_blocks > largest_tau)
    return "tau_blocks: " + std::to_string(b.tau_blocks) + ": expected 1 to " + std::to_string(largest_tau) +
           " (a pool decays by 1/tau_blocks a block)";
  if (b.equilibrium < 0) return "equilibrium: " + std::to_string(b.equilibrium) + ": expected 0 (derived) or more";
  if (b.max_pool < 0) return "max_pool: " + std::to_string(b.max_pool) + ": expected 0 (derived) or more";
  if (b.coeff_b < 1 || b.coeff_b > largest_pool)
    return "coeff_b: " + std::to_string(b.coeff_b) + ": expected 1 to 2^62";
  if (b.shift > largest_shift)
    return "shift: " + std::to_string(b.shift) + ": shifts the 128-bit price product out (expected 0 to " +
           std::to_string(largest_shift) + ")";
  if ((largest_regen * b.coeff_a) >> b.shift >= std::numeric_limits<std::uint64_t>::max())
    return "shift: " + std::to_string(b.shift) + ": with coeff_a " + std::to_string(b.coeff_a) +
           " a price overflows 64 bits (regen up to 2^63 / 144,000 a block); raise the shift or lower coeff_a";
  for (const auto& [name, f] :
       {std::pair{"budget_scale_factor", b.budget_scale_factor}, std::pair{"price_scale_factor", b.price_scale_factor}})
    if (f > rc_factor_max) return std::string(name) + ": " + std::to_string(f) + ": expected 0 to 32767";
  return scaled_problem(b, scale);
}

rc_resource_params rc_scaled(const rc_base_params& base, std::uint32_t scale) {
  const std::uint32_t steps = scale - 1;
  rc_resource_params p;
  p.unit = base.unit;
  p.budget = grown(base.budget, base.budget_scale_factor, steps);
  p.tau_blocks = base.tau_blocks;
  p.decay_num = ((std::uint64_t{1} << rc_decay_shift) + static_cast<std::uint64_t>(base.tau_blocks) / 2) /
                static_cast<std::uint64_t>(base.tau_blocks);
  p.equilibrium =
      base.equilibrium != 0 ? grown(base.equilibrium, base.budget_scale_factor, steps) : p.budget * p.tau_blocks;
  p.max_pool = base.max_pool != 0 ? grown(base.max_pool, base.budget_scale_factor, steps) : 2 * p.equilibrium;
  p.coeff_a = base.coeff_a;
  p.coeff_b = grown(base.coeff_b, base.price_scale_factor, steps);
  p.shift = base.shift;
  p.price_scale = rc_factor_one + base.price_scale_factor * steps;
  p.budget_scale_factor = base.budget_scale_factor;
  p.price_scale_factor = base.price_scale_factor;
  // The level in long double (a 64-bit mantissa, so an equilibrium times 1.0 is itself), to
  // the nearest unit.
  p.initial_pool = std::llroundl(static_cast<long double>(p.equilibrium) * base.initial_level);
  return p;
}

rc_parameters rc_scaled(const rc_base_parameters& base, std::uint32_t scale) {
  rc_parameters out;
  for (std::size_t i = 0; i < rc_resource_count; ++i) out[i] = rc_scaled(base[i], scale);
  return out;
}

}  // namespace apiary::core
