// Microbenchmarks of the undo-session layer (core/database.hpp) in the block-cycle shape of
// Hive's empty_undo_benchmark: 10 blocks; before each, 10,000 incoming transactions, every
// 5th failing, each in a session nested in the pending-transactions session (squashed on
// success, undone on failure); each block produced locally from up to 7,000 pending
// transactions (pending session undone, block session with one nested session per
// transaction, pushed), then the rest re-applied in a new pending session; blocks 1, 5 and 10
// made irreversible (committed) at blocks 4, 7 and 10.
//
//   BM_EmptyUndoSession/keep_alive:N             empty sessions, default heap (ladder step 1)
//   BM_EmptyUndoSession_PoolUndo/keep_alive:N    the same with undo states from a pool
//   BM_UndoSessionWithWrites/keep_alive:N/pool:M every transaction modifies 2 objects and
//                                                creates 1; pool = pool_objects + pool_undo
//
// Items are nested (transaction) sessions; one iteration is the whole 10-block run.
//
//   BM_Modify/key_change:N                       one modification of a random object among
//                                                200,000: no key changed (in place) or the
//                                                ordered owner key (the object moves)
//   BM_TransactionIdsFill/sized:N                the dedup index's id table filled with a
//                                                million ids, left to grow (0) or sized for
//                                                them first (1); slowest_insert_us is the
//                                                longest single insert: the rehash pauses
//                                                the sizing removes
//   BM_PruneExpired/pipelined:N                  a block's worth of ids (7,500) expiring at
//                                                once, removed in the block's session from a
//                                                table of APIARY_BENCH_IDS ids (default
//                                                2,000,000: past the caches), one at a time
//                                                (0) or by dedup_index::prune_expired's
//                                                pipeline (1); items are removed ids
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/multi_index/member.hpp>
#include <boost/multi_index/ordered_index.hpp>

#include "apiary/core/base/clock.hpp"
#include "apiary/core/chain/dedup_index.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/state/database.hpp"

namespace {

using apiary::core::database;
using apiary::core::database_options;
namespace bmi = boost::multi_index;

constexpr int blocks = 10;
constexpr int incoming_per_block = 10'000;
constexpr int fail_every = 5;
constexpr std::size_t block_capacity = 7'000;
// A session opens one undo state per index; the chain state is expected to hold about this
// many indexes (accounts, comments, votes, transactions, custom-op counters, properties...).
constexpr std::size_t index_count = 8;
constexpr std::uint64_t preexisting_objects = 10'000;

struct by_owner;

template <std::size_t N>
struct state_object {
  std::uint64_t id = 0;
  std::uint64_t owner = 0;
  std::int64_t balance = 0;
  std::uint8_t payload[40] = {};
};

template <std::size_t N>
using state_index = apiary::core::undo_index<
    state_object<N>,
    bmi::indexed_by<bmi::ordered_unique<bmi::member<state_object<N>, std::uint64_t, &state_object<N>::id>>,
                    bmi::ordered_non_unique<bmi::tag<by_owner>,
                                            bmi::member<state_object<N>, std::uint64_t, &state_object<N>::owner>>>>;

using modified_index = state_index<0>;  // objects the transactions modify
using created_index = state_index<1>;   // objects the transactions create

template <std::size_t... I>
void add_indexes(database& db, std::index_sequence<I...>) {
  (db.add_index<state_index<I>>(), ...);
}

std::unique_ptr<database> make_database(const database_options& options, bool with_objects) {
  auto db = std::make_unique<database>(options);
  add_indexes(*db, std::make_index_sequence<index_count>());
  if (with_objects) {
    auto& idx = db->get_index<modified_index>();
    for (std::uint64_t i = 0; i < preexisting_objects; ++i) idx.create([&](auto& o) { o.owner = i % 97; });
  }
  return db;
}

struct no_writes {
  void operator()(database&, std::uint32_t) const {}
};

// Two modifications and one creation, picked by the transaction's number so that a
// transaction re-applied later does the same thing.
struct two_modifies_one_create {
  void operator()(database& db, std::uint32_t tx) const {
    auto& modified = db.get_index<modified_index>();
    const std::uint64_t a = (tx * 2654435761u) % preexisting_objects;
    const std::uint64_t b = (a + 1 + tx % 13) % preexisting_objects;
    modified.modify(modified.get(a), [](auto& o) { o.balance -= 1; });
    modified.modify(modified.get(b), [](auto& o) { o.balance += 1; });
    db.get_index<created_index>().create([&](auto& o) { o.owner = tx; });
  }
};

// One 10-block run; returns the number of transaction sessions.
template <class Apply>
std::int64_t run_blocks(database& db, const Apply& apply, std::vector<std::uint32_t>& pending_txs) {
  const std::int64_t base = db.revision();
  std::int64_t sessions = 0;
  std::uint32_t next_tx = 0;
  pending_txs.clear();
  database::session pending;  // inactive until the first transaction after a block
  for (int block = 1; block <= blocks; ++block) {
    for (int i = 0; i < incoming_per_block; ++i) {
      const std::uint32_t tx = next_tx++;
      if (!pending.active()) pending = db.start_undo_session();
      auto session = db.start_undo_session();
      apply(db, tx);
      if (i % fail_every == 0) {
        session.undo();
      } else {
        session.squash();
        pending_txs.push_back(tx);
      }
      ++sessions;
    }

    if (pending.active()) pending.undo();  // the block is built without pending transactions
    const std::size_t in_block = std::min(block_capacity, pending_txs.size());
    {
      auto block_session = db.start_undo_session();
      for (std::size_t i = 0; i < in_block; ++i) {
        auto session = db.start_undo_session();
        apply(db, pending_txs[i]);
        session.squash();
        ++sessions;
      }
      block_session.push();
    }
    pending_txs.erase(pending_txs.begin(), pending_txs.begin() + static_cast<std::ptrdiff_t>(in_block));
    for (const std::uint32_t tx : pending_txs) {  // those that did not fit
      if (!pending.active()) pending = db.start_undo_session();
      auto session = db.start_undo_session();
      apply(db, tx);
      session.squash();
      ++sessions;
    }

    switch (block) {
      case 4: db.commit(base + 1); break;
      case 7: db.commit(base + 5); break;
      case 10: db.commit(base + 10); break;
      default: break;
    }
  }
  if (pending.active()) pending.undo();
  return sessions;
}

bool run_is_sound(benchmark::State& state, const database& db, std::int64_t base) {
  if (db.revision() == base + blocks && db.undo_depth() == 0) return true;
  state.SkipWithError("the block cycle left the undo stack in an unexpected state");
  return false;
}

void empty_sessions(benchmark::State& state, bool pool_undo) {
  const database_options options{state.range(0) != 0, false, pool_undo};
  auto db = make_database(options, false);
  std::vector<std::uint32_t> pending_txs;
  pending_txs.reserve(2 * blocks * incoming_per_block);
  std::int64_t sessions = 0;
  for (auto _ : state) {
    const std::int64_t base = db->revision();
    sessions += run_blocks(*db, no_writes{}, pending_txs);
    if (!run_is_sound(state, *db, base)) return;
  }
  state.SetItemsProcessed(sessions);
}

void BM_EmptyUndoSession(benchmark::State& state) { empty_sessions(state, false); }
void BM_EmptyUndoSession_PoolUndo(benchmark::State& state) { empty_sessions(state, true); }

void BM_UndoSessionWithWrites(benchmark::State& state) {
  const bool pool = state.range(1) != 0;
  const database_options options{state.range(0) != 0, pool, pool};
  std::vector<std::uint32_t> pending_txs;
  pending_txs.reserve(2 * blocks * incoming_per_block);
  std::int64_t sessions = 0;
  for (auto _ : state) {
    state.PauseTiming();  // a fresh state each run: the created objects would pile up
    auto db = make_database(options, true);
    state.ResumeTiming();
    const std::int64_t base = db->revision();
    sessions += run_blocks(*db, two_modifies_one_create{}, pending_txs);
    if (!run_is_sound(state, *db, base)) return;
    if (db->get_index<created_index>().size() != blocks * block_capacity) {
      state.SkipWithError("unexpected number of created objects");
      return;
    }
    state.PauseTiming();
    db.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(sessions);
}

// An id as the chain records it: digests are uniform bytes, and the table hashes the last
// eight: a mixed counter.
void set_mixed_id(apiary::core::transaction_object& o, std::uint64_t i) {
  std::uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 31;
  std::memcpy(o.trx_id.begin() + o.trx_id.size() - sizeof h, &h, sizeof h);
}

void BM_TransactionIdsFill(benchmark::State& state) {
  constexpr std::uint32_t ids = 1'000'000;
  std::int64_t slowest = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto index = std::make_unique<apiary::core::transaction_index>();
    if (state.range(0) != 0) index->reserve<apiary::core::by_trx_id>(ids);
    state.ResumeTiming();
    for (std::uint32_t i = 0; i < ids; ++i) {
      const std::int64_t t0 = apiary::core::steady_now_ns();
      index->create([i](apiary::core::transaction_object& o) {
        set_mixed_id(o, i);
        o.expiration = apiary::core::time_point_sec{i / 1000};
      });
      slowest = std::max(slowest, apiary::core::steady_now_ns() - t0);
    }
    state.PauseTiming();
    index.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * ids);
  state.counters["slowest_insert_us"] = static_cast<double>(slowest) / 1e3;
}

void BM_PruneExpired(benchmark::State& state) {
  constexpr std::uint64_t per_block = 7'500;
  const char* given = std::getenv("APIARY_BENCH_IDS");
  const std::uint64_t ids =
      std::max<std::uint64_t>(given != nullptr ? std::strtoull(given, nullptr, 10) : 2'000'000, 2 * per_block);
  const bool pipelined = state.range(0) != 0;
  database db;
  auto& index = db.add_index<apiary::core::transaction_index>();
  apiary::core::dedup_index dedup(apiary::core::dedup_mode::split, index, ids);
  // Block b's ids expire at second b; the next id to record, and the block it belongs to.
  std::uint64_t next = 0;
  auto record_block = [&] {
    for (std::uint64_t k = 0; k < per_block; ++k, ++next) {
      index.create([&](apiary::core::transaction_object& o) {
        set_mixed_id(o, next);
        o.expiration = apiary::core::time_point_sec{static_cast<std::uint32_t>(next / per_block)};
      });
    }
  };
  while (next < ids) record_block();
  std::uint32_t now = 0;
  std::uint64_t removed = 0;
  for (auto _ : state) {
    database::session block = db.start_undo_session();
    const apiary::core::time_point_sec t{now};
    if (pipelined) {
      removed += dedup.prune_expired(t);
    } else {
      const auto& by_exp = index.get<apiary::core::by_expiration>();
      while (!by_exp.empty() && by_exp.begin()->expiration <= t) {
        index.remove(*by_exp.begin());
        ++removed;
      }
    }
    state.PauseTiming();
    const std::int64_t revision = block.revision();
    block.push();
    db.commit(revision);
    record_block();  // the table keeps its size
    ++now;
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(removed));
}

// One modification of a random object among 200,000, outside any session: of a field no
// index keys on (applied in place) or of the owner, which the second index orders by (the
// object moves in that index).
void BM_Modify(benchmark::State& state) {
  constexpr std::uint64_t objects = 200'000;
  const bool key_change = state.range(0) != 0;
  modified_index index;
  for (std::uint64_t i = 0; i < objects; ++i) index.create([&](auto& o) { o.owner = i % 97; });
  std::uint64_t n = 0;
  for (auto _ : state) {
    const std::uint64_t id = (n++ * 2654435761u) % objects;
    if (key_change) {
      index.modify(index.get(id), [](auto& o) { o.owner = (o.owner + 1) % 97; });
    } else {
      index.modify(index.get(id), [](auto& o) { o.balance += 1; });
    }
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_EmptyUndoSession)->ArgName("keep_alive")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmptyUndoSession_PoolUndo)->ArgName("keep_alive")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UndoSessionWithWrites)
    ->ArgNames({"keep_alive", "pool"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransactionIdsFill)->ArgName("sized")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Modify)->ArgName("key_change")->Arg(0)->Arg(1);
BENCHMARK(BM_PruneExpired)->ArgName("pipelined")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
#ifndef NDEBUG
  std::fputs("warning: undo_bench built without NDEBUG; its timings mean nothing\n", stderr);
  benchmark::AddCustomContext("warning", "debug build, timings not representative");
#endif
  benchmark::AddCustomContext("undo_indexes", std::to_string(index_count));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
