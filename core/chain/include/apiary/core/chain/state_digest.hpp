// How chain::state_digest writes the state objects: each object's fields as its fields() list
// names them (state_objects.hpp), in that order, but for the few digest_leaves_out names.
//
// Every list names each of its object's members (state_fields.hpp checks it at compile
// time), and a field of a type the digest has no encoding for does not compile. So a new
// field cannot stay out of the digest unseen: leaving it out takes a line in
// digest_leaves_out, with its reason.
//
// The encoding is the one the digest always had, so digests compare across commits (the
// performance gate and the ladder do): integers and bools as their bytes in memory, times as
// their seconds, names and strings as their length (a size_t) and their characters, keys and
// ids as their bytes, arrays and beneficiary lists as their elements one after the other (no
// count), nested objects as their own fields.
#pragma once

#include <cstddef>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>

#include "apiary/core/chain/state_fields.hpp"
#include "apiary/core/chain/state_objects.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

namespace digest_detail {
template <class A, class B>
constexpr bool same_member(A a, B b) {
  if constexpr (std::is_same_v<A, B>)
    return a == b;
  else
    return false;
}
template <class V>
constexpr bool is_fixed_bytes = false;
template <std::size_t N>
constexpr bool is_fixed_bytes<fixed_bytes<N>> = true;
template <class V>
constexpr bool has_encoding = false;
inline void append_text(out_buffer& b, std::string_view text) {
  const std::size_t size = text.size();
  b.append(&size, sizeof size);
  b.append(text);
}
}  // namespace digest_detail

// The fields the digest leaves out, each for a reason; it writes every other field of the
// objects chain::state_digest walks.
//   global_properties_object::id      the single object's, always 0
//   global_properties_object::current_supply_hbd
//                                     set at genesis and never changed: no operation mints or
//                                     burns HBD (audit() holds the accounts' HBD to genesis)
//   global_properties_object::genesis_supply_hive
//                                     set at genesis and never changed: the accounts' HIVE and
//                                     current_supply_hive, which the digest writes, follow it
//   block_summary_object::id          every summary exists from genesis on and the digest
//                                     walks them in id order
//   transaction_object::id            depends on the dedup switch: pending ids have one only in
//                                     the unified index
// The custom-op counters (custom_op_counter_object) are not walked at all: they are the
// current block's, and in the state only with the "state" custom-ops switch.
template <class M>
constexpr bool digest_leaves_out(M member) {
  using digest_detail::same_member;
  return same_member(member, &global_properties_object::id) ||
         same_member(member, &global_properties_object::current_supply_hbd) ||
         same_member(member, &global_properties_object::genesis_supply_hive) ||
         same_member(member, &block_summary_object::id) || same_member(member, &transaction_object::id);
}

// Appends v as the state digest writes it.
template <class V>
void digest_append(out_buffer& b, const V& v) {
  if constexpr (std::is_arithmetic_v<V>) {
    b.append(&v, sizeof v);
  } else if constexpr (std::is_same_v<V, time_point_sec>) {
    digest_append(b, v.secs);
  } else if constexpr (std::is_same_v<V, account_name>) {
    digest_detail::append_text(b, v.view());
  } else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, state_string>) {
    digest_detail::append_text(b, v);
  } else if constexpr (digest_detail::is_fixed_bytes<V>) {
    b.append(v.begin(), v.size());
  } else if constexpr (state_fields<V>) {
    V::fields([&b, &v](const char*, auto member) {
      if (!digest_leaves_out(member)) digest_append(b, v.*member);
    });
  } else if constexpr (reflected<V>) {  // a protocol struct: beneficiary_route
    V::fields(v, [&b](const char*, const auto& m) { digest_append(b, m); });
  } else if constexpr (std::ranges::range<V>) {
    for (const auto& e : v) digest_append(b, e);
  } else {
    static_assert(digest_detail::has_encoding<V>, "the state digest has no encoding for this type");
  }
}

}  // namespace apiary::core
