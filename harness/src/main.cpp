// apiary: the command. `apiary run [options]` runs one cycle test, prints the summary and
// writes the JSON report; `apiary workload` saves a seeded workload and `apiary replay`
// pushes one through the writer on one thread. See harness/include/apiary/harness/cli.hpp
// for the exit status.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "apiary/core/buffer.hpp"
#include "apiary/harness/analysis.hpp"
#include "apiary/harness/cli.hpp"
#include "apiary/harness/context.hpp"
#include "apiary/harness/progress.hpp"
#include "apiary/harness/replay.hpp"
#include "apiary/harness/report.hpp"
#include "apiary/harness/run.hpp"
#include "apiary/harness/summary.hpp"

namespace {

using namespace apiary::harness;

// An output path that cannot be written is bad usage, found before anything runs.
bool writable(const char* command_name, const char* option, const std::string& path) {
  if (path.empty()) return true;
  if (auto problem = check_writable(path)) {
    std::fprintf(stderr, "apiary %s: %s: %s\n", command_name, option, problem->c_str());
    return false;
  }
  return true;
}

int workload_command(const command& cmd) {
  if (!writable("workload", "--out", cmd.workload_out)) return exit_usage;
  const saved_workload w = generate_saved_workload(cmd.config, cmd.transactions);
  save_workload(cmd.workload_out, w);
  std::printf("apiary workload: %s transactions (seed %llu, %u streams, %s accounts, %s) saved to %s\n",
              grouped(w.transactions.size()).c_str(), static_cast<unsigned long long>(w.meta.seed), w.meta.streams,
              grouped(w.meta.accounts).c_str(), w.meta.sign ? "signed" : "unsigned", cmd.workload_out.c_str());
  return exit_ok;
}

int replay_command(int argc, const char* const* argv, const command& cmd) {
  if (!writable("replay", "--report", cmd.replay_report) || !writable("replay", "--save-workload", cmd.save_workload))
    return exit_usage;
  saved_workload w;
  if (!cmd.workload_in.empty()) {
    try {
      w = load_workload(cmd.workload_in);
    } catch (const workload_error& e) {
      std::fprintf(stderr, "apiary replay: %s\n", e.what());
      return exit_usage;
    }
  } else {
    w = generate_saved_workload(cmd.config, cmd.transactions);
    if (!cmd.save_workload.empty()) save_workload(cmd.save_workload, w);
  }
  const run_context ctx = collect_context(argc, argv);
  const replay_result r = replay_workload(cmd.config, w);
  int status = r.error.empty() ? exit_ok : exit_failed;
  if (!cmd.replay_report.empty()) {
    apiary::core::out_buffer buf;
    write_replay_report(buf, cmd.config, ctx, w.meta, cmd.workload_in.empty() ? "generated" : cmd.workload_in, r);
    try {
      save_file(cmd.replay_report, buf);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "apiary replay: %s\n", e.what());
      status = exit_failed;
    }
  }
  std::fputs(format_replay_summary(ctx, w.meta, r).c_str(), stdout);
  std::fflush(stdout);
  return status;
}

int run_command(int argc, const char* const* argv) {
  const command cmd = parse_command_line(argc, argv);
  if (!cmd.run) return cmd.status;
  if (cmd.which == subcommand::workload) return workload_command(cmd);
  if (cmd.which == subcommand::replay) return replay_command(argc, argv, cmd);
  const run_config& c = cmd.config;
  if (cmd.print_config) {
    std::fputs(config_to_toml(c).c_str(), stdout);
    return exit_ok;
  }

  const run_context ctx = collect_context(argc, argv);
  const std::string path = report_path(c, ctx);
  struct output {
    const char* option;
    const std::string& path;
  };
  for (const output& o : {output{"--report", path}, output{"--dump-transactions", c.dump_transactions},
                          output{"--dump-blocks", c.dump_blocks}}) {
    if (o.path.empty()) continue;
    if (auto problem = check_writable(o.path)) {
      std::fprintf(stderr, "apiary run: %s: %s\n", o.option, problem->c_str());
      return exit_usage;
    }
  }

  const bool progress = c.progress == progress_mode::on || (c.progress == progress_mode::automatic && isatty(STDERR_FILENO) == 1);
  const run_result r = run_cycle_test(c, ctx, progress);
  const analysis a = analyze(c, ctx, r);

  int status = exit_ok;
  if (r.status == run_status::failed) status = exit_failed;
  if (r.status == run_status::interrupted) status = r.signal == SIGTERM ? exit_sigterm : exit_sigint;

  std::string written = path;
  try {
    apiary::core::out_buffer buf;
    write_report(buf, c, ctx, r, a, path);
    save_file(path, buf);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary run: %s\n", e.what());
    written.clear();
    status = exit_failed;
  }
  std::fputs(format_summary(c, ctx, r, a, written).c_str(), stdout);
  std::fflush(stdout);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_command(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary: %s\n", e.what());
    return exit_failed;
  }
}
