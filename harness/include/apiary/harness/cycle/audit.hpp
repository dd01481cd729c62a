// audit: `apiary run --audit on`. After the run, with every thread joined, checks that the
// state is what the run says it did:
//   chain       chain::audit(): supply unchanged, only the expected undo sessions open, the
//               dedup index free of expired ids and aware of every pending transaction, no
//               account above the custom-op limit
//   blocks      every block within the size target, numbers consecutive, each block's
//               `previous` the id of the one before, the last one the chain's head
//   ledger      accepted = included + dropped + pending
//   dedup       the ids the chain knows are exactly the accepted, unexpired transactions
//               (less the dropped ones): those the settled stream says were accepted
//               (acceptance_log) and the chain's pending ones, as many as the colony counted,
//               and, for a chain loaded from a snapshot, the unexpired ids it knew at the start
// Each broken invariant is one line; any makes the run fail (exit status 1).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apiary/colony/colony_stats.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

struct audit_result {
  bool ran = false;
  std::vector<std::string> violations;
  std::uint32_t checks = 0;              // invariant groups checked
  std::uint64_t known_transactions = 0;  // ids the chain's dedup knows
  std::uint64_t accepted_unexpired = 0;  // accepted transactions not yet expired (the stream's record)
  std::uint64_t undo_depth = 0;
  bool passed() const { return ran && violations.empty(); }
};

struct accepted_id {
  core::transaction_id id;
  core::time_point_sec expiration;
};

// The id and expiration of every transaction the settled stream says was accepted (included
// in a block, or dropped from one): a reader of the stream, on the main thread.
class acceptance_log final : public settled_reader {
 public:
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override;
  const std::vector<accepted_id>& accepted() const { return accepted_; }
  // Before the run: the ids the chain knows already (a snapshot's transaction index), which it
  // keeps knowing until they expire.
  void inherit(const core::chain& chain);
  const std::vector<accepted_id>& inherited() const { return inherited_; }

 private:
  std::vector<accepted_id> accepted_;
  std::vector<accepted_id> inherited_;
};

// settled: the acceptances that settled (acceptance_log); the chain's pending transactions
// are the rest. inherited: the ids the chain knew before the run (acceptance_log::inherit).
audit_result audit_run(const run_config& c, const core::chain& chain, const std::vector<queen::block_record>& blocks,
                       const std::vector<accepted_id>& settled, const colony::colony_stats& colony,
                       std::span<const accepted_id> inherited = {});

}  // namespace apiary::harness
