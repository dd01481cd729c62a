// profile: `apiary run --profile DIR`, a CPU profile of exactly the measured window.
//
//   Before genesis, start() runs `perf record` on this process (every thread, those started
//   later too: the events are inherited), sampling the CPU clock at frequency_hz with DWARF
//   call graphs, and with its events disabled (-D -1). perf listens on a control pipe (perf's
//   --control fd:): the window's edges write "enable" and "disable" there, one write(2) of a
//   few bytes each on the thread that takes the edge (the writer's window observer, or the
//   main thread when there is no warm-up or when it stops the run), never waiting for perf's
//   answer. Genesis, the key warm-up, the warm-up blocks and the shutdown are not recorded.
//
//   Frame pointers would make the samples cheaper, but keeping them costs the release
//   build 1.34% more instructions per transaction at the perf gate (docs/profile.md), over
//   the 1% allowed; so perf copies 8 KiB of each sampled thread's stack and unwinds it with
//   the binaries' DWARF unwind tables after the run.
//
//   After the run (all its threads joined), finish() stops perf and writes, in DIR:
//   perf.data (perf's record), window.folded (every thread's folded stacks, each under its
//   thread's name), threads/<thread>.folded (the same per thread), top.tsv (every function
//   by self share) and flamegraph.svg (inferno-flamegraph over window.folded). The stacks
//   come from `perf script | inferno-collapse-perf --tid`; the thread names from
//   /proc/self/task once the run's threads have started (name_threads()): perf, disabled
//   when they started, did not see their names.
//
// Thread safety: start(), name_threads() and finish() on the main thread; open_window() and
// close_window() on any thread (a mutex orders them: once opened and closed, never again).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "apiary/core/base/mutex.hpp"
#include "apiary/harness/cycle/profile_result.hpp"
#include "apiary/harness/io/child_process.hpp"

namespace apiary::harness {

class profiler {
 public:
  static constexpr unsigned frequency_hz = 499;

  // Whether --profile can work here: perf and the flame graph tools found (find_program),
  // and perf allowed to record this process. The error line, or nullopt.
  static std::optional<std::string> check_tools();
  // Whether `dir` can hold the profile (made if missing): the error line, or nullopt.
  static std::optional<std::string> check_directory(const std::string& dir);
  // The files a profile writes in `dir` whose names are known before the run.
  static std::vector<std::string> output_paths(const std::string& dir);

  explicit profiler(std::string dir);
  // A perf still running is stopped and waited for.
  ~profiler();
  profiler(const profiler&) = delete;
  profiler& operator=(const profiler&) = delete;

  // Before genesis: removes the files of an earlier profile from DIR, starts perf and waits
  // until it records (disabled). The error line, or nullopt.
  std::optional<std::string> start();

  // The measured window's edges. Each writes to perf's control pipe once; a window closed
  // (or closed before it opened: a run stopped in its warm-up) never opens again.
  void open_window() noexcept;
  void close_window() noexcept;

  // Main thread, once the run's threads have started and been named (before they end):
  // their names by id.
  void name_threads();

  // After the run: stops perf and writes the profile's files; never throws. `title` heads
  // the flame graph; `window_s`: the measured window's length (a window of a second or more
  // without a sample means perf recorded nothing: an error; a shorter one may have none).
  profile_result finish(const std::string& title, double window_s);

 private:
  enum class window_state { before, open, closed };
  void send(std::string_view command) APIARY_REQUIRES(mutex_);
  void stop_perf(profile_result& r);
  void write_profile(profile_result& r, const std::string& title, double window_s);
  std::string path(std::string_view name) const;

  const std::string dir_;
  child_process perf_;
  child_text perf_messages_;
  int control_ = -1;  // the write end of perf's control pipe (non-blocking)
  int ack_ = -1;      // the read end of its answers
  std::map<int, std::string> thread_names_;

  core::mutex mutex_;
  window_state window_ APIARY_GUARDED_BY(mutex_) = window_state::before;
  bool opened_ APIARY_GUARDED_BY(mutex_) = false;
  std::uint32_t control_writes_ APIARY_GUARDED_BY(mutex_) = 0;
  std::int64_t control_ns_ APIARY_GUARDED_BY(mutex_) = 0;
  std::string control_error_ APIARY_GUARDED_BY(mutex_);
};

}  // namespace apiary::harness
