// comment_ring: the most recent comments (author, permlink), shared by all generator threads
// as targets for replies and votes. When full, a new comment overwrites the oldest.
//
// Ageing: with a max_age (in blocks, 0 for none), each entry is stamped with the head block
// it was remembered at, and advance(head) forgets those max_age blocks old, so no reply or
// vote targets a comment that may have paid out and left the chain (the colony derives
// max_age from the chain's cashout window, comment_max_age).
// Thread-safe: one mutex guards everything; each call holds it for one copy of one entry,
// so contention stays small next to building and signing a transaction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apiary/core/base/mutex.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::colony {

struct comment_ref {
  core::account_name author;
  std::string permlink;

  bool operator==(const comment_ref&) const = default;
};

class comment_ring {
 public:
  static constexpr std::size_t default_capacity = 10'000;

  explicit comment_ring(std::size_t capacity = default_capacity, std::uint32_t max_age_blocks = 0);
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
  // The head moved to `block`: later entries are stamped with it, and entries stamped
  // max_age blocks before it or earlier are forgotten.
  void advance(std::uint32_t block);

  std::size_t size() const;
  std::size_t capacity() const { return capacity_; }

 private:
  struct entry {
    comment_ref ref;
    std::uint32_t block = 0;
  };
  const std::size_t capacity_;
  const std::uint32_t max_age_;
  mutable core::mutex mutex_;
  // A circular buffer of count_ entries from first_, oldest first.
  std::vector<entry> entries_ APIARY_GUARDED_BY(mutex_);
  std::size_t first_ APIARY_GUARDED_BY(mutex_) = 0;
  std::size_t count_ APIARY_GUARDED_BY(mutex_) = 0;
  std::uint32_t head_ APIARY_GUARDED_BY(mutex_) = 0;
};

}  // namespace apiary::colony
