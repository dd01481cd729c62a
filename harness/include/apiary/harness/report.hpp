// The JSON report of a run (schema: harness/report.schema.json, schema_version 1), streamed
// into one buffer with core::json_writer: no DOM. Units are in the field names (_us, _ms,
// _s, _bytes); shares are fractions in [0, 1].
#pragma once

#include <string>

#include "apiary/core/buffer.hpp"
#include "apiary/harness/analysis.hpp"
#include "apiary/harness/context.hpp"
#include "apiary/harness/run.hpp"
#include "apiary/harness/run_config.hpp"

namespace apiary::harness {

inline constexpr int report_schema_version = 2;

void write_report(core::out_buffer& out, const run_config& c, const run_context& ctx, const run_result& r,
                  const analysis& a, const std::string& path);

// Writes the buffer to path as output_file.hpp says: a regular file through an fsync'ed
// temporary file renamed into place (a reader never sees half a report), a character device
// or a FIFO written through, anything else refused. Throws std::runtime_error naming the path.
void save_file(const std::string& path, const core::out_buffer& content);

// Checks before the run that path can be written (check_output(): creating missing parent
// directories): an error message, or nullopt. Leaves no file behind.
std::optional<std::string> check_writable(const std::string& path);

}  // namespace apiary::harness
