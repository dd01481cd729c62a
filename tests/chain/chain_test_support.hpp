// Shared helpers of the chain tests: a chain with a small genesis, a key cache over the same
// deterministic keys, builders for minimal operations and transactions, a snapshot of
// everything a rejected transaction must leave unchanged, and chain_test_access.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apiary/colony/key_cache.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {
// Readable failures: gtest prints the reason's name instead of a number.
inline void PrintTo(reject r, std::ostream* os) { *os << reject_name(r); }

// Reaches into the chain: to break one invariant at a time (the audit tests), or to change an
// object as no operation would (the digest tests).
struct chain_test_access {
  static void mint(chain& c, const account_name& who, std::int64_t amount) {
    c.accounts_.modify(*c.find_account(who), [&](account_object& a) { a.hive += amount; });
  }
  static database::session open_session(chain& c) { return c.db_.start_undo_session(); }
  static void remember_expired_id(chain& c) {
    c.dedup_.index_.create([&](transaction_object& t) {
      t.trx_id.data[0] = 0x42;
      t.expiration = c.head_block_time();
    });
  }
  static void forget_pending_ids(chain& c) { c.dedup_.pending_.clear(); }
  static void exceed_custom_ops(chain& c, const account_name& who) { c.counter_.block_[who] = 99; }
  static void overdraw_mana(chain& c, const account_name& who) {
    c.accounts_.modify(*c.find_account(who), [](account_object& a) { a.rc.current = -1; });
  }
  static void overcharge_pending(chain& c, const account_name& who) { c.rc_.pending_[who] = -5; }
  static void overfill_pool(chain& c) {
    c.globals_.modify(c.globals_.get(0),
                      [&c](global_properties_object& g) { g.rc_pools[2] = c.rc_params()[2].max_pool + 1; });
  }
  static void mint_vesting(chain& c, const account_name& who) {
    c.accounts_.modify(*c.find_account(who), [](account_object& a) { ++a.vesting; });
  }
  template <class Index>
  static Index& index(chain& c) {
    return c.db_.get_index<Index>();
  }
};
}  // namespace apiary::core

namespace apiary::chain_test {

using core::account_name;
using core::key_role;
using core::reject;

// One combination of the chain's own switches (the database's are separate).
struct modes {
  core::dedup_mode dedup = core::dedup_mode::split;
  core::counter_mode counter = core::counter_mode::local;
  core::signer_source signers = core::signer_source::attached;
};

inline std::string mode_name(const modes& m) {
  std::string s;
  s += m.dedup == core::dedup_mode::split ? "Split" : "Unified";
  s += m.counter == core::counter_mode::local ? "Local" : "State";
  s += m.signers == core::signer_source::attached ? "Attached" : "Recover";
  return s;
}

inline std::vector<modes> all_modes() {
  std::vector<modes> v;
  for (auto d : {core::dedup_mode::split, core::dedup_mode::unified})
    for (auto c : {core::counter_mode::local, core::counter_mode::state})
      for (auto s : {core::signer_source::attached, core::signer_source::recover}) v.push_back({d, c, s});
  return v;
}

// 10.000 HIVE and 10.000 HBD per account: small enough to run out.
constexpr std::int64_t genesis_balance = 10'000;

inline core::chain_options small_options(std::uint32_t accounts = 50, const modes& m = {}) {
  core::chain_options o;
  o.genesis_accounts = accounts;
  o.genesis_hive = genesis_balance;
  o.genesis_hbd = genesis_balance;
  o.dedup = m.dedup;
  o.custom_ops = m.counter;
  o.signers = m.signers;
  return o;
}

inline account_name user(std::uint32_t i) { return core::genesis_account_name("user", i); }

// ---- operations ---------------------------------------------------------------------------

inline core::custom_json_operation custom_json(const account_name& who, std::string id = "test",
                                               std::string json = "{}") {
  core::custom_json_operation op;
  op.required_posting_auths.push_back(who);
  op.id = std::move(id);
  op.json = std::move(json);
  return op;
}

inline core::transfer_operation transfer(const account_name& from, const account_name& to, std::int64_t amount,
                                         bool hbd = false, std::string memo = {}) {
  core::transfer_operation op;
  op.from = from;
  op.to = to;
  op.amount = hbd ? core::asset::hbd(amount) : core::asset::hive(amount);
  op.memo = std::move(memo);
  return op;
}

inline core::vote_operation vote(const account_name& voter, const account_name& author, std::string permlink,
                                 std::int16_t weight) {
  core::vote_operation op;
  op.voter = voter;
  op.author = author;
  op.permlink = std::move(permlink);
  op.weight = weight;
  return op;
}

inline core::comment_operation post(const account_name& author, std::string permlink, std::string body = "body") {
  core::comment_operation op;
  op.parent_permlink = "hive";
  op.author = author;
  op.permlink = std::move(permlink);
  op.title = "title";
  op.body = std::move(body);
  return op;
}

inline core::comment_operation reply(const account_name& author, std::string permlink,
                                     const account_name& parent_author, std::string parent_permlink,
                                     std::string body = "reply") {
  core::comment_operation op;
  op.parent_author = parent_author;
  op.parent_permlink = std::move(parent_permlink);
  op.author = author;
  op.permlink = std::move(permlink);
  op.body = std::move(body);
  return op;
}

inline core::comment_options_operation options(const account_name& author, std::string permlink,
                                               std::vector<core::beneficiary_route> routes = {}) {
  core::comment_options_operation op;
  op.author = author;
  op.permlink = std::move(permlink);
  if (!routes.empty()) op.extensions.push_back(core::comment_payout_beneficiaries{std::move(routes)});
  return op;
}

inline core::signed_transaction signed_without_signatures(core::transaction t) {
  core::signed_transaction st;
  static_cast<core::transaction&>(st) = std::move(t);
  return st;
}

// ---- a chain with its keys ----------------------------------------------------------------

struct signer {
  account_name account;
  key_role role = key_role::posting;
};

// What a rejected transaction must leave as it was.
struct trace {
  core::sha256_digest digest;
  std::size_t pending = 0;
  bool known = false;
  std::uint32_t custom_ops = 0;
  std::size_t transaction_index = 0;
  std::int64_t total = 0;
  bool operator==(const trace&) const = default;
};

inline void PrintTo(const trace& t, std::ostream* os) {
  *os << "{digest " << core::to_hex(t.digest).substr(0, 12) << ", pending " << t.pending << ", known " << t.known
      << ", custom_ops " << t.custom_ops << ", transaction_index " << t.transaction_index << ", total " << t.total
      << "}";
}

class harness {
 public:
  explicit harness(core::chain_options o) : keys_(o.key_password), chain_(std::move(o)) {}

  core::chain& chain() { return chain_; }
  const core::chain& chain() const { return chain_; }
  colony::key_cache& keys() { return keys_; }

  // An unsigned transaction on the head block, expiring `expires_in` seconds after it.
  template <class... Ops>
  core::transaction tx(std::uint32_t expires_in, Ops&&... ops) const {
    core::transaction t;
    t.set_reference_block(chain_.head_block_id());
    t.expiration = chain_.head_block_time() + expires_in;
    (t.operations.emplace_back(std::forward<Ops>(ops)), ...);
    return t;
  }

  // Signed by the signers' keys; the public keys attached unless attach is false.
  core::full_transaction_ptr sign(core::transaction t, std::initializer_list<signer> signers, bool attach = true) {
    std::vector<core::private_key> priv;
    std::vector<core::public_key> pub;
    for (const signer& s : signers) {
      priv.push_back(keys_.private_key(s.account, s.role));
      pub.push_back(keys_.public_key(s.account, s.role));
    }
    return std::make_shared<const core::full_transaction>(
        std::move(t), chain_.options().chain, priv,
        attach ? std::span<const core::public_key>(pub) : std::span<const core::public_key>());
  }

  // One operation, signed by one account's key of the role it needs.
  template <class Op>
  core::full_transaction_ptr make(Op op, const account_name& by, key_role role = key_role::posting,
                                  std::uint32_t expires_in = 60) {
    return sign(tx(expires_in, std::move(op)), {{by, role}});
  }

  reject push(const core::full_transaction_ptr& t) { return chain_.push_transaction(t); }

  core::block_result produce(std::uint32_t size_limit = core::chain_limits::max_block_size,
                             std::uint32_t max_transactions = 0) {
    return chain_.apply_block(chain_.generate_block(size_limit, max_transactions));
  }

  std::size_t transaction_index_size() const { return chain_.db().get_index<core::transaction_index>().size(); }

  trace snapshot(const core::transaction_id& id, const account_name& who) const {
    return {chain_.state_digest(),           chain_.pending_count(),   chain_.is_known_transaction(id),
            chain_.custom_ops_in_block(who), transaction_index_size(), chain_.total_hive() + chain_.total_hbd()};
  }

 private:
  colony::key_cache keys_;
  core::chain chain_;
};

}  // namespace apiary::chain_test
