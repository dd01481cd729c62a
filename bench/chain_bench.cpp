// Microbenchmarks of the chain core on the typical mix over a 100,000-account genesis: pushing
// transactions (signer keys attached), applying a full 2 MB block, producing one, and the
// dedup lookup; each with both sides of the switches that shape it. Data is made outside the
// timing: transactions are generated and signed before the timed loop (or with the timer
// paused), and the chain is reset between batches with the timer paused.
//
//   apiary_chain_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Chains are built lazily, one per variant (a 100,000-account genesis takes a few seconds of
// key derivation), and kept until exit.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/full_transaction.hpp"

namespace {

using namespace apiary;

// Hive-scale genesis by default; the ctest smoke run sets APIARY_BENCH_ACCOUNTS lower so it
// does not spend a minute deriving keys.
const std::uint32_t genesis_accounts = [] {
  const char* env = std::getenv("APIARY_BENCH_ACCOUNTS");
  unsigned long n = env != nullptr ? std::strtoul(env, nullptr, 10) : 0;
  return n >= 10'000 ? static_cast<std::uint32_t>(n) : 100'000u;
}();
// The colony: four threads' generators, interleaved in one thread so runs repeat, acting
// for the first 10,000 accounts (so no account comes near the custom-op limit in a block).
constexpr std::size_t colony_threads = 4;
constexpr std::size_t actor_accounts = 10'000;
constexpr std::uint64_t base_seed = 20240601;
constexpr std::size_t push_batch = 7'000;
// The queen's default target: Hive's maximum block size minus 256 bytes.
constexpr std::uint32_t block_target = core::chain_limits::max_block_size - 256;

std::int64_t as_count(std::size_t n) { return static_cast<std::int64_t>(n); }

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "chain_bench: fixture check failed: %s\n", what.c_str());
  std::exit(2);
}

// ---- chains and the colony that feeds them ----------------------------------------------

core::chain_options base_options() {
  core::chain_options o;
  o.genesis_accounts = genesis_accounts;
  return o;
}

// A chain with its own colony: generators over the actor accounts and their cached keys.
struct bench_chain {
  explicit bench_chain(const core::chain_options& o) : chain(o), keys(o.key_password) {
    const auto names = colony::genesis_account_names(actor_accounts, o.account_prefix);
    for (std::size_t t = 0; t < colony_threads; ++t)
      gens.emplace_back(colony::mix_config{}, colony::generator_options{base_seed, static_cast<std::uint32_t>(t), true},
                        colony::deal_accounts(names, t, colony_threads), ring);
  }

  // The next transaction of the mix, on the current head, signed, keys attached.
  core::full_transaction_ptr next() {
    if (head != chain.head_block_id()) {
      head = chain.head_block_id();
      for (auto& g : gens) g.set_head(head, chain.head_block_time());
    }
    colony::generated_transaction g = gens[turn++ % colony_threads].next();
    const core::private_key& k = keys.private_key(g.signer, g.role);
    const core::public_key& p = keys.public_key(g.signer, g.role);
    return std::make_shared<const core::full_transaction>(std::move(g.tx), chain.options().chain, std::span(&k, 1),
                                                          std::span(&p, 1));
  }

  std::vector<core::full_transaction_ptr> batch(std::size_t n) {
    std::vector<core::full_transaction_ptr> txs;
    txs.reserve(n);
    for (std::size_t i = 0; i < n; ++i) txs.push_back(next());
    return txs;
  }

  // Pushes new transactions until the pending ones overfill a block of block_target bytes.
  void fill_pending() {
    std::size_t bytes = 0;
    for (const auto& t : chain.pending()) bytes += t->packed_size();
    while (bytes <= block_target) {
      auto t = next();
      if (chain.push_transaction(t) != core::reject::none) fail("a generated transaction was rejected");
      bytes += t->packed_size();
    }
  }

  core::chain chain;
  colony::key_cache keys;
  colony::comment_ring ring;
  std::vector<colony::generator> gens;
  core::block_id head{{0xff}};  // not a real id: the first next() sets the generators' head
  std::size_t turn = 0;
  // push_transaction's batch, made once: the comments a batch creates are cleared with it,
  // so a second batch could vote on comments the chain no longer has.
  std::vector<core::full_transaction_ptr> push_batch;
};

std::map<std::string, std::unique_ptr<bench_chain>>& chains() {
  static std::map<std::string, std::unique_ptr<bench_chain>> m;
  return m;
}

bench_chain& chain_for(const std::string& key, const core::chain_options& o) {
  auto& slot = chains()[key];
  if (!slot) slot = std::make_unique<bench_chain>(o);
  return *slot;
}

struct variant {
  std::string name;
  std::function<void(core::chain_options&)> set;
};

core::chain_options options_of(const variant& v) {
  core::chain_options o = base_options();
  v.set(o);
  return o;
}

void count_rejects(benchmark::State& state, std::uint64_t rejected) {
  if (rejected != 0) state.SkipWithError("transactions of the mix were rejected");
}

// ---- push_transaction -------------------------------------------------------------------

// One batch of the typical mix per iteration, all accepted; between batches the pending
// state is cleared with the timer paused, so every batch meets the same state.
void push_transaction(benchmark::State& state, const variant& v) {
  bench_chain& bc = chain_for("push/" + v.name, options_of(v));
  bc.chain.clear_pending();
  if (bc.push_batch.empty()) bc.push_batch = bc.batch(push_batch);
  const std::vector<core::full_transaction_ptr>& batch = bc.push_batch;
  std::uint64_t rejected = 0;
  for (auto _ : state) {
    for (const auto& t : batch) rejected += bc.chain.push_transaction(t) != core::reject::none;
    state.PauseTiming();
    bc.chain.clear_pending();
    state.ResumeTiming();
  }
  count_rejects(state, rejected);
  state.SetItemsProcessed(state.iterations() * as_count(batch.size()));
  std::size_t bytes = 0;
  for (const auto& t : batch) bytes += t->packed_size();
  state.SetBytesProcessed(state.iterations() * as_count(bytes));
  state.counters["tx_per_batch"] = static_cast<double>(batch.size());
}

// ---- apply_block ------------------------------------------------------------------------

// A full 2 MB block per iteration: with the timer paused, new transactions are pushed until
// they overfill the block and the block is generated; then applying it is timed (undoing
// the pending state, applying the block, pruning, re-applying the transactions left out).
// The chain grows as it would: every block adds ~7,600 unexpired ids and ~1,900 votes, so
// later iterations work on bigger indexes (a real node holds an hour of ids, ~8.7 M).
void apply_block(benchmark::State& state, const variant& v) {
  bench_chain& bc = chain_for("apply/" + v.name, options_of(v));
  std::uint64_t txs = 0, bytes = 0, reapplied = 0, dropped = 0;
  // Outside the loop so that the last block's transactions are freed with the timer paused
  // (when the next block replaces it): a block outlives its application.
  core::full_block block;
  for (auto _ : state) {
    state.PauseTiming();
    bc.fill_pending();
    block = bc.chain.generate_block(block_target);
    state.ResumeTiming();
    const core::block_result r = bc.chain.apply_block(block);
    state.PauseTiming();
    if (r.applied != block.transactions.size()) fail("block not fully applied");
    txs += r.applied;
    bytes += block.packed_size();
    reapplied += r.reapplied;
    dropped += r.dropped;
    state.ResumeTiming();
  }
  if (dropped != 0) state.SkipWithError("pending transactions were dropped");
  state.SetItemsProcessed(as_count(txs));
  state.SetBytesProcessed(as_count(bytes));
  const auto n = static_cast<double>(state.iterations());
  state.counters["tx_per_block"] = static_cast<double>(txs) / n;
  state.counters["block_bytes"] = static_cast<double>(bytes) / n;
  state.counters["reapplied"] = static_cast<double>(reapplied) / n;
}

// ---- generate_block ---------------------------------------------------------------------

// Producing a full block from the pending transactions: take them in order, merkle root,
// header signature. Nothing is re-executed.
void generate_block(benchmark::State& state, const variant& v) {
  bench_chain& bc = chain_for("generate/" + v.name, options_of(v));
  if (bc.chain.pending_count() == 0) bc.fill_pending();
  std::size_t n = 0;
  for (auto _ : state) {
    core::full_block b = bc.chain.generate_block(block_target);
    n = b.transactions.size();
    benchmark::DoNotOptimize(b.header.witness_signature);
  }
  state.SetItemsProcessed(state.iterations() * as_count(n));
  state.counters["tx_per_block"] = static_cast<double>(n);
}

// ---- dedup lookup -----------------------------------------------------------------------

// is_known_transaction with ~7,000 pending and ~36,000 included ids; the queries are a
// shuffled third each of pending ids, included ids and ids nobody has seen.
struct dedup_fixture {
  bench_chain* bc = nullptr;
  std::vector<core::transaction_id> queries;
  std::size_t pending = 0;
  std::size_t included = 0;
};

dedup_fixture& dedup_for(const variant& v) {
  static std::map<std::string, dedup_fixture> fixtures;
  dedup_fixture& f = fixtures[v.name];
  if (f.bc != nullptr) return f;
  f.bc = &chain_for("dedup/" + v.name, options_of(v));
  core::chain& c = f.bc->chain;
  std::vector<core::transaction_id> included;
  for (int b = 0; b < 5; ++b) {
    f.bc->fill_pending();
    const core::full_block block = c.generate_block(block_target);
    for (const auto& t : block.transactions) included.push_back(t->id());
    c.apply_block(block);
  }
  // The few transactions the last block left out stay pending (their comments may be the
  // targets of the batch's votes).
  std::vector<core::transaction_id> pending;
  for (const auto& t : f.bc->batch(push_batch)) {
    if (c.push_transaction(t) != core::reject::none) fail("a generated transaction was rejected");
    pending.push_back(t->id());
  }
  f.pending = pending.size();
  f.included = included.size();
  std::mt19937_64 rng(7);
  for (const auto& id : pending) f.queries.push_back(id);
  for (std::size_t i = 0; i < pending.size(); ++i) f.queries.push_back(included[rng() % included.size()]);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    core::transaction_id miss;
    for (auto& byte : miss.data) byte = static_cast<std::uint8_t>(rng());
    f.queries.push_back(miss);
  }
  std::shuffle(f.queries.begin(), f.queries.end(), rng);
  for (std::size_t i = 0; i < f.queries.size(); ++i) (void)c.is_known_transaction(f.queries[i]);
  return f;
}

void dedup_lookup(benchmark::State& state, const variant& v) {
  const dedup_fixture& f = dedup_for(v);
  const core::chain& c = f.bc->chain;
  std::size_t hits = 0;
  for (auto _ : state) {
    hits = 0;
    for (const auto& id : f.queries) hits += c.is_known_transaction(id);
    benchmark::DoNotOptimize(hits);
  }
  if (hits < 2 * f.pending) state.SkipWithError("known ids not found");
  state.SetItemsProcessed(state.iterations() * as_count(f.queries.size()));
  state.counters["pending_ids"] = static_cast<double>(f.pending);
  state.counters["included_ids"] = static_cast<double>(f.included);
}

// ---- genesis ----------------------------------------------------------------------------

// One-shot: a chain of 100,000 accounts (key derivation on every core, then the indexes).
void genesis_accounts_bench(benchmark::State& state) {
  for (auto _ : state) {
    auto c = std::make_unique<core::chain>(base_options());
    benchmark::DoNotOptimize(c->head_block_id());
    state.PauseTiming();
    c.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * genesis_accounts);
}

// ---- registration -----------------------------------------------------------------------

void register_all() {
  using core::counter_mode;
  using core::dedup_mode;
  using core::signer_source;
  const std::vector<variant> push_variants = {
      {"SplitLocal", [](core::chain_options&) {}},  // the defaults
      {"UnifiedLocal", [](core::chain_options& o) { o.dedup = dedup_mode::unified; }},
      {"SplitState", [](core::chain_options& o) { o.custom_ops = counter_mode::state; }},
      {"UnifiedState",
       [](core::chain_options& o) {
         o.dedup = dedup_mode::unified;
         o.custom_ops = counter_mode::state;
       }},
      {"Recover", [](core::chain_options& o) { o.signers = signer_source::recover; }},
      {"NoKeepAlive", [](core::chain_options& o) { o.db.keep_alive = false; }},
      {"NoPoolObjects", [](core::chain_options& o) { o.db.pool_objects = false; }},
      {"NoPoolUndo", [](core::chain_options& o) { o.db.pool_undo = false; }},
  };
  for (const variant& v : push_variants)
    benchmark::RegisterBenchmark(("BM_PushTransaction_" + v.name).c_str(), [v](benchmark::State& s) {
      push_transaction(s, v);
    })->Unit(benchmark::kMicrosecond);

  const std::vector<variant> apply_variants = {
      {"InSession", [](core::chain_options&) {}},
      {"NoSession", [](core::chain_options& o) { o.apply_block_in_session = false; }},
  };
  for (const variant& v : apply_variants)
    benchmark::RegisterBenchmark(("BM_ApplyBlock_" + v.name).c_str(), [v](benchmark::State& s) {
      apply_block(s, v);
    })->Unit(benchmark::kMillisecond);

  benchmark::RegisterBenchmark("BM_GenerateBlock_Full", [v = push_variants.front()](benchmark::State& s) {
    generate_block(s, v);
  })->Unit(benchmark::kMillisecond);

  const std::vector<variant> dedup_variants = {
      {"Split", [](core::chain_options&) {}},
      {"Unified", [](core::chain_options& o) { o.dedup = dedup_mode::unified; }},
  };
  for (const variant& v : dedup_variants)
    benchmark::RegisterBenchmark(("BM_DedupLookup_" + v.name).c_str(), [v](benchmark::State& s) {
      dedup_lookup(s, v);
    })->Unit(benchmark::kMicrosecond);

  benchmark::RegisterBenchmark("BM_GenesisAccounts", genesis_accounts_bench)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
#if !defined(__OPTIMIZE__)
  std::fprintf(stderr, "chain_bench: WARNING: built without optimization; timings are meaningless\n");
#endif
#if !defined(NDEBUG)
  std::fprintf(stderr, "chain_bench: WARNING: built without NDEBUG; measure the release preset\n");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::AddCustomContext("genesis_accounts", std::to_string(genesis_accounts));
  benchmark::AddCustomContext("block_target_bytes", std::to_string(block_target));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  chains().clear();
  return 0;
}
