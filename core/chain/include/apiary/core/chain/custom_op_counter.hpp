// custom_op_counter: how many custom operations each account has in the block being built, to
// hold it to chain_limits::custom_op_block_limit. Where the counts live is
// chain_options::custom_ops, and this class is the only place that looks at it:
//
//   local  a hash map of the block's counts and one of the current transaction's; the
//          transaction's are merged in by commit_transaction once it succeeded, so a failed
//          transaction leaves no count behind;
//   state  the undoable custom_op_counter_index, counted in place: a failed transaction's
//          undo session reverts its counts, and undoing the pending session resets them all.
//
// The chain drives it in this order: begin_transaction, count per signing account of each
// custom operation, commit_transaction after the transaction's session is squashed, and
// reset whenever the pending session is undone. Only pushed transactions are counted: a
// block's transactions were counted when they were pushed.
// Invariant (audit checks it): no account is above the limit.
// Thread safety: none; the chain's writer thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <boost/unordered/unordered_flat_map.hpp>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/account_name.hpp"

namespace apiary::core {

class custom_op_counter {
 public:
  // index: the database's counter index, which outlives this.
  custom_op_counter(counter_mode mode, custom_op_counter_index& index) : mode_(mode), index_(index) {}
  custom_op_counter(const custom_op_counter&) = delete;
  custom_op_counter& operator=(const custom_op_counter&) = delete;

  // The account's custom operations in this block so far, without the current transaction's
  // uncommitted ones in local mode.
  std::uint32_t in_block(const account_name& account) const {
    if (mode_ == counter_mode::local) {
      auto it = block_.find(account);
      return it == block_.end() ? 0 : it->second;
    }
    const custom_op_counter_object* c = index_.find<by_account>(account);
    return c == nullptr ? 0 : c->count;
  }

  // Starts counting a new transaction (the map is empty in state mode: clearing is cheaper
  // than asking).
  void begin_transaction() noexcept { transaction_.clear(); }
  // One more custom operation by the account in the current transaction, unless that would
  // reach past the per-block limit. Call it inside the transaction's undo session: state
  // mode writes the index, and a failure is undone with the session.
  reject count(const account_name& account) {
    if (mode_ != counter_mode::local) return count_in_index(account);
    std::uint32_t& in_tx = transaction_[account];
    if (in_block(account) + in_tx >= chain_limits::custom_op_block_limit) return reject::custom_op_limit;
    ++in_tx;
    return reject::none;
  }
  // The current transaction succeeded: its counts join the block's (local mode; state mode's
  // are in the index already). basic.
  void commit_transaction() {
    for (const auto& [account, n] : transaction_) block_[account] += n;
  }
  // The last committed transaction is taken back out of the block (its session undone): its
  // counts leave the block's (local mode). Only until the next begin_transaction.
  void take_back_transaction() {
    for (const auto& [account, n] : transaction_) block_[account] -= n;
  }
  // A new block: no custom operations yet (state mode: the pending session's undo already
  // removed its counts).
  void reset() noexcept { block_.clear(); }
  // Whether the pending state holds nothing of these counts that applying a block would not
  // write (local mode; state mode's counter objects live in the pending session).
  bool matches_block_state() const noexcept { return mode_ == counter_mode::local; }

  // Accounts above the per-block limit (a full walk, for audits).
  std::size_t accounts_above_limit() const;

 private:
  // The chain tests break invariants on purpose, to see the audit catch each one.
  friend struct chain_test_access;

  reject count_in_index(const account_name& account);  // counter_mode::state

  counter_mode mode_;
  custom_op_counter_index& index_;
  boost::unordered_flat_map<account_name, std::uint32_t> block_;        // counter_mode::local
  boost::unordered_flat_map<account_name, std::uint32_t> transaction_;  // local: this transaction's
};

}  // namespace apiary::core
