// slot_schedule: how many transactions are offered for each block when blocks come on the
// chain's clock (one block per 3-second slot, whatever was accepted), as a real chain makes
// them. The count of a slot is a constant, or drawn from a distribution by the block's number
// and a seed alone, so the producers (colony) and the block producer (queen) that are given
// the same schedule agree on every slot's count without telling each other, and a run and
// its deterministic replay cut the same blocks.
//
//   constant   "1000"             every slot offers 1000
//   poisson    "poisson:1000"     Poisson with mean 1000 (std::poisson_distribution)
//   uniform    "uniform:800..1200" uniform over 800 to 1200 inclusive
//
// block_trigger says what ends a block: its size (the writer's target, today's modes) or its
// slot of the chain's clock (this schedule's count of transactions answered).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiary/core/base/named_enum.hpp"

namespace apiary::core {

enum class block_trigger : std::uint8_t {
  size,   // a block once the pending transactions fill the size (or count) target
  clock,  // a block per slot, once the slot's transactions are answered, full or not
};
inline constexpr std::array<enum_name<block_trigger>, 2> block_trigger_names{
    {{"size", block_trigger::size}, {"clock", block_trigger::clock}}};
constexpr std::string_view to_string(block_trigger t) { return name_of(block_trigger_names, t); }

struct slot_schedule {
  enum class shape : std::uint8_t { constant, poisson, uniform };
  // The most transactions one slot may offer (and the largest mean or bound).
  static constexpr std::uint32_t most = 10'000'000;

  shape form = shape::constant;
  std::uint32_t low = 1000;   // constant: the count; uniform: the smallest
  std::uint32_t high = 1000;  // uniform: the largest
  double mean = 0;            // poisson
  std::uint64_t seed = 1;     // the draws' seed (the run's --seed)

  // The transactions offered for the block numbered `block_num`: the same for the same
  // schedule, seed and number, on every thread and in every run.
  std::uint32_t count(std::uint32_t block_num) const;

  bool operator==(const slot_schedule&) const = default;
};

// The schedule a text names (the forms above; the seed is left at 1), or a message saying what
// is wrong with it.
struct slot_schedule_parse {
  std::optional<slot_schedule> schedule;
  std::string problem;
};
slot_schedule_parse parse_slot_schedule(std::string_view text);
// The text parse_slot_schedule reads back (without the seed).
std::string to_string(const slot_schedule& s);

}  // namespace apiary::core
