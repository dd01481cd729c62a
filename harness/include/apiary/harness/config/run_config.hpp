// run_config: everything one `apiary run` is told, nested by the module that uses it. The
// chain, the colony and the writer get their own option structs as they are (no copies of
// their fields here); options.cpp binds each command-line option straight to its field, and
// resolve() ties together the few fields that one option sets for two modules. The defaults
// are those of configs/default.toml (a test keeps the two in sync). Plain values: not
// thread-safe to modify, safe to share read-only.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/colony/colony_config.hpp"
#include "apiary/core/base/named_enum.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/slot_schedule.hpp"
#include "apiary/harness/io/run_log.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"

namespace apiary::harness {

// The most genesis accounts a run or a workload may have (--accounts, a workload's header).
inline constexpr std::uint32_t max_genesis_accounts = 10'000'000;

// When a run stops: whichever set limit comes first (0: no limit). Warm-up blocks come on top.
struct stop_conditions {
  std::uint32_t blocks = 200;
  std::uint32_t warmup_blocks = 5;
  double duration_s = 0;
  std::uint64_t transactions = 0;
  // A run in which no block completes and no transaction is accepted for this long failed.
  double stall_timeout_s = 60;
};

// The writer queue between the colony and the writer.
struct queue_settings {
  queen::queue_policy policy = queen::queue_policy::unbounded;
  std::uint32_t capacity = 10'000;  // queue_policy::bounded
  double gather_s = 0.001;          // writer_queue's gather time
};

enum class progress_mode : std::uint8_t { automatic, on, off };
inline constexpr std::array<core::enum_name<progress_mode>, 3> progress_mode_names{
    {{"auto", progress_mode::automatic}, {"on", progress_mode::on}, {"off", progress_mode::off}}};

// Where a run's results and records go.
struct outputs {
  std::string report;  // empty: results/<start time>-<name>.json
  std::string dump_transactions;
  std::string dump_blocks;
  std::uint32_t dump_limit = 1000;
  std::uint32_t dump_block_limit = 3;
  // Every applied block as a Hive block_log with its .artifacts (cycle/block_log_out.hpp); empty: none.
  std::string block_log;
  progress_mode progress = progress_mode::automatic;
  log_level log = log_level::warn;  // on stderr; the log file holds info and up
  std::string log_file;             // empty: beside the report (.log); "none": no file
  // Live figures every interval_s while the run goes (interval_log.hpp); empty: off.
  double interval_s = 1.0;
  std::uint32_t checkpoint_blocks = 0;  // also end a record after this many blocks; 0: by time only
  std::string interval_log;
  std::string prometheus_textfile;
  std::string hgrm_dir;  // each latency stage's histogram as <stage>.hgrm; empty: none
  // A CPU profile of the measured window (perf record, folded stacks, a flame graph) in this
  // directory (harness/src/cycle/profile.hpp); empty: none.
  std::string profile_dir;
};

struct run_config {
  std::string name = "default";  // names the report file; a config file's stem by default
  std::string config_file;       // empty: the built-in defaults alone

  stop_conditions stop;
  core::chain_options chain;
  // A state snapshot or state file to start from instead of the genesis (io/state_file.hpp);
  // empty: genesis. A state file is mapped: prefault reads its pages in before the warm-up,
  // verify checks its whole content digest first.
  std::string state;
  // Or the state this many blocks of the mix make on the genesis, from the state cache (made
  // there on first use: replay/state_cache.hpp); 0: none.
  std::uint32_t state_blocks = 0;
  bool state_prefault = true;
  bool state_verify = false;
  // The --rc-params file the chain's RC base parameters came from (chain.rc_params); empty:
  // the built-in ones.
  std::string rc_params_file;
  colony::colony_config colony = default_colony();
  queen::writer_config writer;
  queue_settings queue;
  // What ends a block: its size (the writer's targets) or its slot of the chain's clock, each
  // slot offering slot_transactions (drawn by block number and --seed). resolve() gives the
  // one schedule to the colony (its per-block budget) and to the writer (its block cut).
  core::block_trigger blocks_by = core::block_trigger::size;
  core::slot_schedule slot_transactions;
  // The chain's maximum block size: the writer's target may not exceed it (Hive's 2 MiB;
  // raised only for sweeps).
  std::uint32_t max_block_size = core::chain_limits::max_block_size;
  outputs out;
  bool audit = false;  // check the state's invariants after the run (audit.hpp)
  // Per-thread performance counters over the measured window (cycle/thread_counters.hpp).
  bool counters = true;
  // The writer on a CPU of its own, the run's other threads off it (cycle/cpu_pinning.hpp).
  bool pin = false;

  // Testing only (a hidden option): the stop observer throws at this block, so the failure
  // path can be exercised end to end. 0: never.
  std::uint32_t fail_at_block = 0;

  // What `apiary run` changes in the colony's own defaults.
  static colony::colony_config default_colony();
};

// Ties the fields one option sets for two modules, after every option is set: the chain
// checks authority exactly when the colony signs, the colony deals the chain's genesis
// accounts and sizes its block budget by the writer's block, and on the chain's clock the
// colony (in block-budget mode) and the writer share the slot schedule. Call before validate().
void resolve(run_config& c);

// The chain's options with its dedup table sized for the run: an hour of full blocks of the
// mix, plus the reversible ones, with a tenth to spare, or `most_ids` when fewer (a replay's
// workload). Without it the table rehashes each time it doubles, and the rehash of millions
// of ids stops one block for most of a second. The comments' table likewise, for the run's
// blocks of the mix's comments.
core::chain_options sized_chain(const run_config& c,
                                std::uint64_t most_ids = std::numeric_limits<std::uint64_t>::max());

// What a command does with the options it takes, for validate()'s refusal of a value that
// would do nothing there: `apiary snapshot` writes no report, and makes blocks only with
// --blocks; `apiary replay` writes a report only with --report.
struct option_use {
  std::string_view command = "run";
  bool reports = true;             // the RC statistics' archives (--rc-stats-blocks) go into its report
  std::string_view report_option;  // !reports: the option that would ask for one (empty: none)
  bool makes_blocks = true;        // it generates transactions and makes blocks of them
};

// Cross-option checks after resolve(): a message naming the option(s), the value and what is
// allowed, or nullopt. Single values are checked where they are bound (options.cpp).
std::optional<std::string> validate(const run_config& c, const option_use& use = {});
// The RC parameters at the rc_scale (part of validate()): the message naming --rc-params'
// file, the table and the key, or nullopt.
std::optional<std::string> validate_rc_params(const run_config& c);
// Whether the chain starts from a state (--state or --state-blocks) rather than its genesis,
// and the option that says so, for messages ("--state PATH", "--state-blocks N").
bool starts_from_state(const run_config& c);
std::string state_option_text(const run_config& c);
// Before resolve(): the checks that depend on what the user gave, not only on the values
// (`given`: the names of the options given on the command line or in the config file): an
// option given explicitly whose value resolve() would change, because the combination cannot
// take effect.
std::optional<std::string> validate_given(const run_config& c, const std::vector<std::string>& given);

// Text parsers the options share (and the tests). Sizes: a whole number of bytes with an
// optional suffix (B, K/KiB = 1024, M/MiB = 1024^2) and an optional "+N"/"-N" term:
// "64KiB", "2MiB-256". Durations: seconds with an optional unit (ms, s, m, h): "90", "1.5m".
// Counts: digits with optional digit groups (100_000, 100'000).
std::optional<std::uint64_t> parse_size(std::string_view text);
std::optional<double> parse_duration(std::string_view text);
std::optional<bool> parse_toggle(std::string_view text);
std::optional<std::uint64_t> parse_count(std::string_view text);

// The --rate value as the option takes it: infinite, block, or a number of transactions
// per second.
std::string rate_text(const colony::colony_config& c);

}  // namespace apiary::harness
