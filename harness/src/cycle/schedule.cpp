#include "apiary/harness/cycle/schedule.hpp"

namespace apiary::harness {

schedule_sample schedule_sample_of(std::int64_t t_ns, const colony::colony_stats& s) {
  schedule_sample x;
  x.t_ns = t_ns;
  x.submitted = s.submitted;
  x.held_ns = static_cast<std::int64_t>(s.in_flight_brake.wait_ns + s.result_wait.wait_ns + s.held_ongoing_ns);
  x.generating_ns = static_cast<std::int64_t>(s.generation_cpu_ns);
  x.signing_ns = static_cast<std::int64_t>(s.signing_cpu_ns);
  return x;
}

void sample_schedule(schedule_trace& t, std::int64_t t_ns, const colony::colony_stats& s) {
  if (t.rate <= 0) return;
  if (!t.samples.empty() && t_ns - t.samples.back().t_ns < schedule_sample_ns) return;
  t.samples.push_back(schedule_sample_of(t_ns, s));
}

}  // namespace apiary::harness
