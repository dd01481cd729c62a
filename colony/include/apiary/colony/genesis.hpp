// The accounts a colony works with: deterministic genesis names and how they are dealt to
// generator threads (round-robin, as Hive's colony deals its workers).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "apiary/core/protocol/account_name.hpp"

namespace apiary::colony {

// prefix + "0" .. prefix + (n-1): "user0", "user1", ... Every name must be a valid Hive
// account name, so the prefix is 3..10 lower-case letters (checked).
std::vector<core::account_name> genesis_account_names(std::size_t n, std::string_view prefix = "user");

// The accounts of thread `thread_index` out of `thread_count`: every thread_count-th name
// starting at thread_index, in genesis order.
std::vector<core::account_name> deal_accounts(std::span<const core::account_name> genesis, std::size_t thread_index,
                                              std::size_t thread_count);

}  // namespace apiary::colony
