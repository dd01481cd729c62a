// The `apiary` command line (CLI11): run_apiary parses argv and hands it to the one subcommand
// named, each a class in its own file with its options (setup) and what it does once they are
// parsed (run):
//   run        the cycle test (run_command.hpp): every option of bind_run_options(),
//              `--config FILE` (a TOML file whose keys are the option names; the command line
//              overrides it) and `--print-config`;
//   workload   generate a seeded workload and save it (`--out FILE`, workload_command.hpp);
//   replay     push a saved (or freshly generated) workload through the writer and the core
//              on one thread (replay_command.hpp, replay.hpp);
//   snapshot   write a chain's state, after the genesis or --blocks blocks of the mix
//              (snapshot_command.hpp, replay/snapshot.hpp, io/state_file.hpp), for run and
//              replay's --state;
//   rc-params  print the RC parameters as an --rc-params file (rc_params_command.hpp).
// workload, replay and snapshot take the run options that shape what they generate and
// replay, with the same names, help and validators. What they share (the error line, the
// output checks, stdout) is command_support.hpp's. Bad input gives one line naming the
// option, the value and what is allowed, and exit status 2.
#pragma once

#include <cstdint>
#include <string>

namespace apiary::harness {

// Exit status of `apiary`.
enum exit_status : int {
  exit_ok = 0,
  exit_failed = 1,     // the run failed (its report says why) or the report could not be written
  exit_usage = 2,      // bad command line, config file or output path: nothing ran
  exit_sighup = 129,   // interrupted by SIGHUP (128 + 1): the terminal closed; the report is marked interrupted
  exit_sigint = 130,   // interrupted by SIGINT (128 + 2)
  exit_sigterm = 143,  // interrupted by SIGTERM (128 + 15)
};

// The defaults of `apiary replay` and `apiary workload` where they differ from `apiary run`:
// a genesis small enough that a replay under callgrind starts in seconds.
inline constexpr std::uint32_t replay_default_accounts = 10'000;

// Parses argv and runs the subcommand; returns the exit status. Prints help, the error line
// or the command's own output.
int run_apiary(int argc, const char* const* argv);

}  // namespace apiary::harness
