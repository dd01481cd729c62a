// Every kind of Hive operation as of HF28, from one table (operation_kinds(): wire id, name,
// and how apiary holds it), and any_operation, which holds any operation a block can carry:
// the kinds apiary models (operations.hpp) as apiary's own types, every other kind as its
// described fields (wire_value.hpp), decoded from the exact layout Hive packs.
//
// Virtual operations (the wire ids after recurrent_transfer, 49) are made by a node while it
// applies blocks, for its history; they never travel in a block or a transaction, so decoding
// one from a block or a transaction is refused, naming it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "apiary/core/protocol/operations.hpp"
#include "apiary/core/protocol/wire_value.hpp"

namespace apiary::core {

enum class operation_class : std::uint8_t {
  modeled,    // an alternative of apiary's `operation`
  described,  // held as a wire_value of `layout`
  virtual_op  // never in a block
};

struct operation_kind {
  std::uint32_t wire_id;
  std::string_view name;  // as legacy JSON names it; HF26 JSON adds "_operation"
  operation_class how;
  wire_type layout;  // described kinds: a structure of the fields in wire order
};

// Indexed by wire id: operation_kinds()[id].wire_id == id.
std::span<const operation_kind> operation_kinds();
// By its legacy ("vote") or HF26 ("vote_operation") JSON name; null when unknown.
const operation_kind* find_operation_kind(std::string_view json_name);

// An operation of a kind apiary does not model: its kind and its fields (a structure value
// of the kind's layout).
struct described_operation {
  std::uint32_t wire_id = 0;
  wire_value fields;
  bool operator==(const described_operation&) const = default;
};

struct any_operation {
  std::variant<operation, described_operation> op;

  std::uint32_t wire_id() const;
  const operation_kind& kind() const { return operation_kinds()[wire_id()]; }
  bool operator==(const any_operation&) const = default;
};

template <class S>
void pack(S& s, const any_operation& a) {
  if (const operation* o = std::get_if<operation>(&a.op)) return pack(s, *o);
  const auto& d = std::get<described_operation>(a.op);
  pack_varint(s, d.wire_id);
  pack_wire(s, operation_kinds()[d.wire_id].layout, d.fields);
}
// Throws decode_error for an unknown wire id or a virtual operation, naming it.
void unpack(byte_reader& r, any_operation& a);

}  // namespace apiary::core
