#include "apiary/core/chain.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <boost/tuple/tuple.hpp>

#include "apiary/core/check.hpp"
#include "apiary/core/custom_json.hpp"
#include "apiary/core/hash.hpp"

namespace apiary::core {

namespace {

constexpr std::int64_t max_mana = 10'000'000;           // per account, arbitrary units
constexpr std::uint32_t mana_regen_secs = 5 * 24 * 3600;  // full regeneration, as Hive
constexpr std::uint8_t max_vote_changes = 5;

void regenerate(manabar& m, time_point_sec now) {
  if (now.secs <= m.last_update.secs) return;
  std::int64_t elapsed = now.secs - m.last_update.secs;
  m.current = std::min(max_mana, m.current + max_mana * elapsed / mana_regen_secs);
  m.last_update = now;
}

std::uint32_t prefix_of(const block_id& id) {
  std::uint32_t p;
  std::memcpy(&p, id.begin() + 4, 4);
  return p;
}

}  // namespace

chain::chain(chain_options options, const std::function<bool()>& cancelled)
    : options_(std::move(options)),
      db_(options_.db),
      accounts_(db_.add_index<account_index>()),
      comments_(db_.add_index<comment_index>()),
      votes_(db_.add_index<comment_vote_index>()),
      summaries_(db_.add_index<block_summary_index>()),
      globals_(db_.add_index<global_properties_index>()),
      transactions_(db_.add_index<transaction_index>()),
      counters_(db_.add_index<custom_op_counter_index>()),
      witness_key_(private_key::from_login(options_.witness, key_role::active, options_.key_password)) {
  build_genesis(cancelled);
  start_pending();
}

chain::~chain() = default;

// ---- genesis ----------------------------------------------------------------------------

void chain::build_genesis(const std::function<bool()>& cancelled) {
  const std::uint32_t n = options_.genesis_accounts;
  std::vector<account_name> names(n);
  std::vector<public_key> posting(n), active(n);
  for (std::uint32_t i = 0; i < n; ++i) names[i] = genesis_account_name(options_.account_prefix, i);

  // Deriving a public key is an EC multiplication: spread the accounts over the cores.
  // `cancelled` is asked every 256 accounts per worker (a few milliseconds of derivation).
  const unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
  std::atomic<bool> stop{false};
  auto derive = [&](unsigned w) {
    std::uint32_t done = 0;
    for (std::uint32_t i = w; i < n; i += workers, ++done) {
      if (cancelled && done % 256 == 0 && (stop.load(std::memory_order_relaxed) || cancelled())) {
        stop.store(true, std::memory_order_relaxed);
        return;
      }
      posting[i] = private_key::from_login(names[i].view(), key_role::posting, options_.key_password).public_key();
      active[i] = private_key::from_login(names[i].view(), key_role::active, options_.key_password).public_key();
    }
  };
  if (n < 1000 || workers == 1) {
    for (unsigned w = 0; w < workers; ++w) derive(w);
  } else {
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(derive, w);
    derive(0);
    for (auto& t : threads) t.join();
  }
  if (stop.load()) throw genesis_cancelled();

  const time_point_sec now{options_.genesis_time};
  for (std::uint32_t i = 0; i < n; ++i) {
    if (cancelled && i % 65536 == 0 && cancelled()) throw genesis_cancelled();
    accounts_.create([&](account_object& a) {
      a.name = names[i];
      a.posting_key = posting[i];
      a.active_key = active[i];
      a.hive = options_.genesis_hive;
      a.hbd = options_.genesis_hbd;
      a.voting = {max_mana, now};
    });
  }
  globals_.create([&](global_properties_object& g) {
    g.time = now;
    g.current_supply_hive = options_.genesis_hive * n;
    g.current_supply_hbd = options_.genesis_hbd * n;
  });
  // Block 0 (all-zero id) is a valid TaPoS reference, so the first block can be built.
  for (std::uint32_t i = 0; i < 0x10000; ++i) summaries_.create([](block_summary_object&) {});
}

// ---- queries ----------------------------------------------------------------------------

std::uint32_t chain::head_block_num() const { return globals_.get(0).head_block_number; }
const block_id& chain::head_block_id() const { return globals_.get(0).head_block_id; }
time_point_sec chain::head_block_time() const { return globals_.get(0).time; }

const account_object* chain::find_account(const account_name& name) const {
  return accounts_.find<by_name>(name);
}

const comment_object* chain::find_comment(const account_name& author, std::string_view permlink) const {
  return comments_.find<by_permlink>(boost::make_tuple(author, permlink));
}

bool chain::is_known_transaction(const transaction_id& id) const {
  if (options_.dedup == dedup_mode::split && pending_ids_.contains(id)) return true;
  return transactions_.find<by_trx_id>(id) != nullptr;
}

std::uint32_t chain::custom_ops_in_block(const account_name& account) const {
  if (options_.custom_ops == counter_mode::local) {
    auto it = custom_ops_.find(account);
    return it == custom_ops_.end() ? 0 : it->second;
  }
  const custom_op_counter_object* c = counters_.find<by_account>(account);
  return c == nullptr ? 0 : c->count;
}

std::int64_t chain::total_hive() const {
  std::int64_t sum = 0;
  for (const auto& a : accounts_.indices()) sum += a.hive;
  return sum;
}

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
  const block_summary_object* tapos = summaries_.find(tx.ref_block_num);
  if (tapos == nullptr || prefix_of(tapos->block) != tx.ref_block_prefix) return reject::unknown_reference_block;
  if (is_known_transaction(ft.id())) return reject::duplicate;
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

reject chain::push_transaction(const full_transaction_ptr& tx) {
  reject r = check_rules(*tx);
  if (r != reject::none) return r;
  database::session s = db_.start_undo_session();
  tx_custom_ops_.clear();
  r = apply_operations(*tx, true);
  if (r != reject::none) return r;  // the session's destructor undoes what was applied
  if (options_.dedup == dedup_mode::unified) record_included(*tx);
  s.squash();
  if (options_.dedup == dedup_mode::split) pending_ids_.insert(tx->id());
  for (const auto& [account, n] : tx_custom_ops_) custom_ops_[account] += n;
  pending_.push_back(tx);
  return reject::none;
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

// ---- evaluators -------------------------------------------------------------------------

reject chain::apply_vote(const vote_operation& op) {
  if (op.weight < -10000 || op.weight > 10000) return reject::invalid_operation;
  const account_object* voter = find_account(op.voter);
  if (voter == nullptr) return reject::unknown_account;
  const comment_object* comment = find_comment(op.author, op.permlink);
  if (comment == nullptr) return reject::unknown_comment;
  if (!comment->allow_votes) return reject::invalid_operation;
  const time_point_sec now = head_block_time();

  const comment_vote_object* existing =
      votes_.find<by_comment_voter>(boost::make_tuple(comment->id, voter->id));
  if (existing != nullptr) {
    // A vote can be changed, but not to the same weight and not without limit.
    if (existing->weight == op.weight || existing->changes >= max_vote_changes) return reject::invalid_operation;
    const std::int16_t old_weight = existing->weight;
    votes_.modify(*existing, [&](comment_vote_object& v) {
      v.weight = op.weight;
      ++v.changes;
      v.last_update = now;
    });
    comments_.modify(*comment, [&](comment_object& c) {
      c.net_votes += (op.weight > 0) - (op.weight < 0) - ((old_weight > 0) - (old_weight < 0));
    });
  } else {
    if (op.weight == 0) return reject::invalid_operation;  // Hive: a new vote cannot be 0
    votes_.create([&](comment_vote_object& v) {
      v.comment = comment->id;
      v.voter = voter->id;
      v.weight = op.weight;
      v.last_update = now;
    });
    comments_.modify(*comment, [&](comment_object& c) {
      ++c.vote_count;
      c.net_votes += (op.weight > 0) - (op.weight < 0);
    });
  }
  accounts_.modify(*voter, [&](account_object& a) {
    regenerate(a.voting, now);
    // A full vote spends 2% of the mana, as Hive's; an empty bar still lets the vote count.
    std::int64_t cost = max_mana / 50 * std::abs(op.weight) / 10000;
    a.voting.current = std::max<std::int64_t>(0, a.voting.current - cost);
    ++a.vote_count;
  });
  return reject::none;
}

reject chain::apply_comment(const comment_operation& op, bool pushing) {
  if (op.permlink.empty() || op.permlink.size() > chain_limits::max_permlink_size ||
      op.parent_permlink.size() > chain_limits::max_permlink_size || op.title.size() > 256 || op.body.empty())
    return reject::invalid_operation;
  if (pushing && !op.json_metadata.empty() && !is_valid_json(op.json_metadata)) return reject::invalid_json;
  const account_object* author = find_account(op.author);
  if (author == nullptr) return reject::unknown_account;
  const time_point_sec now = head_block_time();

  if (const comment_object* existing = find_comment(op.author, op.permlink)) {
    // An edit: the parent cannot change.
    if (existing->parent_author != op.parent_author || existing->parent_permlink != op.parent_permlink)
      return reject::invalid_operation;
    comments_.modify(*existing, [&](comment_object& c) {
      c.last_update = now;
      c.body_size = static_cast<std::uint32_t>(op.body.size());
    });
    return reject::none;
  }
  if (!op.parent_author.empty()) {
    const comment_object* parent = find_comment(op.parent_author, op.parent_permlink);
    if (parent == nullptr) return reject::unknown_parent;
    comments_.modify(*parent, [](comment_object& c) { ++c.children; });
  } else if (op.parent_permlink.empty()) {
    return reject::invalid_operation;  // a root post needs a category
  }
  comments_.create([&](comment_object& c) {
    c.author = op.author;
    c.permlink = op.permlink;
    c.parent_author = op.parent_author;
    c.parent_permlink = op.parent_permlink;
    c.created = now;
    c.last_update = now;
    c.body_size = static_cast<std::uint32_t>(op.body.size());
  });
  accounts_.modify(*author, [](account_object& a) { ++a.post_count; });
  return reject::none;
}

reject chain::apply_comment_options(const comment_options_operation& op) {
  if (op.percent_hbd > 10000 || op.max_accepted_payout.amount < 0 ||
      op.max_accepted_payout.symbol != asset_symbol::hbd)
    return reject::invalid_operation;
  const comment_object* comment = find_comment(op.author, op.permlink);
  if (comment == nullptr) return reject::unknown_comment;
  // As in Hive, options only ever get more restrictive: no re-enabling votes or curation
  // rewards, no larger payout or HBD share.
  if ((op.allow_votes && !comment->allow_votes) ||
      (op.allow_curation_rewards && !comment->allow_curation_rewards) ||
      op.max_accepted_payout.amount > comment->max_accepted_payout || op.percent_hbd > comment->percent_hbd)
    return reject::invalid_operation;
  if (op.extensions.size() > 1) return reject::invalid_operation;
  bool set_beneficiaries = false;
  beneficiary_list list;
  if (!op.extensions.empty()) {
    const auto& routes = op.extensions.front().beneficiaries;
    // Beneficiaries: set once, before any vote, sorted by account, weights summing to at
    // most 100%, every account existing.
    if (!comment->beneficiaries.empty() || comment->vote_count > 0) return reject::invalid_operation;
    if (routes.empty() || routes.size() > chain_limits::max_beneficiaries) return reject::invalid_operation;
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < routes.size(); ++i) {
      if (routes[i].weight == 0 || (i > 0 && !(routes[i - 1].account < routes[i].account)))
        return reject::invalid_operation;
      sum += routes[i].weight;
      if (find_account(routes[i].account) == nullptr) return reject::unknown_account;
    }
    if (sum > 10000) return reject::invalid_operation;
    list.assign(routes.begin(), routes.end());
    set_beneficiaries = true;
  }
  comments_.modify(*comment, [&](comment_object& c) {
    c.max_accepted_payout = op.max_accepted_payout.amount;
    c.percent_hbd = op.percent_hbd;
    c.allow_votes = op.allow_votes;
    c.allow_curation_rewards = op.allow_curation_rewards;
    if (set_beneficiaries) c.beneficiaries = list;
  });
  return reject::none;
}

reject chain::apply_transfer(const transfer_operation& op) {
  // Hive: memo.size() < HIVE_MAX_MEMO_SIZE (2,048), so 2,047 bytes at most.
  if (op.amount.amount <= 0 || op.memo.size() >= chain_limits::max_memo_size) return reject::invalid_operation;
  const account_object* from = find_account(op.from);
  const account_object* to = find_account(op.to);
  if (from == nullptr || to == nullptr) return reject::unknown_account;
  const bool hbd = op.amount.symbol == asset_symbol::hbd;
  if ((hbd ? from->hbd : from->hive) < op.amount.amount) return reject::insufficient_funds;
  accounts_.modify(*from, [&](account_object& a) {
    (hbd ? a.hbd : a.hive) -= op.amount.amount;
    ++a.transfer_count;
  });
  accounts_.modify(*to, [&](account_object& a) { (hbd ? a.hbd : a.hive) += op.amount.amount; });
  return reject::none;
}

reject chain::apply_custom_json(const custom_json_operation& op, bool pushing) {
  if (op.required_auths.empty() && op.required_posting_auths.empty()) return reject::invalid_operation;
  if (op.id.size() > chain_limits::max_custom_json_id) return reject::custom_json_id_too_long;
  if (op.json.size() > chain_limits::max_custom_json_size) return reject::custom_json_too_large;
  // Parsing the JSON is the dearest stateless check; a block's transactions passed it when
  // they were pushed, and nothing in the state can change its answer.
  if (pushing && !is_valid_json(op.json)) return reject::invalid_json;

  auto count = [&](const account_name& name) -> reject {
    if (pushing) {
      if (options_.custom_ops == counter_mode::local) {
        std::uint32_t& in_tx = tx_custom_ops_[name];
        if (custom_ops_in_block(name) + in_tx >= chain_limits::custom_op_block_limit) return reject::custom_op_limit;
        ++in_tx;
      } else if (const custom_op_counter_object* c = counters_.find<by_account>(name)) {
        if (c->count >= chain_limits::custom_op_block_limit) return reject::custom_op_limit;
        counters_.modify(*c, [](custom_op_counter_object& o) { ++o.count; });
      } else {
        counters_.create([&](custom_op_counter_object& o) {
          o.account = name;
          o.count = 1;
        });
      }
    }
    const account_object* a = find_account(name);
    if (a == nullptr) return reject::unknown_account;
    accounts_.modify(*a, [](account_object& o) { ++o.custom_op_count; });
    return reject::none;
  };
  for (const auto& a : op.required_auths)
    if (reject r = count(a); r != reject::none) return r;
  for (const auto& a : op.required_posting_auths)
    if (reject r = count(a); r != reject::none) return r;
  return reject::none;
}

// ---- blocks -----------------------------------------------------------------------------

void chain::record_included(const full_transaction& tx) {
  transactions_.create([&](transaction_object& t) {
    t.trx_id = tx.id();
    t.expiration = tx.tx().expiration;
  });
}

full_block chain::generate_block(std::uint32_t size_limit, std::uint32_t max_transactions) const {
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
  b.header.transaction_merkle_root = b.compute_merkle_root();
  b.header.witness_signature = witness_key_.sign(header_digest(b.header));
  return b;
}

void chain::clear_pending_state() {
  pending_session_.undo();
  pending_ids_.clear();
  custom_ops_.clear();
}

void chain::start_pending() { pending_session_ = db_.start_undo_session(); }

void chain::clear_pending() {
  pending_.clear();
  clear_pending_state();
  start_pending();
}

std::uint32_t chain::prune_expired() {
  const time_point_sec now = head_block_time();
  const auto& by_exp = transactions_.get<by_expiration>();
  std::uint32_t n = 0;
  while (!by_exp.empty() && by_exp.begin()->expiration <= now) {
    transactions_.remove(*by_exp.begin());
    ++n;
  }
  return n;
}

block_result chain::apply_block(const full_block& block) {
  if (block.header.previous != head_block_id())
    throw std::invalid_argument("block " + std::to_string(block.header.block_num()) + " does not build on head block " +
                                std::to_string(head_block_num()));
  if (block.header.timestamp <= head_block_time())
    throw std::invalid_argument("block " + std::to_string(block.header.block_num()) +
                                " is not later than the head block");
  block_result result;
  std::vector<full_transaction_ptr> carried = std::move(pending_);
  pending_.clear();
  clear_pending_state();

  // Until the pending session is open again nothing may escape: a failure puts the pending
  // transactions back, so the session stack keeps its shape (blocks, then pending).
  try {
    database::session block_session;
    if (options_.apply_block_in_session) block_session = db_.start_undo_session();
    for (const full_transaction_ptr& tx : block.transactions) {
      reject r = apply_operations(*tx, false);
      if (r != reject::none)
        throw std::invalid_argument("block " + std::to_string(block.header.block_num()) + ": transaction " +
                                    to_hex(tx->id()) + " does not apply: " + std::string(reject_name(r)));
      record_included(*tx);
      ++result.applied;
    }
    const block_id id = compute_block_id(block.header);
    const std::uint32_t num = block.header.block_num();
    globals_.modify(globals_.get(0), [&](global_properties_object& g) {
      g.head_block_number = num;
      g.head_block_id = id;
      g.time = block.header.timestamp;
    });
    summaries_.modify(summaries_.get(num & 0xffff), [&](block_summary_object& s) { s.block = id; });
    result.pruned = prune_expired();
    if (block_session.active()) {
      block_session.push();
      if (num > options_.reversible_blocks) db_.commit(static_cast<std::int64_t>(num - options_.reversible_blocks));
    }
  } catch (...) {
    // The block session (if any) is undone by now; re-push what was pending.
    start_pending();
    for (const full_transaction_ptr& tx : carried) push_transaction(tx);
    throw;
  }

  start_pending();
  // Usually the block is a prefix of the pending list (this chain produced it): those are
  // skipped without a lookup. Otherwise the included ids are looked up.
  std::size_t prefix = 0;
  while (prefix < carried.size() && prefix < block.transactions.size() &&
         carried[prefix] == block.transactions[prefix])
    ++prefix;
  boost::unordered_flat_set<transaction_id> included;
  if (prefix < block.transactions.size()) {
    included.reserve(block.transactions.size());
    for (const auto& tx : block.transactions) included.insert(tx->id());
  }
  for (std::size_t i = prefix; i < carried.size(); ++i) {
    const full_transaction_ptr& tx = carried[i];
    if (!included.empty() && included.contains(tx->id())) continue;
    if (push_transaction(tx) == reject::none)
      ++result.reapplied;
    else
      ++result.dropped;
  }
  return result;
}

// ---- audit --------------------------------------------------------------------------------

chain_audit chain::audit() const {
  chain_audit a;
  auto violation = [&a](std::string what) { a.violations.push_back(std::move(what)); };

  const auto accounts = static_cast<std::int64_t>(options_.genesis_accounts);
  if (total_hive() != accounts * options_.genesis_hive)
    violation("supply: HIVE sums to " + std::to_string(total_hive()) + ", genesis made " +
              std::to_string(accounts * options_.genesis_hive));
  if (total_hbd() != accounts * options_.genesis_hbd)
    violation("supply: HBD sums to " + std::to_string(total_hbd()) + ", genesis made " +
              std::to_string(accounts * options_.genesis_hbd));

  a.undo_depth = db_.undo_depth();
  const std::size_t block_sessions =
      options_.apply_block_in_session ? std::min<std::size_t>(head_block_num(), options_.reversible_blocks) : 0;
  if (a.undo_depth != block_sessions + 1)
    violation("sessions: " + std::to_string(a.undo_depth) + " undo sessions open, expected " +
              std::to_string(block_sessions + 1) + " (the pending one and " + std::to_string(block_sessions) +
              " reversible blocks)");

  const time_point_sec now = head_block_time();
  std::size_t expired = 0;
  for (const transaction_object& t : transactions_.indices())
    if (t.expiration <= now) ++expired;
  if (expired != 0) violation("dedup: " + std::to_string(expired) + " expired ids left in the transaction index");

  boost::unordered_flat_set<transaction_id> pending_seen;
  std::size_t unknown = 0;
  std::size_t stale = 0;
  for (const full_transaction_ptr& tx : pending_) {
    if (!pending_seen.insert(tx->id()).second) violation("pending: " + to_hex(tx->id()) + " is pending twice");
    if (!is_known_transaction(tx->id())) ++unknown;
    if (tx->tx().expiration <= now) ++stale;
  }
  if (unknown != 0) violation("dedup: " + std::to_string(unknown) + " pending transactions are not known");
  if (stale != 0) violation("pending: " + std::to_string(stale) + " pending transactions have expired");
  if (options_.dedup == dedup_mode::split) {
    if (pending_ids_.size() != pending_.size())
      violation("dedup: " + std::to_string(pending_ids_.size()) + " pending ids for " + std::to_string(pending_.size()) +
                " pending transactions");
    a.known_transactions = transactions_.indices().size() + pending_ids_.size();
  } else {
    a.known_transactions = transactions_.indices().size();
  }

  std::size_t over = 0;
  if (options_.custom_ops == counter_mode::local) {
    for (const auto& [account, n] : custom_ops_)
      if (n > chain_limits::custom_op_block_limit) ++over;
  } else {
    for (const custom_op_counter_object& c : counters_.indices())
      if (c.count > chain_limits::custom_op_block_limit) ++over;
  }
  if (over != 0) violation("custom ops: " + std::to_string(over) + " accounts above the per-block limit");
  return a;
}

// ---- state digest -----------------------------------------------------------------------

namespace {
void put(out_buffer& b, const auto& v) { b.append(&v, sizeof v); }
void put_str(out_buffer& b, std::string_view s) {
  put(b, s.size());
  b.append(s);
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
    put(b, a.post_count);
    put(b, a.vote_count);
    put(b, a.transfer_count);
    put(b, a.custom_op_count);
  }
  for (const auto& c : comments_.indices()) {
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
    put(b, c.max_accepted_payout);
    put(b, c.percent_hbd);
    put(b, c.allow_votes);
    put(b, c.allow_curation_rewards);
    for (const auto& r : c.beneficiaries) {
      put_str(b, r.account.view());
      put(b, r.weight);
    }
  }
  for (const auto& v : votes_.indices()) {
    put(b, v.id);
    put(b, v.comment);
    put(b, v.voter);
    put(b, v.weight);
    put(b, v.changes);
    put(b, v.last_update.secs);
  }
  for (const auto& s : summaries_.indices()) b.append(s.block.begin(), s.block.size());
  const global_properties_object& g = globals_.get(0);
  put(b, g.head_block_number);
  b.append(g.head_block_id.begin(), g.head_block_id.size());
  put(b, g.time.secs);
  // Included transactions by id and expiration; their object ids and the pending ids'
  // location depend on the dedup variant, what they hold does not.
  // Pending ones are marked with expiration 0.
  boost::unordered_flat_set<transaction_id> pending_ids;
  for (const auto& tx : pending_) pending_ids.insert(tx->id());
  std::vector<std::pair<transaction_id, std::uint32_t>> txs;
  for (const auto& t : transactions_.indices())
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
