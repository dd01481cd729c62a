// Microbenchmarks of the chain state snapshots (core/chain/chain_snapshot.hpp) over a
// 1,000,000-account genesis: loading one (check, then build every index), checking one alone
// (the size, the header, XXH3 over every byte), writing one (the state digest included), and
// XXH3 on its own over the same bytes. Each reports bytes_per_second: the file's bytes over
// the time, the figure docs/measured/snapshots.md quotes.
//
//   apiary_snapshot_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The chain and its snapshot are built once, lazily (a 1,000,000-account genesis derives two
// million keys: a minute on two cores), and kept until exit; a loaded chain is destroyed with
// the timer paused.
#include <benchmark/benchmark.h>

#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/protocol/buffer.hpp"

namespace {

using namespace apiary;

// A million accounts by default; the ctest smoke run sets APIARY_BENCH_ACCOUNTS lower.
const std::uint32_t genesis_accounts = [] {
  const char* env = std::getenv("APIARY_BENCH_ACCOUNTS");
  unsigned long n = env != nullptr ? std::strtoul(env, nullptr, 10) : 0;
  return n >= 1'000 ? static_cast<std::uint32_t>(n) : 1'000'000u;
}();

core::chain_options options() {
  core::chain_options o;
  o.genesis_accounts = genesis_accounts;
  return o;
}

struct fixture {
  std::unique_ptr<core::chain> chain;
  core::out_buffer file;
};

const fixture& state() {
  static const fixture f = [] {
    fixture out;
    out.chain = std::make_unique<core::chain>(options());
    out.chain->write_snapshot(out.file);
    std::fprintf(stderr, "snapshot_bench: %u accounts, a snapshot of %zu bytes\n", genesis_accounts, out.file.size());
    return out;
  }();
  return f;
}

void count_bytes(benchmark::State& s) {
  const auto bytes = static_cast<std::int64_t>(state().file.size());
  s.SetBytesProcessed(static_cast<std::int64_t>(s.iterations()) * bytes);
  s.counters["accounts"] = genesis_accounts;
  s.counters["file_bytes"] = static_cast<double>(bytes);
}

void BM_SnapshotLoad(benchmark::State& s) {
  const fixture& f = state();
  for (auto _ : s) {
    std::unique_ptr<core::chain> c = core::chain::from_snapshot(options(), f.file.span());
    benchmark::DoNotOptimize(c->head_block_num());
    s.PauseTiming();
    c.reset();
    s.ResumeTiming();
  }
  count_bytes(s);
}
BENCHMARK(BM_SnapshotLoad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SnapshotCheck(benchmark::State& s) {
  const fixture& f = state();
  for (auto _ : s) benchmark::DoNotOptimize(core::check_snapshot(f.file.span()).head_block_num);
  count_bytes(s);
}
BENCHMARK(BM_SnapshotCheck)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SnapshotWrite(benchmark::State& s) {
  const fixture& f = state();
  core::out_buffer out(f.file.size());
  for (auto _ : s) {
    out.clear();
    f.chain->write_snapshot(out);
    benchmark::DoNotOptimize(out.data());
  }
  count_bytes(s);
}
BENCHMARK(BM_SnapshotWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Xxh3(benchmark::State& s) {
  const fixture& f = state();
  for (auto _ : s) benchmark::DoNotOptimize(XXH3_64bits(f.file.data(), f.file.size()));
  count_bytes(s);
}
BENCHMARK(BM_Xxh3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
