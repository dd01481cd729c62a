#include "apiary/harness/cycle/thread_counters.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>

#include "apiary/core/base/check.hpp"

namespace apiary::harness {

namespace {

int perf_event_open(perf_event_attr& attr, int tid, int group) {
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, group, PERF_FLAG_FD_CLOEXEC));
}

perf_event_attr attr_of(const counter_event& e, bool leader, bool user_only) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = e.type;
  a.config = e.config;
  a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  a.exclude_hv = 1;  // a hypervisor's work is no thread's
  a.exclude_kernel = user_only ? 1 : 0;
  // The leader starts disabled, and the group is enabled once every event has joined: a
  // sibling added to a group that already counts on a running thread counts only from the
  // thread's next switch (the kernel schedules a group in as a unit), and a thread that opens
  // its own group may run long before that (its first page faults went uncounted).
  a.disabled = leader ? 1 : 0;
  return a;
}

// "kernel.perf_event_paranoid is N", for the reasons that depend on it.
std::string paranoid_text() {
  char buf[32] = {};
  const int fd = ::open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "kernel.perf_event_paranoid unknown";
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return "kernel.perf_event_paranoid unknown";
  std::string_view v(buf, static_cast<std::size_t>(n));
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  return "kernel.perf_event_paranoid is " + std::string(v);
}

std::string open_error(int err) {
  std::string what = std::string("perf_event_open: ") + std::strerror(err);
  switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV: return "not supported by this machine (" + what + ")";
    case EACCES: return "not permitted (" + what + "; " + paranoid_text() + ")";
    case EPERM: return "not permitted (" + what + ": a seccomp filter, or " + paranoid_text() + ")";
    case ENOSYS: return "not available in this kernel (" + what + ")";
    case ESRCH: return "the thread has ended (" + what + ")";
    default: return what;
  }
}

// Opens one event into the group led by `leader` (-1: as the leader), counting the kernel
// too where allowed, else user space alone with that caveat; -1 with the reason when neither.
int open_event(const counter_event& e, int tid, int leader, event_state& state) {
  perf_event_attr a = attr_of(e, leader < 0, false);
  int fd = perf_event_open(a, tid, leader);
  if (fd >= 0) return fd;
  int err = errno;
  if (err == EACCES || err == EPERM) {
    // Refused with the kernel: kernel.perf_event_paranoid 2 still lets a process count its
    // own user space.
    a = attr_of(e, leader < 0, true);
    fd = perf_event_open(a, tid, leader);
    if (fd >= 0 && e.kernel_only) {
      ::close(fd);
      state.reason = "not permitted: it happens only in the kernel, and " + paranoid_text() +
                     " (counting the kernel needs 1 or less, or CAP_PERFMON)";
      return -1;
    }
    if (fd >= 0) {
      state.reason = "counted in user space only (" + paranoid_text() + ")";
      return fd;
    }
    err = errno;
  }
  state.reason = open_error(err);
  return -1;
}

// The number after `key` in a /proc status text, or nullopt.
std::optional<std::uint64_t> status_field(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i == text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  std::uint64_t v = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
  return v;
}

}  // namespace

switch_counts read_switches(int tid) noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[4096];
  std::size_t size = 0;
  for (ssize_t n = 0; size < sizeof buf && (n = ::read(fd, buf + size, sizeof buf - size)) > 0;)
    size += static_cast<std::size_t>(n);
  ::close(fd);
  // Each key at the start of its line: "voluntary_ctxt_switches" ends "nonvoluntary_ctxt_switches".
  const std::string_view text(buf, size);
  const auto voluntary = status_field(text, "\nvoluntary_ctxt_switches:");
  const auto involuntary = status_field(text, "\nnonvoluntary_ctxt_switches:");
  if (!voluntary || !involuntary) return {};
  return {true, *voluntary, *involuntary};
}

// ---- counter_group ----

counter_group::counter_group(int tid, std::span<const counter_event> events) : tid_(tid), events_(events.size()) {
  APIARY_CHECK(!events.empty() && events.size() <= max_group_events);
  // perf_event_open reads thread id 0 as the calling thread: never a thread that has none.
  if (tid <= 0) failure_ = "the thread never started";
  for (std::size_t i = 0; i < events.size() && failure_.empty(); ++i) {
    const int fd = open_event(events[i], tid, fds_.empty() ? -1 : fds_.front(), events_[i]);
    if (fd >= 0) {
      events_[i].slot = static_cast<int>(fds_.size());
      fds_.push_back(fd);
    } else if (i == 0) {
      failure_ = events_[i].reason;  // no leader, no group
    }
  }
  if (failure_.empty() && ::ioctl(fds_.front(), PERF_EVENT_IOC_ENABLE, 0) != 0)
    failure_ = std::string("perf_event_open: enabling the group: ") + std::strerror(errno);
  if (failure_.empty()) return;
  close();
  for (event_state& e : events_) e = {-1, failure_};
}

counter_group::~counter_group() { close(); }

counter_group::counter_group(counter_group&& o) noexcept
    : tid_(o.tid_), fds_(std::move(o.fds_)), events_(std::move(o.events_)), failure_(std::move(o.failure_)) {
  o.fds_.clear();
}

counter_group& counter_group::operator=(counter_group&& o) noexcept {
  if (this == &o) return *this;
  close();
  tid_ = o.tid_;
  fds_ = std::move(o.fds_);
  o.fds_.clear();
  events_ = std::move(o.events_);
  failure_ = std::move(o.failure_);
  return *this;
}

void counter_group::close() noexcept {
  // A sibling outlives its closed leader as an event of its own until it is closed too.
  for (const int fd : fds_) ::close(fd);
  fds_.clear();
}

bool counter_group::read(group_reading& out) const noexcept {
  out.nr = 0;
  if (fds_.empty()) return false;
  const ssize_t n = ::read(fds_.front(), &out, sizeof out);
  const auto whole = static_cast<ssize_t>((3 + fds_.size()) * sizeof(std::uint64_t));
  if (n != whole || out.nr != fds_.size()) {
    out.nr = 0;
    return false;
  }
  return true;
}

std::optional<std::uint64_t> count_between(const group_reading& a, const group_reading& b, int slot) {
  if (slot < 0 || a.nr == 0 || b.nr == 0 || static_cast<std::uint64_t>(slot) >= std::min(a.nr, b.nr))
    return std::nullopt;
  const auto at = static_cast<std::size_t>(slot);
  if (b.values[at] < a.values[at] || b.time_enabled < a.time_enabled || b.time_running < a.time_running)
    return std::nullopt;  // not two readings of one group in order
  const std::uint64_t raw = b.values[at] - a.values[at];
  const std::uint64_t enabled = b.time_enabled - a.time_enabled;
  const std::uint64_t running = b.time_running - a.time_running;
  if (running == enabled) return raw;
  if (running == 0) return std::nullopt;  // enabled, never on the PMU: nothing to scale
  return static_cast<std::uint64_t>(
      std::llround(static_cast<double>(raw) * static_cast<double>(enabled) / static_cast<double>(running)));
}

// ---- thread_counters ----

thread_counters::thread_counters(std::vector<std::string> names) {
  slots_.reserve(names.size());
  for (std::string& n : names) slots_.push_back({std::move(n), {}});
}

void thread_counters::open(std::size_t i, int tid) {
  APIARY_CHECK(i < slots_.size());
  if (!unavailable_.empty()) return;
  slots_[i].group = counter_group(tid, counter_events);
  if (!any_opened_ && !slots_[i].group.open()) unavailable_ = slots_[i].group.failure();
  any_opened_ = true;
}

bool thread_counters::wait_ready(std::chrono::milliseconds limit) const {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ready_.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
  return true;
}

event_availability thread_counters::availability(std::size_t e) const {
  APIARY_CHECK(e < counter_event_count);
  if (!unavailable_.empty()) return {false, unavailable_};
  event_availability out{true, {}};
  bool any = false;
  for (const slot& s : slots_) {
    if (!s.group.open()) continue;
    any = true;
    const event_state& st = s.group.events()[e];
    if (st.slot < 0) return {false, st.reason};
    if (out.reason.empty()) out.reason = st.reason;  // a caveat: user space only
  }
  if (!any) return {false, "no thread's counters were opened"};
  return out;
}

counter_edge thread_counters::make_edge() const {
  counter_edge e;
  e.groups.resize(slots_.size());
  e.switches.resize(slots_.size());
  return e;
}

void thread_counters::read_edge(counter_edge& e) const noexcept {
  for (std::size_t i = 0; i < slots_.size() && i < e.groups.size(); ++i) {
    slots_[i].group.read(e.groups[i]);
    e.switches[i] = slots_[i].group.tid() > 0 ? read_switches(slots_[i].group.tid()) : switch_counts{};
  }
  e.taken = true;
}

thread_counts thread_counters::counts(std::size_t i, const group_reading& a, const group_reading& b,
                                      const switch_counts& sa, const switch_counts& sb) const {
  thread_counts c;
  const counter_group& g = slots_[i].group;
  if (g.open())
    for (std::size_t e = 0; e < counter_event_count; ++e) c.events[e] = count_between(a, b, g.events()[e].slot);
  if (sa.known && sb.known && sb.voluntary >= sa.voluntary && sb.involuntary >= sa.involuntary) {
    c.voluntary_switches = sb.voluntary - sa.voluntary;
    c.involuntary_switches = sb.involuntary - sa.involuntary;
  }
  return c;
}

}  // namespace apiary::harness
