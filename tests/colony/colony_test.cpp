// The colony's producer threads against a fake sink whose own "writer" thread runs the
// completions, as the queen's does. No test asserts an upper bound on elapsed time except
// the generous ones that catch a hang (a stop that does not return).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "apiary/colony/colony.hpp"
#include "apiary/colony/token_bucket.hpp"
#include "apiary/core/chain/submission.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace {

using namespace apiary;
using namespace std::chrono_literals;
using colony::op_kind;
using core::reject;

constexpr core::time_point_sec genesis_time{1'700'000'000};

core::block_id block_id_of(std::uint32_t num) {
  core::block_id id;
  id.data[0] = static_cast<std::uint8_t>(num >> 24);
  id.data[1] = static_cast<std::uint8_t>(num >> 16);
  id.data[2] = static_cast<std::uint8_t>(num >> 8);
  id.data[3] = static_cast<std::uint8_t>(num);
  for (std::size_t i = 4; i < id.size(); ++i) id.data[i] = static_cast<std::uint8_t>(num * 13 + i);
  return id;
}

colony::head_info head_at(std::uint32_t num) { return {num, block_id_of(num), genesis_time + 3 * num}; }

std::uint16_t ref_block_num_of(std::uint32_t num) {
  core::transaction t;
  t.set_reference_block(block_id_of(num));
  return t.ref_block_num;
}

// Polls until pred holds; false after the timeout (generous: only a hang should hit it).
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 10s) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A small, quick configuration: few accounts, no signing, unless a test says otherwise.
colony::colony_config small_config(std::uint32_t threads = 2) {
  colony::colony_config c;
  c.threads = threads;
  c.seed = 5;
  c.genesis_accounts = 64;
  c.sign = false;
  return c;
}

// A sink with its own writer thread that completes transactions in order, deciding each
// outcome with `decide`. It can hold transactions until the test releases them, close
// after a number of submissions, or throw from submit. It records what it saw.
class fake_sink final : public core::transaction_sink {
 public:
  using decide_fn = std::function<reject(const core::full_transaction&)>;

  explicit fake_sink(decide_fn decide = {}) : decide_(std::move(decide)), writer_([this] { loop(); }) {}
  ~fake_sink() override { shutdown(); }

  using core::transaction_sink::submit;
  bool submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent /*intent*/) override {
    std::lock_guard lock(mutex_);
    if (quit_ || (close_after_ && submitted_ >= *close_after_)) return false;
    if (throw_at_ && submitted_ == *throw_at_) throw std::runtime_error("sink failed on purpose");
    ++submitted_;
    auto& seq = sequences_[done.ctx];
    const auto bytes = tx->packed();
    seq.emplace_back(bytes.begin(), bytes.end());
    max_outstanding_ = std::max(max_outstanding_, ++outstanding_[done.ctx]);
    queue_.push_back({std::move(tx), done});
    cv_.notify_all();
    return true;
  }

  // Stops the writer; what is still queued is dropped without completion (a queen that
  // shuts down). Later submissions are refused.
  void shutdown() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

  void hold() {
    std::lock_guard lock(mutex_);
    held_ = true;
  }
  void release(std::uint64_t n) {
    {
      std::lock_guard lock(mutex_);
      releases_ += n;
    }
    cv_.notify_all();
  }
  void close_after(std::uint64_t n) {
    std::lock_guard lock(mutex_);
    close_after_ = n;
  }
  void throw_at(std::uint64_t n) {
    std::lock_guard lock(mutex_);
    throw_at_ = n;
  }

  template <class F>
  auto read(F f) const {
    std::lock_guard lock(mutex_);
    return f(*this);
  }
  std::uint64_t submitted() const {
    return read([](const fake_sink& s) { return s.submitted_; });
  }
  std::uint64_t completed() const {
    return read([](const fake_sink& s) { return s.completed_; });
  }
  std::uint64_t max_outstanding() const {
    return read([](const fake_sink& s) { return s.max_outstanding_; });
  }

  // Guarded by mutex_ (use read()).
  std::uint64_t submitted_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t max_outstanding_ = 0;
  std::map<void*, std::uint64_t> outstanding_;
  std::map<void*, std::vector<std::vector<std::uint8_t>>> sequences_;  // per producer, in order
  core::reject_counts outcomes_;
  std::uint64_t packed_bytes_ = 0;
  std::array<std::uint64_t, colony::op_kind_count> kinds_{};
  std::set<std::pair<std::string, std::string>> accepted_comments_;
  std::uint64_t targets_ = 0;          // votes and replies seen
  std::uint64_t unknown_targets_ = 0;  // of which aimed at no accepted comment
  std::map<std::uint16_t, std::uint64_t> by_ref_block_;

 private:
  struct item {
    core::full_transaction_ptr tx;
    core::tx_completion done;
  };

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || (!queue_.empty() && (!held_ || releases_ > 0)); });
      if (quit_) return;
      item it = std::move(queue_.front());
      queue_.pop_front();
      if (held_) --releases_;
      lock.unlock();
      const reject r = decide_ ? decide_(*it.tx) : reject::none;
      lock.lock();
      record(*it.tx, r);
      --outstanding_[it.done.ctx];  // before the completion, which lets the producer go on
      ++completed_;
      lock.unlock();
      it.done(*it.tx, r);
      lock.lock();
    }
  }

  void record(const core::full_transaction& ft, reject r) {
    outcomes_.add(r);
    packed_bytes_ += ft.packed_size();
    ++by_ref_block_[ft.tx().ref_block_num];
    const core::operation& op = ft.tx().operations.front();
    if (const auto* c = std::get_if<core::comment_operation>(&op)) {
      if (c->parent_author.empty()) {
        ++kinds_[colony::index_of(op_kind::article)];
      } else {
        ++kinds_[colony::index_of(op_kind::reply)];
        ++targets_;
        if (!accepted_comments_.contains({c->parent_author.str(), c->parent_permlink})) ++unknown_targets_;
      }
      if (r == reject::none) accepted_comments_.insert({c->author.str(), c->permlink});
    } else if (const auto* v = std::get_if<core::vote_operation>(&op)) {
      ++kinds_[colony::index_of(op_kind::vote)];
      ++targets_;
      if (!accepted_comments_.contains({v->author.str(), v->permlink})) ++unknown_targets_;
    } else if (std::holds_alternative<core::transfer_operation>(op)) {
      ++kinds_[colony::index_of(op_kind::transfer)];
    } else if (std::holds_alternative<core::custom_json_operation>(op)) {
      ++kinds_[colony::index_of(op_kind::custom_json)];
    }
  }

  decide_fn decide_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<item> queue_;
  bool quit_ = false;
  bool held_ = false;
  std::uint64_t releases_ = 0;
  std::optional<std::uint64_t> close_after_;
  std::optional<std::uint64_t> throw_at_;
  std::thread writer_;  // last: starts after everything it uses
};

// A sink and a colony torn down in the harness's order: stop the colony, stop the sink's
// writer (no completion after that), then destroy the colony.
struct rig {
  explicit rig(const colony::colony_config& config, fake_sink::decide_fn decide = {},
               colony::head_info head = head_at(1))
      : sink(std::move(decide)), c(std::in_place, config, sink, head) {}
  ~rig() {
    c->request_stop();
    sink.shutdown();
  }
  // Waits for the threads, then for every completion they are owed.
  void finish() {
    c->join();
    ASSERT_TRUE(eventually([&] { return sink.completed() == sink.submitted(); }));
  }

  fake_sink sink;
  std::optional<colony::colony> c;
};

// ---- configuration ----------------------------------------------------------------------

TEST(ColonyConfig, DefaultsAreValid) {
  const colony::colony_config c;
  EXPECT_FALSE(c.validate().has_value());
  EXPECT_EQ(c.threads, 2u);
  EXPECT_EQ(c.in_flight_limit, 1000u);
  EXPECT_EQ(c.resume_below(), 200u);
  EXPECT_EQ(c.rate, colony::rate_mode::infinite);
  EXPECT_EQ(c.submit, colony::submit_mode::fire_and_forget);
  EXPECT_TRUE(c.sign);
  EXPECT_TRUE(c.attach_signer_keys);
}

TEST(ColonyConfig, ValidateNamesTheField) {
  auto problem = [](auto change) {
    colony::colony_config c;
    change(c);
    return c.validate().value_or("");
  };
  EXPECT_NE(problem([](auto& c) { c.threads = 0; }).find("threads"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.threads = 129; }).find("threads"), std::string::npos);
  EXPECT_EQ(problem([](auto& c) { c.threads = 128; }), "");
  EXPECT_EQ(problem([](auto& c) { c.in_flight_limit = 0; }), "");  // automatic
  EXPECT_NE(problem([](auto& c) { c.resume_fraction = 0; }).find("resume_fraction"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.resume_fraction = 1.5; }).find("resume_fraction"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.rate = colony::rate_mode::tps; }).find("tps_limit"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.account_prefix = "User"; }).find("account_prefix"), std::string::npos);
  EXPECT_NE(problem([](auto& c) {
              c.account_prefix = "abcdefghij";
              c.genesis_accounts = 10'000'000;  // "abcdefghij9999999": 17 characters
            }).find("account_prefix"),
            std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.genesis_accounts = 1; }).find("genesis_accounts"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.mix[op_kind::vote].exponent = -1; }).find("mix"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.comment_ring_capacity = 0; }).find("comment_ring_capacity"), std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.wait_for_work_ms = 500'001; }).find("wait_for_work_ms"), std::string::npos);
  EXPECT_EQ(problem([](auto& c) { c.wait_for_work_ms = 500'000; }), "");
  EXPECT_EQ(problem([](auto& c) { c.wait_for_work_ms = 0; }), "");
  EXPECT_NE(problem([](auto& c) {
              c.rate = static_cast<colony::rate_mode>(9);
            }).find("rate: 9 is not a rate mode (allowed: infinite, block, tps)"),
            std::string::npos);
  EXPECT_NE(problem([](auto& c) { c.submit = static_cast<colony::submit_mode>(9); }).find("submit: 9"),
            std::string::npos);
  EXPECT_NE(problem([](auto& c) {
              c.mix[op_kind::reply].exponent = std::numeric_limits<double>::infinity();
            }).find("mix: reply: exponent"),
            std::string::npos);
}

TEST(ColonyConfig, ResumeBelowIsAFractionOfTheLimit) {
  colony::colony_config c;
  c.in_flight_limit = 10;
  EXPECT_EQ(c.resume_below(), 2u);
  c.in_flight_limit = 1;
  EXPECT_EQ(c.resume_below(), 1u);  // resume at 0
  c.in_flight_limit = 50;
  c.resume_fraction = 1.0;
  EXPECT_EQ(c.resume_below(), 50u);
}

TEST(ColonyConfig, ModeNamesRoundTrip) {
  for (auto m : {colony::rate_mode::infinite, colony::rate_mode::block_budget, colony::rate_mode::tps})
    EXPECT_EQ(colony::parse_rate_mode(colony::to_string(m)), m);
  for (auto m : {colony::submit_mode::fire_and_forget, colony::submit_mode::async, colony::submit_mode::sync})
    EXPECT_EQ(colony::parse_submit_mode(colony::to_string(m)), m);
  EXPECT_FALSE(colony::parse_rate_mode("fast").has_value());
  // The command line's spellings, the only ones.
  EXPECT_EQ(colony::to_string(colony::rate_mode::block_budget), "block");
  EXPECT_EQ(colony::to_string(colony::submit_mode::fire_and_forget), "fire-and-forget");
  EXPECT_EQ(colony::parse_rate_mode("block"), colony::rate_mode::block_budget);
  EXPECT_FALSE(colony::parse_rate_mode("block_budget").has_value());
  EXPECT_FALSE(colony::parse_submit_mode("fire_and_forget").has_value());
  EXPECT_EQ(core::names_text(colony::rate_mode_names), "infinite|block|tps");
  EXPECT_EQ(core::names_text(colony::submit_mode_names, " or "), "fire-and-forget or async or sync");
}

TEST(Colony, ConstructorRejectsABadConfig) {
  fake_sink sink;
  colony::colony_config c = small_config();
  c.threads = 0;
  EXPECT_THROW(colony::colony(c, sink, head_at(1)), std::invalid_argument);
}

// ---- token bucket -----------------------------------------------------------------------

TEST(TokenBucket, StartsWithOneTokenAndRefillsAtTheRate) {
  const auto t0 = colony::token_bucket::clock::time_point{} + 1h;
  colony::token_bucket b(100.0, 5.0, t0);
  EXPECT_TRUE(b.try_take(t0));
  EXPECT_FALSE(b.try_take(t0));
  EXPECT_EQ(b.ready_at(t0), t0 + 10ms);
  EXPECT_FALSE(b.try_take(t0 + 9ms));
  EXPECT_TRUE(b.try_take(t0 + 10ms));
  // A long pause accrues only the burst.
  int taken = 0;
  while (b.try_take(t0 + 10s)) ++taken;
  EXPECT_EQ(taken, 5);
}

TEST(TokenBucket, SlotsFollowTheScheduleAndForgiveNoDroppedToken) {
  const auto t0 = colony::token_bucket::clock::time_point{} + 1h;
  colony::token_bucket b(100.0, 5.0, t0);
  EXPECT_EQ(b.last_slot(), t0);
  ASSERT_TRUE(b.try_take(t0));
  EXPECT_EQ(b.last_slot(), t0);
  ASSERT_TRUE(b.try_take(t0 + 10ms));
  EXPECT_EQ(b.last_slot(), t0 + 10ms);
  // A second's stall: the burst refills 5 tokens, the other 95 are dropped; the next
  // transaction's slot is still the third one on the schedule (it is a second late).
  ASSERT_TRUE(b.try_take(t0 + 1010ms));
  EXPECT_EQ(b.last_slot(), t0 + 20ms);
  EXPECT_LE(b.last_slot(), t0 + 1010ms) << "a token is never taken before its slot";
}

// ---- producing --------------------------------------------------------------------------

TEST(Colony, EverySubmitModeMakesTheSameTransactionsPerThread) {
  // Without replies and votes the stream does not depend on the ring, so on nothing the
  // writer's timing decides: each thread's sequence must be the same in both modes.
  auto run = [](colony::submit_mode mode) {
    colony::colony_config c = small_config(3);
    c.sign = true;
    c.mix[op_kind::reply].weight = 0;
    c.mix[op_kind::vote].weight = 0;
    c.transactions_per_thread = 150;
    c.submit = mode;
    rig r(c);
    r.c->start();
    r.finish();
    const auto s = r.c->stats();
    EXPECT_EQ(s.submitted, 450u);
    EXPECT_EQ(s.accepted(), 450u);
    if (mode == colony::submit_mode::sync) {
      EXPECT_LE(s.result_wait.waits, 450u);  // not when the outcome was there first
      EXPECT_EQ(r.sink.max_outstanding(), 1u);
      EXPECT_EQ(s.in_flight_peak, 1u);
    } else {
      EXPECT_EQ(s.result_wait.waits, 0u);
      EXPECT_EQ(s.in_flight, 0u) << "every follow-up done once join() returned";
    }
    // Sorted by content: which thread got which completion context does not matter.
    auto seqs = r.sink.read([](const fake_sink& k) {
      std::vector<std::vector<std::vector<std::uint8_t>>> v;
      for (const auto& [ctx, seq] : k.sequences_) v.push_back(seq);
      return v;
    });
    std::sort(seqs.begin(), seqs.end());
    return seqs;
  };
  const auto fire = run(colony::submit_mode::fire_and_forget);
  ASSERT_EQ(fire.size(), 3u);
  for (const auto& seq : fire) EXPECT_EQ(seq.size(), 150u);
  EXPECT_EQ(fire, run(colony::submit_mode::async));
  EXPECT_EQ(fire, run(colony::submit_mode::sync));
}

TEST(Colony, InFlightLimitHoldsAndResumesBelowTheFraction) {
  colony::colony_config c = small_config(1);
  c.in_flight_limit = 10;  // resume below 2
  rig r(c);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 10u);  // stopped at the limit
  EXPECT_EQ(r.c->stats().in_flight, 10u);

  r.sink.release(8);  // 2 left: not below 2 yet
  ASSERT_TRUE(eventually([&] { return r.sink.completed() == 8; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 10u);

  r.sink.release(1);  // 1 left: resumes, up to the limit again
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 19; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 19u);
  EXPECT_EQ(r.sink.max_outstanding(), 10u);
  const auto s = r.c->stats();
  EXPECT_EQ(s.in_flight_brake.waits, 1u);   // the second is under way
  EXPECT_EQ(s.in_flight_late_resumes, 0u);  // resumed with one still in flight
  EXPECT_EQ(s.in_flight_peak, 10u);
}

TEST(Colony, ResumingWithNothingInFlightIsALateResume) {
  colony::colony_config c = small_config(1);
  c.in_flight_limit = 10;
  c.resume_fraction = 0.1;  // resume below 1: only once the backlog is gone
  rig r(c);
  r.sink.hold();
  r.c->start();
  // Each release waits until the producer has reached its brake: a release that came
  // between its last submit and its check of the count would let it go on without a wait.
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  std::this_thread::sleep_for(50ms);
  r.sink.release(10);
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 20; }));
  std::this_thread::sleep_for(50ms);
  r.sink.release(10);
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 30; }));
  const auto s = r.c->stats();
  EXPECT_EQ(s.in_flight_brake.waits, 2u);
  EXPECT_EQ(s.in_flight_late_resumes, 2u);
  EXPECT_EQ(s.in_flight_peak, 10u);
  r.sink.release(1000);
}

TEST(Colony, InFlightLimitIsNeverExceededWithManyThreads) {
  colony::colony_config c = small_config(4);
  c.in_flight_limit = 8;
  c.transactions_per_thread = 400;
  rig r(c);
  r.c->start();
  r.finish();
  EXPECT_LE(r.sink.max_outstanding(), 8u);
  EXPECT_EQ(r.sink.submitted(), 1600u);
}

TEST(Colony, BlockBudgetLimitsTransactionsPerBlock) {
  colony::colony_config c = small_config(2);
  c.rate = colony::rate_mode::block_budget;
  c.block_budget = 50;
  rig r(c);
  EXPECT_EQ(r.c->block_budget(), 50u);
  r.c->start();
  auto all_completed = [&] { return eventually([&] { return r.sink.completed() == r.sink.submitted(); }); };
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 50; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 50u);

  ASSERT_TRUE(all_completed());         // nothing in flight: only pending_after is left over
  r.c->on_block(head_at(2), {50, 10});  // 10 left pending: 50 - 10 more
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 90; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 90u);

  ASSERT_TRUE(all_completed());
  r.c->on_block(head_at(3), {50, 0});  // nothing pending: the full budget
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 140; }));
  r.c->on_block(head_at(4), {50, 70});  // more pending than the budget: nothing this block
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 140u);

  r.c->request_stop();
  r.finish();
  // Each block's transactions reference the head they were made for.
  const auto by_ref = r.sink.read([](const fake_sink& k) { return k.by_ref_block_; });
  EXPECT_EQ(by_ref.at(ref_block_num_of(1)), 50u);
  EXPECT_EQ(by_ref.at(ref_block_num_of(2)), 40u);
  EXPECT_EQ(by_ref.at(ref_block_num_of(3)), 50u);
  EXPECT_GE(r.c->stats().budget_brake.waits, 1u);
}

TEST(Colony, BlockBudgetAdaptsToOverflowAsHivesDoes) {
  constexpr std::uint32_t full = 100'000;
  // Nothing left pending: the full budget, whatever the block held.
  EXPECT_EQ(colony::next_block_budget(full, {7000, 0}), full);
  EXPECT_EQ(colony::next_block_budget(full, {0, 0}), full);
  // Overflow: the block's count plus 5%, clamped to 100..500, less what is pending.
  EXPECT_EQ(colony::next_block_budget(full, {4000, 30}), 4000u + 200 - 30);
  EXPECT_EQ(colony::next_block_budget(full, {20000, 30}), 20000u + 500 - 30);  // margin at most 500
  EXPECT_EQ(colony::next_block_budget(full, {300, 30}), 300u + 100 - 30);      // margin at least 100
  EXPECT_EQ(colony::next_block_budget(full, {0, 30}), 100u - 30);
  EXPECT_EQ(colony::next_block_budget(full, {2019, 1}), 2019u + 100 - 1);  // 5% of 2019 truncates to 100
  EXPECT_EQ(colony::next_block_budget(full, {2039, 1}), 2039u + 101 - 1);
  // At most the full budget, never below 0.
  EXPECT_EQ(colony::next_block_budget(1000, {990, 10}), 1000u - 10);
  EXPECT_EQ(colony::next_block_budget(1000, {300, 500}), 0u);
  EXPECT_EQ(colony::next_block_budget(1000, {300, std::size_t{1} << 40}), 0u);
}

TEST(Colony, BlockBudgetIgnoresQueuedTransactionsAndRecordsEachBlock) {
  colony::colony_config c = small_config(1);
  c.rate = colony::rate_mode::block_budget;
  c.block_budget = 30;
  rig r(c);
  r.sink.hold();  // nothing is processed: all stay queued
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 30; }));
  r.c->on_block(head_at(2), {20, 5});  // 30 queued do not count, as in Hive: 30 - 5 more
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 55; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 55u);
  r.c->on_block(head_at(3), {30, 40});  // more pending than min(30 + 100, 30)
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 55u);
  r.c->on_block(head_at(4), {30, 0});
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 85; }));

  const auto plans = r.c->block_plans();
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0], (colony::block_plan{2, 20, 5, 25, 1000}));
  EXPECT_EQ(plans[1], (colony::block_plan{3, 30, 40, 0, 1000}));
  EXPECT_EQ(plans[2], (colony::block_plan{4, 30, 0, 30, 1000}));
  r.sink.release(1000);
}

TEST(Colony, AutomaticInFlightLimitFollowsTheLastBlock) {
  EXPECT_EQ(colony::auto_in_flight_limit(7300, 2), 7300u);
  EXPECT_EQ(colony::auto_in_flight_limit(7300, 3), 4867u);  // rounded up
  EXPECT_EQ(colony::auto_in_flight_limit(1, 128), 1u);
  EXPECT_EQ(colony::auto_in_flight_limit(0, 4), 1u);  // never 0: that would hold the threads for good
  EXPECT_EQ(colony::auto_in_flight_limit(UINT32_MAX, 1), UINT32_MAX);

  colony::colony_config c = small_config(1);
  c.in_flight_limit = 0;
  ASSERT_EQ(c.validate(), std::nullopt);
  EXPECT_EQ(c.first_in_flight_limit(), 1000u);  // Hive's start: its default limit
  EXPECT_EQ(c.resume_below(), 200u);
  rig r(c);
  EXPECT_EQ(r.c->in_flight_limit(), 1000u);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 1000; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 1000u);  // braked at the start value, until fewer than 200

  r.c->on_block(head_at(2), {5, 0});  // 2 x 5 / 1 thread: 10, resume below 2
  EXPECT_EQ(r.c->in_flight_limit(), 10u);
  // 199 left: the thread resumes and makes one transaction (Hive's, too, submits the one it
  // held), then takes the new limit and brakes again at 200.
  r.sink.release(801);
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 1001; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 1001u);
  r.sink.release(199);  // 1 left: below 2, up to 10 again
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 1010; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 1010u);
  EXPECT_EQ(r.sink.max_outstanding(), 1000u);
  EXPECT_EQ(r.c->stats().in_flight_brake.waits, 2u);

  r.c->on_block(head_at(3), {0, 0});  // an empty block: 1
  EXPECT_EQ(r.c->in_flight_limit(), 1u);
  const auto plans = r.c->block_plans();
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].in_flight_limit, 10u);
  EXPECT_EQ(plans[0].budget, 0u);  // not in block-budget mode
  EXPECT_EQ(plans[1].in_flight_limit, 1u);
  r.sink.release(1000);
}

// Hive's colony-wait-for-work: a held thread checks again after each pause, and nothing
// else wakes it, so each wait lasts at least one pause.
TEST(ColonyWaitForWork, PollsTheInFlightBrake) {
  colony::colony_config c = small_config(1);
  c.in_flight_limit = 10;
  c.wait_for_work_ms = 300;
  rig r(c);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  r.sink.release(9);  // at once: a notified thread would go on within milliseconds
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 19; }));
  const auto s = r.c->stats();
  EXPECT_EQ(s.in_flight_brake.waits, 1u);
  EXPECT_GE(s.in_flight_brake.wait_ns, 300'000'000u);
  r.sink.release(1000);
}

TEST(ColonyWaitForWork, PollsTheBlockBudget) {
  colony::colony_config c = small_config(1);
  c.rate = colony::rate_mode::block_budget;
  c.block_budget = 5;
  c.wait_for_work_ms = 300;
  rig r(c);
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 5; }));
  // The producer reaches the spent budget's brake within microseconds of its fifth; a block
  // before that would spare it the wait (it did so once under ASan on a loaded machine).
  std::this_thread::sleep_for(200ms);
  r.c->on_block(head_at(2), {5, 0});
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  const auto s = r.c->stats();
  EXPECT_GE(s.budget_brake.waits, 1u);
  EXPECT_GE(s.budget_brake.wait_ns, 300'000'000u);
}

TEST(ColonyWaitForWork, ZeroYieldsAndStillObeysTheBrakes) {
  colony::colony_config c = small_config(2);
  c.in_flight_limit = 8;
  c.rate = colony::rate_mode::block_budget;
  c.block_budget = 300;
  c.wait_for_work_ms = 0;
  rig r(c);
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 300; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(r.sink.submitted(), 300u);
  r.c->on_block(head_at(2), {300, 0});
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 600; }));
  r.c->request_stop();
  r.finish();
  EXPECT_LE(r.sink.max_outstanding(), 8u);
  EXPECT_EQ(r.sink.submitted(), 600u);
}

TEST(Colony, BlockBudgetIsDerivedFromTheBlockSize) {
  fake_sink sink;
  colony::colony_config c;  // Hive's mix, signed, 100,000 accounts
  c.rate = colony::rate_mode::block_budget;
  colony::colony k(c, sink, head_at(1));
  // About 7,300 transactions of ~287 bytes fill a 2 MB block.
  EXPECT_GT(k.block_budget(), 6500u);
  EXPECT_LT(k.block_budget(), 8200u);
  sink.shutdown();
}

TEST(Colony, TpsLimitIsRoughlyRespected) {
  colony::colony_config c = small_config(2);
  c.rate = colony::rate_mode::tps;
  c.tps_limit = 200;
  rig r(c);
  r.c->start();
  std::this_thread::sleep_for(500ms);
  r.c->request_stop();
  r.finish();
  const std::uint64_t n = r.sink.submitted();
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, 400u);  // ~100 expected; twice the limit would be a broken limiter
  EXPECT_GT(r.c->stats().tps_brake.waits, 0u);
}

TEST(Colony, HeadChangesReachTheProducers) {
  colony::colony_config c = small_config(2);
  rig r(c);
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() > 100; }));
  r.c->on_block(head_at(7), {});
  const std::uint64_t before = r.sink.submitted();
  ASSERT_TRUE(eventually(
      [&] { return r.sink.read([](const fake_sink& k) { return k.by_ref_block_.count(ref_block_num_of(7)); }) > 0; }));
  r.c->request_stop();
  r.finish();
  EXPECT_GT(r.sink.submitted(), before);
}

// ---- stopping ---------------------------------------------------------------------------

// request_stop + join, timed: they must return promptly whatever the threads wait on.
std::chrono::milliseconds stop_time(colony::colony& c) {
  const auto t0 = std::chrono::steady_clock::now();
  c.request_stop();
  c.join();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
}

TEST(ColonyStop, WhileBrakedByInFlight) {
  colony::colony_config c = small_config(2);
  c.in_flight_limit = 5;
  rig r(c);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  EXPECT_LT(stop_time(*r.c), 2000ms);
  EXPECT_TRUE(r.c->finished());
}

TEST(ColonyStop, WhileWaitingForASyncResult) {
  colony::colony_config c = small_config(2);
  c.submit = colony::submit_mode::sync;
  rig r(c);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 2; }));
  EXPECT_LT(stop_time(*r.c), 2000ms);
}

TEST(ColonyStop, WhileWaitingForTheNextBlock) {
  colony::colony_config c = small_config(2);
  c.rate = colony::rate_mode::block_budget;
  c.block_budget = 7;
  rig r(c);
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 7; }));
  EXPECT_LT(stop_time(*r.c), 2000ms);
}

TEST(ColonyStop, WhileWaitingForATpsToken) {
  colony::colony_config c = small_config(2);
  c.rate = colony::rate_mode::tps;
  c.tps_limit = 0.2;  // a token every 10 s per thread
  rig r(c);
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 2; }));
  EXPECT_LT(stop_time(*r.c), 2000ms);
}

TEST(ColonyStop, WhilePollingWithALongPause) {
  colony::colony_config c = small_config(2);
  c.in_flight_limit = 5;
  c.wait_for_work_ms = colony::colony_config::max_wait_for_work_ms;
  rig r(c);
  r.sink.hold();
  r.c->start();
  ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 10; }));
  EXPECT_LT(stop_time(*r.c), 2000ms);
}

TEST(ColonyStop, WhilePollingForTheNextBlock) {
  for (std::uint32_t ms : {0u, colony::colony_config::max_wait_for_work_ms}) {
    colony::colony_config c = small_config(2);
    c.rate = colony::rate_mode::block_budget;
    c.block_budget = 7;
    c.wait_for_work_ms = ms;
    rig r(c);
    r.c->start();
    ASSERT_TRUE(eventually([&] { return r.sink.submitted() == 7; }));
    EXPECT_LT(stop_time(*r.c), 2000ms) << ms;
  }
}

TEST(ColonyStop, BeforeStartAndTwice) {
  colony::colony_config c = small_config(2);
  rig r(c);
  r.c->request_stop();
  r.c->start();  // returns: the threads see the stop
  r.c->join();
  r.c->request_stop();
  r.c->join();
  EXPECT_TRUE(r.c->finished());
  EXPECT_EQ(r.sink.submitted(), 0u);
}

TEST(ColonyStop, AClosedSinkEndsEveryThread) {
  colony::colony_config c = small_config(3);
  rig r(c);
  r.sink.close_after(100);
  r.c->start();
  r.finish();  // no request_stop: the closed sink ends the run
  const auto s = r.c->stats();
  EXPECT_TRUE(s.sink_closed);
  EXPECT_TRUE(r.c->stop_requested());
  EXPECT_EQ(s.submitted, 100u);
  EXPECT_GE(s.generated, 101u);  // the refused one(s) were built
  EXPECT_LE(s.generated, 103u);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_FALSE(r.c->error().has_value());
}

TEST(ColonyStop, AnExceptionInAThreadIsRethrownByJoin) {
  colony::colony_config c = small_config(2);
  rig r(c);
  r.sink.throw_at(50);
  r.c->start();
  EXPECT_THROW(r.c->join(), std::runtime_error);
  ASSERT_TRUE(r.c->error().has_value());
  EXPECT_NE(r.c->error()->find("on purpose"), std::string::npos);
  EXPECT_TRUE(r.c->finished());
  ASSERT_TRUE(eventually([&] { return r.sink.completed() == r.sink.submitted(); }));
  EXPECT_EQ(r.c->stats().in_flight, 0u);  // the failed submission is not left in flight
}

// ---- statistics and callbacks -----------------------------------------------------------

TEST(ColonyStats, PerKindStatsAddUp) {
  colony::colony_config c = small_config(2);
  c.transactions_per_thread = 3000;
  rig r(c);
  r.c->start();
  r.finish();
  const auto s = r.c->stats();
  const auto per_thread = r.c->thread_stats();
  ASSERT_EQ(per_thread.size(), 2u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.generated, 6000u);
  EXPECT_EQ(s.submitted, 6000u);
  EXPECT_EQ(s.accepted(), 6000u);
  EXPECT_EQ(s.rejected(), 0u);
  EXPECT_EQ(s.in_flight, 0u);
  for (const auto& t : per_thread) {
    EXPECT_EQ(t.generated, 3000u);
    EXPECT_EQ(t.accounts, 32u);  // 64 dealt to 2 threads
    EXPECT_GE(t.in_flight_peak, 1u);
    EXPECT_LE(t.in_flight_peak, c.in_flight_limit);
    EXPECT_EQ(t.article_substitutions, t.reply_substitutions + t.vote_substitutions);
  }
  EXPECT_EQ(s.accounts, 64u);
  EXPECT_EQ(s.in_flight_peak, std::max(per_thread[0].in_flight_peak, per_thread[1].in_flight_peak));

  std::uint64_t count = 0;
  double shares = 0;
  const auto sink_kinds = r.sink.read([](const fake_sink& k) { return k.kinds_; });
  for (op_kind k : colony::all_op_kinds) {
    count += s[k].count;
    shares += s.share(k);
    EXPECT_EQ(s[k].count, sink_kinds[colony::index_of(k)]) << colony::op_kind_name(k);
    EXPECT_EQ(s[k].count, per_thread[0][k].count + per_thread[1][k].count);
    if (s[k].count == 0) continue;
    const auto& p = c.mix[k];
    EXPECT_GE(s.average_extra_bytes(k), p.min) << colony::op_kind_name(k);
    EXPECT_LE(s.average_extra_bytes(k), p.max) << colony::op_kind_name(k);
    EXPECT_GT(s.average_packed_bytes(k), s.average_extra_bytes(k)) << colony::op_kind_name(k);
  }
  EXPECT_EQ(count, s.generated);
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_EQ(s.packed_bytes(), r.sink.read([](const fake_sink& k) { return k.packed_bytes_; }));
  EXPECT_NEAR(s.share(op_kind::custom_json), 0.725, 0.05);
  EXPECT_GT(s.thread_cpu_ns, 0u);
  EXPECT_GT(s.generation_cpu_ns, 0u);
  EXPECT_EQ(s.result_wait.waits, 0u);
}

TEST(ColonyStats, RejectionsAreCountedByReason) {
  // Outcomes decided by the id, so they differ between transactions but not between runs.
  auto decide = [](const core::full_transaction& t) {
    switch (t.id().data[0] % 4) {
      case 0: return reject::duplicate;
      case 1: return reject::custom_op_limit;
      case 2: return reject::expired;
      default: return reject::none;
    }
  };
  colony::colony_config c = small_config(2);
  c.transactions_per_thread = 1000;
  rig r(c, decide);
  r.c->start();
  r.finish();
  const auto s = r.c->stats();
  const auto seen = r.sink.read([](const fake_sink& k) { return k.outcomes_; });
  EXPECT_EQ(s.outcomes.by_reason, seen.by_reason);
  EXPECT_GT(s.outcomes[reject::duplicate], 0u);
  EXPECT_GT(s.outcomes[reject::custom_op_limit], 0u);
  EXPECT_GT(s.outcomes[reject::expired], 0u);
  EXPECT_EQ(s.accepted() + s.rejected(), 2000u);
  EXPECT_EQ(s.outcomes[reject::unknown_account], 0u);
}

TEST(ColonyRing, VotesAndRepliesTargetOnlyAcceptedComments) {
  // Every other article rejected: the ring must hold only the accepted ones.
  auto decide = [](const core::full_transaction& t) {
    const auto* c = std::get_if<core::comment_operation>(&t.tx().operations.front());
    return c != nullptr && c->parent_author.empty() && t.id().data[0] % 2 == 0 ? reject::unknown_parent : reject::none;
  };
  colony::colony_config c = small_config(2);
  c.transactions_per_thread = 3000;
  rig r(c, decide);
  r.c->start();
  r.finish();
  const auto [targets, unknown] =
      r.sink.read([](const fake_sink& k) { return std::pair(k.targets_, k.unknown_targets_); });
  EXPECT_GT(targets, 1000u);
  EXPECT_EQ(unknown, 0u);
  EXPECT_GT(r.c->ring().size(), 0u);
}

TEST(ColonyRing, NothingAcceptedMeansNoTargets) {
  auto reject_comments = [](const core::full_transaction& t) {
    return std::holds_alternative<core::comment_operation>(t.tx().operations.front()) ? reject::unknown_parent
                                                                                      : reject::none;
  };
  colony::colony_config c = small_config(2);
  c.transactions_per_thread = 1500;
  rig r(c, reject_comments);
  r.c->start();
  r.finish();
  const auto s = r.c->stats();
  EXPECT_EQ(s[op_kind::vote].count, 0u);
  EXPECT_EQ(s[op_kind::reply].count, 0u);
  EXPECT_GT(s.reply_substitutions, 0u);
  EXPECT_GT(s.vote_substitutions, 0u);
  EXPECT_EQ(s.article_substitutions, s.reply_substitutions + s.vote_substitutions);
  EXPECT_EQ(r.c->ring().size(), 0u);
}

// ---- signing ----------------------------------------------------------------------------

struct signed_view {
  std::size_t signatures = 0;
  std::size_t signer_keys = 0;
  bool recovers_to_attached = true;
  bool recovers_to_login_key = true;
};

signed_view inspect(bool sign, bool attach) {
  colony::colony_config c = small_config(2);
  c.sign = sign;
  c.attach_signer_keys = attach;
  c.transactions_per_thread = 40;
  signed_view v;
  std::mutex m;
  auto decide = [&](const core::full_transaction& t) {
    std::lock_guard lock(m);
    v.signatures += t.tx().signatures.size();
    v.signer_keys += t.signer_keys().size();
    if (t.tx().signatures.empty()) return reject::missing_authority;
    const auto key = core::recover_public_key(t.tx().signatures.front(), t.sig_digest());
    if (!t.signer_keys().empty() && key != t.signer_keys().front()) v.recovers_to_attached = false;
    // The signer is the first account the operation names as actor.
    const core::operation& op = t.tx().operations.front();
    core::account_name who;
    core::key_role role = core::key_role::posting;
    if (const auto* cj = std::get_if<core::custom_json_operation>(&op)) who = cj->required_posting_auths.front();
    if (const auto* vo = std::get_if<core::vote_operation>(&op)) who = vo->voter;
    if (const auto* co = std::get_if<core::comment_operation>(&op)) who = co->author;
    if (const auto* tr = std::get_if<core::transfer_operation>(&op)) {
      who = tr->from;
      role = core::key_role::active;
    }
    if (key != core::private_key::from_login(who.view(), role, "apiary").public_key()) v.recovers_to_login_key = false;
    return reject::none;
  };
  rig r(c, decide);
  r.c->start();
  r.finish();
  const auto s = r.c->stats();
  EXPECT_EQ(s.submitted, 80u);
  if (sign) {
    EXPECT_GT(s.signing_cpu_ns, 0u);
    EXPECT_GT(s.key_cpu_ns, 0u);  // keys derived on first use
  }
  return v;
}

TEST(ColonySigning, SignsWithTheLoginKeyAndAttachesIt) {
  const signed_view v = inspect(true, true);
  EXPECT_EQ(v.signatures, 80u);
  EXPECT_EQ(v.signer_keys, 80u);
  EXPECT_TRUE(v.recovers_to_attached);
  EXPECT_TRUE(v.recovers_to_login_key);
}

TEST(ColonySigning, AttachingCanBeSwitchedOff) {
  const signed_view v = inspect(true, false);
  EXPECT_EQ(v.signatures, 80u);
  EXPECT_EQ(v.signer_keys, 0u);
  EXPECT_TRUE(v.recovers_to_login_key);
}

TEST(ColonySigning, UnsignedCarriesNoSignatures) {
  const signed_view v = inspect(false, true);
  EXPECT_EQ(v.signatures, 0u);
  EXPECT_EQ(v.signer_keys, 0u);
}

TEST(ColonySigning, WarmKeysDerivesBeforeTheStart) {
  colony::colony_config c = small_config(2);
  c.sign = true;
  c.warm_keys = true;
  c.transactions_per_thread = 10;
  rig r(c);
  r.c->start();
  const std::uint64_t warm = r.c->stats().key_cpu_ns;
  EXPECT_GT(warm, 0u);  // 64 accounts x 2 roles, before any transaction
  r.finish();
  EXPECT_EQ(r.c->stats().key_cpu_ns, warm);  // nothing left to derive
}

TEST(ColonySigning, TimesOneTransactionInSoManyAndCountsItForThemAll) {
  colony::colony_config c = small_config(2);
  c.sign = true;
  c.warm_keys = true;  // no first-use derivations among the transactions
  c.transactions_per_thread = 20 * colony::cpu_sample_every + 1;
  rig r(c);
  r.c->start();
  r.finish();
  const auto s = r.c->stats();
  EXPECT_EQ(s.cpu_timed, 2u * 21);  // each thread's first, then one in cpu_sample_every
  // The timed ones' CPU time, counted for all, against all of the threads' own (keys aside):
  // signing is most of it; counted once it would be a sixteenth, counted twice over it.
  const auto own = static_cast<double>(s.thread_cpu_ns - s.key_cpu_ns);
  EXPECT_GT(static_cast<double>(s.signing_cpu_ns), 0.1 * own);
  EXPECT_LT(static_cast<double>(s.signing_cpu_ns + s.generation_cpu_ns), 1.5 * own);

  c.measure_cpu = false;
  rig unmeasured(c);
  unmeasured.c->start();
  unmeasured.finish();
  const auto u = unmeasured.c->stats();
  EXPECT_EQ(u.cpu_timed, 0u);
  EXPECT_EQ(u.signing_cpu_ns, 0u);
  EXPECT_EQ(u.generation_cpu_ns, 0u);
}

}  // namespace

TEST(ColonyRing, ForgetsCommentsBeforeTheyPayOut) {
  colony::comment_ring ring(4, 10);
  ring.advance(100);
  ring.push({core::account_name("a"), "p1"});
  ring.advance(105);
  ring.push({core::account_name("b"), "p2"});
  ring.advance(109);
  EXPECT_EQ(ring.size(), 2u);
  ring.advance(110);  // p1, remembered at 100, is 10 blocks old
  EXPECT_EQ(ring.size(), 1u);
  for (std::uint64_t roll = 0; roll < 4; ++roll) EXPECT_EQ(ring.pick(roll)->permlink, "p2");
  ring.advance(115);
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_FALSE(ring.pick(0).has_value());
  // Full: the newest overwrite the oldest, in order.
  for (char i = '0'; i < '6'; ++i) ring.push({core::account_name("c"), std::string{'q', i}});
  EXPECT_EQ(ring.size(), 4u);
  std::set<std::string> left;
  for (std::uint64_t roll = 0; roll < 4; ++roll) left.insert(ring.pick(roll)->permlink);
  EXPECT_EQ(left, (std::set<std::string>{"q2", "q3", "q4", "q5"}));
}

TEST(ColonyRing, TheAgeLimitFollowsTheCashoutWindow) {
  colony::colony_config c;
  core::chain_options o;
  c.use_genesis_of(o);
  EXPECT_EQ(c.comment_max_age(), o.cashout_blocks - 1200);  // less the blocks a transaction may wait
  o.cashout_blocks = 300;
  c.use_genesis_of(o);
  EXPECT_EQ(c.comment_max_age(), 150u);
  c.cashout_blocks = 0;
  EXPECT_EQ(c.comment_max_age(), 0u);  // no ageing
}
