// named_enum: the one table that spells an enumeration's names. Each module declares one
// table per enumeration beside it (chain_options.hpp, colony_config.hpp, writer_queue.hpp);
// to_string, parsing, --help's list of choices and the command line's validators all read
// that table, so adding a value is one line in one place.
//
//   inline constexpr std::array<enum_name<dedup_mode>, 2> dedup_mode_names{{
//       {"split", dedup_mode::split}, {"unified", dedup_mode::unified}}};
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace apiary::core {

template <class E>
struct enum_name {
  std::string_view name;
  E value;
};

// The name of `value` in `table`, or "unknown" when the table lacks it.
template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<enum_name<E>, N>& table, E value) {
  for (const enum_name<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "unknown";
}

// The value named `name` exactly, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(const std::array<enum_name<E>, N>& table, std::string_view name) {
  for (const enum_name<E>& entry : table)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

// The names joined by `separator`: "split|unified", "split or unified".
template <class E, std::size_t N>
std::string names_text(const std::array<enum_name<E>, N>& table, std::string_view separator = "|") {
  std::string out;
  for (const enum_name<E>& entry : table) {
    if (!out.empty()) out += separator;
    out += entry.name;
  }
  return out;
}

}  // namespace apiary::core
