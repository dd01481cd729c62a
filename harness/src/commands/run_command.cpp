#include "commands/run_command.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <vector>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/config/config_file.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/report/analysis.hpp"
#include "commands/command_support.hpp"
#include "cycle/observers.hpp"
#include "cycle/profile.hpp"
#include "cycle/progress.hpp"
#include "cycle/run.hpp"
#include "cycle/signals.hpp"
#include "report/report.hpp"
#include "report/summary.hpp"

namespace apiary::harness {

namespace {

int exit_status_of(const run_result& r) {
  if (r.status == run_status::failed) return exit_failed;
  if (r.status != run_status::interrupted) return exit_ok;
  if (r.signal == SIGTERM) return exit_sigterm;
  if (r.signal == SIGHUP) return exit_sighup;
  return exit_sigint;
}

// --profile DIR: the tools there, DIR a directory that can be written; the error line.
std::optional<std::string> profile_usable(const std::string& dir) {
  if (auto problem = profiler::check_tools()) return "--profile " + shown_path(dir) + ": " + *problem;
  if (auto problem = profiler::check_directory(dir)) return "--profile: " + *problem;
  return std::nullopt;
}

}  // namespace

bool run_command::parsed() const { return app_->parsed(); }

void run_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "run",
      "Run the cycle test: producer threads build and sign transactions, the writer fills and applies blocks; "
      "prints a summary and writes a JSON report");
  app_->footer(exit_help);
  app_->add_option("--config", config_.config_file,
                   "Read options from this TOML file (keys are the option names: blocks = 100); the command line "
                   "overrides it (default: none, the built-in defaults, equal to configs/default.toml)")
      ->type_name("FILE")
      ->check(path_check());
  options_ = std::make_unique<option_binder>(*app_, scope_run);
  bind_run_options(*options_, config_);
  app_->add_flag("--print-config", print_config_,
                 "Print the effective options as a config file and exit (default: off)");
  app_->add_option("--fail-at-block", config_.fail_at_block, "Testing: fail the run at this block")->group("");
}

std::optional<std::string> run_command::finish_parsing() {
  if (!config_.config_file.empty()) {
    if (std::string problem = apply_config_file(*options_, config_.config_file); !problem.empty()) return problem;
    const auto given = options_->given(scope_run);
    if (std::find(given.begin(), given.end(), "name") == given.end())
      config_.name = std::filesystem::path(config_.config_file).stem().string();
  }
  if (auto problem = validate_given(config_, options_->given(scope_run))) return problem;
  resolve(config_);
  return validate(config_);
}

int run_command::run(int argc, const char* const* argv) {
  if (auto problem = finish_parsing()) return usage_error("run", *problem);
  if (print_config_) return print_out("run", to_toml(describe(config_))) ? exit_ok : exit_failed;
  if (auto problem = check_memory(config_, 0)) return usage_error("run", *problem);
  // A refused run leaves no directory its checks made (the report's, --profile's).
  made_directories made;
  run_context ctx = collect_context(argc, argv);
  const std::string path = report_path(config_, ctx);
  const std::string log_file = log_file_for(path);
  const outputs& o = config_.out;
  std::vector<named_path> written{
      {"--report", path},
      {"--dump-transactions", o.dump_transactions},
      {"--dump-blocks", o.dump_blocks},
      {o.log_file.empty() ? "the log file (beside the report)" : "--log-file", log_file, output_use::stream},
      {"--interval-log", o.interval_log, output_use::stream},
      {"--prometheus-textfile", o.prometheus_textfile}};
  if (!o.block_log.empty()) {
    // Two files, the log and its index beside it: no device or FIFO has a "beside".
    if (writes_through(o.block_log))
      return usage_error("run", "--block-log " + shown_path(o.block_log) +
                                    ": a block_log goes to a regular file, with its .artifacts file beside it");
    written.push_back({"--block-log", o.block_log, output_use::binary});
    written.push_back({"--block-log (its .artifacts)", o.block_log + ".artifacts", output_use::binary});
  }
  for (const named_path& dir : {named_path{"--hgrm-dir", o.hgrm_dir}, named_path{"--profile", o.profile_dir}})
    if (auto problem = check_not_a_directory_of(dir, written)) return usage_error("run", *problem);
  if (!o.hgrm_dir.empty())
    for (const auto& [name, stage] : latency_stage_names)
      written.push_back({"--hgrm-dir", hgrm_path(o.hgrm_dir, stage)});
  if (!o.profile_dir.empty()) {
    if (auto problem = profile_usable(o.profile_dir)) return usage_error("run", *problem);
    for (const std::string& file : profiler::output_paths(o.profile_dir)) written.push_back({"--profile", file});
  }
  if (!outputs_usable("run", config_inputs(config_), written)) return exit_usage;
  output_locks locks;
  if (auto problem = locks.take(written)) return usage_error("run", *problem);
  int status = exit_ok;
  std::unique_ptr<core::chain> loaded = load_state("run", config_, sized_chain(config_), ctx.state, status);
  if (status != exit_ok) return status;
  // perf starts before genesis, disabled: the run opens and closes its window.
  std::unique_ptr<profiler> profile;
  if (!o.profile_dir.empty()) {
    profile = std::make_unique<profiler>(o.profile_dir);
    if (auto problem = profile->start())
      return usage_error("run", "--profile " + shown_path(o.profile_dir) + ": " + *problem);
  }
  made.keep();
  run_log log(o.log, log_file);
  return execute(ctx, path, log, log_file, profile.get(), std::move(loaded));
}

std::string run_command::log_file_for(const std::string& report) const {
  const std::string& given = config_.out.log_file;
  if (given == "none") return {};
  if (!given.empty()) return given;
  return writes_through(report) ? std::string() : log_path_for(report);
}

int run_command::execute(const run_context& ctx, const std::string& path, run_log& log, const std::string& log_file,
                         profiler* profile, std::unique_ptr<core::chain> loaded) {
  log->info("apiary {} ({} build, commit {}): {}", ctx.version, ctx.build_type, ctx.commit, ctx.command_line);
  if (!measuring_build(ctx)) log->warn("{}: its times are not the ones to quote", build_caveat(ctx));
  const progress_mode p = config_.out.progress;
  const bool progress = p == progress_mode::on || (p == progress_mode::automatic && isatty(STDERR_FILENO) == 1);
  // A hard exit (a second signal) leaves the report marked aborted.
  const standby_file aborted(path, aborted_report_head(config_, ctx, path));
  interrupt_guard signals(&aborted, &aborted_report_tail);
  run_result r = run_cycle_test(config_, progress, *log, profile, std::move(loaded));
  const analysis a = analyze(config_, ctx, r);
  if (profile != nullptr) {
    // After the measurement: perf stops, and its record becomes the profile's files.
    log->info("profile: writing {}", config_.out.profile_dir);
    r.profile = profile->finish("apiary run '" + config_.name + "', commit " + ctx.commit + ": the measured window",
                                a.window_s);
  }
  log_statistics(*log, r, a);
  log.close();
  r.log_file = log_file;
  r.log_dropped = log.dropped();
  r.log_write_errors = log.write_errors();
  int status = exit_status_of(r);
  if (log.write_errors() != 0) {
    error_line("run", "the log " + (log_file.empty() ? std::string("on stderr") : shown_path(log_file)) +
                          " could not be written (" + std::to_string(log.write_errors()) +
                          " failed writes): " + log.first_write_error());
    if (status == exit_ok) status = exit_failed;
  }
  if (!r.profile.error.empty()) {
    const std::string problem = "--profile " + shown_path(r.profile.dir) + ": " + r.profile.error;
    log.file_only(spdlog::level::err, problem);
    error_line("run", problem);
    if (status == exit_ok) status = exit_failed;
  }
  if (r.status == run_status::failed) {
    // On stderr in the command's own form, in the log file as an error.
    log.file_only(spdlog::level::err, "the run failed: " + r.error);
    error_line("run", "the run failed: " + r.error);
  }
  std::string written = path;
  signals.writing_report();
  try {
    core::out_buffer buf;
    write_report(buf, config_, ctx, r, a, path);
    save_file(path, buf);
  } catch (const std::exception& e) {
    error_line("run", e.what());
    written.clear();
    status = exit_failed;
  }
  if (!print_out("run", format_summary(config_, ctx, r, a, written)) && status == exit_ok) status = exit_failed;
  if (const int sig = signals.signal_while_writing(); sig != 0) return 128 + sig;
  return status;
}

}  // namespace apiary::harness
