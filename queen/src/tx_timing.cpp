#include "apiary/queen/tx_timing.hpp"

#include <utility>

#include "apiary/core/check.hpp"

namespace apiary::queen {

void timing_outbox::publish(std::vector<tx_timing>& batch) {
  if (batch.empty()) return;
  std::lock_guard lock(mutex_);
  if (items_.empty()) {
    items_.swap(batch);  // batch gets the consumer's emptied capacity back
  } else {
    items_.insert(items_.end(), batch.begin(), batch.end());
    batch.clear();
  }
}

void timing_outbox::retire(std::vector<core::full_transaction_ptr>&& transactions) {
  std::lock_guard lock(mutex_);
  retired_.push_back(std::move(transactions));
}

void timing_outbox::take(std::vector<tx_timing>& into) {
  APIARY_CHECK(into.empty());
  std::vector<std::vector<core::full_transaction_ptr>> released;
  {
    std::lock_guard lock(mutex_);
    items_.swap(into);
    retired_.swap(released);
  }
  // `released` goes out of scope here, on this thread: the last references to the blocks'
  // transactions, so they are freed here and not on the writer.
}

}  // namespace apiary::queen
