// The live progress line: a block observer on the writer thread (window_counter,
// observers.hpp) stores a few counters (relaxed atomic stores, nothing else); the main
// thread reads them and redraws one line on stderr:
//   warm-up 3/5 | block 120/400 | 7,301 tx/block | 52,114 tx/s | cycle avg 140.1 ms | ETA 0:39
// On a terminal the line is redrawn in place; forced on elsewhere, a line per update.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "apiary/harness/config/run_config.hpp"

namespace apiary::harness {

struct progress_counters {
  std::atomic<std::uint32_t> warmup_blocks{0};    // warm-up blocks completed
  std::atomic<std::uint32_t> measured_blocks{0};  // measured blocks completed
  std::atomic<std::uint64_t> measured_transactions{0};
  std::atomic<std::int64_t> window_start_ns{-1};  // core::steady_now_ns() at the start of measurement
  std::atomic<std::int64_t> last_block_ns{-1};    // core::steady_now_ns() at the last block
};

class progress_line {
 public:
  // enabled: draw at all; in_place: a terminal (redraw with \r).
  progress_line(const run_config& c, bool enabled, bool in_place);
  ~progress_line();
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  // A phase before the blocks ("genesis: 100,000 accounts").
  void phase(const std::string& text);
  // Redraws from the counters; rate-limited to a few times a second.
  void update(const progress_counters& p, std::int64_t now_ns);
  // Erases the line (before the summary is printed).
  void finish();

 private:
  void draw(const std::string& text);

  const run_config& config_;
  bool enabled_;
  bool in_place_;
  bool drawn_ = false;
  std::int64_t last_draw_ns_ = 0;
};

}  // namespace apiary::harness
