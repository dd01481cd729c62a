#include "apiary/core/protocol/json.hpp"

#include <charconv>

namespace apiary::core {

namespace {

// 0: copy as is; otherwise the character after the backslash ('u' for \u00XX).
constexpr std::array<char, 256> make_escape_table() {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = 'u';
  t['"'] = '"';
  t['\\'] = '\\';
  t['\b'] = 'b';
  t['\f'] = 'f';
  t['\n'] = 'n';
  t['\r'] = 'r';
  t['\t'] = 't';
  return t;
}
constexpr std::array<char, 256> escape_table = make_escape_table();

}  // namespace

void json_writer::string(std::string_view s) {
  // Worst case every byte becomes \u00XX: reserve once, then write through a raw pointer.
  char* out = out_.prepare(s.size() * 6 + 2);
  char* p = out;
  *p++ = '"';
  const char* run = s.data();
  const char* end = s.data() + s.size();
  for (const char* c = run; c != end; ++c) {
    char e = escape_table[static_cast<unsigned char>(*c)];
    if (e == 0) [[likely]]
      continue;
    std::size_t n = static_cast<std::size_t>(c - run);
    std::memcpy(p, run, n);
    p += n;
    *p++ = '\\';
    *p++ = e;
    if (e == 'u') {
      auto v = static_cast<unsigned char>(*c);
      std::memcpy(p, "00", 2);
      std::memcpy(p + 2, detail::hex_pairs + 2 * v, 2);
      p += 4;
    }
    run = c + 1;
  }
  std::size_t n = static_cast<std::size_t>(end - run);
  std::memcpy(p, run, n);
  p += n;
  *p++ = '"';
  out_.commit(static_cast<std::size_t>(p - out));
}

void json_writer::key(std::string_view k) {
  // Keys are apiary's own field names: no escaping needed.
  char* p = out_.prepare(k.size() + 3);
  p[0] = '"';
  std::memcpy(p + 1, k.data(), k.size());
  p[k.size() + 1] = '"';
  p[k.size() + 2] = ':';
  out_.commit(k.size() + 3);
}

void json_writer::number(std::int64_t v) {
  char* p = out_.prepare(20);
  auto r = std::to_chars(p, p + 20, v);
  out_.commit(static_cast<std::size_t>(r.ptr - p));
}

void json_writer::number(std::uint64_t v) {
  char* p = out_.prepare(20);
  auto r = std::to_chars(p, p + 20, v);
  out_.commit(static_cast<std::size_t>(r.ptr - p));
}

void json_writer::hex(const std::uint8_t* bytes, std::size_t n) {
  char* p = out_.prepare(2 * n + 2);
  p[0] = '"';
  to_hex(bytes, n, p + 1);
  p[2 * n + 1] = '"';
  out_.commit(2 * n + 2);
}

void json_writer::time(time_point_sec t) {
  char* p = out_.prepare(21);
  p[0] = '"';
  t.to_iso(p + 1);
  p[20] = '"';
  out_.commit(21);
}

void json_writer::amount(const asset& a) {
  // "-123.456 HIVE": sign, integer part, three decimals, symbol.
  char* p = out_.prepare(32);
  char* q = p;
  *q++ = '"';
  std::uint64_t mag = a.amount < 0 ? 0 - static_cast<std::uint64_t>(a.amount) : static_cast<std::uint64_t>(a.amount);
  if (a.amount < 0) *q++ = '-';
  q = std::to_chars(q, q + 20, mag / 1000).ptr;
  unsigned frac = static_cast<unsigned>(mag % 1000);
  q[0] = '.';
  q[1] = static_cast<char>('0' + frac / 100);
  q[2] = static_cast<char>('0' + frac / 10 % 10);
  q[3] = static_cast<char>('0' + frac % 10);
  q[4] = ' ';
  q += 5;
  std::string_view sym = asset::symbol_text(a.symbol);
  std::memcpy(q, sym.data(), sym.size());
  q += sym.size();
  *q++ = '"';
  out_.commit(static_cast<std::size_t>(q - p));
}

// ---- values --------------------------------------------------------------------------

namespace {

void value(json_writer& w, const operation& op);

template <class T>
requires std::is_integral_v<T>
void value(json_writer& w, T v) {
  if constexpr (std::is_same_v<T, bool>)
    w.boolean(v);
  else if constexpr (std::is_signed_v<T>)
    w.number(static_cast<std::int64_t>(v));
  else
    w.number(static_cast<std::uint64_t>(v));
}
void value(json_writer& w, const std::string& s) { w.string(s); }
void value(json_writer& w, const account_name& a) { w.string(a.view()); }
void value(json_writer& w, const asset& a) { w.amount(a); }
void value(json_writer& w, time_point_sec t) { w.time(t); }
void value(json_writer& w, const no_extensions&) { w.raw("[]"); }
template <std::size_t N>
void value(json_writer& w, const fixed_bytes<N>& b) {
  w.hex(b.begin(), N);
}

template <reflected T>
void value(json_writer& w, const T& v);

// The only comment_options extension, in legacy form: [0, {"beneficiaries": [...]}].
void value(json_writer& w, const comment_payout_beneficiaries& e) {
  w.raw("[0,");
  value<comment_payout_beneficiaries>(w, e);
  w.put(']');
}

template <sequence C>
void value(json_writer& w, const C& v) {
  w.put('[');
  bool first = true;
  for (const auto& e : v) {
    if (!first) w.put(',');
    first = false;
    value(w, e);
  }
  w.put(']');
}

// The members of an object without its braces, so callers can add members of their own.
template <reflected T>
void members(json_writer& w, const T& v) {
  bool first = true;
  T::fields(v, [&](const char* name, const auto& m) {
    if (!first) w.put(',');
    first = false;
    w.key(name);
    value(w, m);
  });
}

template <reflected T>
void value(json_writer& w, const T& v) {
  w.put('{');
  members(w, v);
  w.put('}');
}

void value(json_writer& w, const operation& op) {
  std::visit(
      [&w](const auto& o) {
        w.put('[');
        w.string(o.name);
        w.put(',');
        value(w, o);
        w.put(']');
      },
      op);
}

}  // namespace

void write_json(json_writer& w, const operation& op) { value(w, op); }
void write_json(json_writer& w, const transaction& tx) { value(w, tx); }
void write_json(json_writer& w, const signed_transaction& tx) { value(w, tx); }
void write_json(json_writer& w, const signed_block& b) { value(w, b); }

void write_json(json_writer& w, const signed_block& b, const block_id& id,
                std::span<const transaction_id> transaction_ids) {
  w.put('{');
  members(w, b);
  w.raw(",\"block_id\":");
  value(w, id);
  w.raw(",\"transaction_ids\":[");
  for (std::size_t i = 0; i < transaction_ids.size(); ++i) {
    if (i) w.put(',');
    value(w, transaction_ids[i]);
  }
  w.raw("]}");
}

}  // namespace apiary::core
