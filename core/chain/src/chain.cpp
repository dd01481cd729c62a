#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <variant>

#include <boost/tuple/tuple.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "chain_evaluators.hpp"

// The buckets chain::prefetch_push loads (undo_index_detail::bind_buckets).
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::account_index::hashed_index_type<apiary::core::by_name>,
    &apiary::core::account_index::hashed_index_type<apiary::core::by_name>::buckets>;
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::comment_index::hashed_index_type<apiary::core::by_permlink>,
    &apiary::core::comment_index::hashed_index_type<apiary::core::by_permlink>::buckets>;
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::comment_vote_index::hashed_index_type<apiary::core::by_comment_voter>,
    &apiary::core::comment_vote_index::hashed_index_type<apiary::core::by_comment_voter>::buckets>;
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::comment_vote_index::hashed_index_type<apiary::core::by_comment>,
    &apiary::core::comment_vote_index::hashed_index_type<apiary::core::by_comment>::buckets>;

#ifndef APIARY_PLANT_PUSH_ROUNDS
#define APIARY_PLANT_PUSH_ROUNDS 0
#endif

namespace apiary::core {

namespace {

constexpr std::uint32_t plant_push_rounds = APIARY_PLANT_PUSH_ROUNDS;

// The planted work (planted_push_rounds): a chain of dependent multiply-adds the compiler
// may neither fold nor drop (the empty asm takes and gives back the value each round).
[[maybe_unused]] void plant_work(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint32_t i = 0; i < plant_push_rounds; ++i) {
    x = x * 0x9E3779B97F4A7C15ULL + i;
    asm volatile("" : "+r"(x));
  }
}

std::uint32_t prefix_of(const block_id& id) {
  std::uint32_t p;
  std::memcpy(&p, id.begin() + 4, 4);
  return p;
}

}  // namespace

chain::chain(chain_options options, const std::function<bool()>& cancelled, std::span<const account_keys> keys)
    : chain(std::move(options), empty_state{}) {
  build_genesis(cancelled, keys);
  start_pending();
}

chain::chain(chain_options options, empty_state /*unused*/)
    : chain(std::move(options), std::unique_ptr<state_region>()) {}

chain::chain(chain_options options, std::unique_ptr<state_region> region)
    : options_(std::move(options)),
      rc_books_(options_),
      region_(region || options_.memory != state_memory::mapped ? std::move(region) : state_region::make()),
      db_(options_.db, region_.get()),
      accounts_(db_.add_index<account_index>()),
      comments_(db_.add_index<comment_index>()),
      votes_(db_.add_index<comment_vote_index>()),
      summaries_(db_.add_index<block_summary_index>()),
      globals_(db_.add_index<global_properties_index>()),
      dedup_(options_.dedup, db_.add_index<transaction_index>(), options_.expected_transaction_ids),
      counter_(options_.custom_ops, db_.add_index<custom_op_counter_index>()),
      rc_(options_.rc, accounts_),
      witness_key_(private_key::from_login(options_.witness, key_role::active, options_.key_password)) {
  if (options_.expected_comments != 0) comments_.reserve<by_permlink>(options_.expected_comments);
}

chain::~chain() = default;

// ---- queries ----------------------------------------------------------------------------

std::uint32_t chain::head_block_num() const { return globals_.get(0).head_block_number; }
const block_id& chain::head_block_id() const { return globals_.get(0).head_block_id; }
time_point_sec chain::head_block_time() const { return globals_.get(0).time; }

const account_object* chain::find_account(const account_name& name) const { return accounts_.find<by_name>(name); }

const comment_object* chain::find_comment(const account_name& author, std::string_view permlink) const {
  return comments_.find<by_permlink>(boost::make_tuple(author, permlink));
}

bool chain::is_known_transaction(const transaction_id& id) const { return dedup_.contains(id); }

std::uint32_t chain::custom_ops_in_block(const account_name& account) const { return counter_.in_block(account); }

std::int64_t chain::total_hive() const {
  std::int64_t sum = 0;
  for (const auto& a : accounts_.indices()) sum += a.hive;
  return sum;
}

std::int64_t chain::rc_mana(const account_name& account) const {
  const account_object* a = find_account(account);
  return a == nullptr ? 0 : rc_.available(*a, head_block_time());
}

rc_status chain::rc() const { return rc_books_.status(globals_.get(0)); }

std::int64_t chain::total_hbd() const {
  std::int64_t sum = 0;
  for (const auto& a : accounts_.indices()) sum += a.hbd;
  return sum;
}

// ---- pushing transactions ---------------------------------------------------------------

reject chain::check_rules(const full_transaction& ft) const {
  const signed_transaction& tx = ft.tx();
  if (ft.packed_size() > chain_limits::max_transaction_size) return reject::oversize;
  if (tx.operations.empty()) return reject::no_operations;
  const time_point_sec now = head_block_time();
  if (tx.expiration <= now) return reject::expired;
  if (tx.expiration.secs > now.secs + chain_limits::max_expiration_secs) return reject::expiration_too_far;
  if (options_.check_tapos) {
    const block_summary_object* tapos = summaries_.find(tx.ref_block_num);
    if (tapos == nullptr || prefix_of(tapos->block) != tx.ref_block_prefix) return reject::unknown_reference_block;
  }
  if (dedup_.contains(ft.id())) return reject::duplicate;
  return options_.check_authority ? check_authority(ft) : reject::none;
}

namespace {

struct required_authority {
  account_name account;
  bool active;  // otherwise posting
};
using required_list = boost::container::small_vector<required_authority, 2>;

void add_required(const operation& op, required_list& out) {
  std::visit(
      [&out](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, vote_operation>) {
          out.push_back({o.voter, false});
        } else if constexpr (std::is_same_v<T, comment_operation> || std::is_same_v<T, comment_options_operation>) {
          out.push_back({o.author, false});
        } else if constexpr (std::is_same_v<T, transfer_operation>) {
          out.push_back({o.from, true});
        } else if constexpr (std::is_same_v<T, custom_json_operation>) {
          for (const auto& a : o.required_auths) out.push_back({a, true});
          for (const auto& a : o.required_posting_auths) out.push_back({a, false});
        }
      },
      op);
}

}  // namespace

reject chain::check_authority(const full_transaction& ft) const {
  const signed_transaction& tx = ft.tx();
  boost::container::small_vector<public_key, 2> keys;
  if (options_.signers == signer_source::attached && !ft.signer_keys().empty()) {
    keys.assign(ft.signer_keys().begin(), ft.signer_keys().end());
  } else {
    for (const compact_signature& sig : tx.signatures) {
      // Hive accepts only canonical signatures (a malleated one would give the same
      // transaction a second valid form).
      if (!is_canonical(sig)) return reject::bad_signature;
      auto k = recover_public_key(sig, ft.sig_digest());
      if (!k) return reject::bad_signature;
      keys.push_back(*k);
    }
  }
  required_list required;
  for (const operation& op : tx.operations) add_required(op, required);
  auto signed_by = [&keys](const public_key& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  for (const required_authority& r : required) {
    const account_object* a = find_account(r.account);
    if (a == nullptr) return reject::unknown_account;
    // Posting authority is also satisfied by the active key, as in Hive.
    if (!signed_by(a->active_key) && (r.active || !signed_by(a->posting_key))) return reject::missing_authority;
  }
  return reject::none;
}

namespace {

// The accounts and comments an operation looks up first, each given to `account` or
// `comment` (author, permlink).
template <class Account, class Comment>
void for_each_lookup(const operation& op, Account&& account, Comment&& comment) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, vote_operation>) {
          account(o.voter);
          comment(o.author, o.permlink);
        } else if constexpr (std::is_same_v<T, comment_operation>) {
          account(o.author);
          if (!o.parent_author.empty()) comment(o.parent_author, o.parent_permlink);
        } else if constexpr (std::is_same_v<T, comment_options_operation>) {
          comment(o.author, o.permlink);
        } else if constexpr (std::is_same_v<T, transfer_operation>) {
          account(o.from);
          account(o.to);
        } else if constexpr (std::is_same_v<T, custom_json_operation>) {
          for (const auto& a : o.required_auths) account(a);
          for (const auto& a : o.required_posting_auths) account(a);
        }
      },
      op);
}

}  // namespace

void chain::prefetch_push(const full_transaction& ft, int stage) const {
  if (stage == 1) {
    dedup_.prefetch_bucket(ft.id());
    return;
  }
  if (stage == 2) {
    dedup_.prefetch_bucket_head(ft.id());
    for (const operation& op : ft.tx().operations)
      for_each_lookup(
          op, [this](const account_name& a) { accounts_.prefetch_bucket<by_name>(a); },
          [this](const account_name& a, std::string_view p) {
            comments_.prefetch_bucket<by_permlink>(boost::make_tuple(a, p));
          });
    return;
  }
  if (stage == 4) {
    // A vote's own lookups are keyed by the ids of its voter and comment, both loaded by now.
    for (const operation& op : ft.tx().operations) {
      const auto* vote = std::get_if<vote_operation>(&op);
      if (vote == nullptr) continue;
      const account_object* voter = find_account(vote->voter);
      const comment_object* comment = find_comment(vote->author, vote->permlink);
      if (voter == nullptr || comment == nullptr) continue;
      votes_.prefetch_bucket<by_comment_voter>(boost::make_tuple(comment->id, voter->id));
      votes_.prefetch_bucket<by_comment>(comment->id);
    }
    return;
  }
  dedup_.prefetch_bucket_next(ft.id());
  for (const operation& op : ft.tx().operations)
    for_each_lookup(
        op, [this](const account_name& a) { accounts_.prefetch_bucket_head<by_name>(a); },
        [this](const account_name& a, std::string_view p) {
          comments_.prefetch_bucket_head<by_permlink>(boost::make_tuple(a, p));
        });
}

reject chain::push_transaction(const full_transaction_ptr& tx, bool may_be_left_out) {
  const reject r = push(tx, may_be_left_out);
  if (r == reject::insufficient_rc) rc_books_.count_rejection();
  return r;
}

std::uint32_t planted_push_rounds() noexcept { return plant_push_rounds; }

reject chain::push(const full_transaction_ptr& tx, bool may_be_left_out) {
  if constexpr (plant_push_rounds > 0) plant_work(tx->packed_size());
  reject r = check_rules(*tx);
  if (r != reject::none) return r;
  squash_last_session();
  database::session s = db_.start_undo_session();
  counter_.begin_transaction();
  r = apply_operations(*tx, true);
  // Charged after the operations, as Hive's post-apply: the rejection reason of a transaction
  // that breaks a rule is that rule, whatever its payer's mana.
  rc_usage used{};
  rc_charge_sample sample;
  if (r == reject::none) r = charge_rc(*tx, true, &used, rc_books_.keeps_stats() ? &sample : nullptr);
  if (r != reject::none) return r;  // the session's destructor undoes what was applied
  dedup_.add_pending_before_squash(*tx);
  if (may_be_left_out && can_reuse_pending()) {
    last_session_ = std::move(s);
    rc_books_.remember_last(used, sample);
  } else {
    s.squash();
  }
  dedup_.add_pending_after_squash(tx->id());
  counter_.commit_transaction();
  rc_.commit_transaction();
  pending_.push_back(tx);
  rc_books_.add_pending(used, sample);
  return reject::none;
}

reject chain::charge_rc(const full_transaction& tx, bool pushing, rc_usage* used, rc_charge_sample* sample) {
  const std::optional<account_name> payer_name = rc_payer(tx.tx());
  if (!payer_name) return reject::invalid_operation;  // the operations already refused it
  const account_object* payer = find_account(*payer_name);
  if (payer == nullptr) return reject::unknown_account;
  // Transactions see the head block's time, in a block as when pushed (as in Hive), so a
  // block's charges equal the ones its transactions paid when they were pushed.
  const time_point_sec now = head_block_time();
  const global_properties_object& g = globals_.get(0);
  const rc_parameters& params = rc_books_.params();
  const rc_usage usage = count_resources(tx.tx(), tx.packed_size(), now, params);
  rc_usage costs;
  const std::int64_t cost = rc_cost(usage, g.rc_pools, g.total_vesting, params, costs);
  if (used != nullptr)
    for (std::size_t i = 0; i < rc_resource_count; ++i) (*used)[i] += usage[i];
  if (sample == nullptr) return pushing ? rc_.charge_pending(*payer, cost, now) : rc_.charge_block(*payer, cost, now);
  // The statistics take the payer's mana before the charge from the charge itself.
  std::int64_t mana = 0;
  const reject r = pushing ? rc_.charge_pending(*payer, cost, now, &mana) : rc_.charge_block(*payer, cost, now, &mana);
  if (r == reject::none)
    *sample = make_rc_sample(rc_op_kind_of(tx.tx()), payer->vesting, mana, costs, usage, rc_books_.reference());
  return r;
}

reject chain::apply_operations(const full_transaction& tx, bool pushing) {
  for (const operation& op : tx.tx().operations) {
    reject r = apply(op, pushing);
    if (r != reject::none) return r;
  }
  return reject::none;
}

reject chain::apply(const operation& op, bool pushing) {
  return std::visit(
      [&](const auto& o) -> reject {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, vote_operation>)
          return apply_vote(o);
        else if constexpr (std::is_same_v<T, comment_operation>)
          return apply_comment(o, pushing);
        else if constexpr (std::is_same_v<T, comment_options_operation>)
          return apply_comment_options(o);
        else if constexpr (std::is_same_v<T, transfer_operation>)
          return apply_transfer(o);
        else
          return apply_custom_json(o, pushing);
      },
      op);
}

// ---- blocks -----------------------------------------------------------------------------

full_block chain::generate_block(std::uint32_t size_limit, std::uint32_t max_transactions,
                                 std::size_t* size_out) const {
  full_block b;
  b.header.previous = head_block_id();
  b.header.timestamp = head_block_time() + chain_limits::block_interval_secs;
  b.header.witness = account_name(options_.witness);
  // The header's size does not depend on its contents' values, only on the witness name.
  std::size_t size = packed_size(b.header);
  std::size_t count = 0;
  for (const full_transaction_ptr& tx : pending_) {
    if (max_transactions != 0 && count == max_transactions) break;
    // In order: a later transaction may depend on an earlier one, so the block is always a
    // prefix of the pending list and never re-executes anything.
    std::size_t next = size + tx->packed_size();
    if (next + varint_size(static_cast<std::uint32_t>(count + 1)) > size_limit) break;
    size = next;
    ++count;
  }
  b.transactions.assign(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(count));
  if (size_out != nullptr) *size_out = size + varint_size(static_cast<std::uint32_t>(count));
  b.header.transaction_merkle_root = b.compute_merkle_root();
  b.header.witness_signature = witness_key_.sign(header_digest(b.header));
  return b;
}

bool chain::can_reuse_pending() const {
  return options_.reuse_pending && rc_.matches_block_state() && counter_.matches_block_state();
}

void chain::squash_last_session() {
  if (last_session_.active()) last_session_.squash();
}

full_transaction_ptr chain::take_back_last() {
  last_session_.undo();
  full_transaction_ptr tx = std::move(pending_.back());
  pending_.pop_back();
  dedup_.take_back_pending(tx->id());
  counter_.take_back_transaction();
  rc_books_.take_back_last();
  return tx;
}

void chain::clear_pending_state() {
  if (last_session_.active()) last_session_.undo();
  pending_session_.undo();
  forget_pending_bookkeeping();
}

void chain::forget_pending_bookkeeping() noexcept {
  dedup_.clear_pending();
  counter_.reset();
  rc_.reset();
  rc_books_.forget_pending();
}

void chain::start_pending() { pending_session_ = db_.start_undo_session(); }

void chain::clear_pending() {
  pending_.clear();
  clear_pending_state();
  start_pending();
}

void chain::apply_block_transactions(const full_block& block, block_result& result, rc_stats& stats) {
  rc_usage used{};
  const bool keep_stats = rc_books_.keeps_stats();
  for (const full_transaction_ptr& tx : block.transactions) {
    reject r = apply_operations(*tx, false);
    rc_charge_sample sample;
    if (r == reject::none) r = charge_rc(*tx, false, &used, keep_stats ? &sample : nullptr);
    if (r != reject::none)
      throw std::invalid_argument("block " + std::to_string(block.header.block_num()) + ": transaction " +
                                  to_hex(tx->id()) + " does not apply: " + std::string(reject_name(r)));
    dedup_.record_included(*tx);
    if (keep_stats) stats.add(sample);
    ++result.applied;
  }
  // The pools move on once per block, after its charges: every price within a block is the
  // same, whether paid when pushed or when the block is applied.
  globals_.modify(globals_.get(0), [&](global_properties_object& g) {
    g.rc_pools = rc_next_pools(g.rc_pools, used, rc_books_.params());
  });
}

void chain::close_block(const full_block& block, block_result& result, database::session& block_session) {
  const block_id id = compute_block_id(block.header);
  const std::uint32_t num = block.header.block_num();
  globals_.modify(globals_.get(0), [&](global_properties_object& g) {
    g.head_block_number = num;
    g.head_block_id = id;
    g.time = block.header.timestamp;
  });
  summaries_.modify(summaries_.get(num & 0xffff), [&](block_summary_object& s) { s.block = id; });
  result.paid_out = pay_out_comments();
  result.pruned = dedup_.prune_expired(head_block_time());
  if (!block_session.active()) return;
  const std::int64_t revision = block_session.revision();
  block_session.push();
  if (!options_.apply_block_in_session)
    db_.commit(revision);  // the pending session became the block's: its changes stay
  else if (num > options_.reversible_blocks)
    db_.commit(static_cast<std::int64_t>(num - options_.reversible_blocks));
}

block_result chain::apply_block(const full_block& block) {
  if (block.header.previous != head_block_id())
    throw std::invalid_argument("block " + std::to_string(block.header.block_num()) + " does not build on head block " +
                                std::to_string(head_block_num()));
  if (block.header.timestamp <= head_block_time())
    throw std::invalid_argument("block " + std::to_string(block.header.block_num()) +
                                " is not later than the head block");
  // A block of the pending list, or of all but the last one when that one kept its own
  // session, keeps the pending state.
  const std::size_t n = block.transactions.size();
  if (can_reuse_pending() && std::equal(block.transactions.begin(), block.transactions.end(), pending_.begin(),
                                        pending_.begin() + static_cast<std::ptrdiff_t>(std::min(n, pending_.size())))) {
    if (n == pending_.size()) {
      squash_last_session();
      return apply_pending_as_block(block, nullptr);
    }
    if (n + 1 == pending_.size() && last_session_.active()) return apply_pending_as_block(block, take_back_last());
  }
  block_result result;
  std::vector<full_transaction_ptr> carried = std::move(pending_);
  pending_.clear();
  clear_pending_state();
  rc_stats block_rc;

  // Until the pending session is open again nothing may escape: a failure puts the pending
  // transactions back, so the session stack keeps its shape (blocks, then pending).
  try {
    database::session block_session;
    if (options_.apply_block_in_session) block_session = db_.start_undo_session();
    apply_block_transactions(block, result, block_rc);
    close_block(block, result, block_session);
  } catch (...) {
    // The block session (if any) is undone by now; re-push what was pending.
    start_pending();
    for (const full_transaction_ptr& tx : carried) push(tx);
    throw;
  }
  rc_books_.finish_block(block_rc, globals_.get(0));

  start_pending();
  // Usually the block is a prefix of the pending list (this chain produced it): those are
  // skipped without a lookup. Otherwise the included ids are looked up.
  std::size_t prefix = 0;
  while (prefix < carried.size() && prefix < block.transactions.size() && carried[prefix] == block.transactions[prefix])
    ++prefix;
  boost::unordered_flat_set<transaction_id> included;
  if (prefix < block.transactions.size()) {
    included.reserve(block.transactions.size());
    for (const auto& tx : block.transactions) included.insert(tx->id());
  }
  for (std::size_t i = prefix; i < carried.size(); ++i) {
    const full_transaction_ptr& tx = carried[i];
    if (!included.empty() && included.contains(tx->id())) continue;
    if (push(tx) == reject::none)
      ++result.reapplied;
    else
      ++result.dropped;
  }
  return result;
}

// The block's transactions were applied, in this order, on the state the block builds on,
// when they were pushed; applying them again after undoing that could only write the same
// state. The pending session becomes the block's session, and what applying a block does
// beyond its transactions follows: the ids become included, the pools move on by the
// transactions' usage, the head moves.
block_result chain::apply_pending_as_block(const full_block& block, const full_transaction_ptr& left_out) {
  block_result result;
  result.applied = static_cast<std::uint32_t>(pending_.size());
  result.reused_pending = true;
  std::vector<full_transaction_ptr> carried = std::move(pending_);
  pending_.clear();
  const rc_stats block_rc = rc_books_.pending_stats();
  try {
    database::session block_session = std::move(pending_session_);
    dedup_.include_pending(carried);
    globals_.modify(globals_.get(0), [&](global_properties_object& g) {
      g.rc_pools = rc_next_pools(g.rc_pools, rc_books_.pending_usage(), rc_books_.params());
    });
    forget_pending_bookkeeping();
    close_block(block, result, block_session);
  } catch (...) {
    // The session (the pending one) is undone by now, with everything the block wrote:
    // start over from the block's parent and push the transactions again.
    forget_pending_bookkeeping();
    start_pending();
    for (const full_transaction_ptr& tx : carried) push(tx);
    if (left_out) push(left_out);
    throw;
  }
  rc_books_.finish_block(block_rc, globals_.get(0));
  start_pending();
  if (left_out) (push(left_out) == reject::none ? result.reapplied : result.dropped) += 1;
  return result;
}

}  // namespace apiary::core
