// The state digest (chain::state_digest): its value for a fixed state, which the performance
// gate and the ladder compare across commits, so a change to how it is computed shows here;
// the state objects' field lists it walks (state_fields.hpp checks at compile time that each
// names every member once; here, that it does so in declaration order and that the check
// fails on a list that does not); and that changing any one field of any object changes the
// digest, but for the few fields it leaves out on purpose.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <boost/pfr/core.hpp>

#include "apiary/core/chain/state_digest.hpp"
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

// ---- every field counts ---------------------------------------------------------------

// Ways to give a value of type V a different value: one for each scalar it is made of.
template <class V>
using change = std::function<void(V&)>;
template <class V>
std::vector<change<V>> changes_of();

template <class V>
std::vector<change<V>> member_changes() {
  std::vector<change<V>> out;
  V::fields([&out](const char*, auto member) {
    for (auto& c : changes_of<std::remove_cvref_t<decltype(std::declval<V&>().*member)>>())
      out.push_back([member, c](V& v) { c(v.*member); });
  });
  return out;
}

// A protocol struct (the beneficiary route): its fields by position, each changed its first way.
template <class V>
std::vector<change<V>> protocol_member_changes() {
  std::size_t count = 0;
  V v;
  V::fields(v, [&count](const char*, auto&) { ++count; });
  std::vector<change<V>> out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back([i](V& x) {
      std::size_t k = 0;
      V::fields(x, [&](const char*, auto& m) {
        if (k++ == i) changes_of<std::remove_cvref_t<decltype(m)>>().front()(m);
      });
    });
  return out;
}

template <class V>
std::vector<change<V>> element_changes() {
  std::vector<change<V>> out;
  for (std::size_t i = 0; i < std::tuple_size_v<V>; ++i)
    for (auto& c : changes_of<typename V::value_type>()) out.push_back([i, c](V& v) { c(v[i]); });
  return out;
}

// A list: one more route, or its first route changed.
std::vector<change<core::beneficiary_list>> beneficiary_changes() {
  std::vector<change<core::beneficiary_list>> out{[](core::beneficiary_list& l) {
    l.push_back({account_name("changed"), 1});
  }};
  for (auto& c : changes_of<core::beneficiary_route>()) out.push_back([c](core::beneficiary_list& l) { c(l[0]); });
  return out;
}

template <class V>
std::vector<change<V>> changes_of() {
  if constexpr (std::is_same_v<V, bool>) {
    return {[](V& v) { v = !v; }};
  } else if constexpr (std::is_arithmetic_v<V>) {
    return {[](V& v) { v = static_cast<V>(v + 1); }};
  } else if constexpr (std::is_same_v<V, core::time_point_sec>) {
    return {[](V& v) { ++v.secs; }};
  } else if constexpr (std::is_same_v<V, account_name>) {
    return {[](V& v) { v = account_name(v == account_name("changed") ? "other" : "changed"); }};
  } else if constexpr (std::is_same_v<V, std::string>) {
    return {[](V& v) { v += 'x'; }};
  } else if constexpr (std::is_same_v<V, core::state_string>) {
    return {[](V& v) { v = std::string(v.view()) + 'x'; }};
  } else if constexpr (core::digest_detail::is_fixed_bytes<V>) {
    return {[](V& v) { v.data[0] ^= 1; }};
  } else if constexpr (core::state_fields<V>) {
    return member_changes<V>();
  } else if constexpr (core::reflected<V>) {
    return protocol_member_changes<V>();
  } else if constexpr (std::is_same_v<V, core::beneficiary_list>) {
    return beneficiary_changes();
  } else {
    return element_changes<V>();
  }
}

template <class T>
std::string digest_bytes(const T& o) {
  core::out_buffer b;
  core::digest_append(b, o);
  return std::string(b.view());
}

// Every change of every field of `sample` changes what the digest writes for it, but for the
// fields the digest leaves out, which are added to `left_out` as type::field.
template <class T>
void expect_every_field_written(const T& sample, std::string_view type, std::set<std::string>& left_out) {
  const std::string before = digest_bytes(sample);
  T::fields([&](const char* name, auto member) {
    const bool out = core::digest_leaves_out(member);
    if (out) left_out.insert(std::string(type) + "::" + name);
    for (const auto& c : changes_of<std::remove_cvref_t<decltype(sample.*member)>>()) {
      T changed = sample;
      c(changed.*member);
      EXPECT_EQ(digest_bytes(changed) == before, out) << type << "::" << name;
    }
  });
}

TEST(ChainDigest, EveryFieldIsWrittenButTheOnesLeftOut) {
  std::set<std::string> left_out;
  expect_every_field_written(core::account_object{}, "account_object", left_out);
  core::comment_object comment;
  comment.beneficiaries.push_back({user(1), 100});
  expect_every_field_written(comment, "comment_object", left_out);
  expect_every_field_written(core::comment_vote_object{}, "comment_vote_object", left_out);
  expect_every_field_written(core::block_summary_object{}, "block_summary_object", left_out);
  expect_every_field_written(core::global_properties_object{}, "global_properties_object", left_out);
  expect_every_field_written(core::transaction_object{}, "transaction_object", left_out);
  // Each with its reason in state_digest.hpp; one more needs one there, and one here.
  EXPECT_EQ(left_out, (std::set<std::string>{"block_summary_object::id", "global_properties_object::current_supply_hbd",
                                             "global_properties_object::genesis_supply_hive",
                                             "global_properties_object::id", "transaction_object::id"}));
}

// In the chain: a change to any field the digest writes, of an object of each index it walks,
// changes chain::state_digest, and undoing it brings the digest back. Ids are not changed
// (they belong to their index); the test above covers how they are written.
template <class Index>
void expect_every_field_counts(harness& h, typename Index::id_type id) {
  using T = typename Index::value_type;
  SCOPED_TRACE(typeid(T).name());
  Index& index = core::chain_test_access::index<Index>(h.chain());
  const core::sha256_digest before = h.chain().state_digest();
  T::fields([&](const char* name, auto member) {
    if (std::string_view(name) == "id" || core::digest_leaves_out(member)) return;
    for (const auto& c : changes_of<std::remove_cvref_t<decltype(std::declval<T&>().*member)>>()) {
      core::database::session s = core::chain_test_access::open_session(h.chain());
      index.modify(index.get(id), [&](T& o) { c(o.*member); });
      EXPECT_NE(h.chain().state_digest(), before) << name;
      s.undo();
    }
  });
  EXPECT_EQ(h.chain().state_digest(), before);
}

TEST(ChainDigest, EveryFieldOfEveryWalkedObjectCounts) {
  harness h(small_options(8));
  ASSERT_NO_FATAL_FAILURE(build_sample(h));
  // user0's pending transaction charged its resource credits at the head block time, which
  // the digest writes them as of: a change to either part of the manabar shows.
  expect_every_field_counts<core::account_index>(h, h.chain().find_account(user(0))->id);
  expect_every_field_counts<core::comment_index>(h, h.chain().find_comment(user(1), "p")->id);
  expect_every_field_counts<core::comment_vote_index>(h, 1);  // user3 on p: no vote of user4 on p, or of user3 on r
  expect_every_field_counts<core::block_summary_index>(h, 1);
  expect_every_field_counts<core::global_properties_index>(h, 0);
  expect_every_field_counts<core::transaction_index>(h, 0);  // included in block 1
}

}  // namespace
}  // namespace apiary::chain_test
