// `apiary replay`: pushes a saved (or freshly generated) workload through the writer and the
// core on one thread (replay.hpp), from the genesis or a --state snapshot; prints a summary and
// writes a JSON result when asked. Takes the run options that shape what it generates and
// replays (scope_replay).
// Thread safety: the main thread's; only the generation runs other threads, before the replay.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "apiary/colony/colony.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/replay/workload_file.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class replay_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run(int argc, const char* const* argv);

 private:
  // The options' combinations and values: the problem, or nullopt.
  std::optional<std::string> check_options();
  // On the chain's clock, by arithmetic on the schedule (no loop over the slots): --blocks
  // within the memory, or the workload's `transactions` within reach of the slots: the problem.
  std::optional<std::string> check_slots(std::uint64_t transactions) const;
  // --blocks: the transactions the slots after block `head` offer for that many blocks.
  void take_slot_transactions(std::uint32_t head);
  // The workload: loaded (a bad file is bad usage) or generated from `head` (and saved if
  // asked); nullopt with `status` set when there is none.
  std::optional<saved_workload> obtain_workload(int& status, const colony::head_info& head);
  // --blocks-from: the options that would be inert beside it, or nullopt.
  std::optional<std::string> check_blocks_options();
  // --blocks-from: converts the file's blocks (real_traffic.hpp) and replays them.
  int run_blocks(int argc, const char* const* argv);

  run_config config_;
  std::uint64_t transactions_ = 20'000;
  std::uint32_t blocks_ = 0;   // with --blocks-by clock: the slots' transactions of this many blocks
  std::string workload_in_;    // the saved workload (empty: generate one)
  std::string save_workload_;  // also save the generated workload here
  std::string report_;         // the JSON result (empty: none)
  std::string blocks_from_;    // real blocks to replay instead of a workload (empty: none)
  std::uint32_t from_ = 0;     // their first and last block numbers (0: the file's)
  std::uint32_t to_ = 0;
  CLI::App* app_ = nullptr;
  std::unique_ptr<option_binder> options_;
};

}  // namespace apiary::harness
