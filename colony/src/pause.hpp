// One pause of a producer that polls for work (colony_config::wait_for_work_ms, Hive's way):
// a yield at 0 ms, otherwise a sleep of that long on `cv` that only a stop ends early (nobody
// else knows a poller waits: any other wake-up sleeps on until the time is up). Used by
// colony.cpp's in-flight brake and shared_budget.cpp's wait for the next block.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "apiary/core/base/mutex.hpp"

namespace apiary::colony::detail {

inline void pause_for_work(core::mutex& m, core::condition_variable& cv, std::uint32_t ms,
                           const std::atomic<bool>& stop) {
  if (ms == 0) {
    std::this_thread::yield();
    return;
  }
  core::unique_lock lock(m);
  cv.wait_for(lock, std::chrono::milliseconds(ms), [&stop] { return stop.load(); });
}

}  // namespace apiary::colony::detail
