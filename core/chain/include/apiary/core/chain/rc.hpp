// Resource credits (RC): what a transaction costs its payer, after Hive's model.
//
// Every account has an RC manabar whose maximum is its vesting; it refills linearly from empty
// to full in rc_regen_secs of chain time. A transaction uses four resources (history bytes,
// market bytes, state bytes, execution time), counted from what it is (count_resources); each
// resource has a pool, refilled by a per-block budget and decaying towards its equilibrium,
// whose level sets the resource's price (rc_cost): the emptier the pool, the dearer. The payer
// (rc_payer) must have the cost in mana, or the transaction is turned away with
// reject::insufficient_rc. docs/rc.md gives the parameters, the formulas and what is simpler
// than Hive.
//
// This header holds the pure arithmetic; where the charges live while transactions are pending
// is rc_ledger's business (chain_options::rc).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/time_point.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

enum class rc_resource : std::uint8_t { history_bytes, market_bytes, state_bytes, execution_time };
static_assert(rc_resource_count == 4);

std::string_view rc_resource_name(rc_resource r);

// One amount per resource, indexable by rc_resource.
using rc_usage = std::array<std::int64_t, rc_resource_count>;

struct rc_constants {
  static constexpr std::uint32_t regen_secs = 5 * 24 * 3600;  // a manabar refills in five days
  static constexpr std::uint32_t block_secs = 3;
  static constexpr std::int64_t regen_blocks = regen_secs / block_secs;  // 144,000
};

// One resource's dynamics and price curve, as a chain uses them (rc_scaled gives them from the
// base parameters and the rc_scale). Per block:
//   pool' = min(max_pool, pool - used - decay(pool - used) + budget)
//   decay(p) = p * decay_num / 2^decay_shift            (1/tau of the pool, tau in blocks)
// so a pool left alone levels off at equilibrium = budget * tau. Price per unit:
//   regen * coeff_a / 2^shift / (coeff_b + max(pool, 0)) * price_scale / 10,000
// (regen: all vesting / regen_blocks); the defaults take coeff_b = equilibrium / 128 (the
// price stops rising when the pool is empty) and coeff_a so that using exactly the budget at
// the equilibrium costs about 1.5% of a block's regeneration.
struct rc_resource_params {
  std::int64_t unit = 1;  // usage is counted in units of this many
  std::int64_t budget = 0;
  std::int64_t tau_blocks = 1;
  std::uint64_t decay_num = 0;
  std::int64_t equilibrium = 0;
  std::int64_t max_pool = 0;
  std::uint64_t coeff_a = 0;
  std::int64_t coeff_b = 0;
  std::uint32_t shift = 0;
  std::uint32_t price_scale = 10'000;  // Hive's price "scale": the cost times price_scale / 10,000
  std::uint32_t budget_scale_factor = 0;
  std::uint32_t price_scale_factor = 0;
  std::int64_t initial_pool = 0;  // the pool at genesis
};

// The four resources' parameters, indexable by rc_resource: what the chain holds
// (chain::rc_params) and every RC function reads, by reference.
using rc_parameters = std::array<rc_resource_params, rc_resource_count>;

inline constexpr unsigned rc_decay_shift = 48;
inline constexpr unsigned rc_price_shift = 32;
// Hive's HIVE_RC_MAX_SCALE: 2 MiB blocks over 64 KiB ones.
inline constexpr std::uint32_t rc_max_scale = 32;
// The scale factors and the price scale are in basis points: 10,000 is 100%.
inline constexpr std::uint32_t rc_factor_one = 10'000;
// The largest budget_scale_factor and price_scale_factor: Hive keeps them in an int16.
inline constexpr std::uint32_t rc_factor_max = 32'767;

// One resource's base parameters, what an --rc-params file gives (docs/rc.md): the effective
// ones are rc_scaled(base, rc_scale). equilibrium and max_pool 0: derived (budget * tau_blocks
// at the scaled budget, and twice the equilibrium).
struct rc_base_params {
  std::int64_t unit = 1;
  std::int64_t budget = 0;
  std::int64_t tau_blocks = 1;
  std::int64_t equilibrium = 0;
  std::int64_t max_pool = 0;
  std::uint64_t coeff_a = 0;
  std::int64_t coeff_b = 0;
  std::uint32_t shift = rc_price_shift;
  std::uint32_t budget_scale_factor = 0;  // the budget's growth per step of rc_scale, in basis points
  std::uint32_t price_scale_factor = 0;   // coeff_b's and the price scale's, likewise
  double initial_level = 1.0;             // the pool at genesis, as a fraction of the equilibrium
  friend bool operator==(const rc_base_params&, const rc_base_params&) = default;

  // Every parameter: f(name, member pointer), in this order; the names are an --rc-params
  // file's keys.
  template <class F>
  static constexpr void fields(F&& f) {
    f("unit", &rc_base_params::unit);
    f("budget", &rc_base_params::budget);
    f("tau_blocks", &rc_base_params::tau_blocks);
    f("equilibrium", &rc_base_params::equilibrium);
    f("max_pool", &rc_base_params::max_pool);
    f("coeff_a", &rc_base_params::coeff_a);
    f("coeff_b", &rc_base_params::coeff_b);
    f("shift", &rc_base_params::shift);
    f("budget_scale_factor", &rc_base_params::budget_scale_factor);
    f("price_scale_factor", &rc_base_params::price_scale_factor);
    f("initial_level", &rc_base_params::initial_level);
  }
};
using rc_base_parameters = std::array<rc_base_params, rc_resource_count>;

// A base parameter set from a budget per block and a characteristic time, with the price
// curve apiary derives from them (see docs/rc.md) and Hive's scale factors.
constexpr rc_base_params make_rc_base(std::int64_t unit, std::int64_t budget, std::int64_t tau_blocks,
                                      std::uint32_t budget_scale_factor, std::uint32_t price_scale_factor) {
  rc_base_params p;
  p.unit = unit;
  p.budget = budget;
  p.tau_blocks = tau_blocks;
  p.coeff_b = budget * tau_blocks / 128;
  // 1.5% (3/200) of a block's regeneration buys the whole budget at the equilibrium:
  // regen * a / 2^s * budget / (b + eq) ~ 0.015 regen  =>  a ~ 0.015 * tau * 2^s.
  p.coeff_a = static_cast<std::uint64_t>(tau_blocks) * (std::uint64_t{1} << rc_price_shift) * 3 / 200;
  p.budget_scale_factor = budget_scale_factor;
  p.price_scale_factor = price_scale_factor;
  return p;
}

// The defaults: Hive's per-block budgets scaled by 32, the ratio of apiary's 2 MiB blocks to
// Hive's 64 KiB ones, with Hive's characteristic times (about 21.6 days for history and state,
// 23 hours for market bytes, 1.4 hours for execution time) and Hive's scale factors.
inline constexpr rc_base_parameters rc_default_params{{
    make_rc_base(1, 43'403 * 32, 623'243, 10'000, 0),        // history bytes
    make_rc_base(10, 72'338 * 32, 27'701, 10'000, 0),        // market bytes, in tenths
    make_rc_base(1, 43'546'196 * 32, 623'243, 967, 161),     // state bytes, in byte-hours
    make_rc_base(1, 40'000'000 * 32, 1'732, 10'000, 3'548),  // execution time, in nanoseconds
}};

// What is wrong with a base parameter set at this scale: "key: problem" naming the first bad
// key (the resource's name not included), or "" when the set can be used. Checks the ranges
// (unit >= 1, budget >= 0, tau_blocks >= 1, factors 0..10,000, coeff_b >= 1, shift 0..127,
// initial_level 0..max_pool/equilibrium, scale 1..rc_max_scale) and that the values fit: a
// price per unit in 64 bits at the largest regen (rc_cost relies on it), the scaled maximum
// pool in 2^62, not below the equilibrium.
std::string rc_params_problem(const rc_base_params& base, std::uint32_t scale);

// Hive's update_rc_scale: budget, given equilibrium and given max_pool grow by
// budget_scale_factor * (scale - 1) / 10,000, coeff_b by price_scale_factor likewise, the price
// scale is 10,000 + price_scale_factor * (scale - 1); the equilibrium is recomputed from the
// scaled budget. At scale 1 the base values unchanged. The base must be valid
// (rc_params_problem).
rc_resource_params rc_scaled(const rc_base_params& base, std::uint32_t scale);
rc_parameters rc_scaled(const rc_base_parameters& base, std::uint32_t scale);

// The resource credits at a moment, for reports (chain::rc): the pools, and the
// insufficient_rc rejections of pushed transactions per block (those pushed before it).
struct rc_status {
  rc_usage pools{};
  rc_usage equilibria{};  // the chain's parameters' (pool / equilibrium: a pool's level)
  std::int64_t total_vesting = 0;
  std::uint64_t rejected = 0;            // since the chain was built (genesis or a snapshot)
  std::uint64_t blocks = 0;              // blocks applied
  std::uint64_t max_block_rejected = 0;  // the most before one block
};

// What each operation kind costs in state (byte-hours: an object's size times the hours it
// lives) and in execution time (nanoseconds), Hive's measured values.
struct rc_sizes {
  static constexpr std::int64_t persistent_byte = 5 * 365 * 24;  // held for five years
  static constexpr std::int64_t cashout_byte = 7 * 24;           // held until the payout, 7 days
  static constexpr std::int64_t comment_state = 96 * persistent_byte + 192 * cashout_byte;
  static constexpr std::int64_t comment_permlink_char = cashout_byte;
  static constexpr std::int64_t beneficiary_state = 8 * cashout_byte;
  static constexpr std::int64_t vote_state = 144 * cashout_byte;
  static constexpr std::int64_t transaction_state = 128;  // per hour until it expires

  static constexpr std::int64_t comment_time = 66'178;
  static constexpr std::int64_t comment_options_time = 6'202;
  static constexpr std::int64_t vote_time = 18'312;
  static constexpr std::int64_t transfer_time = 5'999;
  static constexpr std::int64_t custom_json_time = 1'509;
  static constexpr std::int64_t transaction_time = 6'622;
  static constexpr std::int64_t signature_time = 94'165;
};

// The resources a transaction of `packed_size` bytes uses when applied at `now`, in the
// parameters' units.
rc_usage count_resources(const signed_transaction& tx, std::size_t packed_size, time_point_sec now,
                         const rc_parameters& params);

// The account that pays: the first operation's first active authority, else its first
// posting authority (Hive's resource user). nullopt: none (an operation naming nobody).
std::optional<account_name> rc_payer(const signed_transaction& tx);

// What all vesting regenerates per block: the scale of every price.
constexpr std::int64_t rc_regen_per_block(std::int64_t total_vesting) {
  return total_vesting / rc_constants::regen_blocks;
}

// The mana a usage costs at these pool levels: at least 1 per resource used, even when
// nothing regenerates (unlike Hive, docs/rc.md). Saturates at INT64_MAX.
std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting,
                     const rc_parameters& params);
// The same, and what each resource costs of it in `per_resource` (each saturated too), for
// the RC statistics (rc_stats.hpp).
std::int64_t rc_cost(const rc_usage& usage, const rc_usage& pools, std::int64_t total_vesting,
                     const rc_parameters& params, rc_usage& per_resource);

// Each pool's level (pool / equilibrium) and each resource's price (mana per unit at these
// pools), for reports.
using rc_levels = std::array<double, rc_resource_count>;
using rc_prices = std::array<double, rc_resource_count>;
rc_levels rc_pool_levels(const rc_usage& pools, const rc_parameters& params);
rc_prices rc_unit_prices(const rc_usage& pools, std::int64_t total_vesting, const rc_parameters& params);

// The manabar at `now`: refilled by max * elapsed / regen_secs, at most max.
manabar rc_regenerated(const manabar& m, std::int64_t max, time_point_sec now);

// The pools after a block that used `used` (the formula above).
rc_usage rc_next_pools(const rc_usage& pools, const rc_usage& used, const rc_parameters& params);

// The pools a new chain starts with: each at its initial_level of its equilibrium.
rc_usage rc_initial_pools(const rc_parameters& params);

}  // namespace apiary::core
