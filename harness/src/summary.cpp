#include "apiary/harness/summary.hpp"

#include <cstdarg>

#include "apiary/colony/mix.hpp"
#include "apiary/harness/progress.hpp"

namespace apiary::harness {

namespace {

void appendf(std::string& out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void appendf(std::string& out, const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n > 0) out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

// Microseconds as a grouped whole number: "140,221 µs".
std::string us_text(double us) { return grouped(static_cast<std::uint64_t>(us + 0.5)) + " µs"; }

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", share * 100);
  return buf;
}

std::string stop_text(const run_result& r, const run_config& c) {
  if (r.stop_reason == "blocks") return "stopped after " + grouped(c.blocks) + " measured blocks";
  if (r.stop_reason == "transactions")
    return "stopped after " + grouped(c.transactions) + " measured transactions";
  if (r.stop_reason == "duration") return "stopped after the --duration";
  if (r.stop_reason == "SIGINT" || r.stop_reason == "SIGTERM") return "interrupted by " + r.stop_reason;
  return "failed";
}

}  // namespace

std::string format_summary(const run_config& c, const run_context& ctx, const run_result& r, const analysis& a,
                           const std::string& report_path) {
  std::string s;
  appendf(s, "apiary run '%s': %s; %u warm-up + %u measured blocks\n", c.name.c_str(), stop_text(r, c).c_str(),
          r.warmup_blocks, a.measured_blocks);
  if (r.status == run_status::failed) appendf(s, "  error: %s\n", r.error.c_str());
  appendf(s, "  %s build, commit %s, %s, %u cores\n", ctx.build_type.c_str(), ctx.commit.c_str(),
          ctx.cpu_model.c_str(), ctx.cores);
  if (!measuring_build(ctx))
    appendf(s, "  warning: not a release build without sanitizers; these times are not the ones to quote\n");
  appendf(s, "  %u producer threads, rate %s, signing %s, block target %s bytes, %s accounts, seed %llu\n", c.threads,
          rate_text(c).c_str(), c.sign ? "on" : "off", grouped(c.block_size).c_str(), grouped(c.accounts).c_str(),
          static_cast<unsigned long long>(c.seed));

  if (a.cycle_us.stats.count != 0) {
    const auto& cy = a.cycle_us;
    appendf(s, "Full block cycle: fastest %s (block #%u), average %s, slowest %s (block #%u)\n",
            us_text(cy.stats.min).c_str(), cy.min_block, us_text(cy.stats.avg).c_str(),
            us_text(cy.stats.max).c_str(), cy.max_block);
    appendf(s, "  median %s, p90 %s, p99 %s, standard deviation %s over %zu cycles\n",
            us_text(cy.stats.median).c_str(), us_text(cy.stats.p90).c_str(), us_text(cy.stats.p99).c_str(),
            us_text(cy.stats.stddev).c_str(), cy.stats.count);
  } else {
    appendf(s, "Full block cycle: no measured cycle\n");
  }
  if (a.measured_blocks != 0) {
    appendf(s, "Per block on average: produced in %s, applied in %s, %s of processing in all\n",
            us_text(a.produced_us.stats.avg).c_str(), us_text(a.applied_us.stats.avg).c_str(),
            us_text(a.processing_us.stats.avg).c_str());
    appendf(s, "Transactions: %s per block (%s bytes); %s tx/s, %s in %.1f s\n",
            grouped(static_cast<std::uint64_t>(a.transactions.stats.avg + 0.5)).c_str(),
            grouped(static_cast<std::uint64_t>(a.size_bytes.stats.avg + 0.5)).c_str(),
            grouped(static_cast<std::uint64_t>(a.tx_per_s + 0.5)).c_str(), grouped(a.measured_transactions).c_str(),
            a.window_s);
    appendf(s,
            "Writer time: %s waiting for work, %s waiting for locks, %s processing transactions, %s processing "
            "blocks, %s unknown\n",
            pct(a.wait_work_share).c_str(), pct(a.wait_lock_share).c_str(), pct(a.tx_share).c_str(),
            pct(a.block_share).c_str(), pct(a.unknown_share).c_str());
    appendf(s, "CPU: %s of %u cores busy while measuring", pct(a.cpu_utilization).c_str(), ctx.cores);
    if (a.machine_known)
      appendf(s, " (the machine %s busy, %s of it by other processes)", pct(a.machine_busy_share).c_str(),
              pct(a.other_processes_share).c_str());
    s += "\n";
    if (a.machine_known && a.other_processes_share > 0.05)
      appendf(s, "  warning: other processes took %s of the machine while measuring; the times are not comparable\n",
              pct(a.other_processes_share).c_str());
    if (c.sign && a.signing_bound_us > 0)
      appendf(s, "Signing: %.1f ms of CPU per block, a bound of %s per cycle on %u cores; the cycle is %.2fx that\n",
              a.signing_ms_per_block, us_text(a.signing_bound_us).c_str(), ctx.cores, a.cycle_to_signing_bound);
  }
  const colony::colony_stats& k = r.colony_total;
  appendf(s, "Colony: %s generated", grouped(k.generated).c_str());
  if (k.injected != 0) appendf(s, " and %s faulty (--faults)", grouped(k.injected).c_str());
  appendf(s, ", %s accepted, %s rejected", grouped(k.accepted()).c_str(), grouped(k.rejected()).c_str());
  bool first = true;
  for (std::size_t i = 1; i < core::reject_count; ++i) {
    if (k.outcomes.by_reason[i] == 0 || !core::is_rejection(static_cast<core::reject>(i))) continue;
    appendf(s, "%s%s %s", first ? " (" : ", ", core::reject_name(static_cast<core::reject>(i)).data(),
            grouped(k.outcomes.by_reason[i]).c_str());
    first = false;
  }
  if (!first) s += ")";
  if (k.shutdown() != 0) appendf(s, ", %s not processed (shutdown)", grouped(k.shutdown()).c_str());
  s += "\n  mix:";
  for (colony::op_kind kind : colony::all_op_kinds)
    appendf(s, " %s %s (%.0f B)", colony::op_kind_name(kind).data(), pct(k.share(kind)).c_str(),
            k.average_packed_bytes(kind));
  s += "\n";
  if (!a.targets.empty() && r.status != run_status::failed) {
    s += "Targets:\n";
    for (const target_check& t : a.targets) {
      char value[64];
      if (t.name == "cpu_utilization")
        std::snprintf(value, sizeof value, "%.1f%%", t.value * 100);
      else if (t.name == "transactions_per_block")
        std::snprintf(value, sizeof value, "%.0f", t.value);
      else if (t.name == "cycle_to_signing_bound")
        std::snprintf(value, sizeof value, "%.2fx", t.value);
      else
        std::snprintf(value, sizeof value, "%.1f ms", t.value);
      appendf(s, "  %s: %s (%s)\n", t.description.c_str(), value, t.met ? "met" : "NOT met");
    }
  }
  appendf(s, "Peak RSS %.1f MiB; genesis %.1f s", static_cast<double>(r.usage_end.peak_rss_bytes) / (1024.0 * 1024.0),
          static_cast<double>(r.genesis_ns) / 1e9);
  if (r.dumped_transactions != 0) appendf(s, "; %llu transactions dumped", static_cast<unsigned long long>(r.dumped_transactions));
  if (r.dumped_blocks != 0) appendf(s, "; %llu blocks dumped", static_cast<unsigned long long>(r.dumped_blocks));
  s += "\n";
  if (r.audit.ran) {
    if (r.audit.passed()) {
      appendf(s,
              "Audit: passed (supply unchanged; undo sessions open: %llu; ids known: %s, the accepted unexpired ones; "
              "blocks chained and within size; accepted = included + pending)\n",
              static_cast<unsigned long long>(r.audit.undo_depth), grouped(r.audit.known_transactions).c_str());
    } else {
      appendf(s, "Audit: FAILED, %zu violations\n", r.audit.violations.size());
      for (const std::string& v : r.audit.violations) appendf(s, "  %s\n", v.c_str());
    }
  }
  if (!report_path.empty()) appendf(s, "Report: %s\n", report_path.c_str());
  return s;
}

}  // namespace apiary::harness
