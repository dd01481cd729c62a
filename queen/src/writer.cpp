#include "apiary/queen/writer.hpp"

#include <unistd.h>

#include <chrono>

#include "apiary/core/base/check.hpp"
#include "apiary/core/base/clock.hpp"
#include "apiary/core/base/thread_name.hpp"

namespace apiary::queen {

using core::steady_now_ns;

namespace {

// How many transactions ahead of its push the writer starts loading one.
constexpr std::size_t prefetch_ahead = 5;
static_assert(prefetch_ahead > core::chain::prefetch_stages,
              "each stage a transaction apart, the first after the object");

// A producer built the transaction on another core, so the writer's first read of it misses
// every cache: start loading the object (and the shared_ptr's count just before it) now, so
// the misses overlap with the pushes before it instead of stalling its own.
void prefetch(const core::full_transaction& tx) {
  const auto* p = reinterpret_cast<const char*>(&tx);
  __builtin_prefetch(p - sizeof(void*) * 2);
  for (std::size_t at = 0; at < sizeof(core::full_transaction); at += 64) __builtin_prefetch(p + at);
}

}  // namespace

writer::writer(core::chain& chain, writer_queue& queue, writer_config config)
    : chain_(chain), queue_(queue), config_(config) {
  outcomes_.reserve(burst_limit);
}

writer::~writer() {
  request_stop();
  join();
}

void writer::start() {
  APIARY_CHECK(!ran_);
  ran_ = true;
  thread_ = std::thread([this] { serve(); });
  core::name_thread(thread_, "writer");  // a profile's name for it (apiary run --profile)
}

void writer::serve_here() {
  APIARY_CHECK(!ran_);
  ran_ = true;
  serve();
}

void writer::request_stop() {
  stop_.store(true, std::memory_order_relaxed);
  // Wakes the writer if it waits for work; it completes what it leaves unpushed.
  queue_.wake();
}

void writer::join() {
  if (thread_.joinable()) {
    thread_.join();
  } else if (!ran_) {
    // No writer ever served: this thread is the queue's only consumer, so it ends it.
    ran_ = true;
    finish();
  }
}

std::string writer::error_message() const {
  if (!error_) return {};
  try {
    std::rethrow_exception(error_);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

std::vector<observer_cost> writer::observer_costs() const {
  std::vector<observer_cost> costs;
  costs.reserve(observers_.size() + 1);
  if (outbox_ != nullptr) costs.push_back({"timing outbox", outbox_ns_});
  for (const observer_entry& e : observers_) costs.push_back(e.cost);
  return costs;
}

writer_breakdown writer::breakdown_now() const {
  writer_breakdown b = breakdown_;
  const std::int64_t now = steady_now_ns();
  b.total_ns = now - start_ns_;
  if (publish_start_ns_ != 0) b.observe_ns += now - publish_start_ns_;
  return b;
}

void writer::serve() noexcept {
  thread_id_.store(static_cast<int>(::gettid()), std::memory_order_release);
  start_ns_ = steady_now_ns();
  try {
    loop();
  } catch (...) {
    error_ = std::current_exception();
  }
  breakdown_.total_ns = steady_now_ns() - start_ns_;
  // Producers must not wait for a writer that is gone, nor for completions it owes them.
  finish();
}

void writer::finish() noexcept {
  for (std::size_t i = batch_done_; i < batch_.txs.size(); ++i) complete_unpushed(batch_.txs[i]);
  end_batch();
  // Closes the queue: whatever a producer submits from now on is refused, not queued.
  for (const queued_tx& item : queue_.drain()) complete_unpushed(item);
}

void writer::end_batch() noexcept {
  if (outbox_ != nullptr && !outcomes_.empty()) {
    pushes_handed_ += outcomes_.size();
    outbox_->hand_over(batch_.txs, outcomes_);
  }
  batch_.txs.clear();
  outcomes_.clear();
  batch_done_ = 0;
}

void writer::complete_unpushed(const queued_tx& item) noexcept {
  ++breakdown_.transactions_shutdown;
  item.done(*item.tx, core::reject::shutdown);
}

std::uint32_t writer::pending_bytes() const {
  std::uint64_t n = 0;
  for (const auto& tx : chain_.pending()) n += tx->packed_size();
  return static_cast<std::uint32_t>(n);
}

void writer::loop() {
  // A block's bytes beyond its transactions: the header (with this chain's witness name) and
  // the transaction count's varint at its widest.
  core::signed_block_header header;
  header.witness = core::account_name(chain_.options().witness);
  const std::uint64_t overhead = core::packed_size(header) + 5;
  queue_wait wait;
  pending_bytes_ = pending_bytes();
  pending_count_ = static_cast<std::uint32_t>(chain_.pending_count());
  if (config_.clock) {
    slot_left_ = config_.clock->count(chain_.head_block_num() + 1);
    if (slot_left_ == 0) produce_blocks();
  }
  while (!stop_.load(std::memory_order_relaxed)) {
    wait = {};
    queue_.take(batch_, wait);
    breakdown_.wait_lock_ns += wait.lock_ns;
    breakdown_.wait_work_ns += wait.work_ns;
    if (batch_.block_requests != 0 && !stop_.load(std::memory_order_relaxed)) produce_blocks();
    while (batch_done_ < batch_.txs.size() && !stop_.load(std::memory_order_relaxed)) {
      const bool block_due = push_burst(overhead);
      complete_burst();
      if (block_due) produce_blocks();
    }
    // Stopped inside the batch: finish() completes the rest.
    if (batch_done_ != batch_.txs.size()) return;
    end_batch();
    if (batch_.closed) return;
  }
}

bool writer::push_burst(std::uint64_t overhead) {
  const std::size_t end = std::min(batch_.txs.size(), batch_done_ + burst_limit);
  const bool by_clock = config_.clock.has_value();
  bool block_due = false;
  try {
    std::int64_t t = steady_now_ns();
    for (std::size_t i = batch_done_; i < end && !block_due && !stop_.load(std::memory_order_relaxed); ++i) {
      if (i + prefetch_ahead < batch_.txs.size()) prefetch(*batch_.txs[i + prefetch_ahead].tx);
      // Then the chain's lookups, in stages: the last one a transaction before its push.
      for (int stage = 1; stage <= core::chain::prefetch_stages; ++stage) {
        const std::size_t at = i + prefetch_ahead - static_cast<std::size_t>(stage);
        if (at < batch_.txs.size()) chain_.prefetch_push(*batch_.txs[at].tx, stage);
      }
      const queued_tx& item = batch_.txs[i];
      const std::uint32_t size = item.tx->packed_size();
      // One that does not fit in the block as it stands will be left out of it: the chain
      // keeps it undoable on its own, so the block can keep the rest's state.
      const bool fits = pending_bytes_ + overhead + size <= config_.block_size;
      const core::reject outcome = chain_.push_transaction(item.tx, !fits);
      const std::int64_t pushed = steady_now_ns();
      outcomes_.push_back({outcome, pushed});
      // On the chain's clock the slot's block is due once its last transaction is answered.
      if (by_clock) block_due = --slot_left_ == 0;
      if (outcome == core::reject::none) {
        // The pushes follow each other: each one's time runs from the end of the last.
        breakdown_.tx_ns += pushed - t;
        pending_bytes_ += size;
        ++pending_count_;
        const std::uint64_t room =
            config_.block_size > pending_bytes_ + overhead ? config_.block_size - pending_bytes_ - overhead : 0;
        if (!by_clock)
          block_due = room <= size || (config_.block_transactions != 0 && pending_count_ >= config_.block_transactions);
      }
      t = pushed;
    }
  } catch (...) {
    complete_burst();  // the ones pushed before the throw; finish() completes the rest
    throw;
  }
  return block_due;
}

void writer::complete_burst() noexcept {
  for (; batch_done_ < outcomes_.size(); ++batch_done_) {
    const queued_tx& item = batch_.txs[batch_done_];
    const core::reject outcome = outcomes_[batch_done_].outcome;
    item.done(*item.tx, outcome);
    ++(outcome == core::reject::none ? breakdown_.transactions_accepted : breakdown_.transactions_rejected);
  }
}

void writer::produce_blocks() {
  do produce_block();
  while (slot_left_ == 0 && config_.clock && !stop_.load(std::memory_order_relaxed));
}

void writer::produce_block() {
  const std::int64_t t0 = steady_now_ns();
  std::size_t size = 0;
  core::full_block block = chain_.generate_block(config_.block_size, config_.block_transactions, &size);
  const std::int64_t t1 = steady_now_ns();
  const core::block_result result = chain_.apply_block(block);
  const std::int64_t t2 = steady_now_ns();
  breakdown_.block_ns += t2 - t0;

  block_record r;
  r.num = block.header.block_num();
  r.transactions = result.applied;
  r.size_bytes = static_cast<std::uint32_t>(size);
  r.pending_after = static_cast<std::uint32_t>(chain_.pending_count());
  r.dropped = result.dropped;
  r.produced_ns = t1 - t0;
  r.applied_ns = t2 - t1;
  r.processing_ns = t2 - t0;
  r.cycle_ns = last_block_ns_ < 0 ? -1 : t2 - last_block_ns_;
  r.completed_ns = t2 - start_ns_;
  r.id = chain_.head_block_id();
  r.previous = block.header.previous;
  last_block_ns_ = t2;
  blocks_.push_back(r);

  pending_bytes_ = pending_bytes();
  pending_count_ = r.pending_after;
  if (config_.clock) slot_left_ = config_.clock->count(r.num + 1);
  publish(r, std::move(block), t2);
}

void writer::publish(const block_record& r, core::full_block&& block, std::int64_t applied_ns) {
  const std::int64_t t0 = steady_now_ns();
  publish_start_ns_ = t0;
  if (outbox_ != nullptr)
    outbox_->hand_over_block(
        pushes_handed_ + outcomes_.size(),
        {r.num, r.id, block.header.previous, block.header.timestamp, applied_ns, std::move(block.transactions)},
        chain_.pending());
  std::int64_t t = t0;
  if (outbox_ != nullptr) {
    t = steady_now_ns();
    outbox_ns_ += t - t0;
  }
  bool go_on = true;
  for (observer_entry& e : observers_) {
    go_on = e.observer->on_block(r, chain_) && go_on;
    const std::int64_t done = steady_now_ns();
    e.cost.ns += done - t;
    t = done;
  }
  breakdown_.observe_ns += t - t0;
  publish_start_ns_ = 0;
  if (!go_on) stop_.store(true, std::memory_order_relaxed);
}

}  // namespace apiary::queen
