#include "report/summary.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "apiary/colony/mix.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {

namespace {

template <class... Args>
void append(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// Microseconds as a grouped whole number: "140,221 µs".
std::string us_text(double us) { return grouped(static_cast<std::uint64_t>(us + 0.5)) + " µs"; }

std::string stop_text(const run_result& r, const run_config& c) {
  switch (r.stopped_by) {
    case stop_reason::blocks: return "stopped after " + grouped(c.stop.blocks) + " measured blocks";
    case stop_reason::transactions: return "stopped after " + grouped(c.stop.transactions) + " measured transactions";
    case stop_reason::duration: return "stopped after the --duration";
    case stop_reason::sigint:
    case stop_reason::sigterm:
    case stop_reason::sighup: return "interrupted by " + std::string(to_string(r.stopped_by));
    default: return "failed";
  }
}

void append_header(std::string& s, const run_config& c, const run_context& ctx, const run_result& r,
                   const analysis& a) {
  append(s, "apiary run '{}': {}; {} warm-up + {} measured blocks\n", c.name, stop_text(r, c), r.warmup_blocks,
         a.measured_blocks);
  if (r.status == run_status::failed) append(s, "  error: {}\n", r.error);
  append(s, "  {} build, commit {}, {}, {} cores\n", ctx.build_type, ctx.commit, ctx.cpu_model, ctx.cores);
  if (!measuring_build(ctx)) append(s, "  warning: {}; these times are not the ones to quote\n", build_caveat(ctx));
  // On the chain's clock the rate is the slot's count: say that instead of "rate block".
  const std::string rate = c.writer.clock ? "blocks by clock, " + core::to_string(*c.writer.clock) + " per slot"
                                          : "rate " + rate_text(c.colony);
  append(s, "  {} producer threads, {}, signing {}, block target {} bytes, {} accounts, seed {}\n", c.colony.threads,
         rate, c.colony.sign ? "on" : "off", grouped(c.writer.block_size), grouped(c.chain.genesis_accounts),
         c.colony.seed);
}

void append_cycle(std::string& s, const analysis& a) {
  if (a.cycle_us().stats.count == 0) {
    s += "Full block cycle: no measured cycle\n";
    return;
  }
  const auto& cy = a.cycle_us();
  append(s, "Full block cycle: fastest {} (block #{}), average {}, slowest {} (block #{})\n", us_text(cy.stats.min),
         cy.min_block, us_text(cy.stats.avg), us_text(cy.stats.max), cy.max_block);
  append(s, "  median {}, p90 {}, p99 {}, standard deviation {} over {} cycles\n", us_text(cy.stats.median),
         us_text(cy.stats.p90), us_text(cy.stats.p99), us_text(cy.stats.population_stddev), cy.stats.count);
}

void append_throughput(std::string& s, const analysis& a) {
  const auto avg = [&a](std::size_t figure) { return a.figure(figure).stats.avg; };
  append(s, "Per block on average: produced in {}, applied in {}, {} of processing in all\n",
         us_text(avg(block_figure_index("produced_us"))), us_text(avg(block_figure_index("applied_us"))),
         us_text(avg(block_figure_index("processing_us"))));
  append(s, "Transactions: {} per block ({} bytes); {} tx/s, {} in {:.1f} s\n",
         grouped(static_cast<std::uint64_t>(avg(block_figure_index("transactions_per_block")) + 0.5)),
         grouped(static_cast<std::uint64_t>(avg(block_figure_index("size_bytes")) + 0.5)),
         grouped(static_cast<std::uint64_t>(a.tx_per_s + 0.5)), grouped(a.measured_transactions), a.window_s);
  append(s,
         "Writer time: {} waiting for work, {} waiting for locks, {} processing transactions, {} processing blocks, "
         "{} observing blocks, {} unknown\n",
         percent_text(a.wait_work_share), percent_text(a.wait_lock_share), percent_text(a.tx_share),
         percent_text(a.block_share), percent_text(a.observe_share), percent_text(a.unknown_share));
}

// Whether the figures can be used (validity.hpp), and a tps run's schedule.
void append_validity(std::string& s, const analysis& a) {
  if (a.verdict.valid)
    s += a.schedule.traced ? "  valid: yes, the load generator kept to its schedule\n" : "  valid: yes\n";
  for (const std::string& why : a.verdict.reasons) append(s, "  INVALID: {}\n", why);
  for (const std::string& w : a.verdict.warnings) append(s, "  warning: {}\n", w);
  const schedule_analysis& sc = a.schedule;
  if (!sc.traced || sc.intervals.empty()) return;
  const schedule_interval& last = sc.intervals.back();
  append(s,
         "Schedule: {:.0f} tx/s; behind it by {:.0f} ms at the end, {:.0f} ms of it held back by the system under test",
         sc.rate, last.lag_ms, last.held_ms);
  if (sc.worst_fall_behind > 0)
    append(s, "; the generator's own lag grew at most {} of a second (at {:.1f} s)", percent_text(sc.worst_fall_behind),
           sc.worst_at_s);
  s += "\n";
}

// The process's CPU: how busy, the bound it puts on the cycle, where it went; the signing bound.
void append_cpu(std::string& s, const run_config& c, const run_context& ctx, const analysis& a) {
  append(s, "CPU: {} of {} cores busy while measuring", percent_text(a.cpu_utilization), ctx.cores);
  if (a.machine_known)
    append(s, " (the machine {} busy, {} of it by other processes)", percent_text(a.machine_busy_share),
           percent_text(a.other_processes_share));
  s += "\n";
  if (a.cpu_bound_us > 0) {
    append(s, "Process CPU: {:.1f} ms per block, a bound of {} per cycle on {} cores", a.cpu_ms_per_block,
           us_text(a.cpu_bound_us), ctx.cores);
    if (a.cycle_to_cpu_bound > 0) append(s, "; the cycle is {:.2f}x that", a.cycle_to_cpu_bound);
    s += "\n";
  }
  if (a.split.known)
    append(s, "  per block: signing {:.1f} ms, core {:.1f} ms, harness {:.1f} ms ({} of the process's CPU)\n",
           a.split.signing_ms, a.split.core_ms, a.split.harness_ms, percent_text(a.split.harness_share));
  else if (a.cpu_bound_us > 0)
    s += "  per block: not split (signing's CPU is measured only with --measure-cpu on)\n";
  if (c.colony.sign && a.signing_bound_us > 0)
    append(s, "Signing: {:.1f} ms of CPU per block, a bound of {} per cycle on {} cores; the cycle is {:.2f}x that\n",
           a.signing_ms_per_block, us_text(a.signing_bound_us), ctx.cores, a.cycle_to_signing_bound);
}

// One line per counted thread, and one naming what was not counted and why (grouped by reason).
void append_counters(std::string& s, const counter_results& k, const analysis& a) {
  if (!k.enabled) return;
  if (!k.unavailable.empty()) {
    append(s, "Counters: unavailable: {}\n", k.unavailable);
    return;
  }
  constexpr std::size_t task_clock = counter_event_index("task_clock_ns");
  constexpr std::size_t switches = counter_event_index("context_switches");
  constexpr std::size_t instructions = counter_event_index("instructions");
  s += "Counters per thread over the measured window:\n";
  for (std::size_t i = 0; i < k.threads.size(); ++i) {
    const thread_counter_rates& t = a.counters[i];
    append(s, "  {}: ", k.threads[i].name);
    if (const auto& v = t.per_transaction[task_clock])
      append(s, "{:.1f} µs task clock/tx, ", *v / 1e3);
    else
      s += "task clock n/a, ";
    if (const auto& v = t.per_block[switches])
      append(s, "{:.{}f} switches/block, ", *v, *v < 100 ? 2 : 0);
    else
      s += "switches n/a, ";
    if (const auto& v = t.per_transaction[instructions])
      append(s, "{} instructions/tx", grouped(static_cast<std::uint64_t>(*v + 0.5)));
    else
      s += "instructions n/a";
    if (t.ipc) append(s, ", IPC {:.2f}", *t.ipc);
    s += "\n";
  }
  // The events not counted, those of one reason together.
  std::vector<std::pair<std::string, std::string>> missing;  // reason, events
  for (std::size_t e = 0; e < counter_event_count; ++e) {
    if (k.events[e].available) continue;
    auto it =
        std::find_if(missing.begin(), missing.end(), [&](const auto& m) { return m.first == k.events[e].reason; });
    if (it == missing.end()) it = missing.insert(missing.end(), {k.events[e].reason, {}});
    it->second += (it->second.empty() ? "" : ", ") + std::string(counter_events[e].name);
  }
  for (std::size_t m = 0; m < missing.size(); ++m)
    append(s, "{}{}: {}", m == 0 ? "  not counted: " : "; ", missing[m].second, missing[m].first);
  if (!missing.empty()) s += "\n";
}

void append_colony(std::string& s, const colony::colony_stats& k) {
  append(s, "Colony: {} generated", grouped(k.generated));
  if (k.injected != 0) append(s, " and {} faulty (--faults)", grouped(k.injected));
  append(s, ", {} accepted, {} rejected", grouped(k.accepted()), grouped(k.rejected()));
  bool first = true;
  for (std::size_t i = 1; i < core::reject_count; ++i) {
    if (k.outcomes.by_reason[i] == 0 || !core::is_rejection(static_cast<core::reject>(i))) continue;
    append(s, "{}{} {}", first ? " (" : ", ", core::reject_name(static_cast<core::reject>(i)),
           grouped(k.outcomes.by_reason[i]));
    first = false;
  }
  if (!first) s += ")";
  if (k.shutdown() != 0) append(s, ", {} not processed (shutdown)", grouped(k.shutdown()));
  s += "\n  mix:";
  for (colony::op_kind kind : colony::all_op_kinds)
    append(s, " {} {} ({:.0f} B)", colony::op_kind_name(kind), percent_text(k.share(kind)),
           k.average_packed_bytes(kind));
  s += "\n";
}

std::string target_value(const target_check& t) {
  if (t.name == "cpu_utilization") return fmt::format("{:.1f}%", t.value * 100);
  if (t.name == "transactions_per_block") return fmt::format("{:.0f}", t.value);
  if (t.name == "cycle_to_cpu_bound") return fmt::format("{:.2f}x", t.value);
  if (t.name == "harness_cpu_share") return fmt::format("{:.1f}%", t.value * 100);
  return fmt::format("{:.1f} ms", t.value);
}

// One line per stage, from the histograms of every settled transaction.
void append_latency(std::string& s, const latency_recorder& l) {
  for (const auto& [name, stage] : latency_stage_names) {
    const latency_summary x = l.stage(stage).summary();
    if (x.count == 0) continue;
    append(s, "Latency {:<11} p50 {}, p90 {}, p99 {}, p99.9 {}, max {} ({} transactions)\n", std::string(name) + ":",
           us_text(x.quantile_ns[0] / 1e3), us_text(x.quantile_ns[1] / 1e3), us_text(x.quantile_ns[2] / 1e3),
           us_text(x.quantile_ns[3] / 1e3), us_text(x.max_ns / 1e3), grouped(x.count));
  }
}

void append_outcome(std::string& s, const run_result& r, const analysis& a, const state_source& state) {
  if (!a.targets.empty() && r.status != run_status::failed) {
    s += "Targets:\n";
    for (const target_check& t : a.targets)
      append(s, "  {}: {} ({})\n", t.description, target_value(t), t.met ? "met" : "NOT met");
  }
  append(s, "Peak RSS {:.1f} MiB; ", static_cast<double>(r.usage_end.peak_rss_bytes) / (1024.0 * 1024.0));
  if (state.path.empty())
    append(s, "genesis {:.1f} s", static_cast<double>(r.genesis_ns) / 1e9);
  else
    append(s, "{} {} (head block {}) loaded in {:.2f} s", state.format, state.path, state.head_block_num,
           static_cast<double>(state.load_ns) / 1e9);
  if (r.dumped_transactions != 0) append(s, "; {} transactions dumped", r.dumped_transactions);
  if (r.dumped_blocks != 0) append(s, "; {} blocks dumped", r.dumped_blocks);
  if (r.block_log_blocks != 0) append(s, "; {} blocks in the block log", r.block_log_blocks);
  s += "\n";
  if (!r.audit.ran) return;
  if (r.audit.passed()) {
    append(s,
           "Audit: passed (supply balanced; undo sessions open: {}; ids known: {}, the accepted unexpired ones{}; "
           "blocks chained and within size; accepted = included + pending)\n",
           r.audit.undo_depth, grouped(r.audit.known_transactions), state.path.empty() ? "" : " and the snapshot's");
  } else {
    append(s, "Audit: FAILED, {} violations\n", r.audit.violations.size());
    for (const std::string& v : r.audit.violations) append(s, "  {}\n", v);
  }
}

// --profile: where it went, its samples and the three functions that took most of them.
void append_profile(std::string& s, const profile_result& p) {
  if (p.dir.empty()) return;
  append(s, "Profile: {}: ", p.dir);
  if (!p.window_opened) {
    s += "no samples (the run stopped before its measured window)\n";
    return;
  }
  append(s, "{} samples at {} Hz", grouped(p.samples), p.frequency_hz);
  for (std::size_t i = 0; i < p.top.size() && i < 3 && p.top[i].self != 0; ++i)
    append(s, "{}{} {}", i == 0 ? "; most self time: " : ", ", short_function_name(p.top[i].name),
           percent_text(static_cast<double>(p.top[i].self) / static_cast<double>(p.samples)));
  if (!p.error.empty()) append(s, "; FAILED: {}", p.error);
  s += "\n";
}

// Hive's colony prints these per producer thread at the end.
void log_colony_thread(spdlog::logger& log, std::size_t t, const colony::colony_stats& k) {
  log.info("Production stats for thread colony-{}", t);
  log.info("Number of transactions: {}", k.generated);
  if (k.generated == 0) return;
  for (colony::op_kind kind : colony::all_op_kinds) {
    const colony::kind_totals& kt = k.kinds[colony::index_of(kind)];
    if (kt.count == 0) continue;
    log.info("{}: {} ({:.2f}%), avg.extra: {:.0f}, avg.size: {:.0f}", colony::op_kind_name(kind), kt.count,
             k.share(kind) * 100, k.average_extra_bytes(kind), k.average_packed_bytes(kind));
  }
  if (k.reply_substitutions != 0 || k.vote_substitutions != 0)
    log.info("{} replies and {} votes substituted with articles due to lack of proper target comment",
             k.reply_substitutions, k.vote_substitutions);
  if (k.rejected() != 0) log.info("{} transactions failed", k.rejected());
  if (k.in_flight_brake.waits != 0)
    log.info("{} times production loop was locked out due to reaching max number of waiting transactions",
             k.in_flight_brake.waits);
  for (const colony::colony_counter_info& c : colony::colony_counters)
    if (!c.hive_line.empty() && k.*c.member != 0) log.info("{}", fmt::format(fmt::runtime(c.hive_line), k.*c.member));
}

}  // namespace

std::string format_summary(const run_config& c, const run_context& ctx, const run_result& r, const analysis& a,
                           const std::string& report_path) {
  std::string s;
  append_header(s, c, ctx, r, a);
  if (a.measured_blocks != 0) append_validity(s, a);
  append_cycle(s, a);
  if (a.measured_blocks != 0) {
    append_throughput(s, a);
    append_cpu(s, c, ctx, a);
  }
  append_counters(s, r.counters, a);
  if (r.pinning.requested) append(s, "Pinned (--pin on): {}\n", r.pinning.note);
  append_colony(s, r.colony_total);
  append_latency(s, r.latency);
  append_outcome(s, r, a, ctx.state);
  append_profile(s, r.profile);
  if (!report_path.empty()) append(s, "Report: {}\n", report_path);
  return s;
}

void log_statistics(spdlog::logger& log, const run_result& r, const analysis& a) {
  for (std::size_t t = 0; t < r.colony_threads.size(); ++t) log_colony_thread(log, t, r.colony_threads[t]);
  if (a.measured_blocks != 0) {
    const auto avg = [&a](std::size_t figure) { return a.figure(figure).stats.avg; };
    log.info("Blocks produced in average time of {:.0f}μs, applied in {:.0f}μs, average full processing time {:.0f}μs",
             avg(block_figure_index("produced_us")), avg(block_figure_index("applied_us")),
             avg(block_figure_index("processing_us")));
  }
  if (a.cycle_us().stats.count != 0) {
    const auto& cy = a.cycle_us();
    log.info("Full block cycle: min = {:.0f}μs at #{}, avg = {:.0f}μs, max = {:.0f}μs at #{}", cy.stats.min,
             cy.min_block, cy.stats.avg, cy.stats.max, cy.max_block);
  }
  if (a.machine_known && a.other_processes_share > 0.10)
    log.warn("other processes took {} of the machine while measuring; the times are not comparable",
             percent_text(a.other_processes_share));
}

}  // namespace apiary::harness
