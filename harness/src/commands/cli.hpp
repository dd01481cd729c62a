// The `apiary` command line (CLI11), one struct per subcommand, each with its options
// (setup) and what it does once they are parsed (run):
//   run       the cycle test: every option of bind_run_options(), `--config FILE` (a TOML
//             file whose keys are the option names; the command line overrides it) and
//             `--print-config`;
//   workload  generate a seeded workload and save it (`--out FILE`);
//   replay    push a saved (or freshly generated) workload through the writer and the core
//             on one thread (replay.hpp);
//   snapshot  write a chain's state, after the genesis or --blocks blocks of the mix
//             (replay/snapshot.hpp, io/state_file.hpp), for run and replay's --state.
// workload, replay and snapshot take the run options that shape what they generate and
// replay, with the same names, help and validators. Bad input gives one line naming the option, the value
// and what is allowed, and exit status 2.
#pragma once

#include <cstdint>
#include <string>

#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"

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
