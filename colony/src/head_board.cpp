#include "apiary/colony/head_board.hpp"

namespace apiary::colony {

std::uint32_t head_board::post(const head_info& head, std::optional<std::uint32_t> in_flight_limit) {
  core::lock_guard lock(mutex_);
  head_ = head;
  if (in_flight_limit) limit_ = *in_flight_limit;
  seq_.fetch_add(1, std::memory_order_release);
  return limit_;
}

std::optional<posted_head> head_board::read_if_moved(std::uint64_t& seen) const {
  if (seq_.load(std::memory_order_acquire) == seen) return std::nullopt;
  core::lock_guard lock(mutex_);
  seen = seq_.load(std::memory_order_relaxed);
  return posted_head{head_, limit_};
}

std::uint32_t head_board::in_flight_limit() const {
  core::lock_guard lock(mutex_);
  return limit_;
}

}  // namespace apiary::colony
