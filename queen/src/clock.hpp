// The writer's clock: steady nanoseconds, for the breakdown and the block records.
#pragma once

#include <chrono>
#include <cstdint>

namespace apiary::queen::detail {

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace apiary::queen::detail
