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

void timing_outbox::take(std::vector<tx_timing>& into) {
  APIARY_CHECK(into.empty());
  std::lock_guard lock(mutex_);
  items_.swap(into);
}

}  // namespace apiary::queen
