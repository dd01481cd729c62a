#include "apiary/core/protocol/account_name.hpp"

#include "apiary/core/base/check.hpp"

namespace apiary::core {

account_name::account_name(std::string_view s) {
  APIARY_CHECK(s.size() <= max_size);
  std::memcpy(chars_, s.data(), s.size());
  size_ = static_cast<std::uint8_t>(s.size());
}

bool account_name::is_valid(std::string_view s) {
  if (s.size() < 3 || s.size() > max_size) return false;
  std::size_t begin = 0;
  while (true) {
    std::size_t end = s.find('.', begin);
    if (end == std::string_view::npos) end = s.size();
    std::string_view label = s.substr(begin, end - begin);
    if (label.size() < 3) return false;
    if (label.front() < 'a' || label.front() > 'z') return false;
    char last = label.back();
    if (!((last >= 'a' && last <= 'z') || (last >= '0' && last <= '9'))) return false;
    for (char c : label)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    if (end == s.size()) return true;
    begin = end + 1;
  }
}

}  // namespace apiary::core
