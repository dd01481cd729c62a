// start_gate: the colony's start line. Each producer thread, once prepared, counts itself
// ready and waits at the gate; start() waits until every thread is ready, then opens the gate
// and they all start producing together.
//
// Thread-safe: one mutex guards the count and the open flag. A stop (the colony's flag,
// passed in) ends every wait; wake() makes a waiter look at it (the mutex is taken before
// notifying, so a waiter between its check and its wait cannot miss it).
// Invariants: the count only grows; once open, the gate stays open.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "apiary/core/base/mutex.hpp"

namespace apiary::colony {

class start_gate {
 public:
  explicit start_gate(const std::atomic<bool>& stop) : stop_(stop) {}
  start_gate(const start_gate&) = delete;
  start_gate& operator=(const start_gate&) = delete;

  // A producer thread: counts itself ready, then waits until the gate opens or a stop.
  void arrive_and_wait() APIARY_EXCLUDES(mutex_);
  // Waits until `threads` producers have arrived, or a stop.
  void wait_for(std::size_t threads) APIARY_EXCLUDES(mutex_);
  // Lets every producer go, those waiting and those still to arrive.
  void open() APIARY_EXCLUDES(mutex_);
  // After a stop: every waiter sees it.
  void wake() APIARY_EXCLUDES(mutex_);

 private:
  const std::atomic<bool>& stop_;
  core::mutex mutex_;
  core::condition_variable cv_;
  std::uint32_t ready_ APIARY_GUARDED_BY(mutex_) = 0;
  bool open_ APIARY_GUARDED_BY(mutex_) = false;
};

}  // namespace apiary::colony
