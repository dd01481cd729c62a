#include "apiary/core/chain/chain_options.hpp"

#include <charconv>

#include "apiary/core/base/check.hpp"

namespace apiary::core {

account_name genesis_account_name(std::string_view prefix, std::uint32_t i) {
  char buf[account_name::max_size];
  APIARY_CHECK(prefix.size() < sizeof buf);
  std::copy(prefix.begin(), prefix.end(), buf);
  auto r = std::to_chars(buf + prefix.size(), buf + sizeof buf, i);
  APIARY_CHECK(r.ec == std::errc{});  // the name must fit in 16 characters
  return account_name(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

}  // namespace apiary::core
