// report_json: the fields that the run report and the replay's result both write about the
// options and the machine. Defined in report.cpp.
#pragma once

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/report/analysis.hpp"
#include "io/json_out.hpp"

namespace apiary::harness {

// `"name": value` of one run option, typed as the option is (number, boolean or string).
void write_option(json_out& j, const config_entry& o);

// `"indexes": {"accounts": {"objects": N, "bytes": N}, ...}` of a state's census.
void write_indexes(json_out& j, const core::state_census& s);

// `"params": {"scale", "file", "resources": [...]}`: the effective RC parameters (docs/rc.md),
// into the `rc` object being written.
void write_rc_params(json_out& j, const run_config& c);

// The run_context fields (cpu_model ... start_time, and the state snapshot the chain started
// from or null), into the object being written.
void write_context_fields(json_out& j, const run_context& ctx);

// Defined in report_validity.cpp: `"tuning": {...}` of the context, and the report's
// `validity` and `schedule` sections (validity.hpp).
void write_tuning(json_out& j, const machine_tuning& t);
// context.pin: what --pin did (cpu_pinning.hpp).
void write_pinning(json_out& j, const cpu_pinning& p);
void write_validity(json_out& j, const analysis& a);
void write_schedule(json_out& j, const analysis& a);

}  // namespace apiary::harness
