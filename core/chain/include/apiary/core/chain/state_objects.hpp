// The chain state's objects and their indexes, each an undo_index in the chain's database.
// Only what the cycle test exercises is modelled, with Hive's keys: accounts by name,
// comments by (author, permlink) and by cashout time, votes by (comment, voter) and by
// comment, 65,536 block summaries for TaPoS, the global properties, included transactions by
// id and expiration, and the per-account custom-operation counters of the "state" counter
// variant.
//
// Each object lists its data members once, in declaration order, in a static
// `fields(f)`: f(name, member pointer) per member. It needs no object, so the list can be
// checked against the declaration at compile time (state_fields.hpp: a member left out or
// named twice does not compile); the state digest walks it (state_digest.hpp), and so do the
// state snapshots, which write every field and whose layout id changes with the lists
// (chain_snapshot.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <boost/multi_index/composite_key.hpp>
#include <boost/multi_index/hashed_index.hpp>
#include <boost/multi_index/member.hpp>
#include <boost/multi_index/ordered_index.hpp>
#include <boost/multi_index/tag.hpp>

#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "apiary/core/protocol/time_point.hpp"
#include "apiary/core/state/state_vector.hpp"
#include "apiary/core/state/undo_index.hpp"

namespace apiary::core {

namespace bmi = boost::multi_index;

struct by_id;
struct by_name;
struct by_permlink;
struct by_comment_voter;
struct by_comment;
struct by_trx_id;
struct by_expiration;
struct by_account;
struct by_cashout;

// Buckets per object of the two hashed tables every push looks up at random, each of millions
// on a mainnet-sized state: a lookup compares its key with each object of its bucket ahead of
// the one it finds (for a new transaction's id, with every id there), a cache miss each. Boost
// keeps up to one object a bucket; these tables are given at least four buckets an object
// (Boost rounds a table up to its next size, about twice the last), for 8 bytes a bucket
// (docs/design.md#hashed-where-hives-indexes-are-ordered). A state file's layout id covers both.
inline constexpr std::size_t account_buckets = 4;   // the accounts by name, at genesis and when loaded
inline constexpr std::size_t state_id_buckets = 4;  // the ids of a state loaded or written; a
                                                    // genesis keeps Boost's one for an hour of ids

// The resources a transaction's RC cost is made of (rc.hpp's rc_resource).
inline constexpr std::size_t rc_resource_count = 4;

// Mana that regenerates linearly over five days: Hive's voting power and its resource
// credits (rc.hpp) both keep one.
struct manabar {
  std::int64_t current = 0;
  time_point_sec last_update;

  template <class F>
  static constexpr void fields(F&& f) {
    f("current", &manabar::current);
    f("last_update", &manabar::last_update);
  }
  bool operator==(const manabar&) const = default;
};

struct account_object {
  std::uint32_t id = 0;
  account_name name;
  public_key posting_key;
  public_key active_key;
  std::int64_t hive = 0;  // thousandths
  std::int64_t hbd = 0;
  manabar voting;
  std::int64_t vesting = 0;  // micro-VESTS: the RC manabar's maximum
  manabar rc;                // resource credits (rc.hpp); under rc_mode::volatile_charges the
                             // pending transactions' charges are not in it yet (rc_ledger)
  std::uint32_t post_count = 0;
  std::uint32_t vote_count = 0;
  std::uint32_t transfer_count = 0;
  std::uint32_t custom_op_count = 0;  // lifetime total

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &account_object::id);
    f("name", &account_object::name);
    f("posting_key", &account_object::posting_key);
    f("active_key", &account_object::active_key);
    f("hive", &account_object::hive);
    f("hbd", &account_object::hbd);
    f("voting", &account_object::voting);
    f("vesting", &account_object::vesting);
    f("rc", &account_object::rc);
    f("post_count", &account_object::post_count);
    f("vote_count", &account_object::vote_count);
    f("transfer_count", &account_object::transfer_count);
    f("custom_op_count", &account_object::custom_op_count);
  }
  bool operator==(const account_object&) const = default;
};
using account_index = undo_index<
    account_object,
    bmi::indexed_by<
        bmi::ordered_unique<bmi::tag<by_id>, bmi::member<account_object, std::uint32_t, &account_object::id>>,
        bmi::hashed_unique<bmi::tag<by_name>, bmi::member<account_object, account_name, &account_object::name>>>>;

// Variable-length members take memory from where their object is (state_vector.hpp): in a
// mapped state, from the state itself.
using beneficiary_list = state_vector<beneficiary_route, 2>;

struct comment_object {
  std::uint32_t id = 0;
  account_name author;
  state_string permlink;
  account_name parent_author;  // empty for a root post
  state_string parent_permlink;
  time_point_sec created;
  time_point_sec last_update;
  std::uint32_t body_size = 0;
  std::uint32_t children = 0;
  std::int32_t net_votes = 0;
  std::uint32_t vote_count = 0;
  std::int64_t net_rshares = 0;                      // the votes' reward shares summed (cashout.hpp)
  time_point_sec cashout_time;                       // when it pays out and leaves the state
  std::int64_t max_accepted_payout = 1'000'000'000;  // HBD thousandths, Hive's default
  std::uint16_t percent_hbd = 10000;
  bool allow_votes = true;
  bool allow_curation_rewards = true;
  beneficiary_list beneficiaries;

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &comment_object::id);
    f("author", &comment_object::author);
    f("permlink", &comment_object::permlink);
    f("parent_author", &comment_object::parent_author);
    f("parent_permlink", &comment_object::parent_permlink);
    f("created", &comment_object::created);
    f("last_update", &comment_object::last_update);
    f("body_size", &comment_object::body_size);
    f("children", &comment_object::children);
    f("net_votes", &comment_object::net_votes);
    f("vote_count", &comment_object::vote_count);
    f("net_rshares", &comment_object::net_rshares);
    f("cashout_time", &comment_object::cashout_time);
    f("max_accepted_payout", &comment_object::max_accepted_payout);
    f("percent_hbd", &comment_object::percent_hbd);
    f("allow_votes", &comment_object::allow_votes);
    f("allow_curation_rewards", &comment_object::allow_curation_rewards);
    f("beneficiaries", &comment_object::beneficiaries);
  }
  bool operator==(const comment_object&) const = default;
};
// Lookups take a string_view permlink without building a std::string: the permlink part of
// the by_permlink key is hashed and compared as a string_view.
struct permlink_hash {
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
struct permlink_equal {
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};
using comment_index = undo_index<
    comment_object,
    bmi::indexed_by<
        bmi::ordered_unique<bmi::tag<by_id>, bmi::member<comment_object, std::uint32_t, &comment_object::id>>,
        // Hashed, not ordered as Hive's: the chain only ever looks a comment up by it, and a
        // walk down a tree of comments misses the caches at every level (docs/measured/profile.md).
        bmi::hashed_unique<
            bmi::tag<by_permlink>,
            bmi::composite_key<comment_object, bmi::member<comment_object, account_name, &comment_object::author>,
                               bmi::member<comment_object, state_string, &comment_object::permlink>>,
            bmi::composite_key_hash<std::hash<account_name>, permlink_hash>,
            bmi::composite_key_equal_to<std::equal_to<account_name>, permlink_equal>>,
        bmi::ordered_unique<
            bmi::tag<by_cashout>,
            bmi::composite_key<comment_object,
                               bmi::member<comment_object, time_point_sec, &comment_object::cashout_time>,
                               bmi::member<comment_object, std::uint32_t, &comment_object::id>>>>>;

struct comment_vote_object {
  std::uint32_t id = 0;
  std::uint32_t comment = 0;
  std::uint32_t voter = 0;
  std::int16_t weight = 0;
  std::uint8_t changes = 0;
  std::int64_t rshares = 0;  // signed: what the vote adds to the comment's net_rshares
  time_point_sec last_update;

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &comment_vote_object::id);
    f("comment", &comment_vote_object::comment);
    f("voter", &comment_vote_object::voter);
    f("weight", &comment_vote_object::weight);
    f("changes", &comment_vote_object::changes);
    f("rshares", &comment_vote_object::rshares);
    f("last_update", &comment_vote_object::last_update);
  }
  bool operator==(const comment_vote_object&) const = default;
};
using comment_vote_index = undo_index<
    comment_vote_object,
    bmi::indexed_by<
        bmi::ordered_unique<bmi::tag<by_id>, bmi::member<comment_vote_object, std::uint32_t, &comment_vote_object::id>>,
        // Hashed, not ordered as Hive's, for the reason the comments' by_permlink is: every vote
        // looks its (comment, voter) up, and on a state of millions of votes a walk down the
        // tree missed the caches at each of its levels (docs/measured/profile.md). The cashout
        // wants a comment's votes together, which by_comment keeps (in no order: the payout
        // of each vote is its own).
        bmi::hashed_unique<
            bmi::tag<by_comment_voter>,
            bmi::composite_key<comment_vote_object,
                               bmi::member<comment_vote_object, std::uint32_t, &comment_vote_object::comment>,
                               bmi::member<comment_vote_object, std::uint32_t, &comment_vote_object::voter>>>,
        bmi::hashed_non_unique<bmi::tag<by_comment>,
                               bmi::member<comment_vote_object, std::uint32_t, &comment_vote_object::comment>>>>;

// TaPoS: summary (block_num & 0xffff) holds that block's id.
struct block_summary_object {
  std::uint32_t id = 0;
  block_id block;

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &block_summary_object::id);
    f("block", &block_summary_object::block);
  }
  bool operator==(const block_summary_object&) const = default;
};
using block_summary_index =
    undo_index<block_summary_object,
               bmi::indexed_by<bmi::ordered_unique<
                   bmi::tag<by_id>, bmi::member<block_summary_object, std::uint32_t, &block_summary_object::id>>>>;

// Declared in the order the state digest has always written these fields (state_digest.hpp).
struct global_properties_object {
  std::uint32_t id = 0;
  std::uint32_t head_block_number = 0;
  block_id head_block_id;
  time_point_sec time;
  std::int64_t total_vesting = 0;  // the accounts' vesting summed: it scales every RC price
  std::int64_t current_supply_hive = 0;
  std::int64_t current_supply_hbd = 0;
  std::int64_t genesis_supply_hive = 0;  // what the genesis made, additions included (audit())
  std::int64_t reward_balance = 0;       // the reward fund's HIVE (thousandths), part of the supply
  std::uint64_t recent_claims = 0;       // decaying sum of the paid comments' claims (cashout.hpp)
  std::uint64_t comments_paid = 0;
  std::array<std::int64_t, rc_resource_count> rc_pools{};  // per resource (rc.hpp)

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &global_properties_object::id);
    f("head_block_number", &global_properties_object::head_block_number);
    f("head_block_id", &global_properties_object::head_block_id);
    f("time", &global_properties_object::time);
    f("total_vesting", &global_properties_object::total_vesting);
    f("current_supply_hive", &global_properties_object::current_supply_hive);
    f("current_supply_hbd", &global_properties_object::current_supply_hbd);
    f("genesis_supply_hive", &global_properties_object::genesis_supply_hive);
    f("reward_balance", &global_properties_object::reward_balance);
    f("recent_claims", &global_properties_object::recent_claims);
    f("comments_paid", &global_properties_object::comments_paid);
    f("rc_pools", &global_properties_object::rc_pools);
  }
  bool operator==(const global_properties_object&) const = default;
};
using global_properties_index =
    undo_index<global_properties_object,
               bmi::indexed_by<bmi::ordered_unique<bmi::tag<by_id>, bmi::member<global_properties_object, std::uint32_t,
                                                                                &global_properties_object::id>>>>;

// Ids of included transactions until they expire (and, in the "unified" dedup variant,
// of pending ones too).
struct transaction_object {
  std::uint64_t id = 0;
  transaction_id trx_id;
  time_point_sec expiration;

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &transaction_object::id);
    f("trx_id", &transaction_object::trx_id);
    f("expiration", &transaction_object::expiration);
  }
  bool operator==(const transaction_object&) const = default;
};
using transaction_index = undo_index<
    transaction_object,
    bmi::indexed_by<
        bmi::ordered_unique<bmi::tag<by_id>, bmi::member<transaction_object, std::uint64_t, &transaction_object::id>>,
        bmi::hashed_unique<bmi::tag<by_trx_id>,
                           bmi::member<transaction_object, transaction_id, &transaction_object::trx_id>>,
        bmi::ordered_non_unique<bmi::tag<by_expiration>,
                                bmi::member<transaction_object, time_point_sec, &transaction_object::expiration>>>>;

// Custom operations per account in the current block ("state" counter variant only).
struct custom_op_counter_object {
  std::uint32_t id = 0;
  account_name account;
  std::uint32_t count = 0;

  template <class F>
  static constexpr void fields(F&& f) {
    f("id", &custom_op_counter_object::id);
    f("account", &custom_op_counter_object::account);
    f("count", &custom_op_counter_object::count);
  }
  bool operator==(const custom_op_counter_object&) const = default;
};
using custom_op_counter_index = undo_index<
    custom_op_counter_object,
    bmi::indexed_by<bmi::ordered_unique<bmi::tag<by_id>, bmi::member<custom_op_counter_object, std::uint32_t,
                                                                     &custom_op_counter_object::id>>,
                    bmi::hashed_unique<bmi::tag<by_account>, bmi::member<custom_op_counter_object, account_name,
                                                                         &custom_op_counter_object::account>>>>;

}  // namespace apiary::core
