// squash() merge rules: every CREATE / MODIFY / REMOVE combination on one key across two
// nested sessions, checked three ways: the merged record, the objects untouched by the
// squash, and undo of the merged session restoring the state from before both.
#include <gtest/gtest.h>

#include <optional>

#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

enum class op { none, create, modify, remove, create_modify, modify_remove, create_remove };
enum class record { nothing, created, modified, removed };

struct squash_case {
  const char* name;
  op in_outer;
  op in_inner;
  record merged;
};

// The key under test is "key"; "other" is a bystander every case leaves alone.
class SquashRule : public ::testing::TestWithParam<squash_case> {
 protected:
  void SetUp() override {
    idx.create([](account& a) {
      a.name = "other";
      a.balance = 100;
    });
  }

  std::optional<std::uint64_t> key_id;
  account_index idx;
  std::int64_t next_balance = 1;

  void apply(op o) {
    auto create = [&] { key_id = idx.create([](account& a) { a.name = "key"; }).id; };
    auto modify = [&] {
      const std::int64_t b = next_balance++;
      idx.modify(idx.get(*key_id), [&](account& a) {
        a.balance = b;
        a.name = numbered("key", b);  // a unique key changes too
      });
    };
    auto remove = [&] { idx.remove(idx.get(*key_id)); };
    switch (o) {
      case op::none: break;
      case op::create: create(); break;
      case op::modify: modify(); break;
      case op::remove: remove(); break;
      case op::create_modify:
        create();
        modify();
        break;
      case op::modify_remove:
        modify();
        remove();
        break;
      case op::create_remove:
        create();
        remove();
        break;
    }
  }

  std::vector<account> contents() const { return {idx.indices().begin(), idx.indices().end()}; }
};

TEST_P(SquashRule, MergesIntoOuterSession) {
  const squash_case& c = GetParam();
  const bool key_exists_before = c.in_outer != op::create && c.in_outer != op::create_modify &&
                                 c.in_outer != op::create_remove && c.in_inner != op::create &&
                                 c.in_inner != op::create_modify && c.in_inner != op::create_remove;
  if (key_exists_before) {
    key_id = idx.create([](account& a) {
                  a.name = "key";
                  a.balance = 0;
                })
                 .id;
  }
  const std::vector<account> before_outer = contents();
  const std::uint64_t next_before_outer = idx.next_id();
  const std::optional<account> original = key_exists_before ? std::optional<account>(idx.get(*key_id)) : std::nullopt;

  idx.start_undo_session();
  apply(c.in_outer);
  idx.start_undo_session();
  apply(c.in_inner);
  const std::vector<account> before_squash = contents();
  const std::uint64_t next_before_squash = idx.next_id();

  idx.squash();
  ASSERT_EQ(idx.undo_depth(), 1u);
  EXPECT_EQ(idx.revision(), 1);
  EXPECT_EQ(contents(), before_squash);  // squash changes no object
  EXPECT_EQ(idx.next_id(), next_before_squash);

  const auto& s = idx.undo_state_at(0);
  EXPECT_EQ(s.old_next_id(), next_before_outer);
  const std::uint64_t id = key_id.value_or(999);
  const bool is_new = std::find(s.new_ids().begin(), s.new_ids().end(), id) != s.new_ids().end();
  switch (c.merged) {
    case record::nothing: EXPECT_TRUE(s.empty()); break;
    case record::created:
      EXPECT_TRUE(is_new);
      EXPECT_EQ(s.new_ids().size(), 1u);
      EXPECT_EQ(s.modified_count(), 0u);
      EXPECT_EQ(s.removed_count(), 0u);
      break;
    case record::modified:
      EXPECT_TRUE(s.new_ids().empty());
      ASSERT_EQ(s.modified_count(), 1u);
      EXPECT_EQ(s.removed_count(), 0u);
      EXPECT_EQ(*s.old_value(id), *original);  // the value from before the outer session
      break;
    case record::removed:
      EXPECT_TRUE(s.new_ids().empty());
      EXPECT_EQ(s.modified_count(), 0u);
      ASSERT_EQ(s.removed_count(), 1u);
      EXPECT_EQ(*s.removed_value(id), *original);
      break;
  }

  idx.undo();
  EXPECT_EQ(contents(), before_outer);
  EXPECT_EQ(idx.next_id(), next_before_outer);
  EXPECT_EQ(idx.revision(), 0);
  item_index unused;
  EXPECT_TRUE(indexes_consistent(idx, unused));
}

// The 4x4 table of outer x inner operation, minus the combinations that cannot happen (an
// inner create of an id the outer session knows, anything after an outer remove), plus the
// multi-operation sequences CREATE MODIFY* REMOVE? within one session.
INSTANTIATE_TEST_SUITE_P(
    AllCombinations, SquashRule,
    ::testing::Values(squash_case{"NoneNone", op::none, op::none, record::nothing},
                      squash_case{"NoneCreate", op::none, op::create, record::created},
                      squash_case{"NoneModify", op::none, op::modify, record::modified},
                      squash_case{"NoneRemove", op::none, op::remove, record::removed},
                      squash_case{"CreateNone", op::create, op::none, record::created},
                      squash_case{"CreateModify", op::create, op::modify, record::created},
                      squash_case{"CreateRemove", op::create, op::remove, record::nothing},
                      squash_case{"ModifyNone", op::modify, op::none, record::modified},
                      squash_case{"ModifyModify", op::modify, op::modify, record::modified},
                      squash_case{"ModifyRemove", op::modify, op::remove, record::removed},
                      squash_case{"RemoveNone", op::remove, op::none, record::removed},
                      squash_case{"NoneCreateThenModify", op::none, op::create_modify, record::created},
                      squash_case{"NoneCreateThenRemove", op::none, op::create_remove, record::nothing},
                      squash_case{"NoneModifyThenRemove", op::none, op::modify_remove, record::removed},
                      squash_case{"CreateThenModifyModifyThenRemove", op::create_modify, op::modify_remove,
                                  record::nothing},
                      squash_case{"CreateThenRemoveNone", op::create_remove, op::none, record::nothing},
                      squash_case{"ModifyModifyThenRemove", op::modify, op::modify_remove, record::removed},
                      squash_case{"ModifyThenRemoveNone", op::modify_remove, op::none, record::removed}),
    [](const ::testing::TestParamInfo<squash_case>& p) { return p.param.name; });

TEST(Squash, OnlySessionBecomesPermanent) {
  account_index idx;
  idx.start_undo_session();
  idx.create([](account& a) { a.name = "alice"; });
  idx.squash();
  EXPECT_EQ(idx.undo_depth(), 0u);
  EXPECT_EQ(idx.revision(), 1);  // the revision stays: its changes are now committed
  idx.undo();                    // nothing left to undo
  EXPECT_EQ(idx.size(), 1u);
}

TEST(Squash, ChainOfSessionsUndoesAsOne) {
  account_index idx;
  idx.create([](account& a) { a.name = "base"; });
  const std::vector<account> before(idx.indices().begin(), idx.indices().end());
  idx.start_undo_session();
  for (int i = 0; i < 5; ++i) {
    idx.start_undo_session();
    idx.create([&](account& a) { a.name = numbered("n", i); });
    idx.modify(idx.get(0), [&](account& a) { a.balance += 1; });
    if (i % 2 == 1) idx.remove(idx.get(static_cast<std::uint64_t>(i)));  // created earlier
    idx.squash();
  }
  EXPECT_EQ(idx.undo_depth(), 1u);
  EXPECT_EQ(idx.undo_state_at(0).modified_count(), 1u);
  EXPECT_EQ(idx.undo_state_at(0).old_value(0)->balance, 0);
  idx.undo();
  EXPECT_EQ(std::vector<account>(idx.indices().begin(), idx.indices().end()), before);
  EXPECT_EQ(idx.next_id(), 1u);
}

}  // namespace
}  // namespace apiary::core::test
