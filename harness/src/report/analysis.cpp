#include "apiary/harness/report/analysis.hpp"

#include <algorithm>
#include <cmath>

namespace apiary::harness {

namespace {

block_series series_of(const std::vector<double>& values, const std::vector<std::uint32_t>& nums) {
  block_series s;
  s.stats = summarize(values);
  if (s.stats.count != 0) {
    s.min_block = nums[s.stats.min_at];
    s.max_block = nums[s.stats.max_at];
  }
  return s;
}

double share(std::int64_t part, std::int64_t total) {
  return total <= 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(total);
}

// The measured blocks' series, and the totals over every block.
void analyze_blocks(analysis& a, const run_result& r) {
  const std::size_t first = std::min<std::size_t>(r.warmup_blocks, r.blocks.size());
  std::array<std::vector<double>, block_figure_count> values;
  std::array<std::vector<std::uint32_t>, block_figure_count> nums;
  for (std::size_t i = first; i < r.blocks.size(); ++i) {
    const queen::block_record& b = r.blocks[i];
    for (std::size_t f = 0; f < block_figure_count; ++f) {
      if (const std::optional<double> v = block_figures[f].of(b)) {
        values[f].push_back(*v);
        nums[f].push_back(b.num);
      }
    }
    a.measured_transactions += b.transactions;
    a.measured_bytes += b.size_bytes;
  }
  a.measured_blocks = static_cast<std::uint32_t>(r.blocks.size() - first);
  for (std::size_t f = 0; f < block_figure_count; ++f) a.figures[f] = series_of(values[f], nums[f]);
  for (const queen::block_record& b : r.blocks) {
    a.in_blocks += b.transactions;
    a.dropped += b.dropped;
  }
}

// Throughput, CPU, the writer's split, the signing and process-CPU bounds and where the
// process's CPU went, over the measured window.
void analyze_window(analysis& a, const run_config& c, const run_context& ctx, const run_result& r) {
  a.window_s = static_cast<double>(r.window_end.writer_ns - r.window_start.writer_ns) / 1e9;
  if (a.window_s > 0) {
    a.tx_per_s = static_cast<double>(a.measured_transactions) / a.window_s;
    a.blocks_per_s = a.measured_blocks / a.window_s;
  }
  a.cpu_s = static_cast<double>(r.window_end.usage.cpu_ns() - r.window_start.usage.cpu_ns()) / 1e9;
  if (a.window_s > 0) a.cpu_utilization = a.cpu_s / (a.window_s * ctx.cores);

  a.writer = r.window_end.breakdown - r.window_start.breakdown;
  a.wait_work_share = share(a.writer.wait_work_ns, a.writer.total_ns);
  a.wait_lock_share = share(a.writer.wait_lock_ns, a.writer.total_ns);
  a.tx_share = share(a.writer.tx_ns, a.writer.total_ns);
  a.block_share = share(a.writer.block_ns, a.writer.total_ns);
  a.observe_share = share(a.writer.observe_ns, a.writer.total_ns);
  a.unknown_share = share(a.writer.unknown_ns(), a.writer.total_ns);

  const std::uint64_t signing_ns = r.window_end.colony.signing_cpu_ns - r.window_start.colony.signing_cpu_ns;
  a.signing_ms_per_block = static_cast<double>(signing_ns) / a.measured_blocks / 1e6;
  a.signing_bound_us = a.signing_ms_per_block * 1e3 / ctx.cores;
  if (c.colony.sign && a.signing_bound_us > 0 && a.cycle_us().stats.count != 0)
    a.cycle_to_signing_bound = a.cycle_us().stats.avg / a.signing_bound_us;

  const std::int64_t process_ns = r.window_end.usage.cpu_ns() - r.window_start.usage.cpu_ns();
  a.cpu_ms_per_block = static_cast<double>(process_ns) / a.measured_blocks / 1e6;
  a.cpu_bound_us = a.cpu_ms_per_block * 1e3 / ctx.cores;
  if (a.cpu_bound_us > 0 && a.cycle_us().stats.count != 0)
    a.cycle_to_cpu_bound = a.cycle_us().stats.avg / a.cpu_bound_us;

  // Signing's CPU is measured only with measure_cpu; with signing off there is none (what
  // the colony then counts as signing CPU is packing and hashing, which is the harness's).
  if (!c.colony.sign || c.colony.measure_cpu)
    a.split = split_cpu(process_ns, c.colony.sign ? static_cast<std::int64_t>(signing_ns) : 0,
                        a.writer.tx_ns + a.writer.block_ns, a.measured_blocks);
}

// What the whole machine did around the window: how busy, and how much of it was others.
void analyze_machine(analysis& a, const run_result& r) {
  const machine_sample& m0 = r.machine_start;
  const machine_sample& m1 = r.machine_end;
  if (!m0.machine.valid || !m1.machine.valid || m1.machine.total_ticks <= m0.machine.total_ticks) return;
  const double total = static_cast<double>(m1.machine.total_ticks - m0.machine.total_ticks);
  const double ours = static_cast<double>(m1.process.cpu_ns() - m0.process.cpu_ns()) / 1e9 *
                      static_cast<double>(clock_ticks_per_second());
  a.machine_known = true;
  a.machine_busy_share =
      std::clamp(static_cast<double>(m1.machine.busy_ticks - m0.machine.busy_ticks) / total, 0.0, 1.0);
  a.other_processes_share = std::clamp(a.machine_busy_share - ours / total, 0.0, 1.0);
  a.steal_share = std::clamp(static_cast<double>(m1.machine.steal_ticks - m0.machine.steal_ticks) / total, 0.0, 1.0);
}

// The measured blocks' cycle series, for its steadiness.
steadiness check_cycle(const run_result& r) {
  const block_figure& cycle = block_figures[block_figure_index("cycle_us")];
  std::vector<double> values;
  std::vector<std::uint32_t> nums;
  for (std::size_t i = std::min<std::size_t>(r.warmup_blocks, r.blocks.size()); i < r.blocks.size(); ++i)
    if (const std::optional<double> v = cycle.of(r.blocks[i])) {
      values.push_back(*v);
      nums.push_back(r.blocks[i].num);
    }
  return check_steadiness(values, nums);
}

void judge(analysis& a, const run_context& ctx, const run_result& r) {
  if (a.measured_blocks != 0)
    a.schedule = analyze_schedule(r.schedule, r.window_start.writer_ns, r.window_end.writer_ns);
  a.steady = check_cycle(r);
  a.verdict = judge_validity(a.schedule, a.steady, ctx.tuning, a.machine_known ? a.steal_share : -1,
                             a.machine_known ? a.other_processes_share : -1);
}

// The project's targets, where they apply: full 2 MB blocks of the typical mix, signed, in
// infinite mode (the producers, not the writer, are then what bounds the cycle); the core
// alone with signing off; the harness's share of the CPU wherever its parts are known.
void check_targets(analysis& a, const run_config& c) {
  const bool full_blocks = c.writer.block_size >= core::chain_limits::max_block_size - 256 &&
                           c.writer.block_size <= core::chain_limits::max_block_size &&
                           c.writer.block_transactions == 0;
  const bool sign = c.colony.sign;
  const bool infinite = c.colony.rate == colony::rate_mode::infinite;
  if (full_blocks && sign)
    a.targets.push_back({"transactions_per_block", "about 7,300 transactions per full 2 MB block (within 10%)", 7300,
                         a.figures[block_figure_index("transactions_per_block")].stats.avg,
                         std::abs(a.figures[block_figure_index("transactions_per_block")].stats.avg - 7300) <= 730});
  if (infinite && sign)
    a.targets.push_back({"cpu_utilization", "infinite mode keeps every core busy (at least 90%)", 0.9,
                         a.cpu_utilization, a.cpu_utilization >= 0.9});
  if (sign && a.cycle_to_cpu_bound > 0 && infinite)
    a.targets.push_back({"cycle_to_cpu_bound", "full block cycle within 1.05x of the process-CPU bound", 1.05,
                         a.cycle_to_cpu_bound, a.cycle_to_cpu_bound <= 1.05});
  if (a.split.known)
    a.targets.push_back({"harness_cpu_share", "harness CPU at most 5% of the process's CPU", 0.05,
                         a.split.harness_share, a.split.harness_share <= 0.05});
  if (!sign && full_blocks && a.cycle_us().stats.count != 0)
    a.targets.push_back({"core_only_cycle_ms", "core alone: full block cycle at most 40 ms per 2 MB block", 40,
                         a.cycle_us().stats.avg / 1e3, a.cycle_us().stats.avg <= 40'000});
}

}  // namespace

cpu_split split_cpu(std::int64_t process_ns, std::int64_t signing_ns, std::int64_t core_ns, std::uint32_t blocks) {
  cpu_split s;
  if (blocks == 0 || process_ns <= 0) return s;
  const double ns_per_block_ms = 1e6 * blocks;
  s.known = true;
  s.process_ms = static_cast<double>(process_ns) / ns_per_block_ms;
  s.signing_ms = static_cast<double>(signing_ns) / ns_per_block_ms;
  s.core_ms = static_cast<double>(core_ns) / ns_per_block_ms;
  s.harness_ms = static_cast<double>(process_ns - signing_ns - core_ns) / ns_per_block_ms;
  s.harness_share = share(process_ns - signing_ns - core_ns, process_ns);
  return s;
}

thread_counter_rates counter_rates(const thread_counts& window, std::uint32_t blocks, std::uint64_t transactions) {
  thread_counter_rates rates;
  for (std::size_t e = 0; e < counter_event_count; ++e) {
    const std::optional<std::uint64_t>& v = window.events[e];
    if (!v) continue;
    if (blocks != 0) rates.per_block[e] = static_cast<double>(*v) / blocks;
    if (transactions != 0) rates.per_transaction[e] = static_cast<double>(*v) / static_cast<double>(transactions);
  }
  const auto& instructions = window.events[counter_event_index("instructions")];
  const auto& cycles = window.events[counter_event_index("cycles")];
  if (instructions && cycles && *cycles != 0)
    rates.ipc = static_cast<double>(*instructions) / static_cast<double>(*cycles);
  return rates;
}

analysis analyze(const run_config& c, const run_context& ctx, const run_result& r) {
  analysis a;
  analyze_blocks(a, r);
  if (a.measured_blocks != 0) analyze_window(a, c, ctx, r);
  analyze_machine(a, r);
  if (a.measured_blocks != 0) check_targets(a, c);
  for (const counted_thread& t : r.counters.threads)
    a.counters.push_back(counter_rates(t.window, a.measured_blocks, a.measured_transactions));
  judge(a, ctx, r);
  return a;
}

}  // namespace apiary::harness
