#include "cycle/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iterator>

namespace apiary::harness {

namespace {

std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free atomic");

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous[std::size(handled)];

extern "C" void on_signal(int sig) {
  int none = 0;
  if (!received.compare_exchange_strong(none, sig)) {
    static const char msg[] = "\napiary: second interrupt, exiting at once (no report)\n";
    const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(128 + sig);
  }
}

}  // namespace

interrupt_guard::interrupt_guard() {
  received.store(0);
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
