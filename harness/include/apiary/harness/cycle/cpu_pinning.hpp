// cpu_pinning: `apiary run --pin on`. The writer, whose cycle is what a run measures, gets a
// CPU that no other thread of the run may use; the producers, the harness's own threads and
// anything they start share the rest, each producer on a CPU of its own where there are
// enough. Another process can still run on the writer's CPU (pinning confines this process,
// it reserves nothing), but the run's own threads no longer preempt the writer or move it
// between caches.
//
// On fewer CPUs than that plan needs nothing fails: with one CPU nothing is pinned, with two
// the writer is alone on one and every other thread shares the other; the report's
// context.pin states what was done and why (plan_pinning's note).
//
// Thread safety: plan_pinning is pure; the apply functions act on the threads they name and
// are called by the run's main thread.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace apiary::harness {

struct cpu_pinning {
  bool requested = false;      // --pin on
  std::vector<int> cpus;       // the CPUs the process may run on, ascending
  int writer_cpu = -1;         // -1: the writer is not pinned
  std::vector<int> others;     // the CPUs every other thread of the run is confined to
  bool producers_own = false;  // producer i alone on others[i]
  bool applied = false;        // the plan was put in place without an error
  std::string note;            // what was done, or why not, in a sentence
};

// The CPUs this process may run on (sched_getaffinity), ascending; empty when unknown.
std::vector<int> allowed_cpus();

// The plan for a writer and `producers` producer threads on `cpus`: the writer on the last
// CPU, the other threads on the rest. Without at least two CPUs, no writer_cpu and a note.
cpu_pinning plan_pinning(std::span<const int> cpus, std::size_t producers);

// Confines the calling thread to plan.others, so that the threads it starts afterwards (the
// producers, their signing pools) start there too. Returns false, with plan.note saying why,
// when the kernel refused.
bool confine_calling_thread(cpu_pinning& plan);

// Puts the producers (their kernel thread ids, in order) and the writer on their CPUs; marks
// the plan applied, or says in plan.note what the kernel refused.
void pin_run_threads(cpu_pinning& plan, std::span<const int> producer_tids, int writer_tid);

}  // namespace apiary::harness
