// run_config: everything one `apiary run` is told, and the table of its options. The table
// is the one source of each option's name (also its config-file key), help text, default
// and parser, so the command line, config files, --print-config and the report's "config"
// section can never disagree. The defaults are those of configs/default.toml (a test keeps
// the two in sync). Plain values: not thread-safe to modify, safe to share read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "apiary/colony/colony_config.hpp"
#include "apiary/core/chain_options.hpp"
#include "apiary/queen/writer_queue.hpp"

namespace apiary::harness {

// What besides the in-flight brake limits the producers (colony::rate_mode).
enum class rate_kind : std::uint8_t {
  infinite,  // as fast as the machine allows
  block,     // a per-block transaction budget (Hive's per-block mode)
  tps,       // a number of transactions per second for the whole colony
};

enum class progress_mode : std::uint8_t { automatic, on, off };

struct run_config {
  std::string name = "default";  // names the report file; a config file's stem by default
  std::string config_file;       // empty: the built-in defaults alone

  // When to stop: whichever set limit comes first (0: no limit). Warm-up blocks come on top.
  std::uint32_t blocks = 200;
  std::uint32_t warmup_blocks = 5;
  double duration_s = 0;
  std::uint64_t transactions = 0;
  // A run in which no block completes and no transaction is accepted for this long failed.
  double stall_timeout_s = 60;

  // The colony.
  std::uint32_t threads = 2;
  rate_kind rate = rate_kind::infinite;
  double rate_tps = 0;            // rate_kind::tps
  std::uint32_t block_budget = 0;  // rate_kind::block; 0: derived from the block size
  bool sign = true;
  std::uint64_t seed = 1;
  std::uint32_t accounts = 100'000;
  colony::mix_config mix;       // Hive's typical mix
  colony::fault_config faults;  // none
  std::uint32_t in_flight = 1000;
  colony::submit_mode submit = colony::submit_mode::fire_and_forget;
  bool warm_keys = true;
  bool measure_cpu = true;

  // The queen and the chain.
  std::uint32_t block_size = core::chain_limits::max_block_size - 256;
  std::uint32_t max_block_size = core::chain_limits::max_block_size;
  std::uint32_t block_transactions = 0;
  queen::queue_policy queue = queen::queue_policy::unbounded;
  std::uint32_t queue_capacity = 10'000;  // queue_policy::bounded
  core::dedup_mode dedup = core::dedup_mode::split;
  core::counter_mode custom_ops = core::counter_mode::local;
  core::signer_source signers = core::signer_source::attached;
  bool block_session = true;
  std::uint32_t reversible_blocks = 3;
  bool keep_alive = true;
  bool pool_objects = true;
  bool pool_undo = true;

  // Output.
  std::string report;  // empty: results/<start time>-<name>.json
  std::string dump_transactions;
  std::string dump_blocks;
  std::uint32_t dump_limit = 1000;
  std::uint32_t dump_block_limit = 3;
  bool audit = false;  // check the state's invariants after the run (audit.hpp)
  progress_mode progress = progress_mode::automatic;

  // Testing only (a hidden option, not in the table): the block callback throws at this
  // block, so the failure path can be exercised end to end. 0: never.
  std::uint32_t fail_at_block = 0;
};

enum class value_kind : std::uint8_t {
  number,  // JSON number, TOML bare value
  text,    // JSON and TOML string
  toggle,  // "on" / "off"; a JSON boolean
};

// One option of `apiary run`: `--name VALUE` on the command line, `name = VALUE` in a config
// file (underscores are accepted for hyphens there).
struct option_spec {
  std::string_view name;
  std::string_view placeholder;  // what VALUE looks like in --help
  std::string_view help;
  value_kind kind;
  // The value as text, in the form the parser takes back.
  std::string (*get)(const run_config&);
  // Sets the value from text; on failure, what is allowed (the caller names the option).
  std::optional<std::string> (*set)(run_config&, std::string_view);
  // Shown as the default in --help instead of get(run_config{}) when not empty.
  std::string_view default_text = {};
};

std::span<const option_spec> run_options();
const option_spec* find_option(std::string_view name);

// Cross-option checks after every value is set: a message naming the option(s), the value
// and what is allowed, or nullopt.
std::optional<std::string> validate(const run_config& c);

// What the colony, writer and chain are built from.
colony::colony_config make_colony_config(const run_config& c, const core::chain_options& chain);
core::chain_options make_chain_options(const run_config& c);

// Text parsers shared with the tests. Sizes: a whole number of bytes with an optional
// suffix (B, K/KiB = 1024, M/MiB = 1024^2) and an optional "+N"/"-N" term: "64KiB",
// "2MiB-256". Durations: seconds with an optional unit (ms, s, m, h): "90", "1.5m".
std::optional<std::uint64_t> parse_size(std::string_view text);
std::optional<double> parse_duration(std::string_view text);
std::optional<bool> parse_toggle(std::string_view text);
std::optional<std::uint64_t> parse_count(std::string_view text);

std::string_view to_string(rate_kind r);
std::string_view to_string(progress_mode p);
std::string rate_text(const run_config& c);

}  // namespace apiary::harness
