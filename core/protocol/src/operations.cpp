#include "apiary/core/protocol/operations.hpp"

#include <string>
#include <utility>

namespace apiary::core {

std::string_view operation_name(const operation& op) {
  return std::visit([](const auto& o) { return o.name; }, op);
}

namespace {

template <std::size_t... I>
bool unpack_alternative(byte_reader& r, std::uint32_t wire_id, operation& op, std::index_sequence<I...>) {
  auto try_one = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
    using Op = std::variant_alternative_t<K, operation>;
    if (Op::wire_id != wire_id) return false;
    Op o;
    unpack(r, o);
    op = std::move(o);
    return true;
  };
  return (try_one(std::integral_constant<std::size_t, I>{}) || ...);
}

// "vote=0, comment=1, ...", from the variant itself.
template <std::size_t... I>
std::string modeled_list(std::index_sequence<I...>) {
  std::string out;
  ((out += (out.empty() ? "" : ", ") + std::string(std::variant_alternative_t<I, operation>::name) + "=" +
           std::to_string(std::variant_alternative_t<I, operation>::wire_id)),
   ...);
  return out;
}

constexpr auto alternatives = std::make_index_sequence<std::variant_size_v<operation>>{};

}  // namespace

bool unpack_operation_fields(byte_reader& r, std::uint32_t wire_id, operation& op) {
  return unpack_alternative(r, wire_id, op, alternatives);
}

void unpack(byte_reader& r, operation& op) {
  std::uint32_t id = unpack_varint(r, "operation type");
  if (!unpack_operation_fields(r, id, op))
    r.fail("unsupported operation type " + std::to_string(id) + " (apiary decodes " + modeled_list(alternatives) + ")");
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
