// Microbenchmarks of a colony producer thread's work per transaction, by kind of the typical
// mix (colony/generator.hpp), in three parts:
//
//   BM_Generate/<kind>          building the unsigned transaction (generator::next): what
//                               the colony's generation_cpu_ms measures
//   BM_GenerateWeighted/<kind>  BM_Generate with each payer drawn by its weight (--payer-weights
//                               vesting:1 over a log-normal genesis vesting) instead of in turn
//   BM_GenerateUnsigned/<kind>  that and the full_transaction an unsigned run submits
//                               (packed once, id and digest): the colony's whole work per
//                               transaction with signing off, before it is submitted
//   BM_Sign/<kind>              a generated transaction signed with its signer's key, the
//                               public key attached, as the colony does with signing on:
//                               what the colony's signing_cpu_ms measures
//
// Items are transactions. The generator is primed with articles first, so replies and votes
// always find a target (a substitution would make them articles and fails the benchmark).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/genesis_vesting.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace {

using namespace apiary;
using colony::op_kind;

constexpr std::size_t accounts = 2'500;  // one thread's share of 10,000 over four threads
constexpr std::uint64_t seed = 20240601;
constexpr core::time_point_sec head_time{1'717'200'000};  // 2024-06-01T00:00:00
constexpr std::size_t primed_articles = 200;
constexpr std::size_t signing_pool = 64;  // transactions signed in turn, keys derived first

// One producer thread's generator, its comment ring primed with articles.
struct producer {
  colony::comment_ring ring;
  colony::generator gen;

  explicit producer(const std::vector<double>& payer_weights = {})
      : gen(colony::mix_config{}, colony::generator_options{seed, 0, true}, colony::genesis_account_names(accounts),
            ring, payer_weights) {
    core::block_id head;
    head.data[3] = 100;
    gen.set_head(head, head_time);
    for (std::size_t i = 0; i < primed_articles; ++i) gen.next(op_kind::article);
  }

  // Fails the benchmark when a reply or vote found no target.
  void check(benchmark::State& state, std::uint64_t substitutions_before) const {
    if (gen.stats().article_substitutions != substitutions_before)
      state.SkipWithError("a reply or vote was made an article: the comment ring was empty");
  }
};

void BM_Generate(benchmark::State& state, op_kind kind) {
  producer p;
  const std::uint64_t substitutions = p.gen.stats().article_substitutions;
  for (auto _ : state) {
    colony::generated_transaction g = p.gen.next(kind);
    benchmark::DoNotOptimize(g.tx.operations.data());
  }
  p.check(state, substitutions);
  state.SetItemsProcessed(state.iterations());
}

void BM_GenerateWeighted(benchmark::State& state, op_kind kind) {
  core::vesting_spec vesting;
  if (core::parse_vesting_spec("lognormal:median=1e11,sigma=2,min=1e6,max=1e15", vesting))
    state.SkipWithError("the vesting spec does not parse");
  std::vector<double> weights;
  for (std::uint32_t i = 0; i < accounts; ++i) weights.push_back(static_cast<double>(core::vesting_of(vesting, i)));
  producer p(weights);
  const std::uint64_t substitutions = p.gen.stats().article_substitutions;
  for (auto _ : state) {
    colony::generated_transaction g = p.gen.next(kind);
    benchmark::DoNotOptimize(g.tx.operations.data());
  }
  p.check(state, substitutions);
  state.SetItemsProcessed(state.iterations());
}

void BM_GenerateUnsigned(benchmark::State& state, op_kind kind) {
  producer p;
  const core::chain_id chain = core::hive_mainnet_chain_id();
  const std::uint64_t substitutions = p.gen.stats().article_substitutions;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    colony::generated_transaction g = p.gen.next(kind);
    const core::full_transaction_ptr tx =
        std::make_shared<const core::full_transaction>(std::move(g.tx), chain, std::span<const core::private_key>{});
    bytes += tx->packed_size();
    benchmark::DoNotOptimize(tx->id());
  }
  p.check(state, substitutions);
  state.SetItemsProcessed(state.iterations());
  state.counters["tx_bytes"] =
      state.iterations() == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(state.iterations());
}

void BM_Sign(benchmark::State& state, op_kind kind) {
  producer p;
  const core::chain_id chain = core::hive_mainnet_chain_id();
  colony::key_cache keys("apiary-bench");
  struct to_sign {
    core::transaction tx;
    const core::private_key* priv;
    const core::public_key* pub;
  };
  std::vector<to_sign> pool;
  for (std::size_t i = 0; i < signing_pool; ++i) {
    colony::generated_transaction g = p.gen.next(kind);
    const core::private_key* priv = &keys.private_key(g.signer, g.role);
    const core::public_key* pub = &keys.public_key(g.signer, g.role);
    pool.push_back({std::move(g.tx), priv, pub});
  }
  std::size_t next = 0;
  for (auto _ : state) {
    const to_sign& s = pool[next];
    next = (next + 1) % pool.size();
    const core::full_transaction_ptr tx =
        std::make_shared<const core::full_transaction>(s.tx, chain, std::span(s.priv, 1), std::span(s.pub, 1));
    benchmark::DoNotOptimize(tx->packed().data());
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

int main(int argc, char** argv) {
  for (op_kind kind : colony::all_op_kinds) {
    const std::string name(colony::op_kind_name(kind));
    benchmark::RegisterBenchmark(("BM_Generate/" + name).c_str(), BM_Generate, kind);
    benchmark::RegisterBenchmark(("BM_GenerateWeighted/" + name).c_str(), BM_GenerateWeighted, kind);
    benchmark::RegisterBenchmark(("BM_GenerateUnsigned/" + name).c_str(), BM_GenerateUnsigned, kind);
    benchmark::RegisterBenchmark(("BM_Sign/" + name).c_str(), BM_Sign, kind);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
