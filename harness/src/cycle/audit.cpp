#include "apiary/harness/cycle/audit.hpp"

namespace apiary::harness {

void acceptance_log::read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block>) {
  for (const queen::tx_timing& t : transactions)
    if (t.outcome == core::reject::none) accepted_.push_back({t.id(), t.tx->tx().expiration});
}

void acceptance_log::inherit(const core::chain& chain) {
  for (const core::transaction_object& t : chain.db().get_index<core::transaction_index>().indices())
    inherited_.push_back({t.trx_id, t.expiration});
}

audit_result audit_run(const run_config& c, const core::chain& chain, const std::vector<queen::block_record>& blocks,
                       const std::vector<accepted_id>& settled, const colony::colony_stats& colony,
                       std::span<const accepted_id> inherited) {
  audit_result a;
  a.ran = true;
  auto violation = [&a](std::string what) { a.violations.push_back(std::move(what)); };

  // The chain's own invariants.
  const core::chain_audit own = chain.audit();
  ++a.checks;
  for (const std::string& v : own.violations) violation(v);
  a.known_transactions = own.known_transactions;
  a.undo_depth = own.undo_depth;

  // Blocks: sizes, numbers and the id chain.
  ++a.checks;
  std::uint64_t in_blocks = 0;
  std::uint64_t dropped = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const queen::block_record& b = blocks[i];
    in_blocks += b.transactions;
    dropped += b.dropped;
    if (b.size_bytes > c.writer.block_size)
      violation("blocks: block " + std::to_string(b.num) + " is " + std::to_string(b.size_bytes) +
                " bytes, above the " + std::to_string(c.writer.block_size) + "-byte target");
    if (i > 0 && b.num != blocks[i - 1].num + 1)
      violation("blocks: block " + std::to_string(b.num) + " follows block " + std::to_string(blocks[i - 1].num));
    if (i > 0 && b.previous != blocks[i - 1].id)
      violation("blocks: block " + std::to_string(b.num) + " does not name block " + std::to_string(blocks[i - 1].num) +
                " as its previous");
  }
  if (!blocks.empty() && (blocks.back().id != chain.head_block_id() || blocks.back().num != chain.head_block_num()))
    violation("blocks: the last block is not the chain's head");

  // The ledger: every accepted transaction is in a block, was dropped, or is pending.
  ++a.checks;
  const std::uint64_t pending = chain.pending_count();
  if (colony.accepted() != in_blocks + dropped + pending)
    violation("ledger: " + std::to_string(colony.accepted()) + " accepted, but " + std::to_string(in_blocks) +
              " in blocks + " + std::to_string(dropped) + " dropped + " + std::to_string(pending) + " pending");

  // Dedup: the accepted, unexpired ids are known, and nothing else is.
  ++a.checks;
  if (settled.size() + pending != colony.accepted())
    violation("dedup: the settled stream recorded " + std::to_string(settled.size()) + " acceptances and " +
              std::to_string(pending) + " are pending, but the colony counted " + std::to_string(colony.accepted()));
  const core::time_point_sec now = chain.head_block_time();
  std::uint64_t known = 0;
  std::uint64_t unknown = 0;
  const auto count = [&](const core::transaction_id& id, core::time_point_sec expiration) {
    if (expiration <= now) return;
    ++a.accepted_unexpired;
    ++(chain.is_known_transaction(id) ? known : unknown);
  };
  for (const accepted_id& t : settled) count(t.id, t.expiration);
  for (const core::full_transaction_ptr& tx : chain.pending()) count(tx->id(), tx->tx().expiration);
  std::uint64_t inherited_known = 0;
  for (const accepted_id& t : inherited) {
    if (t.expiration <= now) continue;
    if (chain.is_known_transaction(t.id))
      ++inherited_known;
    else
      violation("dedup: the snapshot's unexpired id " + core::to_hex(t.id) + " is unknown to the chain");
  }
  known += inherited_known;
  // Only a dropped transaction (accepted, then failing when re-applied) may be forgotten.
  if (unknown > dropped)
    violation("dedup: " + std::to_string(unknown) + " accepted, unexpired transactions are unknown to the chain (" +
              std::to_string(dropped) + " were dropped)");
  if (known != a.known_transactions)
    violation("dedup: the chain knows " + std::to_string(a.known_transactions) + " ids, " +
              std::to_string(known - inherited_known) + " of them accepted and unexpired" +
              (inherited.empty() ? std::string() : " and " + std::to_string(inherited_known) + " the snapshot's"));
  return a;
}

}  // namespace apiary::harness
