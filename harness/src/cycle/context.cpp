#include "apiary/harness/cycle/context.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string_view>
#include <thread>

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/build_commit.hpp"  // generated: APIARY_COMMIT

#ifndef APIARY_BUILD_TYPE
#define APIARY_BUILD_TYPE "unknown"
#endif
#ifndef APIARY_SANITIZER
#define APIARY_SANITIZER ""
#endif
#ifndef APIARY_VERSION
#define APIARY_VERSION "unknown"
#endif

namespace apiary::harness {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string_view v(line);
    v.remove_prefix(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return std::string(v);
  }
  return "unknown";
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string format_time(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  const std::size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

std::int64_t to_ns(const timeval& tv) {
  return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(tv.tv_usec) * 1000;
}

// The first line of a /sys file; "" when it cannot be read.
std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<bool> flag_file(const char* path, const char* on) {
  const std::string v = first_line(path);
  if (v.empty()) return std::nullopt;
  return v == on;
}

}  // namespace

machine_tuning read_machine_tuning() {
  machine_tuning t;
  t.governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  // acpi-cpufreq and amd-pstate say whether boost is on; intel_pstate says whether it is off.
  t.boost = flag_file("/sys/devices/system/cpu/cpufreq/boost", "1");
  if (!t.boost)
    if (const std::optional<bool> no_turbo = flag_file("/sys/devices/system/cpu/intel_pstate/no_turbo", "1"))
      t.boost = !*no_turbo;
  t.smt = flag_file("/sys/devices/system/cpu/smt/active", "1");
  return t;
}

run_context collect_context(int argc, const char* const* argv) {
  run_context c;
  c.cpu_model = cpu_model();
  c.cores = std::max(1u, std::thread::hardware_concurrency());
  c.compiler = compiler();
  c.build_type = APIARY_BUILD_TYPE;
  c.sanitizer = APIARY_SANITIZER;
  c.planted_push_rounds = core::planted_push_rounds();
  c.commit = APIARY_COMMIT;
  c.version = APIARY_VERSION;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) c.hostname = host;
  for (int i = 0; i < argc; ++i) {
    if (i != 0) c.command_line += ' ';
    c.command_line += argv[i];
  }
  c.tuning = read_machine_tuning();
  c.start = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(c.start);
  c.start_time = format_time(t, "%Y-%m-%dT%H:%M:%SZ");
  c.start_compact = format_time(t, "%Y%m%dT%H%M%SZ");
  return c;
}

bool measuring_build(const run_context& c) {
  return c.build_type == "Release" && c.sanitizer.empty() && c.planted_push_rounds == 0;
}

std::string build_caveat(const run_context& c) {
  std::string s = "a " + c.build_type + " build";
  if (!c.sanitizer.empty()) s += " with " + c.sanitizer;
  if (c.planted_push_rounds != 0)
    s += " planting " + std::to_string(c.planted_push_rounds) +
         " rounds of work in every push (APIARY_PLANT_PUSH_ROUNDS)";
  return s;
}

process_usage read_usage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  process_usage u;
  u.user_ns = to_ns(ru.ru_utime);
  u.system_ns = to_ns(ru.ru_stime);
  u.peak_rss_bytes = static_cast<std::int64_t>(ru.ru_maxrss) * 1024;  // Linux: KiB
  u.minor_faults = ru.ru_minflt;
  u.major_faults = ru.ru_majflt;
  return u;
}

machine_usage read_machine_usage() {
  machine_usage m;
  std::ifstream in("/proc/stat");
  std::string cpu;
  std::int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || cpu != "cpu") return m;
  if (!(in >> steal)) steal = 0;
  m.steal_ticks = steal;
  m.busy_ticks = user + nice + system + irq + softirq + steal;
  m.total_ticks = m.busy_ticks + idle + iowait;
  m.valid = true;
  return m;
}

long clock_ticks_per_second() { return sysconf(_SC_CLK_TCK); }

std::int64_t current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  std::int64_t size = 0;
  std::int64_t resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace apiary::harness
