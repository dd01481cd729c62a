// memory_budget: what this machine can hold, so a size or count that cannot fit (a genesis,
// a workload, a file) is refused before anything is allocated, with the numbers, instead of
// ending in std::bad_alloc or the OOM killer halfway through.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "apiary/harness/config/run_config.hpp"

namespace apiary::harness {

// What apiary holds in memory per item, rounded up from what was measured (release build):
// a genesis account (state object, keys, name) about 540 bytes; a generated transaction
// (decoded, packed, signed, with its signer keys) about 1,300 bytes.
inline constexpr std::uint64_t bytes_per_account = 1024;
inline constexpr std::uint64_t bytes_per_transaction = 2048;
// A slot of the transaction-id table, reserved at genesis for an hour of ids
// (sized_chain()): a lower bound, the ids themselves come on top as transactions arrive.
inline constexpr std::uint64_t bytes_per_id_slot = 16;

// The memory this process may still take: the kernel's MemAvailable, capped by the cgroup's
// limit and by RLIMIT_AS where those are set.
std::uint64_t available_memory();

// Whether `bytes` fit in available_memory(): nullopt, or "about X in memory, more than the Y
// available".
std::optional<std::string> memory_problem(std::uint64_t bytes);

// What a command will hold, against available_memory(): the genesis (--accounts), the
// transactions --dump-transactions keeps, `workload_transactions` generated up front
// (workload and replay), and what the block size implies: two blocks of transactions in
// flight and the id table sized for an hour of blocks. An error line naming the option, or
// nullopt; `asked_by` names the option that asks for the workload's transactions when it is
// not --transactions (a replay's --blocks on the chain's clock, a snapshot's --blocks).
std::optional<std::string> check_memory(const run_config& c, std::uint64_t workload_transactions,
                                        const std::string& asked_by = {});

}  // namespace apiary::harness
