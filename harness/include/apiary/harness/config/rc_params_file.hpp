// rc_params_file: the resource credits' base parameters as data (--rc-params FILE, docs/rc.md
// "Parameters and rc_scale"). The file is TOML, read by the config files' reader (config_file.hpp): one table
// per resource named as rc_resource_name ([history_bytes], [market_bytes], [state_bytes],
// [execution_time]), each key one of rc_base_params::fields and optional (a key or a table left
// out keeps the built-in value); an unknown table or key is an error. `apiary rc-params` prints
// the same form back (rc_params_toml), so a tuner can start from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiary/core/chain/rc.hpp"

namespace apiary::harness {

// Reads the file at `path` over `params` (each key given replaces its value; the ranges are
// checked by check_rc_params). The problem, "PATH:LINE: [table] key: what is wrong" where
// there is a key to name; or "".
std::string read_rc_params(const std::string& path, core::rc_base_parameters& params);

// What is wrong with the parameters at this rc_scale: "[table] key: problem" for the first
// bad key, or nullopt (core::rc_params_problem for each resource).
std::optional<std::string> check_rc_params(const core::rc_base_parameters& params, std::uint32_t scale);

// The parameters as an --rc-params file: every key of every table, the derived ones
// (equilibrium, max_pool 0) as comments, and after each table, as comments, the effective
// values at `scale`; `source` says in the heading where they came from.
std::string rc_params_toml(const core::rc_base_parameters& params, std::uint32_t scale, std::string_view source);

}  // namespace apiary::harness
