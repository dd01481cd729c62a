// Before anything that declares core::public_key: wire_value.hpp's wire_kind::public_key
// would shadow it (-Wshadow).
#include "apiary/core/protocol/any_block.hpp"
//
#include "apiary/harness/replay/real_traffic.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "apiary/core/chain/genesis_vesting.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "io/json_out.hpp"

namespace apiary::harness {

namespace {

// The category of a root post created at genesis for a comment the range only references.
constexpr std::string_view genesis_category = "iceberg";

using comment_key = std::pair<core::account_name, std::string>;
using parent_of = std::map<comment_key, comment_key>;  // a comment's parent, from its first comment operation

// The colony's kind of a modelled operation, if it has one.
std::optional<colony::op_kind> mix_kind_of(const core::operation& op) {
  if (const auto* c = std::get_if<core::comment_operation>(&op))
    return c->parent_author.empty() ? colony::op_kind::article : colony::op_kind::reply;
  if (std::holds_alternative<core::vote_operation>(op)) return colony::op_kind::vote;
  if (std::holds_alternative<core::transfer_operation>(op)) return colony::op_kind::transfer;
  if (std::holds_alternative<core::custom_json_operation>(op)) return colony::op_kind::custom_json;
  return std::nullopt;
}

std::uint32_t wire_id_of(const core::operation& op) {
  return std::visit([](const auto& o) { return o.wire_id; }, op);
}

// What the range's operations need to exist at genesis, in the order they first need it.
class iceberg {
 public:
  iceberg(const core::chain_options& chain, parent_of parents) : chain_(chain), parents_(std::move(parents)) {}

  void account(const core::account_name& name) {
    if (name.empty() || name.view() == chain_.witness || !accounts_.emplace(name, order_.size()).second) return;
    order_.push_back(name);
    sends_.emplace_back();
  }
  void sends(const core::transfer_operation& t) {
    account(t.from);
    account(t.to);
    auto& s = sends_[accounts_.at(t.from)];
    (t.amount.symbol == core::asset_symbol::hbd ? s.second : s.first) += t.amount.amount;
  }
  // A comment an operation needs to exist already: created at genesis unless the range
  // created it before.
  void needs(const core::account_name& author, const std::string& permlink) {
    comment_key key{author, permlink};
    if (comments_.count(key)) return;
    account(author);
    core::genesis_comment c{author, permlink, core::account_name(), std::string(genesis_category)};
    if (auto p = parents_.find(key); p != parents_.end() && !p->second.first.empty()) {
      needs(p->second.first, p->second.second);
      c.parent_author = p->second.first;
      c.parent_permlink = p->second.second;
    }
    comments_.insert(std::move(key));
    genesis_comments_.push_back(std::move(c));
  }
  // A comment operation creates (or edits) the comment.
  void comes(const core::comment_operation& c) {
    account(c.author);
    if (!c.parent_author.empty()) needs(c.parent_author, c.parent_permlink);
    comments_.insert({c.author, c.permlink});
  }

  core::genesis_additions take() {
    core::genesis_additions add;
    const core::vesting_sampler vesting(chain_.genesis_vesting);
    for (std::size_t i = 0; i < order_.size(); ++i)
      add.accounts.push_back({order_[i], std::max(chain_.genesis_hive, sends_[i].first),
                              std::max(chain_.genesis_hbd, sends_[i].second),
                              static_cast<std::int64_t>(vesting(static_cast<std::uint32_t>(i)))});
    add.comments = std::move(genesis_comments_);
    return add;
  }

 private:
  const core::chain_options& chain_;
  parent_of parents_;
  std::map<core::account_name, std::size_t> accounts_;
  std::vector<core::account_name> order_;
  std::vector<std::pair<std::int64_t, std::int64_t>> sends_;  // HIVE and HBD each account transfers
  std::set<comment_key> comments_;
  std::vector<core::genesis_comment> genesis_comments_;
};

void reference(iceberg& ice, const core::operation& op) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, core::vote_operation>) {
          ice.account(o.voter);
          ice.needs(o.author, o.permlink);
        } else if constexpr (std::is_same_v<T, core::comment_operation>) {
          ice.comes(o);
        } else if constexpr (std::is_same_v<T, core::transfer_operation>) {
          ice.sends(o);
        } else if constexpr (std::is_same_v<T, core::custom_json_operation>) {
          for (const auto& a : o.required_auths) ice.account(a);
          for (const auto& a : o.required_posting_auths) ice.account(a);
        } else if constexpr (std::is_same_v<T, core::comment_options_operation>) {
          ice.needs(o.author, o.permlink);
          for (const auto& e : o.extensions)
            for (const auto& b : e.beneficiaries) ice.account(b.account);
        }
      },
      op);
}

}  // namespace

real_traffic convert_real_blocks(block_file& file, std::uint32_t from, std::uint32_t to,
                                 const core::chain_options& chain) {
  const std::size_t kinds = core::operation_kinds().size();
  real_traffic t;
  t.kind = std::string(file.kind());
  t.first_block = from;
  t.last_block = to;
  t.in_blocks.assign(kinds, 0);
  t.applied.assign(kinds, 0);
  t.rejected.assign(kinds, 0);

  // The modelled operations of each real transaction, in order.
  std::vector<std::vector<core::operation>> kept;
  core::block_layout layout;
  file.read(from, to, [&](std::span<const std::uint8_t> packed, const core::block_expectations&) {
    const core::any_block b = core::decode_any_block(packed, layout);
    ++t.blocks;
    for (const core::any_transaction& tx : b.transactions) {
      ++t.transactions;
      std::vector<core::operation> ops;
      for (const core::any_operation& op : tx.operations) {
        ++t.in_blocks[op.wire_id()];
        if (const auto* m = std::get_if<core::operation>(&op.op)) ops.push_back(*m);
      }
      if (ops.empty())
        ++t.transactions_skipped;
      else
        kept.push_back(std::move(ops));
    }
  });

  parent_of parents;
  for (const auto& ops : kept)
    for (const core::operation& op : ops)
      if (const auto* c = std::get_if<core::comment_operation>(&op))
        parents.emplace(comment_key{c->author, c->permlink}, comment_key{c->parent_author, c->parent_permlink});
  iceberg ice(chain, std::move(parents));

  // Every transaction on the genesis head (block 0, the all-zero id), expiring an hour later.
  const core::time_point_sec expiration =
      core::time_point_sec{chain.genesis_time} + core::chain_limits::max_expiration_secs;
  t.converted.reserve(kept.size());
  for (auto& ops : kept) {
    core::signed_transaction tx;
    tx.set_reference_block(core::block_id{});
    tx.expiration = expiration;
    for (core::operation& op : ops) {
      reference(ice, op);
      if (const auto k = mix_kind_of(op)) ++t.by_mix_kind[colony::index_of(*k)];
      tx.operations.push_back(std::move(op));
    }
    t.converted.push_back(std::make_shared<const core::full_transaction>(std::move(tx), chain.chain));
  }
  t.genesis = ice.take();
  return t;
}

void apply_outcomes(real_traffic& t, const std::vector<core::reject>& outcomes) {
  for (std::size_t i = 0; i < t.converted.size() && i < outcomes.size(); ++i)
    for (const core::operation& op : t.converted[i]->tx().operations)
      ++(outcomes[i] == core::reject::none ? t.applied : t.rejected)[wire_id_of(op)];
}

namespace {

std::uint64_t modelled_total(const real_traffic& t) {
  std::uint64_t n = 0;
  for (const std::uint64_t k : t.by_mix_kind) n += k;
  return n;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// The kinds the blocks hold, the most frequent first.
std::vector<std::size_t> kinds_present(const real_traffic& t) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < t.in_blocks.size(); ++i)
    if (t.in_blocks[i] != 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.in_blocks[a] > t.in_blocks[b]; });
  return order;
}

std::uint64_t skipped(const real_traffic& t, std::size_t kind) {
  return t.in_blocks[kind] - t.applied[kind] - t.rejected[kind];
}

}  // namespace

void write_real_traffic(json_out& j, const real_traffic& t, const colony::mix_config& mix) {
  j.key("real_traffic");
  j.begin_object();
  j.field("file_kind", t.kind);
  j.field("first_block", t.first_block);
  j.field("last_block", t.last_block);
  j.field("blocks", t.blocks);
  j.field("transactions", t.transactions);
  j.field("transactions_pushed", static_cast<std::uint64_t>(t.converted.size()));
  j.field("transactions_skipped", t.transactions_skipped);
  j.field("accounts_created", static_cast<std::uint64_t>(t.genesis.accounts.size()));
  j.field("comments_created", static_cast<std::uint64_t>(t.genesis.comments.size()));
  j.key("operations");
  j.begin_array();
  for (const std::size_t k : kinds_present(t)) {
    const core::operation_kind& kind = core::operation_kinds()[k];
    j.begin_object();
    j.field("kind", kind.name);
    j.field("modeled", kind.how == core::operation_class::modeled);
    j.field("in_blocks", t.in_blocks[k]);
    j.field("applied", t.applied[k]);
    j.field("rejected", t.rejected[k]);
    j.field("skipped", skipped(t, k));
    j.field("skipped_share", share(skipped(t, k), t.in_blocks[k]), 4);
    j.end_object();
  }
  j.end_array();
  j.key("mix");
  j.begin_array();
  const std::uint64_t modelled = modelled_total(t);
  for (const colony::op_kind k : colony::all_op_kinds) {
    j.begin_object();
    j.field("kind", colony::op_kind_name(k));
    j.field("operations", t.by_mix_kind[colony::index_of(k)]);
    j.field("real_share", share(t.by_mix_kind[colony::index_of(k)], modelled), 4);
    j.field("typical_share", mix.share(k), 4);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

std::string format_real_traffic(const real_traffic& t, const colony::mix_config& mix) {
  std::string s =
      fmt::format("Real blocks {}-{} ({}): {} blocks, {} transactions: {} pushed, {} skipped (no modelled operation)\n",
                  grouped(t.first_block), grouped(t.last_block), t.kind, grouped(t.blocks), grouped(t.transactions),
                  grouped(t.converted.size()), grouped(t.transactions_skipped));
  s += fmt::format("  created at genesis: {} accounts, {} comments\n", grouped(t.genesis.accounts.size()),
                   grouped(t.genesis.comments.size()));
  for (const std::size_t k : kinds_present(t)) {
    const core::operation_kind& kind = core::operation_kinds()[k];
    if (kind.how == core::operation_class::modeled)
      s += fmt::format("  {} {}: {} applied, {} rejected\n", kind.name, grouped(t.in_blocks[k]), grouped(t.applied[k]),
                       grouped(t.rejected[k]));
    else
      s += fmt::format("  {} {}: skipped (not modelled)\n", kind.name, grouped(t.in_blocks[k]));
  }
  const std::uint64_t modelled = modelled_total(t);
  s += "  mix, real vs typical:";
  for (const colony::op_kind k : colony::all_op_kinds)
    s += fmt::format(" {} {:.1f}% vs {:.1f}%", colony::op_kind_name(k),
                     100 * share(t.by_mix_kind[colony::index_of(k)], modelled), 100 * mix.share(k));
  return s + "\n";
}

}  // namespace apiary::harness
