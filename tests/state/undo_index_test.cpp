// undo_index as a container: ids, lookups, and the strong guarantee of every mutator.
#include <gtest/gtest.h>

#include <stdexcept>

#include "state_test_objects.hpp"

// item_index's hashed ids, bound for the prefetches (undo_index_detail::bind_buckets).
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::test::item_index::hashed_index_type<apiary::core::test::by_id>,
    &apiary::core::test::item_index::hashed_index_type<apiary::core::test::by_id>::buckets>;

namespace apiary::core::test {
namespace {

TEST(UndoIndex, CreateAssignsIncreasingIds) {
  account_index idx;
  EXPECT_EQ(add(idx, "alice").id, 0u);
  EXPECT_EQ(add(idx, "bob").id, 1u);
  EXPECT_EQ(add(idx, "carol").id, 2u);
  EXPECT_EQ(idx.next_id(), 3u);
  EXPECT_EQ(idx.size(), 3u);
}

TEST(UndoIndex, CreateLambdaSeesItsId) {
  account_index idx;
  add(idx, "alice");
  std::uint64_t seen = 99;
  idx.create([&](account& a) {
    seen = a.id;
    a.name = "bob";
  });
  EXPECT_EQ(seen, 1u);
}

TEST(UndoIndex, FindAndGetById) {
  account_index idx;
  const account& a = add(idx, "alice", 5);
  EXPECT_EQ(idx.find(0), &a);
  EXPECT_EQ(&idx.get(0), &a);
  EXPECT_EQ(idx.find(1), nullptr);
  EXPECT_THROW((void)idx.get(1), std::out_of_range);
}

TEST(UndoIndex, LookupByTag) {
  account_index idx;
  add(idx, "carol", 3);
  const account& b = add(idx, "bob", 2);
  add(idx, "alice", 1);
  EXPECT_EQ(idx.find<by_name>(std::string("bob")), &b);
  EXPECT_EQ(&idx.get<by_name>(std::string("bob")), &b);
  EXPECT_EQ(idx.find<by_name>(std::string("dave")), nullptr);
  EXPECT_THROW((void)idx.get<by_name>(std::string("dave")), std::out_of_range);
  std::vector<std::string> names;
  for (const account& a : idx.get<by_name>()) names.emplace_back(a.name.view());
  EXPECT_EQ(names, (std::vector<std::string>{"alice", "bob", "carol"}));
}

TEST(UndoIndex, HashedPrimaryIndex) {
  item_index idx;
  for (std::uint32_t i = 0; i < 100; ++i) idx.create([&](item& it) { it.owner = i % 7; });
  EXPECT_EQ(idx.size(), 100u);
  EXPECT_EQ(idx.get(42).owner, 0u);
  idx.remove(idx.get(42));
  EXPECT_EQ(idx.find(42), nullptr);
  EXPECT_EQ(idx.get<by_owner>().count(0u), 14u);
}

TEST(UndoIndex, CreateDuplicateKeyThrowsAndUsesNoId) {
  account_index idx;
  add(idx, "alice");
  EXPECT_THROW(add(idx, "alice"), unique_key_violation);
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx.next_id(), 1u);
  EXPECT_EQ(add(idx, "bob").id, 1u);
}

TEST(UndoIndex, CreateLambdaThrowLeavesIndexUnchanged) {
  account_index idx;
  add(idx, "alice");
  idx.start_undo_session();
  EXPECT_THROW(idx.create([](account& a) {
    a.name = "bob";
    throw injected_failure{};
  }),
               injected_failure);
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx.next_id(), 1u);
  EXPECT_TRUE(idx.undo_state_at(0).empty());
}

TEST(UndoIndex, ModifyReindexesSecondaryKeys) {
  account_index idx;
  const account& a = add(idx, "alice", 1);
  add(idx, "bob", 2);
  idx.modify(a, [](account& x) {
    x.name = "zed";
    x.balance = 10;
  });
  EXPECT_EQ(idx.find<by_name>(std::string("alice")), nullptr);
  EXPECT_EQ(idx.find<by_name>(std::string("zed")), &a);
  EXPECT_EQ(idx.get<by_balance>().rbegin()->name, "zed");
}

// modify re-indexes only when a key changed: a change of the non-unique key alone must still
// move the object, and a change of no key must leave every index as it was.
TEST(UndoIndex, ModifyReindexesOnlyChangedKeys) {
  account_index idx;
  const account& a = add(idx, "alice", 1);
  add(idx, "bob", 2);
  add(idx, "carol", 3);
  idx.start_undo_session();
  idx.modify(a, [](account& x) { x.balance = 5; });  // by_balance only
  EXPECT_EQ(idx.get<by_balance>().rbegin()->name, "alice");
  EXPECT_EQ(idx.get<by_balance>().begin()->name, "bob");
  idx.modify(a, [](account& x) { x.balance = 5; });  // no key at all
  EXPECT_EQ(idx.get<by_balance>().rbegin()->name, "alice");
  EXPECT_EQ(idx.find<by_name>(std::string("alice")), &a);
  idx.undo();  // the old value goes back, and with it the old place in by_balance
  EXPECT_EQ(a.balance, 1);
  EXPECT_EQ(idx.get<by_balance>().begin()->name, "alice");
  EXPECT_EQ(idx.get<by_balance>().rbegin()->name, "carol");
}

TEST(UndoIndex, ModifyLambdaThrowLeavesIndexUnchanged) {
  for (int open_sessions = 0; open_sessions <= 2; ++open_sessions) {
    SCOPED_TRACE(open_sessions);
    account_index idx;
    const account& a = add(idx, "alice", 1);
    add(idx, "bob", 2);
    for (int i = 0; i < open_sessions; ++i) idx.start_undo_session();
    if (open_sessions == 2) idx.modify(a, [](account& x) { x.balance = 7; });  // recorded
    const account before = a;
    const auto top = static_cast<std::size_t>(open_sessions) - 1;
    const std::size_t recorded = open_sessions > 0 ? idx.undo_state_at(top).modified_count() : 0;
    EXPECT_THROW(idx.modify(a,
                            [](account& x) {
                              x.name = "zed";  // a key change, half done
                              x.balance = 99;
                              throw injected_failure{};
                            }),
                 injected_failure);
    EXPECT_EQ(a, before);
    EXPECT_EQ(idx.find<by_name>(std::string("alice")), &a);
    EXPECT_EQ(idx.find<by_name>(std::string("zed")), nullptr);
    if (open_sessions > 0) {
      EXPECT_EQ(idx.undo_state_at(top).modified_count(), recorded);
      if (open_sessions == 2) {
        EXPECT_EQ(idx.undo_state_at(top).old_value(a.id)->balance, 1);
      }
    }
  }
}

TEST(UndoIndex, ModifyDuplicateKeyThrowsAndChangesNothing) {
  account_index idx;
  const account& a = add(idx, "alice", 1);
  add(idx, "bob", 2);
  idx.start_undo_session();
  EXPECT_THROW(idx.modify(a,
                          [](account& x) {
                            x.name = "bob";
                            x.balance = 5;
                          }),
               unique_key_violation);
  EXPECT_EQ(a.name, "alice");
  EXPECT_EQ(a.balance, 1);
  EXPECT_EQ(idx.find<by_name>(std::string("alice")), &a);
  EXPECT_EQ(idx.size(), 2u);
  EXPECT_TRUE(idx.undo_state_at(0).empty());
}

TEST(UndoIndex, RemoveWithoutSession) {
  account_index idx;
  const account& a = add(idx, "alice");
  add(idx, "bob");
  idx.remove(a);
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx.find<by_name>(std::string("alice")), nullptr);
  EXPECT_EQ(idx.next_id(), 2u);  // ids are never reused outside undo
}

// The prefetches read the bucket a key falls in and the first object in it: on an empty
// table, across rehashes as it grows, for keys present and absent, and with sessions
// undone. Under the sanitizers a wrong bucket address is a read out of bounds. They change
// nothing.
TEST(UndoIndex, PrefetchesReadTheirBucketAndChangeNothing) {
  ASSERT_NE(undo_index_detail::hashed_buckets<item_index::hashed_index_type<by_id>>::member, nullptr)
      << "the explicit instantiation above binds the bucket array at static initialization";
  item_index idx;
  auto prefetch_all = [&idx](std::uint32_t up_to) {
    for (std::uint32_t id = 0; id <= up_to; ++id) {
      idx.prefetch_bucket<by_id>(id);
      idx.prefetch_bucket_head<by_id>(id);
      idx.prefetch_bucket_next<by_id>(id);
    }
  };
  prefetch_all(8);
  for (std::uint32_t i = 0; i < 2000; ++i) {
    idx.create([i](item& it) { it.value = i; });
    prefetch_all(i + 1);
  }
  idx.start_undo_session();
  for (std::uint32_t i = 0; i < 500; ++i) idx.remove(idx.get(i * 4));
  prefetch_all(2000);
  idx.undo();
  prefetch_all(2000);
  ASSERT_EQ(idx.size(), 2000u);
  for (std::uint32_t i = 0; i < 2000; ++i) EXPECT_EQ(idx.get(i).value, i);
  EXPECT_EQ(idx.find(2000), nullptr);
}

TEST(UndoIndexDeathTest, ModifyChangingIdAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  account_index idx;
  const account& a = add(idx, "alice");
  EXPECT_DEATH(idx.modify(a, [](account& x) { x.id = 7; }), "check failed");
}

TEST(UndoIndexDeathTest, SetRevisionWithOpenSessionAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  account_index idx;
  idx.start_undo_session();
  EXPECT_DEATH(idx.set_revision(5), "check failed");
}

}  // namespace
}  // namespace apiary::core::test
