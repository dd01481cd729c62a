// `apiary run`: the cycle test. Every option of bind_run_options(), `--config FILE` (a TOML
// file whose keys are the option names, config_file.hpp; the command line overrides it) and
// `--print-config`. Checks every output before anything runs, then runs the test, writes the
// report and prints the summary; its exit status says how the run ended (cli.hpp).
// Thread safety: the main thread's; the run starts and joins its own threads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/io/run_log.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class profiler;

class run_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run(int argc, const char* const* argv);

 private:
  // The name from the config file, then the derived fields and the checks: the problem.
  std::optional<std::string> finish_parsing();
  // --log-file, else none for a report written through a device or a FIFO (there is no
  // "beside" it), else beside the report.
  std::string log_file_for(const std::string& report) const;
  int execute(const run_context& ctx, const std::string& path, run_log& log, const std::string& log_file,
              profiler* profile, std::unique_ptr<core::chain> loaded);

  run_config config_;
  bool print_config_ = false;
  CLI::App* app_ = nullptr;
  std::unique_ptr<option_binder> options_;
};

}  // namespace apiary::harness
