// colony_config: everything that shapes a colony run (colony.hpp): the producer threads,
// the transaction mix, the accounts and keys (which must match the chain's genesis), signing,
// rate control and the submission style. A plain value; validate() before use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/faults.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/base/named_enum.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/slot_schedule.hpp"
#include "apiary/core/protocol/bytes.hpp"

namespace apiary::colony {

// What, besides the in-flight brake that always applies, limits how fast threads produce.
enum class rate_mode : std::uint8_t {
  infinite,      // nothing: only each thread's in-flight count brakes it
  block_budget,  // a per-block number of transactions shared by all threads
  tps,           // transactions per second, split evenly between the threads
};

// How a thread hands a transaction to the sink.
enum class submit_mode : std::uint8_t {
  fire_and_forget,  // submit and go on; the outcome arrives in a callback on the writer thread
  // As Hive's colony had it: submit and go on, and hand the outcome's future to a pool of
  // async tasks (async_tasks threads) that wait for it and do the follow-up work (counting,
  // the comment ring, the in-flight count) off the writer thread. Many transactions in flight.
  async,
  sync,  // submit and wait for that transaction's outcome before making the next
};

// The names the command line, config files and reports use (named_enum.hpp): --rate block,
// --submit fire-and-forget. (The command line's --rate takes a number for tps mode; "tps" is
// the mode's name.)
inline constexpr std::array<core::enum_name<rate_mode>, 3> rate_mode_names{
    {{"infinite", rate_mode::infinite}, {"block", rate_mode::block_budget}, {"tps", rate_mode::tps}}};
inline constexpr std::array<core::enum_name<submit_mode>, 3> submit_mode_names{
    {{"fire-and-forget", submit_mode::fire_and_forget}, {"async", submit_mode::async}, {"sync", submit_mode::sync}}};

constexpr std::string_view to_string(rate_mode m) { return core::name_of(rate_mode_names, m); }
constexpr std::string_view to_string(submit_mode m) { return core::name_of(submit_mode_names, m); }
constexpr std::optional<rate_mode> parse_rate_mode(std::string_view name) {
  return core::value_of(rate_mode_names, name);
}
constexpr std::optional<submit_mode> parse_submit_mode(std::string_view name) {
  return core::value_of(submit_mode_names, name);
}

// Who pays: how a producer thread chooses each transaction's actor, the payer of its
// resource credits, among the thread's accounts. The command line's --payer-weights:
//   uniform      each account in turn (Hive's colony), so each pays equally often
//   vesting:E    each drawn with weight vesting^E (E from 0 to max_exponent), the account's
//                genesis vesting (core::vesting_of): 1 in proportion to stake, 0 equally
//                often but at random, 0.5 between
// With measure_cpu, a producer times the generation and the signing of its first
// transaction and of every cpu_sample_every-th after it, and counts each timed one's CPU
// times for the cpu_sample_every transactions it stands for (colony_stats' cpu_timed says how
// many were timed). A reading of a thread's CPU clock is a system call (0.6 µs on the 2-core
// AMD EPYC machine): four readings of every transaction were 2.4 µs of a signed one's ~70,
// most of what the report counted as the harness, and most of an unsigned one's cost.
// Signing varies little from one transaction to the next (libsecp256k1 signs in constant
// time; the packing and hashing around it follow the size), and a block's thousands of
// transactions hold hundreds of timed ones (docs/measured/2026-11-cycle.md).
inline constexpr std::uint32_t cpu_sample_every = 16;

struct payer_weighting {
  static constexpr double max_exponent = 4;
  bool by_vesting = false;
  double exponent = 1;  // by_vesting only
  bool operator==(const payer_weighting&) const = default;
};

// Parses --payer-weights into `out`, or returns what is wrong with the text.
std::optional<std::string> parse_payer_weighting(std::string_view text, payer_weighting& out);
// uniform, or vesting:E: the text parse_payer_weighting reads back.
std::string to_string(const payer_weighting& p);

struct colony_config {
  static constexpr std::uint32_t max_threads = 128;
  // in_flight_limit 0: the limit before the first block (Hive's default limit).
  static constexpr std::uint32_t auto_in_flight_start = 1000;
  static constexpr std::uint32_t max_wait_for_work_ms = 500'000;  // Hive's bound

  std::uint32_t threads = 2;  // 1..max_threads
  // Thread t draws from a generator seeded with seed + t.
  std::uint64_t seed = 1;
  mix_config mix;

  // The genesis the chain was built with (core::chain_options): accounts prefix0 ..
  // prefix(n-1), dealt to the threads round-robin, keys from_login(name, role, password).
  std::uint32_t genesis_accounts = 100'000;
  std::string account_prefix = "user";
  std::string key_password = "apiary";
  core::chain_id chain = core::hive_mainnet_chain_id();
  // Each account's genesis vesting, which payer weights by vesting read.
  core::vesting_spec genesis_vesting;
  payer_weighting payers;
  // The payer weights of thread t's accounts (deal_accounts' order), for
  // generator_options::payer_weights; empty with uniform payers.
  std::vector<double> thread_payer_weights(std::uint32_t thread) const;

  // Off: transactions go unsigned (no signatures, no signer keys), which a chain accepts
  // only when it does not check authority.
  bool sign = true;
  // Attach the signer's public key so the node can skip recovering it.
  bool attach_signer_keys = true;
  // Derive every key of a thread's accounts before start() returns, instead of on first
  // use (a public key costs about one signature, which would otherwise land in the first
  // blocks of the run).
  bool warm_keys = false;
  // Measure generation and signing CPU time: on one transaction in cpu_sample_every of each
  // thread, timed whole and counted for all of them (cpu_sample_every, below). Turn off for
  // unsigned maximum-rate runs (thread_cpu_ns, read once a block, stays).
  bool measure_cpu = true;

  rate_mode rate = rate_mode::infinite;
  // rate_mode::tps: transactions per second for the whole colony (> 0).
  double tps_limit = 0;
  // rate_mode::block_budget: the most transactions the colony makes for one block (Hive's
  // colony-transactions-per-block); 0 derives it as block_size divided by the mix's average
  // transaction size (sampled from a generator at construction). After a block that left
  // transactions pending, the next block gets min(its count + 5% (100..500), block_budget)
  // less what is pending (colony.hpp, next_block_budget).
  std::uint32_t block_budget = 0;
  // rate_mode::block_budget on the chain's clock: each block's budget is this schedule's count
  // for its number, the writer's own (core::slot_schedule), neither configured nor adapted.
  std::optional<core::slot_schedule> slots;
  std::uint32_t block_size = core::chain_limits::max_block_size - 256;

  // A thread that has this many transactions submitted and not yet completed stops, and
  // resumes once fewer than resume_below(limit) are. 0: automatic, as Hive's
  // colony-max-concurrency 0: auto_in_flight_start until the first block, then, from each
  // block on, ceil(2 x the block's transactions / threads), at least 1 (colony.hpp,
  // auto_in_flight_limit). Any value; Hive accepts at most 50,000.
  std::uint32_t in_flight_limit = 1000;
  double resume_fraction = 0.2;  // (0, 1]; Hive resumes below a fifth

  // How a thread held by the in-flight limit, or out of block budget, learns that it may go
  // on (Hive's colony-wait-for-work). Unset: the completion or the block that frees it wakes
  // it, without polling. Set, it polls as Hive's producers do: between checks it sleeps this
  // many milliseconds (1..max_wait_for_work_ms; Hive's default is 50), or with 0 yields its
  // core and checks again at once (a busy wait). A stop ends either wait at once. The tps and
  // sync waits are not Hive's and always use notifications or timers.
  std::optional<std::uint32_t> wait_for_work_ms;

  submit_mode submit = submit_mode::fire_and_forget;
  // submit_mode::async: the threads of the pool whose tasks wait for the outcomes (>= 1).
  std::uint32_t async_tasks = 2;

  // Faulty companions mixed into the stream (faults.hpp); none by default.
  fault_config faults;

  // Recent comments kept as targets for replies and votes.
  std::size_t comment_ring_capacity = comment_ring::default_capacity;
  // The chain's cashout window in blocks (use_genesis_of); 0: comments never pay out.
  std::uint32_t cashout_blocks = 0;
  // How many blocks the ring keeps a comment (0: no limit): the cashout window less the blocks
  // a transaction can wait before it expires (an hour), or half the window when it is
  // shorter than two hours, so a reply or vote reaches its target before the target pays out
  // and leaves the chain.
  std::uint32_t comment_max_age() const;
  // Each thread ends by itself after this many transactions; 0: only request_stop() (or a
  // closed sink) ends it.
  std::uint64_t transactions_per_thread = 0;

  // Copies the genesis fields above from the chain's options, so the two cannot disagree.
  void use_genesis_of(const core::chain_options& chain);

  // The in-flight limit the threads start with: in_flight_limit, or auto_in_flight_start.
  std::uint32_t first_in_flight_limit() const { return in_flight_limit == 0 ? auto_in_flight_start : in_flight_limit; }
  // The in-flight count below which a thread braked at `limit` resumes:
  // max(1, floor(limit * resume_fraction)), at most limit.
  std::uint32_t resume_below(std::uint32_t limit) const;
  std::uint32_t resume_below() const { return resume_below(first_in_flight_limit()); }

  // A message naming the first field that is out of range (and what is allowed), or
  // nullopt when the configuration is usable.
  std::optional<std::string> validate() const;
};

}  // namespace apiary::colony
