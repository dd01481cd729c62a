// dedup_index: where the chain keeps the ids of the transactions it knows, so a duplicate is
// rejected. Included ids, with their expiration, live in the undoable transaction index in
// both modes; where the pending ids live is chain_options::dedup, and this class is the only
// place that looks at it:
//
//   split    pending ids in a volatile hash set, cleared with the pending state;
//   unified  pending ids in the transaction index too, so undoing the pending session (or a
//            failed transaction's session) removes them, and nothing needs clearing.
//
// The chain drives it in this order: add_pending_before_squash and add_pending_after_squash
// for each pushed transaction, record_included for each transaction of an applied block,
// prune_expired once the block is the head, and clear_pending whenever the pending session
// is undone. The is-known check and the add steps are inline: they run once per push.
// Invariants (audit checks them): every id in the index is unexpired; the pending ids are
// exactly the pending transactions' ids.
// Thread safety: none; the chain's writer thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <boost/unordered/unordered_flat_set.hpp>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

class dedup_index {
 public:
  // index: the database's transaction index, which outlives this; its id table is sized for
  // expected_ids (chain_options::expected_transaction_ids), and the pending set for a
  // block's worth of them.
  dedup_index(dedup_mode mode, transaction_index& index, std::size_t expected_ids = 0) : mode_(mode), index_(index) {
    if (expected_ids == 0) return;
    index_.reserve<by_trx_id>(expected_ids);
    if (mode_ == dedup_mode::split) pending_.reserve(expected_ids / chain_limits::expiration_blocks + 1);
  }
  dedup_index(const dedup_index&) = delete;
  dedup_index& operator=(const dedup_index&) = delete;

  // Whether the id is pending, or included and not yet pruned.
  bool contains(const transaction_id& id) const {
    if (mode_ == dedup_mode::split && pending_.contains(id)) return true;
    return index_.find<by_trx_id>(id) != nullptr;
  }

  // A pushed transaction's id joins the pending ids in two steps around the squash of the
  // transaction's undo session, so that a failure up to the squash leaves it nowhere:
  //   before the squash  unified: into the index, undone with the session (strong)
  //   after the squash   split: into the volatile set (strong)
  void add_pending_before_squash(const full_transaction& tx) {
    if (mode_ == dedup_mode::unified) record_included(tx);
  }
  void add_pending_after_squash(const transaction_id& id) {
    if (mode_ == dedup_mode::split) pending_.insert(id);
  }
  // An applied block's transaction: its id stays in the index until it expires. strong.
  void record_included(const full_transaction& tx) {
    index_.create([&](transaction_object& t) {
      t.trx_id = tx.id();
      t.expiration = tx.tx().expiration;
    });
  }
  // The pending transactions became a block without being applied again: their ids are
  // included now (split: from the volatile set into the index; unified: already there).
  // basic.
  void include_pending(std::span<const full_transaction_ptr> pending) {
    if (mode_ != dedup_mode::split) return;
    // The transactions were pushed up to a block ago and have left the caches, and the id
    // table is larger than them: in a pipeline a few transactions ahead, the lines
    // record_included reads (the expiration at the start, the id), then the id's bucket,
    // then the first id in that bucket, each stage reading only what the one before loaded.
    constexpr std::size_t lines_ahead = 12;
    constexpr std::size_t bucket_ahead = 8;
    constexpr std::size_t head_ahead = 4;
    const std::size_t n = pending.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + lines_ahead < n) {
        const full_transaction& next = *pending[i + lines_ahead];
        __builtin_prefetch(&next.tx().expiration);
        __builtin_prefetch(&next.id());
      }
      if (i + bucket_ahead < n) index_.prefetch_bucket<by_trx_id>(pending[i + bucket_ahead]->id());
      if (i + head_ahead < n) index_.prefetch_bucket_head<by_trx_id>(pending[i + head_ahead]->id());
      record_included(*pending[i]);
    }
    pending_.clear();
  }
  // A pending transaction taken back out (its session undone, which took the unified mode's
  // id along): split mode forgets its id.
  void take_back_pending(const transaction_id& id) {
    if (mode_ == dedup_mode::split) pending_.erase(id);
  }
  // Batched lookups, a few transactions ahead of contains(id): start loading the id
  // table's bucket of id, later, that loaded, the first id in it, and last the node after
  // that one, which a lookup that does not match the first id reads (undo_index's
  // prefetches). Hints only.
  void prefetch_bucket(const transaction_id& id) const { index_.prefetch_bucket<by_trx_id>(id); }
  void prefetch_bucket_head(const transaction_id& id) const { index_.prefetch_bucket_head<by_trx_id>(id); }
  void prefetch_bucket_next(const transaction_id& id) const { index_.prefetch_bucket_next<by_trx_id>(id); }
  // Removes the ids that expired at or before now; returns how many. basic.
  std::uint32_t prune_expired(time_point_sec now);
  // Pending ids in the volatile set (0 in unified mode, where they are in the index).
  std::size_t pending_ids() const noexcept { return pending_.size(); }
  // Forgets the pending ids, once the pending session is undone (which took the unified
  // mode's along).
  void clear_pending() noexcept {
    if (mode_ == dedup_mode::split) pending_.clear();
  }

  // The dedup and pending invariants at time now, a full walk for audits: every id in the
  // index is unexpired; each pending transaction is unique, known and unexpired; in split
  // mode the volatile set holds as many ids as there are pending transactions. One line per
  // broken one is appended to violations. Returns how many ids contains() knows.
  std::size_t audit(std::span<const full_transaction_ptr> pending, time_point_sec now,
                    std::vector<std::string>& violations) const;

  // Included ids, plus the pending ones in unified mode.
  const transaction_index& index() const { return index_; }

 private:
  // The chain tests break invariants on purpose, to see the audit catch each one.
  friend struct chain_test_access;

  dedup_mode mode_;
  transaction_index& index_;
  boost::unordered_flat_set<transaction_id> pending_;  // dedup_mode::split only
  std::vector<const transaction_object*> expired_;     // prune_expired's own, kept for its room
};

}  // namespace apiary::core
