// SIGINT, SIGTERM and SIGHUP during a run (SIGHUP: the terminal or ssh session closed): the
// handler only records the signal (an atomic store, async-signal-safe); the main thread
// polls interrupt_signal() and shuts the run down in order, and the report is kept. A second
// signal while the first is being handled exits at once with 128 + signal, unless it is the
// same signal within a second of the first: a wrapper's copy (GNU timeout signals the child,
// then its process group), not the user's second Ctrl-C.
// A hard exit (that second signal) still leaves a report where it can: the report's head is
// prepared before the run (standby_file, output_file.hpp) and the handler completes it with the
// signal and puts it in place, marked aborted. Once the final report is being written
// (writing_report()), a second signal no longer exits: the report is finished first and the
// exit status is then the signal's; a third exits at once.
// SIGPIPE is ignored for the whole command (ignore_sigpipe()): a write to a closed pipe
// (`apiary run | head -1`) is an error the caller reports, not a death by signal.
// Thread safety: install/restore from the main thread; interrupt_signal() from any thread.
#pragma once

#include <cstddef>
#include <string_view>

#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

// What completes the aborted report for a signal: async-signal-safe (a constant).
using aborted_tail = std::string_view (*)(int signal) noexcept;

class interrupt_guard {
 public:
  // Installs the handlers; `aborted` (when ready()) is what a hard exit leaves, completed by
  // `tail`. Both must outlive the guard. One guard at a time.
  explicit interrupt_guard(const standby_file* aborted = nullptr, aborted_tail tail = nullptr);
  ~interrupt_guard();  // restores the previous handlers
  interrupt_guard(const interrupt_guard&) = delete;
  interrupt_guard& operator=(const interrupt_guard&) = delete;

  // The final report is about to be written: a second signal now waits for it.
  void writing_report();
  // The signal that came while the report was written (the exit status is then 128 + it), or 0.
  int signal_while_writing() const;
};

// The signal number received, 0 when none.
int interrupt_signal();

// Ignores SIGPIPE from now on: writes to a closed pipe fail with EPIPE instead.
void ignore_sigpipe();

}  // namespace apiary::harness
