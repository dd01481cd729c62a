// chain: the state core the queen drives. It owns the database and follows Hive's flow:
//
//   push_transaction  checks the transaction rules, then applies it in its own undo session
//                     nested in the pending session: squashed into it on success, undone on
//                     failure, so a rejected transaction leaves no trace in state, in the
//                     dedup sets or in the custom-op counters.
//   generate_block    takes the pending transactions in order, without re-executing them,
//                     until the next one would not fit; fills in the header and signs it.
//   apply_block       undoes the pending state, applies the block (in an undo session or
//                     not, a switch), records it as head, pays out the comments due
//                     (cashout.hpp: they and their votes leave), prunes expired ids,
//                     then re-applies the pending transactions the block did not include
//                     with fresh custom-op counters. A block that is exactly the pending
//                     list (chain_options::reuse_pending) keeps the pending state instead:
//                     its transactions already applied, in that order, on that state.
//
// Resource credits (rc.hpp): push_transaction charges the payer after the operations applied,
// inside the transaction's session, and rejects with insufficient_rc when its mana is short;
// apply_block charges the block's transactions again (the pending charges were undone with
// the pending state) and then moves the resource pools on by the block's usage. Hive's RC
// statistics (rc_stats.hpp) count the blocks' transactions as apply_block charges them; a
// block that keeps the pending state takes the samples its transactions' pushes recorded,
// which are the same (same prices, same mana before each charge), so the statistics do not
// depend on the switches. At every multiple of chain_options::rc_stats_blocks the block's
// statistics are archived before the pending transactions are pushed again. rc_books holds
// that bookkeeping (the parameters, the pending usage and samples, the counters, statistics
// and archives); the block flow here keeps it in step with the undo sessions.
//
// The three switches that decide where per-block bookkeeping lives each have one class, the
// only place that reads them: dedup_index (chain_options::dedup, where transaction ids live),
// custom_op_counter (chain_options::custom_ops, where the custom-op counts live) and
// rc_ledger (chain_options::rc, where pending RC charges live).
// A chain starts from its genesis, or from a state snapshot another chain wrote
// (chain_snapshot.hpp): the same state, the same next ids, its blocks all committed.
// Sources: chain.cpp holds the rules and the block flow, and includes the operation
// evaluators from chain_evaluators.hpp; chain_genesis.cpp the genesis state; chain_audit.cpp
// audit() and state_digest(); chain_snapshot.cpp the snapshots.
//
// Time is simulated: each block is one 3-second slot after its parent.
// Thread safety: none; one writer thread owns the chain.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/chain/custom_op_counter.hpp"
#include "apiary/core/chain/dedup_index.hpp"
#include "apiary/core/chain/genesis_additions.hpp"
#include "apiary/core/chain/genesis_keys.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/chain/rc_books.hpp"
#include "apiary/core/chain/rc_ledger.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/state/database.hpp"
#include "apiary/core/state/state_region.hpp"

namespace apiary::core {

// What chain::audit() found: one line per broken invariant (empty: all hold), and what it
// counted.
struct chain_audit {
  std::vector<std::string> violations;
  std::size_t known_transactions = 0;  // ids the dedup check knows: included and unexpired, plus pending
  std::size_t undo_depth = 0;          // open undo sessions
  bool ok() const { return violations.empty(); }
};

struct block_result {
  std::uint32_t applied = 0;    // transactions in the block
  std::uint32_t reapplied = 0;  // pending transactions carried over to the next block
  std::uint32_t dropped = 0;    // pending transactions that no longer applied (expired, ...)
  std::uint32_t pruned = 0;     // expired ids removed from the transaction index
  std::uint32_t paid_out = 0;   // comments paid out (and removed with their votes)
  bool reused_pending = false;  // the block was the pending list and kept its state
};

// How much of the state each index holds (chain::census): what bounds the memory of a long
// run once transaction ids expire and comments pay out.
struct index_census {
  const char* name;
  std::size_t objects = 0;
  std::size_t bytes = 0;  // object memory (undo_index::bytes)
};
struct state_census {
  // In this order; empty until chain::census() fills them.
  std::array<index_census, 6> indexes{
      {{"accounts"}, {"comments"}, {"votes"}, {"transactions"}, {"block_summaries"}, {"custom_op_counters"}}};
  std::size_t pending_ids = 0;        // the volatile set of pending transaction ids (split dedup)
  std::size_t object_pool_bytes = 0;  // chunks the object pool took (0 without pool_objects)
  std::size_t undo_pool_bytes = 0;
  std::uint64_t comments_paid = 0;  // since genesis
  std::int64_t reward_balance = 0;  // the reward fund, HIVE thousandths
};

class chain {
 public:
  // Builds the genesis. Account i takes keys[i] when `keys` holds it (the caller derived
  // them before, derive_genesis_keys), else its keys are derived here: about 25 µs of CPU
  // per account, seconds for 100,000. `cancelled` (optional) is called every few hundred
  // accounts, from several threads at once: when it returns true, the constructor stops
  // and throws genesis_cancelled.
  explicit chain(chain_options options, const std::function<bool()>& cancelled = {},
                 std::span<const account_keys> keys = {});
  // A chain whose state is the snapshot's (chain_snapshot.hpp): every object with its id, every
  // index's next id, the head; no pending transaction, no reversible block (the database's
  // revision is the head's, so the blocks applied next become reversible as usual). The whole
  // file is checked first (check_snapshot), then the options: those of
  // chain_options::state_options must equal the snapshot's. The chain's own switches may differ
  // from the writer's. Throws snapshot_error; `info` (optional) receives the header.
  static std::unique_ptr<chain> from_snapshot(chain_options options, std::span<const std::uint8_t> file,
                                              snapshot_info* info = nullptr);
  // A chain whose state is a state file's (chain::write_state), mapped copy-on-write: nothing
  // is rebuilt, and the file never changes. options.memory must be mapped; the state options
  // and the database's pool switches must be the file's. Throws state_region_error (the file,
  // its header, its address) or snapshot_error (its layout id or options).
  static std::unique_ptr<chain> open_state(chain_options options, const std::filesystem::path& file,
                                           const state_region::open_options& how, snapshot_info* info = nullptr);
  // Checks a whole state file without opening a chain on it: its header, the allocator's
  // bookkeeping, this build's layout id and every byte against the content digest (read in
  // chunks, never prefaulted). Returns its header; throws state_region_error or
  // snapshot_error naming what is wrong. Takes the process's one state region while it runs.
  static snapshot_info verify_state(const std::filesystem::path& file);
  ~chain();
  chain(const chain&) = delete;
  chain& operator=(const chain&) = delete;

  // Adds accounts and comments to the genesis (genesis_additions.hpp), before any block or
  // transaction: head block 0, nothing pending (else std::logic_error). An account starts
  // with full voting mana and resource credits, keys derived as the witness's are
  // (private_key::from_login with the key password), and its balances and vesting join the
  // supply and the total vesting; a comment is created at the genesis time. Throws
  // std::invalid_argument naming the first entry that cannot be added (an account that
  // exists, a comment that exists, whose author or parent does not, an empty permlink, a
  // negative amount, a sum past 64 bits); the entries before it stay (basic).
  void add_to_genesis(const genesis_additions& add);

  // Returns reject::none when the transaction was accepted into the pending state.
  // may_be_left_out: the caller may leave this transaction out of the next block (it does not
  // fit); when accepted, its changes stay in their own undo session above the pending one
  // until the next push or block, so a block of the pending list without it can still keep
  // the pending state (reuse_pending) and only this one is applied again.
  reject push_transaction(const full_transaction_ptr& tx, bool may_be_left_out = false);
  // Batched lookups: starts loading what pushing tx will look up in tables larger than the
  // caches, in stages a caller runs a few transactions ahead of the push (stage 1 first), each
  // reading only what the one before loaded:
  //   1  the id's bucket in the id table;
  //   2  the first id in that bucket, the buckets of the accounts and comments the operations
  //      name;
  //   3  the node after that first id (where a lookup that misses it reads whether the bucket
  //      ends), and the first account and comment in their buckets, whole;
  //   4  a vote's buckets in the votes' tables, by its comment and voter (found by now).
  // The third stage pays on a state larger than the caches (docs/measured/scale.md); on a small
  // genesis it measured no faster (docs/measured/profile.md). Hints only: nothing changes, and
  // a stage left out costs only time.
  static constexpr int prefetch_stages = 4;
  void prefetch_push(const full_transaction& tx, int stage) const;

  // The next block from the pending transactions, in order, as long as the block stays
  // within size_limit bytes and (when not 0) max_transactions. Does not change the chain.
  // When size_out is not null it receives the block's packed size, which the selection
  // computes anyway (full_block::packed_size would read every transaction again).
  full_block generate_block(std::uint32_t size_limit = chain_limits::max_block_size, std::uint32_t max_transactions = 0,
                            std::size_t* size_out = nullptr) const;
  // Applies a block built on the head. Its transactions are trusted as the producer's (not
  // re-validated): the block producer already applied them as pending, so no signature,
  // TaPoS, dedup or custom-op check and no JSON parsing; the evaluators' state lookups run.
  // Throws std::invalid_argument when the block does not build on the head or is not later
  // than it (nothing changed), or when one of its transactions does not apply: then, with
  // apply_block_in_session, the block is undone and the pending transactions are applied
  // again (strong); without it, what the block applied before the failing transaction
  // stays (basic). A block that holds exactly the pending transactions takes the pending
  // state as its own (reuse_pending): nothing is applied twice, the state is the same.
  block_result apply_block(const full_block& block);
  // Drops every pending transaction and undoes its changes (Hive's clear_pending): the state,
  // the dedup sets and the custom-op counters are as right after the last block.
  void clear_pending();

  std::uint32_t head_block_num() const;
  const block_id& head_block_id() const;
  time_point_sec head_block_time() const;
  std::size_t pending_count() const { return pending_.size(); }
  const std::vector<full_transaction_ptr>& pending() const { return pending_; }

  const chain_options& options() const { return options_; }
  const database& db() const { return db_; }
  const account_object* find_account(const account_name& name) const;
  const comment_object* find_comment(const account_name& author, std::string_view permlink) const;
  // Whether the id is pending or included and unexpired.
  bool is_known_transaction(const transaction_id& id) const;
  // This block's custom operations by the account so far (pending state).
  std::uint32_t custom_ops_in_block(const account_name& account) const;
  std::int64_t total_hive() const;  // sum over accounts, for conservation checks
  std::int64_t total_hbd() const;
  // The account's resource credits now: its manabar regenerated to the head block time, less
  // what its pending transactions owe (whatever the rc mode).
  std::int64_t rc_mana(const account_name& account) const;
  rc_status rc() const;
  // Hive's RC statistics of the blocks applied since the last archive, and the archives so
  // far, oldest first (one per chain_options::rc_stats_blocks blocks; none when that is 0).
  const rc_stats& rc_statistics() const { return rc_books_.stats(); }
  const std::vector<rc_archive>& rc_archives() const { return rc_books_.archives(); }
  // The effective RC parameters: rc_scaled(options().rc_params, options().rc_scale).
  const rc_parameters& rc_params() const { return rc_books_.params(); }
  // Object counts and bytes per index; cheap (no walk), any time on the owner thread.
  state_census census() const;
  // The share of accounts with vesting whose resource credits are under `percent` of their
  // maximum: over every account, or (max_samples > 0) about that many spread evenly by id.
  double rc_share_below(std::int64_t percent, std::size_t max_samples = 0) const;
  // A digest of every object in the state, to compare chains run with different switches
  // (state_digest.hpp: what it writes of each object, and the few fields it leaves out).
  sha256_digest state_digest() const;
  // Checks the invariants the chain can check on its own (a full walk of the state; for the
  // end of a run, not for hot paths):
  //   supply      HBD summed over the accounts equals genesis; HIVE in the accounts and the
  //               reward fund equals the supply, genesis plus each block's reward
  //   cashout     no comment is past its cashout time; every vote's comment exists
  //   sessions    open undo sessions: the pending one, plus one per reversible block when
  //               blocks apply in sessions
  //   dedup       every id in the transaction index is unexpired; the pending transactions
  //               are all known (in the volatile set or the index, by dedup mode), and
  //               nothing else is (dedup_index::audit)
  //   pending     every pending transaction is unexpired and unique (dedup_index::audit)
  //   custom ops  no account is above the per-block limit (custom_op_counter)
  //   rc          no account's mana below zero or above its vesting, the total vesting the
  //               sum of the accounts', every pool at most its maximum (rc_ledger)
  chain_audit audit() const;
  // Appends the state to `out` as a snapshot (chain_snapshot.hpp). Requires no pending
  // transaction (clear_pending() first: the pending changes are not the state's; a bug
  // otherwise). Reversible blocks are written as applied: a chain loaded from it has them
  // committed. Computes state_digest() for the header.
  void write_snapshot(out_buffer& out) const;
  // Writes the state to a state file (chain_snapshot.hpp): a mapped chain only, with no pending
  // transaction (clear_pending() first). The reversible blocks become permanent first, since a
  // state file holds no undo session. Throws state_region_error when the file cannot be written
  // (nothing is left under its name). Returns the state digest the header records.
  sha256_digest write_state(const std::filesystem::path& file);
  // The region a mapped chain lives in (null on the heap): its opening costs, its size.
  const state_region* region() const { return region_.get(); }

  const private_key& witness_key() const { return witness_key_; }

 private:
  // The chain tests break invariants on purpose, to see audit() catch each one.
  friend struct chain_test_access;

  // The indexes and the pieces beside them, empty: the constructor fills them from the
  // genesis, from_snapshot from a snapshot.
  struct empty_state {};
  chain(chain_options options, empty_state);
  // region: a state region already holding the database (open_state), or null to make one when
  // options.memory is mapped.
  chain(chain_options options, std::unique_ptr<state_region> region);
  void build_genesis(const std::function<bool()>& cancelled, std::span<const account_keys> keys);  // chain_genesis.cpp
  void load_snapshot(const snapshot_info& info, std::span<const std::uint8_t> file);               // chain_snapshot.cpp
  // Room for the hashed indexes of what grows with the chain (comments, votes) to take as many
  // again before they rehash, and state_id_buckets buckets an id (chain_snapshot.cpp).
  void make_room_to_grow();
  reject check_rules(const full_transaction& tx) const;
  reject check_authority(const full_transaction& tx) const;
  // push_transaction without the RC statistics
  reject push(const full_transaction_ptr& tx, bool may_be_left_out = false);
  // Whether the pending state can become a block's as it is (reuse_pending, and the modes
  // that keep pending bookkeeping in state as a block would leave it).
  bool can_reuse_pending() const;
  void squash_last_session();             // squashes the last transaction's own session, if open, into the pending one
  full_transaction_ptr take_back_last();  // undoes it and takes it off the pending list
  // Charges the transaction's payer (pushing: rc_ledger::charge_pending, else charge_block);
  // adds its usage to `used` when given; fills `sample` (when given) for the RC statistics.
  reject charge_rc(const full_transaction& tx, bool pushing, rc_usage* used = nullptr,
                   rc_charge_sample* sample = nullptr);
  void apply_block_transactions(const full_block& block, block_result& result, rc_stats& stats);
  // left_out: the last pending transaction, taken back out of the pending state first.
  block_result apply_pending_as_block(const full_block& block, const full_transaction_ptr& left_out);
  // The block is applied: it becomes the head, comments due pay out, expired ids go; then its
  // session (when open) is pushed and the blocks past the reversible ones committed.
  void close_block(const full_block& block, block_result& result, database::session& block_session);
  // pushing: a new transaction, validated and held to the custom-op limit; otherwise a
  // block's transaction, trusted (the JSON is not parsed again, the limit not enforced).
  reject apply_operations(const full_transaction& tx, bool pushing);
  reject apply(const operation& op, bool pushing);
  reject apply_vote(const vote_operation& op);
  reject apply_comment(const comment_operation& op, bool pushing);
  reject apply_comment_options(const comment_options_operation& op);
  reject apply_transfer(const transfer_operation& op);
  reject apply_custom_json(const custom_json_operation& op, bool pushing);
  void start_pending();
  void clear_pending_state();                                 // undoes the pending session, then forgets below
  void forget_pending_bookkeeping() noexcept;                 // the pending ids, custom-op counts, RC charges
  void audit_rc(std::vector<std::string>& violations) const;  // chain_audit.cpp
  // chain_cashout.cpp: the block's reward inflation, then the comments due pay out and leave.
  std::uint32_t pay_out_comments();
  void pay_out(const comment_object& c, std::int64_t reward);

  chain_options options_;
  rc_books rc_books_;                     // built from options_ first: it checks the RC parameters
  std::unique_ptr<state_region> region_;  // a mapped chain's, before the database that lives in it
  database db_;
  account_index& accounts_;
  comment_index& comments_;
  comment_vote_index& votes_;
  block_summary_index& summaries_;
  global_properties_index& globals_;
  dedup_index dedup_;          // transaction ids, pending and included; reads chain_options::dedup
  custom_op_counter counter_;  // the block's custom-op counts; reads chain_options::custom_ops
  rc_ledger rc_;               // pending RC charges; reads chain_options::rc
  private_key witness_key_;
  // The head the chain was built at (0 at genesis, a snapshot's head): the blocks after it are
  // the ones that may still be reversible (audit()).
  std::uint32_t first_block_ = 0;

  database::session pending_session_;
  std::vector<full_transaction_ptr> pending_;
  // The last pending transaction's own session, when pushed as may_be_left_out (its usage and
  // sample are rc_books_'s last ones).
  database::session last_session_;
};

// The rounds of work this build plants in every transaction push (the build option
// APIARY_PLANT_PUSH_ROUNDS; 0 unless set): a known slowdown of the writer's push path, for
// showing that a comparison finds one (docs/tools.md, "A planted slowdown"). A round is a
// multiply and an add, each on the result of the one before: about 5.4 instructions and 4
// cycles that touch no memory.
std::uint32_t planted_push_rounds() noexcept;

}  // namespace apiary::core
