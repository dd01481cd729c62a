// SIGINT, SIGTERM and SIGHUP during a run (SIGHUP: the terminal or ssh session closed): the
// handler only records the signal (an atomic store, async-signal-safe); the main thread
// polls interrupt_signal() and shuts the run down in order, and the report is kept. A second
// signal while the first is being handled exits at once with 128 + signal, unless it is the
// same signal within a second of the first: a wrapper's copy (GNU timeout signals the child,
// then its process group), not the user's second Ctrl-C.
// SIGPIPE is ignored for the whole command (ignore_sigpipe()): a write to a closed pipe
// (`apiary run | head -1`) is an error the caller reports, not a death by signal.
// Thread safety: install/restore from the main thread; interrupt_signal() from any thread.
#pragma once

namespace apiary::harness {

class interrupt_guard {
 public:
  interrupt_guard();   // installs the handlers
  ~interrupt_guard();  // restores the previous ones
  interrupt_guard(const interrupt_guard&) = delete;
  interrupt_guard& operator=(const interrupt_guard&) = delete;
};

// The signal number received, 0 when none.
int interrupt_signal();

// Ignores SIGPIPE from now on: writes to a closed pipe fail with EPIPE instead.
void ignore_sigpipe();

}  // namespace apiary::harness
