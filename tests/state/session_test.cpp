// database: RAII sessions, nesting, revisions and commit.
#include <gtest/gtest.h>

#include <new>
#include <optional>

#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

class Db : public ::testing::Test {
 protected:
  Db() {
    db.add_index<account_index>();
    db.add_index<item_index>();
  }
  account_index& accounts() { return db.get_index<account_index>(); }
  item_index& items() { return db.get_index<item_index>(); }
  const account& add(const std::string& name) {
    return accounts().create([&](account& a) { a.name = name; });
  }
  void add_item(std::uint32_t owner) {
    items().create([&](item& i) { i.owner = owner; });
  }

  database db;
};

using UndoSession = Db;
using Revision = Db;

TEST_F(UndoSession, DestroyWithoutPushRevertsInsert) {
  const snapshot before = take_snapshot(db);
  {
    auto s = db.start_undo_session();
    add("alice");
    add_item(1);
  }
  EXPECT_EQ(take_snapshot(db), before);
  EXPECT_EQ(db.revision(), 0);
  EXPECT_EQ(db.undo_depth(), 0u);
}

TEST_F(UndoSession, PushKeepsChangesOnTheStack) {
  {
    auto s = db.start_undo_session();
    add("alice");
    s.push();
    EXPECT_FALSE(s.active());
  }
  EXPECT_EQ(accounts().size(), 1u);
  EXPECT_EQ(db.undo_depth(), 1u);
  db.undo();
  EXPECT_EQ(accounts().size(), 0u);
}

TEST_F(UndoSession, UndoRevertsNow) {
  add("alice");
  auto s = db.start_undo_session();
  accounts().modify(accounts().get(0), [](account& a) { a.balance = 5; });
  add_item(3);
  s.undo();
  EXPECT_FALSE(s.active());
  EXPECT_EQ(accounts().get(0).balance, 0);
  EXPECT_EQ(items().size(), 0u);
}

TEST_F(UndoSession, SquashMergesIntoOuterSession) {
  const snapshot before = take_snapshot(db);
  {
    auto outer = db.start_undo_session();
    {
      auto inner = db.start_undo_session();
      add("alice");
      add_item(1);
      inner.squash();
    }
    EXPECT_EQ(accounts().size(), 1u);  // the squashed inner did not undo on destruction
    EXPECT_EQ(db.revision(), 1);
  }
  EXPECT_EQ(take_snapshot(db), before);  // the outer did
}

TEST_F(UndoSession, NestedSessionsUndoInnerFirst) {
  add("base");
  auto outer = db.start_undo_session();
  add("outer");
  const snapshot after_outer = take_snapshot(db);
  {
    auto inner = db.start_undo_session();
    add("inner");
    accounts().remove(accounts().get(0));
    EXPECT_EQ(db.revision(), 2);
  }
  EXPECT_EQ(take_snapshot(db), after_outer);
  outer.undo();
  EXPECT_EQ(accounts().size(), 1u);
}

TEST_F(UndoSession, MoveTransfersTheSession) {
  std::optional<database::session> pending;
  pending = db.start_undo_session();
  add("alice");
  database::session moved = std::move(*pending);
  EXPECT_FALSE(pending->active());
  pending.reset();  // the moved-from session does nothing
  EXPECT_EQ(accounts().size(), 1u);
  moved.undo();
  EXPECT_EQ(accounts().size(), 0u);
}

TEST_F(UndoSession, MoveAssignUndoesTheOverwrittenSession) {
  auto a = db.start_undo_session();
  add("alice");
  a.push();
  auto b = db.start_undo_session();
  add("bob");
  b = database::session(std::move(b));  // self-move through a temporary keeps it
  EXPECT_EQ(accounts().size(), 2u);
  EXPECT_TRUE(b.active());
  b = std::move(a);  // a was pushed: b is undone, b takes a's (inactive) state
  EXPECT_FALSE(b.active());
  EXPECT_EQ(accounts().size(), 1u);
}

TEST_F(UndoSession, TransactionPatternKeepsOnlySuccessfulOnes) {
  // The writer loop: a pending session; each transaction a nested session squashed into it
  // on success, undone on failure.
  std::optional<database::session> pending;
  for (int tx = 0; tx < 50; ++tx) {
    if (!pending) pending = db.start_undo_session();
    auto s = db.start_undo_session();
    add(numbered("t", tx));
    if (tx % 5 == 0) continue;  // fails: destroyed without squash
    s.squash();
  }
  EXPECT_EQ(accounts().size(), 40u);
  EXPECT_EQ(db.undo_depth(), 1u);
  pending.reset();
  EXPECT_EQ(accounts().size(), 0u);
}

TEST_F(UndoSession, SessionWithoutIndexesStillCountsRevisions) {
  database empty;
  {
    auto s = empty.start_undo_session();
    EXPECT_EQ(empty.revision(), 1);
  }
  EXPECT_EQ(empty.revision(), 0);
}

TEST_F(Revision, StartIncrementsUndoAndSquashDecrement) {
  auto a = db.start_undo_session();
  auto b = db.start_undo_session();
  EXPECT_EQ(db.revision(), 2);
  EXPECT_EQ(b.revision(), 2);
  EXPECT_EQ(accounts().revision(), 2);
  EXPECT_EQ(items().revision(), 2);
  b.squash();
  EXPECT_EQ(db.revision(), 1);
  a.undo();
  EXPECT_EQ(db.revision(), 0);
  EXPECT_EQ(accounts().revision(), 0);
}

TEST_F(Revision, SquashOfOnlySessionKeepsRevision) {
  auto a = db.start_undo_session();
  add("alice");
  a.squash();
  EXPECT_EQ(db.revision(), 1);
  EXPECT_EQ(db.undo_depth(), 0u);
  db.undo();
  EXPECT_EQ(accounts().size(), 1u);
}

TEST_F(Revision, CommitMakesOlderSessionsPermanent) {
  for (int block = 1; block <= 5; ++block) {
    auto s = db.start_undo_session();
    add(numbered("b", block));
    s.push();
  }
  EXPECT_EQ(db.revision(), 5);
  EXPECT_EQ(db.undo_depth(), 5u);
  db.commit(3);
  EXPECT_EQ(db.undo_depth(), 2u);
  EXPECT_EQ(accounts().undo_depth(), 2u);
  EXPECT_EQ(accounts().undo_state_at(0).revision(), 4);
  db.commit(2);  // already permanent: nothing happens
  EXPECT_EQ(db.undo_depth(), 2u);
  db.undo_all();
  EXPECT_EQ(db.revision(), 3);
  EXPECT_EQ(accounts().size(), 3u);  // blocks 1-3 cannot be undone any more
  db.commit(10);                     // past the top: everything
  EXPECT_EQ(db.undo_depth(), 0u);
  EXPECT_EQ(db.revision(), 3);
}

TEST_F(Revision, CommitUnderAnOpenSessionKeepsIt) {
  auto block = db.start_undo_session();
  add("block");
  block.push();
  auto pending = db.start_undo_session();
  add("pending");
  db.commit(1);
  EXPECT_EQ(db.undo_depth(), 1u);
  pending.undo();
  EXPECT_EQ(accounts().size(), 1u);
  EXPECT_EQ(db.revision(), 1);
}

TEST_F(Revision, UndoOfCommittedSessionChangesNothing) {
  auto s = db.start_undo_session();
  add("alice");
  db.commit(1);
  s.undo();
  EXPECT_EQ(accounts().size(), 1u);
  EXPECT_EQ(db.revision(), 1);
}

TEST_F(Revision, SetRevisionWithoutSessions) {
  db.set_revision(41);
  EXPECT_EQ(db.revision(), 41);
  EXPECT_EQ(accounts().revision(), 41);
  auto s = db.start_undo_session();
  EXPECT_EQ(s.revision(), 42);
  EXPECT_EQ(items().undo_state_at(0).revision(), 42);
}

TEST_F(Revision, AddIndexTakesTheDatabaseRevision) {
  database d;
  d.set_revision(7);
  EXPECT_EQ(d.add_index<account_index>().revision(), 7);
  EXPECT_TRUE(d.has_index<account_index>());
  EXPECT_FALSE(d.has_index<item_index>());
  EXPECT_EQ(d.index_count(), 1u);
}

// An index that fails on demand where a real one could run out of memory.
class failing_index final : public undo_index_base {
 public:
  explicit failing_index(const index_options&) {}
  bool fail_start = false;
  bool fail_squash = false;

  void start_undo_session() override {
    if (fail_start) throw std::bad_alloc();
    ++depth_;
    ++revision_;
  }
  void undo() noexcept override {
    if (depth_ == 0) return;
    --depth_;
    --revision_;
  }
  void reserve_for_squash() override {
    if (fail_squash) throw std::bad_alloc();
  }
  void squash_reserved() noexcept override {
    if (depth_ == 0) return;
    if (--depth_ > 0) --revision_;
  }
  void commit(std::int64_t revision) noexcept override {
    const std::int64_t bottom = revision_ - static_cast<std::int64_t>(depth_) + 1;
    if (revision >= bottom) depth_ = revision >= revision_ ? 0 : static_cast<std::size_t>(revision_ - revision);
  }
  void set_revision(std::int64_t revision) override { revision_ = revision; }
  std::int64_t revision() const noexcept override { return revision_; }
  std::size_t undo_depth() const noexcept override { return depth_; }

 private:
  std::size_t depth_ = 0;
  std::int64_t revision_ = 0;
};

TEST_F(UndoSession, FailedStartRollsBackTheIndexesAlreadyStarted) {
  auto& failing = db.add_index<failing_index>();
  auto outer = db.start_undo_session();
  add("alice");
  failing.fail_start = true;
  EXPECT_THROW((void)db.start_undo_session(), std::bad_alloc);
  EXPECT_EQ(db.revision(), 1);
  EXPECT_EQ(db.undo_depth(), 1u);
  EXPECT_EQ(accounts().undo_depth(), 1u);
  EXPECT_EQ(items().undo_depth(), 1u);
  EXPECT_EQ(accounts().revision(), 1);
  outer.undo();
  EXPECT_EQ(accounts().size(), 0u);
}

TEST_F(UndoSession, FailedSquashChangesNothing) {
  auto& failing = db.add_index<failing_index>();
  auto outer = db.start_undo_session();
  add("alice");
  const snapshot before_inner = take_snapshot(db);
  {
    auto inner = db.start_undo_session();
    add("bob");
    accounts().modify(accounts().get(0), [](account& a) { a.balance = 9; });
    failing.fail_squash = true;
    EXPECT_THROW(inner.squash(), std::bad_alloc);
    EXPECT_TRUE(inner.active());
    EXPECT_EQ(accounts().undo_depth(), 2u);  // no index squashed
    EXPECT_EQ(accounts().undo_state_at(1).new_ids().size(), 1u);
    EXPECT_EQ(db.revision(), 2);
  }  // the failed transaction unwinds
  EXPECT_EQ(take_snapshot(db), before_inner);
  failing.fail_squash = false;
  outer.squash();
  EXPECT_EQ(accounts().size(), 1u);
}

using UndoSessionDeathTest = Db;

TEST_F(UndoSessionDeathTest, ClosingOutOfOrderAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto outer = db.start_undo_session();
        auto inner = db.start_undo_session();
        outer.undo();
      },
      "check failed");
}

TEST_F(UndoSessionDeathTest, SetRevisionWithOpenSessionAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto s = db.start_undo_session();
  EXPECT_DEATH(db.set_revision(3), "check failed");
}

TEST_F(UndoSessionDeathTest, AddingAnIndexTwiceAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(db.add_index<account_index>(), "check failed");
}

}  // namespace
}  // namespace apiary::core::test
