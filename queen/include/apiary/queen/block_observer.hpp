// block_observer: what runs on the writer thread after each applied block.
//
// The writer publishes every block it applies to its observers, in the order they were
// added, right after the block is recorded and before the next transaction is pushed. An
// observer does one job (count the block, feed the producers the new head, sample the state
// for the interval log, check a stop condition, ...) and says in its comment which threads
// touch its state and what it costs per block.
//
// What the observers cost is not the chain's: the writer times them, each on its own and all
// together as writer_breakdown::observe_ns, a line of its own in the breakdown, so a slow
// observer shows as itself and not as an unexplained part of the next block's cycle (a
// cycle is the wall time from one block's end to the next's, observers included).
#pragma once

#include <string_view>

#include "apiary/core/chain/chain.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::queen {

class block_observer {
 public:
  virtual ~block_observer() = default;

  // A short name for the breakdown of the observers' time ("window", "colony head", ...).
  virtual std::string_view name() const = 0;
  // Writer thread, after each block. Return false to end the writer's loop (a stop condition
  // was met); a throw ends it too, and the writer reports the exception as its error.
  virtual bool on_block(const block_record& r, const core::chain& chain) = 0;

 protected:
  block_observer() = default;
  block_observer(const block_observer&) = default;
  block_observer& operator=(const block_observer&) = default;
};

// What one observer cost the writer over the run: its name and its time.
struct observer_cost {
  std::string_view name;
  std::int64_t ns = 0;
};

}  // namespace apiary::queen
