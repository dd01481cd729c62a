// Every combination of switches (database: keep_alive, pool_objects, pool_undo; chain: dedup,
// counter, signer source, apply_block_in_session, rc, with reuse_pending on or off and the state
// on the heap or mapped) gives the
// same per-transaction results, the same blocks and the same state for the same input.
//
// The input is recorded once on a reference chain: the colony's typical mix over few
// accounts (so the custom-op limit bites) with so little vesting that they run out of resource
// credits half-way, with failing transactions mixed in (duplicates,
// wrong keys, expired ones, short expirations that expire while pending or get pruned), and
// blocks small enough that pending transactions are carried over, and a block in the middle of
// every other round that takes the whole pending list, or all of it but the last transaction
// (pushed as may_be_left_out, as some others are): where reuse_pending keeps the pending state.
// Then slots on the chain's clock, as the writer cuts them with --blocks-by clock: each slot's
// count of pushes (core::slot_schedule, some slots offering none), whatever their outcomes, then
// a block, full or not: empty ones, and blocks after insufficient_rc rejections.
// Every combination then replays the very same transactions.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/core/chain/slot_schedule.hpp"
#include "apiary/core/protocol/block.hpp"
#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

constexpr std::uint32_t switch_accounts = 30;
constexpr std::uint32_t rounds = 4;
constexpr std::uint32_t per_round = 220;
constexpr std::uint32_t drain_blocks = 3;
constexpr std::uint32_t block_limit = 24'000;  // ~80 typical transactions
constexpr std::uint32_t clock_slots = 16;

struct step {
  core::full_transaction_ptr tx;  // null: produce a block
  bool whole = false;             // the block takes every pending transaction...
  bool leave_last = false;        // ...but the last
  bool may_be_left_out = false;   // push_transaction's flag
  bool slot_end = false;          // a block on the chain's clock, after its slot's pushes
};

core::full_block make_block(const core::chain& c, const step& s) {
  if (!s.whole) return c.generate_block(block_limit);
  return c.generate_block(core::chain_limits::max_block_size,
                          s.leave_last ? static_cast<std::uint32_t>(c.pending_count() - 1) : 0);
}

struct outcome {
  std::vector<reject> results;
  std::vector<core::block_id> blocks;
  std::vector<std::uint32_t> block_counts;   // applied, reapplied, dropped, pruned per block
  std::uint32_t reused = 0;                  // blocks that kept the pending state
  std::uint32_t reused_leaving_one = 0;      // of them, those that left the last one out
  std::vector<core::sha256_digest> digests;  // after every block
  std::vector<std::uint32_t> custom_ops;     // per account, at the end
  core::sha256_digest final_digest;
  std::int64_t total = 0;
};

core::chain_options base_options() {
  core::chain_options o = small_options(switch_accounts);
  o.genesis_hbd = 5;  // the colony's transfers (0.001 HBD each) soon run out and fail
  // Every transaction costs 3 or 4 mana at the least and almost nothing regenerates: each
  // account can pay for about 15 transactions, half of what the script gives it.
  o.genesis_vesting = 60;
  return o;
}

// prefetch: before each push, run chain::prefetch_push's stages on the transactions ahead of
// it, as the writer does (stage s on the one prefetch_stages + 1 - s steps ahead).
outcome run(const core::chain_options& o, const std::vector<step>& script, bool prefetch = false) {
  core::chain c(o);
  outcome out;
  for (std::size_t k = 0; k < script.size(); ++k) {
    const step& s = script[k];
    for (int stage = 1; prefetch && stage <= core::chain::prefetch_stages; ++stage) {
      const std::size_t at = k + static_cast<std::size_t>(core::chain::prefetch_stages + 1 - stage);
      if (at < script.size() && script[at].tx) c.prefetch_push(*script[at].tx, stage);
    }
    if (s.tx) {
      out.results.push_back(c.push_transaction(s.tx, s.may_be_left_out));
      continue;
    }
    const core::full_block b = make_block(c, s);
    const core::block_result r = c.apply_block(b);
    out.reused += r.reused_pending;
    out.reused_leaving_one += r.reused_pending && r.reapplied + r.dropped == 1;
    out.blocks.push_back(c.head_block_id());
    out.block_counts.insert(out.block_counts.end(), {r.applied, r.reapplied, r.dropped, r.pruned});
    out.digests.push_back(c.state_digest());
  }
  for (std::uint32_t i = 0; i < switch_accounts; ++i) out.custom_ops.push_back(c.custom_ops_in_block(user(i)));
  out.final_digest = c.state_digest();
  out.total = c.total_hive() + c.total_hbd();
  return out;
}

// The slots on the chain's clock: each slot's count of the generators' transactions (pushed as
// the writer does: may_be_left_out once the block as it stands is full), whatever their
// outcomes, then the block; a slot that offers none is a block at once.
void record_clock_slots(core::chain& c, std::vector<colony::generator>& gens, colony::key_cache& keys,
                        std::vector<step>& script) {
  core::slot_schedule slots = *core::parse_slot_schedule("uniform:0..16").schedule;
  slots.seed = 3;
  for (std::uint32_t slot = 0; slot < clock_slots; ++slot) {
    for (auto& g : gens) g.set_head(c.head_block_id(), c.head_block_time());
    const std::uint32_t n = slot % 8 == 7 ? 0 : slots.count(c.head_block_num() + 1);
    std::uint64_t pending = 0;
    for (const auto& tx : c.pending()) pending += tx->packed_size();
    for (std::uint32_t i = 0; i < n; ++i) {
      colony::generated_transaction g = gens[i % 2].next();
      const core::private_key& k = keys.private_key(g.signer, g.role);
      const core::public_key& p = keys.public_key(g.signer, g.role);
      auto t = std::make_shared<const core::full_transaction>(std::move(g.tx), c.options().chain, std::span(&k, 1),
                                                              std::span(&p, 1));
      const bool fits = pending + 200 + t->packed_size() <= block_limit;
      script.push_back({t, false, false, !fits});
      if (c.push_transaction(t, !fits) == reject::none) pending += t->packed_size();
    }
    script.push_back({nullptr, false, false, false, true});
    c.apply_block(c.generate_block(block_limit));
  }
}

// Records the script on a chain with the default switches.
std::vector<step> record_script() {
  core::chain c(base_options());
  colony::key_cache keys(c.options().key_password);
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(switch_accounts);
  std::vector<colony::generator> gens;
  for (std::uint32_t t = 0; t < 2; ++t)
    gens.emplace_back(colony::mix_config{}, colony::generator_options{99, t, true},
                      colony::deal_accounts(genesis, t, 2), ring);
  std::mt19937_64 rng(5);
  std::vector<step> script;
  std::vector<core::full_transaction_ptr> made;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    for (auto& g : gens) g.set_head(c.head_block_id(), c.head_block_time());
    bool mid_done = false;
    for (std::uint32_t i = 0; i < per_round; ++i) {
      const std::uint64_t roll = rng() % 100;
      if (roll < 4 && !made.empty()) {  // a duplicate of something made before
        script.push_back({made[rng() % made.size()]});
        c.push_transaction(script.back().tx);
        continue;
      }
      colony::generated_transaction g = gens[i % 2].next();
      account_name signer = g.signer;
      if (roll < 8) signer = user(static_cast<std::uint32_t>(rng() % switch_accounts));  // often the wrong key
      if (roll >= 8 && roll < 11) g.tx.expiration = c.head_block_time();                 // expired
      if (roll >= 11 && roll < 25)                                                       // expires soon
        g.tx.expiration = c.head_block_time() + 3 * static_cast<std::uint32_t>(1 + rng() % 4);
      const core::private_key& k = keys.private_key(signer, g.role);
      const core::public_key& p = keys.public_key(signer, g.role);
      auto t = std::make_shared<const core::full_transaction>(std::move(g.tx), c.options().chain, std::span(&k, 1),
                                                              std::span(&p, 1));
      made.push_back(t);
      // In odd rounds, after the first transaction from the middle on that is accepted.
      const bool mid_block = round % 2 == 1 && !mid_done && i >= per_round / 2;
      script.push_back({t, false, false, mid_block || roll % 5 == 0});
      if (c.push_transaction(t, script.back().may_be_left_out) == reject::none && mid_block) {
        mid_done = true;
        script.push_back({nullptr, true, round == 3});
        c.apply_block(make_block(c, script.back()));
      }
    }
    // The last round's pending transactions go into the blocks of the clock's slots.
    if (round + 1 == rounds) break;
    script.push_back({});
    c.apply_block(c.generate_block(block_limit));
  }
  record_clock_slots(c, gens, keys, script);
  for (std::uint32_t i = 0; i < drain_blocks; ++i) {
    script.push_back({});
    c.apply_block(c.generate_block(block_limit));
  }
  return script;
}

const std::vector<step>& script() {
  static const std::vector<step> s = record_script();
  return s;
}

const outcome& reference() {
  static const outcome r = run(base_options(), script());
  return r;
}

TEST(ChainSwitches, WorkloadExercisesTheRules) {
  const outcome& r = reference();
  core::reject_counts counts;
  for (reject x : r.results) counts.add(x);
  for (reject x : {reject::none, reject::duplicate, reject::missing_authority, reject::expired, reject::custom_op_limit,
                   reject::insufficient_rc})
    EXPECT_GT(counts[x], 0u) << core::reject_name(x);
  std::uint32_t reapplied = 0, dropped = 0, pruned = 0;
  for (std::size_t b = 0; b < r.blocks.size(); ++b) {
    reapplied += r.block_counts[4 * b + 1];
    dropped += r.block_counts[4 * b + 2];
    pruned += r.block_counts[4 * b + 3];
  }
  EXPECT_GT(reapplied, 0u);
  EXPECT_GT(dropped, 0u);
  EXPECT_GE(r.reused, rounds / 2);  // at least the whole-list blocks
  EXPECT_GE(r.reused_leaving_one, 1u);
  EXPECT_GT(pruned, 0u);
  EXPECT_EQ(r.total, 2 * genesis_balance * switch_accounts - (genesis_balance - 5) * switch_accounts);
  // The clock's slots: empty blocks, among them some after slots whose pushes all ran out of
  // RC, and blocks holding what their slots left.
  std::uint32_t empty = 0, empty_after_rc = 0, full = 0, block = 0;
  bool rc_in_slot = false;
  std::size_t result = 0;
  for (const step& s : script()) {
    if (s.tx) {
      rc_in_slot = rc_in_slot || r.results[result++] == reject::insufficient_rc;
      continue;
    }
    const std::uint32_t applied = r.block_counts[4 * block++];
    if (s.slot_end) {
      empty += applied == 0;
      empty_after_rc += applied == 0 && rc_in_slot;
      full += applied != 0;
    }
    rc_in_slot = false;
  }
  EXPECT_GT(empty_after_rc, 0u);
  EXPECT_GT(empty, empty_after_rc);  // the slots that offer none, at least
  EXPECT_GT(full, 0u);
  std::printf("[ clock    ] %u slots: %u empty blocks (%u after insufficient_rc rejections), %u not empty\n",
              clock_slots, empty, empty_after_rc, full);
  std::printf("[ workload ] %zu transactions, %llu accepted, %zu blocks, %u reapplied, %u dropped, %u pruned\n",
              r.results.size(), static_cast<unsigned long long>(counts[reject::none]), r.blocks.size(), reapplied,
              dropped, pruned);
}

// The batched lookups' prefetches are hints: on the heap and mapped, run ahead of every push
// (failing ones, duplicates and unknown references among them), they change no result, block
// or state.
TEST(ChainSwitches, PrefetchesChangeNothing) {
  const outcome& ref = reference();
  for (const core::state_memory memory : {core::state_memory::heap, core::state_memory::mapped}) {
    SCOPED_TRACE(core::to_string(memory));
    core::chain_options o = base_options();
    o.memory = memory;
    const outcome got = run(o, script(), true);
    EXPECT_EQ(got.results, ref.results);
    EXPECT_EQ(got.blocks, ref.blocks);
    EXPECT_EQ(got.digests, ref.digests);
    EXPECT_EQ(got.final_digest, ref.final_digest);
  }
}

// Bit i of the mask turns switch i off (or to its other side).
core::chain_options options_for(unsigned mask) {
  core::chain_options o = base_options();
  o.db.keep_alive = (mask & 1u) == 0;
  o.db.pool_objects = (mask & 2u) == 0;
  o.db.pool_undo = (mask & 4u) == 0;
  o.dedup = (mask & 8u) == 0 ? core::dedup_mode::split : core::dedup_mode::unified;
  o.custom_ops = (mask & 16u) == 0 ? core::counter_mode::local : core::counter_mode::state;
  o.signers = (mask & 32u) == 0 ? core::signer_source::attached : core::signer_source::recover;
  o.apply_block_in_session = (mask & 64u) == 0;
  o.rc = (mask & 128u) == 0 ? core::rc_mode::state : core::rc_mode::volatile_charges;
  // Off when an odd number of the others are: every combination of any seven of them meets
  // reuse_pending both on and off, in 256 runs instead of 512.
  o.reuse_pending = std::popcount(mask) % 2 == 0;
  // Mapped when an odd number of the even switches are off: every switch meets both memories.
  o.memory = std::popcount(mask & 0x55u) % 2 == 1 ? core::state_memory::mapped : core::state_memory::heap;
  return o;
}

std::string describe(unsigned mask) {
  const core::chain_options o = options_for(mask);
  std::string s =
      "keep_alive=" + std::to_string(o.db.keep_alive) + " pool_objects=" + std::to_string(o.db.pool_objects) +
      " pool_undo=" + std::to_string(o.db.pool_undo) + " dedup=" + std::string(core::to_string(o.dedup)) +
      " counter=" + std::string(core::to_string(o.custom_ops)) + " signers=" + std::string(core::to_string(o.signers)) +
      " in_session=" + std::to_string(o.apply_block_in_session) + " rc=" + std::string(core::to_string(o.rc)) +
      " reuse_pending=" + std::to_string(o.reuse_pending) + " memory=" + std::string(core::to_string(o.memory));
  return s;
}

class ChainSwitchCombination : public ::testing::TestWithParam<unsigned> {};

TEST_P(ChainSwitchCombination, SameResultsAndState) {
  SCOPED_TRACE(describe(GetParam()));
  const outcome& ref = reference();
  const outcome got = run(options_for(GetParam()), script());
  ASSERT_EQ(got.results.size(), ref.results.size());
  for (std::size_t i = 0; i < ref.results.size(); ++i) ASSERT_EQ(got.results[i], ref.results[i]) << "transaction " << i;
  EXPECT_EQ(got.block_counts, ref.block_counts);
  // The pending state is kept exactly where it equals what applying the block writes.
  const core::chain_options o = options_for(GetParam());
  const bool reusable = o.reuse_pending && o.custom_ops == core::counter_mode::local && o.rc == core::rc_mode::state;
  EXPECT_EQ(got.reused, reusable ? ref.reused : 0u);
  EXPECT_EQ(got.reused_leaving_one, reusable ? ref.reused_leaving_one : 0u);
  EXPECT_EQ(got.blocks, ref.blocks);
  ASSERT_EQ(got.digests.size(), ref.digests.size());
  for (std::size_t b = 0; b < ref.digests.size(); ++b) EXPECT_EQ(got.digests[b], ref.digests[b]) << "block " << b + 1;
  EXPECT_EQ(got.custom_ops, ref.custom_ops);
  EXPECT_EQ(got.final_digest, ref.final_digest);
  EXPECT_EQ(got.total, ref.total);
}

// All 256 combinations: each replays ~900 transactions, well under a second.
INSTANTIATE_TEST_SUITE_P(All, ChainSwitchCombination, ::testing::Range(0u, 256u),
                         [](const ::testing::TestParamInfo<unsigned>& p) { return "Mask" + std::to_string(p.param); });

}  // namespace
