// rc_stats: Hive's resource-credit statistics (its rc plugin's rc_stats), kept by the chain
// over the transactions of the blocks it applies and archived every
// chain_options::rc_stats_blocks blocks (Hive's archive_and_reset_stats):
//
//   per operation kind   the transactions, their cost per resource and their usage per
//                        resource, summed (an average is a sum over the count);
//   per payer rank       the rank is the order of magnitude of the payer's maximum RC (its
//                        vesting): clamp(floor(log10(max)) - 9, 0, 7); per rank the
//                        transactions, those whose payer had less than 5, 10 and 20% of its
//                        maximum before the charge (each count includes the ones below it),
//                        and those whose payer could not afford a reference vote, comment and
//                        transfer: mana before the charge below the average cost of that kind
//                        as of the previous archive (kept from an earlier one when an archive
//                        had none of that kind; 0, nobody counted, before the first archive).
//
// The op kind of a transaction: its single operation's kind; comment_options counts as a
// comment when alone or right after the comment it sets the options of (a post with its
// beneficiaries is one comment, as apiary's mix writes every article); anything else of
// several operations is multi. docs/rc.md says what differs from Hive.
//
// Everything here is fixed-size: a transaction's contribution is an rc_charge_sample, added
// (and, for a pending transaction taken back, subtracted) without allocating.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "apiary/core/chain/rc.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

enum class rc_op_kind : std::uint8_t { vote, comment, transfer, custom_json, multi };
inline constexpr std::size_t rc_op_kind_count = 5;
std::string_view rc_op_kind_name(rc_op_kind k);

// The kinds a payer's mana is compared with (cant_afford): vote, comment, transfer.
inline constexpr std::size_t rc_reference_kind_count = 3;
static_assert(static_cast<int>(rc_op_kind::vote) == 0 && static_cast<int>(rc_op_kind::comment) == 1 &&
              static_cast<int>(rc_op_kind::transfer) == 2);
inline constexpr std::size_t rc_payer_rank_count = 8;

rc_op_kind rc_op_kind_of(const signed_transaction& tx);
// clamp(floor(log10(max_rc)) - 9, 0, 7), by comparisons with powers of ten.
inline std::size_t rc_payer_rank(std::int64_t max_rc) {
  std::size_t rank = 0;
  std::int64_t bound = 10'000'000'000;  // 10^10: rank 1 from here
  while (rank + 1 < rc_payer_rank_count && max_rc >= bound) {
    ++rank;
    bound *= 10;
  }
  return rank;
}

struct rc_op_stats {
  std::uint64_t count = 0;
  rc_usage cost{};   // mana, per resource
  rc_usage usage{};  // resource units (count_resources)
  bool operator==(const rc_op_stats&) const = default;
};

struct rc_payer_stats {
  std::uint64_t count = 0;
  std::uint64_t below_5 = 0;  // mana before the charge under 5% of the maximum
  std::uint64_t below_10 = 0;
  std::uint64_t below_20 = 0;
  std::array<std::uint64_t, rc_reference_kind_count> cant_afford{};  // vote, comment, transfer
  bool operator==(const rc_payer_stats&) const = default;
};

// A block's transaction's contribution.
struct rc_charge_sample {
  rc_op_kind kind = rc_op_kind::vote;
  std::uint8_t rank = 0;
  std::uint8_t below = 0;  // 0: at least 20%; 1: under 20%; 2: under 10%; 3: under 5%
  std::array<bool, rc_reference_kind_count> cant_afford{};
  rc_usage cost{};
  rc_usage usage{};
};

// The average total cost of a vote, a comment and a transfer (rc_stats::reference_costs).
using rc_reference_costs = std::array<std::int64_t, rc_reference_kind_count>;

// The sample of a transaction of kind `kind` whose payer has `max_rc` at most and `mana`
// before it pays `cost` (per resource) for `usage`.
inline rc_charge_sample make_rc_sample(rc_op_kind kind, std::int64_t max_rc, std::int64_t mana, const rc_usage& cost,
                                       const rc_usage& usage, const rc_reference_costs& reference) {
  rc_charge_sample s;
  s.kind = kind;
  s.rank = static_cast<std::uint8_t>(rc_payer_rank(max_rc));
  s.below = mana < max_rc / 20 ? 3 : mana < max_rc / 10 ? 2 : mana < max_rc / 5 ? 1 : 0;
  for (std::size_t i = 0; i < rc_reference_kind_count; ++i) s.cant_afford[i] = mana < reference[i];
  s.cost = cost;
  s.usage = usage;
  return s;
}

struct rc_stats {
  std::array<rc_op_stats, rc_op_kind_count> ops{};
  std::array<rc_payer_stats, rc_payer_rank_count> payers{};

  void add(const rc_charge_sample& s) { apply(s, 1); }
  void subtract(const rc_charge_sample& s) { apply(s, -1); }
  rc_stats& operator+=(const rc_stats& o);
  std::uint64_t transactions() const;
  // The average total cost of each reference kind here; `previous`'s for a kind with none.
  rc_reference_costs reference_costs(const rc_reference_costs& previous) const;
  bool operator==(const rc_stats&) const = default;

 private:
  // Counts go up by one, or down by one (the unsigned wrap of adding -1).
  void apply(const rc_charge_sample& s, std::int64_t sign) {
    const auto step = static_cast<std::uint64_t>(sign);
    rc_op_stats& op = ops[static_cast<std::size_t>(s.kind)];
    op.count += step;
    for (std::size_t i = 0; i < rc_resource_count; ++i) {
      op.cost[i] += sign * s.cost[i];
      op.usage[i] += sign * s.usage[i];
    }
    rc_payer_stats& p = payers[s.rank];
    p.count += step;
    if (s.below >= 1) p.below_20 += step;
    if (s.below >= 2) p.below_10 += step;
    if (s.below >= 3) p.below_5 += step;
    for (std::size_t i = 0; i < rc_reference_kind_count; ++i)
      if (s.cant_afford[i]) p.cant_afford[i] += step;
  }
};

// One archive: the statistics of blocks first_block..block, with the pools and prices at
// block (after it applied).
struct rc_archive {
  std::uint32_t block = 0;
  std::uint32_t first_block = 0;
  rc_usage pools{};
  rc_levels levels{};
  rc_prices prices{};
  std::int64_t regen = 0;         // mana all accounts regenerate per block
  std::uint64_t accepted = 0;     // transactions in the blocks
  std::uint64_t rejected_rc = 0;  // insufficient_rc rejections of pushes since the last archive
  rc_stats stats;
};

}  // namespace apiary::core
