// rc_ledger: where the resource-credit charges of pending transactions live, and the one
// place that reads chain_options::rc (as custom_op_counter is for the custom-op counts):
//
//   state     Hive's way: a pushed transaction's charge is written into its payer's account
//             object (the manabar regenerated to now, then the cost taken) inside the
//             transaction's undo session; a failed transaction's undo reverts it, and undoing
//             the pending session reverts them all.
//   volatile  the pending transactions' charges are summed per payer in a hash map beside the
//             pending list; a payer's mana is its manabar regenerated to now less that sum.
//             State only ever sees the charges of the blocks' transactions; the map is
//             cleared whenever the pending list is (reset), like the local custom-op counter.
//
// A block's transactions are charged in state in both modes (charge_block), so the two end in
// the same state after every block. Order, as custom_op_counter: charge_pending inside the
// transaction's session, commit_transaction after the session is squashed.
// Thread safety: none; the chain's writer thread owns it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

class rc_ledger {
 public:
  // accounts: the database's account index, which outlives this.
  rc_ledger(rc_mode mode, account_index& accounts) : mode_(mode), accounts_(accounts) {}
  rc_ledger(const rc_ledger&) = delete;
  rc_ledger& operator=(const rc_ledger&) = delete;

  // The account's mana at `now`, less what its pending transactions owe (volatile mode).
  std::int64_t available(const account_object& a, time_point_sec now) const;
  // What the account's pending transactions owe and state does not show (0 in state mode).
  std::int64_t pending_charge(const account_name& account) const {
    auto it = pending_.find(account);
    return it == pending_.end() ? 0 : it->second;
  }

  // A pushed transaction costs its payer `cost`: insufficient_rc when the payer has less.
  // Call it inside the transaction's undo session (state mode writes the account). `mana`
  // (optional) receives what the payer had before the charge (the RC statistics).
  reject charge_pending(const account_object& payer, std::int64_t cost, time_point_sec now,
                        std::int64_t* mana = nullptr);
  // The transaction whose charge_pending succeeded was squashed: its charge joins the
  // pending ones (volatile mode). basic.
  void commit_transaction() {
    if (tx_cost_ > 0) pending_[tx_payer_] += tx_cost_;
    tx_cost_ = 0;
  }
  // A block's transaction: charged in state, in both modes.
  reject charge_block(const account_object& payer, std::int64_t cost, time_point_sec now, std::int64_t* mana = nullptr);
  // The pending list was cleared (state mode: the pending session's undo already reverted it).
  void reset() noexcept {
    pending_.clear();
    tx_cost_ = 0;
  }
  // Whether the pending state holds the pending charges exactly as applying their block
  // would write them (state mode; volatile mode keeps them out of state).
  bool matches_block_state() const noexcept { return mode_ == rc_mode::state; }

  // The bookkeeping's invariants, one line each when broken: no account's mana (less its
  // pending charges) below zero or above its maximum, no pending charge that is not positive.
  void audit(time_point_sec now, std::vector<std::string>& violations) const;

 private:
  // The chain tests break invariants on purpose, to see the audit catch each one.
  friend struct chain_test_access;

  reject charge_in_state(const account_object& payer, std::int64_t cost, time_point_sec now, std::int64_t* mana);

  rc_mode mode_;
  account_index& accounts_;
  boost::unordered_flat_map<account_name, std::int64_t> pending_;  // volatile: owed per payer
  account_name tx_payer_;                                          // volatile: the transaction
  std::int64_t tx_cost_ = 0;                                       // being pushed
};

}  // namespace apiary::core
