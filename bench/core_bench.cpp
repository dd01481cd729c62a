// Microbenchmarks of the protocol core on one full 2 MB block of the typical mix (built
// once, before any timing), plus signing and key recovery next to the same work done with
// bare libsecp256k1 calls, so what apiary's wrappers cost shows up as a ratio.
//
//   apiary_core_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/custom_json.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace {

using namespace apiary;

// Hive's maximum block size, and the queen's default target: the maximum minus 256 bytes.
constexpr std::size_t max_block_size = 2 * 1024 * 1024;
constexpr std::size_t block_target = max_block_size - 256;

// The colony that fills the block: four threads' worth of generators over 10,000 genesis
// accounts, interleaved in one thread so the block is the same on every run.
constexpr std::size_t colony_threads = 4;
constexpr std::size_t genesis_accounts = 10'000;
constexpr std::uint64_t base_seed = 20240601;
constexpr std::string_view password = "apiary-bench";
constexpr std::uint32_t head_block_num = 1000;
constexpr core::time_point_sec head_time{1'717'200'000};  // 2024-06-01T00:00:00

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "core_bench: fixture check failed: %s\n", what);
  std::exit(2);
}

std::int64_t as_count(std::size_t n) { return static_cast<std::int64_t>(n); }

// ---- bare libsecp256k1: the reference the wrappers are measured against ---------------

const secp256k1_context* bare_context() {
  static secp256k1_context* ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  return ctx;
}

bool bare_is_canonical(const std::uint8_t* c) {
  return !(c[1] & 0x80) && !(c[1] == 0 && !(c[2] & 0x80)) && !(c[33] & 0x80) && !(c[33] == 0 && !(c[34] & 0x80));
}

// The canonical-retry loop of keys.hpp: RFC 6979 with extra entropy sha256(digest || attempt).
void bare_sign(const std::uint8_t* digest, const std::uint8_t* secret, std::uint8_t* out65) {
  std::array<std::uint8_t, 33> entropy_input{};
  std::copy_n(digest, 32, entropy_input.begin());
  for (unsigned attempt = 1;; ++attempt) {
    entropy_input[32] = static_cast<std::uint8_t>(attempt);
    const core::sha256_digest extra = core::sha256(entropy_input.data(), entropy_input.size());
    secp256k1_ecdsa_recoverable_signature sig;
    if (secp256k1_ecdsa_sign_recoverable(bare_context(), &sig, digest, secret, secp256k1_nonce_function_rfc6979,
                                         extra.begin()) != 1)
      fail("secp256k1_ecdsa_sign_recoverable");
    int recid = 0;
    secp256k1_ecdsa_recoverable_signature_serialize_compact(bare_context(), out65 + 1, &recid, &sig);
    out65[0] = static_cast<std::uint8_t>(27 + 4 + recid);
    if (bare_is_canonical(out65)) return;
  }
}

bool bare_recover(const std::uint8_t* sig65, const std::uint8_t* digest, std::uint8_t* out33) {
  secp256k1_ecdsa_recoverable_signature sig;
  const int recid = (sig65[0] - 27) & 3;
  if (secp256k1_ecdsa_recoverable_signature_parse_compact(bare_context(), &sig, sig65 + 1, recid) != 1) return false;
  secp256k1_pubkey pk;
  if (secp256k1_ecdsa_recover(bare_context(), &pk, &sig, digest) != 1) return false;
  std::size_t len = 33;
  secp256k1_ec_pubkey_serialize(bare_context(), out33, &len, &pk, SECP256K1_EC_COMPRESSED);
  return len == 33;
}

// ---- the data, built once ---------------------------------------------------------------

struct fixture {
  core::chain_id chain = core::hive_mainnet_chain_id();
  core::full_block block;
  core::signed_block signed_block;
  std::vector<std::uint8_t> packed;  // the block's wire bytes
  std::size_t tx_bytes = 0;          // of which transactions
  std::size_t json_size = 0;
  std::vector<std::string_view> custom_jsons;  // into signed_block
  std::size_t custom_json_bytes = 0;
  colony::generator_stats stats;
  std::array<std::uint64_t, colony::op_kind_count> packed_bytes_by_kind{};

  // A typical transaction: the custom_json (the mix's commonest kind) closest in size to
  // the block's average, with its signer's key, digest and signature.
  core::transaction typical_tx;
  std::size_t typical_size = 0;
  std::optional<core::private_key> typical_key;
  core::public_key typical_pub;
  core::sha256_digest typical_digest;
  core::compact_signature typical_sig;
};

// The generated transactions of a 2 MB block, signed, in the order the colony makes them.
void fill_block(fixture& f, colony::key_cache& keys) {
  const auto genesis = colony::genesis_account_names(genesis_accounts);
  colony::comment_ring ring;
  std::vector<colony::generator> gens;
  gens.reserve(colony_threads);
  core::block_id head_id;
  head_id.data = {0, 0, 0x03, 0xe8, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  if (core::block_num_from_id(head_id) != head_block_num) fail("head block id");
  for (std::size_t t = 0; t < colony_threads; ++t) {
    gens.emplace_back(colony::mix_config{}, colony::generator_options{base_seed, static_cast<std::uint32_t>(t), true},
                      colony::deal_accounts(genesis, t, colony_threads), ring);
    gens.back().set_head(head_id, head_time);
  }
  f.block.header.previous = head_id;
  f.block.header.timestamp = head_time + 3;
  f.block.header.witness = core::account_name("initminer");
  std::vector<colony::op_kind> kinds;
  for (std::size_t i = 0;; ++i) {
    colony::generated_transaction g = gens[i % colony_threads].next();
    const core::private_key& key = keys.private_key(g.signer, g.role);
    const core::public_key& pub = keys.public_key(g.signer, g.role);
    auto tx = std::make_shared<const core::full_transaction>(std::move(g.tx), f.chain, std::span(&key, 1),
                                                             std::span(&pub, 1));
    const std::size_t n = f.block.transactions.size();
    if (core::block_overhead_size(f.block.header, n + 1) + f.tx_bytes + tx->packed_size() > block_target) break;
    f.tx_bytes += tx->packed_size();
    f.packed_bytes_by_kind[colony::index_of(g.kind)] += tx->packed_size();
    kinds.push_back(g.kind);
    f.block.transactions.push_back(std::move(tx));
  }
  // Counted from the block: the last transaction made did not fit.
  for (auto k : kinds) ++f.stats.kinds[colony::index_of(k)].count;

  f.block.header.transaction_merkle_root = f.block.compute_merkle_root();
  const core::private_key witness_key = core::private_key::from_login("initminer", core::key_role::active, password);
  f.block.header.witness_signature = witness_key.sign(core::header_digest(f.block.header));
  f.signed_block = f.block.to_signed_block();
}

// The two packing paths must agree byte for byte, and decoding must give back the block and
// the ids the producer computed.
void pack_and_check(fixture& f) {
  core::out_buffer buf;
  f.block.pack_into(buf);
  if (buf.size() != f.block.packed_size()) fail("full_block::packed_size != bytes packed");
  if (buf.size() > block_target) fail("block over the target size");
  f.packed.assign(buf.bytes(), buf.bytes() + buf.size());
  buf.clear();
  core::pack_into(buf, f.signed_block);
  if (buf.size() != f.packed.size() || !std::equal(f.packed.begin(), f.packed.end(), buf.bytes()))
    fail("full_block::pack_into and pack_into(signed_block) differ");
  if (core::packed_size(f.signed_block) != f.packed.size()) fail("packed_size(signed_block)");
  const core::decoded_block decoded = core::decode_block_with_ids(f.packed);
  if (!(decoded.block == f.signed_block)) fail("decoded block differs");
  for (std::size_t i = 0; i < decoded.transaction_ids.size(); ++i)
    if (decoded.transaction_ids[i] != f.block.transactions[i]->id()) fail("decoded transaction id differs");

  core::out_buffer json;
  core::json_writer w(json);
  core::write_json(w, f.signed_block);
  f.json_size = json.size();

  for (const auto& tx : f.signed_block.transactions)
    for (const auto& op : tx.operations)
      if (const auto* cj = std::get_if<core::custom_json_operation>(&op)) {
        f.custom_jsons.push_back(cj->json);
        f.custom_json_bytes += cj->json.size();
        if (!core::is_valid_json(cj->json)) fail("a generated custom_json payload is not valid JSON");
      }
}

// The custom_json closest to the block's average size, with its key and signature; the bare
// libsecp256k1 loop must make the very signature the wrapper makes, and recover the same key.
void pick_typical(fixture& f, colony::key_cache& keys) {
  const std::size_t average = f.tx_bytes / f.block.transactions.size();
  const core::full_transaction* typical = nullptr;
  for (const auto& tx : f.block.transactions) {
    const auto* cj = std::get_if<core::custom_json_operation>(&tx->tx().operations.front());
    if (cj == nullptr) continue;
    const auto distance = [&](const core::full_transaction* t) {
      return t->packed_size() > average ? t->packed_size() - average : average - t->packed_size();
    };
    if (typical == nullptr || distance(tx.get()) < distance(typical)) typical = tx.get();
  }
  if (typical == nullptr) fail("no custom_json in the block");
  f.typical_tx = static_cast<const core::transaction&>(typical->tx());
  f.typical_size = typical->packed_size();
  const auto& signer =
      std::get<core::custom_json_operation>(f.typical_tx.operations.front()).required_posting_auths.front();
  f.typical_key = keys.private_key(signer, core::key_role::posting);
  f.typical_pub = keys.public_key(signer, core::key_role::posting);
  f.typical_digest = typical->sig_digest();
  f.typical_sig = typical->tx().signatures.front();

  core::compact_signature bare;
  bare_sign(f.typical_digest.begin(), f.typical_key->secret().begin(), bare.begin());
  if (bare != f.typical_sig) fail("bare libsecp256k1 signature differs from private_key::sign");
  core::public_key recovered;
  if (!bare_recover(f.typical_sig.begin(), f.typical_digest.begin(), recovered.begin()) || recovered != f.typical_pub)
    fail("bare recovery");
  if (core::recover_public_key(f.typical_sig, f.typical_digest) != f.typical_pub) fail("recover_public_key");
}

fixture build_fixture() {
  fixture f;
  colony::key_cache keys{std::string(password)};
  fill_block(f, keys);
  pack_and_check(f);
  pick_typical(f, keys);
  return f;
}

const fixture* fixture_ptr = nullptr;
const fixture& data() { return *fixture_ptr; }

// ---- serialization ----------------------------------------------------------------------

void BM_SerializeBlock(benchmark::State& state) {
  const fixture& f = data();
  core::out_buffer buf(max_block_size);
  f.block.pack_into(buf);  // touch the pages once, outside the timing
  for (auto _ : state) {
    buf.clear();
    f.block.pack_into(buf);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.packed.size()));
}
BENCHMARK(BM_SerializeBlock);

void BM_SerializeBlock_FieldWalk(benchmark::State& state) {
  const fixture& f = data();
  core::out_buffer buf(max_block_size);
  core::pack_into(buf, f.signed_block);
  for (auto _ : state) {
    buf.clear();
    core::pack_into(buf, f.signed_block);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.packed.size()));
}
BENCHMARK(BM_SerializeBlock_FieldWalk);

void BM_SizeComputerBlock(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) benchmark::DoNotOptimize(f.block.packed_size());
  state.SetItemsProcessed(state.iterations() * as_count(f.block.transactions.size()));
}
BENCHMARK(BM_SizeComputerBlock);

void BM_SizeComputerBlock_FieldWalk(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) benchmark::DoNotOptimize(core::packed_size(f.signed_block));
  state.SetItemsProcessed(state.iterations() * as_count(f.block.transactions.size()));
}
BENCHMARK(BM_SizeComputerBlock_FieldWalk);

// Decoding with the transaction ids. The decoded block is freed with the timer paused:
// BM_DeserializeBlock_AndFree shows what freeing its ~38,000 allocations adds.
void BM_DeserializeBlock(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) {
    core::decoded_block b = core::decode_block_with_ids(f.packed);
    benchmark::DoNotOptimize(b.transaction_ids.data());
    state.PauseTiming();
    { const core::decoded_block gone = std::move(b); }
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.packed.size()));
  state.SetItemsProcessed(state.iterations() * as_count(f.block.transactions.size()));
}
BENCHMARK(BM_DeserializeBlock);

// The same with the decoded block freed inside the timing, as every real decode ends.
void BM_DeserializeBlock_AndFree(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) {
    core::decoded_block b = core::decode_block_with_ids(f.packed);
    benchmark::DoNotOptimize(b.transaction_ids.data());
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.packed.size()));
  state.SetItemsProcessed(state.iterations() * as_count(f.block.transactions.size()));
}
BENCHMARK(BM_DeserializeBlock_AndFree);

void BM_BlockToJson(benchmark::State& state) {
  const fixture& f = data();
  core::out_buffer buf(f.json_size);
  {
    core::json_writer w(buf);
    core::write_json(w, f.signed_block);
  }
  for (auto _ : state) {
    buf.clear();
    core::json_writer w(buf);
    core::write_json(w, f.signed_block);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.json_size));
}
BENCHMARK(BM_BlockToJson);

// ---- signatures -------------------------------------------------------------------------

// The producer's path: pack once, id, digest, canonical signature, signature appended.
// The copy of the transaction (full_transaction takes it by value) is in the loop; it costs
// well under 1% of a signature.
void BM_SignTransaction(benchmark::State& state) {
  const fixture& f = data();
  const std::span<const core::private_key> keys(&*f.typical_key, 1);
  for (auto _ : state) {
    core::full_transaction tx(f.typical_tx, f.chain, keys);
    benchmark::DoNotOptimize(tx.packed().data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["tx_bytes"] = static_cast<double>(f.typical_size);
}
BENCHMARK(BM_SignTransaction);

// The same work with bare calls: pack into a reused buffer, id and digest from those bytes,
// the canonical loop, the signature appended, the bytes copied out once.
void BM_SignTransaction_BareSecp256k1(benchmark::State& state) {
  const fixture& f = data();
  const std::uint8_t* secret = f.typical_key->secret().begin();
  core::out_buffer buf(4096);
  for (auto _ : state) {
    buf.clear();
    core::pack_into(buf, f.typical_tx);
    const core::transaction_id id = core::transaction_id_of(buf.span());
    const core::sha256_digest digest = core::signature_digest_of(f.chain, buf.span());
    std::uint8_t* out = reinterpret_cast<std::uint8_t*>(buf.prepare(66));
    out[0] = 1;  // one signature
    bare_sign(digest.begin(), secret, out + 1);
    buf.commit(66);
    std::vector<std::uint8_t> packed(buf.bytes(), buf.bytes() + buf.size());
    benchmark::DoNotOptimize(id);
    benchmark::DoNotOptimize(packed.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SignTransaction_BareSecp256k1);

void BM_SignDigest(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) benchmark::DoNotOptimize(f.typical_key->sign(f.typical_digest));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SignDigest);

void BM_SignDigest_BareSecp256k1(benchmark::State& state) {
  const fixture& f = data();
  const std::uint8_t* secret = f.typical_key->secret().begin();
  core::compact_signature sig;
  for (auto _ : state) {
    bare_sign(f.typical_digest.begin(), secret, sig.begin());
    benchmark::DoNotOptimize(sig);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SignDigest_BareSecp256k1);

void BM_RecoverSigner(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) benchmark::DoNotOptimize(core::recover_public_key(f.typical_sig, f.typical_digest));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecoverSigner);

void BM_RecoverSigner_BareSecp256k1(benchmark::State& state) {
  const fixture& f = data();
  core::public_key key;
  for (auto _ : state) {
    benchmark::DoNotOptimize(bare_recover(f.typical_sig.begin(), f.typical_digest.begin(), key.begin()));
    benchmark::DoNotOptimize(key);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecoverSigner_BareSecp256k1);

// ---- the block's merkle root ---------------------------------------------------------------

// The writer's share of producing a block: the tree over the transactions' cached digests
// (one SHA-256 of two digests per inner node), then RIPEMD-160 of the root.
void BM_MerkleRoot(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) benchmark::DoNotOptimize(f.block.compute_merkle_root());
  state.SetItemsProcessed(state.iterations() * as_count(f.block.transactions.size()));
}
BENCHMARK(BM_MerkleRoot);

// ---- custom_json validation ---------------------------------------------------------------

void BM_ValidateCustomJson(benchmark::State& state) {
  const fixture& f = data();
  for (auto _ : state) {
    std::size_t valid = 0;
    for (std::string_view j : f.custom_jsons)
      if (core::is_valid_json(j)) ++valid;
    benchmark::DoNotOptimize(valid);
  }
  state.SetBytesProcessed(state.iterations() * as_count(f.custom_json_bytes));
  state.SetItemsProcessed(state.iterations() * as_count(f.custom_jsons.size()));
}
BENCHMARK(BM_ValidateCustomJson);

// ---- the colony's own cost ----------------------------------------------------------------

// One unsigned transaction of the mix, as a colony thread makes it before signing.
void BM_GenerateTransaction(benchmark::State& state) {
  const auto genesis = colony::genesis_account_names(genesis_accounts / colony_threads);
  colony::comment_ring ring;
  colony::generator gen(colony::mix_config{}, colony::generator_options{base_seed, 0, true}, genesis, ring);
  core::block_id head;
  head.data[3] = 1;
  gen.set_head(head, head_time);
  for (auto _ : state) {
    colony::generated_transaction g = gen.next();
    benchmark::DoNotOptimize(g.tx.operations.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GenerateTransaction);

void report_fixture(const fixture& f) {
  const std::size_t n = f.block.transactions.size();
  const double average = static_cast<double>(f.tx_bytes) / static_cast<double>(n);
  std::fprintf(stderr, "core_bench: block of %zu transactions, %zu bytes (target %zu)\n", n, f.packed.size(),
               block_target);
  std::fprintf(stderr, "core_bench: average signed transaction %.1f bytes\n", average);
  for (colony::op_kind k : colony::all_op_kinds) {
    const std::uint64_t c = f.stats[k].count;
    const auto bytes = static_cast<double>(f.packed_bytes_by_kind[colony::index_of(k)]);
    std::fprintf(stderr, "core_bench:   %-11s %5llu (%5.2f%%) avg %6.1f bytes\n",
                 std::string(colony::op_kind_name(k)).c_str(), static_cast<unsigned long long>(c),
                 100.0 * static_cast<double>(c) / static_cast<double>(n),
                 c == 0 ? 0.0 : bytes / static_cast<double>(c));
  }
  std::fprintf(stderr, "core_bench: JSON %zu bytes; %zu custom_json payloads, %zu bytes; typical tx %zu B\n",
               f.json_size, f.custom_jsons.size(), f.custom_json_bytes, f.typical_size);
  benchmark::AddCustomContext("block_transactions", std::to_string(n));
  benchmark::AddCustomContext("block_bytes", std::to_string(f.packed.size()));
  char avg[32];
  std::snprintf(avg, sizeof avg, "%.1f", average);
  benchmark::AddCustomContext("average_tx_bytes", avg);
  benchmark::AddCustomContext("block_json_bytes", std::to_string(f.json_size));
}

}  // namespace

int main(int argc, char** argv) {
#if !defined(__OPTIMIZE__)
  std::fprintf(stderr, "core_bench: WARNING: built without optimization; timings are meaningless\n");
#endif
#if !defined(NDEBUG)
  std::fprintf(stderr, "core_bench: WARNING: built without NDEBUG measure the release preset\n");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const fixture f = build_fixture();
  fixture_ptr = &f;
  report_fixture(f);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
