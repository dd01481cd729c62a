// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), for the colony's CPU counters
// (colony.cpp, key_cache.cpp).
#pragma once

#include <ctime>

#include <cstdint>

namespace apiary::colony::detail {

inline std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace apiary::colony::detail
