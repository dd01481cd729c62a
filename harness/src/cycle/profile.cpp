#include "cycle/profile.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "apiary/core/base/clock.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view perf_program = "perf";
constexpr std::string_view collapse_program = "inferno-collapse-perf";
constexpr std::string_view flamegraph_program = "inferno-flamegraph";
// The profile's files whose names are known before the run (threads/ holds the rest).
constexpr std::string_view profile_files[] = {"perf.data", "window.folded", "flamegraph.svg", "top.tsv"};
// How many functions the report and the summary take from the top.
constexpr std::size_t report_top = 20;

// perf attaches within a second here; a machine swapping hard may take longer.
constexpr std::chrono::seconds perf_start_limit(30);
// Writing perf.data and its build ids, or reading it back, takes seconds per GiB.
constexpr std::chrono::minutes perf_end_limit(10);

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

// kernel.perf_event_paranoid above 2 (Debian's default is 3) lets only root, or a process
// with CAP_PERFMON, record; -1 when it cannot be read.
int perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = -1;
  in >> level;
  return in ? level : -1;
}

// Waits for perf's "ack" on `fd` (perf answers each control command once it has done it):
// nullopt, or why not.
std::optional<std::string> await_ack(int fd, child_process& perf, std::chrono::milliseconds limit) {
  const std::int64_t deadline = core::steady_now_ns() + limit.count() * 1'000'000;
  std::string got;
  while (got.find('\n') == std::string::npos) {
    if (perf.ended()) return "perf record ended before it recorded";
    if (core::steady_now_ns() >= deadline)
      return "perf record did not start within " + std::to_string(limit.count() / 1000) + " s";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[64];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    if (n == 0) return "perf record closed its control pipe";
  }
  return std::nullopt;
}

void write_text(const std::string& path, const std::string& text) {
  output_file f(path);
  f.write(text.data(), text.size());
  f.commit();
}

}  // namespace

std::optional<std::string> profiler::check_tools() {
  std::vector<std::string> missing;
  for (std::string_view name : {perf_program, collapse_program, flamegraph_program})
    if (find_program(name).empty()) missing.emplace_back(name);
  if (!missing.empty()) {
    const std::string where =
        tools_directory().empty() ? std::string("PATH") : "PATH and " + std::string(tools_directory());
    return joined(missing) + (missing.size() == 1 ? " is" : " are") + " not installed (looked in " + where +
           "); scripts/install-deps.sh installs perf (Debian's linux-perf) and inferno's flame graph tools";
  }
  if (geteuid() != 0 && perf_event_paranoid() > 2)
    return "kernel.perf_event_paranoid is " + std::to_string(perf_event_paranoid()) +
           ": only root may record with perf here; run as root, or set it to 2 (sysctl "
           "kernel.perf_event_paranoid=2)";
  return std::nullopt;
}

std::optional<std::string> profiler::check_directory(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return shown_path(dir) + ": not a directory (the profile is a directory of files)";
  if (const std::error_code ec = make_directories(dir))
    return "cannot create the directory " + shown_path(dir) + ": " + ec.message();
  // A file of our own there, to see that the profile's files can be written.
  const std::string probe = (fs::path(dir) / (".apiary-probe-" + std::to_string(getpid()))).string();
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot write in " + shown_path(dir) + ": " + std::strerror(errno);
  close(fd);
  unlink(probe.c_str());
  return std::nullopt;
}

std::vector<std::string> profiler::output_paths(const std::string& dir) {
  std::vector<std::string> out;
  for (std::string_view name : profile_files) out.push_back((fs::path(dir) / name).string());
  return out;
}

profiler::profiler(std::string dir) : dir_(std::move(dir)) {}

profiler::~profiler() {
  if (perf_.started() && !perf_.ended()) {
    perf_.signal(SIGINT);
    perf_.wait(perf_end_limit);
  }
  if (control_ >= 0) close(control_);
  if (ack_ >= 0) close(ack_);
}

std::string profiler::path(std::string_view name) const { return (fs::path(dir_) / name).string(); }

std::optional<std::string> profiler::start() {
  // perf would keep an earlier perf.data as perf.data.old.
  std::error_code ec;
  fs::remove(path("perf.data"), ec);
  int control[2];
  int ack[2];
  if (pipe2(control, O_CLOEXEC) != 0) return std::string("cannot make a pipe: ") + std::strerror(errno);
  if (pipe2(ack, O_CLOEXEC) != 0) {
    close(control[0]);
    close(control[1]);
    return std::string("cannot make a pipe: ") + std::strerror(errno);
  }
  // The window's edges never wait for perf: a full pipe (it cannot be: two commands) would
  // fail the write, not block the writer.
  fcntl(control[1], F_SETFL, fcntl(control[1], F_GETFL) | O_NONBLOCK);
  control_ = control[1];
  ack_ = ack[0];
  const std::vector<std::string> argv{find_program(perf_program),
                                      "record",
                                      "-p",
                                      std::to_string(getpid()),
                                      "-e",
                                      "cpu-clock",
                                      "-F",
                                      std::to_string(frequency_hz),
                                      "--call-graph",
                                      "dwarf",
                                      "-D",
                                      "-1",
                                      "--control",
                                      "fd:3,4",
                                      "-N",  // no copies of the binaries in ~/.debug
                                      "-o",
                                      path("perf.data")};
  // SCHED_BATCH: the window's edges wake perf without handing it the writer's CPU, and so do
  // the samples it drains during the window.
  auto problem = perf_.start({argv, -1, perf_messages_.fd(), perf_messages_.fd(), {control[0], ack[1]}, true, true});
  close(control[0]);
  close(ack[1]);
  if (problem) return problem;
  {
    core::lock_guard lock(mutex_);
    send("ping\n");
    if (!control_error_.empty()) return control_error_;
    // The cost counts the window's edges only.
    control_writes_ = 0;
    control_ns_ = 0;
  }
  if (auto late = await_ack(ack_, perf_, perf_start_limit)) {
    const std::string said = perf_messages_.last_line();
    return *late + (said.empty() ? "" : ": " + said);
  }
  // DIR holds one run's profile: nothing of an earlier one stays beside it.
  for (std::string_view name : profile_files)
    if (name != "perf.data") fs::remove(path(name), ec);
  if (fs::is_directory(path("threads"), ec))
    for (const fs::directory_entry& e : fs::directory_iterator(path("threads"), ec))
      if (e.path().extension() == ".folded") fs::remove(e.path(), ec);
  return std::nullopt;
}

void profiler::send(std::string_view command) {
  const std::int64_t t0 = core::steady_now_ns();
  const ssize_t n = write(control_, command.data(), command.size());
  const int err = errno;
  control_ns_ += core::steady_now_ns() - t0;
  ++control_writes_;
  if (n != static_cast<ssize_t>(command.size()) && control_error_.empty())
    control_error_ = "cannot tell perf record to " + std::string(command.substr(0, command.size() - 1)) + ": " +
                     (n < 0 ? std::strerror(err) : "a short write");
}

void profiler::open_window() noexcept {
  core::lock_guard lock(mutex_);
  if (window_ != window_state::before) return;
  send("enable\n");
  window_ = window_state::open;
  opened_ = true;
}

void profiler::close_window() noexcept {
  core::lock_guard lock(mutex_);
  if (window_ == window_state::open) send("disable\n");
  window_ = window_state::closed;
}

void profiler::name_threads() {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc/self/task", ec)) {
    const std::string id = e.path().filename().string();
    std::ifstream in(e.path() / "comm");
    std::string name;
    if (!std::getline(in, name) || id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit)) continue;
    thread_names_[std::stoi(id)] = name;
  }
}

void profiler::stop_perf(profile_result& r) {
  if (!perf_.started()) return;
  if (!perf_.ended()) perf_.signal(SIGINT);  // perf writes perf.data out and ends
  const child_exit e = perf_.wait(perf_end_limit);
  r.perf_user_ns = e.usage.ru_utime.tv_sec * 1'000'000'000LL + e.usage.ru_utime.tv_usec * 1000LL;
  r.perf_system_ns = e.usage.ru_stime.tv_sec * 1'000'000'000LL + e.usage.ru_stime.tv_usec * 1000LL;
  if (!e.exited_ok() && !e.killed_by(SIGINT) && r.error.empty()) {
    const std::string said = perf_messages_.last_line();
    r.error = "perf record: " + e.describe() + (said.empty() ? "" : ": " + said);
  }
  std::error_code ec;
  const auto size = fs::file_size(path("perf.data"), ec);
  r.data_bytes = ec ? 0 : size;
}

void profiler::write_profile(profile_result& r, const std::string& title, double window_s) {
  window_stacks w;
  if (r.window_opened) {
    const pipeline_result p = run_pipeline({{find_program(perf_program), "script", "-i", path("perf.data"),
                                             "--no-inline", "-F", "comm,pid,tid,time,event,ip,sym,dso"},
                                            {find_program(collapse_program), "--tid"}},
                                           perf_end_limit);
    if (!p.error.empty()) {
      r.error = "perf script | inferno-collapse-perf: " + p.error;
      return;
    }
    w = stacks_by_thread(p.out, thread_names_, getpid());
    if (w.samples == 0 && window_s >= 1.0)
      r.error = "perf recorded no samples in the measured window (" + std::to_string(window_s) + " s)";
  }
  r.samples = w.samples;
  r.threads.assign(w.thread_samples.begin(), w.thread_samples.end());
  std::stable_sort(r.threads.begin(), r.threads.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const std::vector<function_samples> functions = functions_by_self(w);
  r.top.assign(functions.begin(),
               functions.begin() + static_cast<std::ptrdiff_t>(std::min(report_top, functions.size())));
  try {
    write_text(path("window.folded"), folded_text(w));
    write_text(path("top.tsv"), top_tsv(functions, w.samples));
    std::error_code ec;
    fs::create_directories(path("threads"), ec);
    if (ec) throw std::runtime_error("cannot create " + shown_path(path("threads")) + ": " + ec.message());
    for (const auto& [thread, samples] : r.threads)
      write_text((fs::path(path("threads")) / (thread_file_name(thread) + ".folded")).string(),
                 thread_folded_text(w, thread));
    if (w.samples == 0) return;  // nothing to draw (inferno-flamegraph refuses an empty input)
    const pipeline_result svg =
        run_pipeline({{find_program(flamegraph_program), "--title", title, "--subtitle",
                       grouped(w.samples) + " samples of every thread at " + std::to_string(frequency_hz) +
                           " Hz; a frame's width is its share of them",
                       path("window.folded")}},
                     perf_end_limit);
    if (!svg.error.empty()) throw std::runtime_error(svg.error);
    write_text(path("flamegraph.svg"), svg.out);
  } catch (const std::exception& e) {
    if (r.error.empty()) r.error = e.what();
  }
}

profile_result profiler::finish(const std::string& title, double window_s) {
  profile_result r;
  r.dir = dir_;
  r.frequency_hz = frequency_hz;
  const std::int64_t t0 = core::steady_now_ns();
  close_window();
  {
    core::lock_guard lock(mutex_);
    r.window_opened = opened_;
    r.control_writes = control_writes_;
    r.control_ns = control_ns_;
    r.error = control_error_;
  }
  try {
    stop_perf(r);
    if (r.error.empty()) write_profile(r, title, window_s);
  } catch (const std::exception& e) {
    if (r.error.empty()) r.error = e.what();
  }
  r.postprocess_ns = core::steady_now_ns() - t0;
  return r;
}

}  // namespace apiary::harness
