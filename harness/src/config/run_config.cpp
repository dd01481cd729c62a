#include "apiary/harness/config/run_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "apiary/colony/colony.hpp"
#include "apiary/core/base/number_text.hpp"
#include "apiary/harness/config/rc_params_file.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/state_file.hpp"

namespace apiary::harness {

namespace {

using core::number_text;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::string_view s = trim(text);
  // Digit groups for readability: 100_000 (TOML) or 100'000.
  std::string digits;
  for (char c : s) {
    if (c == '_' || c == '\'') continue;
    if (c < '0' || c > '9') return std::nullopt;
    digits.push_back(c);
  }
  if (digits.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (r.ec != std::errc{} || r.ptr != digits.data() + digits.size()) return std::nullopt;
  return v;
}

namespace {

// One term of a size: digits and an optional binary unit.
std::optional<std::uint64_t> parse_size_term(std::string_view s) {
  s = trim(s);
  std::size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '\'')) ++i;
  auto n = parse_count(s.substr(0, i));
  if (!n) return std::nullopt;
  const std::string unit = lower(trim(s.substr(i)));
  std::uint64_t mult = 0;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kib") {
    mult = 1024;
  } else if (unit == "m" || unit == "mib") {
    mult = 1024 * 1024;
  } else {
    return std::nullopt;
  }
  if (*n > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
  return *n * mult;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::string_view s = trim(text);
  const std::size_t op = s.find_first_of("+-");
  if (op == std::string_view::npos) return parse_size_term(s);
  auto a = parse_size_term(s.substr(0, op));
  auto b = parse_size_term(s.substr(op + 1));
  if (!a || !b) return std::nullopt;
  if (s[op] == '+') {
    if (*a > std::numeric_limits<std::uint64_t>::max() - *b) return std::nullopt;
    return *a + *b;
  }
  if (*b > *a) return std::nullopt;
  return *a - *b;
}

std::optional<double> parse_duration(std::string_view text) {
  std::string_view s = trim(text);
  double mult = 1;
  std::string_view number = s;
  if (s.ends_with("us")) {
    mult = 1e-6;
    number = s.substr(0, s.size() - 2);
  } else if (s.ends_with("ms")) {
    mult = 0.001;
    number = s.substr(0, s.size() - 2);
  } else if (s.ends_with("s")) {
    number = s.substr(0, s.size() - 1);
  } else if (s.ends_with("m")) {
    mult = 60;
    number = s.substr(0, s.size() - 1);
  } else if (s.ends_with("h")) {
    mult = 3600;
    number = s.substr(0, s.size() - 1);
  }
  auto v = parse_double(number);
  if (!v) return std::nullopt;
  return *v * mult;
}

std::optional<bool> parse_toggle(std::string_view text) {
  const std::string v = lower(trim(text));
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  return std::nullopt;
}

colony::colony_config run_config::default_colony() {
  colony::colony_config k;
  // Derive every key before the run, so the first measured blocks do not pay for it.
  k.warm_keys = true;
  return k;
}

void resolve(run_config& c) {
  // Unsigned transactions pass only when the chain skips the authority check.
  c.chain.check_authority = c.colony.sign;
  // A state file is a mapped chain's memory: it runs mapped (an explicit heap was refused:
  // validate_given()), and the report says so.
  if (is_state_file(c.state) || c.state_blocks != 0) c.chain.memory = core::state_memory::mapped;
  // The pending state can be a block's only where its bookkeeping is in state as a block
  // leaves it: elsewhere reuse is off, and the report says so (given explicitly, such a
  // combination is refused: validate_given()).
  if (c.chain.custom_ops != core::counter_mode::local || c.chain.rc != core::rc_mode::state)
    c.chain.reuse_pending = false;
  c.colony.use_genesis_of(c.chain);
  c.colony.block_size = c.writer.block_size;
  c.colony.attach_signer_keys = true;
  // Blocks on the chain's clock: the colony offers each slot's count (a block budget), the
  // writer cuts the block once that many are answered; the same schedule and seed for both.
  c.colony.slots.reset();
  c.writer.clock.reset();
  if (c.blocks_by == core::block_trigger::clock) {
    core::slot_schedule s = c.slot_transactions;
    s.seed = c.colony.seed;
    c.colony.rate = colony::rate_mode::block_budget;
    c.colony.slots = s;
    c.writer.clock = s;
  }
}

std::string rate_text(const colony::colony_config& c) {
  if (c.rate == colony::rate_mode::tps) return number_text(c.tps_limit);
  return std::string(colony::to_string(c.rate));
}

namespace {

// An option set away from its default in a mode that does not use it: accepted, it would be
// ignored, and a comparison that varies it would compare the same thing twice. The default
// itself passes, so a config file listing every option (--print-config) still reads back.
std::optional<std::string> inert_option(const run_config& c) {
  const run_config d;
  const colony::colony_config& k = c.colony;
  const std::string submit(colony::to_string(k.submit));
  if (k.submit != colony::submit_mode::async && k.async_tasks != d.colony.async_tasks)
    return "--async-tasks " + std::to_string(k.async_tasks) + ": only used with --submit async, not --submit " + submit;
  if (c.queue.policy != queen::queue_policy::bounded && c.queue.capacity != d.queue.capacity)
    return "--queue-capacity " + std::to_string(c.queue.capacity) + ": only used with --queue bounded, not --queue " +
           std::string(queen::to_string(c.queue.policy));
  if (k.submit == colony::submit_mode::sync && c.queue.gather_s != d.queue.gather_s)
    return "--queue-gather " + number_text(c.queue.gather_s) +
           " s: not used with --submit sync (nothing more is submitted while the writer waits)";
  const outputs& o = c.out;
  if (o.interval_log.empty() && o.prometheus_textfile.empty() && o.interval_s != d.out.interval_s)
    return "--interval " + number_text(o.interval_s) + " s: only used with --interval-log or --prometheus-textfile";
  if (o.dump_transactions.empty() && o.dump_limit != d.out.dump_limit)
    return "--dump-limit " + std::to_string(o.dump_limit) + ": only used with --dump-transactions";
  if (o.dump_blocks.empty() && o.dump_block_limit != d.out.dump_block_limit)
    return "--dump-block-limit " + std::to_string(o.dump_block_limit) + ": only used with --dump-blocks";
  if (!o.block_log.empty() && starts_from_state(c))
    return "--block-log: a block_log starts at block 1, and a run from " + state_option_text(c) +
           " starts after its head block";
  if (c.blocks_by != core::block_trigger::clock && c.slot_transactions != d.slot_transactions)
    return "--slot-transactions " + core::to_string(c.slot_transactions) + ": only used with --blocks-by clock";
  return std::nullopt;
}

// What a command that writes no report, or makes no block, would not use: set away from its
// default, as inert_option(). (The block size stays: it sizes the chain's id table.)
std::optional<std::string> unused_by_command(const run_config& c, const option_use& use) {
  const run_config d;
  const std::string command = "apiary " + std::string(use.command);
  if (!use.reports && c.chain.rc_stats_blocks != d.chain.rc_stats_blocks)
    return "--rc-stats-blocks " + std::to_string(c.chain.rc_stats_blocks) + ": its archives go into a report, and " +
           command + " writes " +
           (use.report_option.empty() ? std::string("none") : "one only with " + std::string(use.report_option));
  if (use.makes_blocks) return std::nullopt;
  const colony::colony_config& k = c.colony;
  const std::pair<bool, std::string> generating[] = {
      {k.threads != d.colony.threads, "--threads " + std::to_string(k.threads)},
      {k.seed != d.colony.seed, "--seed " + std::to_string(k.seed)},
      {colony::to_string(k.mix) != colony::to_string(d.colony.mix), "--mix " + colony::to_string(k.mix)},
      {k.faults.any(), "--faults " + colony::to_string(k.faults)},
      {!(k.payers == d.colony.payers), "--payer-weights " + colony::to_string(k.payers)},
      {k.sign != d.colony.sign, std::string("--sign ") + (k.sign ? "on" : "off")},
  };
  for (const auto& [set, option] : generating) {
    if (!set) continue;
    std::string problem = option;
    problem += ": " + command +
               " makes no block without --blocks, so no transaction is generated; give --blocks N or leave it out";
    return problem;
  }
  return std::nullopt;
}

// Values that could never produce a block: the run would only stall.
std::optional<std::string> no_block_ever(const run_config& c) {
  const colony::colony_config& k = c.colony;
  // On the chain's clock blocks come whatever is accepted: vesting 0 is a run of empty blocks.
  if (c.chain.genesis_vesting == 0 && c.blocks_by != core::block_trigger::clock)
    return "--genesis-vesting 0: every account's resource credits would be 0, so the chain would reject every "
           "transaction (insufficient_rc) and no block would come; give at least 1, or --blocks-by clock";
  const double stall = c.stop.stall_timeout_s;
  if (k.rate == colony::rate_mode::tps && stall > 0 && 1.0 / k.tps_limit >= stall)
    return "--rate " + number_text(k.tps_limit) + ": one transaction every " + number_text(1.0 / k.tps_limit) +
           " s, not within --stall-timeout " + number_text(stall) + " s: the run would stall before its first block";
  return std::nullopt;
}

// On the chain's clock the slot schedule sets the colony's rate and ends the blocks: a rate,
// block budget or block-transaction target given with it could not take effect.
std::optional<std::string> clock_conflict(const run_config& c) {
  if (c.blocks_by != core::block_trigger::clock) return std::nullopt;
  const std::string why =
      ": not with --blocks-by clock, where each slot offers --slot-transactions and its block "
      "comes once they are answered";
  if (c.colony.rate == colony::rate_mode::tps) return "--rate " + rate_text(c.colony) + why;
  if (c.colony.block_budget != 0) return "--block-budget " + std::to_string(c.colony.block_budget) + why;
  if (c.writer.block_transactions != 0)
    return "--block-transactions " + std::to_string(c.writer.block_transactions) + why;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_given(const run_config& c, const std::vector<std::string>& given) {
  const auto was_given = [&given](std::string_view name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  if (auto problem = clock_conflict(c)) return problem;
  if (!c.state.empty() && c.state_blocks != 0)
    return "--state " + shown_path(c.state) + " and --state-blocks " + std::to_string(c.state_blocks) +
           " both say where the chain starts: give one";
  // Away from their defaults without a state file they would change nothing.
  if (!starts_from_state(c) && !c.state_prefault)
    return "--state-prefault off applies to a state file: give --state FILE or --state-blocks N";
  if (!starts_from_state(c) && c.state_verify)
    return "--state-verify on applies to a state file: give --state FILE or --state-blocks N";
  if (was_given("state-memory") && c.chain.memory == core::state_memory::heap &&
      (is_state_file(c.state) || c.state_blocks != 0))
    return state_option_text(c) + (c.state_blocks != 0 ? " starts from" : " is") +
           " a state file, which maps whole and never loads into the heap: leave out --state-memory heap, or "
           "start from a snapshot (apiary snapshot --state-memory heap writes one)";
  // Given on where it cannot take effect (resolve() would turn it off, and a comparison of it
  // would compare the same thing twice).
  const bool reuse_applies = c.chain.custom_ops == core::counter_mode::local && c.chain.rc == core::rc_mode::state;
  if (was_given("reuse-pending") && c.chain.reuse_pending && !reuse_applies) {
    if (c.chain.custom_ops != core::counter_mode::local)
      return "--reuse-pending on needs --custom-ops local (the counters must be in state as a block leaves them), "
             "not --custom-ops " +
             std::string(core::to_string(c.chain.custom_ops));
    return "--reuse-pending on needs --rc state (the RC charges must be in state as a block leaves them), not --rc " +
           std::string(core::to_string(c.chain.rc));
  }
  return std::nullopt;
}

bool starts_from_state(const run_config& c) { return !c.state.empty() || c.state_blocks != 0; }

std::string state_option_text(const run_config& c) {
  return c.state_blocks != 0 ? "--state-blocks " + std::to_string(c.state_blocks) : "--state " + shown_path(c.state);
}

std::optional<std::string> validate_rc_params(const run_config& c) {
  auto problem = check_rc_params(c.chain.rc_params, c.chain.rc_scale);
  if (!problem) return std::nullopt;
  return c.rc_params_file.empty() ? "--rc-scale " + std::to_string(c.chain.rc_scale) + ": " + *problem
                                  : "--rc-params: " + shown_path(c.rc_params_file) + ": " + *problem;
}

std::optional<std::string> validate(const run_config& c, const option_use& use) {
  const colony::colony_config& k = c.colony;
  if (auto problem = inert_option(c)) return problem;
  if (auto problem = unused_by_command(c, use)) return problem;
  if (auto problem = no_block_ever(c)) return problem;
  if (auto problem = k.faults.validate(k.sign)) return "--faults " + colony::to_string(k.faults) + ": " + *problem;
  if (auto problem = validate_rc_params(c)) return problem;
  const std::uint32_t block_size = c.writer.block_size;
  if (block_size > c.max_block_size) {
    if (c.max_block_size == core::chain_limits::max_block_size)
      return "--block-size " + std::to_string(block_size) + ": above the chain's maximum block size " +
             std::to_string(c.max_block_size) + " (2 MiB); allowed up to that, or raise --max-block-size for a sweep";
    return "--block-size " + std::to_string(block_size) + ": above --max-block-size " +
           std::to_string(c.max_block_size);
  }
  if (c.chain.genesis_accounts < k.threads)
    return "--accounts " + std::to_string(c.chain.genesis_accounts) + ": fewer than the " + std::to_string(k.threads) +
           " --threads (each producer needs accounts of its own)";
  if (!core::total_vesting_of(c.chain.genesis_vesting, c.chain.genesis_accounts))
    return "--genesis-vesting " + core::to_string(c.chain.genesis_vesting) + ": summed over the " +
           std::to_string(c.chain.genesis_accounts) +
           " accounts it does not fit in 64 bits (every RC price scales with the sum); lower it or --accounts";
  if (k.block_budget != 0 && k.rate != colony::rate_mode::block_budget)
    return "--block-budget " + std::to_string(k.block_budget) + ": only used with --rate block, not --rate " +
           rate_text(k);
  if (c.out.interval_s < 0.05)
    return "--interval " + fmt::format("{}", c.out.interval_s) +
           " s: below 50 ms, the harness's polling period; give e.g. 1s or 500ms";
  if (c.out.checkpoint_blocks != 0 && c.out.interval_log.empty())
    return "--checkpoint-blocks " + std::to_string(c.out.checkpoint_blocks) +
           ": the checkpoints are --interval-log records; give --interval-log PATH too";
  // Outputs that name one file are found by check_distinct() (output_file.hpp), which knows
  // the files themselves and not only their spellings.
  // What the colony checks itself (mix, account names), in its own words.
  if (auto problem = k.validate()) return "invalid colony configuration: " + *problem;
  return std::nullopt;
}

core::chain_options sized_chain(const run_config& c, std::uint64_t most_ids) {
  core::chain_options o = c.chain;
  std::uint64_t per_block = colony::estimate_block_transactions(c.colony);
  if (c.writer.block_transactions != 0) per_block = std::min<std::uint64_t>(per_block, c.writer.block_transactions);
  const std::uint64_t blocks = core::chain_limits::expiration_blocks + o.reversible_blocks + 1;
  o.expected_transaction_ids = std::min(per_block * blocks * 11 / 10, most_ids);
  // Comments stay until they pay out: the run's blocks of them (an hour's when it is not
  // counted in blocks), the mix's share of articles and replies, a tenth to spare.
  const colony::mix_config& mix = c.colony.mix;
  const std::uint64_t comment_weight = mix[colony::op_kind::article].weight + mix[colony::op_kind::reply].weight;
  const std::uint64_t run_blocks =
      c.stop.blocks != 0 ? std::uint64_t{c.stop.blocks} + c.stop.warmup_blocks : core::chain_limits::expiration_blocks;
  const std::uint64_t comments = per_block * comment_weight / std::max<std::uint64_t>(1, mix.total_weight()) *
                                 std::min<std::uint64_t>(run_blocks, o.cashout_blocks);
  o.expected_comments = std::min(comments * 11 / 10, most_ids);
  return o;
}

}  // namespace apiary::harness
