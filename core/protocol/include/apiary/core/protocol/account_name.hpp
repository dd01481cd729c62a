// account_name: Hive's fixed_string<16>, stored inline (no allocation, cheap to compare and
// hash) and packed on the wire as an ordinary varint-length string.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

namespace apiary::core {

class account_name {
 public:
  static constexpr std::size_t max_size = 16;

  account_name() = default;
  // Names longer than max_size are a programming error here; decoding checks before.
  account_name(std::string_view s);  // NOLINT(google-explicit-constructor): names are text
  account_name(const char* s) : account_name(std::string_view(s)) {}

  std::string_view view() const { return {chars_, size_}; }
  std::string str() const { return std::string(view()); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Hive's rule (is_valid_account_name): 3..16 characters, dot-separated labels of at
  // least 3 characters, each starting with a letter, ending with a letter or digit, and
  // holding only lower-case letters, digits and dashes.
  static bool is_valid(std::string_view s);

  friend bool operator==(const account_name& a, const account_name& b) {
    return a.size_ == b.size_ && std::memcmp(a.chars_, b.chars_, a.size_) == 0;
  }
  friend std::strong_ordering operator<=>(const account_name& a, const account_name& b) {
    return a.view().compare(b.view()) <=> 0;
  }

 private:
  char chars_[max_size]{};
  std::uint8_t size_ = 0;
};

}  // namespace apiary::core

template <>
struct std::hash<apiary::core::account_name> {
  std::size_t operator()(const apiary::core::account_name& a) const noexcept {
    return std::hash<std::string_view>{}(a.view());
  }
};

namespace apiary::core {
// For Boost's hashed containers.
inline std::size_t hash_value(const account_name& a) { return std::hash<account_name>{}(a); }
}  // namespace apiary::core
