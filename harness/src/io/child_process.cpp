#include "apiary/harness/io/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "apiary/core/base/clock.hpp"
#include "apiary/harness/io/text_format.hpp"

extern char** environ;

namespace apiary::harness {

#ifndef APIARY_TOOLS_DIR
#define APIARY_TOOLS_DIR ""
#endif

std::string_view tools_directory() { return APIARY_TOOLS_DIR; }

namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// dir/name. Appended in place: GCC 12 takes `std::string(dir) + "/" + ...` at -O1 for a copy
// out of bounds (-Warray-bounds, a false positive).
std::string in_directory(std::string_view dir, std::string_view name) {
  std::string path;
  path.reserve(dir.size() + 1 + name.size());
  path.append(dir).append(1, '/').append(name);
  return path;
}

// A descriptor of this process's own, close-on-exec, numbered at least 10: out of the way of
// the numbers a child's descriptors are moved to (0 to 2 and 3 on).
int high_copy(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 10); }

}  // namespace

std::string find_program(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (true) {
    const std::size_t colon = dirs.find(':');
    // An empty PATH entry is the current directory.
    const std::string_view dir = colon == 0 || dirs.empty() ? std::string_view(".") : dirs.substr(0, colon);
    if (path != nullptr) {
      std::string candidate = in_directory(dir, name);
      if (executable_file(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  if (!tools_directory().empty()) {
    std::string candidate = in_directory(tools_directory(), name);
    if (executable_file(candidate)) return candidate;
  }
  return {};
}

// ---- child_exit ----

bool child_exit::exited_ok() const {
  return status >= 0 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool child_exit::killed_by(int sig) const { return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig; }

std::int64_t child_exit::cpu_ns() const {
  const auto ns = [](const timeval& t) {
    return std::int64_t{t.tv_sec} * 1'000'000'000 + std::int64_t{t.tv_usec} * 1000;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

std::string child_exit::describe() const {
  if (status == lost_status) return "its end could not be waited for";
  if (status < 0) return "not started";
  if (timed_out) return "did not end in time (killed)";
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by " + signal_name(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// ---- child_text ----

child_text::child_text() : fd_(memfd_create("apiary-child-text", MFD_CLOEXEC)) {}

child_text::~child_text() {
  if (fd_ >= 0) close(fd_);
}

std::string child_text::text(std::size_t most) const {
  if (fd_ < 0) return {};
  struct stat st {};
  if (fstat(fd_, &st) != 0) return {};
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t from = size > most ? size - most : 0;
  std::string out(size - from, '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = pread(fd_, out.data() + got, out.size() - got, static_cast<off_t>(from + got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

std::string child_text::last_line() const {
  const std::string t = text(4096);
  std::size_t end = t.size();
  while (end > 0) {
    while (end > 0 && (t[end - 1] == '\n' || t[end - 1] == '\r' || t[end - 1] == ' ')) --end;
    const std::size_t start = t.rfind('\n', end == 0 ? 0 : end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    if (end > from) return t.substr(from, end - from);
    end = from;
  }
  return {};
}

// ---- child_process ----

child_process::~child_process() {
  if (started() && !exit_) {
    signal(SIGKILL);
    wait(std::chrono::milliseconds(0));
  }
}

std::optional<std::string> child_process::start(const spawn_request& r) {
  if (r.argv.empty()) return "no program to run";
  // The passed descriptors are copied out of the way first, so moving one to 3 never
  // overwrites another still to be moved.
  std::vector<int> copies;
  for (int fd : r.pass) {
    copies.push_back(high_copy(fd));
    if (copies.back() < 0) {
      const int err = errno;
      for (int c : copies)
        if (c >= 0) close(c);
      return std::string("cannot pass a descriptor to ") + r.argv[0] + ": " + std::strerror(err);
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const auto stdio = [&actions](int fd, int target, int flags) {
    if (fd >= 0)
      posix_spawn_file_actions_adddup2(&actions, fd, target);
    else
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null", flags, 0);
  };
  stdio(r.in, STDIN_FILENO, O_RDONLY);
  stdio(r.out, STDOUT_FILENO, O_WRONLY);
  stdio(r.err, STDERR_FILENO, O_WRONLY);
  for (std::size_t i = 0; i < copies.size(); ++i)
    posix_spawn_file_actions_adddup2(&actions, copies[i], 3 + static_cast<int>(i));
  posix_spawn_file_actions_addclosefrom_np(&actions, 3 + static_cast<int>(copies.size()));
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Signals apiary ignores (SIGPIPE) or handles stay as a child expects them: default.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (r.own_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  std::vector<char*> argv;
  for (const std::string& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  for (int fd : copies)
    if (fd >= 0) close(fd);
  if (rc != 0) {
    pid_ = -1;
    return "cannot run " + r.argv[0] + ": " + std::strerror(rc);
  }
  // Set from here: posix_spawnattr_setschedpolicy() takes only SCHED_OTHER, FIFO and RR.
  // Best effort: the child runs as it would without it.
  if (r.batch) {
    const sched_param priority{};
    (void)sched_setscheduler(pid_, SCHED_BATCH, &priority);
  }
  return std::nullopt;
}

bool child_process::ended() {
  if (exit_) return true;
  if (!started()) return true;
  child_exit e;
  int status = 0;
  const pid_t got = wait4(pid_, &status, WNOHANG, &e.usage);
  if (got == 0 || (got < 0 && errno == EINTR)) return false;
  e.status = got == pid_ ? status : child_exit::lost_status;
  exit_ = e;
  return true;
}

void child_process::signal(int sig) const {
  if (started() && !exit_) kill(pid_, sig);
}

child_exit child_process::wait(std::chrono::milliseconds limit) {
  if (!started()) return {};
  const std::int64_t deadline = core::steady_now_ns() + limit.count() * 1'000'000;
  while (!ended()) {
    if (core::steady_now_ns() >= deadline) {
      kill(pid_, SIGKILL);
      child_exit e;
      int status = 0;
      pid_t got = -1;
      while ((got = wait4(pid_, &status, 0, &e.usage)) < 0 && errno == EINTR) {
      }
      e.status = got == pid_ ? status : child_exit::lost_status;
      e.timed_out = true;
      exit_ = e;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return *exit_;
}

// ---- run_pipeline ----

namespace {

// Reads fd to its end, or until the deadline: whether it reached the end.
bool read_all(int fd, std::string& out, std::int64_t deadline) {
  char buf[65536];
  while (true) {
    const std::int64_t left_ms = (deadline - core::steady_now_ns()) / 1'000'000;
    if (left_ms <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left_ms, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string program_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

pipeline_result run_pipeline(const std::vector<std::vector<std::string>>& stages, std::chrono::milliseconds limit) {
  pipeline_result result;
  const std::int64_t deadline = core::steady_now_ns() + limit.count() * 1'000'000;
  std::vector<child_process> children(stages.size());
  std::vector<child_text> messages(stages.size());
  int in = -1;  // the read end of the pipe from the stage before
  int last_out = -1;
  for (std::size_t i = 0; i < stages.size() && result.error.empty(); ++i) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
      result.error = std::string("cannot make a pipe: ") + std::strerror(errno);
      break;
    }
    spawn_request r{stages[i], in, p[1], messages[i].fd(), {}, false};
    if (auto problem = children[i].start(r)) result.error = *problem;
    close(p[1]);
    if (in >= 0) close(in);
    in = p[0];
  }
  last_out = in;
  if (result.error.empty() && !read_all(last_out, result.out, deadline))
    result.error =
        program_name(stages.back()[0]) + ": no end of its output within " + std::to_string(limit.count() / 1000) + " s";
  if (last_out >= 0) close(last_out);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::int64_t left = std::max<std::int64_t>(0, (deadline - core::steady_now_ns()) / 1'000'000);
    const child_exit e = children[i].wait(std::chrono::milliseconds(left));
    if (!children[i].started() || e.exited_ok() || !result.error.empty()) continue;
    const std::string said = messages[i].last_line();
    result.error = program_name(stages[i][0]) + ": " + e.describe() + (said.empty() ? "" : ": " + said);
  }
  if (!result.error.empty()) result.out.clear();
  return result;
}

}  // namespace apiary::harness
