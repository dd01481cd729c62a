#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <unordered_set>
#include <variant>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/faults.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/protocol/custom_json.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace {

using namespace apiary;
using colony::op_kind;

constexpr core::time_point_sec head_time{1'717'200'000};
// A signed transaction is its unsigned form plus a count and one 65-byte signature.
constexpr std::size_t one_signature_bytes = 1 + 65;

core::block_id head_id(std::uint32_t num) {
  core::block_id id;
  id.data[0] = static_cast<std::uint8_t>(num >> 24);
  id.data[1] = static_cast<std::uint8_t>(num >> 16);
  id.data[2] = static_cast<std::uint8_t>(num >> 8);
  id.data[3] = static_cast<std::uint8_t>(num);
  for (std::size_t i = 4; i < id.size(); ++i) id.data[i] = static_cast<std::uint8_t>(num * 7 + i);
  return id;
}

colony::generator make_generator(colony::comment_ring& ring, std::uint32_t thread_index = 0, std::uint64_t seed = 42,
                                 const colony::mix_config& mix = {}, std::size_t accounts = 400,
                                 std::size_t threads = 1) {
  const auto genesis = colony::genesis_account_names(accounts);
  colony::generator g(mix, colony::generator_options{seed, thread_index, true},
                      colony::deal_accounts(genesis, thread_index % threads, threads), ring);
  g.set_head(head_id(1000), head_time);
  return g;
}

// Not "p" + std::to_string(i): GCC 12 warns falsely about it (-Wrestrict, bug 105329).
std::string permlink(int i) {
  std::string s = "p";
  s += std::to_string(i);
  return s;
}

std::size_t signed_size(const core::transaction& tx) { return core::packed_size(tx) + one_signature_bytes; }

TEST(Mix, DefaultsAreHives) {
  const colony::mix_config mix;
  EXPECT_EQ(mix[op_kind::article], (colony::op_kind_params{100, 5000, 16, 4.0}));
  EXPECT_EQ(mix[op_kind::reply], (colony::op_kind_params{30, 1000, 110, 5.0}));
  EXPECT_EQ(mix[op_kind::vote].weight, 2070u);
  EXPECT_EQ(mix[op_kind::transfer], (colony::op_kind_params{0, 350, 87, 4.0}));
  EXPECT_EQ(mix[op_kind::custom_json], (colony::op_kind_params{20, 400, 6006, 1.0}));
  EXPECT_EQ(mix.total_weight(), 8289u);
  EXPECT_NEAR(mix.share(op_kind::custom_json), 0.725, 0.001);
  EXPECT_EQ(colony::mix_config::hard_max, (std::array<std::uint32_t, 5>{60000, 20000, 0, 2047, 8183}));
  EXPECT_FALSE(mix.validate().has_value());
}

TEST(Mix, KindNamesRoundTrip) {
  for (op_kind k : colony::all_op_kinds) EXPECT_EQ(colony::op_kind_from_name(colony::op_kind_name(k)), k);
  EXPECT_EQ(colony::op_kind_name(op_kind::custom_json), "custom_json");
  EXPECT_FALSE(colony::op_kind_from_name("comment").has_value());
}

TEST(Mix, PickFollowsWeightRanges) {
  const colony::mix_config mix;
  EXPECT_EQ(mix.pick(0), op_kind::article);
  EXPECT_EQ(mix.pick(15), op_kind::article);
  EXPECT_EQ(mix.pick(16), op_kind::reply);
  EXPECT_EQ(mix.pick(126), op_kind::vote);
  EXPECT_EQ(mix.pick(2196), op_kind::transfer);
  EXPECT_EQ(mix.pick(2283), op_kind::custom_json);
  EXPECT_EQ(mix.pick(8288), op_kind::custom_json);
}

TEST(Mix, ExtraSizeFormula) {
  const colony::op_kind_params p{100, 5000, 1, 4.0};
  EXPECT_EQ(colony::extra_size(p, 60000, 0.0), 100u);
  EXPECT_EQ(colony::extra_size(p, 60000, 0.5), 100u + static_cast<std::uint32_t>(4900 * 0.0625));
  EXPECT_LT(colony::extra_size(p, 60000, 0.999999), 5000u);
  EXPECT_EQ(colony::extra_size(p, 1000, 0.9), 1000u);                     // clamped to the hard maximum
  EXPECT_EQ(colony::extra_size({100, 5000, 1, 0.0}, 60000, 0.3), 5000u);  // U^0 = 1
  EXPECT_EQ(colony::extra_size({0, 0, 1, 1.0}, 0, 0.7), 0u);
}

TEST(Mix, ValidateNamesTheProblem) {
  colony::mix_config mix;
  mix[op_kind::reply].min = 2000;
  ASSERT_TRUE(mix.validate().has_value());
  EXPECT_NE(mix.validate()->find("reply"), std::string::npos);
  mix = {};
  mix[op_kind::transfer].exponent = -1.0;
  EXPECT_TRUE(mix.validate().has_value());
  mix = {};
  for (auto& k : mix.kinds) k.weight = 0;
  EXPECT_TRUE(mix.validate().has_value());
}

TEST(Mix, TextShowsTheExponentAndRoundTripsExactly) {
  const colony::mix_config hive;
  EXPECT_EQ(colony::to_string(hive),
            "article=16:100-5000^4,reply=110:30-1000^5,vote=2070:0-0^1,transfer=87:0-350^4,custom_json=6006:20-400^1");
  colony::mix_config odd;
  odd[op_kind::article].exponent = 0.1;  // not exact in binary: the text must still read back
  odd[op_kind::reply].exponent = 1.0 / 3.0;
  odd[op_kind::vote].exponent = 0.0;
  odd[op_kind::transfer].exponent = 1e-7;
  odd[op_kind::custom_json] = {7, 9, 1, 123456.789};
  for (const colony::mix_config& m : {hive, odd}) {
    colony::mix_config back;
    // Read into a mix whose every value differs, so nothing is kept by accident.
    for (auto& k : back.kinds) k = {1, 2, 3, 2.5};
    ASSERT_EQ(colony::parse_mix(colony::to_string(m), back), std::nullopt) << colony::to_string(m);
    EXPECT_EQ(back, m) << colony::to_string(m);
  }
}

TEST(Mix, TextAcceptsTheExponentAndTheOldForms) {
  colony::mix_config m;
  ASSERT_EQ(colony::parse_mix("article=16:100-5000^4, reply = 3:1-2 ^ 0.5 ,vote=9", m), std::nullopt);
  EXPECT_EQ(m[op_kind::article], (colony::op_kind_params{100, 5000, 16, 4.0}));
  EXPECT_EQ(m[op_kind::reply], (colony::op_kind_params{1, 2, 3, 0.5}));
  EXPECT_EQ(m[op_kind::vote].weight, 9u);
  // Without ^ the exponent keeps its value.
  m[op_kind::transfer].exponent = 7.0;
  ASSERT_EQ(colony::parse_mix("transfer=5:10-20", m), std::nullopt);
  EXPECT_EQ(m[op_kind::transfer], (colony::op_kind_params{10, 20, 5, 7.0}));
  ASSERT_EQ(colony::parse_mix("transfer=5:10-20^0", m), std::nullopt);
  EXPECT_EQ(m[op_kind::transfer].exponent, 0.0);

  for (const char* bad : {"reply=3:1-2^", "reply=3:1-2^-1", "reply=3:1-2^x", "reply=3:1-2^inf", "reply=3:1-2^nan",
                          "reply=3:1-2^1^2", "reply=3:1-2^+1"}) {
    colony::mix_config d;
    const auto problem = colony::parse_mix(bad, d);
    ASSERT_TRUE(problem) << bad;
    EXPECT_NE(problem->find("reply: exponent"), std::string::npos) << bad << ": " << *problem;
    EXPECT_EQ(d, colony::mix_config{}) << bad;
  }
  colony::mix_config d;
  EXPECT_NE(colony::parse_mix("reply=3^2", d).value_or("").find("reply: weight"), std::string::npos);
  EXPECT_NE(colony::parse_mix("reply=3:1-2x^2", d).value_or("").find("range"), std::string::npos);
}

TEST(Mix, AKindNamedTwiceIsAnErrorNotTheLastOneWinning) {
  for (const char* twice : {"vote=1,vote=2", "vote=1,article=3,vote=2", "custom_json=1:0-10, custom_json=2"}) {
    colony::mix_config m;
    const auto problem = colony::parse_mix(twice, m);
    ASSERT_TRUE(problem) << twice;
    EXPECT_NE(problem->find("given twice"), std::string::npos) << *problem;
    EXPECT_EQ(m, colony::mix_config{}) << twice;
  }
}

TEST(Faults, AKindNamedTwiceIsAnErrorNotTheLastOneWinning) {
  colony::fault_config f;
  ASSERT_EQ(colony::parse_faults("expired=0.1,duplicate=0.2", f), std::nullopt);
  const colony::fault_config before = f;
  const auto problem = colony::parse_faults("expired=0.1,duplicate=0.2,expired=0.3", f);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("expired: given twice"), std::string::npos) << *problem;
  EXPECT_EQ(f.fraction, before.fraction);
}

TEST(Genesis, NamesAreValidAndDealtRoundRobin) {
  const auto names = colony::genesis_account_names(10);
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names[0].view(), "user0");
  EXPECT_EQ(names[9].view(), "user9");
  for (const auto& n : colony::genesis_account_names(1000))
    EXPECT_TRUE(core::account_name::is_valid(n.view())) << n.view();
  const auto mine = colony::deal_accounts(names, 1, 3);
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].view(), "user1");
  EXPECT_EQ(mine[1].view(), "user4");
  EXPECT_EQ(mine[2].view(), "user7");
}

TEST(Generator, SameSeedGivesSameStream) {
  colony::comment_ring ring_a, ring_b;
  auto a = make_generator(ring_a, 3, 7);
  auto b = make_generator(ring_b, 3, 7);
  for (int i = 0; i < 3000; ++i) {
    const auto x = a.next();
    const auto y = b.next();
    ASSERT_EQ(x.tx, y.tx) << "transaction " << i;
    ASSERT_EQ(x.kind, y.kind);
    ASSERT_EQ(x.extra_size, y.extra_size);
  }
}

TEST(Generator, DifferentThreadIndexesGiveDifferentStreams) {
  colony::comment_ring ring_a, ring_b;
  auto a = make_generator(ring_a, 0);
  auto b = make_generator(ring_b, 1);  // same accounts, same base seed
  int same_kind = 0;
  int same_size = 0;
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    const auto x = a.next();
    const auto y = b.next();
    EXPECT_NE(x.tx, y.tx);
    EXPECT_NE(x.nonce, y.nonce);
    same_kind += x.kind == y.kind;
    same_size += x.extra_size == y.extra_size;
  }
  // Independent streams agree on the kind about as often as chance says (~59%), not always.
  EXPECT_LT(same_kind, n * 3 / 4);
  EXPECT_LT(same_size, n / 2);
}

TEST(Generator, NoTwoTransactionsShareAnId) {
  // Four threads sharing one ring, across two head blocks.
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(40);  // few accounts: votes repeat actors
  std::vector<colony::generator> gens;
  for (std::uint32_t t = 0; t < 4; ++t)
    gens.emplace_back(colony::mix_config{}, colony::generator_options{1, t, true}, colony::deal_accounts(genesis, t, 4),
                      ring);
  std::unordered_set<core::transaction_id> ids;
  std::size_t made = 0;
  for (std::uint32_t block : {500u, 501u}) {
    for (auto& g : gens) g.set_head(head_id(block), head_time + 3 * (block - 500));
    for (int i = 0; i < 2500; ++i) {
      const auto g = gens[static_cast<std::size_t>(i) % gens.size()].next();
      ++made;
      ASSERT_TRUE(ids.insert(core::compute_id(g.tx)).second) << "duplicate at transaction " << made;
    }
  }
  EXPECT_EQ(ids.size(), 5000u);
}

TEST(Generator, ThreadsSharingARingNeverCollide) {
  // The colony's real shape: one generator per thread, one shared ring.
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(200);
  constexpr std::uint32_t threads = 4;
  std::vector<std::vector<core::transaction_id>> ids(threads);
  std::vector<std::thread> workers;
  for (std::uint32_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      colony::generator g(colony::mix_config{}, colony::generator_options{7, t, true},
                          colony::deal_accounts(genesis, t, threads), ring);
      g.set_head(head_id(77), head_time);
      for (int i = 0; i < 1500; ++i) ids[t].push_back(core::compute_id(g.next().tx));
    });
  for (auto& w : workers) w.join();
  std::unordered_set<core::transaction_id> all;
  for (const auto& v : ids)
    for (const auto& id : v) EXPECT_TRUE(all.insert(id).second);
  EXPECT_EQ(all.size(), threads * 1500u);
  EXPECT_GT(ring.size(), 0u);
}

// A transaction is as long at the genesis (where a workload is made) as at the last head
// block whose number the nonce holds (a long run's): the kind, the payload and the size
// follow from the seed alone.
TEST(Generator, SizesDoNotDependOnTheHeadBlock) {
  colony::comment_ring ring_a, ring_b;
  auto a = make_generator(ring_a, 1, 8);
  auto b = make_generator(ring_b, 1, 8);
  a.set_head(head_id(0), head_time);
  b.set_head(head_id((1u << 24) - 1), head_time);
  for (int i = 0; i < 6000; ++i) {
    const auto x = a.next();
    const auto y = b.next();
    ASSERT_EQ(x.kind, y.kind) << "transaction " << i;
    ASSERT_EQ(x.extra_size, y.extra_size) << "transaction " << i;
    ASSERT_NE(x.nonce, y.nonce);
    ASSERT_EQ(signed_size(x.tx), signed_size(y.tx)) << "transaction " << i << ", " << colony::op_kind_name(x.kind);
  }
}

TEST(Generator, VotesAgainstOneHeadCarryDistinctWeights) {
  colony::comment_ring ring;
  auto g = make_generator(ring, 0, 5, {}, 3);
  std::unordered_set<std::int16_t> weights;
  std::size_t votes = 0;
  for (int i = 0; i < 9000; ++i) {
    const auto t = g.next();
    if (t.kind != op_kind::vote) continue;
    ++votes;
    const auto& v = std::get<core::vote_operation>(t.tx.operations.front());
    EXPECT_GE(v.weight, 1);
    EXPECT_LE(v.weight, 10000);
    EXPECT_TRUE(weights.insert(v.weight).second);
  }
  EXPECT_GT(votes, 1000u);
}

TEST(Generator, KindSharesApproachWeights) {
  colony::comment_ring ring;
  auto g = make_generator(ring);
  const int n = 60000;
  for (int i = 0; i < n; ++i) g.next();
  const auto& s = g.stats();
  ASSERT_EQ(s.transactions(), static_cast<std::uint64_t>(n));
  const colony::mix_config mix;
  for (op_kind k : colony::all_op_kinds) {
    const double want = mix.share(k);
    const double got = static_cast<double>(s[k].count) / n;
    // Five standard deviations of a binomial share, plus the articles that replaced the
    // first replies and votes while the ring was empty.
    const double tolerance = 5.0 * std::sqrt(want * (1 - want) / n) + 0.0005;
    EXPECT_NEAR(got, want, tolerance) << colony::op_kind_name(k);
  }
  EXPECT_LT(s.article_substitutions, 10u);
}

TEST(Generator, ExtraSizesStayWithinBoundsAndShapePayloads) {
  // Ask for more than the hard maxima allow, so clamping shows.
  colony::mix_config mix;
  mix[op_kind::article] = {100, 100000, 16, 0.5};
  mix[op_kind::reply] = {30, 50000, 110, 0.5};
  mix[op_kind::transfer] = {0, 5000, 87, 0.5};
  mix[op_kind::custom_json] = {20, 20000, 6006, 0.5};
  for (const colony::mix_config& m : {colony::mix_config{}, mix}) {
    colony::comment_ring ring;
    auto g = make_generator(ring, 0, 11, m);
    for (int i = 0; i < 6000; ++i) {
      const auto t = g.next();
      const auto& p = m[t.kind];
      const std::uint32_t hard = colony::mix_config::hard_max[colony::index_of(t.kind)];
      ASSERT_GE(t.extra_size, std::min(p.min, hard));
      ASSERT_LE(t.extra_size, std::min(p.max, hard));
      const auto& op = t.tx.operations.front();
      switch (t.kind) {
        case op_kind::article:
        case op_kind::reply: EXPECT_EQ(std::get<core::comment_operation>(op).body.size(), t.extra_size); break;
        case op_kind::vote: EXPECT_EQ(t.extra_size, 0u); break;
        case op_kind::transfer: {
          const auto& memo = std::get<core::transfer_operation>(op).memo;
          EXPECT_EQ(memo.size(), std::max(std::size_t{t.extra_size}, colony::nonce_text_size));
          EXPECT_LT(memo.size(), 2048u);
          break;
        }
        case op_kind::custom_json:
          EXPECT_EQ(std::get<core::custom_json_operation>(op).json.size(), t.extra_size + 8u);
          EXPECT_LT(std::get<core::custom_json_operation>(op).json.size(), 8192u);
          break;
      }
    }
  }
}

TEST(Generator, EveryTransactionPacksUnder64KiB) {
  colony::mix_config biggest;
  biggest[op_kind::article] = {60000, 60000, 1, 1.0};
  biggest[op_kind::reply] = {20000, 20000, 1, 1.0};
  biggest[op_kind::transfer] = {2047, 2047, 1, 1.0};
  biggest[op_kind::custom_json] = {8183, 8183, 1, 1.0};
  for (const colony::mix_config& m : {colony::mix_config{}, biggest}) {
    colony::comment_ring ring;
    auto g = make_generator(ring, 0, 3, m, 64);
    for (int i = 0; i < 4000; ++i) {
      const auto t = g.next();
      ASSERT_LT(signed_size(t.tx), 64u * 1024u) << colony::op_kind_name(t.kind);
    }
  }
}

TEST(Generator, OperationsFollowHivesRules) {
  colony::comment_ring ring;
  auto g = make_generator(ring, 2, 9, {}, 400, 4);
  std::array<bool, colony::op_kind_count> seen{};
  for (int i = 0; i < 20000; ++i) {
    const auto t = g.next();
    seen[colony::index_of(t.kind)] = true;
    EXPECT_EQ(t.tx.expiration, head_time + 3600);
    core::transaction ref;
    ref.set_reference_block(head_id(1000));
    EXPECT_EQ(t.tx.ref_block_num, ref.ref_block_num);
    EXPECT_EQ(t.tx.ref_block_prefix, ref.ref_block_prefix);
    EXPECT_EQ(t.nonce, (std::uint64_t{1000} << 40) | (static_cast<std::uint64_t>(i) << 8) | 2u);
    EXPECT_EQ(t.role, t.kind == op_kind::transfer ? core::key_role::active : core::key_role::posting);
    const auto& op = t.tx.operations.front();
    switch (t.kind) {
      case op_kind::article: {
        ASSERT_EQ(t.tx.operations.size(), 2u);
        const auto& c = std::get<core::comment_operation>(op);
        EXPECT_TRUE(c.parent_author.empty());
        EXPECT_FALSE(c.parent_permlink.empty());
        EXPECT_EQ(c.author, t.signer);
        const auto& o = std::get<core::comment_options_operation>(t.tx.operations[1]);
        EXPECT_EQ(o.author, c.author);
        EXPECT_EQ(o.permlink, c.permlink);
        if (!o.extensions.empty()) {
          const auto& b = o.extensions.front().beneficiaries;
          ASSERT_FALSE(b.empty());
          EXPECT_LE(b.size(), 7u);
          for (std::size_t j = 0; j < b.size(); ++j) {
            EXPECT_EQ(b[j].weight, 500u);
            EXPECT_NE(b[j].account, c.author);
            if (j > 0) {
              EXPECT_LT(b[j - 1].account, b[j].account);
            }
          }
        }
        break;
      }
      case op_kind::reply: {
        ASSERT_EQ(t.tx.operations.size(), 1u);
        const auto& c = std::get<core::comment_operation>(op);
        EXPECT_FALSE(c.parent_author.empty());
        EXPECT_EQ(c.author, t.signer);
        break;
      }
      case op_kind::vote: EXPECT_EQ(std::get<core::vote_operation>(op).voter, t.signer); break;
      case op_kind::transfer: {
        const auto& tr = std::get<core::transfer_operation>(op);
        EXPECT_EQ(tr.from, t.signer);
        EXPECT_NE(tr.to, tr.from);
        EXPECT_EQ(tr.amount, core::asset::hbd(1));
        break;
      }
      case op_kind::custom_json: {
        const auto& cj = std::get<core::custom_json_operation>(op);
        EXPECT_TRUE(cj.required_auths.empty());
        ASSERT_EQ(cj.required_posting_auths.size(), 1u);
        EXPECT_EQ(cj.required_posting_auths.front(), t.signer);
        EXPECT_LE(cj.id.size(), 32u);
        EXPECT_TRUE(core::is_valid_json(cj.json)) << cj.json;
        break;
      }
    }
  }
  for (op_kind k : colony::all_op_kinds) EXPECT_TRUE(seen[colony::index_of(k)]) << colony::op_kind_name(k);
}

TEST(Generator, RingOffFeedsNoTargets) {
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(10);
  colony::generator g(colony::mix_config{}, colony::generator_options{1, 0, false}, genesis, ring);
  std::uint64_t replaced = 0;
  for (int i = 0; i < 500; ++i) {
    const auto t = g.next();
    EXPECT_NE(t.kind, op_kind::vote);  // nothing to vote on: articles instead
    EXPECT_NE(t.kind, op_kind::reply);
    if (t.drawn != t.kind) {
      EXPECT_TRUE(t.drawn == op_kind::vote || t.drawn == op_kind::reply);
      EXPECT_EQ(t.kind, op_kind::article);
      ++replaced;
    }
  }
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_GT(g.stats().article_substitutions, 0u);
  EXPECT_EQ(g.stats().article_substitutions, replaced);
}

TEST(Generator, AverageSizeFillsA2MBBlockWithAbout7300) {
  colony::comment_ring ring;
  const auto genesis = colony::genesis_account_names(10'000);
  std::vector<colony::generator> gens;
  for (std::uint32_t t = 0; t < 4; ++t) {
    gens.emplace_back(colony::mix_config{}, colony::generator_options{99, t, true},
                      colony::deal_accounts(genesis, t, 4), ring);
    gens.back().set_head(head_id(1000), head_time);
  }
  const int n = 40000;
  std::uint64_t bytes = 0;
  for (int i = 0; i < n; ++i) bytes += signed_size(gens[static_cast<std::size_t>(i) % 4].next().tx);
  const double average = static_cast<double>(bytes) / n;
  const double per_block = (2.0 * 1024 * 1024 - 256) / average;
  std::printf("[ info     ] average signed transaction %.1f bytes: %.0f per 2 MB block\n", average, per_block);
  EXPECT_GT(per_block, 6500.0);
  EXPECT_LT(per_block, 8200.0);
}

TEST(Generator, SignedSizeIsUnsignedPlusOneSignature) {
  colony::comment_ring ring;
  auto g = make_generator(ring, 0, 1, {}, 20);
  colony::key_cache keys("test-password");
  const core::chain_id chain = core::hive_mainnet_chain_id();
  for (int i = 0; i < 40; ++i) {
    auto t = g.next();
    const std::size_t expect = signed_size(t.tx);
    const core::transaction_id id = core::compute_id(t.tx);
    const core::private_key& key = keys.private_key(t.signer, t.role);
    const core::full_transaction ft(std::move(t.tx), chain, std::span(&key, 1));
    EXPECT_EQ(ft.packed_size(), expect);
    EXPECT_EQ(ft.id(), id);
    EXPECT_EQ(core::recover_public_key(ft.tx().signatures.front(), ft.sig_digest()), keys.public_key(t.signer, t.role));
  }
}

TEST(KeyCache, MatchesLoginDerivation) {
  colony::key_cache keys("pw");
  const core::account_name alice("alice");
  const auto direct = core::private_key::from_login("alice", core::key_role::posting, "pw");
  EXPECT_EQ(keys.private_key(alice, core::key_role::posting), direct);
  EXPECT_EQ(keys.public_key(alice, core::key_role::posting), direct.public_key());
  EXPECT_NE(keys.private_key(alice, core::key_role::active), direct);
  const core::private_key* first = &keys.private_key(alice, core::key_role::posting);
  keys.private_key("bob", core::key_role::posting);
  EXPECT_EQ(first, &keys.private_key(alice, core::key_role::posting));  // cached, stable
  EXPECT_EQ(keys.accounts(), 2u);
}

TEST(CommentRing, KeepsTheMostRecent) {
  colony::comment_ring ring(3);
  EXPECT_FALSE(ring.pick(0).has_value());
  for (int i = 0; i < 5; ++i) ring.push({core::account_name("user0"), permlink(i)});
  EXPECT_EQ(ring.size(), 3u);
  std::vector<std::string> kept;
  for (std::uint64_t r = 0; r < 3; ++r) kept.push_back(ring.pick(r)->permlink);
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"p2", "p3", "p4"}));
}

TEST(CommentRing, SharedBetweenThreads) {
  colony::comment_ring ring(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&ring, t] {
      for (int i = 0; i < 2000; ++i) {
        ring.push({core::account_name(t % 2 == 0 ? "alice" : "bob"), permlink(i)});
        const auto c = ring.pick(static_cast<std::uint64_t>(i) * 7919u);
        ASSERT_TRUE(c.has_value());
        ASSERT_FALSE(c->permlink.empty());
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ring.size(), 100u);
}

}  // namespace
