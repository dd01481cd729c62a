// `apiary snapshot`: writes a chain's state (`--out FILE`) after the genesis (or a --state
// snapshot) and --blocks blocks of the mix made as the replay makes them (replay/snapshot.hpp,
// io/state_file.hpp), for run and replay's --state; or checks such a file whole (`--verify
// FILE`). Nothing is written after a signal. Takes the run options that shape the chain and
// its blocks (scope_snapshot).
// Thread safety: the main thread's; the genesis starts and joins its own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class snapshot_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run();

 private:
  // The options and the memory they need: the problem, or nullopt.
  std::optional<std::string> check_options();
  // The chain to write: --state's, or the genesis; null when a signal stopped the genesis or
  // --state cannot be used (`status` set).
  std::unique_ptr<core::chain> start(int& status, const std::function<bool()>& cancelled);

  // --verify: checks the file whole and prints what it holds; the exit status.
  int verify() const;
  // --to-cache: finds or makes the state in the state cache; the exit status.
  int make_in_cache();

  run_config config_;
  std::uint32_t blocks_ = 0;
  std::string out_;
  std::string verify_;
  bool to_cache_ = false;
  CLI::App* app_ = nullptr;
  std::unique_ptr<option_binder> options_;
};

}  // namespace apiary::harness
