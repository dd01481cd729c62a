// transaction_tap: a transaction_sink between the colony and the writer queue that keeps what
// --dump-transactions and --dump-blocks write, and what --audit checks the dedup index
// against. It exists only when one of them is asked for, so a plain run submits straight
// into the queue.
//
//   submit     (producer threads) keeps the first `sample_limit` transactions (a mutex,
//              taken only until the sample is full), then forwards the transaction with a
//              completion that relays to the producer's own: one relay slot per distinct
//              completion (the colony has one per producer thread), registered on first use.
//   relay      (writer thread) records the outcome of sampled transactions and, while blocks
//              are being captured, the accepted transactions in order, then calls the
//              producer's completion.
//   on_block   (writer thread, from the block callback) rebuilds the block just applied: it
//              is the prefix of (pending after the previous block ++ accepted since) that the
//              block's transaction count says. Cheap (shared pointers), and only for the
//              captured blocks.
//   write_*    (after the writer and the colony are joined) stream JSON lines to a file.
//
// Lifetime: the relays point into the tap, so it must outlive every completion the queue
// calls (declare it before the colony and the writer).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/submission.hpp"
#include "apiary/queen/block_stats.hpp"
#include "apiary/queen/tx_timing.hpp"

namespace apiary::harness {

class transaction_tap final : public core::transaction_sink {
 public:
  static constexpr std::size_t max_relays = 512;

  // sample_limit: transactions to keep (0: none); block_limit: measured blocks to capture;
  // record_accepted: keep the id and expiration of every accepted transaction (--audit).
  // The chain is the one the writer drives (read on the writer thread only).
  transaction_tap(core::transaction_sink& next, const core::chain& chain, std::size_t sample_limit,
                  std::size_t block_limit, bool record_accepted = false);
  transaction_tap(const transaction_tap&) = delete;
  transaction_tap& operator=(const transaction_tap&) = delete;

  using core::transaction_sink::submit;
  bool submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent intent) override;

  // Writer thread, in the block callback, after every block. `measured`: the block counts
  // (blocks are captured from the first measured one on).
  void on_block(const queen::block_record& r, const core::chain& chain, bool measured);

  struct sampled {
    core::full_transaction_ptr tx;
    // reject::count_ until the outcome comes (reject::shutdown when the run stopped first).
    core::reject outcome = core::reject::count_;
  };
  struct captured_block {
    std::uint32_t num = 0;
    core::block_id previous;
    core::block_id id;  // as the chain recorded it
    core::time_point_sec timestamp;
    std::vector<core::full_transaction_ptr> transactions;
  };

  struct accepted_id {
    core::transaction_id id;
    core::time_point_sec expiration;
  };

  // Any thread: appends to `out` the records of sampled transactions (one lock per call).
  void select_sampled(std::span<const queen::tx_timing> records, std::vector<queen::tx_timing>& out);

  // After the run (no thread submits or completes any more, so the sample needs no lock).
  const std::vector<sampled>& samples() const APIARY_NO_THREAD_SAFETY_ANALYSIS { return samples_; }
  const std::vector<accepted_id>& accepted_ids() const { return accepted_ids_; }
  const std::vector<captured_block>& blocks() const { return blocks_; }

 private:
  struct relay_slot {
    transaction_tap* tap = nullptr;
    core::tx_completion inner;
  };
  static void relay(void* ctx, const core::full_transaction& tx, core::reject outcome);
  relay_slot* slot_for(const core::tx_completion& done);

  core::transaction_sink& next_;
  const core::chain& chain_;
  const std::size_t sample_limit_;
  const std::size_t block_limit_;

  // Relay slots: written once under relay_mutex_, published by relay_count_.
  core::mutex relay_mutex_;
  relay_slot relays_[max_relays];
  std::atomic<std::size_t> relay_count_{0};

  // The sample: filled by producers; outcomes set by the writer.
  core::mutex sample_mutex_;
  std::vector<sampled> samples_ APIARY_GUARDED_BY(sample_mutex_);
  std::unordered_set<core::transaction_id> sample_ids_ APIARY_GUARDED_BY(sample_mutex_);
  std::atomic<bool> sample_full_{false};
  std::atomic<std::size_t> outcomes_missing_{0};

  // Writer thread only (and the constructor, before the writer starts).
  const bool record_accepted_;
  std::vector<accepted_id> accepted_ids_;
  bool tracking_ = false;  // pending_ and accepted_ follow the chain: blocks left to capture
  std::vector<core::full_transaction_ptr> pending_;
  std::vector<core::full_transaction_ptr> accepted_;
  core::block_id head_;
  std::vector<captured_block> blocks_;
};

// A sampled transaction's moments (queen/tx_timing.hpp) by its id and whether it was
// accepted, or nullptr when it has none (still pending, or never pushed), and the steady
// time they are written relative to.
struct dump_timings {
  std::function<const queen::tx_timing*(const core::transaction_id&, bool accepted)> find;
  std::int64_t origin_ns = 0;
};

// JSON lines, one per sampled transaction: its position, outcome, id, packed size, its
// moments in microseconds since the origin (intended_us, submitted_us, accepted_us, then
// included_us or rejected_us; null when it has none), signer public keys (recovered from its
// signatures), packed bytes in hex and Hive JSON form.
// Returns how many lines were written; throws std::runtime_error naming the path.
std::size_t write_transaction_dump(const std::string& path, const std::vector<transaction_tap::sampled>& samples,
                                   const dump_timings& timings);
// JSON lines, one per captured block: number, id, size, transaction count, witness and its
// public key, packed bytes in hex and the block in the block API's JSON form. The header is
// signed again with the chain's witness key (signatures are deterministic) and its id
// checked against the chain's.
std::size_t write_block_dump(const std::string& path, const std::vector<transaction_tap::captured_block>& blocks,
                             const core::chain& chain);

}  // namespace apiary::harness
