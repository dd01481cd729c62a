// shared_budget: in rate_mode::block_budget, the transactions left for the current block,
// which all the producer threads take from (where Hive gives each thread ceil(budget /
// threads)), and when that budget was published: the intended time of its transactions
// (core::tx_intent).
//
// The writer refills it after each block (refill); a producer takes one unit per transaction
// (try_take, lock-free), and when none is left waits for the next refill (wait): woken by the
// refill, or, with wait_for_work_ms, polling as Hive's producers do.
//
// Thread-safe: a unit is taken by compare-and-swap, with acquire, so the unit of a new
// block's budget comes with what the writer published before the refill (the new head). A
// refill stores under the mutex, so a waiter between its check and its wait cannot miss the
// wake-up. A stop (the colony's flag, passed in) ends every wait; wake() makes a waiter look.
// Invariant: units_left() may fall below 1 only to 0 (a unit is never taken twice).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "apiary/core/base/mutex.hpp"

namespace apiary::colony {

class shared_budget {
 public:
  // poll_ms: colony_config::wait_for_work_ms.
  shared_budget(const std::atomic<bool>& stop, std::optional<std::uint32_t> poll_ms) : stop_(stop), poll_ms_(poll_ms) {}
  shared_budget(const shared_budget&) = delete;
  shared_budget& operator=(const shared_budget&) = delete;

  // The first block's units, before any producer runs; published by stamp().
  void preset(std::uint32_t units) { units_.store(units); }
  // The first block's budget is published now (the colony's start).
  void stamp() { published_ns_.store(now_ns(), std::memory_order_relaxed); }
  // After a block, from the writer: `units` for the next block, published now.
  void refill(std::uint32_t units) APIARY_EXCLUDES(mutex_);

  // One unit, when one is left.
  bool try_take();
  // Until a unit is left or a stop: once a refill or a stop ends it when notified; when
  // polling, at least one pause, until then.
  void wait() APIARY_EXCLUDES(mutex_);
  // When the budget now being taken was published (core::steady_now_ns).
  std::int64_t published_ns() const { return published_ns_.load(std::memory_order_relaxed); }
  std::int64_t units_left() const { return units_.load(); }
  // After a stop: every waiter sees it.
  void wake() APIARY_EXCLUDES(mutex_);

 private:
  static std::int64_t now_ns();

  const std::atomic<bool>& stop_;
  const std::optional<std::uint32_t> poll_ms_;
  core::mutex mutex_;
  core::condition_variable cv_;
  std::atomic<std::int64_t> units_{0};         // refilled under mutex_
  std::atomic<std::int64_t> published_ns_{0};  // likewise
};

}  // namespace apiary::colony
