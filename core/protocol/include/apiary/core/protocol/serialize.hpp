// Hive's binary wire format (fc::raw): little-endian integers, LEB128 varint lengths and
// counts, strings as length + bytes, vectors as count + elements, static variants as a
// varint index + the alternative, structs as their fields in declaration order.
//
// Three streams share one set of pack() overloads:
//   size_counter - counts the bytes a value packs to, writing nothing;
//   byte_writer  - appends to an out_buffer, with a dedicated single-byte path (put);
//   byte_reader  - reads from a byte span; any truncation or malformed value throws
//                  decode_error naming what was being read and at which offset. It never
//                  reads outside its span.
// A struct joins in by declaring `template <class Self, class F> static void fields(Self&, F&&)`
// which calls f(name, member) for each member in wire order; the same list drives packing,
// unpacking, JSON and comparison.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/asset.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

static_assert(std::endian::native == std::endian::little,
              "apiary writes integers with memcpy and assumes a little-endian host");

// Thrown by byte_reader and unpack(): the input is not a valid encoding.
class decode_error : public std::runtime_error {
 public:
  decode_error(const std::string& what, std::size_t offset)
      : std::runtime_error(what + " at byte " + std::to_string(offset)), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

class size_counter {
 public:
  void put(std::uint8_t) { ++n_; }
  void write(const void*, std::size_t n) { n_ += n; }
  std::size_t size() const { return n_; }

 private:
  std::size_t n_ = 0;
};

class byte_writer {
 public:
  explicit byte_writer(out_buffer& out) : out_(out) {}
  void put(std::uint8_t b) { out_.put(static_cast<char>(b)); }
  void write(const void* p, std::size_t n) { out_.append(p, n); }

 private:
  out_buffer& out_;
};

class byte_reader {
 public:
  explicit byte_reader(std::span<const std::uint8_t> in)
      : begin_(in.data()), p_(in.data()), end_(in.data() + in.size()) {}

  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }
  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
  const std::uint8_t* position() const { return p_; }
  bool at_end() const { return p_ == end_; }

  std::uint8_t get(const char* what) {
    if (p_ == end_) [[unlikely]]
      truncated(what, 1);
    return *p_++;
  }
  void read(void* out, std::size_t n, const char* what) { std::memcpy(out, take(n, what), n); }
  // Returns a pointer to the next n bytes and steps over them.
  const std::uint8_t* take(std::size_t n, const char* what) {
    if (remaining() < n) [[unlikely]]
      truncated(what, n);
    const std::uint8_t* p = p_;
    p_ += n;
    return p;
  }
  [[noreturn]] void fail(const std::string& what) const { throw decode_error(what, offset()); }

 private:
  [[noreturn]] void truncated(const char* what, std::size_t need) const;

  const std::uint8_t* begin_;
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// ---- reflection ----------------------------------------------------------------------

template <class T>
concept reflected = requires(T& t) {
  T::fields(t, [](const char*, auto&) {});
};

// ---- varint (fc::unsigned_int: at most 32 bits, so at most 5 bytes) ------------------

inline std::size_t varint_size(std::uint32_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

template <class S>
void pack_varint(S& s, std::uint32_t v) {
  while (v >= 0x80) {
    s.put(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  s.put(static_cast<std::uint8_t>(v));
}
inline void pack_varint(size_counter& s, std::uint32_t v) { s.write(nullptr, varint_size(v)); }

std::uint32_t unpack_varint(byte_reader& r, const char* what);

// ---- primitives -----------------------------------------------------------------------

template <class S, class T>
requires std::is_integral_v<T>
void pack(S& s, T v) {
  if constexpr (sizeof(T) == 1)
    s.put(static_cast<std::uint8_t>(v));
  else
    s.write(&v, sizeof v);
}
template <class T>
requires std::is_integral_v<T>
void unpack(byte_reader& r, T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    std::uint8_t b = r.get("bool");
    if (b > 1) r.fail("bool holds " + std::to_string(b) + ", not 0 or 1");
    v = b != 0;
  } else if constexpr (sizeof(T) == 1) {
    v = static_cast<T>(r.get("byte"));
  } else {
    r.read(&v, sizeof v, "integer");
  }
}

template <class S>
void pack(S& s, std::string_view str) {
  pack_varint(s, static_cast<std::uint32_t>(str.size()));
  s.write(str.data(), str.size());
}
template <class S>
void pack(S& s, const std::string& str) {
  pack(s, std::string_view(str));
}
void unpack(byte_reader& r, std::string& str);

template <class S>
void pack(S& s, const account_name& a) {
  pack(s, a.view());
}
void unpack(byte_reader& r, account_name& a);

template <class S, std::size_t N>
void pack(S& s, const fixed_bytes<N>& b) {
  s.write(b.begin(), N);
}
template <std::size_t N>
void unpack(byte_reader& r, fixed_bytes<N>& b) {
  r.read(b.begin(), N, "fixed-size bytes");
}

template <class S>
void pack(S& s, time_point_sec t) {
  pack(s, t.secs);
}
inline void unpack(byte_reader& r, time_point_sec& t) { unpack(r, t.secs); }

template <class S>
void pack(S& s, const asset& a) {
  pack(s, a.amount);
  pack(s, asset::legacy_symbol_word(a.symbol));
}
void unpack(byte_reader& r, asset& a);

// std::vector and boost's small_vector alike: count, then the elements.
template <class C>
concept sequence = !std::is_same_v<C, std::string> && requires(C & c, std::size_t n) {
  typename C::value_type;
  c.resize(n);
  c.begin();
  c.end();
};

template <class S, sequence C>
void pack(S& s, const C& v) {
  pack_varint(s, static_cast<std::uint32_t>(v.size()));
  for (const auto& e : v) pack(s, e);
}
template <sequence C>
void unpack(byte_reader& r, C& v) {
  std::uint32_t n = unpack_varint(r, "vector length");
  // Every element takes at least one byte, so a count beyond what is left is malformed;
  // checking first keeps a hostile count from reserving gigabytes.
  if (n > r.remaining()) r.fail("vector length " + std::to_string(n) + " exceeds the remaining input");
  v.clear();
  v.resize(n);
  for (auto& e : v) unpack(r, e);
}

// ---- reflected structs ----------------------------------------------------------------

template <class S, reflected T>
void pack(S& s, const T& v) {
  T::fields(v, [&s](const char*, const auto& m) { pack(s, m); });
}
template <reflected T>
void unpack(byte_reader& r, T& v) {
  T::fields(v, [&r](const char*, auto& m) { unpack(r, m); });
}

// ---- entry points ---------------------------------------------------------------------

template <class T>
std::size_t packed_size(const T& v) {
  size_counter s;
  pack(s, v);
  return s.size();
}

template <class T>
void pack_into(out_buffer& out, const T& v) {
  byte_writer w(out);
  pack(w, v);
}

// Decodes a whole value; trailing bytes are an error.
template <class T>
T unpack_from(std::span<const std::uint8_t> in) {
  byte_reader r(in);
  T v{};
  unpack(r, v);
  if (!r.at_end()) r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes");
  return v;
}

}  // namespace apiary::core
