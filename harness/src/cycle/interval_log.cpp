#include "cycle/interval_log.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "cycle/rc_stats_json.hpp"
#include "io/json_out.hpp"

namespace apiary::harness {

namespace {

struct named_stage {
  std::string_view name;
  const latency_summary& s;
};

struct writer_part {
  std::string_view name;
  std::int64_t ns;
};

std::array<named_stage, 3> stages_of(const interval_record& r) {
  return {{{"queue_wait", r.queue_wait}, {"inclusion", r.inclusion}, {"end_to_end", r.end_to_end}}};
}

std::array<writer_part, 6> writer_parts(const queen::writer_breakdown& b) {
  return {{{"wait_work", b.wait_work_ns},
           {"wait_lock", b.wait_lock_ns},
           {"tx", b.tx_ns},
           {"block", b.block_ns},
           {"observe", b.observe_ns},
           {"unknown", b.unknown_ns()}}};
}

double share(std::int64_t part, std::int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

void write_stage(json_out& j, const latency_summary& s) {
  j.begin_object();
  j.field("count", s.count);
  const auto us = [&](std::string_view k, double ns) { j.field_or_null(k, s.count != 0, ns / 1e3, 3); };
  us("p50_us", s.quantile_ns[0]);
  us("p90_us", s.quantile_ns[1]);
  us("p99_us", s.quantile_ns[2]);
  us("max_us", s.max_ns);
  j.end_object();
}

// Each counted thread's counts as an object of the ones it has (an event not counted is left
// out: the report names it), keyed by the thread's name.
void write_counters(json_out& j, const std::vector<named_counts>& threads) {
  j.key("counters");
  j.begin_object();
  for (const named_counts& t : threads) {
    j.key(t.thread);
    j.begin_object();
    for (std::size_t e = 0; e < counter_event_count; ++e)
      if (const auto& v = t.counts.events[e]) j.field(counter_events[e].name, *v);
    if (const auto& v = t.counts.voluntary_switches) j.field("voluntary_switches", *v);
    if (const auto& v = t.counts.involuntary_switches) j.field("involuntary_switches", *v);
    j.end_object();
  }
  j.end_object();
}

// apiary_thread_<event>{thread="..."}: each counted thread's counts over the last interval.
void prometheus_counters(std::string& out, const std::vector<named_counts>& threads) {
  const auto gauge = [&](std::string_view name, const auto& value_of) {
    out += fmt::format(
        "# HELP apiary_thread_{0} The thread's {0} over the last interval (perf_event_open).\n"
        "# TYPE apiary_thread_{0} gauge\n",
        name);
    for (const named_counts& t : threads)
      if (const std::optional<std::uint64_t> v = value_of(t.counts))
        out += fmt::format("apiary_thread_{}{{thread=\"{}\"}} {}\n", name, t.thread, *v);
  };
  for (std::size_t e = 0; e < counter_event_count; ++e)
    gauge(counter_events[e].name, [e](const thread_counts& c) { return c.events[e]; });
  gauge("voluntary_switches", [](const thread_counts& c) { return c.voluntary_switches; });
  gauge("involuntary_switches", [](const thread_counts& c) { return c.involuntary_switches; });
}

}  // namespace

std::string interval_json(const interval_record& r) {
  core::out_buffer buf(2048);
  json_out j(buf);
  j.begin_object();
  j.field("t_s", r.t_s, 3);
  j.field("interval_s", r.interval_s, 3);
  j.field("blocks", r.blocks_total);
  j.field("interval_blocks", r.blocks.blocks);
  j.field("transactions", r.transactions_total);
  j.field("tx_per_s", r.interval_s > 0 ? static_cast<double>(r.inclusion.count) / r.interval_s : 0.0, 1);
  for (std::size_t i = 0; i < block_figure_count; ++i) {
    const figure_sum& f = r.blocks.figures.figures[i];
    j.key(block_figures[i].name);
    if (f.count == 0) {
      j.null();
      continue;
    }
    j.begin_object();
    j.field("mean", f.mean(), block_figures[i].decimals);
    j.field("max", f.max, block_figures[i].decimals);
    j.end_object();
  }
  j.key("latency");
  j.begin_object();
  for (const named_stage& st : stages_of(r)) {
    j.key(st.name);
    write_stage(j, st.s);
  }
  j.end_object();
  j.key("writer");
  j.begin_object();
  for (const writer_part& p : writer_parts(r.writer)) j.field(p.name, share(p.ns, r.writer.total_ns), 4);
  j.end_object();
  j.field("queue_depth", r.queue_depth);
  j.field("in_flight", r.in_flight);
  j.field("rss_bytes", r.rss_bytes);
  j.key("state");
  j.begin_object();
  for (const core::index_census& i : r.state.indexes) {
    j.key(i.name);
    j.begin_array();
    j.value(i.objects);
    j.value(i.bytes);
    j.end_array();
  }
  j.field("object_pool_bytes", r.state.object_pool_bytes);
  j.field("comments_paid", r.state.comments_paid);
  j.end_object();
  j.key("rc");
  j.begin_object();
  j.key("levels");
  j.begin_array();
  for (std::size_t i = 0; i < core::rc_resource_count; ++i)
    // An interval before the first block has no rc status yet: its levels are 0.
    j.value(r.rc.equilibria[i] > 0 ? static_cast<double>(r.rc.pools[i]) / static_cast<double>(r.rc.equilibria[i]) : 0.0,
            4);
  j.end_array();
  j.field("rejected", r.rc.rejected);
  j.field_or_null("low_mana_share", r.rc_low_share >= 0, r.rc_low_share, 4);
  j.end_object();
  if (!r.counters.empty()) write_counters(j, r.counters);
  j.end_object();
  return std::string(buf.data(), buf.size()) + "\n";
}

std::string prometheus_text(const interval_record& r) {
  std::string out;
  const auto metric = [&out](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP apiary_{} {}\n# TYPE apiary_{} {}\n", name, help, name, type);
  };
  // A metric with one sample and no labels.
  const auto single = [&](std::string_view name, std::string_view type, std::string_view help, auto value) {
    metric(name, type, help);
    out += fmt::format("apiary_{} {}\n", name, value);
  };
  single("blocks_total", "counter", "Blocks applied since the run started.", r.blocks_total);
  single("transactions_total", "counter", "Transactions included in a block since the run started.",
         r.transactions_total);
  single("interval_seconds", "gauge", "Length of the last interval.", r.interval_s);
  single("transactions_per_second", "gauge", "Transactions included per second over the last interval.",
         r.interval_s > 0 ? static_cast<double>(r.inclusion.count) / r.interval_s : 0.0);
  // One gauge per block figure, apiary_block_<name> in the figure's unit (its name's suffix).
  for (std::size_t i = 0; i < block_figure_count; ++i) {
    const std::string name = fmt::format("block_{}", block_figures[i].name);
    metric(name, "gauge",
           fmt::format("The block figure {} over the last interval's blocks: mean and max.", block_figures[i].name));
    const figure_sum& f = r.blocks.figures.figures[i];
    if (f.count == 0) continue;
    out += fmt::format("apiary_{}{{stat=\"mean\"}} {}\napiary_{}{{stat=\"max\"}} {}\n", name, f.mean(), name, f.max);
  }
  metric("latency_seconds", "summary", "Latency of the transactions settled in the last interval, by stage.");
  for (const named_stage& st : stages_of(r)) {
    if (st.s.count != 0)
      for (std::size_t q = 0; q < 3; ++q)
        out += fmt::format("apiary_latency_seconds{{stage=\"{}\",quantile=\"{}\"}} {}\n", st.name, latency_quantiles[q],
                           st.s.quantile_ns[q] / 1e9);
    out += fmt::format("apiary_latency_seconds_sum{{stage=\"{}\"}} {}\n", st.name,
                       st.s.mean_ns * static_cast<double>(st.s.count) / 1e9);
    out += fmt::format("apiary_latency_seconds_count{{stage=\"{}\"}} {}\n", st.name, st.s.count);
  }
  metric("writer_share", "gauge", "Share of the writer thread's time over the last interval, by part.");
  for (const writer_part& p : writer_parts(r.writer))
    out += fmt::format("apiary_writer_share{{part=\"{}\"}} {}\n", p.name, share(p.ns, r.writer.total_ns));
  single("queue_depth", "gauge", "Transactions in the writer queue.", r.queue_depth);
  single("in_flight", "gauge", "Transactions submitted whose outcome has not come yet.", r.in_flight);
  single("resident_memory_bytes", "gauge", "Resident memory of the apiary process.", r.rss_bytes);
  if (!r.counters.empty()) prometheus_counters(out, r.counters);
  return out;
}

interval_outputs::interval_outputs(std::string log_path, std::string textfile_path)
    : log_path_(std::move(log_path)), textfile_(std::move(textfile_path)) {
  if (log_path_.empty()) return;
  log_ = std::fopen(log_path_.c_str(), "w");
  if (log_ == nullptr) throw std::runtime_error(log_path_ + ": cannot write: " + std::strerror(errno));
}

interval_outputs::~interval_outputs() {
  if (log_ != nullptr) std::fclose(log_);
}

void interval_outputs::write(const interval_record& r) {
  if (log_ != nullptr) {
    std::string line;
    for (const core::rc_archive& a : r.rc_archives) line += rc_archive_line(a);
    line += interval_json(r);
    if (std::fwrite(line.data(), 1, line.size(), log_) != line.size() || std::fflush(log_) != 0)
      throw std::runtime_error(log_path_ + ": cannot write: " + std::strerror(errno));
  }
  if (!textfile_.empty()) {
    const std::string text = prometheus_text(r);
    output_file f(textfile_);
    f.write(text.data(), text.size());
    f.commit();
  }
}

}  // namespace apiary::harness
