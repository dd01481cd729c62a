#include "apiary/colony/colony_stats.hpp"

#include <algorithm>

namespace apiary::colony {

namespace {
double ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

void add(brake_totals& a, const brake_totals& b) {
  a.waits += b.waits;
  a.wait_ns += b.wait_ns;
}
}  // namespace

std::uint64_t colony_stats::packed_bytes() const {
  std::uint64_t n = 0;
  for (const auto& k : kinds) n += k.packed_bytes;
  return n;
}

double colony_stats::share(op_kind k) const { return ratio((*this)[k].count, generated); }
double colony_stats::average_extra_bytes(op_kind k) const { return ratio((*this)[k].extra_bytes, (*this)[k].count); }
double colony_stats::average_packed_bytes(op_kind k) const { return ratio((*this)[k].packed_bytes, (*this)[k].count); }
double colony_stats::average_packed_bytes() const { return ratio(packed_bytes(), generated); }

colony_stats& colony_stats::operator+=(const colony_stats& o) {
  threads += o.threads;
  accounts += o.accounts;
  injected += o.injected;
  for (std::size_t k = 0; k < fault_kind_count; ++k) faults[k] += o.faults[k];
  for (std::size_t i = 0; i < core::reject_count; ++i) outcomes.by_reason[i] += o.outcomes.by_reason[i];
  in_flight += o.in_flight;
  for (std::size_t k = 0; k < op_kind_count; ++k) {
    kinds[k].count += o.kinds[k].count;
    kinds[k].extra_bytes += o.kinds[k].extra_bytes;
    kinds[k].packed_bytes += o.kinds[k].packed_bytes;
  }
  article_substitutions += o.article_substitutions;
  for (const colony_counter_info& c : colony_counters) {
    std::uint64_t& mine = this->*c.member;
    const std::uint64_t theirs = o.*c.member;
    mine = c.how == colony_counter_info::merge::max ? std::max(mine, theirs) : mine + theirs;
  }
  add(in_flight_brake, o.in_flight_brake);
  add(budget_brake, o.budget_brake);
  add(tps_brake, o.tps_brake);
  add(result_wait, o.result_wait);
  held_ongoing_ns += o.held_ongoing_ns;
  sink_closed = sink_closed || o.sink_closed;
  return *this;
}

}  // namespace apiary::colony
