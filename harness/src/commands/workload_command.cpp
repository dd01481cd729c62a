#include "commands/workload_command.hpp"

#include <CLI/CLI.hpp>

#include <exception>

#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/replay.hpp"
#include "commands/command_support.hpp"

namespace apiary::harness {

bool workload_command::parsed() const { return app_->parsed(); }

void workload_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "workload",
      "Generate a seeded workload once (single-threaded order, signatures on every core) and save it for "
      "`apiary replay --workload`; the same options give the same file");
  app_->footer(
      "Exit status: 0 saved; 1 generation, the file or stdout failed; 2 bad command line, --transactions beyond "
      "the memory or output path (nothing written).");
  app_->add_option("--out", out_, "Where the workload goes (required)")
      ->type_name("FILE")
      ->check(path_check())
      ->required();
  app_->add_option("--transactions", transactions_, transactions_help(transactions_))
      ->type_name("N")
      ->transform(count_check(1, most_workload_transactions));
  config_.chain.genesis_accounts = replay_default_accounts;
  options_ = std::make_unique<option_binder>(*app_, scope_workload);
  bind_run_options(*options_, config_);
}

int workload_command::run() {
  resolve(config_);
  if (config_.colony.payers.by_vesting)
    return usage_error("workload", "--payer-weights " + colony::to_string(config_.colony.payers) +
                                       ": apiary workload has no genesis vesting to weigh the payers by; let apiary "
                                       "replay generate the workload (with --genesis-vesting)");
  if (auto problem = validate(config_)) return usage_error("workload", *problem);
  if (auto problem = check_memory(config_, transactions_)) return usage_error("workload", *problem);
  made_directories made;
  if (!outputs_usable("workload", {}, {{"--out", out_, output_use::binary}})) return exit_usage;
  made.keep();
  const saved_workload w = generate_saved_workload(config_, transactions_);
  try {
    save_workload(out_, w);
  } catch (const std::exception& e) {
    error_line("workload", e.what());
    return exit_failed;
  }
  const std::string line = "apiary workload: " + grouped(w.transactions.size()) + " transactions (seed " +
                           std::to_string(w.meta.seed) + ", " + std::to_string(w.meta.streams) + " streams, " +
                           grouped(w.meta.accounts) + " accounts, " + (w.meta.sign ? "signed" : "unsigned") +
                           ") saved to " + out_ + "\n";
  return print_out("workload", line) ? exit_ok : exit_failed;
}

}  // namespace apiary::harness
