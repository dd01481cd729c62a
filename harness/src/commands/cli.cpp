#include "commands/cli.hpp"

#include <unistd.h>

#include <spdlog/fmt/fmt.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <vector>

#include "apiary/core/base/clock.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/config/config_file.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/config/rc_params_file.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/run_log.hpp"
#include "apiary/harness/io/state_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/replay.hpp"
#include "apiary/harness/replay/snapshot.hpp"
#include "apiary/harness/report/analysis.hpp"
#include "commands/parse_errors.hpp"
#include "cycle/observers.hpp"
#include "cycle/profile.hpp"
#include "cycle/progress.hpp"
#include "cycle/run.hpp"
#include "cycle/signals.hpp"
#include "report/report.hpp"
#include "report/summary.hpp"

namespace apiary::harness {

namespace {

constexpr const char* exit_help =
    "Exit status: 0 the run completed; 1 the run failed (the report says why), or the report or the summary "
    "could not be written; 2 bad command line, config file or output path (nothing ran); 129 interrupted by "
    "SIGHUP (the terminal closed), 130 by SIGINT, 143 by SIGTERM (the report is marked \"interrupted\": true).";

// Prints the one error line: "apiary COMMAND: problem", the problem on one short line.
void error_line(std::string_view command, const std::string& problem) {
  std::fprintf(stderr, "apiary%s%.*s: %s\n", command.empty() ? "" : " ", static_cast<int>(command.size()),
               command.data(), one_line(problem).c_str());
}

// Prints the one error line; returns the usage exit status.
int usage_error(std::string_view command, const std::string& problem) {
  error_line(command, problem);
  return exit_usage;
}

// An output path that cannot be written is bad usage, found before anything runs.
bool writable(std::string_view command, const named_path& out) {
  if (out.path.empty()) return true;
  if (auto problem = check_output(out.path, out.use)) {
    usage_error(command, out.option + ": " + *problem);
    return false;
  }
  return true;
}

// Every output distinct from the inputs and from each other, then each one writable.
bool outputs_usable(std::string_view command, const std::vector<named_path>& inputs,
                    const std::vector<named_path>& outputs) {
  if (auto problem = check_distinct(inputs, outputs)) {
    usage_error(command, *problem);
    return false;
  }
  for (const named_path& out : outputs)
    if (!writable(command, out)) return false;
  return true;
}

// Writes a command's output on stdout; a failure (a full disk, a closed pipe) is an error
// line, and false.
bool print_out(std::string_view command, const std::string& text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (ok) return true;
  error_line(command, std::string("cannot write to stdout: ") + std::strerror(errno == 0 ? EIO : errno));
  std::clearerr(stdout);
  return false;
}

int exit_status_of(const run_result& r) {
  if (r.status == run_status::failed) return exit_failed;
  if (r.status != run_status::interrupted) return exit_ok;
  if (r.signal == SIGTERM) return exit_sigterm;
  if (r.signal == SIGHUP) return exit_sighup;
  return exit_sigint;
}

// --state FILE: the chain it holds, with `options`, and where it came from in `source`; null
// for the genesis (no --state). A file that cannot be used is bad usage: its error line, and
// `status` set. The state takes about four times its file in memory.
std::unique_ptr<core::chain> load_state(std::string_view command, const std::string& path,
                                        const core::chain_options& options, state_source& source, int& status) {
  if (path.empty()) return nullptr;
  try {
    return load_state_file(path, options, available_memory() / 4, source);
  } catch (const state_file_error& e) {
    status = usage_error(command, e.what());
    return nullptr;
  }
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
    if (auto problem = validate_given(config, options->given(scope_run))) return problem;
    resolve(config);
    return validate(config);
  }

  int run(int argc, const char* const* argv) {
    if (auto problem = finish_parsing()) return usage_error("run", *problem);
    if (print_config) return print_out("run", to_toml(describe(config))) ? exit_ok : exit_failed;
    if (auto problem = check_memory(config, 0)) return usage_error("run", *problem);
    run_context ctx = collect_context(argc, argv);
    const std::string path = report_path(config, ctx);
    const std::string log_file = log_file_for(path);
    const outputs& o = config.out;
    std::vector<named_path> written{
        {"--report", path},
        {"--dump-transactions", o.dump_transactions},
        {"--dump-blocks", o.dump_blocks},
        {o.log_file.empty() ? "the log file (beside the report)" : "--log-file", log_file, output_use::stream},
        {"--interval-log", o.interval_log, output_use::stream},
        {"--prometheus-textfile", o.prometheus_textfile}};
    for (const named_path& dir : {named_path{"--hgrm-dir", o.hgrm_dir}, named_path{"--profile", o.profile_dir}})
      if (auto problem = check_not_a_directory_of(dir, written)) return usage_error("run", *problem);
    if (!o.hgrm_dir.empty())
      for (const auto& [name, stage] : latency_stage_names)
        written.push_back({"--hgrm-dir", hgrm_path(o.hgrm_dir, stage)});
    if (!o.profile_dir.empty()) {
      if (auto problem = profile_usable(o.profile_dir)) return usage_error("run", *problem);
      for (const std::string& file : profiler::output_paths(o.profile_dir)) written.push_back({"--profile", file});
    }
    if (!outputs_usable("run", {{"--config", config.config_file}, {"--state", config.state}}, written))
      return exit_usage;
    output_locks locks;
    if (auto problem = locks.take(written)) return usage_error("run", *problem);
    int status = exit_ok;
    std::unique_ptr<core::chain> loaded = load_state("run", config.state, sized_chain(config), ctx.state, status);
    if (status != exit_ok) return status;
    // perf starts before genesis, disabled: the run opens and closes its window.
    std::unique_ptr<profiler> profile;
    if (!o.profile_dir.empty()) {
      profile = std::make_unique<profiler>(o.profile_dir);
      if (auto problem = profile->start())
        return usage_error("run", "--profile " + shown_path(o.profile_dir) + ": " + *problem);
    }
    run_log log(o.log, log_file);
    return execute(ctx, path, log, log_file, profile.get(), std::move(loaded));
  }

  // --profile DIR: the tools there, DIR a directory that can be written; the error line.
  static std::optional<std::string> profile_usable(const std::string& dir) {
    if (auto problem = profiler::check_tools()) return "--profile " + shown_path(dir) + ": " + *problem;
    if (auto problem = profiler::check_directory(dir)) return "--profile: " + *problem;
    return std::nullopt;
  }

  // --log-file, else none for a report written through a device or a FIFO (there is no
  // "beside" it), else beside the report.
  std::string log_file_for(const std::string& report) const {
    const std::string& given = config.out.log_file;
    if (given == "none") return {};
    if (!given.empty()) return given;
    return writes_through(report) ? std::string() : log_path_for(report);
  }

  int execute(const run_context& ctx, const std::string& path, run_log& log, const std::string& log_file,
              profiler* profile, std::unique_ptr<core::chain> loaded) {
    log->info("apiary {} ({} build, commit {}): {}", ctx.version, ctx.build_type, ctx.commit, ctx.command_line);
    if (!measuring_build(ctx))
      log->warn("a {} build{}: its times are not the ones to quote", ctx.build_type,
                ctx.sanitizer.empty() ? "" : " with " + ctx.sanitizer);
    const progress_mode p = config.out.progress;
    const bool progress = p == progress_mode::on || (p == progress_mode::automatic && isatty(STDERR_FILENO) == 1);
    // A hard exit (a second signal) leaves the report marked aborted.
    const standby_file aborted(path, aborted_report_head(config, ctx, path));
    interrupt_guard signals(&aborted, &aborted_report_tail);
    run_result r = run_cycle_test(config, progress, *log, profile, std::move(loaded));
    const analysis a = analyze(config, ctx, r);
    if (profile != nullptr) {
      // After the measurement: perf stops, and its record becomes the profile's files.
      log->info("profile: writing {}", config.out.profile_dir);
      r.profile = profile->finish("apiary run '" + config.name + "', commit " + ctx.commit + ": the measured window",
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
      write_report(buf, config, ctx, r, a, path);
      save_file(path, buf);
    } catch (const std::exception& e) {
      error_line("run", e.what());
      written.clear();
      status = exit_failed;
    }
    if (!print_out("run", format_summary(config, ctx, r, a, written)) && status == exit_ok) status = exit_failed;
    if (const int sig = signals.signal_while_writing(); sig != 0) return 128 + sig;
    return status;
  }
};

// ---- apiary workload and apiary replay --------------------------------------------------------

// A generous bound; the memory check (memory_budget.hpp) usually says no long before it.
constexpr std::uint64_t most_workload_transactions = 1'000'000'000;

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
    app->footer(
        "Exit status: 0 saved; 1 generation, the file or stdout failed; 2 bad command line, --transactions beyond "
        "the memory or output path (nothing written).");
    app->add_option("--out", out, "Where the workload goes (required)")->type_name("FILE")->required();
    app->add_option("--transactions", transactions, transactions_help(transactions))
        ->type_name("N")
        ->transform(count_check(1, most_workload_transactions));
    config.chain.genesis_accounts = replay_default_accounts;
    options = std::make_unique<option_binder>(*app, scope_workload);
    bind_run_options(*options, config);
  }

  int run() {
    resolve(config);
    if (config.colony.payers.by_vesting)
      return usage_error("workload", "--payer-weights " + colony::to_string(config.colony.payers) +
                                         ": apiary workload has no genesis vesting to weigh the payers by; let apiary "
                                         "replay generate the workload (with --genesis-vesting)");
    if (auto problem = validate(config)) return usage_error("workload", *problem);
    if (auto problem = check_memory(config, transactions)) return usage_error("workload", *problem);
    if (!outputs_usable("workload", {}, {{"--out", out}})) return exit_usage;
    const saved_workload w = generate_saved_workload(config, transactions);
    try {
      save_workload(out, w);
    } catch (const std::exception& e) {
      error_line("workload", e.what());
      return exit_failed;
    }
    const std::string line = "apiary workload: " + grouped(w.transactions.size()) + " transactions (seed " +
                             std::to_string(w.meta.seed) + ", " + std::to_string(w.meta.streams) + " streams, " +
                             grouped(w.meta.accounts) + " accounts, " + (w.meta.sign ? "signed" : "unsigned") +
                             ") saved to " + out + "\n";
    return print_out("workload", line) ? exit_ok : exit_failed;
  }
};

struct replay_command {
  run_config config;
  std::uint64_t transactions = 20'000;
  std::uint32_t blocks = 0;   // with --blocks-by clock: the slots' transactions of this many blocks
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
        ->transform(count_check(1, most_workload_transactions));
    app->add_option(
           "--blocks", blocks,
           "With --blocks-by clock: generate exactly the transactions --slot-transactions offers for this many "
           "blocks after the head, instead of --transactions (default: none)")
        ->type_name("N")
        ->transform(count_check(1, 100'000'000));
    app->add_option("--save-workload", save_workload, "Also save the generated workload here (default: none)")
        ->type_name("FILE");
    app->add_option("--report", report, "Write the result as JSON here (default: none)")->type_name("PATH");
    config.chain.genesis_accounts = replay_default_accounts;
    options = std::make_unique<option_binder>(*app, scope_replay);
    bind_run_options(*options, config);
  }

  std::optional<std::string> check_options() {
    if (!workload_in.empty() && !config.state.empty())
      return "--state " + shown_path(config.state) + ": a saved workload (--workload " + shown_path(workload_in) +
             ") references the genesis, not the snapshot's head; leave --workload out to generate one from that head";
    if (!workload_in.empty()) {
      for (const std::string& generation : options->given(scope_workload))
        return "--" + generation + ": the workload was generated already (--workload " + shown_path(workload_in) +
               "); drop one of the two";
      if (app->count("--transactions") > 0 || !save_workload.empty())
        return std::string(
            "--transactions and --save-workload only apply when the replay generates its workload (without "
            "--workload)");
    }
    if (app->count("--blocks") > 0) {
      if (config.blocks_by != core::block_trigger::clock)
        return std::string("--blocks: only with --blocks-by clock, whose slots say how many transactions a block is");
      if (app->count("--transactions") > 0 || !workload_in.empty())
        return std::string(
            "--blocks: the workload is then the slots' transactions; drop --transactions and --workload");
      if (config.colony.faults.any())
        return std::string("--blocks: not with --faults, whose companions would take some of the slots' places");
    }
    if (auto problem = validate_given(config, options->given(scope_replay))) return problem;
    resolve(config);
    return validate(config);
  }

  // --blocks: the transactions the slots after block `head` offer for that many blocks.
  void take_slot_transactions(std::uint32_t head) {
    if (blocks == 0) return;
    transactions = 0;
    for (std::uint32_t b = 1; b <= blocks; ++b) transactions += config.slot_transactions.count(head + b);
  }

  // The workload: loaded (a bad file is bad usage) or generated from `head` (and saved if asked).
  std::optional<saved_workload> obtain_workload(int& status, const colony::head_info& head) {
    if (!workload_in.empty()) {
      try {
        saved_workload w = load_workload(workload_in);
        if (auto problem = memory_problem(std::uint64_t{w.meta.accounts} * bytes_per_account)) {
          status = usage_error("replay", "workload " + shown_path(workload_in) + ": its genesis of " +
                                             grouped(w.meta.accounts) + " accounts needs " + *problem);
          return std::nullopt;
        }
        return w;
      } catch (const workload_error& e) {
        status = usage_error("replay", e.what());
        return std::nullopt;
      }
    }
    saved_workload w = generate_saved_workload(config, transactions, head);
    try {
      if (!save_workload.empty()) harness::save_workload(save_workload, w);
    } catch (const std::exception& e) {
      error_line("replay", e.what());
      status = exit_failed;
      return std::nullopt;
    }
    return w;
  }

  int run(int argc, const char* const* argv) {
    if (auto problem = check_options()) return usage_error("replay", *problem);
    take_slot_transactions(0);
    if (workload_in.empty())
      if (auto problem = check_memory(config, transactions)) return usage_error("replay", *problem);
    if (!outputs_usable("replay", {{"--workload", workload_in}, {"--state", config.state}},
                        {{"--report", report}, {"--save-workload", save_workload}}))
      return exit_usage;
    int status = exit_ok;
    run_context ctx = collect_context(argc, argv);
    std::unique_ptr<core::chain> loaded =
        load_state("replay", config.state, sized_chain(config, transactions), ctx.state, status);
    if (status != exit_ok) return status;
    if (loaded) take_slot_transactions(head_of(*loaded).block_num);
    const std::optional<saved_workload> w =
        obtain_workload(status, loaded ? head_of(*loaded) : genesis_head(config.chain));
    if (!w) return status;
    const replay_result r = replay_workload(config, *w, std::move(loaded));
    status = r.error.empty() ? exit_ok : exit_failed;
    if (!r.error.empty()) error_line("replay", "the replay failed: " + r.error);
    if (!report.empty()) {
      core::out_buffer buf;
      write_replay_report(buf, config, ctx, w->meta, workload_in.empty() ? "generated" : workload_in, r);
      try {
        save_file(report, buf);
      } catch (const std::exception& e) {
        error_line("replay", e.what());
        status = exit_failed;
      }
    }
    if (!print_out("replay", format_replay_summary(ctx, w->meta, r)) && status == exit_ok) status = exit_failed;
    return status;
  }
};

// ---- apiary snapshot ------------------------------------------------------------------------

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

// A generous bound on --blocks: a week of blocks is 201,600.
constexpr std::uint32_t most_snapshot_blocks = 10'000'000;

struct snapshot_command {
  run_config config;
  std::uint32_t blocks = 0;
  std::string out;
  CLI::App* app = nullptr;
  std::unique_ptr<option_binder> options;

  void setup(CLI::App& parent) {
    app = parent.add_subcommand(
        "snapshot",
        "Write a chain's state to a file, after the genesis or after --blocks blocks of the mix, for `apiary run "
        "--state` and `apiary replay --state` to start from instead of the genesis (docs/snapshots.md)");
    app->footer(
        "Exit status: 0 written; 1 making the blocks or writing failed; 2 bad command line, --state file or output "
        "path (nothing written); 129, 130, 143 interrupted by SIGHUP, SIGINT, SIGTERM (nothing written).");
    app->add_option("--out", out, "Where the snapshot goes (required): a file replaced whole once written")
        ->type_name("FILE")
        ->required();
    app->add_option("--blocks", blocks,
                    "Blocks of the mix to make on top of the genesis (or the --state) before writing, as the replay "
                    "makes them: a warm state, with the ids of the last hour and the comments and votes of the "
                    "cashout window (default: 0, the bare genesis)")
        ->type_name("N")
        ->transform(count_check(0, most_snapshot_blocks));
    options = std::make_unique<option_binder>(*app, scope_snapshot);
    bind_run_options(*options, config);
  }

  std::optional<std::string> check_options() {
    if (auto problem = validate_given(config, options->given(scope_snapshot))) return problem;
    resolve(config);
    if (auto problem = validate(config)) return problem;
    return check_memory(config, blocks == 0 ? 0 : snapshot_round_transactions);
  }

  // Nothing is written after a signal: its error line and 128 + the signal.
  static int interrupted() {
    const int sig = interrupt_signal();
    error_line("snapshot", "interrupted by " + signal_name(sig) + ": nothing written");
    return 128 + sig;
  }

  // The chain to write: --state's, or the genesis; null when a signal stopped the genesis.
  std::unique_ptr<core::chain> start(int& status, const std::function<bool()>& cancelled) {
    state_source source;
    std::unique_ptr<core::chain> chain = load_state("snapshot", config.state, sized_chain(config), source, status);
    if (status != exit_ok || chain) return chain;
    const std::int64_t t0 = core::steady_now_ns();
    std::string keys;
    try {
      chain = make_genesis_chain(sized_chain(config), cancelled, &keys);
    } catch (const core::genesis_cancelled&) {
      status = interrupted();
      return nullptr;
    }
    std::fprintf(stderr, "apiary snapshot: genesis of %s accounts in %.1f s; %s\n",
                 grouped(config.chain.genesis_accounts).c_str(), seconds(core::steady_now_ns() - t0), keys.c_str());
    return chain;
  }

  int run() {
    if (auto problem = check_options()) return usage_error("snapshot", *problem);
    if (!outputs_usable("snapshot", {{"--state", config.state}}, {{"--out", out}})) return exit_usage;
    output_locks locks;
    if (auto problem = locks.take({{"--out", out}})) return usage_error("snapshot", *problem);
    const interrupt_guard signals;
    const std::function<bool()> cancelled = [] { return interrupt_signal() != 0; };
    int status = exit_ok;
    std::unique_ptr<core::chain> chain = start(status, cancelled);
    if (!chain) return status;
    const std::int64_t t0 = core::steady_now_ns();
    const advance_result made = advance_chain(config, *chain, blocks, cancelled, [&](std::uint32_t n) {
      std::fprintf(stderr, "apiary snapshot: %s of %s blocks in %.1f s\n", grouped(n).c_str(), grouped(blocks).c_str(),
                   seconds(core::steady_now_ns() - t0));
    });
    const double made_s = seconds(core::steady_now_ns() - t0);
    if (!made.error.empty()) {
      error_line("snapshot", "making the blocks failed: " + made.error);
      return exit_failed;
    }
    if (made.cancelled || cancelled()) return interrupted();
    chain->clear_pending();
    std::optional<state_source> written;
    try {
      written = save_state_file(out, *chain, cancelled);
    } catch (const std::exception& e) {
      error_line("snapshot", e.what());
      return exit_failed;
    }
    if (!written) return interrupted();
    const std::string line = fmt::format(
        "apiary snapshot: head block {} ({} blocks of {} transactions made in {:.1f} s, {} rejected), {} accounts, "
        "state digest {}; {} written to {} in {:.1f} s\n",
        written->head_block_num, grouped(made.blocks), grouped(made.in_blocks), made_s, grouped(made.rejected),
        grouped(config.chain.genesis_accounts), written->state_digest, bytes_text(written->bytes), out,
        seconds(written->load_ns));
    return print_out("snapshot", line) ? exit_ok : exit_failed;
  }
};

// ---- apiary rc-params ---------------------------------------------------------------------

struct rc_params_command {
  run_config config;
  CLI::App* app = nullptr;
  std::unique_ptr<option_binder> options;

  void setup(CLI::App& parent) {
    app = parent.add_subcommand(
        "rc-params",
        "Print the resource credits' base parameters (the built-in ones, or --rc-params FILE's) as an --rc-params "
        "file, with their effective values at --rc-scale as comments (docs/rc.md)");
    app->footer("Exit status: 0 printed; 1 stdout could not be written; 2 bad command line or parameter file.");
    options = std::make_unique<option_binder>(*app, scope_rc_params);
    bind_run_options(*options, config);
  }

  int run() {
    if (auto problem = validate_rc_params(config)) return usage_error("rc-params", *problem);
    const std::string source = config.rc_params_file.empty() ? std::string("the built-in defaults")
                                                             : "from " + shown_path(config.rc_params_file);
    return print_out("rc-params", rc_params_toml(config.chain.rc_params, config.chain.rc_scale, source)) ? exit_ok
                                                                                                         : exit_failed;
  }
};

// Runs a parsed command; an exception that escapes it (out of memory, a failed write) is its
// error line and exit status 1.
template <class Body>
int guarded(std::string_view command, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    error_line(command, "out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    error_line(command, e.what());
  }
  return exit_failed;
}

}  // namespace

int run_apiary(int argc, const char* const* argv) {
  // A closed stdout or stderr (`apiary run | head -1`) is a write error handled as one.
  ignore_sigpipe();
  CLI::App app("apiary: Hive's colony + queen full-block-cycle test for a node core", "apiary");
  app.require_subcommand(1, 1);
  app.footer(exit_help);
  run_command run;
  workload_command workload;
  replay_command replay;
  snapshot_command snapshot;
  rc_params_command rc_params;
  run.setup(app);
  workload.setup(app);
  replay.setup(app);
  snapshot.setup(app);
  rc_params.setup(app);

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
    const parse_problem p = explain_parse_error(e, app);
    const std::string help = p.command.empty() ? std::string("apiary --help lists the commands")
                                               : "apiary " + p.command + " --help lists its options";
    return usage_error(p.command, p.text + " (" + help + ")");
  }
  if (workload.app->parsed()) return guarded("workload", [&] { return workload.run(); });
  if (replay.app->parsed()) return guarded("replay", [&] { return replay.run(argc, argv); });
  if (snapshot.app->parsed()) return guarded("snapshot", [&] { return snapshot.run(); });
  if (rc_params.app->parsed()) return guarded("rc-params", [&] { return rc_params.run(); });
  return guarded("run", [&] { return run.run(argc, argv); });
}

}  // namespace apiary::harness
