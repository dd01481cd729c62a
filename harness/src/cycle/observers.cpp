#include "cycle/observers.hpp"

#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "apiary/core/base/clock.hpp"

namespace apiary::harness {

colony::head_info head_of(const core::chain& chain) {
  return {chain.head_block_num(), chain.head_block_id(), chain.head_block_time()};
}

stop_reason limit_reached(const stop_conditions& s, std::uint32_t measured_blocks,
                          std::uint64_t measured_transactions) {
  if (s.blocks != 0 && measured_blocks >= s.blocks) return stop_reason::blocks;
  if (s.transactions != 0 && measured_transactions >= s.transactions) return stop_reason::transactions;
  return stop_reason::none;
}

// ---- window_counter ----

void window_counter::snapshot(window_edge& e, std::int64_t writer_ns) {
  e.writer_ns = writer_ns;
  e.usage = read_usage();
  e.breakdown = writer_.breakdown_now();
  e.colony = colony_.stats();
}

bool window_counter::on_block(const queen::block_record& r, const core::chain&) {
  const std::int64_t now = core::steady_now_ns();
  ++seen_;
  if (seen_ <= warmup_) {
    if (seen_ == warmup_) {
      snapshot(start_, r.completed_ns);
      counters_.window_start_ns.store(now, std::memory_order_relaxed);
      if (profile_ != nullptr) profile_->open_window();
    }
    counters_.warmup_blocks.store(seen_, std::memory_order_relaxed);
  } else {
    measured_transactions_ += r.transactions;
    snapshot(end_, r.completed_ns);
    measured_blocks_ = seen_ - warmup_;
    // The last measured block (the stop observer ends the loop after it): the window ends.
    if (profile_ != nullptr && limit_reached(stop_, measured_blocks_, measured_transactions_) != stop_reason::none)
      profile_->close_window();
    counters_.measured_transactions.store(measured_transactions_, std::memory_order_relaxed);
    counters_.measured_blocks.store(measured_blocks_, std::memory_order_relaxed);
  }
  counters_.last_block_ns.store(now, std::memory_order_relaxed);
  return true;
}

// ---- block_log ----

namespace {

// Hive's chain_plugin prints the writer loop's time split every 30 s, over those 30 s.
constexpr std::int64_t breakdown_interval_ns = 30'000'000'000;

}  // namespace

void log_breakdown(spdlog::logger& log, const queen::writer_breakdown& d) {
  if (d.total_ns <= 0) return;
  const double total = static_cast<double>(d.total_ns) / 100.0;
  log.info(
      "waiting for work: {:.2f}%, waiting for locks: {:.2f}%, processing transactions: {:.2f}%, "
      "processing blocks: {:.2f}%, observing blocks: {:.2f}%, unknown: {:.2f}%",
      static_cast<double>(d.wait_work_ns) / total, static_cast<double>(d.wait_lock_ns) / total,
      static_cast<double>(d.tx_ns) / total, static_cast<double>(d.block_ns) / total,
      static_cast<double>(d.observe_ns) / total, static_cast<double>(d.unknown_ns()) / total);
}

bool block_log::on_block(const queen::block_record& r, const core::chain&) {
  log_.debug(
      "block #{}: {} transactions, {} bytes, cycle {:.3f} ms, produced {:.3f} ms, applied {:.3f} ms, "
      "{} pending after",
      r.num, r.transactions, r.size_bytes, r.cycle_ns < 0 ? 0.0 : static_cast<double>(r.cycle_ns) / 1e6,
      static_cast<double>(r.produced_ns) / 1e6, static_cast<double>(r.applied_ns) / 1e6, r.pending_after);
  if (r.completed_ns - last_.total_ns >= breakdown_interval_ns) {
    const queen::writer_breakdown now = writer_.breakdown_now();
    log_breakdown(log_, now - last_);
    last_ = now;
  }
  return true;
}

// ---- interval_sampler ----

bool interval_sampler::on_block(const queen::block_record& r, const core::chain& chain) {
  // The mana walk outside the lock: once per interval, at its first block.
  const double low = sample_low_mana_.exchange(false, std::memory_order_relaxed)
                         ? chain.rc_share_below(low_mana_percent, low_mana_samples)
                         : -1;
  ++applied_;
  const bool checkpoint = checkpoint_blocks_ != 0 && applied_ % checkpoint_blocks_ == 0;
  {
    core::lock_guard lock(mutex_);
    open_.blocks.add(r);
    open_.breakdown = writer_.breakdown_now();
    open_.state = chain.census();
    open_.rc = chain.rc();
    const std::vector<core::rc_archive>& archives = chain.rc_archives();
    for (; archives_seen_ < archives.size(); ++archives_seen_) open_.rc_archives.push_back(archives[archives_seen_]);
    if (low >= 0) open_.rc_low_share = low;
    if (checkpoint) close(core::steady_now_ns(), true);
  }
  if (checkpoint) woken_.notify_one();
  return true;
}

void interval_sampler::close(std::int64_t now, bool checkpoint) {
  open_.closed_ns = now;
  open_.checkpoint = checkpoint;
  closed_.push_back(open_);
  // The next interval starts from this one's last state; its blocks and low-mana share anew.
  open_.blocks = {};
  open_.rc_low_share = -1;
  open_.rc_archives.clear();
  open_.checkpoint = false;
  sample_low_mana_.store(true, std::memory_order_relaxed);
}

std::vector<interval_sample> interval_sampler::take(bool close_open) {
  std::vector<interval_sample> taken;
  core::lock_guard lock(mutex_);
  if (close_open) close(core::steady_now_ns(), false);
  taken.swap(closed_);
  return taken;
}

void interval_sampler::wait(std::chrono::milliseconds limit) {
  core::unique_lock lock(mutex_);
  woken_.wait_for(lock, limit, [this]() APIARY_REQUIRES(mutex_) { return !closed_.empty(); });
}

// ---- colony_feed ----

bool colony_feed::on_block(const queen::block_record& r, const core::chain& chain) {
  colony_.on_block(head_of(chain), {.transactions = r.transactions, .pending_after = r.pending_after});
  return true;
}

// ---- stop_limits ----

bool stop_limits::on_block(const queen::block_record& r, const core::chain&) {
  if (fail_at_ != 0 && r.num == fail_at_)
    throw std::runtime_error("injected failure at block " + std::to_string(r.num) + " (--fail-at-block)");
  if (++seen_ <= warmup_) return true;
  measured_transactions_ += r.transactions;
  const stop_reason why = limit_reached(limits_, seen_ - warmup_, measured_transactions_);
  if (why == stop_reason::none) return true;
  reason_.store(why);
  return false;
}

// ---- counter_sampler ----

bool counter_sampler::on_block(const queen::block_record&, const core::chain&) {
  if (seen_++ == 0) missed_ = !set_.wait_ready(std::chrono::seconds(1));
  if (missed_ || seen_ < warmup_) return true;
  if (seen_ == warmup_) {
    set_.read_edge(start_);
    return true;
  }
  set_.read_group(writer_, writer_end_);
  if (stop_.reason() != stop_reason::none && !end_taken_.load(std::memory_order_relaxed)) {
    set_.read_edge(end_);
    end_taken_.store(true, std::memory_order_release);
  }
  return true;
}

bool counter_sampler::wait_end(std::chrono::milliseconds limit) const {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!end_taken_.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace apiary::harness
