#include "apiary/core/protocol/any_operation.hpp"

#include <array>
#include <string>
#include <utility>

namespace apiary::core {

// A namespace of its own: the layouts' short names (asset, sha256, public_key, ...) name
// wire types here and must not meet core's types of the same names.
namespace layouts {
namespace {

// The layouts: each list is a FC_REFLECT line of Hive's protocol headers (hive_operations.hpp,
// dhf_operations.hpp), field by field in its order, which is the wire order (it differs from
// the declaration order in escrow_transfer and limit_order_create2).

using wire::asset;
using wire::boolean;
using wire::extensions;
using wire::int64;
using wire::public_key;
using wire::ripemd160;
using wire::sha256;
using wire::string;
using wire::time;
using wire::uint16;
using wire::uint32;
using wire::uint64;
constexpr const wire_type& account = wire::string;  // account_name_type: a string of at most 16

constexpr wire_field account_weight_fields[] = {{"account", &account}, {"weight", &uint16}};
constexpr wire_type account_weight{wire_kind::pair, 0, nullptr, account_weight_fields};
constexpr wire_field key_weight_fields[] = {{"key", &public_key}, {"weight", &uint16}};
constexpr wire_type key_weight{wire_kind::pair, 0, nullptr, key_weight_fields};
constexpr wire_type account_weights{wire_kind::sequence, 0, &account_weight};
constexpr wire_type key_weights{wire_kind::sequence, 0, &key_weight};
constexpr wire_field authority_fields[] = {
    {"weight_threshold", &uint32}, {"account_auths", &account_weights}, {"key_auths", &key_weights}};
constexpr wire_type authority{wire_kind::structure, 0, nullptr, authority_fields};
constexpr wire_type optional_authority{wire_kind::optional, 0, &authority};
constexpr wire_type authorities{wire_kind::sequence, 0, &authority};
constexpr wire_type optional_public_key{wire_kind::optional, 0, &public_key};
constexpr wire_type account_set{wire_kind::sequence, 0, &account};
constexpr wire_type int64_set{wire_kind::sequence, 0, &int64};
constexpr wire_type bytes = wire::bytes;

constexpr wire_field price_fields[] = {{"base", &asset}, {"quote", &asset}};
constexpr wire_type price{wire_kind::structure, 0, nullptr, price_fields};

// legacy_chain_properties
constexpr wire_field chain_properties_fields[] = {
    {"account_creation_fee", &asset}, {"maximum_block_size", &uint32}, {"hbd_interest_rate", &uint16}};
constexpr wire_type chain_properties{wire_kind::structure, 0, nullptr, chain_properties_fields};

constexpr wire_field pow_fields[] = {
    {"worker", &public_key}, {"input", &sha256}, {"signature", &wire::signature}, {"work", &sha256}};
constexpr wire_type pow{wire_kind::structure, 0, nullptr, pow_fields};

constexpr wire_field pow2_input_fields[] = {
    {"worker_account", &account}, {"prev_block", &ripemd160}, {"nonce", &uint64}};
constexpr wire_type pow2_input{wire_kind::structure, 0, nullptr, pow2_input_fields};
constexpr wire_field pow2_fields[] = {{"input", &pow2_input}, {"pow_summary", &uint32}};
constexpr wire_type pow2{wire_kind::structure, 0, nullptr, pow2_fields};
constexpr wire_type uint32_list{wire_kind::sequence, 0, &uint32};
// fc::equihash::proof
constexpr wire_field equihash_proof_fields[] = {
    {"n", &uint32}, {"k", &uint32}, {"seed", &sha256}, {"inputs", &uint32_list}};
constexpr wire_type equihash_proof{wire_kind::structure, 0, nullptr, equihash_proof_fields};
constexpr wire_field equihash_pow_fields[] = {
    {"input", &pow2_input}, {"proof", &equihash_proof}, {"prev_block", &ripemd160}, {"pow_summary", &uint32}};
constexpr wire_type equihash_pow{wire_kind::structure, 0, nullptr, equihash_pow_fields};
constexpr wire_field pow2_work_alternatives[] = {{"pow2", &pow2}, {"equihash_pow", &equihash_pow}};
constexpr wire_type pow2_work{wire_kind::variant, 0, nullptr, pow2_work_alternatives};

constexpr wire_field property_fields[] = {{"key", &string}, {"value", &bytes}};
constexpr wire_type property{wire_kind::pair, 0, nullptr, property_fields};
constexpr wire_type properties{wire_kind::sequence, 0, &property};

constexpr wire_field pair_id_fields[] = {{"pair_id", &wire::uint8}};
constexpr wire_type pair_id{wire_kind::structure, 0, nullptr, pair_id_fields};
constexpr wire_field recurrent_transfer_extension_alternatives[] = {{"void_t", &wire::nothing},
                                                                    {"recurrent_transfer_pair_id", &pair_id}};
constexpr wire_type recurrent_transfer_extension{wire_kind::variant, 0, nullptr,
                                                 recurrent_transfer_extension_alternatives};
constexpr wire_type recurrent_transfer_extensions{wire_kind::sequence, 0, &recurrent_transfer_extension};

constexpr wire_field end_date_fields[] = {{"end_date", &time}};
constexpr wire_type end_date{wire_kind::structure, 0, nullptr, end_date_fields};
constexpr wire_field update_proposal_extension_alternatives[] = {{"void_t", &wire::nothing},
                                                                 {"update_proposal_end_date", &end_date}};
constexpr wire_type update_proposal_extension{wire_kind::variant, 0, nullptr, update_proposal_extension_alternatives};
constexpr wire_type update_proposal_extensions{wire_kind::sequence, 0, &update_proposal_extension};

constexpr wire_field transfer_to_vesting[] = {{"from", &account}, {"to", &account}, {"amount", &asset}};
constexpr wire_field withdraw_vesting[] = {{"account", &account}, {"vesting_shares", &asset}};
constexpr wire_field limit_order_create[] = {{"owner", &account},        {"orderid", &uint32},
                                             {"amount_to_sell", &asset}, {"min_to_receive", &asset},
                                             {"fill_or_kill", &boolean}, {"expiration", &time}};
constexpr wire_field limit_order_cancel[] = {{"owner", &account}, {"orderid", &uint32}};
constexpr wire_field feed_publish[] = {{"publisher", &account}, {"exchange_rate", &price}};
constexpr wire_field convert[] = {{"owner", &account}, {"requestid", &uint32}, {"amount", &asset}};
constexpr wire_field account_create[] = {
    {"fee", &asset},        {"creator", &account},   {"new_account_name", &account}, {"owner", &authority},
    {"active", &authority}, {"posting", &authority}, {"memo_key", &public_key},      {"json_metadata", &string}};
constexpr wire_field account_update[] = {{"account", &account},           {"owner", &optional_authority},
                                         {"active", &optional_authority}, {"posting", &optional_authority},
                                         {"memo_key", &public_key},       {"json_metadata", &string}};
constexpr wire_field witness_update[] = {{"owner", &account},
                                         {"url", &string},
                                         {"block_signing_key", &public_key},
                                         {"props", &chain_properties},
                                         {"fee", &asset}};
constexpr wire_field account_witness_vote[] = {{"account", &account}, {"witness", &account}, {"approve", &boolean}};
constexpr wire_field account_witness_proxy[] = {{"account", &account}, {"proxy", &account}};
constexpr wire_field pow_operation[] = {{"worker_account", &account},
                                        {"block_id", &ripemd160},
                                        {"nonce", &uint64},
                                        {"work", &pow},
                                        {"props", &chain_properties}};
constexpr wire_field custom[] = {{"required_auths", &account_set}, {"id", &uint16}, {"data", &bytes}};
constexpr wire_field witness_block_approve[] = {{"witness", &account}, {"block_id", &ripemd160}};
constexpr wire_field delete_comment[] = {{"author", &account}, {"permlink", &string}};
constexpr wire_field set_withdraw_vesting_route[] = {
    {"from_account", &account}, {"to_account", &account}, {"percent", &uint16}, {"auto_vest", &boolean}};
constexpr wire_field limit_order_create2[] = {{"owner", &account},        {"orderid", &uint32},
                                              {"amount_to_sell", &asset}, {"exchange_rate", &price},
                                              {"fill_or_kill", &boolean}, {"expiration", &time}};
constexpr wire_field claim_account[] = {{"creator", &account}, {"fee", &asset}, {"extensions", &extensions}};
constexpr wire_field create_claimed_account[] = {
    {"creator", &account},   {"new_account_name", &account}, {"owner", &authority},      {"active", &authority},
    {"posting", &authority}, {"memo_key", &public_key},      {"json_metadata", &string}, {"extensions", &extensions}};
constexpr wire_field request_account_recovery[] = {{"recovery_account", &account},
                                                   {"account_to_recover", &account},
                                                   {"new_owner_authority", &authority},
                                                   {"extensions", &extensions}};
constexpr wire_field recover_account[] = {{"account_to_recover", &account},
                                          {"new_owner_authority", &authority},
                                          {"recent_owner_authority", &authority},
                                          {"extensions", &extensions}};
constexpr wire_field change_recovery_account[] = {
    {"account_to_recover", &account}, {"new_recovery_account", &account}, {"extensions", &extensions}};
constexpr wire_field escrow_transfer[] = {{"from", &account},
                                          {"to", &account},
                                          {"hbd_amount", &asset},
                                          {"hive_amount", &asset},
                                          {"escrow_id", &uint32},
                                          {"agent", &account},
                                          {"fee", &asset},
                                          {"json_meta", &string},
                                          {"ratification_deadline", &time},
                                          {"escrow_expiration", &time}};
constexpr wire_field escrow_dispute[] = {
    {"from", &account}, {"to", &account}, {"agent", &account}, {"who", &account}, {"escrow_id", &uint32}};
constexpr wire_field escrow_release[] = {{"from", &account},     {"to", &account},       {"agent", &account},
                                         {"who", &account},      {"receiver", &account}, {"escrow_id", &uint32},
                                         {"hbd_amount", &asset}, {"hive_amount", &asset}};
constexpr wire_field pow2_operation[] = {
    {"work", &pow2_work}, {"new_owner_key", &optional_public_key}, {"props", &chain_properties}};
constexpr wire_field escrow_approve[] = {{"from", &account}, {"to", &account},       {"agent", &account},
                                         {"who", &account},  {"escrow_id", &uint32}, {"approve", &boolean}};
constexpr wire_field transfer_to_savings[] = {
    {"from", &account}, {"to", &account}, {"amount", &asset}, {"memo", &string}};
constexpr wire_field transfer_from_savings[] = {
    {"from", &account}, {"request_id", &uint32}, {"to", &account}, {"amount", &asset}, {"memo", &string}};
constexpr wire_field cancel_transfer_from_savings[] = {{"from", &account}, {"request_id", &uint32}};
constexpr wire_field custom_binary[] = {{"required_owner_auths", &account_set},
                                        {"required_active_auths", &account_set},
                                        {"required_posting_auths", &account_set},
                                        {"required_auths", &authorities},
                                        {"id", &string},
                                        {"data", &bytes}};
constexpr wire_field decline_voting_rights[] = {{"account", &account}, {"decline", &boolean}};
constexpr wire_field reset_account[] = {
    {"reset_account", &account}, {"account_to_reset", &account}, {"new_owner_authority", &authority}};
constexpr wire_field set_reset_account[] = {
    {"account", &account}, {"current_reset_account", &account}, {"reset_account", &account}};
constexpr wire_field claim_reward_balance[] = {
    {"account", &account}, {"reward_hive", &asset}, {"reward_hbd", &asset}, {"reward_vests", &asset}};
constexpr wire_field delegate_vesting_shares[] = {
    {"delegator", &account}, {"delegatee", &account}, {"vesting_shares", &asset}};
constexpr wire_field account_create_with_delegation[] = {{"fee", &asset},
                                                         {"delegation", &asset},
                                                         {"creator", &account},
                                                         {"new_account_name", &account},
                                                         {"owner", &authority},
                                                         {"active", &authority},
                                                         {"posting", &authority},
                                                         {"memo_key", &public_key},
                                                         {"json_metadata", &string},
                                                         {"extensions", &extensions}};
constexpr wire_field witness_set_properties[] = {
    {"owner", &account}, {"props", &properties}, {"extensions", &extensions}};
constexpr wire_field account_update2[] = {{"account", &account},
                                          {"owner", &optional_authority},
                                          {"active", &optional_authority},
                                          {"posting", &optional_authority},
                                          {"memo_key", &optional_public_key},
                                          {"json_metadata", &string},
                                          {"posting_json_metadata", &string},
                                          {"extensions", &extensions}};
constexpr wire_field create_proposal[] = {{"creator", &account}, {"receiver", &account},     {"start_date", &time},
                                          {"end_date", &time},   {"daily_pay", &asset},      {"subject", &string},
                                          {"permlink", &string}, {"extensions", &extensions}};
constexpr wire_field update_proposal_votes[] = {
    {"voter", &account}, {"proposal_ids", &int64_set}, {"approve", &boolean}, {"extensions", &extensions}};
constexpr wire_field remove_proposal[] = {
    {"proposal_owner", &account}, {"proposal_ids", &int64_set}, {"extensions", &extensions}};
constexpr wire_field update_proposal[] = {{"proposal_id", &int64}, {"creator", &account},
                                          {"daily_pay", &asset},   {"subject", &string},
                                          {"permlink", &string},   {"extensions", &update_proposal_extensions}};
constexpr wire_field recurrent_transfer[] = {{"from", &account},
                                             {"to", &account},
                                             {"amount", &asset},
                                             {"memo", &string},
                                             {"recurrence", &uint16},
                                             {"executions", &uint16},
                                             {"extensions", &recurrent_transfer_extensions}};

constexpr operation_kind modeled_kind(std::uint32_t id, std::string_view name) {
  return {id, name, operation_class::modeled, {wire_kind::structure}};
}
constexpr operation_kind described_kind(std::uint32_t id, std::string_view name, std::span<const wire_field> fields) {
  return {id, name, operation_class::described, {wire_kind::structure, 0, nullptr, fields}};
}
constexpr operation_kind virtual_kind(std::uint32_t id, std::string_view name) {
  return {id, name, operation_class::virtual_op, {wire_kind::structure}};
}

// The order of Hive's operation static_variant (operations.hpp): a kind's index is its wire id.
constexpr operation_kind kinds[] = {
    modeled_kind(0, "vote"),
    modeled_kind(1, "comment"),
    modeled_kind(2, "transfer"),
    described_kind(3, "transfer_to_vesting", transfer_to_vesting),
    described_kind(4, "withdraw_vesting", withdraw_vesting),
    described_kind(5, "limit_order_create", limit_order_create),
    described_kind(6, "limit_order_cancel", limit_order_cancel),
    described_kind(7, "feed_publish", feed_publish),
    described_kind(8, "convert", convert),
    described_kind(9, "account_create", account_create),
    described_kind(10, "account_update", account_update),
    described_kind(11, "witness_update", witness_update),
    described_kind(12, "account_witness_vote", account_witness_vote),
    described_kind(13, "account_witness_proxy", account_witness_proxy),
    described_kind(14, "pow", pow_operation),
    described_kind(15, "custom", custom),
    described_kind(16, "witness_block_approve", witness_block_approve),
    described_kind(17, "delete_comment", delete_comment),
    modeled_kind(18, "custom_json"),
    modeled_kind(19, "comment_options"),
    described_kind(20, "set_withdraw_vesting_route", set_withdraw_vesting_route),
    described_kind(21, "limit_order_create2", limit_order_create2),
    described_kind(22, "claim_account", claim_account),
    described_kind(23, "create_claimed_account", create_claimed_account),
    described_kind(24, "request_account_recovery", request_account_recovery),
    described_kind(25, "recover_account", recover_account),
    described_kind(26, "change_recovery_account", change_recovery_account),
    described_kind(27, "escrow_transfer", escrow_transfer),
    described_kind(28, "escrow_dispute", escrow_dispute),
    described_kind(29, "escrow_release", escrow_release),
    described_kind(30, "pow2", pow2_operation),
    described_kind(31, "escrow_approve", escrow_approve),
    described_kind(32, "transfer_to_savings", transfer_to_savings),
    described_kind(33, "transfer_from_savings", transfer_from_savings),
    described_kind(34, "cancel_transfer_from_savings", cancel_transfer_from_savings),
    described_kind(35, "custom_binary", custom_binary),
    described_kind(36, "decline_voting_rights", decline_voting_rights),
    described_kind(37, "reset_account", reset_account),
    described_kind(38, "set_reset_account", set_reset_account),
    described_kind(39, "claim_reward_balance", claim_reward_balance),
    described_kind(40, "delegate_vesting_shares", delegate_vesting_shares),
    described_kind(41, "account_create_with_delegation", account_create_with_delegation),
    described_kind(42, "witness_set_properties", witness_set_properties),
    described_kind(43, "account_update2", account_update2),
    described_kind(44, "create_proposal", create_proposal),
    described_kind(45, "update_proposal_votes", update_proposal_votes),
    described_kind(46, "remove_proposal", remove_proposal),
    described_kind(47, "update_proposal", update_proposal),
    described_kind(48, "collateralized_convert", convert),
    described_kind(49, "recurrent_transfer", recurrent_transfer),
    virtual_kind(50, "fill_convert_request"),
    virtual_kind(51, "author_reward"),
    virtual_kind(52, "curation_reward"),
    virtual_kind(53, "comment_reward"),
    virtual_kind(54, "liquidity_reward"),
    virtual_kind(55, "interest"),
    virtual_kind(56, "fill_vesting_withdraw"),
    virtual_kind(57, "fill_order"),
    virtual_kind(58, "shutdown_witness"),
    virtual_kind(59, "fill_transfer_from_savings"),
    virtual_kind(60, "hardfork"),
    virtual_kind(61, "comment_payout_update"),
    virtual_kind(62, "return_vesting_delegation"),
    virtual_kind(63, "comment_benefactor_reward"),
    virtual_kind(64, "producer_reward"),
    virtual_kind(65, "clear_null_account_balance"),
    virtual_kind(66, "proposal_pay"),
    virtual_kind(67, "dhf_funding"),
    virtual_kind(68, "hardfork_hive"),
    virtual_kind(69, "hardfork_hive_restore"),
    virtual_kind(70, "delayed_voting"),
    virtual_kind(71, "consolidate_treasury_balance"),
    virtual_kind(72, "effective_comment_vote"),
    virtual_kind(73, "ineffective_delete_comment"),
    virtual_kind(74, "dhf_conversion"),
    virtual_kind(75, "expired_account_notification"),
    virtual_kind(76, "changed_recovery_account"),
    virtual_kind(77, "transfer_to_vesting_completed"),
    virtual_kind(78, "pow_reward"),
    virtual_kind(79, "vesting_shares_split"),
    virtual_kind(80, "account_created"),
    virtual_kind(81, "fill_collateralized_convert_request"),
    virtual_kind(82, "system_warning"),
    virtual_kind(83, "fill_recurrent_transfer"),
    virtual_kind(84, "failed_recurrent_transfer"),
    virtual_kind(85, "limit_order_cancelled"),
    virtual_kind(86, "producer_missed"),
    virtual_kind(87, "proposal_fee"),
    virtual_kind(88, "collateralized_convert_immediate_conversion"),
    virtual_kind(89, "escrow_approved"),
    virtual_kind(90, "escrow_rejected"),
    virtual_kind(91, "proxy_cleared"),
    virtual_kind(92, "declined_voting_rights"),
};

constexpr bool ids_are_indices() {
  for (std::size_t i = 0; i < std::size(kinds); ++i)
    if (kinds[i].wire_id != i) return false;
  return true;
}
static_assert(ids_are_indices(), "a kind's wire id is its index in Hive's operation static_variant");

// Every alternative of apiary's `operation` is the table's modeled kind of its wire id, and
// the table models nothing else.
template <std::size_t... I>
constexpr bool modeled_kinds_match(std::index_sequence<I...>) {
  const bool each = ((kinds[std::variant_alternative_t<I, operation>::wire_id].how == operation_class::modeled &&
                      kinds[std::variant_alternative_t<I, operation>::wire_id].name ==
                          std::variant_alternative_t<I, operation>::name) &&
                     ...);
  std::size_t modeled_count = 0;
  for (const operation_kind& k : kinds) modeled_count += k.how == operation_class::modeled;
  return each && modeled_count == sizeof...(I);
}
static_assert(modeled_kinds_match(std::make_index_sequence<std::variant_size_v<operation>>{}));

constexpr std::string_view hf26_suffix = "_operation";

}  // namespace
}  // namespace layouts

using layouts::hf26_suffix;
using layouts::kinds;

std::span<const operation_kind> operation_kinds() { return kinds; }

const operation_kind* find_operation_kind(std::string_view json_name) {
  if (json_name.ends_with(hf26_suffix)) json_name.remove_suffix(hf26_suffix.size());
  for (const operation_kind& k : kinds)
    if (k.name == json_name) return &k;
  return nullptr;
}

std::uint32_t any_operation::wire_id() const {
  if (const operation* o = std::get_if<operation>(&op)) return std::visit([](const auto& x) { return x.wire_id; }, *o);
  return std::get<described_operation>(op).wire_id;
}

void unpack(byte_reader& r, any_operation& a) {
  const std::size_t at = r.offset();
  const std::uint32_t id = unpack_varint(r, "operation type");
  if (id >= std::size(kinds))
    throw decode_error("unknown operation type " + std::to_string(id) + " (Hive's last is " +
                           std::to_string(std::size(kinds) - 1) + ")",
                       at);
  const operation_kind& k = kinds[id];
  switch (k.how) {
    case operation_class::virtual_op:
      throw decode_error("operation type " + std::to_string(id) + " is the virtual operation " + std::string(k.name) +
                             ", which never appears in a block or a transaction",
                         at);
    case operation_class::modeled: {
      operation o;
      unpack_operation_fields(r, id, o);
      a.op = std::move(o);
      return;
    }
    case operation_class::described: {
      described_operation d;
      d.wire_id = id;
      unpack_wire(r, k.layout, d.fields);
      a.op = std::move(d);
      return;
    }
  }
}

}  // namespace apiary::core
