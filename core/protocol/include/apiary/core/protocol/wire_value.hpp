// Hive's wire types described as data, and values held by such a description: how apiary
// decodes, packs and reads from JSON the operations (and extensions) it has no C++ type for.
// A packed block gives no length per operation, so every kind is decoded from its exact
// layout: the description is that layout, field by field, in the order of Hive's FC_REFLECT
// lines. Re-packing a decoded value gives back the same bytes.
//
// Not for the hot path: the values are trees of small vectors. Descriptions are constexpr
// data, read-only, shared by every thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/fwd.hpp>

#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core {

enum class wire_kind : std::uint8_t {
  boolean,  // one byte, 0 or 1
  uint8,    // the integers: little-endian, two's complement
  uint16,
  int16,
  uint32,
  uint64,
  int64,
  string,      // varint length + bytes: strings, account names, json strings, custom ids
  bytes,       // vector<char>: varint length + bytes; hex in JSON
  time,        // uint32 seconds; "2016-04-29T04:12:36" in JSON
  version,     // uint32 (major << 24 | minor << 16 | revision); "0.19.2" in JSON
  asset,       // int64 amount + 8-byte legacy symbol; "1.000 HIVE" or {amount, precision, nai}
  public_key,  // 33 bytes; "STM..." in JSON
  fixed,       // `size` bytes (digests, ids, signatures); hex in JSON
  structure,   // the fields in order; a JSON object
  pair,        // a flat_map's entry, two fields in order; a JSON array of two
  sequence,    // varint count + the elements (vector, flat_set, flat_map); a JSON array
  optional,    // a byte 0 or 1, then the element when 1; JSON null or absent
  variant,     // varint index + that alternative (`fields` lists them by their JSON name)
  nothing,     // void_t: no bytes
};

struct wire_type;

struct wire_field {
  std::string_view name;
  const wire_type* type;
};

struct wire_type {
  wire_kind kind;
  std::size_t size = 0;                  // fixed
  const wire_type* element = nullptr;    // sequence, optional
  std::span<const wire_field> fields{};  // structure, pair; variant: the alternatives
};

// A value of a described type.
struct wire_value {
  std::uint64_t number = 0;       // integers (signed ones as their bit pattern), bool, time, version,
                                  // asset amount, variant index
  std::uint64_t symbol = 0;       // asset: the legacy symbol word
  std::string bytes;              // string, bytes, public_key, fixed
  std::vector<wire_value> items;  // the fields, the elements, optional's value, variant's alternative

  bool operator==(const wire_value&) const = default;
};

// Packs v as t; v must hold t's shape (as unpack_wire and read_wire_json make it).
void pack_wire(byte_writer& s, const wire_type& t, const wire_value& v);
void pack_wire(size_counter& s, const wire_type& t, const wire_value& v);
// Decodes t, or throws decode_error naming what and where.
void unpack_wire(byte_reader& r, const wire_type& t, wire_value& v);

// A JSON value that does not fit its description: what is wrong, and where in the JSON
// (a path like "operations[0].value.amount"), which each enclosing level prefixes.
class json_shape_error : public std::runtime_error {
 public:
  json_shape_error(std::string path, const std::string& problem)
      : std::runtime_error(problem), path_(std::move(path)), problem_(problem) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  // "path: problem", or the problem alone at the top.
  std::string text() const { return path_.empty() ? problem_ : path_ + ": " + problem_; }
  // Puts a field name or an [index] in front of the path.
  void prefix(std::string_view step);

 private:
  std::string path_;
  std::string problem_;
};

// Reads t from Hive's JSON, in either form block_api and condenser_api give: legacy
// (assets as "1.000 STEEM", variants as [index or name, value]) or HF26 (assets as
// {"amount", "precision", "nai"}, variants as {"type": name, "value": ...}).
void read_wire_json(const boost::json::value& j, const wire_type& t, wire_value& v);

// ---- JSON leaves, shared with the readers of apiary's own types ---------------------

// An integer given as a JSON number or a decimal string (Hive writes 64-bit ones as
// strings), within [lo, hi].
std::int64_t json_signed(const boost::json::value& j, std::int64_t lo, std::int64_t hi);
std::uint64_t json_unsigned(const boost::json::value& j, std::uint64_t hi);
const boost::json::string& json_text(const boost::json::value& j);
// An asset in either form, as its amount and legacy symbol word.
struct json_asset {
  std::int64_t amount;
  std::uint64_t symbol_word;
};
json_asset json_asset_value(const boost::json::value& j);
time_point_sec json_time(const boost::json::value& j);
// Exactly n bytes as 2n hex characters.
void json_hex(const boost::json::value& j, std::uint8_t* out, std::size_t n);

// A static variant's JSON in either form: the alternative's index (given as a number, or
// by its name among `names`) and the JSON of its value.
struct json_alternative {
  std::size_t index;
  const boost::json::value* value;
};
json_alternative json_variant(const boost::json::value& j, std::span<const std::string_view> names);

// ---- common descriptions -------------------------------------------------------------

namespace wire {
inline constexpr wire_type boolean{wire_kind::boolean};
inline constexpr wire_type uint8{wire_kind::uint8};
inline constexpr wire_type uint16{wire_kind::uint16};
inline constexpr wire_type int16{wire_kind::int16};
inline constexpr wire_type uint32{wire_kind::uint32};
inline constexpr wire_type uint64{wire_kind::uint64};
inline constexpr wire_type int64{wire_kind::int64};
inline constexpr wire_type string{wire_kind::string};
inline constexpr wire_type bytes{wire_kind::bytes};
inline constexpr wire_type time{wire_kind::time};
inline constexpr wire_type version{wire_kind::version};
inline constexpr wire_type asset{wire_kind::asset};
inline constexpr wire_type public_key{wire_kind::public_key};
inline constexpr wire_type sha256{wire_kind::fixed, 32};
inline constexpr wire_type ripemd160{wire_kind::fixed, 20};  // block ids, checksums
inline constexpr wire_type signature{wire_kind::fixed, 65};
inline constexpr wire_type nothing{wire_kind::nothing};

// Hive's extensions_type: a flat_set of static_variant<void_t>.
inline constexpr wire_field future_extension_alternatives[] = {{"void_t", &nothing}};
inline constexpr wire_type future_extension{wire_kind::variant, 0, nullptr, future_extension_alternatives};
inline constexpr wire_type extensions{wire_kind::sequence, 0, &future_extension};

// A block header's extensions: void_t, the witness's version, its hardfork vote.
inline constexpr wire_field hardfork_version_vote_fields[] = {{"hf_version", &version}, {"hf_time", &time}};
inline constexpr wire_type hardfork_version_vote{wire_kind::structure, 0, nullptr, hardfork_version_vote_fields};
inline constexpr wire_field block_header_extension_alternatives[] = {
    {"void_t", &nothing}, {"version", &version}, {"hardfork_version_vote", &hardfork_version_vote}};
inline constexpr wire_type block_header_extension{wire_kind::variant, 0, nullptr, block_header_extension_alternatives};
inline constexpr wire_type block_header_extensions{wire_kind::sequence, 0, &block_header_extension};
}  // namespace wire

// A described value as a member of a reflected struct: packs, unpacks and compares as T.
template <const wire_type& T>
struct described {
  wire_value value;
  bool operator==(const described&) const = default;
};
template <class S, const wire_type& T>
void pack(S& s, const described<T>& d) {
  pack_wire(s, T, d.value);
}
template <const wire_type& T>
void unpack(byte_reader& r, described<T>& d) {
  unpack_wire(r, T, d.value);
}

}  // namespace apiary::core
