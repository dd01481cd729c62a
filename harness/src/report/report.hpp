// The JSON report of a run (schema: harness/report.schema.json, schema_version 2), streamed
// into one buffer with core::json_writer: no DOM. Units are in the field names (_us, _ms,
// _s, _bytes); shares are fractions in [0, 1].
#pragma once

#include <string>
#include <string_view>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/run_result.hpp"
#include "apiary/harness/report/analysis.hpp"

namespace apiary::harness {

inline constexpr int report_schema_version = 2;

void write_report(core::out_buffer& out, const run_config& c, const run_context& ctx, const run_result& r,
                  const analysis& a, const std::string& path);

// The report a hard exit leaves (a second signal, cycle/signals.hpp): status "aborted", the
// context and the configuration, and stop_reason last: the head ends with its key, and
// aborted_report_tail(signal) (a constant, async-signal-safe) gives its value and the end.
std::string aborted_report_head(const run_config& c, const run_context& ctx, const std::string& path);
std::string_view aborted_report_tail(int signal) noexcept;

}  // namespace apiary::harness
