// chain::add_to_genesis: accounts and comments added by name before the first block, with
// their balances and vesting in the supply, and refused once the chain has left its genesis.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

const account_name alice("alice");
const account_name bob("bob");

core::genesis_additions two_accounts_and_a_thread() {
  core::genesis_additions add;
  add.accounts.push_back({alice, 5'000, 7'000, 3'000'000'000});
  add.accounts.push_back({bob, 0, 0, 1'000'000'000});
  add.comments.push_back({alice, "root", account_name(), "hive"});
  add.comments.push_back({bob, "re-root", alice, "root"});
  return add;
}

TEST(ChainGenesisAdditions, AccountsAndCommentsJoinTheGenesisAndItsSupply) {
  harness h(small_options(10));
  const std::int64_t hive_before = h.chain().total_hive();
  const std::int64_t hbd_before = h.chain().total_hbd();
  h.chain().add_to_genesis(two_accounts_and_a_thread());

  const core::account_object* a = h.chain().find_account(alice);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->hive, 5'000);
  EXPECT_EQ(a->hbd, 7'000);
  EXPECT_EQ(a->vesting, 3'000'000'000);
  EXPECT_EQ(h.chain().rc_mana(alice), 3'000'000'000);  // full
  EXPECT_EQ(h.chain().total_hive(), hive_before + 5'000);
  EXPECT_EQ(h.chain().total_hbd(), hbd_before + 7'000);
  const core::comment_object* root = h.chain().find_comment(alice, "root");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->children, 1u);
  EXPECT_EQ(root->created.secs, h.chain().options().genesis_time);
  ASSERT_NE(h.chain().find_comment(bob, "re-root"), nullptr);
  EXPECT_TRUE(h.chain().audit().ok()) << h.chain().audit().violations.front();

  // They take part as genesis accounts do: a vote, a reply and a transfer apply, with the
  // authority check on (keys from the key password), and the audit holds after a block.
  EXPECT_EQ(h.push(h.make(vote(bob, alice, "root", 10000), bob)), reject::none);
  EXPECT_EQ(h.push(h.make(reply(alice, "re-re-root", bob, "re-root"), alice)), reject::none);
  EXPECT_EQ(h.push(h.make(transfer(alice, user(1), 4'000), alice, key_role::active)), reject::none);
  EXPECT_EQ(h.produce().applied, 3u);
  const core::chain_audit audit = h.chain().audit();
  EXPECT_TRUE(audit.ok()) << audit.violations.front();
}

TEST(ChainGenesisAdditions, TheSameAdditionsGiveTheSameState) {
  harness one(small_options(10));
  harness two(small_options(10));
  one.chain().add_to_genesis(two_accounts_and_a_thread());
  EXPECT_NE(one.chain().state_digest(), two.chain().state_digest());
  two.chain().add_to_genesis(two_accounts_and_a_thread());
  EXPECT_EQ(one.chain().state_digest(), two.chain().state_digest());
}

TEST(ChainGenesisAdditions, RefusesWhatCannotBeAdded) {
  auto refused = [](core::genesis_additions add, const std::string& expected) {
    harness h(small_options(10));
    try {
      h.chain().add_to_genesis(add);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused({{{user(3), 1, 1, 1}}, {}}, "exists already");
  refused({{{alice, -1, 0, 0}}, {}}, "negative");
  refused({{{alice, std::numeric_limits<std::int64_t>::max(), 0, 0}}, {}}, "64 bits");
  refused({{}, {{alice, "p", account_name(), "hive"}}}, "its author does not exist");
  refused({{}, {{user(1), "p", user(2), "missing"}}}, "its parent does not exist");
  refused({{}, {{user(1), "", account_name(), "hive"}}}, "permlink");
  refused({{}, {{user(1), "p", account_name(), ""}}}, "category");
  refused({{}, {{user(1), "p", account_name(), "hive"}, {user(1), "p", account_name(), "hive"}}}, "exists already");
}

// Whether add_to_genesis refused, as a chain that has left its genesis.
bool refused_as_late(core::chain& c) {
  try {
    c.add_to_genesis(two_accounts_and_a_thread());
  } catch (const std::logic_error& e) {
    return std::string(e.what()).find("has left its genesis") != std::string::npos;
  }
  return false;
}

TEST(ChainGenesisAdditions, RefusedAfterTheGenesis) {
  harness h(small_options(10));
  ASSERT_EQ(h.push(h.make(custom_json(user(1)), user(1))), reject::none);
  EXPECT_TRUE(refused_as_late(h.chain()));
  h.produce();
  EXPECT_TRUE(refused_as_late(h.chain()));
  EXPECT_EQ(h.chain().find_account(alice), nullptr);
}

}  // namespace
