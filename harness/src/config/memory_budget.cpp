#include "apiary/harness/config/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "apiary/colony/colony.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {

namespace {

constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : unlimited;
}

std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  return in >> v ? v : unlimited;  // "max" reads as no number: no limit
}

// What the cgroup (v2) still allows.
std::uint64_t cgroup_available() {
  const std::uint64_t limit = read_number("/sys/fs/cgroup/memory.max");
  if (limit == unlimited) return unlimited;
  const std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
  return used == unlimited || used >= limit ? 0 : limit - used;
}

std::uint64_t address_space_available() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return unlimited;
  // What the process maps already (code, heap, thread stacks) comes off the limit.
  std::ifstream in("/proc/self/statm");
  std::uint64_t pages = 0;
  in >> pages;
  const std::uint64_t mapped = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return r.rlim_cur > mapped ? r.rlim_cur - mapped : 0;
}

}  // namespace

std::uint64_t available_memory() {
  return std::min({meminfo_available(), cgroup_available(), address_space_available()});
}

std::optional<std::string> memory_problem(std::uint64_t bytes) {
  const std::uint64_t available = available_memory();
  if (bytes <= available) return std::nullopt;
  return "about " + bytes_text(bytes) + " in memory, more than the " + bytes_text(available) + " available";
}

std::optional<std::string> check_memory(const run_config& c, std::uint64_t workload_transactions,
                                        const std::string& asked_by) {
  const std::uint64_t accounts = c.chain.genesis_accounts;
  const std::uint64_t dumped = c.out.dump_transactions.empty() ? 0 : c.out.dump_limit;
  // Saturating: a count near 2^64 must not wrap into a small need.
  const std::uint64_t most = unlimited / bytes_per_transaction;
  const std::uint64_t transactions = std::min(workload_transactions, most) + dumped;
  // The block size's share: two blocks of transactions (pending and the one being made) and
  // the id table's slots. Saturating as above.
  const core::chain_options sized = sized_chain(c, workload_transactions == 0 ? unlimited : workload_transactions);
  const std::uint64_t per_block = colony::estimate_block_transactions(c.colony);
  const std::uint64_t blocks_need =
      2 * per_block * bytes_per_transaction + sized.expected_transaction_ids * bytes_per_id_slot;
  const std::uint64_t need = accounts * bytes_per_account + std::min(transactions, most) * bytes_per_transaction;
  auto problem = memory_problem(need + blocks_need);
  if (!problem) return std::nullopt;
  if (blocks_need > need)
    return "--block-size " + grouped(c.writer.block_size) + ": " + *problem + " (about " + grouped(per_block) +
           " transactions a block, and the ids of an hour of such blocks)";
  const std::uint64_t per_item = workload_transactions != 0 ? bytes_per_transaction : bytes_per_account;
  const std::uint64_t fits = available_memory() / per_item;
  if (workload_transactions != 0)
    return (asked_by.empty() ? "--transactions " + grouped(workload_transactions) : asked_by) + ": " + *problem +
           " (at most about " + grouped(fits) + " transactions here)";
  if (dumped != 0 && dumped * bytes_per_transaction > accounts * bytes_per_account)
    return "--dump-limit " + grouped(dumped) + ": " + *problem;
  return "--accounts " + grouped(accounts) + ": " + *problem + " (at most about " + grouped(fits) + " accounts here)";
}

}  // namespace apiary::harness
