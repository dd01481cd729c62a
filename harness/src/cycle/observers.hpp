// observers: what a cycle test does after each block, one block observer per job
// (queen/block_observer.hpp), in the order the run adds them to the writer. Each runs on the
// writer thread; each says below what other threads read of it and what it costs per block.
// The writer times them one by one (the report's writer.observers_us_per_block).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include <spdlog/logger.h>

#include "apiary/colony/colony.hpp"
#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/run_result.hpp"
#include "apiary/harness/cycle/thread_counters.hpp"
#include "apiary/queen/block_observer.hpp"
#include "apiary/queen/writer.hpp"
#include "cycle/interval_log.hpp"
#include "cycle/profile.hpp"
#include "cycle/progress.hpp"

namespace apiary::harness {

colony::head_info head_of(const core::chain& chain);

// The stop condition counted in blocks that the measured blocks so far meet: --blocks, or
// --transactions over the measured blocks; stop_reason::none when neither.
stop_reason limit_reached(const stop_conditions& s, std::uint32_t measured_blocks, std::uint64_t measured_transactions);

// The measured window: counts the blocks, takes the window's edges (usage, the writer's time
// split, the colony's counts) at the last warm-up block and at every measured block, and
// keeps the progress counters. With --profile it also opens the profile at the last warm-up
// block and closes it at the block that meets a stop limit (profile.hpp: one write to perf's
// control pipe each, a few microseconds, twice a run). Per block: a few relaxed stores, and
// for a measured block a getrusage and the colony's counters (a few hundred ns). The main
// thread reads the counters while the run goes, the edges and measured_blocks() after the
// writer is joined.
class window_counter final : public queen::block_observer {
 public:
  window_counter(const stop_conditions& stop, const queen::writer& w, const colony::colony& k,
                 progress_counters& counters, window_edge& start, window_edge& end, profiler* profile)
      : stop_(stop),
        warmup_(stop.warmup_blocks),
        writer_(w),
        colony_(k),
        counters_(counters),
        start_(start),
        end_(end),
        profile_(profile) {}
  std::string_view name() const override { return "window"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;
  std::uint32_t measured_blocks() const { return measured_blocks_; }

 private:
  void snapshot(window_edge& e, std::int64_t writer_ns);

  const stop_conditions stop_;
  const std::uint32_t warmup_;
  const queen::writer& writer_;
  const colony::colony& colony_;
  progress_counters& counters_;
  window_edge& start_;
  window_edge& end_;
  profiler* const profile_;  // --profile; else null
  std::uint32_t seen_ = 0;
  std::uint32_t measured_blocks_ = 0;
  std::uint64_t measured_transactions_ = 0;
};

// The debug line of every block (--log-level debug) and, every 30 s, the writer's time split
// as Hive's chain_plugin prints it. Per block: one level check, unless debug is on.
class block_log final : public queen::block_observer {
 public:
  block_log(spdlog::logger& log, const queen::writer& w) : log_(log), writer_(w) {}
  std::string_view name() const override { return "log"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;

 private:
  spdlog::logger& log_;
  const queen::writer& writer_;
  queen::writer_breakdown last_;  // at the last breakdown line
};

// One interval's blocks as the sampler closed it, for the main thread to write as a record.
struct interval_sample {
  interval_blocks blocks;
  queen::writer_breakdown breakdown;  // at its last block (at the close when it had none)
  core::state_census state;           // the same
  core::rc_status rc;
  double rc_low_share = -1;                   // sampled at its first block; < 0: not sampled
  std::vector<core::rc_archive> rc_archives;  // the chain archived in its blocks
  std::int64_t closed_ns = 0;                 // core::steady_now_ns() at the close
  bool checkpoint = false;                    // closed by --checkpoint-blocks, at its last block
};

// The blocks' side of the interval records (interval_log.hpp): adds each block to the open
// interval with the state's census and the RC pools (a few loads), and at an interval's first
// block the low-mana share (a walk over low_mana_samples accounts). With --checkpoint-blocks
// it closes the interval itself at every multiple of N blocks, so a checkpoint record holds
// exactly the blocks since the last one however late the main thread writes it, and wakes
// the main thread. The main thread closes the others (--interval) with take(). One mutex,
// taken once per block and by the main thread at each look. The chain's RC archives
// (rc_stats.hpp) made in the interval's blocks are copied into it, one copy per archive.
class interval_sampler final : public queen::block_observer {
 public:
  interval_sampler(const queen::writer& w, std::uint32_t checkpoint_blocks)
      : writer_(w), checkpoint_blocks_(checkpoint_blocks) {}
  std::string_view name() const override { return "interval"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;

  // Main thread: the intervals closed at checkpoints since the last call, in order, then,
  // with close_open, the open one too (however many blocks it has).
  std::vector<interval_sample> take(bool close_open);
  // Main thread: waits until a checkpoint closes an interval or `limit` passes.
  void wait(std::chrono::milliseconds limit);

 private:
  void close(std::int64_t now, bool checkpoint) APIARY_REQUIRES(mutex_);

  const queen::writer& writer_;
  const std::uint32_t checkpoint_blocks_;
  std::uint64_t applied_ = 0;      // writer thread
  std::size_t archives_seen_ = 0;  // writer thread: the chain's archives copied so far
  std::atomic<bool> sample_low_mana_{true};
  core::mutex mutex_;
  core::condition_variable woken_;
  interval_sample open_ APIARY_GUARDED_BY(mutex_);
  std::vector<interval_sample> closed_ APIARY_GUARDED_BY(mutex_);
};

// Tells the producers about the new head (their transactions' reference block and the
// per-block budget). Per block: the colony's on_block, a mutex and a few stores.
class colony_feed final : public queen::block_observer {
 public:
  explicit colony_feed(colony::colony& k) : colony_(k) {}
  std::string_view name() const override { return "colony head"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;

 private:
  colony::colony& colony_;
};

// The stop conditions counted in blocks (--blocks, --transactions over the measured blocks)
// and --fail-at-block's injected failure (a throw, which the writer reports as its error).
// The main thread reads reason() while the run goes. Per block: a few compares.
class stop_limits final : public queen::block_observer {
 public:
  explicit stop_limits(const run_config& c)
      : warmup_(c.stop.warmup_blocks), limits_(c.stop), fail_at_(c.fail_at_block) {}
  std::string_view name() const override { return "stop"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;
  stop_reason reason() const { return reason_.load(); }

 private:
  const std::uint32_t warmup_;
  const stop_conditions limits_;
  const std::uint32_t fail_at_;
  std::uint32_t seen_ = 0;
  std::uint64_t measured_transactions_ = 0;
  std::atomic<stop_reason> reason_{stop_reason::none};
};

// The per-thread counters' window edges (thread_counters.hpp), on the writer thread, where
// the window's edges are. Its first block waits until the main thread has opened the groups
// (microseconds after the writer starts; at most a second, else it counts nothing). From the
// last warm-up block on, per block: one read() of the writer's own group into a fixed buffer
// (a few µs), the window's end should this block be the last. At the last warm-up block, and
// at a measured block after which a block or transaction limit ends the run (it follows the
// stop observer), every thread's group and /proc switch counts (tens of µs a thread). The
// main thread reads the edges after the writer is joined, and end_taken() before it stops
// the producers.
class counter_sampler final : public queen::block_observer {
 public:
  counter_sampler(std::uint32_t warmup_blocks, const thread_counters& set, std::size_t writer, const stop_limits& stop)
      : warmup_(warmup_blocks),
        set_(set),
        writer_(writer),
        stop_(stop),
        start_(set.make_edge()),
        end_(set.make_edge()) {}
  std::string_view name() const override { return "counters"; }
  bool on_block(const queen::block_record& r, const core::chain& chain) override;

  // Main thread: waits until the writer has taken the end edge of every thread, at most
  // `limit`; whether it has.
  bool wait_end(std::chrono::milliseconds limit) const;
  // After join: the edges (taken: false when the run never reached them), the writer's last
  // reading, and whether the groups were open in time.
  const counter_edge& start() const { return start_; }
  const counter_edge& end() const { return end_; }
  const group_reading& writer_end() const { return writer_end_; }
  bool missed() const { return missed_; }

 private:
  const std::uint32_t warmup_;
  const thread_counters& set_;
  const std::size_t writer_;
  const stop_limits& stop_;
  std::uint32_t seen_ = 0;
  bool missed_ = false;  // the groups were not open by the first block
  counter_edge start_;
  counter_edge end_;
  group_reading writer_end_;
  std::atomic<bool> end_taken_{false};
};

}  // namespace apiary::harness
