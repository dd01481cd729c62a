#include "apiary/harness/config/options.hpp"

#include <spdlog/fmt/fmt.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>

#include "apiary/core/base/number_text.hpp"
#include "apiary/harness/config/rc_params_file.hpp"
#include "apiary/harness/io/error_text.hpp"

namespace apiary::harness {

namespace {

using core::number_text;

std::string number_text(std::uint64_t v) { return std::to_string(v); }
std::string number_text(std::uint32_t v) { return std::to_string(v); }

std::string toggle_text(bool v) { return v ? "on" : "off"; }

// A validator that rewrites the value into what CLI11 converts into the field, or says what
// is allowed: `rewrite` returns the new text, or nullopt when the value is not allowed.
CLI::Validator rewriting(std::string allowed, std::function<std::optional<std::string>(const std::string&)> rewrite) {
  return CLI::Validator(
      [allowed = std::move(allowed), rewrite = std::move(rewrite)](std::string& value) -> std::string {
        auto out = rewrite(value);
        if (!out) return "'" + shown(value) + "': " + allowed;
        value = std::move(*out);
        return {};
      },
      "");
}

template <class T>
CLI::Validator whole_number(T min, T max) {
  return rewriting("expected a whole number from " + std::to_string(min) + " to " + std::to_string(max),
                   [min, max](const std::string& v) -> std::optional<std::string> {
                     auto n = parse_count(v);
                     if (!n || *n < min || *n > max) return std::nullopt;
                     return std::to_string(*n);
                   });
}

// The largest chain maximum a sweep may set: far beyond Hive's 2 MiB, still addressable.
constexpr std::uint32_t largest_block = 256u * 1024 * 1024;
// A block must hold the largest transaction of the mix (an article: a 5,000-byte body and
// its beneficiaries), or the writer would produce empty blocks behind it forever.
constexpr std::uint32_t smallest_block = 16 * 1024;
constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
// Stop limits: far beyond any run, yet stated, so a typo is an error and not a week's run.
constexpr std::uint32_t most_blocks = 100'000'000;
// A week of blocks: more than any state a cache should hold.
constexpr std::uint32_t most_cached_state_blocks = 201'600;
constexpr std::uint64_t most_transactions = 1'000'000'000'000;
// The mix and fault texts: longer than any valid text (or item) is refused before the
// colony's parser echoes a part of it in an error.
constexpr std::size_t longest_list = 1000;
constexpr std::size_t longest_item = 80;

// What is wrong with the length of a KIND=... list, or nullopt.
std::optional<std::string> overlong(std::string_view text, std::string_view form) {
  if (text.size() > longest_list)
    return "'" + shown(text) + "': " + std::to_string(text.size()) + " characters; a " + std::string(form) +
           " text is at most " + std::to_string(longest_list);
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma - start > longest_item)
      return "'" + shown(text.substr(start, comma - start)) + "': longer than any " + std::string(form) +
             " item (at most " + std::to_string(longest_item) + " characters)";
    start = comma + 1;
  }
  return std::nullopt;
}

// --mix: the colony's parser, then the hard maxima the CLI will not clamp silently (the
// report would show a range the run never used).
std::string set_mix(colony::mix_config& mix, const std::string& text) {
  if (auto problem = overlong(text, "--mix")) return *problem;
  colony::mix_config m = mix;
  if (auto problem = colony::parse_mix(text, m)) return *problem;
  for (colony::op_kind k : colony::all_op_kinds) {
    const std::uint32_t hard = colony::mix_config::hard_max[colony::index_of(k)];
    if (m[k].max <= hard) continue;
    const std::string name(colony::op_kind_name(k));
    if (hard == 0) return fmt::format("{0}: max {1}: a {0} has no extra payload (0-0)", name, m[k].max);
    return fmt::format("{}: max {} is above {}, the largest extra payload of this kind (allowed: 0 to {} bytes)", name,
                       m[k].max, hard, hard);
  }
  mix = m;
  return {};
}

std::string set_faults(colony::fault_config& faults, const std::string& text) {
  if (auto problem = overlong(text, "--faults")) return *problem;
  return colony::parse_faults(text, faults).value_or("");
}

// Names: what a report file name may hold.
std::string check_name(const std::string& v) {
  const bool ok = !v.empty() && v.size() <= 64 && std::all_of(v.begin(), v.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' || ch == '_' || ch == '-';
  });
  return ok ? std::string() : "'" + shown(v) + "': expected 1 to 64 characters of a-z A-Z 0-9 . _ -";
}

// Paths: an empty one or "-" names no file (stdout is the summary's); leave the option out
// for none.
std::string check_path(const std::string& v) {
  if (v.empty()) return "expected a path (leave the option out for none)";
  if (v == "-") return "'-': expected a path (standard output is the summary's; /dev/stdout names it)";
  return {};
}

// --rate: infinite, block, or transactions per second ("5000", "5000tps").
std::string set_rate(colony::colony_config& k, const std::string& text) {
  std::string v = text;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (auto mode = colony::parse_rate_mode(v); mode && *mode != colony::rate_mode::tps) {
    k.rate = *mode;
    return {};
  }
  std::string_view n = v;
  if (n.ends_with("tps")) n.remove_suffix(3);
  double tps = 0;
  auto r = std::from_chars(n.data(), n.data() + n.size(), tps);
  const bool number = !n.empty() && r.ec == std::errc{} && r.ptr == n.data() + n.size();
  // A number out of range is told which bound it broke (1e10 is not "below 0").
  if (number && tps > 1e9)
    return "'" + shown(text) + "': above the largest rate, 1e9 (1,000,000,000) transactions per second";
  if (!number || !(tps > 0))
    return "'" + shown(text) +
           "': expected infinite, block, or a number of transactions per second above 0 and "
           "at most 1e9";
  k.rate = colony::rate_mode::tps;
  k.tps_limit = tps;
  return {};
}

}  // namespace

CLI::Validator count_check(std::uint64_t min, std::uint64_t max) { return whole_number(min, max); }

CLI::Validator path_check() { return CLI::Validator(check_path, ""); }

struct option_binder::bound {
  std::string name;
  value_kind kind;
  std::function<std::string()> get;
  std::string default_text;
  unsigned scope;
  bool shapes_state;
  CLI::Option* cli;
};

option_binder::option_binder(CLI::App& app, unsigned command_scope) : app_(app), command_scope_(command_scope) {}
option_binder::~option_binder() = default;

void option_binder::section(std::string group, unsigned scope) {
  group_ = std::move(group);
  scope_ = scope;
  shapes_state_ = true;
}

CLI::Option* option_binder::add(std::string_view name, std::string_view placeholder, value_kind kind,
                                std::string_view help, std::function<std::string()> get, std::string_view default_text,
                                const std::function<CLI::Option*(const std::string&, const std::string&)>& make) {
  if ((scope_ & command_scope_) == 0) return nullptr;
  const std::string shown = default_text.empty() ? (get().empty() ? "none" : get()) : std::string(default_text);
  CLI::Option* opt = make("--" + std::string(name), std::string(help) + " (default: " + shown + ")");
  opt->type_name(std::string(placeholder))->group(group_);
  bound_.push_back(std::make_unique<bound>(
      bound{std::string(name), kind, std::move(get), std::string(default_text), scope_, shapes_state_, opt}));
  return opt;
}

void option_binder::count(std::string_view name, std::uint32_t& field, std::uint32_t min, std::uint32_t max,
                          std::string_view help) {
  add(
      name, "N", value_kind::number, help, [&field] { return number_text(field); }, {},
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option(flag, field, text)->transform(whole_number(min, max));
      });
}

void option_binder::count(std::string_view name, std::uint64_t& field, std::uint64_t min, std::uint64_t max,
                          std::string_view help) {
  add(
      name, "N", value_kind::number, help, [&field] { return number_text(field); }, {},
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option(flag, field, text)->transform(whole_number(min, max));
      });
}

void option_binder::size(std::string_view name, std::uint32_t& field, std::uint32_t min, std::uint32_t max,
                         std::string_view help, std::string_view default_text) {
  const std::string allowed = "expected a size in bytes from " + std::to_string(min) + " to " + std::to_string(max) +
                              " (suffixes KiB and MiB, e.g. 64KiB, 2MiB-256)";
  add(
      name, "SIZE", value_kind::number, help, [&field] { return number_text(field); }, default_text,
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option(flag, field, text)
            ->transform(rewriting(allowed, [min, max](const std::string& v) -> std::optional<std::string> {
              auto n = parse_size(v);
              if (!n || *n < min || *n > max) return std::nullopt;
              return std::to_string(*n);
            }));
      });
}

void option_binder::duration(std::string_view name, double& field, double max_s, std::string_view help) {
  const std::string allowed = "expected a duration from 0 to " + number_text(max_s) + " s (e.g. 90, 90s, 2m, 500ms)";
  add(
      name, "TIME", value_kind::number, help, [&field] { return number_text(field); }, {},
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option(flag, field, text)
            ->transform(rewriting(allowed, [max_s](const std::string& v) -> std::optional<std::string> {
              auto s = parse_duration(v);
              if (!s || *s < 0 || *s > max_s) return std::nullopt;
              return number_text(*s);
            }));
      });
}

void option_binder::toggle(std::string_view name, bool& field, std::string_view help) {
  add(
      name, "on|off", value_kind::toggle, help, [&field] { return toggle_text(field); }, {},
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option(flag, field, text)
            ->transform(rewriting("expected on or off", [](const std::string& v) -> std::optional<std::string> {
              auto b = parse_toggle(v);
              if (!b) return std::nullopt;
              return std::string(*b ? "true" : "false");
            }));
      });
}

CLI::Option* option_binder::add_choice(std::string_view name, const std::string& placeholder, std::string_view help,
                                       std::function<std::string()> get, std::vector<std::pair<std::string, int>> names,
                                       std::function<void(int)> assign) {
  std::string allowed = "expected ";
  for (std::size_t i = 0; i < names.size(); ++i)
    allowed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
  return add(name, placeholder, value_kind::text, help, std::move(get), {},
             [&](const std::string& flag, const std::string& text) {
               return app_
                   .add_option_function<std::string>(
                       flag,
                       [names, assign = std::move(assign)](const std::string& v) {
                         for (const auto& [n, value] : names)
                           if (n == v) assign(value);
                       },
                       text)
                   // A transform, not a check: the callback must see the canonical name
                   // ("UNIFIED" was accepted, then matched nothing, and the default ran).
                   ->transform(CLI::Validator(
                       [names, allowed](std::string& v) -> std::string {
                         std::string canonical = v;
                         std::transform(canonical.begin(), canonical.end(), canonical.begin(),
                                        [](unsigned char ch) { return std::tolower(ch); });
                         std::replace(canonical.begin(), canonical.end(), '_', '-');
                         for (const auto& entry : names)
                           if (entry.first == canonical) {
                             v = std::move(canonical);
                             return {};
                           }
                         return "'" + shown(v) + "': " + allowed;
                       },
                       ""));
             });
}

void option_binder::text(std::string_view name, std::string& field, std::string_view placeholder, std::string_view help,
                         std::string_view default_text, std::function<std::string(const std::string&)> check) {
  add(
      name, placeholder, value_kind::text, help, [&field] { return field; }, default_text,
      [&](const std::string& flag, const std::string& text) {
        CLI::Option* opt = app_.add_option(flag, field, text);
        if (check) opt->check(CLI::Validator(std::move(check), ""));
        return opt;
      });
}

void option_binder::custom(std::string_view name, std::string_view placeholder, value_kind kind, std::string_view help,
                           std::function<std::string(const std::string&)> set, std::function<std::string()> get,
                           std::string_view default_text) {
  const std::string flag_name = "--" + std::string(name);
  add(name, placeholder, kind, help, std::move(get), default_text,
      [&](const std::string& flag, const std::string& text) {
        return app_.add_option_function<std::string>(
            flag,
            [set = std::move(set), flag_name](const std::string& v) {
              if (std::string problem = set(v); !problem.empty()) throw CLI::ValidationError(flag_name, problem);
            },
            text);
      });
}

std::vector<config_entry> option_binder::values() const {
  std::vector<config_entry> out;
  out.reserve(bound_.size());
  for (const auto& b : bound_) out.push_back({b->name, b->kind, b->get(), b->default_text, b->scope, b->shapes_state});
  return out;
}

std::vector<std::string> option_binder::given(unsigned scope) const {
  std::vector<std::string> out;
  for (const auto& b : bound_)
    if ((b->scope & scope) != 0 && b->cli->count() > 0) out.push_back(b->name);
  return out;
}

std::optional<option_binder::option_ref> option_binder::find(std::string_view name) const {
  for (const auto& b : bound_)
    if (b->name == name) return option_ref{b->cli, b->kind};
  return std::nullopt;
}

// ---- the options ----------------------------------------------------------------------------

namespace {

void bind_stop(option_binder& b, stop_conditions& s) {
  b.section("When to stop", scope_run);
  b.count("blocks", s.blocks, 0, most_blocks, "Blocks to measure after the warm-up; 0: no block limit");
  b.count("warmup-blocks", s.warmup_blocks, 0, 1'000'000, "Blocks produced first and left out of the statistics");
  b.duration("duration", s.duration_s, 365.0 * 24 * 3600,
             "Stop after this long (seconds, or with a unit: 500ms, 90s, 2m, 1h); 0: no time limit");
  b.count("transactions", s.transactions, 0, most_transactions,
          "Stop after the block in which this many measured transactions are included; 0: no limit");
  b.duration("stall-timeout", s.stall_timeout_s, 24.0 * 3600,
             "Fail the run when no block completes and no transaction is accepted (with --blocks-by clock: answered) "
             "for this long; 0: never");
}

void bind_generation(option_binder& b, run_config& c) {
  colony::colony_config& k = c.colony;
  b.section("The colony", scope_generation);
  b.count("threads", k.threads, 1, colony::colony_config::max_threads,
          "Colony producer threads (the writer thread comes on top)");
  b.toggle("sign", k.sign, "Sign transactions (off: unsigned, and the chain skips its authority check)");
  b.count("seed", k.seed, 0, u64_max, "Base seed: producer thread t draws from seed + t");
  b.count("accounts", c.chain.genesis_accounts, 1, max_genesis_accounts,
          "Genesis accounts (user0, user1, ...), dealt to the producer threads");
  b.custom(
      "payer-weights", "uniform|vesting:E", value_kind::text,
      "Who pays: each producer thread takes its accounts in turn (uniform), or draws each transaction's payer with "
      "weight vesting^E, its --genesis-vesting (E from 0 to 4; vesting:1 in proportion to stake; not in apiary "
      "workload, which has no genesis)",
      [&k](const std::string& t) { return colony::parse_payer_weighting(t, k.payers).value_or(""); },
      [&k] { return colony::to_string(k.payers); });
  b.custom(
      "mix", "KIND=W:MIN-MAX^EXP,...", value_kind::text,
      "The transaction mix: per kind (article, reply, vote, transfer, custom_json) its relative weight, the "
      "range of its extra payload in bytes and the exponent of its size distribution (Hive's {min, max, "
      "weight, exponent}; above 1 favours small payloads); kinds left out, and an exponent left out, keep "
      "their values",
      [&k](const std::string& t) { return set_mix(k.mix, t); }, [&k] { return colony::to_string(k.mix); },
      "Hive's typical mix: " + colony::to_string(colony::mix_config{}));
  b.custom(
      "faults", "KIND=FRACTION,...", value_kind::text,
      "Faulty transactions: after each one, with this probability per kind, a companion that breaks one rule "
      "(duplicate, expired, unknown-reference, missing-authority, insufficient-funds, invalid-json, "
      "custom-op-limit, oversize, no-rc), which the chain must reject for that reason; none: off",
      [&k](const std::string& t) { return set_faults(k.faults, t); }, [&k] { return colony::to_string(k.faults); });
}

void bind_colony_run(option_binder& b, colony::colony_config& k) {
  b.section("The colony", scope_run);
  b.custom(
      "rate", "RATE", value_kind::text,
      "How fast the colony produces: infinite (as fast as possible), block (a per-block transaction budget) "
      "or a number of transactions per second",
      [&k](const std::string& t) { return set_rate(k, t); }, [&k] { return rate_text(k); });
  b.count("block-budget", k.block_budget, 0, 10'000'000,
          "Most transactions per block with --rate block, adapted to overflow as Hive does (the last block's "
          "count plus a 5% margin of 100 to 500, less what it left pending); 0: block size / average transaction "
          "size");
  b.count("in-flight", k.in_flight_limit, 0, 10'000'000,
          "Transactions a producer may have submitted and not yet answered before it waits; 0: automatic, as "
          "Hive's colony-max-concurrency = 0 (2 x the last block's transactions / threads)");
  b.custom(
      "wait-for-work", "MS|off", value_kind::text,
      "How a producer held by the in-flight limit or the block budget waits: off (woken when it may go on), "
      "or checking every MS milliseconds (0: yield between checks), as Hive's colony-wait-for-work",
      [&k](const std::string& t) -> std::string {
        if (t == "off") {
          k.wait_for_work_ms.reset();
          return {};
        }
        auto ms = parse_count(t);
        if (!ms || *ms > colony::colony_config::max_wait_for_work_ms)
          return "'" + shown(t) + "': expected off or a whole number of milliseconds from 0 to " +
                 std::to_string(colony::colony_config::max_wait_for_work_ms);
        k.wait_for_work_ms = static_cast<std::uint32_t>(*ms);
        return {};
      },
      [&k] { return k.wait_for_work_ms ? std::to_string(*k.wait_for_work_ms) : std::string("off"); });
  b.choice("submit", k.submit, colony::submit_mode_names,
           "fire-and-forget (submit and go on); async (go on, and a pool of --async-tasks threads waits for each "
           "outcome's future and does the follow-up, as Hive's colony did); or sync (wait for each transaction's "
           "outcome before making the next)");
  b.count("async-tasks", k.async_tasks, 1, 64, "Threads of the pool that waits for the outcomes with --submit async");
  b.toggle("warm-keys", k.warm_keys, "Derive every producer key before the run starts instead of on first use");
  b.toggle("measure-cpu", k.measure_cpu,
           fmt::format("Measure the producers' generation and signing CPU time: each producer times its first "
                       "transaction and every {}th after it (reads of its thread's CPU clock, each a system "
                       "call) and counts each timed one for the untimed ones after it",
                       colony::cpu_sample_every));
}

// The resource credits' genesis and parameters, in bind_chain's sequence of options.
void bind_rc(option_binder& b, run_config& c) {
  core::chain_options& ch = c.chain;
  b.custom(
      "genesis-vesting", "N|LAW:KEY=V,...", value_kind::text,
      "Each genesis account's vesting in micro-VESTS, its RC maximum: one number for every account, or drawn per "
      "account from lognormal:median=M,sigma=S,min=A,max=B or pareto:alpha=K,min=A,max=B (truncated to [min, max]; "
      "docs/rc.md)",
      [&ch](const std::string& t) { return core::parse_vesting_spec(t, ch.genesis_vesting).value_or(""); },
      [&ch] { return core::to_string(ch.genesis_vesting); });
  b.section("The queen and the chain", scope_chain | scope_rc_params);
  b.custom(
      "rc-params", "FILE", value_kind::text,
      "The resource credits' base parameters from this TOML file: a table per resource (history_bytes, "
      "market_bytes, state_bytes, execution_time), every key optional (docs/rc.md; apiary rc-params prints them)",
      [&c](const std::string& path) {
        if (std::string problem = check_path(path); !problem.empty()) return problem;
        c.rc_params_file = path;
        c.chain.rc_params = core::rc_default_params;
        return read_rc_params(path, c.chain.rc_params);
      },
      [&c] { return c.rc_params_file; }, "none: the built-in parameters");
  b.count("rc-scale", ch.rc_scale, 1, core::rc_max_scale,
          "Hive's rc_scale: each resource's budget and price curve scaled up by its budget_scale_factor and "
          "price_scale_factor per step above 1 (docs/rc.md)");
}

// Where the chain starts and keeps its state, in bind_chain's sequence of options.
void bind_state(option_binder& b, run_config& c) {
  core::chain_options& ch = c.chain;
  b.text("state", c.state, "FILE",
         "Start from this snapshot or state file (written by apiary snapshot) instead of the genesis; the genesis "
         "options (--accounts, --genesis-vesting, --cashout-blocks) must be the ones it was made with",
         "none: the genesis", check_path);
  b.section("The queen and the chain", scope_run | scope_replay);
  b.shaping(false);
  b.count("state-blocks", c.state_blocks, 0, most_cached_state_blocks,
          "Or start from the state this many blocks of the mix make on the genesis (this config's genesis, mix, seed "
          "and block size: 1200 is the hour of blocks a live node holds), kept in the state cache "
          "($APIARY_STATE_CACHE, else ~/.cache/apiary/states) and made there on first use with a progress line; "
          "every later run with these options and this build's state layout opens it (docs/snapshots.md); 0: "
          "none");
  b.section("The queen and the chain", scope_chain);
  b.shaping(false);
  b.choice("state-memory", ch.memory, core::state_memory_names,
           "Where the chain keeps its state: heap (object by object) or mapped (one region at a fixed address, as "
           "Hive's chainbase file; apiary snapshot then writes a state file, which --state opens without a "
           "rebuild). A state file always runs mapped (docs/snapshots.md)");
  b.toggle("state-prefault", c.state_prefault,
           "Read a --state file whole into the run's own memory (huge pages) when it opens, before the warm-up, so "
           "that none of it faults inside the measured window; off: map it copy-on-write, each page read or copied "
           "when first used");
  b.toggle("state-verify", c.state_verify,
           "Check a --state file's whole content digest when it opens (reads every byte); its header and the "
           "allocator's bookkeeping are checked always");
}

void bind_chain(option_binder& b, run_config& c) {
  core::chain_options& ch = c.chain;
  b.section("The queen and the chain", scope_chain);
  b.size("block-size", c.writer.block_size, smallest_block, largest_block,
         "Block size target in bytes, at most --max-block-size", "2MiB-256 = 2096896");
  b.size("max-block-size", c.max_block_size, smallest_block, largest_block,
         "The chain's maximum block size; above Hive's 2 MiB only for sweeps", "2MiB = 2097152");
  b.count("block-transactions", c.writer.block_transactions, 0, 10'000'000,
          "Also end a block after this many transactions; 0: by size only");
  b.section("The queen and the chain", scope_run | scope_replay);
  b.choice("blocks-by", c.blocks_by, core::block_trigger_names,
           "What ends a block: size (once the pending transactions fill --block-size or --block-transactions) or "
           "clock (one block per 3-second slot of chain time: the colony offers --slot-transactions for it and the "
           "block comes once they are all answered, full or not, empty if none was accepted; the colony's rate "
           "is then the slot's count)");
  b.custom(
      "slot-transactions", "N|poisson:MEAN|uniform:LOW..HIGH", value_kind::text,
      "With --blocks-by clock, the transactions offered per slot: a constant, or drawn per block from a Poisson "
      "or uniform distribution by the block's number and --seed (the same in a run and its replay)",
      [&c](const std::string& t) -> std::string {
        core::slot_schedule_parse parsed = core::parse_slot_schedule(t);
        if (!parsed.schedule) return "'" + shown(t) + "': " + parsed.problem;
        c.slot_transactions = *parsed.schedule;
        return {};
      },
      [&c] { return core::to_string(c.slot_transactions); });
  b.section("The queen and the chain", scope_run);
  b.toggle("pin", c.pin,
           "Put the writer on a CPU of its own and every other thread of the run (the producers, the harness's) on "
           "the others, each producer alone where there are enough; with two CPUs the writer is alone on one, with "
           "one nothing is pinned. The report's context.pin says what was done");
  b.choice("queue", c.queue.policy, queen::queue_policy_names,
           "Writer queue: unbounded (producers brake on their in-flight count, as Hive) or bounded (blocks when "
           "full)");
  b.count("queue-capacity", c.queue.capacity, 1, 100'000'000, "Capacity of the bounded queue");
  b.duration("queue-gather", c.queue.gather_s, 1.0,
             "How long a writer woken from an empty queue waits before taking, so the transactions submitted "
             "meanwhile wake it once, not once each (e.g. 500us); 0: take at once; not with --submit sync, where "
             "nothing more comes meanwhile");
  b.section("The queen and the chain", scope_chain);
  // How the state is held and the chain runs, not what the state holds: a snapshot's state is
  // the same under every value (chain_options.hpp), so the state cache leaves them out.
  b.shaping(false);
  bind_state(b, c);
  b.choice("dedup", ch.dedup, core::dedup_mode_names,
           "Where pending transaction ids live: split (a volatile hash set) or unified (the undoable index)");
  b.choice("custom-ops", ch.custom_ops, core::counter_mode_names,
           "Per-account custom-operation counters: local (a hash map) or state (an undoable index)");
  b.choice("rc", ch.rc, core::rc_mode_names,
           "Pending resource-credit charges: state (in the account, undone with the transaction) or volatile (a "
           "hash map merged into state when the block is applied)");
  b.shaping(true);
  bind_rc(b, c);
  b.section("The queen and the chain", scope_chain);
  b.count("cashout-blocks", ch.cashout_blocks, 1, 100'000'000,
          "Blocks from a comment's creation to its payout, after which it and its votes leave the state (Hive: "
          "seven days)");
  b.shaping(false);
  b.count("rc-stats-blocks", ch.rc_stats_blocks, 0, 100'000'000,
          "Archive Hive's RC statistics (per operation kind and per payer rank) every this many blocks into the "
          "report's rc.archives and the --interval-log; 0: keep none");
  b.choice("signers", ch.signers, core::signer_source_names,
           "Signer keys: attached (use the producer's attached keys) or recover (always recover them)");
  b.toggle("tapos-check", ch.check_tapos, "Check each transaction's reference block (off: Hive's skip_tapos_check)");
  b.toggle("block-session", ch.apply_block_in_session, "Apply blocks inside an undo session");
  b.toggle(
      "reuse-pending", ch.reuse_pending,
      "A block that holds exactly the pending transactions (as the writer produces it) keeps their state instead "
      "of undoing it and applying them again (off: Hive's re-application); needs --custom-ops local and --rc state");
  b.count("reversible-blocks", ch.reversible_blocks, 0, 100'000, "Blocks kept undoable before they are committed");
  b.toggle("keep-alive", ch.db.keep_alive, "Reuse undo containers between sessions (keep_alive)");
  // A state file's objects and undo states lie in its pools or not: it opens only as made.
  b.shaping(true);
  b.toggle("pool-objects", ch.db.pool_objects, "Pool allocator for state objects");
  b.toggle("pool-undo", ch.db.pool_undo, "Pool allocator for undo states");
}

void bind_outputs(option_binder& b, run_config& c) {
  outputs& o = c.out;
  b.section("Output", scope_run);
  b.text("name", c.name, "NAME", "Names the run in the report and its default file name",
         "the config file's name, else default", check_name);
  b.text("report", o.report, "PATH",
         "Where the JSON report goes: a file replaced whole once written (never a half report), or a device or a "
         "FIFO written through",
         "results/<start time>-<name>.json", check_path);
  b.text("dump-transactions", o.dump_transactions, "PATH",
         "Write the first --dump-limit transactions submitted as JSON lines (Hive JSON, packed hex, id, signer keys)",
         "none", check_path);
  b.text("dump-blocks", o.dump_blocks, "PATH",
         "Write the first --dump-block-limit measured blocks as JSON lines (Hive JSON, packed hex, id, signer key)",
         "none", check_path);
  b.count("dump-limit", o.dump_limit, 1, 10'000'000, "Transactions --dump-transactions writes");
  b.count("dump-block-limit", o.dump_block_limit, 1, 10'000, "Blocks --dump-blocks writes");
  b.text("block-log", o.block_log, "PATH",
         "Write every block the run applies, from block 1 on, as a Hive block_log here and its index beside it "
         "(PATH.artifacts), for Hive's tools; both replaced whole at the end (docs/block-log.md)",
         "none", check_path);
  b.toggle("audit", c.audit,
           "After the run, check the state's invariants (supply, undo sessions, dedup index, block sizes and ids, "
           "accepted = included + pending); a violation fails the run. Records every accepted transaction's id");
  b.toggle("counters", c.counters,
           "Per-thread performance counters over the measured window (perf_event_open: task clock, context switches, "
           "CPU migrations, page faults, and instructions, cycles and cache and branch misses where the machine has "
           "them) of the writer, each producer and the main thread; costs one read() a block on the writer and about "
           "a microsecond of kernel time per context switch of a counted thread");
  b.choice("progress", o.progress, progress_mode_names,
           "Live progress line on stderr: auto (when stderr is a terminal), on or off");
  b.choice("log-level", o.log, log_level_names,
           "Log messages at this level and above on stderr (the log file holds info and up, or this level if "
           "finer): Hive's queen and colony statistics and the writer-loop breakdown at info, one line per block "
           "at debug");
  b.text("log-file", o.log_file, "PATH",
         "Where the log goes (a regular file or a device: it is written while the run goes); none: no log file",
         "beside the report, .log; none when the report is a device or a FIFO", check_path);
  b.duration("interval", o.interval_s, 3600.0,
             "How often --interval-log and --prometheus-textfile get the run's live figures (e.g. 1s, 500ms)");
  b.count("checkpoint-blocks", o.checkpoint_blocks, 0, 100'000'000,
          "Also end an interval record after this many blocks (0: by time only), so a crash loses at most that "
          "many blocks of the --interval-log");
  b.text("interval-log", o.interval_log, "PATH",
         "Write one JSON line per --interval while the run goes (flushed each time): blocks, tx/s, cycle, latency "
         "percentiles, writer time split, queue depth, in-flight count, resident memory, state object counts and "
         "bytes, RC pools",
         "none", check_path);
  b.text("prometheus-textfile", o.prometheus_textfile, "PATH",
         "Replace this file atomically every --interval with the same figures in Prometheus's text format (for "
         "node_exporter's textfile collector)",
         "none", check_path);
  b.text("hgrm-dir", o.hgrm_dir, "DIR",
         "Write each latency stage's histogram there as <stage>.hgrm (HdrHistogram's percentile distribution, "
         "microseconds)",
         "none", check_path);
  b.text("profile", o.profile_dir, "DIR",
         "Profile the measured window's CPU with perf (every thread, 499 Hz) and write there perf.data, "
         "window.folded, threads/<thread>.folded, top.tsv and flamegraph.svg; needs perf and inferno's flame graph "
         "tools (scripts/install-deps.sh)",
         "none", check_path);
}

}  // namespace

void bind_run_options(option_binder& b, run_config& c) {
  bind_stop(b, c.stop);
  bind_generation(b, c);
  bind_colony_run(b, c.colony);
  bind_chain(b, c);
  bind_outputs(b, c);
}

std::vector<config_entry> describe(const run_config& c, unsigned scope) {
  CLI::App app;
  run_config copy = c;
  option_binder b(app, scope);
  bind_run_options(b, copy);
  return b.values();
}

std::string to_toml(const std::vector<config_entry>& entries) {
  std::string out;
  for (const config_entry& e : entries) {
    if (e.text.empty()) {
      out += "# " + e.name + " = (" + e.default_text + ")\n";
      continue;
    }
    out += e.name + " = ";
    if (e.kind == value_kind::number) {
      out += e.text;
    } else {
      out += '"';
      for (char ch : e.text) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
      }
      out += '"';
    }
    out += '\n';
  }
  return out;
}

std::string apply_options(run_config& c, const std::vector<std::string>& args) {
  CLI::App app;
  option_binder b(app, scope_run);
  bind_run_options(b, c);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

}  // namespace apiary::harness
