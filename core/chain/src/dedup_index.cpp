#include "apiary/core/chain/dedup_index.hpp"

#include <string>

#include <boost/unordered/unordered_flat_set.hpp>

#include "apiary/core/protocol/bytes.hpp"

// The id table's buckets, for prefetch_bucket (undo_index_detail::bind_buckets).
template struct apiary::core::undo_index_detail::bind_buckets<
    apiary::core::transaction_index::hashed_index_type<apiary::core::by_trx_id>,
    &apiary::core::transaction_index::hashed_index_type<apiary::core::by_trx_id>::buckets>;

namespace apiary::core {

std::uint32_t dedup_index::prune_expired(time_point_sec now) {
  // A block's worth of ids expires at once. Their nodes were made together, but each one's
  // neighbours in the id table's list, and its bucket, are anywhere in a table larger than
  // the caches: the removals run in a pipeline, each stage a few ids ahead loading what the
  // stage before it read (undo_index::prefetch_unlink_node, prefetch_unlink,
  // prefetch_unlink_late), and the walk of the expiration order runs ahead of them all, so
  // that its loads overlap the removals'. Removing an id leaves the walk's position valid.
  constexpr std::size_t node_ahead = 24;
  constexpr std::size_t links_ahead = 12;
  constexpr std::size_t late_ahead = 4;
  const auto& by_exp = index_.get<by_expiration>();
  auto walk = by_exp.begin();
  // Takes the next expired id into expired_; false past the last one.
  auto take_next = [&] {
    if (walk == by_exp.end() || walk->expiration > now) return false;
    expired_.push_back(&*walk);
    ++walk;
    return true;
  };
  expired_.clear();
  while (expired_.size() < node_ahead && take_next()) {
  }
  for (std::size_t i = 0; i < expired_.size(); ++i) {
    take_next();
    const std::size_t n = expired_.size();
    if (i + node_ahead < n) index_.prefetch_unlink_node<by_trx_id>(*expired_[i + node_ahead]);
    if (i + links_ahead < n) index_.prefetch_unlink<by_trx_id>(*expired_[i + links_ahead]);
    if (i + late_ahead < n) index_.prefetch_unlink_late<by_trx_id>(*expired_[i + late_ahead]);
    index_.remove(*expired_[i]);
  }
  const auto removed = static_cast<std::uint32_t>(expired_.size());
  expired_.clear();
  return removed;
}

std::size_t dedup_index::audit(std::span<const full_transaction_ptr> pending, time_point_sec now,
                               std::vector<std::string>& violations) const {
  auto violation = [&violations](std::string what) { violations.push_back(std::move(what)); };
  std::size_t expired = 0;
  for (const transaction_object& t : index_.indices())
    if (t.expiration <= now) ++expired;
  if (expired != 0) violation("dedup: " + std::to_string(expired) + " expired ids left in the transaction index");

  boost::unordered_flat_set<transaction_id> pending_seen;
  std::size_t unknown = 0;
  std::size_t stale = 0;
  for (const full_transaction_ptr& tx : pending) {
    if (!pending_seen.insert(tx->id()).second) violation("pending: " + to_hex(tx->id()) + " is pending twice");
    if (!contains(tx->id())) ++unknown;
    if (tx->tx().expiration <= now) ++stale;
  }
  if (unknown != 0) violation("dedup: " + std::to_string(unknown) + " pending transactions are not known");
  if (stale != 0) violation("pending: " + std::to_string(stale) + " pending transactions have expired");
  if (mode_ == dedup_mode::split) {
    if (pending_.size() != pending.size())
      violation("dedup: " + std::to_string(pending_.size()) + " pending ids for " + std::to_string(pending.size()) +
                " pending transactions");
    return index_.indices().size() + pending_.size();
  }
  return index_.indices().size();
}

}  // namespace apiary::core
