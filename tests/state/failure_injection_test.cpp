// Undo restores state exactly: a failure is injected at every step of a scripted sequence
// (an exception inside a create/modify lambda, a transaction throwing after its operation, or
// the session simply abandoned) and the state captured before is compared with the state
// after. Every test runs under all eight database_options combinations.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

enum class fail { no, inside };

account_index& accounts(database& db) { return db.get_index<account_index>(); }
item_index& items(database& db) { return db.get_index<item_index>(); }
const account* acc(database& db, const char* name) { return accounts(db).find<by_name>(std::string(name)); }
const item* item_of(database& db, std::uint32_t owner) {
  const auto& by = items(db).get<by_owner>();
  auto it = by.find(owner);
  return it == by.end() ? nullptr : &*it;
}
void maybe_throw(fail f) {
  if (f == fail::inside) throw injected_failure{};
}
void rename(database& db, const char* from, const char* to, fail f) {
  if (acc(db, to) != nullptr) return;  // taken (an earlier step was skipped)
  if (const account* a = acc(db, from))
    accounts(db).modify(*a, [&](account& x) {
      x.name = to;
      maybe_throw(f);
    });
}
void add_balance(database& db, const char* name, std::int64_t d, fail f) {
  if (const account* a = acc(db, name))
    accounts(db).modify(*a, [&](account& x) {
      x.balance += d;
      maybe_throw(f);
    });
}
void remove_account(database& db, const char* name) {
  if (const account* a = acc(db, name)) accounts(db).remove(*a);
}
void create_account(database& db, const char* name, std::int64_t balance, fail f) {
  if (acc(db, name) != nullptr) return;  // taken (an earlier step was skipped)
  accounts(db).create([&](account& a) {
    a.name = name;
    a.balance = balance;
    maybe_throw(f);
  });
}

struct step {
  const char* what;
  bool has_lambda;  // whether fail::inside applies
  void (*run)(database&, fail);
};

// Steps find their objects by key and do nothing if the object is gone, so the script can
// run with any one step skipped. It covers every transition of CREATE MODIFY* REMOVE? and
// keys moving between objects.
const std::vector<step>& script() {
  static const std::vector<step> s = {
      {"create n1", true, [](database& db, fail f) { create_account(db, "n1", 1, f); }},
      {"modify a1", true, [](database& db, fail f) { add_balance(db, "a1", 10, f); }},
      {"rename a2", true, [](database& db, fail f) { rename(db, "a2", "a2x", f); }},
      {"remove a3", false, [](database& db, fail) { remove_account(db, "a3"); }},
      {"create item", true,
       [](database& db, fail f) {
         items(db).create([&](item& i) {
           i.owner = 9;
           i.value = 900;
           maybe_throw(f);
         });
       }},
      {"modify created n1", true, [](database& db, fail f) { add_balance(db, "n1", 5, f); }},
      {"remove created n1", false, [](database& db, fail) { remove_account(db, "n1"); }},
      {"modify a1 again", true, [](database& db, fail f) { add_balance(db, "a1", 7, f); }},
      {"remove modified a1", false, [](database& db, fail) { remove_account(db, "a1"); }},
      {"create reusing a3", true, [](database& db, fail f) { create_account(db, "a3", 33, f); }},
      {"modify created item", true,
       [](database& db, fail f) {
         if (const item* i = item_of(db, 9))
           items(db).modify(*i, [&](item& x) {
             x.value += 1;
             maybe_throw(f);
           });
       }},
      {"rename a4 to a1", true, [](database& db, fail f) { rename(db, "a4", "a1", f); }},
      {"remove item 0", false,
       [](database& db, fail) {
         if (const item* i = items(db).find(0)) items(db).remove(*i);
       }},
      {"create n2", true, [](database& db, fail f) { create_account(db, "n2", 0, f); }},
      {"rename a0 to a2", true, [](database& db, fail f) { rename(db, "a0", "a2", f); }},
      {"rename a2x to a0", true, [](database& db, fail f) { rename(db, "a2x", "a0", f); }},
      {"move item owner", true,
       [](database& db, fail f) {
         if (const item* i = item_of(db, 2))
           items(db).modify(*i, [&](item& x) {
             x.owner = 9;
             maybe_throw(f);
           });
       }},
      {"remove created item", false,
       [](database& db, fail) {
         if (const item* i = items(db).find(4)) items(db).remove(*i);
       }},
      {"create item", true,
       [](database& db, fail f) {
         items(db).create([&](item& i) {
           i.owner = 1;
           maybe_throw(f);
         });
       }},
  };
  return s;
}

class FailureInjection : public ::testing::TestWithParam<database_options> {
 protected:
  // A fresh database with a few objects committed before any session.
  std::unique_ptr<database> fresh() const {
    auto db = std::make_unique<database>(GetParam());
    db->add_index<account_index>();
    db->add_index<item_index>();
    for (int i = 0; i < 5; ++i) {
      accounts(*db).create([&](account& a) {
        a.name = numbered("a", i);
        a.balance = i;
      });
    }
    for (std::uint32_t i = 0; i < 4; ++i) {
      items(*db).create([&](item& x) {
        x.owner = i;
        x.value = i * 100;
      });
    }
    return db;
  }
  static void expect_consistent(database& db) { EXPECT_TRUE(indexes_consistent(accounts(db), items(db))); }
};

TEST_P(FailureInjection, ThrowInsideLambdaAtEveryStepChangesNothing) {
  const auto& steps = script();
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (!steps[k].has_lambda) continue;
    SCOPED_TRACE(steps[k].what);
    auto db = fresh();
    const snapshot initial = take_snapshot(*db);
    {
      auto session = db->start_undo_session();
      for (std::size_t i = 0; i < k; ++i) steps[i].run(*db, fail::no);
      const snapshot before = take_snapshot(*db);
      EXPECT_THROW(steps[k].run(*db, fail::inside), injected_failure);
      EXPECT_EQ(take_snapshot(*db), before);
      expect_consistent(*db);
      for (std::size_t i = k + 1; i < steps.size(); ++i) steps[i].run(*db, fail::no);
    }
    EXPECT_EQ(take_snapshot(*db), initial);
    expect_consistent(*db);
  }
}

// The writer loop: each step is a transaction in its own session nested in the pending
// session. Transaction k does its work and then throws; its session unwinds.
TEST_P(FailureInjection, FailedTransactionAtEveryStepIsUndone) {
  const auto& steps = script();
  for (std::size_t k = 0; k < steps.size(); ++k) {
    SCOPED_TRACE(steps[k].what);
    auto reference = fresh();
    {
      std::optional<database::session> pending = reference->start_undo_session();
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i == k) continue;
        auto tx = reference->start_undo_session();
        steps[i].run(*reference, fail::no);
        tx.squash();
      }
      pending->push();
    }

    auto db = fresh();
    const snapshot initial = take_snapshot(*db);
    std::optional<database::session> pending = db->start_undo_session();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const snapshot before = take_snapshot(*db);
      try {
        auto tx = db->start_undo_session();
        steps[i].run(*db, fail::no);
        if (i == k) throw injected_failure{};
        tx.squash();
      } catch (const injected_failure&) {
        EXPECT_EQ(take_snapshot(*db), before);
        expect_consistent(*db);
      }
    }
    EXPECT_EQ(take_snapshot(*db), take_snapshot(*reference));
    EXPECT_EQ(db->revision(), 1);
    pending.reset();
    EXPECT_EQ(take_snapshot(*db), initial);
    expect_consistent(*db);
  }
}

// Sessions abandoned (or undone through the database after push) at every step, with the
// work before it squashed from nested sessions or left in nested pushed sessions.
TEST_P(FailureInjection, AbandonAtEveryStepRestoresState) {
  const auto& steps = script();
  for (std::size_t k = 0; k <= steps.size(); ++k) {
    for (int shape = 0; shape < 3; ++shape) {
      SCOPED_TRACE(::testing::Message() << "step " << k << " shape " << shape);
      auto db = fresh();
      const snapshot initial = take_snapshot(*db);
      const std::int64_t revision = db->revision();
      {
        auto outer = db->start_undo_session();
        for (std::size_t i = 0; i < k; ++i) {
          auto tx = db->start_undo_session();
          steps[i].run(*db, fail::no);
          if (shape == 0) {
            tx.squash();
          } else {
            tx.push();  // stays on the stack as its own revision
          }
        }
        if (shape == 1) {
          for (std::size_t i = 0; i < k; ++i) db->undo();  // the pushed nested sessions
        }                                                  // then the outer unwinds
        if (shape == 2) {
          outer.push();
          db->undo_all();
        }
      }
      EXPECT_EQ(take_snapshot(*db), initial);
      EXPECT_EQ(db->revision(), revision);
      EXPECT_EQ(db->undo_depth(), 0u);
      expect_consistent(*db);
    }
  }
}

std::string options_name(const ::testing::TestParamInfo<database_options>& info) {
  const database_options& o = info.param;
  return std::string("KeepAlive") + (o.keep_alive ? "On" : "Off") + "PoolObjects" + (o.pool_objects ? "On" : "Off") +
         "PoolUndo" + (o.pool_undo ? "On" : "Off");
}

std::vector<database_options> all_options() {
  std::vector<database_options> all;
  for (int bits = 0; bits < 8; ++bits) all.push_back({(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0});
  return all;
}

INSTANTIATE_TEST_SUITE_P(AllOptions, FailureInjection, ::testing::ValuesIn(all_options()), options_name);

}  // namespace
}  // namespace apiary::core::test
