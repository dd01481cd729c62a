// snapshot: the blocks `apiary snapshot --blocks N` adds to a chain before it writes its state,
// so the state is a warm one (the ids of the last hour, the comments and votes of the cashout
// window) rather than a bare genesis.
//
// The transactions are generated as the replay's are (colony/workload.hpp: seeded streams of
// the typical mix, signed on every core) and pushed through the queen's writer on the calling
// thread. A round's transactions are held in memory until pushed, so the blocks are made in
// rounds of at most snapshot_round_transactions, each generated from the chain's head as it is
// then (the generators' nonces hold the head block number, so permlinks and ids stay new round
// after round). A round's transactions reference its head block and expire an hour after the
// block slot each was made for, so the blocks after the state prune a block's worth of ids
// each (colony::generate_workload's block_every). A round ends at its block count; what it
// left pending stays pending for the next.
// Deterministic: the same options and chain give the same blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/run_config.hpp"

namespace apiary::harness {

// The most transactions one round generates and holds (about 2 KB each when signed): signing
// them takes a few seconds on two cores, which is how long a signal may wait for the round.
inline constexpr std::uint64_t snapshot_round_transactions = 100'000;

struct advance_result {
  std::uint32_t blocks = 0;  // made
  std::uint32_t rounds = 0;
  std::uint64_t in_blocks = 0;  // transactions in the blocks made
  std::uint64_t rejected = 0;   // transactions the chain turned away (--faults' companions, ...)
  bool cancelled = false;       // `cancelled` said so: fewer blocks than asked
  std::string error;            // the writer failed: why
};

// Adds `blocks` blocks of c's mix (c.colony, c.writer) to `chain`. `cancelled` is asked after
// every block and between rounds; `progress` is told the blocks made so far after each round.
advance_result advance_chain(const run_config& c, core::chain& chain, std::uint32_t blocks,
                             const std::function<bool()>& cancelled,
                             const std::function<void(std::uint32_t made)>& progress);

}  // namespace apiary::harness
