// The per-thread counters against the real kernel: an event the machine lacks (a type no
// kernel has, so the test means the same everywhere) is left out with the reason while the
// rest of the group counts; a thread that is not there opens nothing and says why; the first
// refusal makes a whole set unavailable; multiplexed counts are scaled; the rates divide by
// the measured blocks and transactions.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

#include "apiary/harness/cycle/thread_counters.hpp"
#include "apiary/harness/report/analysis.hpp"

namespace apiary::harness {
namespace {

// No kernel registers a PMU of this type: perf_event_open answers ENOENT, as it does for a
// hardware event on a machine without a PMU.
constexpr counter_event missing_event{"missing", 0x7ffff000, 0};

const counter_event task_clock = counter_events[counter_event_index("task_clock_ns")];
const counter_event page_faults = counter_events[counter_event_index("page_faults")];

// Pages of fresh memory work() touches: at least this many page faults.
constexpr std::size_t work_pages = 1024;

// CPU time and fresh pages (small ones, one fault each) for the calling thread to count.
void work() {
  const std::size_t bytes = work_pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  ::madvise(memory, bytes, MADV_NOHUGEPAGE);
  std::memset(memory, 1, bytes);
  ::munmap(memory, bytes);
}

TEST(CounterGroup, AnEventTheMachineLacksIsLeftOutWithTheReasonAndTheRestCount) {
  const counter_event events[] = {task_clock, missing_event, page_faults};
  const counter_group g(static_cast<int>(::gettid()), events);
  ASSERT_TRUE(g.open()) << g.failure();
  ASSERT_EQ(g.events().size(), 3u);
  EXPECT_EQ(g.events()[1].slot, -1);
  EXPECT_EQ(g.events()[1].reason, "not supported by this machine (perf_event_open: No such file or directory)");
  EXPECT_EQ(g.events()[0].slot, 0);
  EXPECT_EQ(g.events()[2].slot, 1) << "the event after the missing one takes the next slot";

  group_reading before, after;
  ASSERT_TRUE(g.read(before));
  work();
  ASSERT_TRUE(g.read(after));
  EXPECT_EQ(after.nr, 2u) << "one value per event the group holds";
  const auto clock_ns = count_between(before, after, g.events()[0].slot);
  const auto faults = count_between(before, after, g.events()[2].slot);
  ASSERT_TRUE(clock_ns && faults);
  EXPECT_GT(*clock_ns, 0u);
  EXPECT_GE(*faults, work_pages) << "a fault for each fresh page";
  EXPECT_FALSE(count_between(before, after, g.events()[1].slot)) << "a missing event has no count";
}

// The machine's own hardware events: counted, or left out with a reason; never a failure.
TEST(CounterGroup, EveryEventOfTheTableIsCountedOrSaysWhyNot) {
  const counter_group g(static_cast<int>(::gettid()), counter_events);
  ASSERT_TRUE(g.open()) << g.failure();
  for (std::size_t e = 0; e < counter_event_count; ++e)
    EXPECT_TRUE(g.events()[e].slot >= 0 || !g.events()[e].reason.empty()) << counter_events[e].name;
  group_reading r;
  EXPECT_TRUE(g.read(r));
}

TEST(CounterGroup, AThreadThatIsNotThereOpensNothingAndSaysWhy) {
  const counter_event events[] = {task_clock, page_faults};
  // Above any pid_max the kernel allows (2^22), so no thread has it.
  const counter_group gone(INT_MAX, events);
  EXPECT_FALSE(gone.open());
  EXPECT_NE(gone.failure().find("perf_event_open"), std::string::npos) << gone.failure();
  for (const event_state& e : gone.events()) EXPECT_EQ(e.reason, gone.failure());
  group_reading r;
  EXPECT_FALSE(gone.read(r));
  EXPECT_EQ(r.nr, 0u);
  // 0 would be "the calling thread" to perf_event_open: never opened for a thread without an id.
  const counter_group unstarted(0, events);
  EXPECT_FALSE(unstarted.open());
  EXPECT_EQ(unstarted.failure(), "the thread never started");
}

TEST(ThreadCounters, TheFirstGroupThatCannotOpenMakesTheSetUnavailable) {
  thread_counters set({"writer", "main"});
  set.open(0, INT_MAX);
  set.open(1, static_cast<int>(::gettid()));
  ASSERT_FALSE(set.unavailable().empty());
  EXPECT_EQ(set.tid(1), 0) << "nothing opened after the refusal";
  for (std::size_t e = 0; e < counter_event_count; ++e) {
    const event_availability a = set.availability(e);
    EXPECT_FALSE(a.available);
    EXPECT_EQ(a.reason, set.unavailable());
  }
}

TEST(ThreadCounters, AnEdgeReadsEveryThreadAndTheCountsFollowThem) {
  std::atomic<int> other{0};
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::thread t([&] {
    other.store(static_cast<int>(::gettid()));
    while (!go.load()) std::this_thread::yield();
    work();
    done.store(true);
  });
  while (other.load() == 0) std::this_thread::yield();
  thread_counters set({"worker", "main"});
  set.open(1, static_cast<int>(::gettid()));
  set.open(0, other.load());
  set.mark_ready();
  ASSERT_TRUE(set.wait_ready(std::chrono::milliseconds(0)));
  ASSERT_TRUE(set.unavailable().empty()) << set.unavailable();
  counter_edge a = set.make_edge();
  set.read_edge(a);
  go.store(true);
  while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // voluntary switches
  counter_edge b = set.make_edge();
  set.read_edge(b);
  t.join();
  constexpr std::size_t clock = counter_event_index("task_clock_ns");
  constexpr std::size_t faults = counter_event_index("page_faults");
  const thread_counts worker = set.counts(0, a.groups[0], b.groups[0], a.switches[0], b.switches[0]);
  const thread_counts main = set.counts(1, a.groups[1], b.groups[1], a.switches[1], b.switches[1]);
  ASSERT_TRUE(worker.events[clock] && worker.events[faults] && main.events[clock]);
  EXPECT_GE(*worker.events[faults], work_pages) << "the worker's page faults are its own";
  EXPECT_LT(main.events[faults].value_or(0), *worker.events[faults]);
  ASSERT_TRUE(main.voluntary_switches) << "/proc/self/task/<tid>/status of a live thread";
  EXPECT_GT(*main.voluntary_switches, 0u) << "the main thread slept";
  // After its thread has ended a group still reads (its counts stay), its /proc file does not.
  counter_edge c = set.make_edge();
  set.read_edge(c);
  EXPECT_EQ(c.groups[0].nr, b.groups[0].nr);
  EXPECT_FALSE(c.switches[0].known);
}

TEST(CountBetween, MultiplexedCountsAreScaledByEnabledOverRunning) {
  group_reading a, b;
  a.nr = b.nr = 1;
  a.time_enabled = 100;
  a.time_running = 100;
  a.values[0] = 1000;
  b.time_enabled = 300;
  b.time_running = 150;  // on the PMU a quarter of the 200 ns in between
  b.values[0] = 1500;
  EXPECT_EQ(count_between(a, b, 0), 2000u);
  b.time_running = 300;
  EXPECT_EQ(count_between(a, b, 0), 500u) << "never multiplexed: the count as it is";
  b.time_running = 100;
  EXPECT_FALSE(count_between(a, b, 0)) << "enabled but never running: no count";
  EXPECT_FALSE(count_between(b, a, 0)) << "readings out of order";
  EXPECT_FALSE(count_between(a, b, -1));
  group_reading unread;
  EXPECT_FALSE(count_between(unread, b, 0));
}

TEST(CounterRates, PerBlockPerTransactionAndInstructionsPerCycle) {
  thread_counts w;
  w.events[counter_event_index("task_clock_ns")] = 9'000'000;
  w.events[counter_event_index("context_switches")] = 3;
  w.events[counter_event_index("instructions")] = 30'000;
  w.events[counter_event_index("cycles")] = 20'000;
  const thread_counter_rates r = counter_rates(w, 3, 900);
  EXPECT_DOUBLE_EQ(*r.per_block[counter_event_index("task_clock_ns")], 3'000'000);
  EXPECT_DOUBLE_EQ(*r.per_transaction[counter_event_index("task_clock_ns")], 10'000);
  EXPECT_DOUBLE_EQ(*r.per_block[counter_event_index("context_switches")], 1);
  EXPECT_DOUBLE_EQ(*r.ipc, 1.5);
  EXPECT_FALSE(r.per_block[counter_event_index("llc_misses")]) << "not counted: no rate";
  const thread_counter_rates none = counter_rates(w, 0, 0);
  EXPECT_FALSE(none.per_block[0] || none.per_transaction[0]) << "nothing to divide by";
  w.events[counter_event_index("cycles")].reset();
  EXPECT_FALSE(counter_rates(w, 3, 900).ipc);
}

}  // namespace
}  // namespace apiary::harness
