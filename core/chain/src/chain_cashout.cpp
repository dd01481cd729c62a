// chain::pay_out_comments and the state census: the comment rewards of cashout.hpp applied
// at each block, and what the state holds.
#include <boost/container/small_vector.hpp>
#include <boost/tuple/tuple.hpp>

#include "apiary/core/chain/cashout.hpp"
#include "apiary/core/chain/chain.hpp"

namespace apiary::core {

namespace {
__extension__ using i128 = __int128;
}  // namespace

std::uint32_t chain::pay_out_comments() {
  const time_point_sec now = head_block_time();
  globals_.modify(globals_.get(0), [](global_properties_object& g) {
    g.reward_balance += cashout_constants::reward_per_block;
    g.current_supply_hive += cashout_constants::reward_per_block;
    g.recent_claims = decay_claims(g.recent_claims, chain_limits::block_interval_secs);
  });
  const auto& due = comments_.get<by_cashout>();
  const auto end = due.upper_bound(boost::make_tuple(now));
  if (due.begin() == end) return 0;
  // As Hive: every comment due in this block adds its claims before any takes its share.
  boost::container::small_vector<const comment_object*, 64> paying;
  std::uint64_t claims = 0;
  for (auto it = due.begin(); it != end; ++it) {
    paying.push_back(&*it);
    claims += static_cast<std::uint64_t>(std::max<std::int64_t>(it->net_rshares, 0));
  }
  globals_.modify(globals_.get(0), [&](global_properties_object& g) { g.recent_claims += claims; });
  for (const comment_object* c : paying) {
    const global_properties_object& g = globals_.get(0);
    const auto own = static_cast<std::uint64_t>(std::max<std::int64_t>(c->net_rshares, 0));
    pay_out(*c, comment_reward(g.reward_balance, own, g.recent_claims, c->max_accepted_payout));
  }
  globals_.modify(globals_.get(0), [&](global_properties_object& g) { g.comments_paid += paying.size(); });
  return static_cast<std::uint32_t>(paying.size());
}

void chain::pay_out(const comment_object& c, std::int64_t reward) {
  auto credit = [this](const account_object& a, std::int64_t amount) {
    if (amount > 0) accounts_.modify(a, [amount](account_object& o) { o.hive += amount; });
  };
  // The votes: curators are paid from them, then they go.
  boost::container::small_vector<const comment_vote_object*, 32> votes;
  std::uint64_t curation_shares = 0;
  const auto [first, last] = votes_.get<by_comment>().equal_range(c.id);
  for (auto it = first; it != last; ++it) {
    votes.push_back(&*it);
    if (it->rshares > 0) curation_shares += static_cast<std::uint64_t>(it->rshares);
  }
  std::int64_t paid = 0;
  const std::int64_t curation =
      curation_shares == 0 || !c.allow_curation_rewards ? 0 : reward * cashout_constants::curation_percent / 100;
  for (const comment_vote_object* v : votes) {
    if (v->rshares > 0) {
      const std::int64_t r = share_of(curation, static_cast<std::uint64_t>(v->rshares), curation_shares);
      credit(accounts_.get(v->voter), r);
      paid += r;
    }
    votes_.remove(*v);
  }
  const std::int64_t author_part = reward - curation;
  std::int64_t to_author = author_part;
  for (const beneficiary_route& b : c.beneficiaries) {
    const std::int64_t r = share_of(author_part, b.weight, 10'000);
    if (const account_object* a = find_account(b.account)) {
      credit(*a, r);
      paid += r;
      to_author -= r;
    }
  }
  if (const account_object* author = find_account(c.author)) {
    credit(*author, to_author);
    paid += to_author;
  }
  globals_.modify(globals_.get(0), [paid](global_properties_object& g) { g.reward_balance -= paid; });
  comments_.remove(c);
}

state_census chain::census() const {
  state_census s;
  auto put = [&s](std::size_t i, const auto& index) {
    s.indexes[i].objects = index.size();
    s.indexes[i].bytes = index.bytes();
  };
  put(0, accounts_);
  put(1, comments_);
  put(2, votes_);
  put(3, dedup_.index());
  put(4, summaries_);
  put(5, db_.get_index<custom_op_counter_index>());
  s.pending_ids = dedup_.pending_ids();
  s.object_pool_bytes = db_.object_pool_bytes();
  s.undo_pool_bytes = db_.undo_pool_bytes();
  const global_properties_object& g = globals_.get(0);
  s.comments_paid = g.comments_paid;
  s.reward_balance = g.reward_balance;
  return s;
}

double chain::rc_share_below(std::int64_t percent, std::size_t max_samples) const {
  const time_point_sec now = head_block_time();
  std::size_t below = 0;
  std::size_t with_vesting = 0;
  auto count = [&](const account_object& a) {
    if (a.vesting <= 0) return;
    ++with_vesting;
    if (static_cast<i128>(rc_.available(a, now)) * 100 < static_cast<i128>(a.vesting) * percent) ++below;
  };
  const std::size_t n = accounts_.size();
  if (max_samples == 0 || max_samples >= n) {
    for (const account_object& a : accounts_.indices()) count(a);
  } else {
    // Ids are dense from 0 (accounts are never removed).
    const std::size_t step = n / max_samples;
    for (std::size_t id = 0; id < n; id += step)
      if (const account_object* a = accounts_.find(static_cast<std::uint32_t>(id))) count(*a);
  }
  return with_vesting == 0 ? 0.0 : static_cast<double>(below) / static_cast<double>(with_vesting);
}

}  // namespace apiary::core
