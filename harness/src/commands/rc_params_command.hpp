// `apiary rc-params`: prints the resource credits' base parameters (the built-in ones, or
// --rc-params FILE's) as an --rc-params file, with their effective values at --rc-scale as
// comments (rc_params_file.hpp). Takes the RC parameter options alone (scope_rc_params).
// Thread safety: the main thread's.
#pragma once

#include <memory>

#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace apiary::harness {

class rc_params_command {
 public:
  // Adds the subcommand and its options to `parent`.
  void setup(CLI::App& parent);
  // Whether the command line named this subcommand.
  bool parsed() const;
  // After parsing: the exit status.
  int run();

 private:
  run_config config_;
  CLI::App* app_ = nullptr;
  std::unique_ptr<option_binder> options_;
};

}  // namespace apiary::harness
