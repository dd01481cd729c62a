// The Hive operations apiary generates and evaluates, with their wire ids (the index of
// each in Hive's operation static variant) and fields in Hive's wire order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/asset.hpp"
#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core {

// A flat_set of account names on the wire. Almost always one name or none, so it is kept
// inline without a heap allocation.
using account_set = boost::container::small_vector<account_name, 1>;

struct vote_operation {
  static constexpr std::uint32_t wire_id = 0;
  static constexpr std::string_view name = "vote";

  account_name voter;
  account_name author;
  std::string permlink;
  std::int16_t weight = 0;  // -10000..10000, in hundredths of a percent

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("voter", s.voter);
    f("author", s.author);
    f("permlink", s.permlink);
    f("weight", s.weight);
  }
  bool operator==(const vote_operation&) const = default;
};

struct comment_operation {
  static constexpr std::uint32_t wire_id = 1;
  static constexpr std::string_view name = "comment";

  account_name parent_author;   // empty for a root post
  std::string parent_permlink;  // the category for a root post
  account_name author;
  std::string permlink;
  std::string title;
  std::string body;
  std::string json_metadata;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("parent_author", s.parent_author);
    f("parent_permlink", s.parent_permlink);
    f("author", s.author);
    f("permlink", s.permlink);
    f("title", s.title);
    f("body", s.body);
    f("json_metadata", s.json_metadata);
  }
  bool operator==(const comment_operation&) const = default;
};

struct transfer_operation {
  static constexpr std::uint32_t wire_id = 2;
  static constexpr std::string_view name = "transfer";

  account_name from;
  account_name to;
  asset amount;
  std::string memo;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("from", s.from);
    f("to", s.to);
    f("amount", s.amount);
    f("memo", s.memo);
  }
  bool operator==(const transfer_operation&) const = default;
};

struct custom_json_operation {
  static constexpr std::uint32_t wire_id = 18;
  static constexpr std::string_view name = "custom_json";

  // flat_sets on the wire: strictly increasing, checked when decoding.
  account_set required_auths;
  account_set required_posting_auths;
  std::string id;  // at most 32 characters (a chain rule, checked by the core)
  std::string json;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("required_auths", s.required_auths);
    f("required_posting_auths", s.required_posting_auths);
    f("id", s.id);
    f("json", s.json);
  }
  bool operator==(const custom_json_operation&) const = default;
};

struct beneficiary_route {
  account_name account;
  std::uint16_t weight = 0;  // hundredths of a percent

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("account", s.account);
    f("weight", s.weight);
  }
  bool operator==(const beneficiary_route&) const = default;
};

// comment_options' extensions: Hive's comment_options_extension variant, of which apiary
// knows the only main-net alternative, comment_payout_beneficiaries (index 0).
struct comment_payout_beneficiaries {
  static constexpr std::uint32_t wire_id = 0;
  static constexpr std::string_view name = "comment_payout_beneficiaries";

  std::vector<beneficiary_route> beneficiaries;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("beneficiaries", s.beneficiaries);
  }
  bool operator==(const comment_payout_beneficiaries&) const = default;
};

struct comment_options_operation {
  static constexpr std::uint32_t wire_id = 19;
  static constexpr std::string_view name = "comment_options";

  account_name author;
  std::string permlink;
  asset max_accepted_payout = asset::hbd(1'000'000'000);
  std::uint16_t percent_hbd = 10000;
  bool allow_votes = true;
  bool allow_curation_rewards = true;
  std::vector<comment_payout_beneficiaries> extensions;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("author", s.author);
    f("permlink", s.permlink);
    f("max_accepted_payout", s.max_accepted_payout);
    f("percent_hbd", s.percent_hbd);
    f("allow_votes", s.allow_votes);
    f("allow_curation_rewards", s.allow_curation_rewards);
    f("extensions", s.extensions);
  }
  bool operator==(const comment_options_operation&) const = default;
};

using operation = std::variant<vote_operation, comment_operation, transfer_operation, custom_json_operation,
                               comment_options_operation>;

// The name of the operation in the variant, as Hive's legacy JSON names it.
std::string_view operation_name(const operation& op);

// Static-variant packing: the wire id, then the alternative's fields.
template <class S>
void pack(S& s, const operation& op) {
  std::visit(
      [&s](const auto& o) {
        pack_varint(s, o.wire_id);
        pack(s, o);
      },
      op);
}
void unpack(byte_reader& r, operation& op);
// The fields of the alternative whose wire id is `wire_id` (the id already read); false, with
// nothing read, when apiary models no operation of that id.
bool unpack_operation_fields(byte_reader& r, std::uint32_t wire_id, operation& op);

template <class S>
void pack(S& s, const comment_payout_beneficiaries& e) {
  pack_varint(s, comment_payout_beneficiaries::wire_id);
  pack(s, e.beneficiaries);
}
void unpack(byte_reader& r, comment_payout_beneficiaries& e);

// custom_json's flat_sets must be strictly increasing; unpack checks it.
void unpack_account_set(byte_reader& r, account_set& v);
inline void unpack(byte_reader& r, custom_json_operation& op) {
  unpack_account_set(r, op.required_auths);
  unpack_account_set(r, op.required_posting_auths);
  unpack(r, op.id);
  unpack(r, op.json);
}

}  // namespace apiary::core
