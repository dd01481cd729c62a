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

extern "C" void on_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  std::int64_t unset = 0;
  received_ns.compare_exchange_strong(unset, now);  // the first one's time, before its number
  int none = 0;
  if (received.compare_exchange_strong(none, sig)) return;
  if (none == sig && now - received_ns.load() < repeat_window_ns) return;
  static const char msg[] = "\napiary: second interrupt, exiting at once (no report)\n";
  const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(128 + sig);
}

}  // namespace

interrupt_guard::interrupt_guard() {
  received.store(0);
  received_ns.store(0);
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(handled); ++i) sigaction(handled[i], &sa, &previous[i]);
}

interrupt_guard::~interrupt_guard() {
  for (std::size_t i = 0; i < std::size(handled); ++i) sigaction(handled[i], &previous[i], nullptr);
}

int interrupt_signal() { return received.load(); }

void ignore_sigpipe() {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, nullptr);
}

}  // namespace apiary::harness
