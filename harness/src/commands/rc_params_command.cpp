#include "commands/rc_params_command.hpp"

#include <CLI/CLI.hpp>

#include "apiary/harness/config/rc_params_file.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "commands/command_support.hpp"

namespace apiary::harness {

bool rc_params_command::parsed() const { return app_->parsed(); }

void rc_params_command::setup(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "rc-params",
      "Print the resource credits' base parameters (the built-in ones, or --rc-params FILE's) as an --rc-params "
      "file, with their effective values at --rc-scale as comments (docs/rc.md)");
  app_->footer("Exit status: 0 printed; 1 stdout could not be written; 2 bad command line or parameter file.");
  options_ = std::make_unique<option_binder>(*app_, scope_rc_params);
  bind_run_options(*options_, config_);
}

int rc_params_command::run() {
  if (auto problem = validate_rc_params(config_)) return usage_error("rc-params", *problem);
  const std::string source = config_.rc_params_file.empty() ? std::string("the built-in defaults")
                                                            : "from " + shown_path(config_.rc_params_file);
  return print_out("rc-params", rc_params_toml(config_.chain.rc_params, config_.chain.rc_scale, source)) ? exit_ok
                                                                                                         : exit_failed;
}

}  // namespace apiary::harness
