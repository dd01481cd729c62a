// rc_stats: the classification and the sums of Hive's RC statistics (rc_stats.hpp).
#include "apiary/core/chain/rc_stats.hpp"

#include <type_traits>
#include <variant>

namespace apiary::core {

namespace {

rc_op_kind kind_of(const operation& op) {
  return std::visit(
      [](const auto& o) -> rc_op_kind {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, vote_operation>)
          return rc_op_kind::vote;
        else if constexpr (std::is_same_v<T, comment_operation> || std::is_same_v<T, comment_options_operation>)
          return rc_op_kind::comment;
        else if constexpr (std::is_same_v<T, transfer_operation>)
          return rc_op_kind::transfer;
        else
          return rc_op_kind::custom_json;
      },
      op);
}

// A comment followed by the options of that same comment.
bool is_post_with_options(const operation_list& ops) {
  const auto* c = std::get_if<comment_operation>(&ops[0]);
  const auto* o = std::get_if<comment_options_operation>(&ops[1]);
  return c != nullptr && o != nullptr && c->author == o->author && c->permlink == o->permlink;
}

}  // namespace

std::string_view rc_op_kind_name(rc_op_kind k) {
  switch (k) {
    case rc_op_kind::vote: return "vote";
    case rc_op_kind::comment: return "comment";
    case rc_op_kind::transfer: return "transfer";
    case rc_op_kind::custom_json: return "custom_json";
    case rc_op_kind::multi: return "multi";
  }
  return "unknown";
}

rc_op_kind rc_op_kind_of(const signed_transaction& tx) {
  const operation_list& ops = tx.operations;
  if (ops.size() == 1) return kind_of(ops[0]);
  if (ops.size() == 2 && is_post_with_options(ops)) return rc_op_kind::comment;
  return rc_op_kind::multi;
}

rc_stats& rc_stats::operator+=(const rc_stats& o) {
  for (std::size_t k = 0; k < rc_op_kind_count; ++k) {
    ops[k].count += o.ops[k].count;
    for (std::size_t i = 0; i < rc_resource_count; ++i) {
      ops[k].cost[i] += o.ops[k].cost[i];
      ops[k].usage[i] += o.ops[k].usage[i];
    }
  }
  for (std::size_t r = 0; r < rc_payer_rank_count; ++r) {
    rc_payer_stats& p = payers[r];
    const rc_payer_stats& q = o.payers[r];
    p.count += q.count;
    p.below_5 += q.below_5;
    p.below_10 += q.below_10;
    p.below_20 += q.below_20;
    for (std::size_t i = 0; i < rc_reference_kind_count; ++i) p.cant_afford[i] += q.cant_afford[i];
  }
  return *this;
}

std::uint64_t rc_stats::transactions() const {
  std::uint64_t n = 0;
  for (const rc_op_stats& op : ops) n += op.count;
  return n;
}

rc_reference_costs rc_stats::reference_costs(const rc_reference_costs& previous) const {
  rc_reference_costs out = previous;
  // The reference kinds are the first three op kinds, in the same order.
  for (std::size_t k = 0; k < rc_reference_kind_count; ++k) {
    const rc_op_stats& op = ops[k];
    if (op.count == 0) continue;
    std::int64_t total = 0;
    for (const std::int64_t c : op.cost) total += c;
    out[k] = total / static_cast<std::int64_t>(op.count);
  }
  return out;
}

}  // namespace apiary::core
