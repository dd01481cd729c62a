// chain::audit and chain::state_digest: full walks of the state, for the end of a run and for
// comparing chains, never for the hot path. The dedup and pending checks are
// dedup_index::audit's, the custom-op limit's custom_op_counter's, the mana's rc_ledger's.
#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <boost/unordered/unordered_flat_set.hpp>

#include "apiary/core/chain/cashout.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

chain_audit chain::audit() const {
  chain_audit a;
  auto violation = [&a](std::string what) { a.violations.push_back(std::move(what)); };

  const auto accounts = static_cast<std::int64_t>(options_.genesis_accounts);
  // HIVE: genesis plus every block's reward inflation, held by the accounts and the reward
  // fund (cashout.hpp).
  const global_properties_object& g = globals_.get(0);
  const std::int64_t minted = static_cast<std::int64_t>(head_block_num()) * cashout_constants::reward_per_block;
  if (g.current_supply_hive != accounts * options_.genesis_hive + minted)
    violation("supply: the current HIVE supply is " + std::to_string(g.current_supply_hive) + ", genesis made " +
              std::to_string(accounts * options_.genesis_hive) + " and " + std::to_string(head_block_num()) +
              " blocks minted " + std::to_string(minted));
  if (g.reward_balance < 0) violation("supply: the reward fund holds " + std::to_string(g.reward_balance));
  if (total_hive() + g.reward_balance != g.current_supply_hive)
    violation("supply: HIVE sums to " + std::to_string(total_hive()) + " in accounts and " +
              std::to_string(g.reward_balance) + " in the reward fund, the supply is " +
              std::to_string(g.current_supply_hive));
  if (total_hbd() != accounts * options_.genesis_hbd)
    violation("supply: HBD sums to " + std::to_string(total_hbd()) + ", genesis made " +
              std::to_string(accounts * options_.genesis_hbd));

  const auto& due = comments_.get<by_cashout>();
  if (!due.empty() && due.begin()->cashout_time <= head_block_time())
    violation("cashout: comment @" + std::string(due.begin()->author.view()) + "/" + due.begin()->permlink +
              " is past its cashout time and still in the state");
  std::size_t orphans = 0;
  for (const comment_vote_object& v : votes_.indices())
    if (comments_.find(v.comment) == nullptr) ++orphans;
  if (orphans != 0) violation("cashout: " + std::to_string(orphans) + " votes on comments no longer in the state");

  a.undo_depth = db_.undo_depth();
  const std::size_t block_sessions =
      options_.apply_block_in_session ? std::min<std::size_t>(head_block_num(), options_.reversible_blocks) : 0;
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
    if (g.rc_pools[i] > rc_params[i].max_pool)
      violations.push_back("rc: the " + std::string(rc_resource_name(static_cast<rc_resource>(i))) + " pool holds " +
                           std::to_string(g.rc_pools[i]) + ", above its maximum " +
                           std::to_string(rc_params[i].max_pool));
}

// ---- state digest -----------------------------------------------------------------------

namespace {
void put(out_buffer& b, const auto& v) { b.append(&v, sizeof v); }
void put_str(out_buffer& b, std::string_view s) {
  put(b, s.size());
  b.append(s);
}

void put_comment(out_buffer& b, const comment_object& c) {
  put(b, c.id);
  put_str(b, c.author.view());
  put_str(b, c.permlink);
  put_str(b, c.parent_author.view());
  put_str(b, c.parent_permlink);
  put(b, c.created.secs);
  put(b, c.last_update.secs);
  put(b, c.body_size);
  put(b, c.children);
  put(b, c.net_votes);
  put(b, c.vote_count);
  put(b, c.net_rshares);
  put(b, c.cashout_time.secs);
  put(b, c.max_accepted_payout);
  put(b, c.percent_hbd);
  put(b, c.allow_votes);
  put(b, c.allow_curation_rewards);
  for (const auto& r : c.beneficiaries) {
    put_str(b, r.account.view());
    put(b, r.weight);
  }
}
}  // namespace

sha256_digest chain::state_digest() const {
  out_buffer b(1 << 20);
  for (const auto& a : accounts_.indices()) {
    put(b, a.id);
    put_str(b, a.name.view());
    b.append(a.posting_key.begin(), a.posting_key.size());
    b.append(a.active_key.begin(), a.active_key.size());
    put(b, a.hive);
    put(b, a.hbd);
    put(b, a.voting.current);
    put(b, a.voting.last_update.secs);
    put(b, a.vesting);
    // The manabar as of the head block time, less the pending charges: the same whether
    // those live in the account (rc state) or beside it (rc volatile).
    const manabar rc = rc_regenerated(a.rc, a.vesting, head_block_time());
    put(b, rc.current - rc_.pending_charge(a.name));
    put(b, rc.last_update.secs);
    put(b, a.post_count);
    put(b, a.vote_count);
    put(b, a.transfer_count);
    put(b, a.custom_op_count);
  }
  for (const auto& c : comments_.indices()) put_comment(b, c);
  for (const auto& v : votes_.indices()) {
    put(b, v.id);
    put(b, v.comment);
    put(b, v.voter);
    put(b, v.weight);
    put(b, v.changes);
    put(b, v.rshares);
    put(b, v.last_update.secs);
  }
  for (const auto& s : summaries_.indices()) b.append(s.block.begin(), s.block.size());
  const global_properties_object& g = globals_.get(0);
  put(b, g.head_block_number);
  b.append(g.head_block_id.begin(), g.head_block_id.size());
  put(b, g.time.secs);
  put(b, g.total_vesting);
  put(b, g.current_supply_hive);
  put(b, g.reward_balance);
  put(b, g.recent_claims);
  put(b, g.comments_paid);
  for (std::int64_t pool : g.rc_pools) put(b, pool);
  // Included transactions by id and expiration; their object ids and the pending ids'
  // location depend on the dedup variant, what they hold does not.
  // Pending ones are marked with expiration 0.
  boost::unordered_flat_set<transaction_id> pending_ids;
  for (const auto& tx : pending_) pending_ids.insert(tx->id());
  std::vector<std::pair<transaction_id, std::uint32_t>> txs;
  for (const auto& t : dedup_.index().indices())
    if (!pending_ids.contains(t.trx_id)) txs.emplace_back(t.trx_id, t.expiration.secs);
  for (const auto& id : pending_ids) txs.emplace_back(id, 0);
  std::sort(txs.begin(), txs.end());
  for (const auto& [id, exp] : txs) {
    b.append(id.begin(), id.size());
    put(b, exp);
  }
  return sha256(b.data(), b.size());
}

}  // namespace apiary::core
