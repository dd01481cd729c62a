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
  const auto& by_exp = index_.get<by_expiration>();
  std::uint32_t n = 0;
  while (!by_exp.empty() && by_exp.begin()->expiration <= now) {
    index_.remove(*by_exp.begin());
    ++n;
  }
  return n;
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
