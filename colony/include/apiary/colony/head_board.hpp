// head_board: the head block the colony's transactions build on, and the in-flight limit in
// force with it. The writer posts each new head after its block (post); a producer thread
// copies head and limit when they moved since its last copy (read_if_moved), which it checks
// first without the mutex (a sequence number), so it takes the mutex once a block, not once a
// transaction.
//
// Thread-safe: one mutex guards the head and the limit; the sequence number is atomic, moved
// under the mutex with them, with release, so a producer that sees it move finds the new head.
// Invariant: head().block_num is the number head().id encodes (the colony checks each head).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "apiary/core/base/mutex.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::colony {

// The head block the colony's transactions build on. block_num must be the number the id
// encodes (core::block_num_from_id).
struct head_info {
  std::uint32_t block_num = 0;
  core::block_id id;
  core::time_point_sec time;
};

// What a producer copies from the board.
struct posted_head {
  head_info head;
  std::uint32_t in_flight_limit = 0;
};

class head_board {
 public:
  head_board(const head_info& first, std::uint32_t in_flight_limit) : head_(first), limit_(in_flight_limit) {}
  head_board(const head_board&) = delete;
  head_board& operator=(const head_board&) = delete;

  // Posts `head`, and with it a new in-flight limit when one is given; returns the limit in
  // force with the head.
  std::uint32_t post(const head_info& head, std::optional<std::uint32_t> in_flight_limit) APIARY_EXCLUDES(mutex_);
  // Head and limit when either was posted since `seen` (which it then moves on); none when not.
  // A new reader starts from seen = ~0, which any board has moved from.
  std::optional<posted_head> read_if_moved(std::uint64_t& seen) const APIARY_EXCLUDES(mutex_);
  std::uint32_t in_flight_limit() const APIARY_EXCLUDES(mutex_);

 private:
  mutable core::mutex mutex_;
  head_info head_ APIARY_GUARDED_BY(mutex_);
  std::uint32_t limit_ APIARY_GUARDED_BY(mutex_) = 0;
  std::atomic<std::uint64_t> seq_{0};  // moved under mutex_
};

}  // namespace apiary::colony
