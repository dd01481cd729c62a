// The one clock every stage stamps with: steady nanoseconds, so the producers', the writer's
// and the harness's times compare directly.
#pragma once

#include <chrono>
#include <cstdint>

namespace apiary::core {

inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace apiary::core
