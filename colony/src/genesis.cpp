#include "apiary/colony/genesis.hpp"

#include <string>

#include "apiary/core/base/check.hpp"
#include "apiary/core/chain/chain_options.hpp"

namespace apiary::colony {

std::vector<core::account_name> genesis_account_names(std::size_t n, std::string_view prefix) {
  APIARY_CHECK(prefix.size() >= 3 && prefix.size() <= 10);
  for (char c : prefix) APIARY_CHECK(c >= 'a' && c <= 'z');
  APIARY_CHECK(n == 0 || prefix.size() + std::to_string(n - 1).size() <= core::account_name::max_size);
  std::vector<core::account_name> names;
  names.reserve(n);
  // The chain names its genesis accounts the same way.
  for (std::size_t i = 0; i < n; ++i)
    names.push_back(core::genesis_account_name(prefix, static_cast<std::uint32_t>(i)));
  return names;
}

std::vector<core::account_name> deal_accounts(std::span<const core::account_name> genesis, std::size_t thread_index,
                                              std::size_t thread_count) {
  APIARY_CHECK(thread_count > 0 && thread_index < thread_count);
  std::vector<core::account_name> mine;
  mine.reserve(genesis.size() / thread_count + 1);
  for (std::size_t i = thread_index; i < genesis.size(); i += thread_count) mine.push_back(genesis[i]);
  return mine;
}

}  // namespace apiary::colony
