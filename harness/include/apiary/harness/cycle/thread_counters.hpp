// thread_counters: per-thread performance counters (Linux perf_event_open), one group per
// thread, so that one read() gives every event of a thread at one moment. The harness opens
// them for threads of its own process by their Linux thread ids, which the threads publish as
// they start (queen::writer::thread_id(), colony::colony::thread_ids()); a group can be read
// from any thread, also after its thread has ended.
//
// The events are the table below, the task clock first: the group's leader, a software event,
// so that a group counts whatever else opened. The other software events (context switches,
// CPU migrations, page faults) exist wherever perf_event_open does; the hardware ones only
// where the kernel exposes a PMU (a virtual machine often has none). When the PMU has fewer
// counters than the group asks for, the kernel multiplexes: it counts the group part of the
// time, and a count is scaled by the group's time enabled / time running (count_between()).
//
// What cannot be counted is a value, never an error: an event the machine lacks is left out
// of its group with the reason; a kernel that refuses perf_event_open altogether
// (kernel.perf_event_paranoid 3, a seccomp filter) leaves the whole set unavailable with the
// reason. Where a process may count only its user space (kernel.perf_event_paranoid 2 without
// CAP_PERFMON), the events are opened so and say it; the two that happen only in the kernel
// (context switches, migrations), which would read 0, are left out with that reason.
//
// Voluntary and involuntary context switches come from /proc/self/task/<tid>/status: tens of
// microseconds a file, so they are read at a window's edges and interval records only.
//
// Thread safety: a set is opened on one thread (open(), then mark_ready()); from then on any
// thread may read it, each into buffers of its own: read_group() is one read() into a fixed
// buffer, read_edge() one read() and one /proc file per thread; neither allocates.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace apiary::harness {

struct counter_event {
  std::string_view name;  // the key in the report and the interval log; apiary_thread_<name>
  std::uint32_t type;     // perf_event_attr.type
  std::uint64_t config;   // perf_event_attr.config
  // Happens only in the kernel: counted in user space alone it would read 0.
  bool kernel_only = false;
};

// Last-level cache read misses, as perf's LLC-load-misses.
inline constexpr std::uint64_t llc_read_misses =
    PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);

// The events a run counts, the group's leader first.
inline constexpr std::array counter_events{
    counter_event{"task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    counter_event{"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true},
    counter_event{"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true},
    counter_event{"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    counter_event{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    counter_event{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    counter_event{"cache_references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    counter_event{"cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    counter_event{"branch_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    counter_event{"llc_misses", PERF_TYPE_HW_CACHE, llc_read_misses},
};
inline constexpr std::size_t counter_event_count = counter_events.size();

// The index of the event with this name, checked when the program is compiled.
consteval std::size_t counter_event_index(std::string_view name) {
  for (std::size_t i = 0; i < counter_events.size(); ++i)
    if (counter_events[i].name == name) return i;
  throw "no counter event of that name";
}

// The most events one group holds: the size of the buffer one read() fills.
inline constexpr std::size_t max_group_events = 16;
static_assert(counter_event_count <= max_group_events);

// One read() of a group (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING), in
// the kernel's layout: the values in the order the events joined the group.
struct group_reading {
  std::uint64_t nr = 0;  // 0: not read
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  std::array<std::uint64_t, max_group_events> values{};
};

// A thread's voluntary and involuntary context switches so far.
struct switch_counts {
  bool known = false;  // false: the file could not be read (the thread has ended)
  std::uint64_t voluntary = 0;
  std::uint64_t involuntary = 0;
};
// From /proc/self/task/<tid>/status: one open, read and close into a stack buffer.
switch_counts read_switches(int tid) noexcept;

// What opening one event of a group gave.
struct event_state {
  int slot = -1;       // its index in group_reading::values; -1: not counted
  std::string reason;  // why not counted, or a caveat of a counted one (user space only); "": none
};

// One thread's group. Opening never throws for what the kernel answers: open() is false, with
// failure(), when the leader could not be opened, and each event has its state.
class counter_group {
 public:
  counter_group() = default;
  // Opens `events` (the first as the leader) for thread `tid` of this process.
  counter_group(int tid, std::span<const counter_event> events);
  ~counter_group();
  counter_group(counter_group&& o) noexcept;
  counter_group& operator=(counter_group&& o) noexcept;
  counter_group(const counter_group&) = delete;
  counter_group& operator=(const counter_group&) = delete;

  bool open() const { return !fds_.empty(); }
  int tid() const { return tid_; }
  const std::string& failure() const { return failure_; }
  std::span<const event_state> events() const { return events_; }
  // One read() into `out`; false, with out.nr 0, when the group is not open or the read failed.
  bool read(group_reading& out) const noexcept;

 private:
  void close() noexcept;

  int tid_ = 0;
  std::vector<int> fds_;  // the leader's first
  std::vector<event_state> events_;
  std::string failure_;
};

// The count in `slot` from reading a to reading b of one group, scaled by the group's time
// enabled / time running over that span when the kernel multiplexed it; nullopt when a
// reading failed, the slot is -1, or the group was enabled in the span but never ran.
std::optional<std::uint64_t> count_between(const group_reading& a, const group_reading& b, int slot);

// One thread's counts over a span: each event (nullopt: not counted) and its switches.
struct thread_counts {
  std::array<std::optional<std::uint64_t>, counter_event_count> events{};
  std::optional<std::uint64_t> voluntary_switches;
  std::optional<std::uint64_t> involuntary_switches;
};

// Every thread of a set at one moment.
struct counter_edge {
  std::vector<group_reading> groups;
  std::vector<switch_counts> switches;
  bool taken = false;
};

// One event over a whole set: counted for every thread, or why not (with a caveat of a
// counted one, as event_state).
struct event_availability {
  bool available = false;
  std::string reason;
};

// The counted threads of a run, each a group of counter_events, in the order the report
// lists them.
class thread_counters {
 public:
  // One slot per thread name; nothing opened yet.
  explicit thread_counters(std::vector<std::string> names);

  // Opening thread: opens slot i's group for thread `tid`. The first call decides: when its
  // leader cannot be opened, the whole set is unavailable() and later calls open nothing; a
  // later group that fails (its thread has ended) counts nothing for that thread.
  void open(std::size_t i, int tid);
  // Opening thread, after its last open(): readers may start.
  void mark_ready() { ready_.store(true, std::memory_order_release); }
  // Any thread: waits (yielding) until mark_ready() or `limit` passes; whether ready.
  bool wait_ready(std::chrono::milliseconds limit) const;

  std::size_t size() const { return slots_.size(); }
  const std::string& name(std::size_t i) const { return slots_[i].name; }
  int tid(std::size_t i) const { return slots_[i].group.tid(); }
  // Why nothing is counted, or "".
  const std::string& unavailable() const { return unavailable_; }
  // Event e over the opened groups: available when every one counts it.
  event_availability availability(std::size_t e) const;

  // Readers, once ready. Slot i's group: one read().
  bool read_group(std::size_t i, group_reading& out) const noexcept { return slots_[i].group.read(out); }
  // Every group and every thread's switches, into an edge from make_edge().
  void read_edge(counter_edge& e) const noexcept;
  counter_edge make_edge() const;
  // Slot i's counts from a to b: the events from the group readings, the switches from /proc.
  thread_counts counts(std::size_t i, const group_reading& a, const group_reading& b, const switch_counts& sa,
                       const switch_counts& sb) const;

 private:
  struct slot {
    std::string name;
    counter_group group;
  };
  std::vector<slot> slots_;
  std::string unavailable_;
  bool any_opened_ = false;
  std::atomic<bool> ready_{false};
};

}  // namespace apiary::harness
