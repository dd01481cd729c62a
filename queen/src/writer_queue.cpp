#include "apiary/queen/writer_queue.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "apiary/core/base/check.hpp"
#include "apiary/core/base/clock.hpp"

namespace apiary::queen {

using core::steady_now_ns;

writer_queue::writer_queue(queue_policy policy, std::size_t capacity, std::int64_t gather_ns)
    : policy_(policy), capacity_(capacity), gather_ns_(gather_ns) {
  APIARY_CHECK(policy != queue_policy::bounded || capacity > 0);
  APIARY_CHECK(gather_ns >= 0);
}

bool writer_queue::submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent intent) {
  const std::int64_t submitted = steady_now_ns();
  if (intent.intended_ns == 0) intent.intended_ns = submitted;
  core::unique_lock lock(mutex_);
  if (policy_ == queue_policy::bounded && items_.size() >= capacity_ && !closed_) {
    ++full_waits_;
    not_full_.wait(lock, [&]() APIARY_REQUIRES(mutex_) { return items_.size() < capacity_ || closed_; });
  }
  if (closed_) return false;
  items_.push_back({std::move(tx), done, intent, submitted});
  high_water_ = std::max(high_water_, items_.size());
  const bool was_empty = items_.size() == 1;
  lock.unlock();
  // Only the first item needs a wake-up: the writer takes everything queued at once.
  if (was_empty) not_empty_.notify_one();
  return true;
}

void writer_queue::request_block() {
  {
    core::lock_guard lock(mutex_);
    ++block_requests_;
  }
  not_empty_.notify_one();
}

void writer_queue::wake() {
  {
    core::lock_guard lock(mutex_);
    woken_ = true;
  }
  not_empty_.notify_one();
}

void writer_queue::close() {
  {
    core::lock_guard lock(mutex_);
    closed_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

bool writer_queue::closed() const {
  core::lock_guard lock(mutex_);
  return closed_;
}

void writer_queue::take(queue_batch& batch, queue_wait& wait) {
  APIARY_CHECK(batch.txs.empty());
  const std::int64_t t0 = steady_now_ns();
  core::unique_lock lock(mutex_);
  const std::int64_t t1 = steady_now_ns();
  wait.lock_ns += t1 - t0;
  if (items_.empty() && block_requests_ == 0 && !woken_ && !closed_) {
    not_empty_.wait(
        lock, [&]() APIARY_REQUIRES(mutex_) { return !items_.empty() || block_requests_ != 0 || woken_ || closed_; });
    if (gather_ns_ > 0)
      not_empty_.wait_for(lock, std::chrono::nanoseconds(gather_ns_),
                          [&]() APIARY_REQUIRES(mutex_) { return block_requests_ != 0 || woken_ || closed_; });
    wait.work_ns += steady_now_ns() - t1;
  }
  woken_ = false;
  batch.txs.swap(items_);
  batch.block_requests = std::exchange(block_requests_, 0);
  batch.closed = closed_;
  lock.unlock();
  if (policy_ == queue_policy::bounded) not_full_.notify_all();
}

std::vector<queued_tx> writer_queue::drain() {
  std::vector<queued_tx> rest;
  {
    core::lock_guard lock(mutex_);
    closed_ = true;
    rest.swap(items_);
    block_requests_ = 0;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
  return rest;
}

std::size_t writer_queue::size() const {
  core::lock_guard lock(mutex_);
  return items_.size();
}

std::size_t writer_queue::high_water() const {
  core::lock_guard lock(mutex_);
  return high_water_;
}

std::uint64_t writer_queue::full_waits() const {
  core::lock_guard lock(mutex_);
  return full_waits_;
}

}  // namespace apiary::queen
