#include "apiary/core/protocol/block_api_json.hpp"

#include <boost/json.hpp>

#include <utility>

#include "json_shape.hpp"

namespace apiary::core {

namespace json = boost::json;

namespace {

using json_shape::at;
using json_shape::bad;

const json::object& object_of(const json::value& j) {
  if (!j.is_object()) bad("expected an object");
  return j.get_object();
}

// ---- apiary's own types, read through their fields() lists ------------------------------

void read(const json::value& j, bool& v) {
  if (!j.is_bool()) bad("expected true or false");
  v = j.get_bool();
}

template <class T>
requires std::is_integral_v<T>
void read(const json::value& j, T& v) {
  if constexpr (std::is_signed_v<T>)
    v = static_cast<T>(json_signed(j, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  else
    v = static_cast<T>(json_unsigned(j, std::numeric_limits<T>::max()));
}

void read(const json::value& j, std::string& v) { v = json_text(j); }

void read(const json::value& j, account_name& v) {
  const std::string_view s = json_text(j);
  if (s.size() > account_name::max_size)
    bad("account name \"" + std::string(s) + "\" is longer than " + std::to_string(account_name::max_size));
  v = account_name(s);
}

void read(const json::value& j, asset& v) {
  const json_asset a = json_asset_value(j);
  const auto symbol = asset::from_legacy_symbol_word(a.symbol_word);
  if (!symbol) bad("this field takes HIVE or HBD");
  v = {a.amount, *symbol};
}

void read(const json::value& j, time_point_sec& v) { v = json_time(j); }

template <std::size_t N>
void read(const json::value& j, fixed_bytes<N>& v) {
  json_hex(j, v.begin(), N);
}

template <const wire_type& T>
void read(const json::value& j, described<T>& v) {
  read_wire_json(j, T, v.value);
}

void read(const json::value& j, comment_payout_beneficiaries& v);
void read(const json::value& j, any_operation& v);
template <sequence C>
void read(const json::value& j, C& v);
template <reflected T>
void read(const json::value& j, T& v);

template <sequence C>
void read(const json::value& j, C& v) {
  if (!j.is_array()) bad("expected an array");
  const json::array& a = j.get_array();
  v.clear();
  v.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) at("[" + std::to_string(i) + "]", [&] { read(a[i], v[i]); });
}

template <reflected T>
void read(const json::value& j, T& v) {
  const json::object& o = object_of(j);
  T::fields(v, [&o](const char* name, auto& m) {
    const json::value* f = o.if_contains(name);
    if (!f) bad("missing field \"" + std::string(name) + "\"");
    at(name, [&] { read(*f, m); });
  });
}

void read(const json::value& j, comment_payout_beneficiaries& v) {
  const std::string_view names[] = {comment_payout_beneficiaries::name};
  const json_alternative alt = json_variant(j, names);
  at("value", [&] {
    const json::object& o = object_of(*alt.value);
    const json::value* list = o.if_contains("beneficiaries");
    if (!list) bad("missing field \"beneficiaries\"");
    at("beneficiaries", [&] { read(*list, v.beneficiaries); });
  });
}

template <std::size_t... I>
void read_modeled(const json::value& j, std::uint32_t wire_id, operation& op, std::index_sequence<I...>) {
  auto try_one = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
    using Op = std::variant_alternative_t<K, operation>;
    if (Op::wire_id != wire_id) return false;
    Op o;
    read(j, o);
    op = std::move(o);
    return true;
  };
  (try_one(std::integral_constant<std::size_t, I>{}) || ...);
}

void read(const json::value& j, any_operation& v) {
  // Legacy ["vote", {...}] or HF26 {"type": "vote_operation", "value": {...}}.
  const json::value* name = nullptr;
  const json::value* value = nullptr;
  if (j.is_object()) {
    name = j.get_object().if_contains("type");
    value = j.get_object().if_contains("value");
  } else if (j.is_array() && j.get_array().size() == 2) {
    name = &j.get_array()[0];
    value = &j.get_array()[1];
  }
  if (!name || !value || !name->is_string())
    bad(R"(expected an operation, ["name", {...}] or {"type": "name_operation", "value": {...}})");
  const operation_kind* kind = find_operation_kind(name->get_string());
  if (!kind) bad("unknown operation \"" + std::string(name->get_string()) + "\"");
  if (kind->how == operation_class::virtual_op)
    bad(std::string(kind->name) + " is a virtual operation, which never appears in a block or a transaction");
  at("value", [&] {
    if (kind->how == operation_class::modeled) {
      operation op;
      read_modeled(*value, kind->wire_id, op, std::make_index_sequence<std::variant_size_v<operation>>{});
      v.op = std::move(op);
    } else {
      described_operation d;
      d.wire_id = kind->wire_id;
      read_wire_json(*value, kind->layout, d.fields);
      v.op = std::move(d);
    }
  });
}

// ---- the file -------------------------------------------------------------------------------

json::value parse(std::string_view text) {
  json::stream_parser p;
  json::error_code ec;
  std::size_t n = p.write(text.data(), text.size(), ec);
  if (!ec) {
    p.finish(ec);
    if (ec) n = text.size();
  }
  if (ec) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < n && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw block_json_error("not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                           " (byte " + std::to_string(n) + "): " + ec.message());
  }
  return p.release();
}

json_block read_block(const json::value& j, std::size_t index) {
  json_block b;
  b.index = index;
  const json::object& o = object_of(j);
  read(j, b.block);
  if (const json::value* id = o.if_contains("block_id")) {
    block_id x;
    at("block_id", [&] { read(*id, x); });
    b.expected.id = x;
  }
  if (const json::value* key = o.if_contains("signing_key")) {
    at("signing_key", [&] {
      auto k = public_key_bytes_from_string(json_text(*key));
      if (!k) bad("not a public key");
      b.expected.signing_key = *k;
    });
  }
  if (const json::value* ids = o.if_contains("transaction_ids")) {
    std::vector<transaction_id> x;
    at("transaction_ids", [&] { read(*ids, x); });
    b.expected.transaction_ids = std::move(x);
  }
  return b;
}

// "blocks[4] (block 1000004)": where a block sits, with its number when its "previous" says.
std::string block_place(const json::value& j, std::string_view step) {
  std::string out(step);
  if (const json::object* o = j.if_object())
    if (const json::value* prev = o->if_contains("previous"); prev && prev->is_string())
      if (auto id = fixed_from_hex<20>(prev->get_string()))
        out += " (block " + std::to_string(block_num_from_id(*id) + 1) + ")";
  return out;
}

template <class T>
T read_one(std::string_view text) {
  const json::value j = parse(text);
  T v;
  try {
    read(j, v);
  } catch (const json_shape_error& e) {
    throw block_json_error(e.text());
  }
  return v;
}

}  // namespace

bool looks_like_json_object(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

std::vector<json_block> read_block_api_json(std::string_view text) {
  const json::value doc = parse(text);
  const json::value* top = &doc;
  std::string top_step;
  if (const json::object* o = top->if_object(); o && o->contains("result")) {
    top = &o->at("result");
    top_step = "result.";
  }
  const json::object* o = top->if_object();
  const json::value* blocks = o ? o->if_contains("blocks") : nullptr;
  const json::value* block = o ? o->if_contains("block") : nullptr;
  std::vector<json_block> out;
  if (blocks && blocks->is_array()) {
    const json::array& a = blocks->get_array();
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      try {
        out.push_back(read_block(a[i], i));
      } catch (const json_shape_error& e) {
        throw block_json_error(block_place(a[i], top_step + "blocks[" + std::to_string(i) + "]") + ": " + e.text());
      }
    }
  } else if (block) {
    try {
      out.push_back(read_block(*block, 0));
    } catch (const json_shape_error& e) {
      throw block_json_error(block_place(*block, top_step + "block") + ": " + e.text());
    }
  } else {
    throw block_json_error(
        "no blocks: expected block_api's get_block result {\"block\": {...}} or get_block_range result "
        "{\"blocks\": [...]}");
  }
  return out;
}

any_operation operation_from_json(std::string_view text) { return read_one<any_operation>(text); }
any_transaction transaction_from_json(std::string_view text) { return read_one<any_transaction>(text); }

}  // namespace apiary::core
