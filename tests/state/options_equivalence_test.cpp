// A random script of sessions and object operations, run against a plain reference model
// (a full copy of the state per open session) after every operation, under all eight
// combinations of keep_alive x pool_objects x pool_undo; the combinations must also agree
// with each other at every checkpoint.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

struct model {
  std::map<std::uint64_t, account> accounts;
  std::uint64_t account_next = 0;
  std::map<std::uint32_t, item> items;
  std::uint32_t item_next = 0;

  snapshot to_snapshot() const {
    snapshot s;
    for (const auto& [id, a] : accounts) s.accounts.push_back(a);
    s.account_next_id = account_next;
    for (const auto& [id, i] : items) s.items.push_back(i);
    s.item_next_id = item_next;
    return s;
  }
  bool name_taken(const std::string& name, std::uint64_t except) const {
    for (const auto& [id, a] : accounts)
      if (a.name == name && id != except) return true;
    return false;
  }
};

class runner {
 public:
  // mapped_to: empty for a heap database; else the database lives in a state region. Every
  // 1,000 operations run() makes the open sessions permanent and, with a region, writes it to
  // this file, closes both and opens the file again.
  runner(const database_options& options, std::uint64_t seed, std::filesystem::path mapped_to = {})
      : options_(options), file_(std::move(mapped_to)), rng_(seed) {
    if (!file_.empty()) region_ = state_region::make(std::size_t{1} << 30);
    open_database();
  }

  // Runs `ops` random operations, checking against the model after each; returns the
  // snapshots taken every 250 operations and at the end.
  std::vector<snapshot> run(int ops) {
    std::vector<snapshot> checkpoints;
    for (int n = 0; n < ops; ++n) {
      step();
      const snapshot now = take_snapshot(*db_);
      EXPECT_EQ(now, current_.to_snapshot()) << "after operation " << n;
      EXPECT_EQ(db_->revision(), revision_) << "after operation " << n;
      EXPECT_EQ(db_->undo_depth(), sessions_.size());
      if (::testing::Test::HasFailure()) return checkpoints;
      if (n % 250 == 0) {
        EXPECT_TRUE(indexes_consistent(accounts(), items()));
        checkpoints.push_back(now);
      }
      if (n % 1000 == 999) settle_and_reopen();
    }
    while (!sessions_.empty()) undo_top();
    EXPECT_EQ(take_snapshot(*db_), current_.to_snapshot());
    checkpoints.push_back(take_snapshot(*db_));
    return checkpoints;
  }

 private:
  struct open_session {
    model at_start;
    std::int64_t revision;
  };

  void open_database() {
    db_ = region_ ? std::make_unique<database>(options_, region_.get()) : std::make_unique<database>(options_);
    db_->add_index<account_index>();
    db_->add_index<item_index>();
  }

  // Makes every open session permanent; with a region, writes it to the file, closes both and
  // opens the file: the state must be what it was, and the script goes on from it.
  void settle_and_reopen() {
    if (!sessions_.empty()) {
      db_->commit(db_->revision());
      for (database::session& s : sessions_) s.push();
      sessions_.clear();
      model_stack_.clear();
    }
    if (!region_) return;
    const snapshot before = take_snapshot(*db_);
    region_->write(file_, {});
    db_.reset();
    region_.reset();
    region_ = state_region::open(file_, {.prefault = false});
    open_database();
    EXPECT_EQ(take_snapshot(*db_), before);
    EXPECT_EQ(db_->revision(), revision_);
    EXPECT_TRUE(indexes_consistent(accounts(), items()));
  }

  account_index& accounts() { return db_->get_index<account_index>(); }
  item_index& items() { return db_->get_index<item_index>(); }
  std::uint64_t pick(std::uint64_t n) { return rng_() % n; }
  // Some names longer than a state_string keeps in itself, so that they take memory.
  std::string random_name() { return numbered(pick(2) == 0 ? "u" : "a-name-longer-than-sixteen-", pick(60)); }

  void step() {
    const std::uint64_t r = pick(100);
    if (r < 12) return start();
    if (r < 20) return squash_top();
    if (r < 25) return undo_top();
    if (r < 27) return commit();
    if (r < 45) return create_account();
    if (r < 65) return modify_account();
    if (r < 72) return remove_account();
    if (r < 82) return create_item();
    if (r < 93) return modify_item();
    return remove_item();
  }

  void start() {
    if (sessions_.size() >= 8) return;
    sessions_.push_back(db_->start_undo_session());
    model_stack_.push_back({current_, ++revision_});
  }
  void squash_top() {
    if (sessions_.empty()) return;
    sessions_.back().squash();
    sessions_.pop_back();
    model_stack_.pop_back();
    if (!sessions_.empty()) --revision_;
  }
  void undo_top() {
    if (sessions_.empty()) return;
    if (pick(2) == 0) {
      sessions_.back().undo();
    }  // else: abandoned, undone by the destructor
    sessions_.pop_back();
    current_ = model_stack_.back().at_start;
    model_stack_.pop_back();
    --revision_;
  }
  void commit() {
    if (sessions_.empty()) return;
    const std::int64_t bottom = model_stack_.front().revision;
    const std::int64_t r = bottom - 1 + static_cast<std::int64_t>(pick(sessions_.size() + 1));
    db_->commit(r);
    while (!model_stack_.empty() && model_stack_.front().revision <= r) {
      sessions_.front().push();
      sessions_.erase(sessions_.begin());
      model_stack_.erase(model_stack_.begin());
    }
  }

  template <class Map>
  auto random_existing(const Map& m) {
    auto it = m.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(m.size())));
    return it->first;
  }

  void create_account() {
    const std::string name = random_name();
    const std::int64_t balance = static_cast<std::int64_t>(pick(1000));
    const bool fail = pick(10) == 0;
    try {
      const account& a = accounts().create([&](account& x) {
        x.name = name;
        x.balance = balance;
        if (fail) throw injected_failure{};
      });
      EXPECT_FALSE(fail || current_.name_taken(name, UINT64_MAX));
      current_.accounts[a.id] = a;
      EXPECT_EQ(a.id, current_.account_next);
      ++current_.account_next;
    } catch (const injected_failure&) {
      EXPECT_TRUE(fail);
    } catch (const unique_key_violation&) {
      EXPECT_TRUE(current_.name_taken(name, UINT64_MAX));
    }
  }
  void modify_account() {
    if (current_.accounts.empty()) return;
    const std::uint64_t id = random_existing(current_.accounts);
    const bool rename = pick(3) == 0;
    const std::string name = rename ? random_name() : std::string(current_.accounts[id].name.view());
    const std::int64_t delta = static_cast<std::int64_t>(pick(100)) - 50;
    const bool fail = pick(10) == 0;
    try {
      accounts().modify(accounts().get(id), [&](account& x) {
        x.name = name;
        x.balance += delta;
        if (fail) throw injected_failure{};
      });
      EXPECT_FALSE(fail || current_.name_taken(name, id));
      current_.accounts[id].name = name;
      current_.accounts[id].balance += delta;
    } catch (const injected_failure&) {
      EXPECT_TRUE(fail);
    } catch (const unique_key_violation&) {
      EXPECT_TRUE(current_.name_taken(name, id));
    }
  }
  void remove_account() {
    if (current_.accounts.empty()) return;
    const std::uint64_t id = random_existing(current_.accounts);
    accounts().remove(accounts().get(id));
    current_.accounts.erase(id);
  }
  void create_item() {
    const auto owner = static_cast<std::uint32_t>(pick(20));
    const bool fail = pick(10) == 0;
    try {
      const item& i = items().create([&](item& x) {
        x.owner = owner;
        x.value = owner * 3u;
        if (fail) throw injected_failure{};
      });
      EXPECT_FALSE(fail);
      current_.items[i.id] = i;
      EXPECT_EQ(i.id, current_.item_next);
      ++current_.item_next;
    } catch (const injected_failure&) {
      EXPECT_TRUE(fail);
    }
  }
  void modify_item() {
    if (current_.items.empty()) return;
    const std::uint32_t id = random_existing(current_.items);
    const auto owner = static_cast<std::uint32_t>(pick(20));
    const bool fail = pick(10) == 0;
    try {
      items().modify(items().get(id), [&](item& x) {
        x.owner = owner;
        ++x.value;
        if (fail) throw injected_failure{};
      });
      EXPECT_FALSE(fail);
      current_.items[id].owner = owner;
      ++current_.items[id].value;
    } catch (const injected_failure&) {
      EXPECT_TRUE(fail);
    }
  }
  void remove_item() {
    if (current_.items.empty()) return;
    const std::uint32_t id = random_existing(current_.items);
    items().remove(items().get(id));
    current_.items.erase(id);
  }

  database_options options_;
  std::filesystem::path file_;
  std::unique_ptr<state_region> region_;  // declared before the database, which lives in it
  std::unique_ptr<database> db_;
  std::mt19937_64 rng_;
  model current_;
  std::vector<open_session> model_stack_;  // bottom first, like the undo stack
  std::vector<database::session> sessions_;
  std::int64_t revision_ = 0;
};

TEST(OptionsEquivalence, RandomScriptGivesIdenticalResultsUnderAllEightCombinations) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::vector<std::vector<snapshot>> results;
    for (int bits = 0; bits < 8; ++bits) {
      const database_options options{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
      SCOPED_TRACE(::testing::Message() << "keep_alive " << options.keep_alive << " pool_objects "
                                        << options.pool_objects << " pool_undo " << options.pool_undo);
      runner r(options, seed);
      results.push_back(r.run(3000));
      ASSERT_FALSE(::testing::Test::HasFailure());
    }
    for (std::size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i], results[0]);
    EXPECT_GT(results[0].size(), 10u);
  }
}

// The same script on a database in a state region, written to a file and opened again every
// 1,000 operations: the same results as on the heap, under every combination.
TEST(OptionsEquivalence, MappedDatabaseReopenedFromItsFileFollowsTheHeapOne) {
  const std::filesystem::path file = temporary_path("mapped-equivalence.state");
  for (std::uint64_t seed : {4u, 5u}) {
    SCOPED_TRACE(seed);
    for (int bits = 0; bits < 8; ++bits) {
      const database_options options{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
      SCOPED_TRACE(::testing::Message() << "keep_alive " << options.keep_alive << " pool_objects "
                                        << options.pool_objects << " pool_undo " << options.pool_undo);
      const std::vector<snapshot> heap = runner(options, seed).run(3000);
      const std::vector<snapshot> mapped = runner(options, seed, file).run(3000);
      ASSERT_FALSE(::testing::Test::HasFailure());
      EXPECT_EQ(mapped, heap);
    }
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace apiary::core::test
