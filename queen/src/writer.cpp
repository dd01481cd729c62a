#include "apiary/queen/writer.hpp"

#include <chrono>

#include "apiary/core/check.hpp"
#include "apiary/core/clock.hpp"

namespace apiary::queen {

using core::steady_now_ns;

writer::writer(core::chain& chain, writer_queue& queue, writer_config config, block_callback on_block)
    : chain_(chain), queue_(queue), config_(config), on_block_(std::move(on_block)) {}

writer::~writer() {
  request_stop();
  join();
}

void writer::start() {
  APIARY_CHECK(!ran_);
  ran_ = true;
  thread_ = std::thread([this] { run(); });
}

void writer::run_here() {
  APIARY_CHECK(!ran_);
  ran_ = true;
  run();
}

void writer::request_stop() {
  stop_.store(true, std::memory_order_relaxed);
  // Wakes the writer if it waits for work; it completes what it leaves unpushed.
  queue_.request_block();
}

void writer::join() {
  if (thread_.joinable()) {
    thread_.join();
  } else if (!ran_) {
    // No writer ever ran: this thread is the queue's only consumer, so it ends the run.
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

writer_breakdown writer::breakdown_now() const {
  writer_breakdown b = breakdown_;
  b.total_ns = steady_now_ns() - start_ns_;
  return b;
}

void writer::run() noexcept {
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
  // The rejections since the last block.
  if (outbox_ != nullptr) outbox_->publish(settled_);
  for (std::size_t i = batch_done_; i < batch_.txs.size(); ++i) complete_unpushed(batch_.txs[i]);
  batch_.txs.clear();
  batch_done_ = 0;
  // Closes the queue: whatever a producer submits from now on is refused, not queued.
  for (const queued_tx& item : queue_.drain()) complete_unpushed(item);
}

void writer::settle_block(const core::full_block& block, std::int64_t applied_ns) {
  // The block's transactions are the first pending ones, in order.
  std::size_t k = 0;
  for (const core::full_transaction_ptr& tx : block.transactions) {
    if (k == pending_timings_.size() || pending_timings_[k].id != tx->id()) continue;
    tx_timing& t = pending_timings_[k++];
    t.settled_ns = applied_ns;
    settled_.push_back(t);
  }
  // What is still pending is what was left over, in order, less what no longer applied.
  const std::vector<core::full_transaction_ptr>& pending = chain_.pending();
  std::size_t kept = 0;
  for (std::size_t i = k; i < pending_timings_.size(); ++i)
    if (kept < pending.size() && pending[kept]->id() == pending_timings_[i].id)
      pending_timings_[kept++] = pending_timings_[i];
  pending_timings_.resize(kept);
  outbox_->publish(settled_);
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
  while (!stop_.load(std::memory_order_relaxed)) {
    wait = {};
    queue_.take(batch_, wait);
    batch_done_ = 0;
    breakdown_.wait_lock_ns += wait.lock_ns;
    breakdown_.wait_work_ns += wait.work_ns;
    if (batch_.block_requests != 0 && !stop_.load(std::memory_order_relaxed)) produce_block();

    for (queued_tx& item : batch_.txs) {
      if (stop_.load(std::memory_order_relaxed)) break;
      // One that does not fit in the block as it stands will be left out of it: the chain
      // keeps it undoable on its own, so the block can keep the rest's state.
      const bool fits = pending_bytes_ + overhead + item.tx->packed_size() <= config_.block_size;
      const std::int64_t t0 = steady_now_ns();
      const core::reject outcome = chain_.push_transaction(item.tx, !fits);
      const std::int64_t t1 = steady_now_ns();
      // Pushed: completed below, even if producing a block then throws. A push that threw
      // left it to finish().
      ++batch_done_;
      if (outbox_ != nullptr) {
        tx_timing t{item.intent.intended_ns, item.submitted_ns, t1, t1, item.tx->id(), item.intent.kind, outcome};
        (outcome == core::reject::none ? pending_timings_ : settled_).push_back(t);
      }
      if (outcome == core::reject::none) {
        breakdown_.tx_ns += t1 - t0;
        ++breakdown_.transactions_accepted;
        const std::uint32_t size = item.tx->packed_size();
        pending_bytes_ += size;
        ++pending_count_;
        item.done(*item.tx, outcome);
        item.tx.reset();  // the pending list holds it now; the block's retirement frees it
        const std::uint64_t room =
            config_.block_size > pending_bytes_ + overhead ? config_.block_size - pending_bytes_ - overhead : 0;
        if (room <= size || (config_.block_transactions != 0 && pending_count_ >= config_.block_transactions))
          produce_block();
      } else {
        ++breakdown_.transactions_rejected;
        item.done(*item.tx, outcome);
      }
    }
    // Stopped inside the batch: finish() completes the rest.
    if (batch_done_ != batch_.txs.size()) return;
    batch_.txs.clear();
    if (batch_.closed) return;
  }
}

void writer::produce_block() {
  const std::int64_t t0 = steady_now_ns();
  core::full_block block = chain_.generate_block(config_.block_size, config_.block_transactions);
  const std::int64_t t1 = steady_now_ns();
  const core::block_result result = chain_.apply_block(block);
  const std::int64_t t2 = steady_now_ns();
  breakdown_.block_ns += t2 - t0;

  block_record r;
  r.num = block.header.block_num();
  r.transactions = result.applied;
  r.size_bytes = static_cast<std::uint32_t>(block.packed_size());
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
  if (outbox_ != nullptr) {
    settle_block(block, t2);
    outbox_->retire(std::move(block.transactions));
  }
  if (on_block_ && !on_block_(r, chain_)) stop_.store(true, std::memory_order_relaxed);
}

}  // namespace apiary::queen
