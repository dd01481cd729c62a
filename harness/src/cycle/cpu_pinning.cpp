#include "apiary/harness/cycle/cpu_pinning.hpp"

#include <sched.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace apiary::harness {

namespace {

cpu_set_t to_set(std::span<const int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cpus) CPU_SET(static_cast<std::size_t>(c), &set);
  return set;
}

// sched_setaffinity for one thread (0: the calling one); the error's text, or empty.
std::string set_affinity(int tid, std::span<const int> cpus) {
  const cpu_set_t set = to_set(cpus);
  if (sched_setaffinity(tid, sizeof set, &set) == 0) return {};
  return std::strerror(errno);
}

std::string cpu_list(std::span<const int> cpus) {
  return fmt::format("{} {}", cpus.size() == 1 ? "CPU" : "CPUs", fmt::join(cpus, ","));
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(static_cast<std::size_t>(c), &set)) out.push_back(c);
  return out;
}

cpu_pinning plan_pinning(std::span<const int> cpus, std::size_t producers) {
  cpu_pinning p;
  p.requested = true;
  p.cpus.assign(cpus.begin(), cpus.end());
  if (cpus.size() < 2) {
    p.note = cpus.empty() ? "not pinned: the CPUs this process may use are unknown"
                          : fmt::format("not pinned: this process may use one CPU ({})", cpu_list(cpus));
    return p;
  }
  p.writer_cpu = cpus.back();
  p.others.assign(cpus.begin(), cpus.end() - 1);
  p.producers_own = producers > 0 && p.others.size() >= producers;
  if (p.producers_own) {
    p.note = fmt::format(
        "the writer alone on CPU {}; each of the {} producers on a CPU of its own, the other threads "
        "with them on {}",
        p.writer_cpu, producers, cpu_list(p.others));
  } else {
    p.note = fmt::format("the writer alone on CPU {}; the {} producers and the other threads share {}", p.writer_cpu,
                         producers, cpu_list(p.others));
  }
  return p;
}

bool confine_calling_thread(cpu_pinning& plan) {
  if (plan.writer_cpu < 0) return false;
  if (const std::string error = set_affinity(0, plan.others); !error.empty()) {
    plan.note = fmt::format("not pinned: the kernel refused to confine the run's threads to {} ({})",
                            cpu_list(plan.others), error);
    plan.writer_cpu = -1;
    return false;
  }
  return true;
}

void pin_run_threads(cpu_pinning& plan, std::span<const int> producer_tids, int writer_tid) {
  if (plan.writer_cpu < 0) return;
  if (plan.producers_own)
    for (std::size_t i = 0; i < producer_tids.size() && i < plan.others.size(); ++i)
      if (const std::string error = set_affinity(producer_tids[i], std::span(&plan.others[i], 1)); !error.empty()) {
        plan.note += fmt::format("; producer {} stays on {} (the kernel refused CPU {}: {})", i, cpu_list(plan.others),
                                 plan.others[i], error);
      }
  if (writer_tid == 0) {
    plan.note = "not pinned: the writer had not started when its CPU was to be set; the other threads stay on " +
                cpu_list(plan.others);
    return;
  }
  if (const std::string error = set_affinity(writer_tid, std::span(&plan.writer_cpu, 1)); !error.empty()) {
    plan.note =
        fmt::format("not pinned: the kernel refused to put the writer on CPU {} ({}); the other threads stay on {}",
                    plan.writer_cpu, error, cpu_list(plan.others));
    return;
  }
  // Read back: applied means the kernel holds the writer to its CPU, not that a call returned 0.
  cpu_set_t got;
  CPU_ZERO(&got);
  const cpu_set_t want = to_set(std::span(&plan.writer_cpu, 1));
  if (sched_getaffinity(writer_tid, sizeof got, &got) != 0 || CPU_EQUAL(&got, &want) == 0) {
    plan.note = fmt::format("not pinned: the writer's CPUs read back are not CPU {} alone", plan.writer_cpu);
    return;
  }
  plan.applied = true;
}

}  // namespace apiary::harness
