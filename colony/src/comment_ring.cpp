#include "apiary/colony/comment_ring.hpp"

#include <utility>
#include <variant>

#include "apiary/core/check.hpp"

namespace apiary::colony {

comment_ring::comment_ring(std::size_t capacity) : capacity_(capacity) {
  APIARY_CHECK(capacity > 0);
  entries_.reserve(capacity);
}

void comment_ring::push(comment_ref c) {
  std::lock_guard lock(mutex_);
  if (entries_.size() < capacity_) {
    entries_.push_back(std::move(c));
  } else {
    entries_[next_] = std::move(c);
  }
  next_ = next_ + 1 == capacity_ ? 0 : next_ + 1;
}

void comment_ring::remember(const core::transaction& tx) {
  for (const auto& op : tx.operations)
    if (const auto* c = std::get_if<core::comment_operation>(&op)) push({c->author, c->permlink});
}

std::optional<comment_ref> comment_ring::pick(std::uint64_t roll) const {
  std::lock_guard lock(mutex_);
  if (entries_.empty()) return std::nullopt;
  return entries_[roll % entries_.size()];
}

std::size_t comment_ring::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace apiary::colony
