#include "apiary/colony/token_bucket.hpp"

#include <algorithm>
#include <cmath>

#include "apiary/core/base/check.hpp"

namespace apiary::colony {

namespace {
// Rounding slack, so a token due at ready_at() is there when asked for at that time.
constexpr double slack = 1e-9;
}  // namespace

token_bucket::token_bucket(double rate, double burst, clock::time_point now)
    : rate_(rate), burst_(burst), start_(now), last_(now) {
  APIARY_CHECK(rate > 0.0 && std::isfinite(rate));
  APIARY_CHECK(burst >= 1.0);
}

void token_bucket::refill(clock::time_point now) {
  if (now <= last_) return;  // a caller's older reading: time does not run backwards
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  last_ = now;
}

bool token_bucket::try_take(clock::time_point now) {
  refill(now);
  if (tokens_ + slack < 1.0) return false;
  tokens_ = std::max(0.0, tokens_ - 1.0);
  ++taken_;
  return true;
}

token_bucket::clock::time_point token_bucket::last_slot() const {
  if (taken_ == 0) return start_;
  const std::chrono::duration<double> offset(static_cast<double>(taken_ - 1) / rate_);
  return start_ + std::chrono::duration_cast<clock::duration>(offset);
}

token_bucket::clock::time_point token_bucket::ready_at(clock::time_point now) {
  refill(now);
  if (tokens_ + slack >= 1.0) return now;
  const std::chrono::duration<double> missing((1.0 - tokens_) / rate_);
  // Rounded up, so a wake-up at that time finds the token there.
  return last_ + std::chrono::ceil<clock::duration>(missing);
}

}  // namespace apiary::colony
