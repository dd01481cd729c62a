#include "apiary/core/protocol/wire_value.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <limits>

#include "apiary/core/protocol/keys.hpp"
#include "json_shape.hpp"

namespace apiary::core {

namespace json = boost::json;

// ---- packing ----------------------------------------------------------------------------

namespace {

template <class S>
void pack_value(S& s, const wire_type& t, const wire_value& v) {
  switch (t.kind) {
    case wire_kind::boolean:
    case wire_kind::uint8: s.put(static_cast<std::uint8_t>(v.number)); return;
    case wire_kind::uint16:
    case wire_kind::int16: pack(s, static_cast<std::uint16_t>(v.number)); return;
    case wire_kind::uint32:
    case wire_kind::time:
    case wire_kind::version: pack(s, static_cast<std::uint32_t>(v.number)); return;
    case wire_kind::uint64:
    case wire_kind::int64: pack(s, v.number); return;
    case wire_kind::string:
    case wire_kind::bytes: pack(s, std::string_view(v.bytes)); return;
    case wire_kind::asset:
      pack(s, v.number);
      pack(s, v.symbol);
      return;
    case wire_kind::public_key:
    case wire_kind::fixed: s.write(v.bytes.data(), v.bytes.size()); return;
    case wire_kind::structure:
    case wire_kind::pair:
      for (std::size_t i = 0; i < t.fields.size(); ++i) pack_value(s, *t.fields[i].type, v.items[i]);
      return;
    case wire_kind::sequence:
      pack_varint(s, static_cast<std::uint32_t>(v.items.size()));
      for (const wire_value& e : v.items) pack_value(s, *t.element, e);
      return;
    case wire_kind::optional:
      s.put(v.items.empty() ? 0 : 1);
      if (!v.items.empty()) pack_value(s, *t.element, v.items.front());
      return;
    case wire_kind::variant:
      pack_varint(s, static_cast<std::uint32_t>(v.number));
      pack_value(s, *t.fields[v.number].type, v.items.front());
      return;
    case wire_kind::nothing: return;
  }
}

template <class T>
std::uint64_t read_int(byte_reader& r, const char* what) {
  T x;
  r.read(&x, sizeof x, what);
  if constexpr (std::is_signed_v<T>)
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
  else
    return x;
}

std::string take_string(byte_reader& r, const char* what) {
  std::uint32_t n = unpack_varint(r, what);
  const std::uint8_t* p = r.take(n, what);
  return std::string(reinterpret_cast<const char*>(p), n);
}

// A main net's legacy symbol word, or a test net's (kept as read, so packing again gives the
// same bytes).
bool known_symbol_word(std::uint64_t w) {
  for (const symbol_info& s : known_symbols)
    if (s.legacy_word() == w || s.testnet_legacy_word() == w) return true;
  return false;
}

}  // namespace

void pack_wire(byte_writer& s, const wire_type& t, const wire_value& v) { pack_value(s, t, v); }
void pack_wire(size_counter& s, const wire_type& t, const wire_value& v) { pack_value(s, t, v); }

void unpack_wire(byte_reader& r, const wire_type& t, wire_value& v) {
  switch (t.kind) {
    case wire_kind::boolean: {
      std::uint8_t b = r.get("bool");
      if (b > 1) r.fail("bool holds " + std::to_string(b) + ", not 0 or 1");
      v.number = b;
      return;
    }
    case wire_kind::uint8: v.number = r.get("byte"); return;
    case wire_kind::uint16: v.number = read_int<std::uint16_t>(r, "uint16"); return;
    case wire_kind::int16: v.number = read_int<std::int16_t>(r, "int16"); return;
    case wire_kind::uint32: v.number = read_int<std::uint32_t>(r, "uint32"); return;
    case wire_kind::time: v.number = read_int<std::uint32_t>(r, "time"); return;
    case wire_kind::version: v.number = read_int<std::uint32_t>(r, "version"); return;
    case wire_kind::uint64: v.number = read_int<std::uint64_t>(r, "uint64"); return;
    case wire_kind::int64: v.number = read_int<std::int64_t>(r, "int64"); return;
    case wire_kind::string: v.bytes = take_string(r, "string"); return;
    case wire_kind::bytes: v.bytes = take_string(r, "byte vector"); return;
    case wire_kind::asset:
      v.number = read_int<std::int64_t>(r, "asset amount");
      v.symbol = read_int<std::uint64_t>(r, "asset symbol");
      if (!known_symbol_word(v.symbol))
        r.fail("unknown asset symbol (Hive's legacy symbols are STEEM, SBD and VESTS; TESTS and TBD in a test net)");
      return;
    case wire_kind::public_key:
    case wire_kind::fixed: {
      const std::size_t n = t.kind == wire_kind::public_key ? 33 : t.size;
      const std::uint8_t* p = r.take(n, t.kind == wire_kind::public_key ? "public key" : "fixed-size bytes");
      v.bytes.assign(reinterpret_cast<const char*>(p), n);
      return;
    }
    case wire_kind::structure:
    case wire_kind::pair:
      v.items.resize(t.fields.size());
      for (std::size_t i = 0; i < t.fields.size(); ++i) unpack_wire(r, *t.fields[i].type, v.items[i]);
      return;
    case wire_kind::sequence: {
      std::uint32_t n = unpack_varint(r, "vector length");
      // Every element described here takes at least one byte.
      if (n > r.remaining()) r.fail("vector length " + std::to_string(n) + " exceeds the remaining input");
      v.items.resize(n);
      for (wire_value& e : v.items) unpack_wire(r, *t.element, e);
      return;
    }
    case wire_kind::optional: {
      std::uint8_t b = r.get("optional flag");
      if (b > 1) r.fail("optional flag holds " + std::to_string(b) + ", not 0 or 1");
      v.items.resize(b);
      if (b) unpack_wire(r, *t.element, v.items.front());
      return;
    }
    case wire_kind::variant: {
      std::uint32_t i = unpack_varint(r, "variant index");
      if (i >= t.fields.size())
        r.fail("variant index " + std::to_string(i) + " out of range (" + std::to_string(t.fields.size()) +
               " alternatives)");
      v.number = i;
      v.items.resize(1);
      unpack_wire(r, *t.fields[i].type, v.items.front());
      return;
    }
    case wire_kind::nothing: return;
  }
}

// ---- JSON -------------------------------------------------------------------------------

void json_shape_error::prefix(std::string_view step) {
  if (path_.empty() || path_.front() == '[')
    path_ = std::string(step) + path_;
  else
    path_ = std::string(step) + "." + path_;
}

namespace {

using json_shape::at;
using json_shape::bad;

std::string kind_of(const json::value& j) {
  switch (j.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

std::string index_step(std::size_t i) {
  std::string out(1, '[');
  out += std::to_string(i);
  out += ']';
  return out;
}

const json::array& json_array(const json::value& j, std::size_t n = SIZE_MAX) {
  if (!j.is_array()) bad("expected an array, found " + kind_of(j));
  if (n != SIZE_MAX && j.get_array().size() != n)
    bad("expected an array of " + std::to_string(n) + ", found " + std::to_string(j.get_array().size()) + " elements");
  return j.get_array();
}

template <class T>
bool parse_decimal(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

const symbol_info* symbol_by_nai(std::string_view nai) {
  for (const symbol_info& s : known_symbols)
    if (s.nai == nai) return &s;
  return nullptr;
}

const symbol_info* symbol_by_text(std::string_view text) {
  for (const symbol_info& s : known_symbols)
    if (s.name == text || s.old_name == text) return &s;
  return nullptr;
}

std::uint32_t version_from_text(std::string_view s) {
  std::uint32_t part[3];
  for (int i = 0; i < 3; ++i) {
    std::size_t dot = i < 2 ? s.find('.') : s.size();
    if (dot == std::string_view::npos || !parse_decimal(s.substr(0, dot), part[i]) ||
        part[i] > (i < 2 ? 0xffu : 0xffffu))
      bad("expected a version \"major.minor.revision\"");
    s = i < 2 ? s.substr(dot + 1) : std::string_view{};
  }
  return part[0] << 24 | part[1] << 16 | part[2];
}

// A value in a message: a string quoted, anything else by its kind.
std::string shown(const json::value& j) {
  if (!j.is_string()) return kind_of(j);
  std::string out(1, '"');
  out += j.get_string();
  out += '"';
  return out;
}

}  // namespace

const json::string& json_text(const json::value& j) {
  if (!j.is_string()) bad("expected a string, found " + kind_of(j));
  return j.get_string();
}

std::int64_t json_signed(const json::value& j, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (j.is_int64())
    v = j.get_int64();
  else if (j.is_uint64() && j.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    v = static_cast<std::int64_t>(j.get_uint64());
  else if (!j.is_string() || !parse_decimal(std::string_view(j.get_string()), v))
    bad(std::string("expected an integer, found ") + shown(j));
  if (v < lo || v > hi)
    bad(std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

std::uint64_t json_unsigned(const json::value& j, std::uint64_t hi) {
  std::uint64_t v = 0;
  if (j.is_uint64())
    v = j.get_uint64();
  else if (j.is_int64() && j.get_int64() >= 0)
    v = static_cast<std::uint64_t>(j.get_int64());
  else if (!j.is_string() || !parse_decimal(std::string_view(j.get_string()), v))
    bad(std::string("expected an unsigned integer, found ") + shown(j));
  if (v > hi) bad(std::to_string(v) + " exceeds the maximum " + std::to_string(hi));
  return v;
}

json_asset json_asset_value(const json::value& j) {
  if (j.is_object()) {
    const json::object& o = j.get_object();
    const json::value* amount = o.if_contains("amount");
    const json::value* precision = o.if_contains("precision");
    const json::value* nai = o.if_contains("nai");
    if (!amount || !precision || !nai) bad(R"(expected an asset {"amount", "precision", "nai"})");
    const symbol_info* s = symbol_by_nai(json_text(*nai));
    if (!s)
      bad("unknown NAI \"" + std::string(nai->get_string()) +
          "\" (Hive's are HIVE @@000000021, HBD @@000000013, VESTS @@000000037)");
    if (json_unsigned(*precision, 255) != s->precision)
      bad("precision " + json::serialize(*precision) + " is not " + std::string(s->name) + "'s " +
          std::to_string(s->precision));
    return {json_signed(*amount, INT64_MIN, INT64_MAX), s->legacy_word()};
  }
  // "-1.000 STEEM": an amount with exactly the symbol's number of decimals, a space, the symbol.
  const std::string_view text = json_text(j);
  const std::size_t space = text.find(' ');
  const symbol_info* s = space == std::string_view::npos ? nullptr : symbol_by_text(text.substr(space + 1));
  if (!s)
    bad(R"(expected an asset like "1.000 HIVE" (HIVE, STEEM, HBD, SBD or VESTS), found ")" + std::string(text) + "\"");
  std::string_view number = text.substr(0, space);
  const bool negative = number.starts_with('-');
  if (negative) number.remove_prefix(1);
  const std::size_t dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
  std::uint64_t w = 0;
  std::uint64_t f = 0;
  if (!parse_decimal(whole, w) || fraction.size() != s->precision || (s->precision && !parse_decimal(fraction, f)))
    bad("\"" + std::string(text) + "\" is not an amount with " + std::to_string(s->precision) + " decimals");
  std::uint64_t scale = 1;
  for (int i = 0; i < s->precision; ++i) scale *= 10;
  if (w > (static_cast<std::uint64_t>(INT64_MAX) - f) / scale) bad("\"" + std::string(text) + "\" is out of range");
  const auto amount = static_cast<std::int64_t>(w * scale + f);
  return {negative ? -amount : amount, s->legacy_word()};
}

time_point_sec json_time(const json::value& j) {
  auto t = time_point_sec::from_iso(json_text(j));
  if (!t) bad(R"(expected a time "YYYY-MM-DDTHH:MM:SS", found ")" + std::string(j.get_string()) + "\"");
  return *t;
}

void json_hex(const json::value& j, std::uint8_t* out, std::size_t n) {
  if (!from_hex(json_text(j), out, n)) bad("expected " + std::to_string(2 * n) + " hex characters");
}

json_alternative json_variant(const json::value& j, std::span<const std::string_view> names) {
  auto by_name = [&](std::string_view name) -> std::size_t {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    bad("unknown alternative \"" + std::string(name) + "\"");
  };
  if (j.is_object()) {
    const json::object& o = j.get_object();
    const json::value* type = o.if_contains("type");
    const json::value* value = o.if_contains("value");
    if (!type || !value) bad(R"(expected {"type": ..., "value": ...})");
    std::size_t i = 0;
    at("type", [&] { i = by_name(json_text(*type)); });
    return {i, value};
  }
  const json::array& a = json_array(j, 2);
  std::size_t i = 0;
  at("[0]", [&] {
    if (a[0].is_string())
      i = by_name(a[0].get_string());
    else
      i = json_unsigned(a[0], names.size() - 1);
  });
  return {i, &a[1]};
}

namespace {

// read_wire_json of the kinds that hold other values: each read by read_wire_json again.
void read_composite_json(const json::value& j, const wire_type& t, wire_value& v) {
  switch (t.kind) {
    case wire_kind::structure: {
      if (!j.is_object()) bad("expected an object, found " + kind_of(j));
      const json::object& o = j.get_object();
      v.items.resize(t.fields.size());
      for (std::size_t i = 0; i < t.fields.size(); ++i) {
        const wire_field& f = t.fields[i];
        const json::value* m = o.if_contains(f.name);
        if (!m && f.type->kind != wire_kind::optional) bad("missing field \"" + std::string(f.name) + "\"");
        at(f.name, [&] { read_wire_json(m ? *m : json::value(), *f.type, v.items[i]); });
      }
      return;
    }
    case wire_kind::pair: {
      const json::array& a = json_array(j, 2);
      v.items.resize(2);
      for (std::size_t i = 0; i < 2; ++i)
        at(index_step(i), [&] { read_wire_json(a[i], *t.fields[i].type, v.items[i]); });
      return;
    }
    case wire_kind::sequence: {
      const json::array& a = json_array(j);
      v.items.resize(a.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        at(index_step(i), [&] { read_wire_json(a[i], *t.element, v.items[i]); });
      return;
    }
    case wire_kind::optional:
      v.items.clear();
      if (!j.is_null()) {
        v.items.resize(1);
        read_wire_json(j, *t.element, v.items.front());
      }
      return;
    case wire_kind::variant: {
      std::vector<std::string_view> names;
      for (const wire_field& f : t.fields) names.push_back(f.name);
      json_alternative alt = json_variant(j, names);
      v.number = alt.index;
      v.items.resize(1);
      at("value", [&] { read_wire_json(*alt.value, *t.fields[alt.index].type, v.items.front()); });
      return;
    }
    default: return;  // the scalars: read_wire_json's own
  }
}

}  // namespace

void read_wire_json(const json::value& j, const wire_type& t, wire_value& v) {
  switch (t.kind) {
    case wire_kind::boolean:
      if (!j.is_bool()) bad("expected true or false, found " + kind_of(j));
      v.number = j.get_bool();
      return;
    case wire_kind::uint8: v.number = json_unsigned(j, UINT8_MAX); return;
    case wire_kind::uint16: v.number = json_unsigned(j, UINT16_MAX); return;
    case wire_kind::int16: v.number = static_cast<std::uint64_t>(json_signed(j, INT16_MIN, INT16_MAX)); return;
    case wire_kind::uint32: v.number = json_unsigned(j, UINT32_MAX); return;
    case wire_kind::uint64: v.number = json_unsigned(j, UINT64_MAX); return;
    case wire_kind::int64: v.number = static_cast<std::uint64_t>(json_signed(j, INT64_MIN, INT64_MAX)); return;
    case wire_kind::string: v.bytes = json_text(j); return;
    case wire_kind::bytes: {
      const std::string_view hex = json_text(j);
      if (hex.size() % 2) bad("expected hex bytes, found an odd number of characters");
      v.bytes.resize(hex.size() / 2);
      if (!from_hex(hex, reinterpret_cast<std::uint8_t*>(v.bytes.data()), v.bytes.size())) bad("expected hex bytes");
      return;
    }
    case wire_kind::time: v.number = json_time(j).secs; return;
    case wire_kind::version:
      v.number = j.is_string() ? version_from_text(j.get_string()) : json_unsigned(j, UINT32_MAX);
      return;
    case wire_kind::asset: {
      json_asset a = json_asset_value(j);
      v.number = static_cast<std::uint64_t>(a.amount);
      v.symbol = a.symbol_word;
      return;
    }
    case wire_kind::public_key: {
      auto k = public_key_bytes_from_string(json_text(j));
      if (!k) bad("\"" + std::string(j.get_string()) + "\" is not a public key (STM..., with a valid checksum)");
      v.bytes.assign(reinterpret_cast<const char*>(k->begin()), k->size());
      return;
    }
    case wire_kind::fixed:
      v.bytes.resize(t.size);
      json_hex(j, reinterpret_cast<std::uint8_t*>(v.bytes.data()), t.size);
      return;
    case wire_kind::structure:
    case wire_kind::pair:
    case wire_kind::sequence:
    case wire_kind::optional:
    case wire_kind::variant: read_composite_json(j, t, v); return;
    case wire_kind::nothing: return;
  }
}

}  // namespace apiary::core
