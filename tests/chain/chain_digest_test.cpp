// The state digest (chain::state_digest): its value for a fixed state, which the performance
// gate and the ladder compare across commits, so a change to how it is computed shows here;
// and the state objects' field lists (state_fields.hpp checks at compile time that each names
// every member once; here, that it does so in declaration order and that the check fails on a
// list that does not).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <boost/pfr/core.hpp>

#include "apiary/core/chain/state_fields.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "chain_test_support.hpp"

namespace apiary::chain_test {
namespace {

// Two blocks and two pending transactions over eight accounts: a post with beneficiaries, a
// reply, votes, transfers of both assets and custom operations.
void build_sample(harness& h) {
  ASSERT_EQ(h.push(h.make(post(user(1), "p"), user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(options(user(1), "p", {{user(4), 2'500}, {user(5), 1'000}}), user(1))), reject::none);
  ASSERT_EQ(h.push(h.make(reply(user(2), "r", user(1), "p"), user(2))), reject::none);
  ASSERT_EQ(h.push(h.make(transfer(user(3), user(4), 7), user(3), key_role::active)), reject::none);
  ASSERT_EQ(h.push(h.make(custom_json(user(5)), user(5))), reject::none);
  h.produce();
  ASSERT_EQ(h.push(h.make(vote(user(2), user(1), "p", 10'000), user(2))), reject::none);
  ASSERT_EQ(h.push(h.make(vote(user(3), user(1), "p", -5'000), user(3))), reject::none);
  h.produce();
  ASSERT_EQ(h.push(h.make(transfer(user(6), user(7), 3, true), user(6), key_role::active)), reject::none);
  ASSERT_EQ(h.push(h.make(custom_json(user(0)), user(0))), reject::none);
}

// Whatever the switches: where the pending ids, custom-op counts and RC charges live does not
// change the digest.
TEST(ChainDigest, IsPinnedForASampleState) {
  for (const core::dedup_mode dedup : {core::dedup_mode::split, core::dedup_mode::unified})
    for (const core::rc_mode rc : {core::rc_mode::state, core::rc_mode::volatile_charges}) {
      core::chain_options o = small_options(8, {dedup, core::counter_mode::state});
      o.rc = rc;
      harness h(o);
      ASSERT_NO_FATAL_FAILURE(build_sample(h));
      // A new value here changes every digest the performance gate and the ladder compare
      // across commits: only on purpose, and said so in the commit.
      EXPECT_EQ(core::to_hex(h.chain().state_digest()),
                "e155f64b0706e7c0134e8741144589ad12abdaf8c0eee26ffa70a2b6f6c25b03")
          << (dedup == core::dedup_mode::split ? "split" : "unified") << " dedup, "
          << (rc == core::rc_mode::state ? "state" : "volatile") << " rc";
    }
}

// ---- the field lists ------------------------------------------------------------------

// The compile-time check fails on a list that forgets a member, or names one twice.
struct forgets_one {
  int a = 0;
  int b = 0;
  template <class F>
  static constexpr void fields(F&& f) {
    f("a", &forgets_one::a);
  }
};
struct names_one_twice {
  int a = 0;
  int b = 0;
  template <class F>
  static constexpr void fields(F&& f) {
    f("a", &names_one_twice::a);
    f("a", &names_one_twice::a);
  }
};
static_assert(!core::lists_every_field<forgets_one>());
static_assert(!core::lists_every_field<names_one_twice>());

// Each list in declaration order: the members' addresses in list order are Boost.PFR's, in
// declaration order.
template <class T>
void expect_declaration_order() {
  const T o{};
  std::vector<const void*> listed, declared;
  T::fields([&](const char*, auto member) { listed.push_back(&(o.*member)); });
  boost::pfr::for_each_field(o, [&](const auto& m) { declared.push_back(&m); });
  EXPECT_EQ(listed, declared);
}

TEST(StateFields, ListedInDeclarationOrder) {
  expect_declaration_order<core::manabar>();
  expect_declaration_order<core::account_object>();
  expect_declaration_order<core::comment_object>();
  expect_declaration_order<core::comment_vote_object>();
  expect_declaration_order<core::block_summary_object>();
  expect_declaration_order<core::global_properties_object>();
  expect_declaration_order<core::transaction_object>();
  expect_declaration_order<core::custom_op_counter_object>();
}

}  // namespace
}  // namespace apiary::chain_test
