#include "apiary/harness/config/rc_params_file.hpp"

#include <spdlog/fmt/fmt.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "apiary/core/base/number_text.hpp"
#include "apiary/harness/config/config_file.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"

namespace apiary::harness {

namespace {

using core::number_text;

std::string table_name(std::size_t i) { return std::string(core::rc_resource_name(static_cast<core::rc_resource>(i))); }

// The resource a table names, or nullopt.
std::optional<std::size_t> resource_of(std::string_view table) {
  for (std::size_t i = 0; i < core::rc_resource_count; ++i)
    if (table == table_name(i)) return i;
  return std::nullopt;
}

// A TOML integer (an optional minus sign, digits with optional _ groups), or nullopt.
std::optional<std::int64_t> parse_integer(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative || text.starts_with('+')) text.remove_prefix(1);
  if (text.empty() || text.front() == '_') return std::nullopt;
  const std::optional<std::uint64_t> n = parse_count(text);
  if (!n || *n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return negative ? -static_cast<std::int64_t>(*n) : static_cast<std::int64_t>(*n);
}

// Sets one field from its text: the problem, or "".
template <class T>
std::string set_field(T& field, std::string_view text) {
  if constexpr (std::is_same_v<T, double>) {
    double v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || !std::isfinite(v))
      return "expected a number (e.g. 1.0)";
    field = v;
  } else {
    const std::optional<std::int64_t> v = parse_integer(text);
    if (!v || !std::in_range<T>(*v))
      return std::is_signed_v<T> ? std::string("expected a whole number")
                                 : fmt::format("expected a whole number from 0 to {}", std::numeric_limits<T>::max());
    field = static_cast<T>(*v);
  }
  return {};
}

// Sets the key of one resource's parameters: the problem, or "".
std::string set_key(core::rc_base_params& p, std::string_view key, const std::string& value) {
  std::string problem = "unknown key";
  core::rc_base_params::fields([&](std::string_view name, auto member) {
    if (name != key) return;
    problem = set_field(p.*member, value);
    if (!problem.empty()) problem = fmt::format("'{}': {}", shown(value), problem);
  });
  return problem;
}

std::string known_keys() {
  std::string out;
  core::rc_base_params::fields([&](std::string_view name, auto) {
    if (!out.empty()) out += ", ";
    out += name;
  });
  return out;
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return number_text(v);
  } else {
    return std::to_string(v);
  }
}

// The table an item is in, or the empty table it is; nullopt for a key outside a table.
std::optional<std::string> table_of(const toml_item& item) {
  toml_item table = item;
  if (item.type != toml_type::table) table.key.pop_back();
  if (table.key.empty()) return std::nullopt;
  return table.dotted();
}

// Reads one value of the file into `read`: the problem, "[table] key: ..." (without the file),
// or "".
std::string read_item(core::rc_base_parameters& read, const toml_item& item) {
  const std::optional<std::string> table = table_of(item);
  if (!table)
    return fmt::format("key '{}' outside a table; the keys go in a resource's table ([{}], ...)", shown(item.dotted()),
                       table_name(0));
  const std::optional<std::size_t> r = resource_of(*table);
  if (!r)
    return fmt::format("unknown table [{}]; the tables are {}, {}, {} and {}", shown(*table), table_name(0),
                       table_name(1), table_name(2), table_name(3));
  if (item.type == toml_type::table) return {};  // a resource's table with no key
  const std::string& key = item.key.back();
  if (item.type != toml_type::integer && item.type != toml_type::floating)
    return fmt::format("[{}] {}: expected a number, not {}", *table, shown(key), toml_type_name(item.type));
  std::string problem = set_key(read[*r], key, item.value);
  if (problem == "unknown key") problem += fmt::format(" (the keys are {})", known_keys());
  return problem.empty() ? problem : fmt::format("[{}] {}: {}", *table, shown(key), problem);
}

}  // namespace

std::string read_rc_params(const std::string& path, core::rc_base_parameters& params) {
  std::vector<toml_item> items;
  try {
    if (std::string problem = read_toml(path, "resource credit parameter file", items); !problem.empty())
      return problem;
  } catch (const input_error& e) {
    return shown_path(path) + ": " + e.what();
  }
  core::rc_base_parameters read = params;
  for (const toml_item& item : items)
    if (std::string problem = read_item(read, item); !problem.empty()) return toml_where(path, item) + ": " + problem;
  params = read;
  return {};
}

std::optional<std::string> check_rc_params(const core::rc_base_parameters& params, std::uint32_t scale) {
  for (std::size_t i = 0; i < core::rc_resource_count; ++i)
    if (std::string problem = core::rc_params_problem(params[i], scale); !problem.empty())
      return fmt::format("[{}] {}", table_name(i), problem);
  return std::nullopt;
}

std::string rc_params_toml(const core::rc_base_parameters& params, std::uint32_t scale, std::string_view source) {
  std::string out = fmt::format(
      "# apiary's resource credit parameters ({}), for --rc-params (docs/rc.md, \"Parameters and rc_scale\").\n"
      "# equilibrium and max_pool 0 (or left out): budget * tau_blocks and 2 * equilibrium.\n",
      source);
  const core::rc_parameters effective = core::rc_scaled(params, scale);
  for (std::size_t i = 0; i < core::rc_resource_count; ++i) {
    out += "\n[" + table_name(i) + "]\n";
    core::rc_base_params::fields([&](std::string_view name, auto member) {
      const auto v = params[i].*member;
      if (name == "equilibrium" && v == 0) {
        out += "# equilibrium = (derived: budget * tau_blocks)\n";
      } else if (name == "max_pool" && v == 0) {
        out += "# max_pool = (derived: 2 * equilibrium)\n";
      } else {
        out += fmt::format("{} = {}\n", name, value_text(v));
      }
    });
    const core::rc_resource_params& e = effective[i];
    out += fmt::format(
        "# at rc_scale {}: budget {}, equilibrium {}, max_pool {}, coeff_b {}, price_scale {}, initial pool {}\n",
        scale, e.budget, e.equilibrium, e.max_pool, e.coeff_b, e.price_scale, e.initial_pool);
  }
  return out;
}

}  // namespace apiary::harness
