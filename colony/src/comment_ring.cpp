#include "apiary/colony/comment_ring.hpp"

#include <utility>
#include <variant>

#include "apiary/core/base/check.hpp"

namespace apiary::colony {

comment_ring::comment_ring(std::size_t capacity, std::uint32_t max_age_blocks)
    : capacity_(capacity), max_age_(max_age_blocks) {
  APIARY_CHECK(capacity > 0);
  entries_.resize(capacity);
}

void comment_ring::push(comment_ref c) {
  core::lock_guard lock(mutex_);
  if (count_ < capacity_) {
    entries_[(first_ + count_) % capacity_] = {std::move(c), head_};
    ++count_;
  } else {
    entries_[first_] = {std::move(c), head_};
    first_ = first_ + 1 == capacity_ ? 0 : first_ + 1;
  }
}

void comment_ring::remember(const core::transaction& tx) {
  for (const auto& op : tx.operations)
    if (const auto* c = std::get_if<core::comment_operation>(&op)) push({c->author, c->permlink});
}

std::optional<comment_ref> comment_ring::pick(std::uint64_t roll) const {
  core::lock_guard lock(mutex_);
  if (count_ == 0) return std::nullopt;
  return entries_[(first_ + roll % count_) % capacity_].ref;
}

void comment_ring::advance(std::uint32_t block) {
  core::lock_guard lock(mutex_);
  head_ = block;
  if (max_age_ == 0) return;
  while (count_ > 0 && entries_[first_].block + max_age_ <= block) {
    entries_[first_].ref = {};
    first_ = first_ + 1 == capacity_ ? 0 : first_ + 1;
    --count_;
  }
}

std::size_t comment_ring::size() const {
  core::lock_guard lock(mutex_);
  return count_;
}

}  // namespace apiary::colony
