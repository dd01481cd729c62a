#include "apiary/colony/shared_budget.hpp"

#include "apiary/core/base/clock.hpp"
#include "pause.hpp"

namespace apiary::colony {

std::int64_t shared_budget::now_ns() { return core::steady_now_ns(); }

void shared_budget::refill(std::uint32_t units) {
  {
    core::lock_guard lock(mutex_);
    published_ns_.store(now_ns(), std::memory_order_relaxed);
    units_.store(units);
  }
  if (!poll_ms_) cv_.notify_all();  // pollers find it themselves
}

bool shared_budget::try_take() {
  std::int64_t left = units_.load(std::memory_order_relaxed);
  while (left > 0)
    // Acquire: a unit of a new block's budget comes with that block's head (the writer
    // posts the head before the refill).
    if (units_.compare_exchange_weak(left, left - 1, std::memory_order_acquire, std::memory_order_relaxed)) return true;
  return false;
}

void shared_budget::wait() {
  if (poll_ms_) {
    do detail::pause_for_work(mutex_, cv_, *poll_ms_, stop_);
    while (units_.load() <= 0 && !stop_.load());
    return;
  }
  core::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return units_.load() > 0 || stop_.load(); });
}

void shared_budget::wake() {
  { core::lock_guard lock(mutex_); }
  cv_.notify_all();
}

}  // namespace apiary::colony
