// The `apiary` command line (CLI11):
//   run       every option of the run_options() table, `--config FILE` (a CLI11 TOML config
//             file whose keys are the option names; the command line overrides it; an
//             unknown key is an error) and `--print-config`;
//   workload  generate a seeded workload and save it (`--out FILE`);
//   replay    push a saved (or freshly generated) workload through the writer and the core
//             on one thread (replay.hpp).
// workload and replay take the run options that make sense for them, with the same names,
// help and parsers. Bad input gives one line naming the option, the value and what is
// allowed, and exit status 2.
#pragma once

#include <string>

#include "apiary/harness/run_config.hpp"

namespace apiary::harness {

// Exit status of `apiary`.
enum exit_status : int {
  exit_ok = 0,
  exit_failed = 1,       // the run failed (its report says why) or the report could not be written
  exit_usage = 2,        // bad command line, config file or output path: nothing ran
  exit_sigint = 130,     // interrupted by SIGINT (128 + 2); the report is marked interrupted
  exit_sigterm = 143,    // interrupted by SIGTERM (128 + 15)
};

enum class subcommand : std::uint8_t { run, workload, replay };

struct command {
  bool run = false;           // otherwise exit with `status` (help was shown, or an error)
  int status = exit_ok;
  subcommand which = subcommand::run;
  bool print_config = false;  // print the effective config as TOML instead of running
  run_config config;

  // workload and replay.
  std::uint64_t transactions = 20'000;  // transactions to generate
  std::string workload_out;             // workload: where it goes
  std::string workload_in;              // replay: the saved workload (empty: generate one)
  std::string save_workload;            // replay: also save the generated workload here
  std::string replay_report;            // replay: the JSON result (empty: none)
};

// The defaults of `apiary replay` and `apiary workload` where they differ from `apiary run`:
// a genesis small enough that a replay under callgrind starts in seconds.
inline constexpr std::uint32_t replay_default_accounts = 10'000;

// Parses argv; prints help or the error line itself.
command parse_command_line(int argc, const char* const* argv);

// The effective config as a config file (TOML) that --config reads back.
std::string config_to_toml(const run_config& c);

// Reads a config file into c, leaving alone the options in `given` (the command line's).
// An error message naming the file and the key, or nullopt.
std::optional<std::string> apply_config_file(const std::string& path, run_config& c,
                                             const std::vector<std::string>& given);

}  // namespace apiary::harness
