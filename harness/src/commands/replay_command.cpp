#include "commands/replay_command.hpp"

#include <spdlog/fmt/fmt.h>
#include <CLI/CLI.hpp>

#include <exception>
#include <limits>
#include <stdexcept>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/io/block_file.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/replay.hpp"
#include "commands/command_support.hpp"
#include "cycle/observers.hpp"

namespace apiary::harness {

namespace {

// The transactions a slot offers on average.
double mean_offer(const core::slot_schedule& s) {
  switch (s.form) {
    case core::slot_schedule::shape::constant: return s.low;
    case core::slot_schedule::shape::uniform: return (static_cast<double>(s.low) + s.high) / 2;
    case core::slot_schedule::shape::poisson: return s.mean;
  }
  return s.low;
}

// What a replayed block holds besides its transactions (its record, the chain's bookkeeping),
// rounded up.
constexpr std::uint64_t bytes_per_block = 512;
// The most blocks a replay on the chain's clock makes: --blocks' bound.
constexpr std::uint32_t most_clock_blocks = 100'000'000;

}  // namespace

bool replay_command::parsed() const { return app_->parsed(); }

void replay_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "replay",
      "Push a workload through the writer and the core on one thread, with no other thread running: the same "
      "binary, workload and options execute the same instructions every time (the CI performance gate counts "
      "them with callgrind); prints a summary");
  app_->footer(
      "The measured part is the function apiary_replay_measured, which starts and stops callgrind's "
      "instrumentation: valgrind --tool=callgrind --instr-atstart=no counts only it, and simulates nothing before it "
      "(--collect-atstart=no --toggle-collect=apiary_replay_measured counts it too, with everything instrumented).\n"
      "Exit status: 0 replayed; 1 the replay or an output failed; 2 bad command line, workload file or output "
      "path.");
  app_->add_option("--workload", workload_in_,
                   "A workload saved by `apiary workload` (default: none, generate one from --seed, --threads, "
                   "--accounts, --sign, --mix, --faults and --transactions first)")
      ->type_name("FILE")
      ->check(path_check());
  app_->add_option("--transactions", transactions_, transactions_help(transactions_) + "; without --workload only")
      ->type_name("N")
      ->transform(count_check(1, most_workload_transactions));
  app_->add_option("--blocks", blocks_,
                   "With --blocks-by clock: generate exactly the transactions --slot-transactions offers for this many "
                   "blocks after the head, instead of --transactions (default: none)")
      ->type_name("N")
      ->transform(count_check(1, most_clock_blocks));
  app_->add_option("--save-workload", save_workload_, "Also save the generated workload here (default: none)")
      ->type_name("FILE")
      ->check(path_check());
  app_->add_option("--blocks-from", blocks_from_,
                   "Replay real Hive blocks instead of a workload (docs/replay.md#real-traffic): block_api JSON or a "
                   "Hive block_log, told by content; each transaction's operations of the kinds apiary models, "
                   "unsigned and on the genesis head, with every account and comment they reference created at "
                   "genesis (default: none)")
      ->type_name("FILE")
      ->check(path_check());
  app_->add_option("--from", from_, "With --blocks-from: the first block number to replay (default: the file's first)")
      ->type_name("N")
      ->transform(count_check(1, std::numeric_limits<std::uint32_t>::max()));
  app_->add_option("--to", to_, "With --blocks-from: the last block number to replay (default: the file's last)")
      ->type_name("N")
      ->transform(count_check(1, std::numeric_limits<std::uint32_t>::max()));
  app_->add_option("--report", report_, "Write the result as JSON here (default: none)")
      ->type_name("PATH")
      ->check(path_check());
  config_.chain.genesis_accounts = replay_default_accounts;
  options_ = std::make_unique<option_binder>(*app_, scope_replay);
  bind_run_options(*options_, config_);
}

std::optional<std::string> replay_command::check_blocks_options() {
  if (blocks_from_.empty()) {
    if (app_->count("--from") > 0 || app_->count("--to") > 0)
      return std::string("--from and --to: only with --blocks-from, whose block numbers they name");
    return std::nullopt;
  }
  const std::string with = ": not with --blocks-from " + shown_path(blocks_from_) +
                           ", whose blocks are the replay's transactions; drop one of the two";
  for (const char* inert : {"--workload", "--transactions", "--blocks", "--save-workload"})
    if (app_->count(inert) > 0) return inert + with;
  if (starts_from_state(config_))
    return std::string(config_.state_blocks != 0 ? "--state-blocks" : "--state") + ": not with --blocks-from " +
           shown_path(blocks_from_) + ": the accounts and comments the blocks reference are created at genesis";
  for (std::string generation : options_->given(scope_workload)) return "--" + generation.append(with);
  if (app_->count("--from") > 0 && app_->count("--to") > 0 && from_ > to_)
    return "--from " + grouped(from_) + " --to " + grouped(to_) + ": the first block is after the last";
  return std::nullopt;
}

std::optional<std::string> replay_command::check_options() {
  if (auto problem = check_blocks_options()) return problem;
  if (!workload_in_.empty() && starts_from_state(config_))
    return state_option_text(config_) + ": a saved workload (--workload " + shown_path(workload_in_) +
           ") references the genesis, not the snapshot's head; leave --workload out to generate one from that head";
  if (!workload_in_.empty()) {
    for (const std::string& generation : options_->given(scope_workload))
      return "--" + generation + ": the workload was generated already (--workload " + shown_path(workload_in_) +
             "); drop one of the two";
    if (app_->count("--transactions") > 0 || !save_workload_.empty())
      return std::string(
          "--transactions and --save-workload only apply when the replay generates its workload (without "
          "--workload)");
  }
  if (app_->count("--blocks") > 0) {
    if (config_.blocks_by != core::block_trigger::clock)
      return std::string("--blocks: only with --blocks-by clock, whose slots say how many transactions a block is");
    if (app_->count("--transactions") > 0 || !workload_in_.empty())
      return std::string("--blocks: the workload is then the slots' transactions; drop --transactions and --workload");
    if (config_.colony.faults.any())
      return std::string("--blocks: not with --faults, whose companions would take some of the slots' places");
  }
  if (auto problem = validate_given(config_, options_->given(scope_replay))) return problem;
  resolve(config_);
  return validate(
      config_, {.command = "replay", .reports = !report_.empty(), .report_option = "--report", .makes_blocks = true});
}

std::optional<std::string> replay_command::check_slots(std::uint64_t transactions) const {
  if (config_.blocks_by != core::block_trigger::clock) return std::nullopt;
  const double offer = mean_offer(config_.slot_transactions);
  const std::string schedule = "--slot-transactions " + core::to_string(config_.slot_transactions);
  if (blocks_ != 0) {
    const auto expected = static_cast<std::uint64_t>(offer * blocks_);
    if (auto problem = memory_problem(blocks_ * bytes_per_block + expected * bytes_per_transaction))
      return "--blocks " + grouped(blocks_) + ": " + *problem + " (the blocks, and about " + grouped(expected) +
             " transactions their slots offer with " + schedule + ")";
    return std::nullopt;
  }
  if (offer * most_clock_blocks >= static_cast<double>(transactions)) return std::nullopt;
  return schedule + ": " + fmt::format("{:g}", offer) + " transactions a slot on average, so the replay's " +
         grouped(transactions) + " transactions would take more than " + grouped(most_clock_blocks) +
         " blocks (a slot that offers none is an empty block); give --blocks N for N blocks of what the slots "
         "offer, or a larger count";
}

void replay_command::take_slot_transactions(std::uint32_t head) {
  if (blocks_ == 0 || !config_.writer.clock) return;
  // The writer's schedule, drawn with the run's --seed (resolve()), as the replay's blocks are.
  const core::slot_schedule& slots = *config_.writer.clock;
  transactions_ = 0;
  for (std::uint32_t b = 1; b <= blocks_; ++b) transactions_ += slots.count(head + b);
}

std::optional<saved_workload> replay_command::obtain_workload(int& status, const colony::head_info& head) {
  if (!workload_in_.empty()) {
    try {
      saved_workload w = load_workload(workload_in_);
      if (auto problem = memory_problem(std::uint64_t{w.meta.accounts} * bytes_per_account)) {
        status = usage_error("replay", "workload " + shown_path(workload_in_) + ": its genesis of " +
                                           grouped(w.meta.accounts) + " accounts needs " + *problem);
        return std::nullopt;
      }
      if (auto problem = check_slots(w.transactions.size())) {
        status = usage_error("replay", *problem);
        return std::nullopt;
      }
      return w;
    } catch (const workload_error& e) {
      status = usage_error("replay", e.what());
      return std::nullopt;
    }
  }
  saved_workload w = generate_saved_workload(config_, transactions_, head);
  try {
    if (!save_workload_.empty()) harness::save_workload(save_workload_, w);
  } catch (const std::exception& e) {
    error_line("replay", e.what());
    status = exit_failed;
    return std::nullopt;
  }
  return w;
}

int replay_command::run_blocks(int argc, const char* const* argv) {
  made_directories made;  // removed again if the replay is refused
  std::vector<named_path> inputs = config_inputs(config_);
  inputs.push_back({"--blocks-from", blocks_from_});
  if (!outputs_usable("replay", inputs, {{"--report", report_}})) return exit_usage;
  const std::string file = "--blocks-from " + shown_path(blocks_from_);
  // The genesis holds the accounts the blocks reference, none by number.
  core::chain_options chain = config_.chain;
  chain.genesis_accounts = 0;
  std::optional<real_traffic> real;
  try {
    block_file blocks(blocks_from_);
    const std::uint32_t first = blocks.first_block_num();
    const std::uint32_t last = blocks.last_block_num();
    if (first > last) return usage_error("replay", file + ": no blocks");
    const std::uint32_t from = app_->count("--from") > 0 ? from_ : first;
    const std::uint32_t to = app_->count("--to") > 0 ? to_ : last;
    if (from < first || to > last || from > to)
      return usage_error("replay", "--from " + grouped(from) + " --to " + grouped(to) + ": outside " + file +
                                       ", which holds blocks " + grouped(first) + "-" + grouped(last));
    real = convert_real_blocks(blocks, from, to, chain);
  } catch (const std::runtime_error& e) {  // input_error, block_file_error, block_error
    return usage_error("replay", file + ": " + one_line(e.what()));
  }
  made.keep();

  saved_workload w;
  w.meta.seed = config_.colony.seed;
  w.meta.streams = 1;
  w.meta.accounts = 0;
  w.meta.sign = false;  // the real keys are not the chain's: the authority check is off
  w.meta.account_prefix = chain.account_prefix;
  w.meta.key_password = chain.key_password;
  w.meta.chain = chain.chain;
  w.transactions = real->converted;
  std::vector<core::reject> outcomes;
  run_context ctx = collect_context(argc, argv);
  const replay_result r = replay_workload(config_, w, nullptr, 0, &real->genesis, &outcomes);
  apply_outcomes(*real, outcomes);
  int status = r.error.empty() ? exit_ok : exit_failed;
  if (!r.error.empty()) error_line("replay", "the replay failed: " + r.error);
  if (!report_.empty()) {
    core::out_buffer buf;
    write_replay_report(buf, config_, ctx, w.meta, blocks_from_, r, &*real);
    try {
      save_file(report_, buf);
    } catch (const std::exception& e) {
      error_line("replay", e.what());
      status = exit_failed;
    }
  }
  if (!print_out("replay", format_replay_summary(ctx, w.meta, r, config_, &*real)) && status == exit_ok)
    status = exit_failed;
  return status;
}

int replay_command::run(int argc, const char* const* argv) {
  if (auto problem = check_options()) return usage_error("replay", *problem);
  if (!blocks_from_.empty()) return run_blocks(argc, argv);
  if (workload_in_.empty()) {
    if (auto problem = check_slots(transactions_)) return usage_error("replay", *problem);
    take_slot_transactions(0);
    const std::string asked_by = blocks_ == 0 ? std::string() : "--blocks " + grouped(blocks_);
    if (auto problem = check_memory(config_, transactions_, asked_by)) return usage_error("replay", *problem);
  }
  made_directories made;  // removed again if the replay is refused
  std::vector<named_path> inputs = config_inputs(config_);
  inputs.push_back({"--workload", workload_in_});
  if (!outputs_usable("replay", inputs,
                      {{"--report", report_}, {"--save-workload", save_workload_, output_use::binary}}))
    return exit_usage;
  int status = exit_ok;
  run_context ctx = collect_context(argc, argv);
  std::unique_ptr<core::chain> loaded =
      load_state("replay", config_, sized_chain(config_, transactions_), ctx.state, status);
  if (status != exit_ok) return status;
  if (loaded) take_slot_transactions(head_of(*loaded).block_num);
  const std::optional<saved_workload> w =
      obtain_workload(status, loaded ? head_of(*loaded) : genesis_head(config_.chain));
  if (!w) return status;
  made.keep();
  const replay_result r = replay_workload(config_, *w, std::move(loaded), blocks_);
  status = r.error.empty() ? exit_ok : exit_failed;
  if (!r.error.empty()) error_line("replay", "the replay failed: " + r.error);
  if (!report_.empty()) {
    core::out_buffer buf;
    write_replay_report(buf, config_, ctx, w->meta, workload_in_.empty() ? "generated" : workload_in_, r);
    try {
      save_file(report_, buf);
    } catch (const std::exception& e) {
      error_line("replay", e.what());
      status = exit_failed;
    }
  }
  if (!print_out("replay", format_replay_summary(ctx, w->meta, r, config_)) && status == exit_ok) status = exit_failed;
  return status;
}

}  // namespace apiary::harness
