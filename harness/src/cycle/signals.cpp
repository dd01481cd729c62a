#include "cycle/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <iterator>

namespace apiary::harness {

namespace {

std::atomic<int> received{0};
std::atomic<std::int64_t> received_ns{0};  // CLOCK_MONOTONIC when the first one came
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free atomic");
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the signal handler needs a lock-free atomic");

// Where the run is, for a second signal: it exits at once, leaving the aborted report if one
// stands by (armed), or it waits for the final report being written.
enum phase : int { unarmed, armed, writing, aborting };
std::atomic<int> phase_now{unarmed};
std::atomic<int> while_writing{0};             // the signal that came while writing
const standby_file* aborted_report = nullptr;  // set before phase_now becomes armed
aborted_tail aborted_report_tail = nullptr;
static_assert(std::atomic<int>::is_always_lock_free);

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous[std::size(handled)];

// A wrapper passes one interrupt on twice: GNU timeout signals its child, then the child's
// process group, so apiary gets the same signal twice within microseconds. The same signal
// again within this long is that copy, not the user's second Ctrl-C.
constexpr std::int64_t repeat_window_ns = 1'000'000'000;

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void say(std::string_view text) {
  const ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

[[noreturn]] void exit_at_once(int sig) {
  int expected = armed;
  if (phase_now.compare_exchange_strong(expected, aborting)) {
    const std::string_view tail = aborted_report_tail(sig);
    say(aborted_report->put(tail.data(), tail.size())
            ? "\napiary: second interrupt, exiting at once (the report is marked aborted)\n"
            : "\napiary: second interrupt, exiting at once (no report: it could not be written)\n");
  } else {
    say("\napiary: second interrupt, exiting at once (no report)\n");
  }
  _exit(128 + sig);
}

extern "C" void on_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  std::int64_t unset = 0;
  received_ns.compare_exchange_strong(unset, now);  // the first one's time, before its number
  int none = 0;
  if (received.compare_exchange_strong(none, sig)) return;
  if (none == sig && now - received_ns.load() < repeat_window_ns) return;
  if (phase_now.load() == writing) {
    int first = 0;
    if (while_writing.compare_exchange_strong(first, sig)) {
      say("\napiary: writing the report, then exiting (interrupt again to exit at once)\n");
      return;
    }
  }
  exit_at_once(sig);
}

}  // namespace

interrupt_guard::interrupt_guard(const standby_file* aborted, aborted_tail tail) {
  received.store(0);
  received_ns.store(0);
  while_writing.store(0);
  aborted_report = aborted;
  aborted_report_tail = tail;
  phase_now.store(aborted != nullptr && tail != nullptr && aborted->ready() ? armed : unarmed);
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(handled); ++i) sigaction(handled[i], &sa, &previous[i]);
}

interrupt_guard::~interrupt_guard() {
  for (std::size_t i = 0; i < std::size(handled); ++i) sigaction(handled[i], &previous[i], nullptr);
  phase_now.store(unarmed);
}

void interrupt_guard::writing_report() {
  int expected = armed;
  if (phase_now.compare_exchange_strong(expected, writing) || expected == unarmed) {
    phase_now.store(writing);
    return;
  }
  // A handler on another thread is putting the aborted report in place and exits: writing
  // the final one now could land after it. Wait for that exit.
  for (;;) pause();
}

int interrupt_guard::signal_while_writing() const { return while_writing.load(); }

int interrupt_signal() { return received.load(); }

void ignore_sigpipe() {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, nullptr);
}

}  // namespace apiary::harness
