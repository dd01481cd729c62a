// State snapshots (chain_snapshot.hpp): a chain loaded from a snapshot is the chain that wrote
// it. The input is recorded once on a reference chain, as in chain_switch_test.cpp: the
// colony's typical mix over few accounts, with duplicates, wrong keys and short expirations
// mixed in, comments that pay out within a few blocks (so ids have gaps) and blocks small
// enough that transactions stay pending; half-way the pending list is cleared and a snapshot
// taken. Every combination of the chain's switches then replays it: the writer goes on, a chain
// loaded from its snapshot (with the other side of every switch) follows, and both reach the
// same state digest after every block.
//
// Then what a snapshot refuses: truncated at many offsets, bytes flipped in every part, another
// version, another layout, other chain options, contents that do not decode: each its own
// snapshot_problem and message, never a crash, never a chain.
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

constexpr std::uint32_t snapshot_accounts = 30;
constexpr std::uint32_t rounds = 6;
constexpr std::uint32_t per_round = 150;
constexpr std::uint32_t snapshot_round = 3;  // the snapshot is taken before this round
constexpr std::uint32_t block_limit = 24'000;

struct step {
  core::full_transaction_ptr tx;  // null: produce a block (or take the snapshot)
  bool snapshot = false;
};

core::chain_options base_options() {
  core::chain_options o = small_options(snapshot_accounts);
  o.cashout_blocks = 8;  // comments and their votes pay out and leave within the script
  return o;
}

// Records the script on a chain with the default switches.
std::vector<step> record_script() {
  core::chain c(base_options());
  colony::key_cache keys(c.options().key_password);
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(snapshot_accounts);
  std::vector<colony::generator> gens;
  for (std::uint32_t t = 0; t < 2; ++t)
    gens.emplace_back(colony::mix_config{}, colony::generator_options{7, t, true}, colony::deal_accounts(genesis, t, 2),
                      ring);
  std::mt19937_64 rng(11);
  std::vector<step> script;
  std::vector<core::full_transaction_ptr> made;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    if (round == snapshot_round) {
      script.push_back({nullptr, true});
      c.clear_pending();
    }
    for (std::uint32_t i = 0; i < per_round; ++i) {
      for (auto& g : gens) g.set_head(c.head_block_id(), c.head_block_time());
      const std::uint64_t roll = rng() % 100;
      if (roll < 4 && !made.empty()) {  // a duplicate
        script.push_back({made[rng() % made.size()]});
        c.push_transaction(script.back().tx);
        continue;
      }
      colony::generated_transaction g = gens[i % 2].next();
      account_name signer = roll < 7 ? user(static_cast<std::uint32_t>(rng() % snapshot_accounts)) : g.signer;
      if (roll >= 7 && roll < 20)  // expires within a few blocks: pruned, or dropped while pending
        g.tx.expiration = c.head_block_time() + 3 * static_cast<std::uint32_t>(1 + rng() % 4);
      const core::private_key& k = keys.private_key(signer, g.role);
      const core::public_key& p = keys.public_key(signer, g.role);
      auto t = std::make_shared<const core::full_transaction>(std::move(g.tx), c.options().chain, std::span(&k, 1),
                                                              std::span(&p, 1));
      made.push_back(t);
      script.push_back({t});
      c.push_transaction(t);
      if (i % 40 == 39) {
        script.push_back({});
        c.apply_block(c.generate_block(block_limit));
      }
    }
  }
  for (std::uint32_t i = 0; i < 4; ++i) {
    script.push_back({});
    c.apply_block(c.generate_block(block_limit));
  }
  return script;
}

const std::vector<step>& script() {
  static const std::vector<step> s = record_script();
  return s;
}

// Bit 0: dedup unified, 1: custom ops in state, 2: rc volatile, 3: blocks outside sessions.
core::chain_options options_for(unsigned mask) {
  core::chain_options o = base_options();
  o.dedup = (mask & 1u) == 0 ? core::dedup_mode::split : core::dedup_mode::unified;
  o.custom_ops = (mask & 2u) == 0 ? core::counter_mode::local : core::counter_mode::state;
  o.rc = (mask & 4u) == 0 ? core::rc_mode::state : core::rc_mode::volatile_charges;
  o.apply_block_in_session = (mask & 8u) == 0;
  return o;
}

template <class Index>
auto next_id(core::chain& c) {
  return core::chain_test_access::index<Index>(c).next_id();
}

void expect_same_next_ids(core::chain& a, core::chain& b) {
  EXPECT_EQ(next_id<core::account_index>(a), next_id<core::account_index>(b));
  EXPECT_EQ(next_id<core::comment_index>(a), next_id<core::comment_index>(b));
  EXPECT_EQ(next_id<core::comment_vote_index>(a), next_id<core::comment_vote_index>(b));
  EXPECT_EQ(next_id<core::block_summary_index>(a), next_id<core::block_summary_index>(b));
  EXPECT_EQ(next_id<core::transaction_index>(a), next_id<core::transaction_index>(b));
  EXPECT_EQ(next_id<core::custom_op_counter_index>(a), next_id<core::custom_op_counter_index>(b));
}

void expect_audit_holds(const core::chain& c, const std::string& who) {
  const core::chain_audit a = c.audit();
  for (const std::string& v : a.violations) ADD_FAILURE() << who << ": " << v;
}

class SnapshotModes : public ::testing::TestWithParam<unsigned> {};

// A chain loaded from the writer's state (by `load`, with the switches of mask ^ 0xf) at the
// script's snapshot step must follow the writer block by block: the same results, the same
// digests, the same next ids.
using loader =
    std::function<std::unique_ptr<core::chain>(core::chain& writer, unsigned mask, core::snapshot_info& info)>;

void follow_the_writer(unsigned mask, const loader& load) {
  core::chain writer(options_for(mask));
  std::unique_ptr<core::chain> loaded;
  std::uint32_t blocks_after = 0, compared = 0, paid_out = 0, pruned = 0;
  for (const step& s : script()) {
    if (s.snapshot) {
      writer.clear_pending();
      core::snapshot_info info;
      loaded = load(writer, mask ^ 0xfu, info);
      EXPECT_EQ(info.state_digest, writer.state_digest());
      EXPECT_EQ(loaded->state_digest(), writer.state_digest());
      EXPECT_EQ(loaded->head_block_id(), writer.head_block_id());
      EXPECT_EQ(info.head_block_num, writer.head_block_num());
      EXPECT_GT(writer.head_block_num(), 0u);
      expect_same_next_ids(writer, *loaded);
      expect_audit_holds(*loaded, "loaded");
      continue;
    }
    if (s.tx) {
      const reject r = writer.push_transaction(s.tx);
      if (loaded) {
        EXPECT_EQ(loaded->push_transaction(s.tx), r);
      }
      continue;
    }
    const core::full_block b = writer.generate_block(block_limit);
    const core::block_result rw = writer.apply_block(b);
    if (!loaded) continue;
    const core::block_result rl = loaded->apply_block(b);
    EXPECT_EQ(rl.applied, rw.applied);
    EXPECT_EQ(rl.paid_out, rw.paid_out);
    EXPECT_EQ(rl.pruned, rw.pruned);
    paid_out += rw.paid_out;
    pruned += rw.pruned;
    ++blocks_after;
    EXPECT_EQ(loaded->state_digest(), writer.state_digest()) << "block " << b.header.block_num();
    compared += loaded->state_digest() == writer.state_digest();
  }
  ASSERT_TRUE(loaded);
  EXPECT_GT(blocks_after, 5u);
  EXPECT_EQ(compared, blocks_after);
  EXPECT_GT(paid_out, 0u);  // comments left after the snapshot: their ids had to match
  EXPECT_GT(pruned, 0u);
  expect_same_next_ids(writer, *loaded);
  expect_audit_holds(writer, "writer");
  expect_audit_holds(*loaded, "loaded");
}

TEST_P(SnapshotModes, LoadedChainFollowsTheWriterBlockByBlock) {
  follow_the_writer(GetParam(), [](core::chain& writer, unsigned mask, core::snapshot_info& info) {
    core::out_buffer file;
    writer.write_snapshot(file);
    return core::chain::from_snapshot(options_for(mask), file.span(), &info);
  });
}

// The writer's snapshot loaded into a mapped chain (a state region), which writes a state
// file; a chain opened from that file follows the heap writer.
TEST_P(SnapshotModes, ChainOpenedFromAStateFileFollowsTheWriterBlockByBlock) {
  const std::filesystem::path state =
      std::filesystem::temp_directory_path() / ("apiary-chain-" + std::to_string(::getpid()) + ".state");
  follow_the_writer(GetParam(), [&state](core::chain& writer, unsigned mask, core::snapshot_info& info) {
    core::out_buffer file;
    writer.write_snapshot(file);
    core::chain_options o = options_for(mask);
    o.memory = core::state_memory::mapped;
    {
      auto converted = core::chain::from_snapshot(o, file.span());
      EXPECT_NE(converted->region(), nullptr);
      converted->clear_pending();
      converted->write_state(state);
      EXPECT_EQ(converted->state_digest(), writer.state_digest());
    }
    auto opened = core::chain::open_state(o, state, {.prefault = true}, &info);
    EXPECT_EQ(opened->region()->verify_content(), "");
    return opened;
  });
  std::filesystem::remove(state);
}

INSTANTIATE_TEST_SUITE_P(EveryMode, SnapshotModes, ::testing::Range(0u, 16u),
                         [](const ::testing::TestParamInfo<unsigned>& param) {
                           const core::chain_options o = options_for(param.param);
                           std::string s(core::to_string(o.dedup));
                           s += "_" + std::string(core::to_string(o.custom_ops)) + "_" +
                                std::string(core::to_string(o.rc)) +
                                (o.apply_block_in_session ? "_sessions" : "_nosessions");
                           return s;
                         });

// ---- refusals ---------------------------------------------------------------------------------

// A chain a few blocks on, with comments, votes and transaction ids in its state.
struct written {
  core::chain_options options = base_options();
  std::vector<std::uint8_t> file;
};

const written& sample() {
  static const written w = [] {
    written out;
    core::chain c(out.options);
    for (const step& s : script()) {
      if (s.snapshot) break;
      if (s.tx)
        c.push_transaction(s.tx);
      else
        c.apply_block(c.generate_block(block_limit));
    }
    c.clear_pending();
    core::out_buffer b;
    c.write_snapshot(b);
    out.file.assign(b.bytes(), b.bytes() + b.size());
    return out;
  }();
  return w;
}

// Where each section's name starts (its length byte): every section's bytes follow it.
std::vector<std::size_t> section_offsets(const std::vector<std::uint8_t>& f) {
  std::vector<std::size_t> at;
  for (std::string name : {"accounts", "comments", "votes", "block_summaries", "global_properties", "transactions",
                           "custom_op_counters"}) {
    name.insert(name.begin(), static_cast<char>(name.size()));
    auto it = std::search(f.begin(), f.end(), name.begin(), name.end());
    EXPECT_NE(it, f.end()) << name;
    at.push_back(static_cast<std::size_t>(it - f.begin()));
  }
  return at;
}

// The file with a valid checksum again, as a different build or version would write it.
std::vector<std::uint8_t> resealed(std::vector<std::uint8_t> f) {
  const std::uint64_t sum = XXH3_64bits(f.data(), f.size() - 8);
  std::memcpy(f.data() + f.size() - 8, &sum, 8);
  return f;
}

// Loading f must fail with `problem`, its message holding `words`.
void expect_refused(const std::vector<std::uint8_t>& f, core::snapshot_problem problem, const std::string& words,
                    const core::chain_options& o = sample().options) {
  try {
    auto c = core::chain::from_snapshot(o, std::span(f.data(), f.size()));
    ADD_FAILURE() << "loaded a snapshot that should be refused (" << words << ")";
  } catch (const core::snapshot_error& e) {
    EXPECT_EQ(static_cast<int>(e.problem()), static_cast<int>(problem)) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
}

// A loaded or opened state holds room for its comments and votes to double before their hashed
// indexes rehash (chain::make_room_to_grow): on a state of millions of votes, the rehash would
// stop a run's writer for over half a second in whichever block crosses the line.
template <class Index, class Tag>
void expect_room_to_double(core::chain& c, const char* what) {
  const auto& hashed = core::chain_test_access::index<Index>(c).template get<Tag>();
  const double room = static_cast<double>(hashed.bucket_count()) * static_cast<double>(hashed.max_load_factor());
  EXPECT_GE(room, 2.0 * static_cast<double>(hashed.size()))
      << what << ": " << hashed.size() << " objects in " << hashed.bucket_count() << " buckets";
}

void expect_room_to_grow(core::chain& c) {
  expect_room_to_double<core::comment_vote_index, core::by_comment_voter>(c, "votes by (comment, voter)");
  expect_room_to_double<core::comment_vote_index, core::by_comment>(c, "votes by comment");
  expect_room_to_double<core::comment_index, core::by_permlink>(c, "comments by permlink");
}

// The two tables every push looks up keep at least so many buckets an object (state_objects.hpp):
// the accounts from the genesis on, the transaction ids in a state loaded or written.
template <class Index, class Tag>
void expect_buckets_each(core::chain& c, std::size_t each, const char* what) {
  const auto& hashed = core::chain_test_access::index<Index>(c).template get<Tag>();
  ASSERT_GT(hashed.size(), 0u) << what;
  EXPECT_GE(hashed.bucket_count(), each * hashed.size())
      << what << ": " << hashed.size() << " objects in " << hashed.bucket_count() << " buckets";
}

void expect_sparse_lookups(core::chain& c) {
  expect_buckets_each<core::account_index, core::by_name>(c, core::account_buckets, "accounts by name");
  expect_buckets_each<core::transaction_index, core::by_trx_id>(c, core::state_id_buckets, "transaction ids");
}

TEST(SnapshotRoom, LoadedAndOpenedStatesHoldRoomForCommentsAndVotesToDouble) {
  constexpr std::uint32_t authors = 40;
  constexpr std::uint32_t posts = 120;  // more than a table sized for them alone holds twice over
  constexpr std::uint32_t voted = 8;    // every author votes on each of the first posts
  harness h(small_options(authors));
  auto permlink = [](std::uint32_t i) { return "p" + std::to_string(i); };
  for (std::uint32_t i = 0; i < posts; ++i)
    ASSERT_EQ(h.push(h.make(post(user(i % authors), permlink(i)), user(i % authors))), reject::none);
  h.produce();
  for (std::uint32_t p = 0; p < voted; ++p)
    for (std::uint32_t v = 0; v < authors; ++v)
      ASSERT_EQ(h.push(h.make(vote(user(v), user(p % authors), permlink(p), 10000), user(v))), reject::none);
  h.produce();
  h.chain().clear_pending();
  expect_buckets_each<core::account_index, core::by_name>(h.chain(), core::account_buckets, "genesis accounts");
  core::out_buffer file;
  h.chain().write_snapshot(file);

  auto loaded = core::chain::from_snapshot(small_options(authors), file.span());
  ASSERT_EQ(core::chain_test_access::index<core::comment_vote_index>(*loaded).size(), voted * authors);
  expect_room_to_grow(*loaded);
  expect_sparse_lookups(*loaded);

  const std::filesystem::path state =
      std::filesystem::temp_directory_path() / ("apiary-room-" + std::to_string(::getpid()) + ".state");
  core::chain_options o = small_options(authors);
  o.memory = core::state_memory::mapped;
  {
    auto converted = core::chain::from_snapshot(o, file.span());
    converted->clear_pending();
    converted->write_state(state);
  }
  auto opened = core::chain::open_state(o, state, {.prefault = false});
  expect_room_to_grow(*opened);
  expect_sparse_lookups(*opened);
  EXPECT_EQ(opened->state_digest(), h.chain().state_digest());
  opened.reset();
  std::filesystem::remove(state);
}

TEST(SnapshotRefusals, TheSampleLoads) {
  const written& w = sample();
  core::chain c(w.options);
  auto loaded = core::chain::from_snapshot(w.options, std::span(w.file.data(), w.file.size()));
  EXPECT_GT(loaded->head_block_num(), 0u);
  EXPECT_GT(loaded->db().get_index<core::comment_index>().size(), 0u);
  EXPECT_GT(loaded->db().get_index<core::transaction_index>().size(), 0u);
  expect_audit_holds(*loaded, "loaded");
}

TEST(SnapshotRefusals, TruncatedAnywhere) {
  const std::vector<std::uint8_t>& f = sample().file;
  std::vector<std::size_t> cuts{0, 3, 8, 10, 12, 19, 20, 40, 60, 90, f.size() - 8, f.size() - 3, f.size() - 1};
  for (std::size_t at : section_offsets(f))
    for (std::size_t d : {0u, 1u, 5u, 30u}) cuts.push_back(at + d);
  for (std::size_t cut : cuts) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    expect_refused({f.begin(), f.begin() + static_cast<std::ptrdiff_t>(cut)}, core::snapshot_problem::truncated,
                   "truncated");
  }
}

TEST(SnapshotRefusals, FlippedBytesInEveryPart) {
  const std::vector<std::uint8_t>& f = sample().file;
  auto flipped = [&f](std::size_t at) {
    std::vector<std::uint8_t> g = f;
    g[at] ^= 0x10;
    return g;
  };
  expect_refused(flipped(0), core::snapshot_problem::magic, "not an apiary state snapshot");
  expect_refused(flipped(9), core::snapshot_problem::version, "format version");
  auto resized = [&f](std::int64_t by) {
    std::vector<std::uint8_t> g = f;
    const std::uint64_t size = f.size() + static_cast<std::uint64_t>(by);
    std::memcpy(g.data() + 12, &size, 8);
    return g;
  };
  expect_refused(resized(-1), core::snapshot_problem::size, "its header says");
  expect_refused(resized(4096), core::snapshot_problem::truncated, "truncated");
  std::vector<std::size_t> at{22, 30, 45, 70, f.size() - 8, f.size() - 1};
  for (std::size_t s : section_offsets(f))
    for (std::size_t d : {0u, 3u, 20u, 200u})
      if (s + d < f.size() - 8) at.push_back(s + d);
  for (std::size_t a : at) {
    SCOPED_TRACE("flipped at " + std::to_string(a));
    expect_refused(flipped(a), core::snapshot_problem::corrupted, "checksum");
  }
}

TEST(SnapshotRefusals, AnotherVersionOrLayout) {
  std::vector<std::uint8_t> f = sample().file;
  f[8] = 2;
  expect_refused(resealed(f), core::snapshot_problem::version, "format version 2; this apiary reads version 1");
  f = sample().file;
  f[20] ^= 1;  // the layout id
  expect_refused(resealed(f), core::snapshot_problem::layout, "state objects differ");
  f = sample().file;
  f.push_back(0);
  expect_refused(f, core::snapshot_problem::size, "the file has");
}

TEST(SnapshotRefusals, OtherChainOptionsNameTheOption) {
  core::chain_options o = sample().options;
  o.genesis_accounts += 1;
  expect_refused(sample().file, core::snapshot_problem::options,
                 "genesis_accounts=30, this chain has genesis_accounts=31", o);
  o = sample().options;
  o.cashout_blocks = 100;
  expect_refused(sample().file, core::snapshot_problem::options, "cashout_blocks=8", o);
  o = sample().options;
  o.key_password = "other";
  expect_refused(sample().file, core::snapshot_problem::options, "key_password=", o);
  // The switches are not the state's: any of them loads.
  o = options_for(0xfu);
  EXPECT_NO_THROW(core::chain::from_snapshot(o, std::span(sample().file.data(), sample().file.size())));
}

TEST(SnapshotRefusals, ContentsThatDoNotDecode) {
  const std::vector<std::uint8_t>& f = sample().file;
  const std::vector<std::size_t> at = section_offsets(f);
  std::vector<std::uint8_t> g = f;
  g[at[0] + 1] = 'b';  // the first section's name
  expect_refused(resealed(g), core::snapshot_problem::malformed, "where accounts belongs");
  g = f;
  g[at[0] - 1] = 6;  // the section count
  expect_refused(resealed(g), core::snapshot_problem::malformed, "6 sections");
  g = f;
  // The accounts' count: more than the bytes could hold.
  const std::size_t count_at = at[0] + 1 + 8;
  g[count_at + 5] = 1;
  expect_refused(resealed(g), core::snapshot_problem::malformed, "cannot fit");
  // The second account (id 1, user1) made a second user0, then given the id 0 again.
  const std::string second = "\x05user1";
  const auto at_second = std::search(f.begin(), f.end(), second.begin(), second.end()) - f.begin();
  g = f;
  g[static_cast<std::size_t>(at_second) + 5] = '0';
  expect_refused(resealed(g), core::snapshot_problem::malformed, "two objects with the same key");
  g = f;
  std::memset(g.data() + at_second - 4, 0, 4);
  expect_refused(resealed(g), core::snapshot_problem::malformed, "object id 0 out of order");
  g = f;
  std::memset(g.data() + count_at + 8, 0, 8);  // next id 0 for 31 accounts
  expect_refused(resealed(g), core::snapshot_problem::malformed, "next id 0");
}

TEST(SnapshotRefusals, LayoutIdFollowsTheFieldLists) {
  EXPECT_EQ(core::snapshot_layout_id(), core::snapshot_layout_id());
  std::uint64_t in_file = 0;
  std::memcpy(&in_file, sample().file.data() + 20, 8);
  EXPECT_EQ(in_file, core::snapshot_layout_id());
}

}  // namespace
