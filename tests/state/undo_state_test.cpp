// What one undo state records (CREATE MODIFY* REMOVE? per key) and what undo() restores.
#include <gtest/gtest.h>

#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

void set_balance(account_index& idx, const account& a, std::int64_t b) {
  idx.modify(a, [&](account& x) { x.balance = b; });
}

std::vector<account> contents(const account_index& idx) { return {idx.indices().begin(), idx.indices().end()}; }

class UndoState : public ::testing::Test {
 protected:
  void SetUp() override {
    add(idx, "alice", 1);
    add(idx, "bob", 2);
    add(idx, "carol", 3);
    before = contents(idx);
  }
  const account& alice() { return idx.get(0); }
  const account& bob() { return idx.get(1); }
  const account_index::undo_state& top() { return idx.undo_state_at(idx.undo_depth() - 1); }

  account_index idx;
  std::vector<account> before;
};

TEST_F(UndoState, CreateRecordsNewIdAndOldNextId) {
  idx.start_undo_session();
  EXPECT_EQ(top().old_next_id(), 3u);
  add(idx, "dave");
  add(idx, "erin");
  EXPECT_EQ(std::vector<std::uint64_t>(top().new_ids().begin(), top().new_ids().end()),
            (std::vector<std::uint64_t>{3, 4}));
  idx.undo();
  EXPECT_EQ(contents(idx), before);
  EXPECT_EQ(idx.next_id(), 3u);
}

TEST_F(UndoState, ModifyRecordsOnlyTheFirstOldValue) {
  idx.start_undo_session();
  set_balance(idx, alice(), 10);
  set_balance(idx, alice(), 20);
  EXPECT_EQ(top().modified_count(), 1u);
  EXPECT_EQ(top().old_value(0)->balance, 1);
  idx.undo();
  EXPECT_EQ(contents(idx), before);
}

TEST_F(UndoState, ModifyOfCreatedObjectRecordsNothing) {
  idx.start_undo_session();
  const account& d = add(idx, "dave");
  set_balance(idx, d, 10);
  EXPECT_EQ(top().modified_count(), 0u);
  EXPECT_EQ(top().new_ids().size(), 1u);
  idx.undo();
  EXPECT_EQ(contents(idx), before);
}

TEST_F(UndoState, RemoveOfCreatedObjectForgetsIt) {
  idx.start_undo_session();
  const account& d = add(idx, "dave");
  add(idx, "erin");
  idx.remove(d);
  EXPECT_EQ(std::vector<std::uint64_t>(top().new_ids().begin(), top().new_ids().end()),
            (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(top().removed_count(), 0u);
  idx.undo();
  EXPECT_EQ(contents(idx), before);
  EXPECT_EQ(idx.next_id(), 3u);
}

TEST_F(UndoState, RemoveOfModifiedObjectRecordsItsOldValue) {
  idx.start_undo_session();
  idx.modify(alice(), [](account& a) {
    a.name = "alicia";
    a.balance = 50;
  });
  idx.remove(alice());
  EXPECT_EQ(top().modified_count(), 0u);
  ASSERT_EQ(top().removed_count(), 1u);
  EXPECT_EQ(*top().removed_value(0), before[0]);
  idx.undo();
  EXPECT_EQ(contents(idx), before);
}

TEST_F(UndoState, UndoPutsBackTheSameObjects) {
  const account* a = &alice();
  const account* b = &bob();
  idx.start_undo_session();
  idx.remove(*a);
  set_balance(idx, *b, 99);
  idx.undo();
  EXPECT_EQ(&alice(), a);  // references taken before the session stay valid
  EXPECT_EQ(&bob(), b);
  EXPECT_EQ(contents(idx), before);
}

TEST_F(UndoState, UndoRestoresSwappedUniqueKeys) {
  idx.start_undo_session();
  idx.modify(alice(), [](account& a) { a.name = "tmp"; });
  idx.modify(bob(), [](account& a) { a.name = "alice"; });
  idx.modify(alice(), [](account& a) { a.name = "bob"; });
  add(idx, "carl");
  idx.modify(idx.get(2), [](account& a) { a.name = "x"; });
  add(idx, "carol");  // the old key of a modified object, taken by a new one
  idx.undo();
  EXPECT_EQ(contents(idx), before);
  item_index unused;
  EXPECT_TRUE(indexes_consistent(idx, unused));
}

TEST_F(UndoState, UndoWithoutSessionDoesNothing) {
  idx.undo();
  EXPECT_EQ(contents(idx), before);
  EXPECT_EQ(idx.revision(), 0);
}

TEST_F(UndoState, UndoAllUnwindsEverySession) {
  for (int i = 0; i < 4; ++i) {
    idx.start_undo_session();
    add(idx, numbered("n", i));
    set_balance(idx, alice(), i * 10);
  }
  EXPECT_EQ(idx.revision(), 4);
  idx.undo_all();
  EXPECT_EQ(idx.undo_depth(), 0u);
  EXPECT_EQ(idx.revision(), 0);
  EXPECT_EQ(contents(idx), before);
}

TEST_F(UndoState, LargeStateSurvivesRecycling) {
  account_index alive(index_options{std::pmr::new_delete_resource(), std::pmr::new_delete_resource(), true});
  for (int round = 0; round < 3; ++round) {
    alive.start_undo_session();
    for (int i = 0; i < 3000; ++i) add(alive, numbered("a", round * 10000 + i), i);
    alive.start_undo_session();
    for (std::uint64_t id = alive.undo_state_at(0).old_next_id(); id < alive.next_id(); id += 2)
      set_balance(alive, alive.get(id), -1);
    alive.squash();
    EXPECT_EQ(alive.undo_state_at(0).modified_count(), 0u);  // modified objects were created
    alive.start_undo_session();
    add(alive, "small");
    alive.undo();
    alive.undo();
    EXPECT_EQ(alive.size(), 0u);
    EXPECT_EQ(alive.next_id(), 0u);
    EXPECT_EQ(alive.spare_states(), 2u);
  }
}

// keep_alive's promise: once the stack has been this deep, a session allocates nothing.
TEST(KeepAlive, StartingASessionAllocatesNothing) {
  counting_resource undo_memory;
  account_index idx(index_options{std::pmr::new_delete_resource(), &undo_memory, true});
  add(idx, "alice");
  auto transaction = [&](bool ok) {
    idx.start_undo_session();
    set_balance(idx, idx.get(0), 5);
    add(idx, numbered("t", idx.next_id()));
    if (ok) {
      idx.squash();
    } else {
      idx.undo();
    }
  };
  idx.start_undo_session();
  transaction(true);
  transaction(false);
  const std::size_t warm = undo_memory.allocations;
  for (int i = 0; i < 5; ++i) transaction(false);
  EXPECT_EQ(undo_memory.allocations, warm);
  EXPECT_EQ(idx.spare_states(), 1u);
}

// A block's session: thousands of transaction sessions squashed into it, then committed.
// The next block's session reuses its state with the room it grew, and the transaction
// sessions' state never takes that room (squash merges into a roomier empty state instead
// of swapping containers), so from the second block on nothing is allocated.
TEST(KeepAlive, BlockSizedSessionsKeepTheirRoom) {
  counting_resource undo_memory;
  account_index idx(index_options{std::pmr::new_delete_resource(), &undo_memory, true});
  constexpr int accounts = 5000;
  for (int i = 0; i < accounts; ++i) add(idx, numbered("a", i), i);
  std::size_t after_first = 0;
  for (int block = 0; block < 3; ++block) {
    idx.start_undo_session();
    for (std::uint64_t id = 0; id < accounts; ++id) {
      idx.start_undo_session();
      set_balance(idx, idx.get(id), block * 10 + 1);
      idx.squash();
    }
    EXPECT_EQ(idx.undo_state_at(0).modified_count(), static_cast<std::size_t>(accounts));
    idx.commit(idx.revision());
    if (block == 0) after_first = undo_memory.allocations;
  }
  EXPECT_EQ(undo_memory.allocations, after_first);
}

// The spare states change places as blocks commit, so a state that held a block's worth can
// be taken for a transaction's session, while the block's session below it has as much room
// (squash then swaps their containers, and the room stays on top). Clearing it once a
// transaction has used it gives the room back: every later transaction would clear and walk it.
TEST(KeepAlive, ATransactionSessionDoesNotKeepABlocksRoom) {
  account_index idx(index_options{std::pmr::new_delete_resource(), std::pmr::new_delete_resource(), true});
  constexpr int accounts = 5000;
  for (int i = 0; i < accounts; ++i) add(idx, numbered("a", i), i);
  for (int depth = 0; depth < 2; ++depth) {
    idx.start_undo_session();
    for (std::uint64_t id = 0; id < accounts; ++id) set_balance(idx, idx.get(id), depth + 7);
  }
  const std::size_t block_room = idx.undo_state_at(1).modified_room();
  EXPECT_GE(block_room, static_cast<std::size_t>(accounts));
  idx.undo();
  idx.undo();
  idx.start_undo_session();  // the block's session
  for (std::uint64_t id = 0; id < 3; ++id) {
    idx.start_undo_session();  // a transaction's: the other roomy state
    set_balance(idx, idx.get(id), 1);
    idx.squash();
  }
  EXPECT_EQ(idx.undo_state_at(0).modified_count(), 3u);
  idx.start_undo_session();
  set_balance(idx, idx.get(4), 1);
  EXPECT_LE(idx.undo_state_at(1).modified_room(), 1024u);
  idx.squash();
  idx.commit(idx.revision());
  EXPECT_EQ(idx.get(4).balance, 1);
}

TEST(KeepAlive, OffReleasesStates) {
  counting_resource undo_memory;
  account_index idx(index_options{std::pmr::new_delete_resource(), &undo_memory, false});
  idx.start_undo_session();
  const std::size_t one = undo_memory.allocations;
  EXPECT_GT(one, 0u);
  idx.undo();
  EXPECT_EQ(undo_memory.live, 1u);  // the stack of states keeps its room; the state is gone
  idx.start_undo_session();
  EXPECT_GT(undo_memory.allocations, one);
  EXPECT_EQ(idx.spare_states(), 0u);
}

TEST(PoolObjects, NodesComeFromTheObjectResource) {
  counting_resource objects;
  {
    account_index idx(index_options{&objects, std::pmr::new_delete_resource(), false});
    const std::size_t header = objects.allocations;
    add(idx, "alice");
    EXPECT_EQ(objects.allocations, header + 1);
    idx.start_undo_session();
    idx.remove(idx.get(0));  // the node moves into the undo state, nothing is freed
    EXPECT_EQ(objects.live, header + 1);
    idx.commit(idx.revision());  // now it is
    EXPECT_EQ(objects.live, header);
  }
  EXPECT_EQ(objects.live, 0u);
}

}  // namespace
}  // namespace apiary::core::test
