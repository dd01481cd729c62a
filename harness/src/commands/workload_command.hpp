// `apiary workload`: generates a seeded workload once (single-threaded order, signatures on
// every core) and saves it (`--out FILE`) for `apiary replay --workload`; the same options give
// the same file. Takes the run options that shape the transactions (scope_workload).
// Thread safety: the main thread's; the generation starts and joins its own threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class workload_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run();

 private:
  run_config config_;
  std::uint64_t transactions_ = 20'000;
  std::string out_;
  CLI::App* app_ = nullptr;
  std::unique_ptr<option_binder> options_;
};

}  // namespace apiary::harness
