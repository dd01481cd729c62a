#include "apiary/harness/cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>

#include "apiary/core/buffer.hpp"
#include "apiary/harness/analysis.hpp"
#include "apiary/harness/context.hpp"
#include "apiary/harness/progress.hpp"
#include "apiary/harness/replay.hpp"
#include "apiary/harness/report.hpp"
#include "apiary/harness/run.hpp"
#include "apiary/harness/run_log.hpp"
#include "apiary/harness/summary.hpp"

namespace apiary::harness {

namespace {

constexpr const char* exit_help =
    "Exit status: 0 the run completed; 1 the run failed (the report says why) or the report could not be written; "
    "2 bad command line, config file or output path (nothing ran); 130 interrupted by SIGINT, 143 by SIGTERM "
    "(the report is marked \"interrupted\": true).";

// Prints the one error line; returns the usage exit status.
int usage_error(std::string_view command, const std::string& problem) {
  std::fprintf(stderr, "apiary %.*s: %s\n", static_cast<int>(command.size()), command.data(), problem.c_str());
  return exit_usage;
}

// An output path that cannot be written is bad usage, found before anything runs.
bool writable(std::string_view command, const char* option, const std::string& path) {
  if (path.empty()) return true;
  if (auto problem = check_writable(path)) {
    usage_error(command, std::string(option) + ": " + *problem);
    return false;
  }
  return true;
}

// ---- apiary run ---------------------------------------------------------------------------

struct run_command {
  run_config config;
  bool print_config = false;
  CLI::App* app = nullptr;
  std::unique_ptr<option_binder> options;

  void setup(CLI::App& parent) {
    app = parent.add_subcommand(
        "run",
        "Run the cycle test: producer threads build and sign transactions, the writer fills and applies blocks; "
        "prints a summary and writes a JSON report");
    app->footer(exit_help);
    app->add_option("--config", config.config_file,
                    "Read options from this TOML file (keys are the option names: blocks = 100); the command line "
                    "overrides it (default: none, the built-in defaults, equal to configs/default.toml)")
        ->type_name("FILE");
    options = std::make_unique<option_binder>(*app, scope_run);
    bind_run_options(*options, config);
    app->add_flag("--print-config", print_config,
                  "Print the effective options as a config file and exit (default: off)");
    app->add_option("--fail-at-block", config.fail_at_block, "Testing: fail the run at this block")->group("");
  }

  // After parsing: the name from the config file, then the derived fields and the checks.
  std::optional<std::string> finish_parsing() {
    if (!config.config_file.empty()) {
      if (std::string problem = apply_config_file(*app, config.config_file); !problem.empty()) return problem;
      const auto given = options->given(scope_run);
      if (std::find(given.begin(), given.end(), "name") == given.end())
        config.name = std::filesystem::path(config.config_file).stem().string();
    }
    resolve(config);
    return validate(config);
  }

  int run(int argc, const char* const* argv) {
    if (auto problem = finish_parsing()) return usage_error("run", *problem);
    if (print_config) {
      std::fputs(to_toml(describe(config)).c_str(), stdout);
      return exit_ok;
    }
    const run_context ctx = collect_context(argc, argv);
    const std::string path = report_path(config, ctx);
    const outputs& o = config.out;
    const std::string log_file = o.log_file == "none" ? "" : o.log_file.empty() ? log_path_for(path) : o.log_file;
    if (!writable("run", "--report", path) || !writable("run", "--dump-transactions", o.dump_transactions) ||
        !writable("run", "--dump-blocks", o.dump_blocks) || !writable("run", "--log-file", log_file))
      return exit_usage;
    if (log_file == path) return usage_error("run", "--log-file " + log_file + ": the same file as the report");
    run_log log(o.log, log_file);
    return execute(ctx, path, log, log_file);
  }

  int execute(const run_context& ctx, const std::string& path, run_log& log, const std::string& log_file) {
    log->info("apiary {} ({} build, commit {}): {}", ctx.version, ctx.build_type, ctx.commit, ctx.command_line);
    if (!measuring_build(ctx))
      log->warn("a {} build{}: its times are not the ones to quote", ctx.build_type,
                ctx.sanitizer.empty() ? "" : " with " + ctx.sanitizer);
    const progress_mode p = config.out.progress;
    const bool progress = p == progress_mode::on || (p == progress_mode::automatic && isatty(STDERR_FILENO) == 1);
    run_result r = run_cycle_test(config, ctx, progress, *log);
    const analysis a = analyze(config, ctx, r);
    log_statistics(*log, r, a);
    if (r.status == run_status::failed) log->error("the run failed: {}", r.error);
    log.close();
    r.log_file = log_file;
    r.log_dropped = log.dropped();

    int status = exit_ok;
    if (r.status == run_status::failed) status = exit_failed;
    if (r.status == run_status::interrupted) status = r.signal == SIGTERM ? exit_sigterm : exit_sigint;
    std::string written = path;
    try {
      core::out_buffer buf;
      write_report(buf, config, ctx, r, a, path);
      save_file(path, buf);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "apiary run: %s\n", e.what());
      written.clear();
      status = exit_failed;
    }
    std::fputs(format_summary(config, ctx, r, a, written).c_str(), stdout);
    std::fflush(stdout);
    return status;
  }
};

// ---- apiary workload and apiary replay --------------------------------------------------------

std::string transactions_help(std::uint64_t transactions) {
  return "Normal transactions to generate, taking turns between the --threads streams; --faults companions come "
         "on top (default: " +
         std::to_string(transactions) + ")";
}

struct workload_command {
  run_config config;
  std::uint64_t transactions = 20'000;
  std::string out;
  CLI::App* app = nullptr;
  std::unique_ptr<option_binder> options;

  void setup(CLI::App& parent) {
    app = parent.add_subcommand(
        "workload",
        "Generate a seeded workload once (single-threaded order, signatures on every core) and save it for "
        "`apiary replay --workload`; the same options give the same file");
    app->footer("Exit status: 0 saved; 1 generation or the file failed; 2 bad command line (nothing written).");
    app->add_option("--out", out, "Where the workload goes (required)")->type_name("FILE")->required();
    app->add_option("--transactions", transactions, transactions_help(transactions))
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    config.chain.genesis_accounts = replay_default_accounts;
    options = std::make_unique<option_binder>(*app, scope_workload);
    bind_run_options(*options, config);
  }

  int run() {
    resolve(config);
    if (auto problem = validate(config)) return usage_error("workload", *problem);
    if (!writable("workload", "--out", out)) return exit_usage;
    const saved_workload w = generate_saved_workload(config, transactions);
    save_workload(out, w);
    std::printf("apiary workload: %s transactions (seed %llu, %u streams, %s accounts, %s) saved to %s\n",
                grouped(w.transactions.size()).c_str(), static_cast<unsigned long long>(w.meta.seed),
                w.meta.streams, grouped(w.meta.accounts).c_str(), w.meta.sign ? "signed" : "unsigned", out.c_str());
    return exit_ok;
  }
};

struct replay_command {
  run_config config;
  std::uint64_t transactions = 20'000;
  std::string workload_in;    // the saved workload (empty: generate one)
  std::string save_workload;  // also save the generated workload here
  std::string report;         // the JSON result (empty: none)
  CLI::App* app = nullptr;
  std::unique_ptr<option_binder> options;

  void setup(CLI::App& parent) {
    app = parent.add_subcommand(
        "replay",
        "Push a workload through the writer and the core on one thread, with no other thread running: the same "
        "binary, workload and options execute the same instructions every time (the CI performance gate counts "
        "them with callgrind); prints a summary");
    app->footer(
        "The measured part is the function apiary_replay_measured: valgrind --tool=callgrind --collect-atstart=no "
        "--toggle-collect=apiary_replay_measured counts only it.\n"
        "Exit status: 0 replayed; 1 the replay or an output failed; 2 bad command line, workload file or output "
        "path.");
    app->add_option("--workload", workload_in,
                    "A workload saved by `apiary workload` (default: none, generate one from --seed, --threads, "
                    "--accounts, --sign, --mix, --faults and --transactions first)")
        ->type_name("FILE");
    app->add_option("--transactions", transactions, transactions_help(transactions) + "; without --workload only")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    app->add_option("--save-workload", save_workload, "Also save the generated workload here (default: none)")
        ->type_name("FILE");
    app->add_option("--report", report, "Write the result as JSON here (default: none)")->type_name("PATH");
    config.chain.genesis_accounts = replay_default_accounts;
    options = std::make_unique<option_binder>(*app, scope_replay);
    bind_run_options(*options, config);
  }

  std::optional<std::string> check_options() {
    if (!workload_in.empty()) {
      for (const std::string& generation : options->given(scope_workload))
        return "--" + generation + ": the workload was generated already (--workload " + workload_in +
               "); drop one of the two";
      if (app->count("--transactions") > 0 || !save_workload.empty())
        return std::string(
            "--transactions and --save-workload only apply when the replay generates its workload (without "
            "--workload)");
    }
    resolve(config);
    return validate(config);
  }

  int run(int argc, const char* const* argv) {
    if (auto problem = check_options()) return usage_error("replay", *problem);
    if (!writable("replay", "--report", report) || !writable("replay", "--save-workload", save_workload))
      return exit_usage;
    saved_workload w;
    if (!workload_in.empty()) {
      try {
        w = load_workload(workload_in);
      } catch (const workload_error& e) {
        return usage_error("replay", e.what());
      }
    } else {
      w = generate_saved_workload(config, transactions);
      if (!save_workload.empty()) harness::save_workload(save_workload, w);
    }
    const run_context ctx = collect_context(argc, argv);
    const replay_result r = replay_workload(config, w);
    int status = r.error.empty() ? exit_ok : exit_failed;
    if (!report.empty()) {
      core::out_buffer buf;
      write_replay_report(buf, config, ctx, w.meta, workload_in.empty() ? "generated" : workload_in, r);
      try {
        save_file(report, buf);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "apiary replay: %s\n", e.what());
        status = exit_failed;
      }
    }
    std::fputs(format_replay_summary(ctx, w.meta, r).c_str(), stdout);
    std::fflush(stdout);
    return status;
  }
};

}  // namespace

int run_apiary(int argc, const char* const* argv) {
  CLI::App app("apiary: Hive's colony + queen full-block-cycle test for a node core", "apiary");
  app.require_subcommand(1, 1);
  app.footer(exit_help);
  run_command run;
  workload_command workload;
  replay_command replay;
  run.setup(app);
  workload.setup(app);
  replay.setup(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {
    const auto parsed = app.get_subcommands();
    return usage_error(parsed.empty() ? "" : parsed.front()->get_name(), e.what());
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "apiary: %s (apiary --help lists the commands, apiary COMMAND --help their options)\n",
                 e.what());
    return exit_usage;
  }
  if (workload.app->parsed()) return workload.run();
  if (replay.app->parsed()) return replay.run(argc, argv);
  return run.run(argc, argv);
}

}  // namespace apiary::harness
