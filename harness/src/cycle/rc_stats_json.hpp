// rc_stats_json: Hive's RC statistics (core/chain/rc_stats.hpp) as JSON, the one writer of the
// report's rc.archives and rc.stats (run and replay) and of the interval log's
// {"rc_archive": {...}} lines, so all three have the same fields (docs/report.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "apiary/core/chain/rc_stats.hpp"
#include "io/json_out.hpp"

namespace apiary::harness {

// "ops": [5 objects, one per op kind] and "payers": [8 objects, one per rank], as fields of
// the object the caller opened.
void write_rc_stats_fields(json_out& j, const core::rc_stats& s);

// One archive: block, pools, levels, prices, regen, accepted, rejected_rc, ops, payers.
void write_rc_archive(json_out& j, const core::rc_archive& a);

// The interval log's line for an archive, with its newline.
std::string rc_archive_line(const core::rc_archive& a);

// The statistics of the archives that lie wholly at or after block `from` (the measured
// window's first block), summed.
core::rc_stats sum_rc_archives(std::span<const core::rc_archive> archives, std::uint32_t from);

// The report's rc fields "stats_blocks", "archives" (all) and "stats" (the sum from `from`).
void write_rc_statistics(json_out& j, std::uint32_t stats_blocks, std::span<const core::rc_archive> archives,
                         std::uint32_t from);

}  // namespace apiary::harness
