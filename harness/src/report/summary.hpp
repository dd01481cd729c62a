// The human summary printed at the end of a run: the facts Hive's cycle test prints (the
// full block cycle with the blocks of its extremes; average production, application and
// processing time per block), then throughput, the writer's time, the colony, CPU and the
// targets, in plain words.
#pragma once

#include <spdlog/logger.h>

#include <cstdio>
#include <string>

#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/run_result.hpp"
#include "apiary/harness/report/analysis.hpp"

namespace apiary::harness {

std::string format_summary(const run_config& c, const run_context& ctx, const run_result& r, const analysis& a,
                           const std::string& report_path);

// Hive's statistics lines at info: the colony's per-thread production stats and the queen's
// "Blocks produced in average time of ..." and "Full block cycle: ..." lines; a warning
// when other processes took over 10% of the machine.
void log_statistics(spdlog::logger& log, const run_result& r, const analysis& a);

}  // namespace apiary::harness
