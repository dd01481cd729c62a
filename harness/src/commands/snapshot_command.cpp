#include "commands/snapshot_command.hpp"

#include <spdlog/fmt/fmt.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "apiary/core/base/clock.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/state_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/snapshot.hpp"
#include "apiary/harness/replay/state_cache.hpp"
#include "commands/command_support.hpp"
#include "cycle/signals.hpp"

namespace apiary::harness {

namespace {

// A generous bound on --blocks: a week of blocks is 201,600.
constexpr std::uint32_t most_snapshot_blocks = 10'000'000;

// Nothing is written after a signal: its error line and 128 + the signal.
int interrupted() {
  const int sig = interrupt_signal();
  error_line("snapshot", "interrupted by " + signal_name(sig) + ": nothing written");
  return 128 + sig;
}

}  // namespace

bool snapshot_command::parsed() const { return app_->parsed(); }

void snapshot_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "snapshot",
      "Write a chain's state to a file, after the genesis or after --blocks blocks of the mix, for `apiary run "
      "--state` and `apiary replay --state` to start from instead of the genesis; or make it in the state cache "
      "(--to-cache), or check such a file whole (--verify) (docs/snapshots.md)");
  app_->footer(
      "Exit status: 0 written (or, with --verify, the file checks out); 1 making the blocks or writing failed, or "
      "the --verify file does not check out; 2 bad command line, --state file or output path (nothing written); "
      "129, 130, 143 interrupted by SIGHUP, SIGINT, SIGTERM (nothing written).");
  CLI::Option* out = app_->add_option("--out", out_, "Where the snapshot goes: a file replaced whole once written")
                         ->type_name("FILE")
                         ->check(path_check());
  app_->add_option("--verify", verify_,
                   "Instead of writing one, check a snapshot or state file whole (every byte against its digest, "
                   "its layout against this build's) and print its head, digest and options; takes no other option")
      ->type_name("FILE")
      ->check(path_check())
      ->excludes(out);
  app_->add_flag("--to-cache", to_cache_,
                 "Instead of --out, make the state --blocks N describe in the state cache, where `apiary run "
                 "--state-blocks N` with the same options opens it (kept when it is there already); prints its path")
      ->excludes(out)
      ->excludes("--verify");
  app_->add_option("--blocks", blocks_,
                   "Blocks of the mix to make on top of the genesis (or the --state) before writing, as the replay "
                   "makes them: a warm state, with the ids of the last hour and the comments and votes of the "
                   "cashout window (default: 0, the bare genesis)")
      ->type_name("N")
      ->transform(count_check(0, most_snapshot_blocks));
  options_ = std::make_unique<option_binder>(*app_, scope_snapshot);
  bind_run_options(*options_, config_);
}

std::optional<std::string> snapshot_command::check_options() {
  if (auto problem = validate_given(config_, options_->given(scope_snapshot))) return problem;
  resolve(config_);
  if (auto problem = validate(
          config_, {.command = "snapshot", .reports = false, .report_option = {}, .makes_blocks = blocks_ != 0}))
    return problem;
  if (blocks_ == 0) return check_memory(config_, 0);
  return check_memory(config_, snapshot_round_transactions,
                      "--blocks " + grouped(blocks_) + " (made in rounds of " + grouped(snapshot_round_transactions) +
                          " transactions)");
}

std::unique_ptr<core::chain> snapshot_command::start(int& status, const std::function<bool()>& cancelled) {
  state_source source;
  std::unique_ptr<core::chain> chain = load_state("snapshot", config_, sized_chain(config_), source, status);
  if (status != exit_ok || chain) return chain;
  const std::int64_t t0 = core::steady_now_ns();
  std::string keys;
  try {
    chain = make_genesis_chain(sized_chain(config_), cancelled, &keys);
  } catch (const core::genesis_cancelled&) {
    status = interrupted();
    return nullptr;
  }
  std::fprintf(stderr, "apiary snapshot: genesis of %s accounts in %.1f s; %s\n",
               grouped(config_.chain.genesis_accounts).c_str(), seconds_of(core::steady_now_ns() - t0), keys.c_str());
  return chain;
}

int snapshot_command::verify() const {
  verified_state v;
  try {
    v = verify_state_file(verify_, available_memory() / 4);
  } catch (const state_file_error& e) {
    error_line("snapshot", "--verify " + std::string(e.what()));
    return exit_failed;
  }
  std::string options;
  for (const auto& [name, value] : v.info.options) options += fmt::format(" {}={}", name, value);
  const std::string line = fmt::format(
      "apiary snapshot: {} checks out: a {} of {}, layout id {}, head block {}, state digest {}, checked whole in "
      "{:.1f} s; made with{}\n",
      verify_, v.format, bytes_text(v.info.file_size), v.info.layout_id, v.info.head_block_num,
      core::to_hex(v.info.state_digest), seconds_of(v.check_ns), options);
  return print_out("snapshot", line) ? exit_ok : exit_failed;
}

int snapshot_command::make_in_cache() {
  if (auto problem = check_options()) return usage_error("snapshot", *problem);
  if (blocks_ == 0) return usage_error("snapshot", "--to-cache: give --blocks N, the blocks the cached state holds");
  if (!config_.state.empty())
    return usage_error("snapshot",
                       "--to-cache: a cached state starts from the genesis, not --state " + shown_path(config_.state));
  const interrupt_guard signals;
  const std::function<bool()> cancelled = [] { return interrupt_signal() != 0; };
  std::optional<cached_state> cached;
  try {
    cached = find_or_make_state(config_, blocks_, cancelled, [](const std::string& line) {
      std::fprintf(stderr, "apiary snapshot: %s\n", line.c_str());
    });
  } catch (const state_cache_error& e) {
    return usage_error("snapshot", "--to-cache: " + std::string(e.what()));
  } catch (const std::exception& e) {
    error_line("snapshot", e.what());
    return exit_failed;
  }
  if (!cached) return interrupted();
  const std::string line = fmt::format(
      "apiary snapshot: the state of {} blocks is in the cache, {}: {}\n", grouped(blocks_),
      cached->made ? fmt::format("made in {:.1f} s", seconds_of(cached->make_ns)) : "already there", cached->path);
  return print_out("snapshot", line) ? exit_ok : exit_failed;
}

int snapshot_command::run() {
  if (!verify_.empty()) {
    const std::vector<std::string> given = options_->given(scope_snapshot);
    if (!given.empty() || app_->count("--blocks") != 0)
      return usage_error("snapshot", "--verify takes no other option (given: --" +
                                         (given.empty() ? std::string("blocks") : given.front()) + ")");
    return verify();
  }
  if (to_cache_) return make_in_cache();
  if (out_.empty()) return usage_error("snapshot", "--out FILE is required (or --verify FILE, or --to-cache)");
  if (auto problem = check_options()) return usage_error("snapshot", *problem);
  made_directories dirs;  // removed again if the snapshot is refused or stopped before its blocks
  if (!outputs_usable("snapshot", config_inputs(config_), {{"--out", out_, output_use::binary}})) return exit_usage;
  output_locks locks;
  if (auto problem = locks.take({{"--out", out_}})) return usage_error("snapshot", *problem);
  const interrupt_guard signals;
  const std::function<bool()> cancelled = [] { return interrupt_signal() != 0; };
  int status = exit_ok;
  std::unique_ptr<core::chain> chain = start(status, cancelled);
  if (!chain) return status;
  dirs.keep();
  const std::int64_t t0 = core::steady_now_ns();
  const advance_result made = advance_chain(config_, *chain, blocks_, cancelled, [&](std::uint32_t n) {
    std::fprintf(stderr, "apiary snapshot: %s of %s blocks in %.1f s\n", grouped(n).c_str(), grouped(blocks_).c_str(),
                 seconds_of(core::steady_now_ns() - t0));
  });
  const double made_s = seconds_of(core::steady_now_ns() - t0);
  if (!made.error.empty()) {
    error_line("snapshot", "making the blocks failed: " + made.error);
    return exit_failed;
  }
  if (made.cancelled || cancelled()) return interrupted();
  chain->clear_pending();
  std::optional<state_source> written;
  try {
    written = save_state_file(out_, *chain, cancelled);
  } catch (const std::exception& e) {
    error_line("snapshot", e.what());
    return exit_failed;
  }
  if (!written) return interrupted();
  const std::string line = fmt::format(
      "apiary snapshot: head block {} ({} blocks of {} transactions made in {:.1f} s, {} rejected), {} accounts, "
      "state digest {}; {} written to {} in {:.1f} s\n",
      written->head_block_num, grouped(made.blocks), grouped(made.in_blocks), made_s, grouped(made.rejected),
      grouped(config_.chain.genesis_accounts), written->state_digest, bytes_text(written->bytes), out_,
      seconds_of(written->load_ns));
  return print_out("snapshot", line) ? exit_ok : exit_failed;
}

}  // namespace apiary::harness
