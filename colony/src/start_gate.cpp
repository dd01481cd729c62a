#include "apiary/colony/start_gate.hpp"

namespace apiary::colony {

void start_gate::arrive_and_wait() {
  {
    core::lock_guard lock(mutex_);
    ++ready_;
  }
  cv_.notify_all();
  core::unique_lock lock(mutex_);
  cv_.wait(lock, [this]() APIARY_REQUIRES(mutex_) { return open_ || stop_.load(); });
}

void start_gate::wait_for(std::size_t threads) {
  core::unique_lock lock(mutex_);
  cv_.wait(lock, [this, threads]() APIARY_REQUIRES(mutex_) { return ready_ == threads || stop_.load(); });
}

void start_gate::open() {
  {
    core::lock_guard lock(mutex_);
    open_ = true;
  }
  cv_.notify_all();
}

void start_gate::wake() {
  { core::lock_guard lock(mutex_); }
  cv_.notify_all();
}

}  // namespace apiary::colony
