#include "apiary/harness/run_config.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace apiary::harness {

namespace {

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

std::string number_text(std::uint64_t v) { return std::to_string(v); }
std::string number_text(std::uint32_t v) { return std::to_string(v); }

std::string number_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string toggle_text(bool v) { return v ? "on" : "off"; }

template <class T>
std::optional<std::string> set_u32(T& field, std::string_view text, std::uint32_t min, std::uint32_t max) {
  auto v = parse_count(text);
  if (!v || *v < min || *v > max)
    return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  field = static_cast<T>(*v);
  return std::nullopt;
}

std::optional<std::string> set_toggle(bool& field, std::string_view text) {
  auto v = parse_toggle(text);
  if (!v) return std::string("expected on or off");
  field = *v;
  return std::nullopt;
}

std::optional<std::string> set_size(std::uint32_t& field, std::string_view text, std::uint64_t min, std::uint64_t max) {
  auto v = parse_size(text);
  if (!v || *v < min || *v > max)
    return "expected a size in bytes from " + std::to_string(min) + " to " + std::to_string(max) +
           " (suffixes KiB and MiB, e.g. 64KiB, 2MiB-256)";
  field = static_cast<std::uint32_t>(*v);
  return std::nullopt;
}

constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();
// The largest chain maximum a sweep may set: far beyond Hive's 2 MiB, still addressable.
constexpr std::uint64_t largest_block = 256ull * 1024 * 1024;
// A block must hold the largest transaction of the mix (an article: a 5,000-byte body and
// its beneficiaries), or the writer would produce empty blocks behind it forever.
constexpr std::uint64_t smallest_block = 16 * 1024;

// The option table. Order is the order of --help, --print-config and the report.
const option_spec options[] = {
    // ---- when to stop ----
    {"blocks", "N", "Blocks to measure after the warm-up; 0: no block limit", value_kind::number,
     [](const run_config& c) { return number_text(c.blocks); },
     [](run_config& c, std::string_view t) { return set_u32(c.blocks, t, 0, u32_max); }},
    {"warmup-blocks", "N", "Blocks produced first and left out of the statistics", value_kind::number,
     [](const run_config& c) { return number_text(c.warmup_blocks); },
     [](run_config& c, std::string_view t) { return set_u32(c.warmup_blocks, t, 0, 1'000'000); }},
    {"duration", "TIME", "Stop after this long (seconds, or with a unit: 500ms, 90s, 2m, 1h); 0: no time limit",
     value_kind::number, [](const run_config& c) { return number_text(c.duration_s); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       auto v = parse_duration(t);
       if (!v || *v < 0 || *v > 365.0 * 24 * 3600) return "expected a duration from 0 to 1 year (e.g. 90, 90s, 2m)";
       c.duration_s = *v;
       return std::nullopt;
     }},
    {"transactions", "N", "Stop after the block in which this many measured transactions are included; 0: no limit",
     value_kind::number, [](const run_config& c) { return number_text(c.transactions); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       auto v = parse_count(t);
       if (!v) return std::string("expected a whole number, 0 or more");
       c.transactions = *v;
       return std::nullopt;
     }},
    {"stall-timeout", "TIME",
     "Fail the run when no block completes and no transaction is accepted for this long; 0: never",
     value_kind::number, [](const run_config& c) { return number_text(c.stall_timeout_s); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       auto v = parse_duration(t);
       if (!v || *v < 0 || *v > 24.0 * 3600) return "expected a duration from 0 to 24 hours (e.g. 60, 5m)";
       c.stall_timeout_s = *v;
       return std::nullopt;
     }},
    // ---- the colony ----
    {"threads", "N", "Colony producer threads (the writer thread comes on top)", value_kind::number,
     [](const run_config& c) { return number_text(c.threads); },
     [](run_config& c, std::string_view t) { return set_u32(c.threads, t, 1, colony::colony_config::max_threads); }},
    {"rate", "RATE",
     "How fast the colony produces: infinite (as fast as possible), block (a per-block transaction budget) or "
     "a number of transactions per second",
     value_kind::text, [](const run_config& c) { return rate_text(c); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "infinite") {
         c.rate = rate_kind::infinite;
       } else if (v == "block") {
         c.rate = rate_kind::block;
       } else {
         std::string_view n = v;
         if (n.ends_with("tps")) n.remove_suffix(3);
         auto tps = parse_double(n);
         if (!tps || *tps <= 0 || *tps > 1e9)
           return std::string("expected infinite, block, or transactions per second above 0");
         c.rate = rate_kind::tps;
         c.rate_tps = *tps;
       }
       return std::nullopt;
     }},
    {"block-budget", "N", "Transactions per block with --rate block; 0: block size / average transaction size",
     value_kind::number, [](const run_config& c) { return number_text(c.block_budget); },
     [](run_config& c, std::string_view t) { return set_u32(c.block_budget, t, 0, 10'000'000); }},
    {"sign", "on|off", "Sign transactions (off: unsigned, and the chain skips its authority check)",
     value_kind::toggle, [](const run_config& c) { return toggle_text(c.sign); },
     [](run_config& c, std::string_view t) { return set_toggle(c.sign, t); }},
    {"seed", "N", "Base seed: producer thread t draws from seed + t", value_kind::number,
     [](const run_config& c) { return number_text(c.seed); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       auto v = parse_count(t);
       if (!v) return std::string("expected a whole number from 0 to 18446744073709551615");
       c.seed = *v;
       return std::nullopt;
     }},
    {"accounts", "N", "Genesis accounts (user0, user1, ...), dealt to the producer threads", value_kind::number,
     [](const run_config& c) { return number_text(c.accounts); },
     [](run_config& c, std::string_view t) { return set_u32(c.accounts, t, 1, 10'000'000); }},
    {"mix", "KIND=W:MIN-MAX,...",
     "The transaction mix: per kind (article, reply, vote, transfer, custom_json) its relative weight and the range "
     "of its extra payload in bytes; kinds left out keep their values",
     value_kind::text, [](const run_config& c) { return colony::to_string(c.mix); },
     [](run_config& c, std::string_view t) { return colony::parse_mix(t, c.mix); }, "Hive's typical mix: "
     "article=16:100-5000,reply=110:30-1000,vote=2070:0-0,transfer=87:0-350,custom_json=6006:20-400"},
    {"faults", "KIND=FRACTION,...",
     "Faulty transactions: after each one, with this probability per kind, a companion that breaks one rule "
     "(duplicate, expired, unknown-reference, missing-authority, insufficient-funds, invalid-json, custom-op-limit, "
     "oversize), which the chain must reject for that reason; none: off",
     value_kind::text, [](const run_config& c) { return colony::to_string(c.faults); },
     [](run_config& c, std::string_view t) { return colony::parse_faults(t, c.faults); }},
    {"in-flight", "N", "Transactions a producer may have submitted and not yet answered before it waits",
     value_kind::number, [](const run_config& c) { return number_text(c.in_flight); },
     [](run_config& c, std::string_view t) { return set_u32(c.in_flight, t, 1, 10'000'000); }},
    {"submit", "MODE",
     "fire-and-forget (submit and go on) or async (wait for each transaction's outcome)", value_kind::text,
     [](const run_config& c) {
       return std::string(c.submit == colony::submit_mode::async ? "async" : "fire-and-forget");
     },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "fire-and-forget" || v == "fire_and_forget") {
         c.submit = colony::submit_mode::fire_and_forget;
       } else if (v == "async") {
         c.submit = colony::submit_mode::async;
       } else {
         return std::string("expected fire-and-forget or async");
       }
       return std::nullopt;
     }},
    {"warm-keys", "on|off", "Derive every producer key before the run starts instead of on first use",
     value_kind::toggle, [](const run_config& c) { return toggle_text(c.warm_keys); },
     [](run_config& c, std::string_view t) { return set_toggle(c.warm_keys, t); }},
    {"measure-cpu", "on|off",
     "Measure the producers' generation and signing CPU time per transaction (one clock read each)",
     value_kind::toggle, [](const run_config& c) { return toggle_text(c.measure_cpu); },
     [](run_config& c, std::string_view t) { return set_toggle(c.measure_cpu, t); }},
    // ---- the queen and the chain ----
    {"block-size", "SIZE", "Block size target in bytes, at most --max-block-size", value_kind::number,
     [](const run_config& c) { return number_text(c.block_size); },
     [](run_config& c, std::string_view t) { return set_size(c.block_size, t, smallest_block, largest_block); },
     "2MiB-256 = 2096896"},
    {"max-block-size", "SIZE", "The chain's maximum block size; above Hive's 2 MiB only for sweeps",
     value_kind::number, [](const run_config& c) { return number_text(c.max_block_size); },
     [](run_config& c, std::string_view t) { return set_size(c.max_block_size, t, smallest_block, largest_block); },
     "2MiB = 2097152"},
    {"block-transactions", "N", "Also end a block after this many transactions; 0: by size only",
     value_kind::number, [](const run_config& c) { return number_text(c.block_transactions); },
     [](run_config& c, std::string_view t) { return set_u32(c.block_transactions, t, 0, 10'000'000); }},
    {"queue", "POLICY",
     "Writer queue: unbounded (producers brake on their in-flight count, as Hive) or bounded (blocks when full)",
     value_kind::text,
     [](const run_config& c) {
       return std::string(c.queue == queen::queue_policy::bounded ? "bounded" : "unbounded");
     },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "unbounded") {
         c.queue = queen::queue_policy::unbounded;
       } else if (v == "bounded") {
         c.queue = queen::queue_policy::bounded;
       } else {
         return std::string("expected unbounded or bounded");
       }
       return std::nullopt;
     }},
    {"queue-capacity", "N", "Capacity of the bounded queue", value_kind::number,
     [](const run_config& c) { return number_text(c.queue_capacity); },
     [](run_config& c, std::string_view t) { return set_u32(c.queue_capacity, t, 1, 100'000'000); }},
    {"dedup", "MODE", "Where pending transaction ids live: split (a volatile hash set) or unified (the undoable index)",
     value_kind::text, [](const run_config& c) { return std::string(core::to_string(c.dedup)); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "split") {
         c.dedup = core::dedup_mode::split;
       } else if (v == "unified") {
         c.dedup = core::dedup_mode::unified;
       } else {
         return std::string("expected split or unified");
       }
       return std::nullopt;
     }},
    {"custom-ops", "MODE", "Per-account custom-operation counters: local (a hash map) or state (an undoable index)",
     value_kind::text, [](const run_config& c) { return std::string(core::to_string(c.custom_ops)); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "local") {
         c.custom_ops = core::counter_mode::local;
       } else if (v == "state") {
         c.custom_ops = core::counter_mode::state;
       } else {
         return std::string("expected local or state");
       }
       return std::nullopt;
     }},
    {"signers", "MODE", "Signer keys: attached (use the producer's attached keys) or recover (always recover them)",
     value_kind::text, [](const run_config& c) { return std::string(core::to_string(c.signers)); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "attached") {
         c.signers = core::signer_source::attached;
       } else if (v == "recover") {
         c.signers = core::signer_source::recover;
       } else {
         return std::string("expected attached or recover");
       }
       return std::nullopt;
     }},
    {"block-session", "on|off", "Apply blocks inside an undo session", value_kind::toggle,
     [](const run_config& c) { return toggle_text(c.block_session); },
     [](run_config& c, std::string_view t) { return set_toggle(c.block_session, t); }},
    {"reversible-blocks", "N", "Blocks kept undoable before they are committed", value_kind::number,
     [](const run_config& c) { return number_text(c.reversible_blocks); },
     [](run_config& c, std::string_view t) { return set_u32(c.reversible_blocks, t, 0, 100'000); }},
    {"keep-alive", "on|off", "Reuse undo containers between sessions (keep_alive)", value_kind::toggle,
     [](const run_config& c) { return toggle_text(c.keep_alive); },
     [](run_config& c, std::string_view t) { return set_toggle(c.keep_alive, t); }},
    {"pool-objects", "on|off", "Pool allocator for state objects", value_kind::toggle,
     [](const run_config& c) { return toggle_text(c.pool_objects); },
     [](run_config& c, std::string_view t) { return set_toggle(c.pool_objects, t); }},
    {"pool-undo", "on|off", "Pool allocator for undo states", value_kind::toggle,
     [](const run_config& c) { return toggle_text(c.pool_undo); },
     [](run_config& c, std::string_view t) { return set_toggle(c.pool_undo, t); }},
    // ---- output ----
    {"name", "NAME", "Names the run in the report and its default file name", value_kind::text,
     [](const run_config& c) { return c.name; },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       t = trim(t);
       if (t.empty() || t.size() > 64) return std::string("expected 1 to 64 characters of a-z A-Z 0-9 . _ -");
       for (char ch : t)
         if (std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '.' && ch != '_' && ch != '-')
           return std::string("expected 1 to 64 characters of a-z A-Z 0-9 . _ -");
       c.name = std::string(t);
       return std::nullopt;
     },
     "the config file's name, else default"},
    {"report", "PATH", "Where the JSON report goes", value_kind::text, [](const run_config& c) { return c.report; },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       t = trim(t);
       if (t.empty()) return std::string("expected a file path");
       c.report = std::string(t);
       return std::nullopt;
     },
     "results/<start time>-<name>.json"},
    {"dump-transactions", "PATH",
     "Write the first --dump-limit transactions submitted as JSON lines (Hive JSON, packed hex, id, signer keys)",
     value_kind::text, [](const run_config& c) { return c.dump_transactions; },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       c.dump_transactions = std::string(trim(t));
       return std::nullopt;
     },
     "none"},
    {"dump-blocks", "PATH",
     "Write the first --dump-block-limit measured blocks as JSON lines (Hive JSON, packed hex, id, signer key)",
     value_kind::text, [](const run_config& c) { return c.dump_blocks; },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       c.dump_blocks = std::string(trim(t));
       return std::nullopt;
     },
     "none"},
    {"dump-limit", "N", "Transactions --dump-transactions writes", value_kind::number,
     [](const run_config& c) { return number_text(c.dump_limit); },
     [](run_config& c, std::string_view t) { return set_u32(c.dump_limit, t, 1, 10'000'000); }},
    {"dump-block-limit", "N", "Blocks --dump-blocks writes", value_kind::number,
     [](const run_config& c) { return number_text(c.dump_block_limit); },
     [](run_config& c, std::string_view t) { return set_u32(c.dump_block_limit, t, 1, 10'000); }},
    {"audit", "on|off",
     "After the run, check the state's invariants (supply, undo sessions, dedup index, block sizes and ids, "
     "accepted = included + pending); a violation fails the run. Records every accepted transaction's id",
     value_kind::toggle, [](const run_config& c) { return toggle_text(c.audit); },
     [](run_config& c, std::string_view t) { return set_toggle(c.audit, t); }},
    {"progress", "WHEN", "Live progress line on stderr: auto (when stderr is a terminal), on or off",
     value_kind::text, [](const run_config& c) { return std::string(to_string(c.progress)); },
     [](run_config& c, std::string_view t) -> std::optional<std::string> {
       const std::string v = lower(trim(t));
       if (v == "auto") {
         c.progress = progress_mode::automatic;
       } else if (auto b = parse_toggle(v)) {
         c.progress = *b ? progress_mode::on : progress_mode::off;
       } else {
         return std::string("expected auto, on or off");
       }
       return std::nullopt;
     }},
};

}  // namespace

std::span<const option_spec> run_options() { return options; }

const option_spec* find_option(std::string_view name) {
  for (const option_spec& o : run_options())
    if (o.name == name) return &o;
  return nullptr;
}

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
  if (s.ends_with("ms")) {
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

std::string_view to_string(rate_kind r) {
  switch (r) {
    case rate_kind::infinite: return "infinite";
    case rate_kind::block: return "block";
    case rate_kind::tps: return "tps";
  }
  return "unknown";
}

std::string_view to_string(progress_mode p) {
  switch (p) {
    case progress_mode::automatic: return "auto";
    case progress_mode::on: return "on";
    case progress_mode::off: return "off";
  }
  return "unknown";
}

std::string rate_text(const run_config& c) {
  if (c.rate == rate_kind::tps) return number_text(c.rate_tps);
  return std::string(to_string(c.rate));
}

std::optional<std::string> validate(const run_config& c) {
  if (auto problem = c.faults.validate(c.sign)) return "--faults " + colony::to_string(c.faults) + ": " + *problem;
  if (c.block_size > c.max_block_size) {
    if (c.max_block_size == core::chain_limits::max_block_size)
      return "--block-size " + std::to_string(c.block_size) + ": above the chain's maximum block size " +
             std::to_string(c.max_block_size) + " (2 MiB); allowed up to that, or raise --max-block-size for a sweep";
    return "--block-size " + std::to_string(c.block_size) + ": above --max-block-size " +
           std::to_string(c.max_block_size);
  }
  if (c.accounts < c.threads)
    return "--accounts " + std::to_string(c.accounts) + ": fewer than the " + std::to_string(c.threads) +
           " --threads (each producer needs accounts of its own)";
  if (c.block_budget != 0 && c.rate != rate_kind::block)
    return "--block-budget " + std::to_string(c.block_budget) + ": only used with --rate block, not --rate " +
           rate_text(c);
  if (!c.dump_transactions.empty() && c.dump_transactions == c.dump_blocks)
    return "--dump-blocks " + c.dump_blocks + ": the same file as --dump-transactions";
  if (!c.report.empty() && (c.report == c.dump_transactions || c.report == c.dump_blocks))
    return "--report " + c.report + ": the same file as a dump";
  // What the colony checks itself (mix, account names), in its own words.
  const core::chain_options chain = make_chain_options(c);
  if (auto problem = make_colony_config(c, chain).validate()) return "invalid colony configuration: " + *problem;
  return std::nullopt;
}

core::chain_options make_chain_options(const run_config& c) {
  core::chain_options o;
  o.db.keep_alive = c.keep_alive;
  o.db.pool_objects = c.pool_objects;
  o.db.pool_undo = c.pool_undo;
  o.dedup = c.dedup;
  o.custom_ops = c.custom_ops;
  o.signers = c.signers;
  o.apply_block_in_session = c.block_session;
  o.reversible_blocks = c.reversible_blocks;
  o.genesis_accounts = c.accounts;
  // Unsigned transactions pass only when the chain skips the authority check.
  o.check_authority = c.sign;
  return o;
}

colony::colony_config make_colony_config(const run_config& c, const core::chain_options& chain) {
  colony::colony_config k;
  k.threads = c.threads;
  k.seed = c.seed;
  k.mix = c.mix;
  k.faults = c.faults;
  k.genesis_accounts = chain.genesis_accounts;
  k.account_prefix = chain.account_prefix;
  k.key_password = chain.key_password;
  k.chain = chain.chain;
  k.sign = c.sign;
  k.attach_signer_keys = true;
  k.warm_keys = c.warm_keys && c.sign;
  k.measure_cpu = c.measure_cpu;
  switch (c.rate) {
    case rate_kind::infinite: k.rate = colony::rate_mode::infinite; break;
    case rate_kind::block: k.rate = colony::rate_mode::block_budget; break;
    case rate_kind::tps: k.rate = colony::rate_mode::tps; break;
  }
  k.tps_limit = c.rate_tps;
  k.block_budget = c.block_budget;
  k.block_size = c.block_size;
  k.in_flight_limit = c.in_flight;
  k.submit = c.submit;
  return k;
}

}  // namespace apiary::harness
