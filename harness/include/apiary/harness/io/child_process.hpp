// child_process: the programs apiary runs beside itself (perf and the flame graph tools of
// `apiary run --profile`). A program is found on PATH, then in the tools directory the build
// names (the source tree's .venv/bin, where scripts/install-deps.sh installs the flame graph
// tools). A child starts with posix_spawn: standard input, output and error as the caller
// says, the descriptors it passes at fixed numbers from 3 on, every other descriptor closed
// (a report's FIFO, a lock, the log file stay apiary's alone). Each child is waited for, with
// its resource usage; one that outlives its time limit is killed, never left behind.
// Thread safety: one object per thread; the free functions are safe anywhere.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apiary::harness {

// Where programs are looked for after PATH (APIARY_TOOLS_DIR, set by the build).
std::string_view tools_directory();

// The path of the first executable file `name` in PATH's directories, then in
// tools_directory(); "" when there is none.
std::string find_program(std::string_view name);

// How a child ended.
struct child_exit {
  static constexpr int lost_status = -2;  // waitpid() failed: its end is unknown
  int status = -1;                        // as waitpid() reports it; -1: not started
  bool timed_out = false;
  rusage usage{};  // its CPU time, from wait4()

  bool exited_ok() const;            // exit status 0
  bool killed_by(int signal) const;  // ended by this signal
  std::int64_t cpu_ns() const;       // user + system
  std::string describe() const;      // "exit status 2", "killed by SIGSEGV", "timed out"
};

// What a child writes on a descriptor of its own (a memfd): its messages, read back after it
// ended. Holds at most what the child writes; text() gives the last `most` bytes.
class child_text {
 public:
  child_text();
  ~child_text();
  child_text(const child_text&) = delete;
  child_text& operator=(const child_text&) = delete;
  int fd() const { return fd_; }
  std::string text(std::size_t most = 64 * 1024) const;
  // The last line that is not empty, for an error line ("" when none).
  std::string last_line() const;

 private:
  int fd_ = -1;
};

struct spawn_request {
  std::vector<std::string> argv;  // argv[0]: the program's path
  int in = -1;                    // standard input; -1: /dev/null
  int out = -1;                   // standard output; -1: /dev/null
  int err = -1;                   // standard error; -1: /dev/null
  std::vector<int> pass;          // passed as descriptors 3, 4, ... in this order
  bool own_group = false;         // a process group of its own: the terminal's Ctrl-C is not its
  // SCHED_BATCH: the child's CPU share is the same, but when something wakes it, it does not
  // preempt the thread that runs, so waking it costs that thread a system call, not its CPU.
  bool batch = false;
};

class child_process {
 public:
  child_process() = default;
  // A child still running is killed (SIGKILL) and waited for.
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // Starts the child: the error line, or nullopt.
  std::optional<std::string> start(const spawn_request& r);
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Whether it has ended (then wait() returns at once).
  bool ended();
  void signal(int sig) const;
  // Waits for its end; after `limit` it is killed (SIGKILL), waited for and marked timed out.
  child_exit wait(std::chrono::milliseconds limit);

 private:
  pid_t pid_ = -1;
  std::optional<child_exit> exit_;
};

// Runs `stages` as a pipeline (each stage's output the next one's input; the first reads
// /dev/null) and returns the last one's output, or the error line of the first stage that
// failed ("<program>: exit status 1: <its last message>"). Every stage ends within `limit`.
struct pipeline_result {
  std::string out;
  std::string error;  // empty: every stage exited with 0
};
pipeline_result run_pipeline(const std::vector<std::vector<std::string>>& stages, std::chrono::milliseconds limit);

}  // namespace apiary::harness
