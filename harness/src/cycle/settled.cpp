#include "apiary/harness/cycle/settled.hpp"

namespace apiary::harness {

void settled_stream::drain() {
  outbox_.take(transactions_, &blocks_);
  for (settled_reader* r : readers_) r->read(transactions_, blocks_);
  transactions_.clear();
  blocks_.clear();
}

}  // namespace apiary::harness
