// chain::audit and chain::state_digest: full walks of the state, for the end of a run and for
// comparing chains, never for the hot path. The dedup and pending checks are
// dedup_index::audit's, the custom-op limit's custom_op_counter's, the mana's rc_ledger's; how
// the digest writes each object is state_digest.hpp's.
#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/unordered/unordered_flat_set.hpp>

#include "apiary/core/chain/cashout.hpp"
#include "apiary/core/chain/state_digest.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

chain_audit chain::audit() const {
  chain_audit a;
  auto violation = [&a](std::string what) { a.violations.push_back(std::move(what)); };

  // HIVE: genesis (its accounts by number and by name) plus every block's reward inflation,
  // held by the accounts and the reward fund (cashout.hpp). No operation mints or burns HBD.
  const global_properties_object& g = globals_.get(0);
  const std::int64_t minted = static_cast<std::int64_t>(head_block_num()) * cashout_constants::reward_per_block;
  if (g.current_supply_hive != g.genesis_supply_hive + minted)
    violation("supply: the current HIVE supply is " + std::to_string(g.current_supply_hive) + ", genesis made " +
              std::to_string(g.genesis_supply_hive) + " and " + std::to_string(head_block_num()) + " blocks minted " +
              std::to_string(minted));
  if (g.reward_balance < 0) violation("supply: the reward fund holds " + std::to_string(g.reward_balance));
  if (total_hive() + g.reward_balance != g.current_supply_hive)
    violation("supply: HIVE sums to " + std::to_string(total_hive()) + " in accounts and " +
              std::to_string(g.reward_balance) + " in the reward fund, the supply is " +
              std::to_string(g.current_supply_hive));
  if (total_hbd() != g.current_supply_hbd)
    violation("supply: HBD sums to " + std::to_string(total_hbd()) + ", genesis made " +
              std::to_string(g.current_supply_hbd));

  const auto& due = comments_.get<by_cashout>();
  if (!due.empty() && due.begin()->cashout_time <= head_block_time())
    violation("cashout: comment @" + std::string(due.begin()->author.view()) + "/" +
              std::string(due.begin()->permlink.view()) + " is past its cashout time and still in the state");
  std::size_t orphans = 0;
  for (const comment_vote_object& v : votes_.indices())
    if (comments_.find(v.comment) == nullptr) ++orphans;
  if (orphans != 0) violation("cashout: " + std::to_string(orphans) + " votes on comments no longer in the state");

  a.undo_depth = db_.undo_depth();
  // The blocks applied since the chain was built (genesis, or a snapshot's head) may be reversible.
  const std::size_t block_sessions =
      options_.apply_block_in_session
          ? std::min<std::size_t>(head_block_num() - first_block_, options_.reversible_blocks)
          : 0;
  // The last pending transaction may keep its own session (push_transaction's may_be_left_out).
  const std::size_t expected = block_sessions + 1 + (last_session_.active() ? 1 : 0);
  if (a.undo_depth != expected)
    violation("sessions: " + std::to_string(a.undo_depth) + " undo sessions open, expected " +
              std::to_string(expected) + " (the pending one, " + std::to_string(block_sessions) +
              " reversible blocks and the last transaction's own one if open)");

  a.known_transactions = dedup_.audit(pending_, head_block_time(), a.violations);

  const std::size_t over = counter_.accounts_above_limit();
  if (over != 0) violation("custom ops: " + std::to_string(over) + " accounts above the per-block limit");
  audit_rc(a.violations);
  return a;
}

void chain::audit_rc(std::vector<std::string>& violations) const {
  rc_.audit(head_block_time(), violations);
  std::int64_t vesting = 0;
  for (const account_object& a : accounts_.indices()) vesting += a.vesting;
  const global_properties_object& g = globals_.get(0);
  if (vesting != g.total_vesting)
    violations.push_back("rc: the accounts' vesting sums to " + std::to_string(vesting) + ", the total says " +
                         std::to_string(g.total_vesting));
  for (std::size_t i = 0; i < rc_resource_count; ++i)
    if (g.rc_pools[i] > rc_params()[i].max_pool)
      violations.push_back("rc: the " + std::string(rc_resource_name(static_cast<rc_resource>(i))) + " pool holds " +
                           std::to_string(g.rc_pools[i]) + ", above its maximum " +
                           std::to_string(rc_params()[i].max_pool));
}

// ---- state digest -----------------------------------------------------------------------

sha256_digest chain::state_digest() const {
  out_buffer b(1 << 20);
  for (const account_object& a : accounts_.indices()) {
    // The resource credits as of the head block time, less the pending charges: the same
    // whether those live in the account (rc state) or beside it (rc volatile).
    account_object as_of_head = a;
    as_of_head.rc = rc_regenerated(a.rc, a.vesting, head_block_time());
    as_of_head.rc.current -= rc_.pending_charge(a.name);
    digest_append(b, as_of_head);
  }
  for (const comment_object& c : comments_.indices()) digest_append(b, c);
  for (const comment_vote_object& v : votes_.indices()) digest_append(b, v);
  for (const block_summary_object& s : summaries_.indices()) digest_append(b, s);
  digest_append(b, globals_.get(0));
  // Included transactions by id and expiration, pending ones with expiration 0, sorted: where
  // the pending ids live depends on the dedup variant, what the digest holds does not.
  boost::unordered_flat_set<transaction_id> pending_ids;
  for (const auto& tx : pending_) pending_ids.insert(tx->id());
  std::vector<transaction_object> txs;
  for (const transaction_object& t : dedup_.index().indices())
    if (!pending_ids.contains(t.trx_id)) txs.push_back(t);
  for (const transaction_id& id : pending_ids) txs.push_back({.trx_id = id, .expiration = time_point_sec{0}});
  std::sort(txs.begin(), txs.end(), [](const transaction_object& x, const transaction_object& y) {
    return std::tie(x.trx_id, x.expiration) < std::tie(y.trx_id, y.expiration);
  });
  for (const transaction_object& t : txs) digest_append(b, t);
  return sha256(b.data(), b.size());
}

}  // namespace apiary::core
