#include "commands/cli.hpp"

#include <CLI/CLI.hpp>

#include <string>

#include "commands/blocks_command.hpp"
#include "commands/command_support.hpp"
#include "commands/parse_errors.hpp"
#include "commands/rc_params_command.hpp"
#include "commands/replay_command.hpp"
#include "commands/run_command.hpp"
#include "commands/snapshot_command.hpp"
#include "commands/workload_command.hpp"
#include "cycle/signals.hpp"

namespace apiary::harness {

int run_apiary(int argc, const char* const* argv) {
  // A closed stdout or stderr (`apiary run | head -1`) is a write error handled as one.
  ignore_sigpipe();
  CLI::App app("apiary: Hive's colony + queen full-block-cycle test for a node core", "apiary");
  app.require_subcommand(1, 1);
  app.footer(exit_help);
  // Every option of every command takes one value once: a second is an error, not the one
  // that wins (the subcommands take these defaults as they are added).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  run_command run;
  workload_command workload;
  replay_command replay;
  snapshot_command snapshot;
  rc_params_command rc_params;
  blocks_command blocks;
  run.setup(app);
  workload.setup(app);
  replay.setup(app);
  snapshot.setup(app);
  rc_params.setup(app);
  blocks.setup(app);

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
  if (workload.parsed()) return guarded("workload", [&] { return workload.run(); });
  if (replay.parsed()) return guarded("replay", [&] { return replay.run(argc, argv); });
  if (snapshot.parsed()) return guarded("snapshot", [&] { return snapshot.run(); });
  if (rc_params.parsed()) return guarded("rc-params", [&] { return rc_params.run(); });
  if (blocks.parsed()) return guarded("blocks", [&] { return blocks.run(); });
  return guarded("run", [&] { return run.run(argc, argv); });
}

}  // namespace apiary::harness
