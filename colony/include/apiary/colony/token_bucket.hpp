// token_bucket: the colony's transactions-per-second limiter, one per producer thread (so
// no thread contends on it). Tokens accrue at `rate` per second up to `burst`; a transaction
// takes one. It starts with a single token, so a run never opens with a burst, and the burst
// cap bounds the catch-up after a thread was braked or overslept.
// Not thread-safe: one thread owns it. Time is passed in, so tests need no clock.
//
// The schedule: token k (from 0) is due at start + k / rate. A transaction's intended time
// is its token's slot on that schedule (last_slot()), not when the thread got to take it:
// tokens the burst cap dropped while the thread was braked or late are not forgiven, so a
// producer that falls behind shows in the latency it causes instead of hiding it. A token
// is never taken before its slot, since tokens accrue at `rate` from a single one at start.
#pragma once

#include <chrono>
#include <cstdint>

namespace apiary::colony {

class token_bucket {
 public:
  using clock = std::chrono::steady_clock;

  // rate > 0 tokens per second; burst >= 1.
  token_bucket(double rate, double burst, clock::time_point now);

  // Takes a token when one is there.
  bool try_take(clock::time_point now);
  // The slot of the last token taken (the start before any was).
  clock::time_point last_slot() const;
  // When the next token will be there (now, when one already is). Takes nothing.
  clock::time_point ready_at(clock::time_point now);

  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  void refill(clock::time_point now);

  double rate_;
  double burst_;
  double tokens_ = 1.0;
  clock::time_point start_;
  clock::time_point last_;
  std::uint64_t taken_ = 0;
};

}  // namespace apiary::colony
