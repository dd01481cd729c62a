// comment_ring: the most recent comments (author, permlink), shared by all generator threads
// as targets for replies and votes. When full, a new comment overwrites the oldest.
// Thread-safe: one mutex guards everything; each call holds it for one copy of one entry,
// so contention stays small next to building and signing a transaction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "apiary/core/account_name.hpp"
#include "apiary/core/transaction.hpp"

namespace apiary::colony {

struct comment_ref {
  core::account_name author;
  std::string permlink;

  bool operator==(const comment_ref&) const = default;
};

class comment_ring {
 public:
  static constexpr std::size_t default_capacity = 10'000;

  explicit comment_ring(std::size_t capacity = default_capacity);
  comment_ring(const comment_ring&) = delete;
  comment_ring& operator=(const comment_ring&) = delete;

  // Overwrites the oldest entry once the ring is full.
  void push(comment_ref c);
  // Pushes every comment operation of tx: what a harness calls from its post-apply callback
  // so that replies and votes only target comments the chain has.
  void remember(const core::transaction& tx);
  // The entry in slot roll % size() (so a uniform roll picks uniformly); nullopt while the
  // ring is empty.
  std::optional<comment_ref> pick(std::uint64_t roll) const;

  std::size_t size() const;
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<comment_ref> entries_;  // guarded by mutex_
  std::size_t next_ = 0;              // guarded by mutex_: the slot the next push takes
};

}  // namespace apiary::colony
