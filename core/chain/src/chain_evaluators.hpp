// The five operation evaluators: each checks its operation against the state and applies it;
// chain::apply (chain.cpp) dispatches to them. Private to the chain and included by chain.cpp
// alone, so they stay in its translation unit and compile as they did there, with the same
// inlining into and around chain::apply. As a translation unit of their own, GCC 12 inlines
// more into apply_comment (undo_index::create) and then warns, -Wstringop-overread, of a copy
// out of a small_vector's inline buffer longer than the buffer: one that cannot happen, since
// boost::container copies from that buffer only the elements it holds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <boost/tuple/tuple.hpp>

#include "apiary/core/chain/cashout.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/protocol/custom_json.hpp"
#include "comment_creation.hpp"
#include "voting_mana.hpp"

namespace apiary::core {

namespace {
constexpr std::uint8_t max_vote_changes = 5;
}  // namespace

reject chain::apply_vote(const vote_operation& op) {
  if (op.weight < -10000 || op.weight > 10000) return reject::invalid_operation;
  const account_object* voter = find_account(op.voter);
  if (voter == nullptr) return reject::unknown_account;
  const comment_object* comment = find_comment(op.author, op.permlink);
  if (comment == nullptr) return reject::unknown_comment;
  if (!comment->allow_votes) return reject::invalid_operation;
  const time_point_sec now = head_block_time();
  const std::int64_t rshares = vote_rshares(voter->vesting, op.weight);

  const comment_vote_object* existing = votes_.find<by_comment_voter>(boost::make_tuple(comment->id, voter->id));
  if (existing != nullptr) {
    // A vote can be changed, but not to the same weight and not without limit.
    if (existing->weight == op.weight || existing->changes >= max_vote_changes) return reject::invalid_operation;
    const std::int16_t old_weight = existing->weight;
    const std::int64_t old_rshares = existing->rshares;
    votes_.modify(*existing, [&](comment_vote_object& v) {
      v.weight = op.weight;
      v.rshares = rshares;
      ++v.changes;
      v.last_update = now;
    });
    comments_.modify(*comment, [&](comment_object& c) {
      c.net_votes += (op.weight > 0) - (op.weight < 0) - ((old_weight > 0) - (old_weight < 0));
      c.net_rshares += rshares - old_rshares;
    });
  } else {
    if (op.weight == 0) return reject::invalid_operation;  // Hive: a new vote cannot be 0
    votes_.create([&](comment_vote_object& v) {
      v.comment = comment->id;
      v.voter = voter->id;
      v.weight = op.weight;
      v.rshares = rshares;
      v.last_update = now;
    });
    comments_.modify(*comment, [&](comment_object& c) {
      ++c.vote_count;
      c.net_votes += (op.weight > 0) - (op.weight < 0);
      c.net_rshares += rshares;
    });
  }
  accounts_.modify(*voter, [&](account_object& a) {
    detail::regenerate(a.voting, now);
    // A full vote spends 2% of the mana, as Hive's; an empty bar still lets the vote count.
    std::int64_t cost = detail::max_mana / 50 * std::abs(op.weight) / 10000;
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
    fill_new_comment(c, op, now, options_.cashout_blocks);
    c.body_size = static_cast<std::uint32_t>(op.body.size());
  });
  accounts_.modify(*author, [](account_object& a) { ++a.post_count; });
  return reject::none;
}

reject chain::apply_comment_options(const comment_options_operation& op) {
  if (op.percent_hbd > 10000 || op.max_accepted_payout.amount < 0 || op.max_accepted_payout.symbol != asset_symbol::hbd)
    return reject::invalid_operation;
  const comment_object* comment = find_comment(op.author, op.permlink);
  if (comment == nullptr) return reject::unknown_comment;
  // As in Hive, options only ever get more restrictive: no re-enabling votes or curation
  // rewards, no larger payout or HBD share.
  if ((op.allow_votes && !comment->allow_votes) || (op.allow_curation_rewards && !comment->allow_curation_rewards) ||
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
    if (pushing)
      if (reject r = counter_.count(name); r != reject::none) return r;
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

}  // namespace apiary::core
