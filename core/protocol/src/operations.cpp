#include "apiary/core/protocol/operations.hpp"

namespace apiary::core {

std::string_view operation_name(const operation& op) {
  return std::visit([](const auto& o) { return o.name; }, op);
}

namespace {
template <class Op>
void unpack_as(byte_reader& r, operation& op) {
  Op o;
  unpack(r, o);
  op = std::move(o);
}
}  // namespace

void unpack(byte_reader& r, operation& op) {
  std::uint32_t id = unpack_varint(r, "operation type");
  switch (id) {
    case vote_operation::wire_id: return unpack_as<vote_operation>(r, op);
    case comment_operation::wire_id: return unpack_as<comment_operation>(r, op);
    case transfer_operation::wire_id: return unpack_as<transfer_operation>(r, op);
    case custom_json_operation::wire_id: return unpack_as<custom_json_operation>(r, op);
    case comment_options_operation::wire_id: return unpack_as<comment_options_operation>(r, op);
    default:
      r.fail("unsupported operation type " + std::to_string(id) +
             " (apiary decodes vote=0, comment=1, transfer=2, custom_json=18, comment_options=19)");
  }
}

void unpack(byte_reader& r, comment_payout_beneficiaries& e) {
  std::uint32_t id = unpack_varint(r, "comment_options extension type");
  if (id != comment_payout_beneficiaries::wire_id)
    r.fail("unsupported comment_options extension type " + std::to_string(id));
  unpack(r, e.beneficiaries);
}

void unpack_account_set(byte_reader& r, account_set& v) {
  unpack(r, v);
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(v[i - 1] < v[i])) r.fail("account set is not strictly increasing");
}

}  // namespace apiary::core
