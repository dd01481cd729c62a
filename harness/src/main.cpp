// apiary: the command. `apiary run [options]` runs one cycle test, prints the summary and
// writes the JSON report; see harness/include/apiary/harness/cli.hpp for the exit status.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "apiary/core/buffer.hpp"
#include "apiary/harness/analysis.hpp"
#include "apiary/harness/cli.hpp"
#include "apiary/harness/context.hpp"
#include "apiary/harness/report.hpp"
#include "apiary/harness/run.hpp"
#include "apiary/harness/summary.hpp"

namespace {

using namespace apiary::harness;

int run_command(int argc, const char* const* argv) {
  const command cmd = parse_command_line(argc, argv);
  if (!cmd.run) return cmd.status;
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
