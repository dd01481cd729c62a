// workload: a seeded sequence of transactions built once, ahead of time, for deterministic
// single-thread replays (`apiary workload`, `apiary replay`).
//
// The colony's producer threads become `config.threads` streams: stream t is the generator
// thread t would have had (seed + t, the accounts dealt to thread t), and the streams take
// turns, one transaction each, so the order is fixed by the seed alone. Unlike a live run,
// no block is known while the workload is built: every transaction references `head` (the
// genesis head) and expires an hour after it, so a workload is valid for the first 1,199
// blocks of a chain built with the same genesis (3-second slots). Replies and votes target
// comments made earlier in the workload.
//
// Signing is deterministic (RFC 6979), so it is spread over the machine's cores after the
// sequence is fixed without changing a byte. Faults come from each stream's own injector,
// so the normal transactions are the same with and without them.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "apiary/colony/colony.hpp"
#include "apiary/colony/colony_config.hpp"
#include "apiary/colony/colony_stats.hpp"
#include "apiary/colony/faults.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/core/protocol/full_transaction.hpp"

namespace apiary::colony {

struct workload {
  // Normal transactions, each followed by its faulty companion when one was drawn.
  std::vector<core::full_transaction_ptr> transactions;
  // The normal transactions by the kind built, counted as a colony counts its own.
  std::array<kind_totals, op_kind_count> kinds{};
  std::array<std::uint64_t, fault_kind_count> faults{};  // companions, by kind
};

// `transactions` normal transactions of config's mix, signed when config.sign (with the
// signer's public key attached when config.attach_signer_keys), and the faulty companions
// config.faults draws (faults.hpp). config must validate().
//
// With `block_every` (0: never), a round of many blocks built at once: the clock the
// transactions expire by moves one block slot on every `block_every` transactions, so
// transaction i expires an hour after the head at slot i / block_every, as it would on a live
// chain had it been made for that block; each block then prunes a block's worth of ids, not
// the whole round at once. It must be at least the transactions a block holds: one that lands
// in a block earlier than its slot expires too far ahead and is rejected.
workload generate_workload(const colony_config& config, std::uint64_t transactions, const head_info& head,
                           std::uint64_t block_every = 0);

}  // namespace apiary::colony
