// command_support: what every subcommand of `apiary` shares: its one error line and the usage
// exit status, the checks of its output paths before anything runs, its output on stdout,
// --state's chain, and the guard that turns an escaping exception into the error line and
// exit status 1. Every message goes out as "apiary COMMAND: problem" on one line.
// Thread safety: the main thread's, before and after a command runs its threads.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/state_file.hpp"
#include "commands/cli.hpp"

namespace apiary::harness {

// The exit status footer of `apiary --help` and `apiary run --help`.
inline constexpr const char* exit_help =
    "Exit status: 0 the run completed; 1 the run failed (the report says why), or the report or the summary "
    "could not be written; 2 bad command line, config file or output path (nothing ran); 129 interrupted by "
    "SIGHUP (the terminal closed), 130 by SIGINT, 143 by SIGTERM (the report is marked \"interrupted\": true).";

// Prints the one error line: "apiary COMMAND: problem", the problem on one short line.
void error_line(std::string_view command, const std::string& problem);

// Prints the one error line; returns the usage exit status.
int usage_error(std::string_view command, const std::string& problem);

// An output path that cannot be written is bad usage, found before anything runs: false
// after its error line.
bool writable(std::string_view command, const named_path& out);

// The files a command reads through its configuration, each named by its option (--config,
// --state, --rc-params; those not given are empty), and the genesis key cache's file of its
// chain: inputs no output may replace.
std::vector<named_path> config_inputs(const run_config& c);

// Every output distinct from the inputs and from each other, then each one writable: false
// after the error line.
bool outputs_usable(std::string_view command, const std::vector<named_path>& inputs,
                    const std::vector<named_path>& outputs);

// Writes a command's output on stdout; a failure (a full disk, a closed pipe) is an error
// line, and false.
bool print_out(std::string_view command, const std::string& text);

// --state FILE (config.state, opened as --state-prefault and --state-verify say): the chain it
// holds, with `options`, and where it came from in `source`; null for the genesis (no --state).
// A file that cannot be used is bad usage: its error line, and `status` set. A snapshot takes
// about four times its file in memory; a state file maps its pages as they are used.
std::unique_ptr<core::chain> load_state(std::string_view command, const run_config& config,
                                        const core::chain_options& options, state_source& source, int& status);

// --transactions of `apiary workload` and `apiary replay`: a generous bound (the memory check,
// memory_budget.hpp, usually says no long before it), and its help with the default.
inline constexpr std::uint64_t most_workload_transactions = 1'000'000'000;
std::string transactions_help(std::uint64_t transactions);

// Runs a parsed command; an exception that escapes it (out of memory, a failed write) is its
// error line and exit status 1.
template <class Body>
int guarded(std::string_view command, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    error_line(command, "out of memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    error_line(command, e.what());
  }
  return exit_failed;
}

}  // namespace apiary::harness
