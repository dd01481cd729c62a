// token_bucket: the colony's transactions-per-second limiter, one per producer thread (so
// no thread contends on it). Tokens accrue at `rate` per second up to `burst`; a transaction
// takes one. It starts with a single token, so a run never opens with a burst, and the burst
// cap bounds the catch-up after a thread was braked or overslept.
// Not thread-safe: one thread owns it. Time is passed in, so tests need no clock.
#pragma once

#include <chrono>

namespace apiary::colony {

class token_bucket {
 public:
  using clock = std::chrono::steady_clock;

  // rate > 0 tokens per second; burst >= 1.
  token_bucket(double rate, double burst, clock::time_point now);

  // Takes a token when one is there.
  bool try_take(clock::time_point now);
  // When the next token will be there (now, when one already is). Takes nothing.
  clock::time_point ready_at(clock::time_point now);

  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  void refill(clock::time_point now);

  double rate_;
  double burst_;
  double tokens_ = 1.0;
  clock::time_point last_;
};

}  // namespace apiary::colony
