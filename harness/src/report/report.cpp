#include "report/report.hpp"

#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "cycle/rc_stats_json.hpp"
#include "report/report_json.hpp"

namespace apiary::harness {

void write_indexes(json_out& j, const core::state_census& s) {
  j.key("indexes");
  j.begin_object();
  for (const core::index_census& i : s.indexes) {
    j.key(i.name);
    j.begin_object();
    j.field("objects", i.objects);
    j.field("bytes", i.bytes);
    j.end_object();
  }
  j.end_object();
}

void write_option(json_out& j, const config_entry& o) {
  const std::string& v = o.text;
  j.key(o.name);
  switch (o.kind) {
    case value_kind::number: {
      // Whole numbers exactly; fractions (durations, rates) exactly too: a duration of 1e-300
      // s is recorded as that, not rounded to 0, which reads as "no limit".
      if (v.find_first_of(".eE") == std::string::npos)
        j.value(static_cast<std::uint64_t>(std::stoull(v)));
      else
        j.exact(std::stod(v));
      break;
    }
    case value_kind::toggle: j.value(v == "on"); break;
    case value_kind::text: j.text_or_null(v); break;
  }
}

void write_context_fields(json_out& j, const run_context& ctx) {
  j.field("cpu_model", ctx.cpu_model);
  j.field("cores", ctx.cores);
  j.field("compiler", ctx.compiler);
  j.field("build_type", ctx.build_type);
  j.field("sanitizer", ctx.sanitizer);
  j.field("planted_push_rounds", ctx.planted_push_rounds);
  j.field("commit", ctx.commit);
  j.field("version", ctx.version);
  j.field("hostname", ctx.hostname);
  j.field("command_line", ctx.command_line);
  j.field("start_time", ctx.start_time);
  j.key("state");
  const state_source& s = ctx.state;
  if (s.path.empty()) {
    j.null();
    return;
  }
  j.begin_object();
  j.field("path", s.path);
  j.field("format", s.format);
  j.field("state_digest", s.state_digest);
  j.field("head_block_num", s.head_block_num);
  j.field("bytes", s.bytes);
  j.field("load_ms", ms(s.load_ns), 3);
  j.field("open_ms", ms(s.open_ns), 3);
  j.field("prefault_ms", ms(s.prefault_ns), 3);
  j.field("verify_ms", ms(s.verify_ns), 3);
  j.field("resident_bytes", s.resident_bytes);
  j.field("made_ms", ms(s.made_ns), 3);
  j.end_object();
}

void write_rc_params(json_out& j, const run_config& c) {
  j.key("params");
  j.begin_object();
  j.field("scale", c.chain.rc_scale);
  j.key("file");
  j.text_or_null(c.rc_params_file);
  j.key("resources");
  j.begin_array();
  const core::rc_parameters params = core::rc_scaled(c.chain.rc_params, c.chain.rc_scale);
  for (std::size_t i = 0; i < core::rc_resource_count; ++i) {
    const core::rc_resource_params& p = params[i];
    j.begin_object();
    j.field("name", core::rc_resource_name(static_cast<core::rc_resource>(i)));
    j.field("unit", p.unit);
    j.field("budget", p.budget);
    j.field("tau_blocks", p.tau_blocks);
    j.field("equilibrium", p.equilibrium);
    j.field("max_pool", p.max_pool);
    j.field("coeff_a", p.coeff_a);
    j.field("coeff_b", p.coeff_b);
    j.field("shift", p.shift);
    j.field("price_scale", p.price_scale);
    j.field("budget_scale_factor", p.budget_scale_factor);
    j.field("price_scale_factor", p.price_scale_factor);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

namespace {

void write_series(json_out& j, std::string_view name, const block_series& s, int decimals) {
  j.key(name);
  j.begin_object();
  j.field("count", static_cast<std::uint64_t>(s.stats.count));
  const bool any = s.stats.count != 0;
  auto num = [&](std::string_view k, double v) {
    j.key(k);
    if (any)
      j.value(v, decimals);
    else
      j.null();
  };
  auto block = [&](std::string_view k, std::uint32_t n) {
    j.key(k);
    if (any)
      j.value(n);
    else
      j.null();
  };
  num("min", s.stats.min);
  block("min_block", s.min_block);
  num("avg", s.stats.avg);
  num("max", s.stats.max);
  block("max_block", s.max_block);
  num("median", s.stats.median);
  num("p90", s.stats.p90);
  num("p99", s.stats.p99);
  num("stddev", s.stats.population_stddev);
  j.end_object();
}

void write_config(json_out& j, const run_config& c) {
  j.begin_object();
  for (const config_entry& e : describe(c)) write_option(j, e);
  j.field("config_file", c.config_file);
  j.end_object();
}

// A producer counter under its report key (colony_counters.hpp): a count as it is, a time in ms.
void write_counter(json_out& j, const colony::colony_counter_info& c, const colony::colony_stats& k) {
  const std::uint64_t v = k.*c.member;
  if (c.in == colony::colony_counter_info::unit::ns)
    j.field(c.report_key(), ms(static_cast<std::int64_t>(v)), 3);
  else
    j.field(c.report_key(), v);
}

// Each producer thread, as Hive's colony prints it at the end.
void write_colony_threads(json_out& j, const std::vector<colony::colony_stats>& threads) {
  j.key("per_thread");
  j.begin_array();
  for (std::size_t t = 0; t < threads.size(); ++t) {
    const colony::colony_stats& k = threads[t];
    j.begin_object();
    j.field("thread", static_cast<std::uint64_t>(t));
    j.field("accounts", k.accounts);
    for (const colony::colony_counter_info& c : colony::colony_counters)
      if (c.per_thread()) write_counter(j, c, k);
    j.field("accepted", k.accepted());
    j.field("rejected", k.rejected());
    j.field("in_flight_waits", k.in_flight_brake.waits);
    j.field("budget_waits", k.budget_brake.waits);
    j.end_object();
  }
  j.end_array();
}

void write_brake(json_out& j, std::string_view name, const colony::brake_totals& b) {
  j.key(name);
  j.begin_object();
  j.field("waits", b.waits);
  j.field("wait_ms", ms(static_cast<std::int64_t>(b.wait_ns)), 3);
  j.end_object();
}

}  // namespace

namespace {

// What the report is made of.
struct report_inputs {
  const run_config& c;
  const run_context& ctx;
  const run_result& r;
  const analysis& a;
  const std::string& path;
};

// The report's sections, in order; each writes its keys into the top-level object.
// The report a hard exit leaves (aborted_report_head): it says why and what was run.
constexpr std::string_view aborted_error =
    "a second signal ended the run at once: nothing it measured was kept (the first signal stops a run in order "
    "and keeps its report)";

void write_status(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.field("schema_version", report_schema_version);
  j.field("name", c.name);
  j.field("status", to_string(r.status));
  j.field("interrupted", r.status == run_status::interrupted);
  j.field("failed", r.status == run_status::failed);
  j.key("error");
  j.text_or_null(r.error);
  j.field("stop_reason", to_string(r.stopped_by));
  j.field("report_path", path);
}

void write_context(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("context");
  j.begin_object();
  write_context_fields(j, ctx);
  write_tuning(j, ctx.tuning);
  write_pinning(j, r.pinning);
  j.field("seed", c.colony.seed);
  {
    const core::chain_id id = c.chain.chain;
    j.key("chain_id");
    j.value(core::to_hex(id));
  }
  j.end_object();
}

void write_config_section(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("config");
  write_config(j, c);
}

void write_timing(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("timing");
  j.begin_object();
  j.field("genesis_ms", ms(r.genesis_ns), 3);
  j.field("colony_start_ms", ms(r.colony_start_ns), 3);
  j.field("run_s", sec(r.run_ns), 6);
  j.field("shutdown_ms", ms(r.shutdown_ns), 3);
  j.field("measured_s", a.window_s, 9);
  j.end_object();
}

void write_blocks(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("blocks");
  j.begin_array();
  for (std::size_t i = 0; i < r.blocks.size(); ++i) {
    const queen::block_record& b = r.blocks[i];
    j.begin_object();
    j.field("num", b.num);
    j.field("warmup", i < r.warmup_blocks);
    j.field("transactions", b.transactions);
    j.field("size_bytes", b.size_bytes);
    j.field("pending_after", b.pending_after);
    j.field("dropped", b.dropped);
    j.field("produced_us", us(b.produced_ns), 3);
    j.field("applied_us", us(b.applied_ns), 3);
    j.field("processing_us", us(b.processing_ns), 3);
    j.key("cycle_us");
    if (b.cycle_ns < 0)
      j.null();
    else
      j.value(us(b.cycle_ns), 3);
    j.field("completed_ms", ms(b.completed_ns), 6);
    j.end_object();
  }
  j.end_array();
}

void write_aggregates(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("aggregates");
  j.begin_object();
  j.field("warmup_blocks", r.warmup_blocks);
  j.field("measured_blocks", a.measured_blocks);
  for (std::size_t f = 0; f < block_figure_count; ++f)
    write_series(j, block_figures[f].name, a.figure(f), block_figures[f].decimals);
  j.end_object();

  j.key("throughput");
  j.begin_object();
  j.field("transactions", a.measured_transactions);
  j.field("bytes", a.measured_bytes);
  j.field("window_s", a.window_s, 9);
  j.field("tx_per_s", a.tx_per_s, 3);
  j.field("blocks_per_s", a.blocks_per_s, 6);
  j.end_object();
}

void write_cpu(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("cpu");
  j.begin_object();
  j.field("cores", ctx.cores);
  j.field("process_cpu_s", a.cpu_s, 6);
  j.field("window_s", a.window_s, 9);
  j.field("utilization", a.cpu_utilization, 6);
  j.key("machine_busy_share");
  if (a.machine_known)
    j.value(a.machine_busy_share, 6);
  else
    j.null();
  j.key("other_processes_share");
  if (a.machine_known)
    j.value(a.other_processes_share, 6);
  else
    j.null();
  j.field_or_null("steal_share", a.machine_known, a.steal_share, 6);
  j.field("run_user_s", sec(r.usage_end.user_ns), 6);
  j.field("run_system_s", sec(r.usage_end.system_ns), 6);
  j.key("window_page_faults");
  j.begin_object();
  j.field("minor", r.window_end.usage.minor_faults - r.window_start.usage.minor_faults);
  j.field("major", r.window_end.usage.major_faults - r.window_start.usage.major_faults);
  j.end_object();
  j.field("ms_per_block", a.cpu_ms_per_block, 6);
  j.field("bound_us", a.cpu_bound_us, 3);
  j.field_or_null("cycle_to_bound", a.cycle_to_cpu_bound > 0, a.cycle_to_cpu_bound, 6);
  j.key("split");
  if (a.split.known) {
    j.begin_object();
    j.field("process_ms_per_block", a.split.process_ms, 6);
    j.field("signing_ms_per_block", a.split.signing_ms, 6);
    j.field("core_ms_per_block", a.split.core_ms, 6);
    j.field("harness_ms_per_block", a.split.harness_ms, 6);
    j.field("harness_share", a.split.harness_share, 6);
    j.end_object();
  } else {
    j.null();
  }
  j.end_object();
}

void write_writer(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("writer");
  j.begin_object();
  j.field("total_ms", ms(a.writer.total_ns), 3);
  j.field("wait_work_ms", ms(a.writer.wait_work_ns), 3);
  j.field("wait_lock_ms", ms(a.writer.wait_lock_ns), 3);
  j.field("transactions_ms", ms(a.writer.tx_ns), 3);
  j.field("blocks_ms", ms(a.writer.block_ns), 3);
  j.field("observe_ms", ms(a.writer.observe_ns), 3);
  j.field("unknown_ms", ms(a.writer.unknown_ns()), 3);
  j.field("wait_work_share", a.wait_work_share, 6);
  j.field("wait_lock_share", a.wait_lock_share, 6);
  j.field("transactions_share", a.tx_share, 6);
  j.field("blocks_share", a.block_share, 6);
  j.field("observe_share", a.observe_share, 6);
  j.field("unknown_share", a.unknown_share, 6);
  // Over the whole run (warm-up included): what each observer cost per block.
  j.key("observers_us_per_block");
  j.begin_object();
  for (const queen::observer_cost& o : r.observer_costs)
    j.field(o.name, r.blocks.empty() ? 0.0 : us(o.ns) / static_cast<double>(r.blocks.size()), 3);
  j.end_object();
  j.field("transactions_accepted", a.writer.transactions_accepted);
  j.field("transactions_rejected", a.writer.transactions_rejected);
  j.field("block_size_target_bytes", c.writer.block_size);
  j.field("block_transactions_target", r.block_transactions);
  j.field("queue_policy", queen::to_string(c.queue.policy));
  j.field("queue_high_water", r.queue_high_water);
  j.field("queue_full_waits", r.queue_full_waits);
  j.end_object();
}

// Each event's figure keyed by the event's name, null where not counted, into the open object.
template <class T>
void write_event_fields(json_out& j, const std::array<std::optional<T>, counter_event_count>& v) {
  for (std::size_t e = 0; e < counter_event_count; ++e) {
    j.key(counter_events[e].name);
    if (!v[e])
      j.null();
    else if constexpr (std::is_same_v<T, double>)
      j.exact(*v[e]);
    else
      j.value(*v[e]);
  }
}

// The per-thread counters (thread_counters.hpp) over the measured window.
void write_counters(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  const counter_results& k = r.counters;
  j.key("counters");
  j.begin_object();
  j.field("enabled", k.enabled);
  j.key("unavailable");
  j.text_or_null(k.unavailable);
  j.key("events");
  j.begin_object();
  for (std::size_t e = 0; k.enabled && e < counter_event_count; ++e) {
    j.key(counter_events[e].name);
    j.begin_object();
    j.field("available", k.events[e].available);
    j.key("reason");
    j.text_or_null(k.events[e].reason);
    j.end_object();
  }
  j.end_object();
  j.key("threads");
  j.begin_array();
  for (std::size_t i = 0; i < k.threads.size(); ++i) {
    const counted_thread& t = k.threads[i];
    j.begin_object();
    j.field("name", t.name);
    j.field("tid", t.tid);
    const auto count = [&j](std::string_view key, const std::optional<std::uint64_t>& v) {
      j.key(key);
      if (v)
        j.value(*v);
      else
        j.null();
    };
    j.key("window");
    j.begin_object();
    write_event_fields(j, t.window.events);
    count("voluntary_switches", t.window.voluntary_switches);
    count("involuntary_switches", t.window.involuntary_switches);
    j.end_object();
    j.key("per_block");
    j.begin_object();
    write_event_fields(j, a.counters[i].per_block);
    j.end_object();
    j.key("per_transaction");
    j.begin_object();
    write_event_fields(j, a.counters[i].per_transaction);
    j.end_object();
    j.key("ipc");
    if (a.counters[i].ipc)
      j.exact(*a.counters[i].ipc);
    else
      j.null();
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_signing(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("signing");
  j.begin_object();
  j.field("enabled", c.colony.sign);
  j.field("cpu_ms_per_block", a.signing_ms_per_block, 6);
  j.field("bound_us", a.signing_bound_us, 3);
  j.key("cycle_to_bound");
  if (a.cycle_to_signing_bound > 0)
    j.value(a.cycle_to_signing_bound, 6);
  else
    j.null();
  j.end_object();
}

void write_colony(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  const colony::colony_stats& k = r.colony_total;
  j.key("colony");
  j.begin_object();
  j.field("threads", k.threads);
  j.field("rate", rate_text(c.colony));
  j.field("block_budget", r.colony_block_budget);
  for (const colony::colony_counter_info& counter : colony::colony_counters)
    if (counter.in_total()) write_counter(j, counter, k);
  j.field("injected", k.injected);
  j.field("accepted", k.accepted());
  j.field("rejected", k.rejected());
  j.field("shutdown", k.shutdown());
  j.field("in_flight_at_end", k.in_flight);
  j.field("article_substitutions", k.article_substitutions);
  j.field("avg_size_bytes", k.average_packed_bytes(), 3);
  j.field("sink_closed", k.sink_closed);
  write_colony_threads(j, r.colony_threads);
  j.key("brakes");
  j.begin_object();
  write_brake(j, "in_flight", k.in_flight_brake);
  write_brake(j, "block_budget", k.budget_brake);
  write_brake(j, "tps", k.tps_brake);
  write_brake(j, "sync_result", k.result_wait);
  j.end_object();
  j.key("kinds");
  j.begin_array();
  for (colony::op_kind kind : colony::all_op_kinds) {
    j.begin_object();
    j.field("kind", colony::op_kind_name(kind));
    j.field("count", k[kind].count);
    j.field("share", k.share(kind), 6);
    j.field("avg_extra_bytes", k.average_extra_bytes(kind), 3);
    j.field("avg_size_bytes", k.average_packed_bytes(kind), 3);
    j.field("extra_bytes", k[kind].extra_bytes);
    j.field("size_bytes", k[kind].packed_bytes);
    j.end_object();
  }
  j.end_array();
  // Each fault kind beside the rejections of its reason (a reason may also have other causes).
  j.key("faults");
  j.begin_array();
  for (std::size_t i = 0; i < colony::fault_kind_count; ++i) {
    const auto kind = static_cast<colony::fault_kind>(i);
    const core::reject reason = colony::expected_reject(kind);
    j.begin_object();
    j.field("kind", colony::fault_kind_name(kind));
    j.field("fraction", c.colony.faults[kind], 6);
    j.field("injected", k.faults[i]);
    j.field("reason", core::reject_name(reason));
    j.field("rejected", k.outcomes[reason]);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_ledger(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  const colony::colony_stats& k = r.colony_total;
  j.key("rejections");
  j.begin_object();
  for (std::size_t i = 1; i < core::reject_count; ++i)
    if (core::is_rejection(static_cast<core::reject>(i)))  // shutdown is colony.shutdown
      j.field(core::reject_name(static_cast<core::reject>(i)), k.outcomes.by_reason[i]);
  j.end_object();

  j.key("ledger");
  j.begin_object();
  j.field("accepted", k.accepted());
  j.field("in_blocks", a.in_blocks);
  j.field("dropped", a.dropped);
  j.field("pending_at_end", r.pending_at_end);
  j.end_object();
}

// Resource credits: each pool at the end beside its equilibrium, and the insufficient_rc
// rejections per block over the whole run (warm-up included; the ones after the last block
// count in the total only); Hive's RC statistics: every archive, and the sum of those wholly
// in the measured window (rc_stats_json.hpp).
void write_rc(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  const core::rc_status& rc = r.rc;
  j.key("rc");
  j.begin_object();
  j.field("mode", core::to_string(c.chain.rc));
  j.field("total_vesting", rc.total_vesting);
  j.key("pools");
  j.begin_array();
  // The run's parameters, which the chain scaled the same way (a run stopped before its chain
  // was built has no rc status to take them from).
  const core::rc_parameters params = core::rc_scaled(c.chain.rc_params, c.chain.rc_scale);
  for (std::size_t i = 0; i < core::rc_resource_count; ++i) {
    j.begin_object();
    j.field("resource", core::rc_resource_name(static_cast<core::rc_resource>(i)));
    j.field("pool", rc.pools[i]);
    j.field("equilibrium", params[i].equilibrium);
    j.field("level", static_cast<double>(rc.pools[i]) / static_cast<double>(params[i].equilibrium), 6);
    j.end_object();
  }
  j.end_array();
  write_rc_params(j, c);
  j.key("rejections");
  j.begin_object();
  j.field("total", rc.rejected);
  j.field("blocks", rc.blocks);
  const double mean = rc.blocks == 0 ? 0.0 : static_cast<double>(rc.rejected) / static_cast<double>(rc.blocks);
  j.field("mean_per_block", mean, 3);
  j.field("max_per_block", rc.max_block_rejected);
  j.end_object();
  j.field("low_mana_share", r.rc_low_share, 6);
  const std::uint32_t measured_from =
      r.blocks.size() > r.warmup_blocks ? r.blocks[r.warmup_blocks].num : std::numeric_limits<std::uint32_t>::max();
  write_rc_statistics(j, c.chain.rc_stats_blocks, r.rc_archives, measured_from);
  j.end_object();
}

// What the state holds at the end: objects and bytes per index (their share of the object
// pool), the pools' footprints, and the cashouts so far.
void write_state(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  const core::state_census& s = r.state;
  j.key("state");
  j.begin_object();
  write_indexes(j, s);
  j.field("pending_ids", s.pending_ids);
  j.field("object_pool_bytes", s.object_pool_bytes);
  j.field("undo_pool_bytes", s.undo_pool_bytes);
  j.field("cashout_blocks", c.chain.cashout_blocks);
  j.field("comments_paid", s.comments_paid);
  j.field("reward_fund", s.reward_balance);
  j.end_object();
}

void write_targets(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("targets");
  j.begin_array();
  for (const target_check& t : a.targets) {
    j.begin_object();
    j.field("name", t.name);
    j.field("description", t.description);
    j.field("target", t.target, 6);
    j.field("value", t.value, 6);
    j.field("met", t.met);
    j.end_object();
  }
  j.end_array();
}

void write_audit(json_out& j, const report_inputs& in) {
  [[maybe_unused]] const auto& [c, ctx, r, a, path] = in;
  j.key("dumps");
  j.begin_object();
  j.key("transactions");
  j.text_or_null(c.out.dump_transactions);
  j.field("transactions_written", r.dumped_transactions);
  j.key("blocks");
  j.text_or_null(c.out.dump_blocks);
  j.field("blocks_written", r.dumped_blocks);
  j.end_object();

  j.key("audit");
  j.begin_object();
  j.field("enabled", r.audit.ran);
  j.key("passed");
  if (r.audit.ran)
    j.value(r.audit.passed());
  else
    j.null();
  j.field("checks", r.audit.checks);
  j.key("violations");
  j.begin_array();
  for (const std::string& v : r.audit.violations) j.value(v);
  j.end_array();
  j.field("known_transactions", r.audit.known_transactions);
  j.field("accepted_unexpired", r.audit.accepted_unexpired);
  j.field("undo_depth", r.audit.undo_depth);
  j.end_object();
}

// One stage's figures; with its bins (sparse, [index, count]) when `bins`.
void write_latency_stage(json_out& j, const latency_histogram& h, const latency_summary& s, bool bins) {
  j.begin_object();
  j.field("count", s.count);
  const auto us = [&](std::string_view k, double ns) { j.field_or_null(k, s.count != 0, ns / 1e3, 3); };
  us("mean_us", s.mean_ns);
  us("min_us", s.min_ns);
  for (std::size_t q = 0; q < latency_quantiles.size(); ++q)
    us(std::string(latency_quantile_names[q]) + "_us", s.quantile_ns[q]);
  us("max_us", s.max_ns);
  if (bins) {
    j.key("bins");
    j.begin_array();
    for (const auto& [i, n] : h.bins()) {
      j.begin_array();
      j.value(i);
      j.value(n);
      j.end_array();
    }
    j.end_array();
  }
  j.end_object();
}

void write_latency(json_out& j, const report_inputs& in) {
  const latency_recorder& l = in.r.latency;
  j.key("latency");
  j.begin_object();
  j.key("histogram");
  j.begin_object();
  j.field("lowest_ns", static_cast<std::uint64_t>(latency_lowest_ns));
  j.field("highest_ns", static_cast<std::uint64_t>(latency_highest_ns));
  j.field("bins", latency_bins);
  j.end_object();
  for (const auto& [name, stage] : latency_stage_names) {
    j.key(name);
    write_latency_stage(j, l.stage(stage), l.stage(stage).summary(), true);
  }
  j.key("by_kind");
  j.begin_object();
  for (colony::op_kind kind : colony::all_op_kinds) {
    j.key(colony::op_kind_name(kind));
    j.begin_object();
    for (const auto& [name, stage] : latency_stage_names) {
      if (stage == latency_stage::rejection) continue;
      j.key(name);
      write_latency_stage(j, l.stage(stage), l.stage(stage).summary(colony::index_of(kind)), false);
    }
    j.end_object();
  }
  j.end_object();
  j.end_object();
}

// --profile (profile.hpp): null without it.
void write_profile(json_out& j, const report_inputs& in) {
  const profile_result& p = in.r.profile;
  j.key("profile");
  if (p.dir.empty()) {
    j.null();
    return;
  }
  const double samples = p.samples == 0 ? 1.0 : static_cast<double>(p.samples);
  j.begin_object();
  j.field("dir", p.dir);
  j.field("samples", p.samples);
  j.field("frequency_hz", p.frequency_hz);
  j.field("window_opened", p.window_opened);
  j.key("threads");
  j.begin_object();
  for (const auto& [name, n] : p.threads) j.field(name, n);
  j.end_object();
  j.key("top");
  j.begin_array();
  for (const function_samples& f : p.top) {
    j.begin_object();
    j.field("function", f.name);
    j.field("self_share", static_cast<double>(f.self) / samples, 6);
    j.field("total_share", static_cast<double>(f.total) / samples, 6);
    j.end_object();
  }
  j.end_array();
  j.key("cost");
  j.begin_object();
  const double perf_cpu_s = sec(p.perf_user_ns + p.perf_system_ns);
  j.field("perf_cpu_s", perf_cpu_s, 6);
  j.field("perf_user_s", sec(p.perf_user_ns), 6);
  j.field("perf_system_s", sec(p.perf_system_ns), 6);
  const double capacity_s = in.a.window_s * in.ctx.cores;
  j.field_or_null("perf_cpu_share", capacity_s > 0, perf_cpu_s / capacity_s, 6);
  j.field("control_writes", p.control_writes);
  j.field("control_us", us(p.control_ns), 3);
  j.field("postprocess_s", sec(p.postprocess_ns), 6);
  j.field("data_bytes", p.data_bytes);
  j.end_object();
  j.key("error");
  j.text_or_null(p.error);
  j.end_object();
}

}  // namespace

void write_report(core::out_buffer& out, const run_config& c, const run_context& ctx, const run_result& r,
                  const analysis& a, const std::string& path) {
  out.reserve(out.size() + 4096 + r.blocks.size() * 256);
  json_out j(out);
  const report_inputs in{c, ctx, r, a, path};
  j.begin_object();
  write_status(j, in);
  write_context(j, in);
  write_config_section(j, in);
  write_validity(j, a);
  write_timing(j, in);
  write_blocks(j, in);
  write_aggregates(j, in);
  write_cpu(j, in);
  write_writer(j, in);
  write_counters(j, in);
  write_signing(j, in);
  write_colony(j, in);
  write_schedule(j, a);
  write_ledger(j, in);
  write_latency(j, in);
  write_rc(j, in);
  write_state(j, in);
  write_targets(j, in);
  write_audit(j, in);
  write_profile(j, in);
  j.key("log");
  j.begin_object();
  j.key("file");
  j.text_or_null(r.log_file);
  j.field("dropped", r.log_dropped);
  j.field("write_errors", r.log_write_errors);
  j.end_object();
  j.field("peak_rss_bytes", r.usage_end.peak_rss_bytes);
  j.end_object();
  out.append("\n");
}

std::string aborted_report_head(const run_config& c, const run_context& ctx, const std::string& path) {
  core::out_buffer out;
  json_out j(out);
  const run_result r;
  const analysis a;
  const report_inputs in{c, ctx, r, a, path};
  j.begin_object();
  j.field("schema_version", report_schema_version);
  j.field("name", c.name);
  j.field("status", std::string_view("aborted"));
  j.field("interrupted", true);
  j.field("failed", false);
  j.field("error", aborted_error);
  j.field("report_path", path);
  write_context(j, in);
  write_config_section(j, in);
  j.key("stop_reason");  // the last field: aborted_report_tail() gives its value and the end
  return {out.data(), out.size()};
}

std::string_view aborted_report_tail(int signal) noexcept {
  switch (signal) {
    case SIGINT: return "\"SIGINT\"}\n";
    case SIGTERM: return "\"SIGTERM\"}\n";
    case SIGHUP: return "\"SIGHUP\"}\n";
    default: return "\"signal\"}\n";
  }
}

}  // namespace apiary::harness
