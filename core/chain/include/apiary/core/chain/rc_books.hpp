// rc_books: the chain's resource-credit bookkeeping beside its state. rc_ledger holds the
// pending transactions' charges (where they live is its switch); this holds everything else
// the chain counts of resource credits, in three parts:
//
//   parameters  the effective RC parameters: the options' base parameters scaled once by
//               rc_scale, after checking each (the constructor throws on a bad one);
//   pending     what the pending transactions used, summed per resource (the pools move on by
//               it when a block keeps the pending state), and their RC statistics samples,
//               summed; with the last pending transaction's own usage and sample while it
//               keeps its own undo session (it may be taken back out of the pending list);
//   applied     the insufficient_rc rejections of pushes (in all, and the most before one
//               block), the blocks applied, Hive's RC statistics (rc_stats.hpp) of the blocks
//               since the last archive, the archives so far (one every
//               chain_options::rc_stats_blocks blocks; none, and no samples, when that is 0),
//               and the reference costs a sample's cant_afford compares with (as of the last
//               archive).
//
// None of it is in the database, so no undo session reverts it: the chain keeps it in step
// with its sessions. remember_last and add_pending after a push is accepted (remember_last
// only when the transaction keeps its own session), take_back_last when that session is
// undone, forget_pending when the pending session is, finish_block once per applied block. A
// snapshot holds none of it: a chain loaded from one starts with empty books, as at genesis.
//
// What a push calls (count_rejection, remember_last, add_pending) is inline, fixed-size and
// never allocates: the push is the hot path.
// Thread safety: none; the chain's writer thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "apiary/core/chain/state_objects.hpp"

namespace apiary::core {

class rc_books {
 public:
  // Throws std::invalid_argument naming the first of options.rc_params out of range at
  // options.rc_scale.
  explicit rc_books(const chain_options& options);
  rc_books(const rc_books&) = delete;
  rc_books& operator=(const rc_books&) = delete;

  // The effective parameters: rc_scaled(options.rc_params, options.rc_scale).
  const rc_parameters& params() const { return params_; }
  // Whether the RC statistics are kept (rc_stats_blocks is not 0): without them no sample is
  // taken, and pending_stats(), stats() and archives() stay empty.
  bool keeps_stats() const { return stats_blocks_ != 0; }
  // The average costs of a vote, a comment and a transfer as of the last archive.
  const rc_reference_costs& reference() const { return reference_; }

  // ---- pushes ----

  // A push was refused with insufficient_rc.
  void count_rejection() {
    ++rejected_in_block_;
    ++status_.rejected;
  }
  // The transaction being accepted keeps its own session: its usage and sample, for
  // take_back_last.
  void remember_last(const rc_usage& used, const rc_charge_sample& sample) {
    last_usage_ = used;
    last_sample_ = sample;
  }
  // An accepted transaction joins the pending ones with its usage and (when keeps_stats())
  // its sample.
  void add_pending(const rc_usage& used, const rc_charge_sample& sample) {
    for (std::size_t i = 0; i < rc_resource_count; ++i) pending_usage_[i] += used[i];
    if (keeps_stats()) pending_stats_.add(sample);
  }
  // The last pending transaction (the one remember_last saw) left the pending list.
  void take_back_last() {
    for (std::size_t i = 0; i < rc_resource_count; ++i) pending_usage_[i] -= last_usage_[i];
    if (keeps_stats()) pending_stats_.subtract(last_sample_);
  }
  // The pending list was cleared.
  void forget_pending() noexcept {
    pending_usage_ = {};
    pending_stats_ = {};
  }
  const rc_usage& pending_usage() const { return pending_usage_; }
  const rc_stats& pending_stats() const { return pending_stats_; }

  // ---- blocks ----

  // A block was applied and `g` holds the state after it: the rejections before it close, and
  // its transactions' statistics `block` join the open ones, archived when its number is a
  // multiple of rc_stats_blocks.
  void finish_block(const rc_stats& block, const global_properties_object& g);

  // ---- queries ----

  // The counters since the chain was built, with the pools and total vesting of `g`.
  rc_status status(const global_properties_object& g) const;
  // The blocks' statistics since the last archive, and the archives so far, oldest first.
  const rc_stats& stats() const { return stats_; }
  const std::vector<rc_archive>& archives() const { return archives_; }

 private:
  // Hive's archive_and_reset_stats, at the state `g`.
  void archive(const global_properties_object& g);

  rc_parameters params_;
  std::uint32_t stats_blocks_;  // chain_options::rc_stats_blocks

  // pending
  rc_usage pending_usage_{};
  rc_stats pending_stats_;
  rc_usage last_usage_{};
  rc_charge_sample last_sample_;

  // applied
  rc_status status_;  // the counters; status() adds the pools
  std::uint64_t rejected_in_block_ = 0;
  rc_stats stats_;
  std::vector<rc_archive> archives_;
  rc_reference_costs reference_{};
  std::uint64_t rejected_at_archive_ = 0;  // status_.rejected at the last archive
  std::uint32_t archive_first_ = 0;        // the first block of the open archive; 0: none yet
};

}  // namespace apiary::core
