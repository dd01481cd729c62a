#include "apiary/queen/tx_timing.hpp"

#include <unordered_set>
#include <utility>

#include "apiary/core/base/check.hpp"

namespace apiary::queen {

void timing_outbox::hand_over(std::vector<queued_tx>& txs, std::vector<push_outcome>& outcomes) {
  APIARY_CHECK(outcomes.size() <= txs.size());
  core::lock_guard lock(mutex_);
  batches_.push_back({std::move(txs), std::move(outcomes)});
  // A moved-from vector is empty; give it the capacity of one the consumer emptied.
  if (!spare_.empty()) {
    txs = std::move(spare_.back().txs);
    outcomes = std::move(spare_.back().outcomes);
    spare_.pop_back();
  }
}

void timing_outbox::hand_over_block(std::uint64_t pushes, settled_block&& settled,
                                    const std::vector<core::full_transaction_ptr>& pending) {
  block b{pushes, std::move(settled), {}};
  b.pending.reserve(pending.size());
  for (const core::full_transaction_ptr& tx : pending) b.pending.push_back(tx->id());
  core::lock_guard lock(mutex_);
  blocks_.push_back(std::move(b));
}

void timing_outbox::take(std::vector<tx_timing>& into, std::vector<settled_block>* blocks) {
  APIARY_CHECK(into.empty());
  {
    core::lock_guard lock(mutex_);
    batches_.swap(taken_);
    blocks_.swap(arrived_);
  }
  for (block& b : arrived_) waiting_.push_back(std::move(b));
  arrived_.clear();

  // The blocks due before the next push, then that push.
  const auto settle_due = [&] {
    while (!waiting_.empty() && waiting_.front().pushes == walked_) {
      settle_block(waiting_.front(), into);
      if (blocks != nullptr) blocks->push_back(std::move(waiting_.front().settled));
      waiting_.pop_front();  // releases the block's transactions unless they were passed on
    }
    APIARY_CHECK(waiting_.empty() || waiting_.front().pushes > walked_);
  };
  for (batch& taken : taken_) {
    for (std::size_t i = 0; i < taken.outcomes.size(); ++i) {
      settle_due();
      queued_tx& item = taken.txs[i];
      const push_outcome& p = taken.outcomes[i];
      (p.outcome == core::reject::none ? pending_ : into)
          .push_back({item.intent.intended_ns, item.submitted_ns, p.pushed_ns, p.pushed_ns, std::move(item.tx),
                      item.intent.kind, p.outcome});
      ++walked_;
    }
  }
  settle_due();

  // Releases the transactions the batches still hold, here and not on the writer, and
  // keeps the emptied vectors for the writer to reuse.
  for (batch& taken : taken_) {
    taken.txs.clear();
    taken.outcomes.clear();
  }
  core::lock_guard lock(mutex_);
  for (batch& taken : taken_) {
    if (spare_.size() == spare_limit) break;
    spare_.push_back(std::move(taken));
  }
  taken_.clear();
}

void timing_outbox::settle_block(const block& b, std::vector<tx_timing>& into) {
  const std::vector<core::full_transaction_ptr>& txs = b.settled.transactions;
  const std::int64_t applied_ns = b.settled.applied_ns;
  const std::size_t in_block = txs.size();
  // The same object: the block holds the very pointers the pushes did.
  const auto same = [](const tx_timing& t, const core::full_transaction_ptr& tx) { return t.tx == tx; };
  if (pending_.size() == in_block + b.pending.size() &&
      (in_block == 0 || (same(pending_.front(), txs.front()) && same(pending_[in_block - 1], txs.back())))) {
    // Nothing was dropped: the block holds the first pending ones, the rest are still
    // pending, all in order, so the records line up without looking up ids.
    const auto end = pending_.begin() + static_cast<std::ptrdiff_t>(in_block);
    for (auto it = pending_.begin(); it != end; ++it) it->settled_ns = applied_ns;
    into.insert(into.end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(end));
    pending_.erase(pending_.begin(), end);
    return;
  }
  // Something was dropped, or the chain had pending transactions of its own (no records):
  // look each one up. Rare, so sets are good enough.
  std::unordered_set<core::transaction_id> included, still_pending;
  included.reserve(in_block);
  for (const core::full_transaction_ptr& tx : txs) included.insert(tx->id());
  still_pending.insert(b.pending.begin(), b.pending.end());
  std::size_t kept = 0;
  for (tx_timing& t : pending_) {
    if (still_pending.contains(t.id()) && !included.contains(t.id())) {
      if (&pending_[kept] != &t) pending_[kept] = std::move(t);
      ++kept;
      continue;
    }
    // In the block, or neither there nor pending any more: dropped when it was built.
    t.dropped = !included.contains(t.id());
    t.settled_ns = applied_ns;
    into.push_back(std::move(t));
  }
  pending_.resize(kept);
}

}  // namespace apiary::queen
