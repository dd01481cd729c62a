// The genesis a run builds before it measures, at mainnet-like account counts: the keys
// from the genesis key cache (harness/.../cycle/genesis_key_cache.hpp: read, checksummed and
// spot-checked) and the chain's accounts, properties and block summaries built from them;
// and, for scale, the key derivation the cache saves.
//
//   apiary_genesis_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Account counts come from APIARY_BENCH_GENESIS (a comma list; default 100000,1000000,3000000;
// the ctest smoke run sets a small one). The cache is the one runs use ($APIARY_KEY_CACHE,
// else the user's cache directory); it is filled before the timing starts, which the first
// time takes about 25 µs of CPU per account and role missing from it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/genesis_keys.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"

namespace {

using namespace apiary;

std::vector<std::int64_t> account_counts() {
  const char* env = std::getenv("APIARY_BENCH_GENESIS");
  std::istringstream in(env != nullptr && *env != '\0' ? env : "100000,1000000,3000000");
  std::vector<std::int64_t> out;
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

core::chain_options genesis_of(std::int64_t accounts) {
  core::chain_options o;
  o.genesis_accounts = static_cast<std::uint32_t>(accounts);
  return o;
}

// What a run's genesis costs with the keys cached: loading them, then building the chain.
void BM_GenesisFromKeyCache(benchmark::State& state) {
  const core::chain_options o = genesis_of(state.range(0));
  const std::string dir = harness::key_cache_dir();
  if (dir.empty()) {
    state.SkipWithError("the key cache is off (APIARY_KEY_CACHE=off)");
    return;
  }
  harness::genesis_keys(o, dir);  // fills the cache, untimed
  for (auto _ : state) {
    const harness::genesis_key_set keys = harness::genesis_keys(o, dir);
    if (keys.cached != o.genesis_accounts) state.SkipWithError(("the cache did not serve: " + keys.note).c_str());
    core::chain c(o, {}, keys.keys);
    benchmark::DoNotOptimize(c.head_block_num());
  }
  state.counters["accounts_per_s"] =
      benchmark::Counter(static_cast<double>(o.genesis_accounts), benchmark::Counter::kIsIterationInvariantRate);
}

// The derivation the cache saves, per account (both roles), over the machine's cores.
void BM_DeriveGenesisKeys(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(core::derive_genesis_keys("user", "apiary", 0, n));
  state.counters["accounts_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (const std::int64_t n : account_counts()) {
    benchmark::RegisterBenchmark("BM_GenesisFromKeyCache", BM_GenesisFromKeyCache)
        ->Arg(n)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("BM_DeriveGenesisKeys", BM_DeriveGenesisKeys)
      ->Arg(std::min<std::int64_t>(20'000, account_counts().front()))
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
