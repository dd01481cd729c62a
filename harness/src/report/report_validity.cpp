// The report's validity and schedule sections, and the machine's tuning in its context
// (validity.hpp, docs/report.md).
#include <optional>

#include "report/report_json.hpp"

namespace apiary::harness {

namespace {

void flag_or_null(json_out& j, std::string_view k, const std::optional<bool>& v) {
  j.key(k);
  if (v)
    j.value(*v);
  else
    j.null();
}

void write_texts(json_out& j, std::string_view k, const std::vector<std::string>& texts) {
  j.key(k);
  j.begin_array();
  for (const std::string& t : texts) j.value(t);
  j.end_array();
}

void write_steadiness(json_out& j, const steadiness& w) {
  j.key("steadiness");
  j.begin_object();
  j.field("checked", w.checked);
  j.key("not_checked");
  j.text_or_null(w.not_checked);
  j.key("change_block");
  if (w.checked)
    j.value(w.change_block);
  else
    j.null();
  j.field_or_null("p_value", w.checked, w.p_value, 6);
  j.field_or_null("shift", w.checked, w.shift, 6);
  j.field_or_null("trend", w.checked, w.trend, 6);
  j.field("level_changed", w.level_changed);
  j.field("drifts", w.drifts);
  j.end_object();
}

void write_interval(json_out& j, const schedule_interval& x) {
  j.begin_object();
  j.field("t_s", x.t_s, 3);
  j.field("interval_s", x.interval_s, 3);
  j.field("intended", x.intended, 1);
  j.field("submitted", x.submitted);
  j.field("lag_ms", x.lag_ms, 3);
  j.field("held_ms", x.held_ms, 3);
  j.field("generator_lag_ms", x.generator_lag_ms, 3);
  j.field("generating_ms", x.generating_ms, 3);
  j.field("signing_ms", x.signing_ms, 3);
  j.end_object();
}

}  // namespace

void write_tuning(json_out& j, const machine_tuning& t) {
  j.key("tuning");
  j.begin_object();
  j.key("governor");
  j.text_or_null(t.governor);
  flag_or_null(j, "boost", t.boost);
  flag_or_null(j, "smt", t.smt);
  j.end_object();
}

void write_pinning(json_out& j, const cpu_pinning& p) {
  j.key("pin");
  j.begin_object();
  j.field("mode", p.requested ? "on" : "off");
  if (p.requested) {
    const auto list = [&j](std::string_view name, const std::vector<int>& cpus) {
      j.key(name);
      j.begin_array();
      for (const int c : cpus) j.value(c);
      j.end_array();
    };
    list("cpus", p.cpus);
    j.key("writer_cpu");
    if (p.writer_cpu < 0) {
      j.null();
    } else {
      j.value(p.writer_cpu);
    }
    list("others", p.others);
    j.field("producers_own", p.producers_own);
    j.field("applied", p.applied);
    j.field("note", p.note);
  }
  j.end_object();
}

void write_validity(json_out& j, const analysis& a) {
  j.key("validity");
  j.begin_object();
  j.field("valid", a.verdict.valid);
  write_texts(j, "reasons", a.verdict.reasons);
  write_texts(j, "warnings", a.verdict.warnings);
  write_steadiness(j, a.steady);
  j.end_object();
}

void write_schedule(json_out& j, const analysis& a) {
  const schedule_analysis& s = a.schedule;
  j.key("schedule");
  if (!s.traced) {
    j.null();
    return;
  }
  j.begin_object();
  j.field("rate", s.rate, 3);
  j.field("threads", s.threads);
  j.field("limit", generator_behind_limit, 3);
  j.field("span_s", generator_behind_span_s, 3);
  j.field("behind", s.behind);
  j.field("worst_fall_behind", s.worst_fall_behind, 6);
  j.field("worst_at_s", s.worst_at_s, 3);
  j.field("behind_s", s.behind_s, 3);
  j.key("intervals");
  j.begin_array();
  for (const schedule_interval& x : s.intervals) write_interval(j, x);
  j.end_array();
  j.end_object();
}

}  // namespace apiary::harness
