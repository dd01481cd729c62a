// derive_genesis_keys: the login derivation of every genesis account, spread over the cores.
#include "apiary/core/chain/genesis_keys.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "apiary/core/chain/chain_options.hpp"

namespace apiary::core {

std::vector<account_keys> derive_genesis_keys(std::string_view prefix, std::string_view password, std::uint32_t first,
                                              std::uint32_t end, const std::function<bool()>& cancelled) {
  const std::uint32_t n = end > first ? end - first : 0;
  std::vector<account_keys> keys(n);
  const unsigned workers = n < 1000 ? 1u : std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
  std::atomic<bool> stop{false};
  auto derive = [&](unsigned w) {
    std::uint32_t done = 0;
    for (std::uint32_t i = w; i < n; i += workers, ++done) {
      if (cancelled && done % 256 == 0 && (stop.load(std::memory_order_relaxed) || cancelled())) {
        stop.store(true, std::memory_order_relaxed);
        return;
      }
      const account_name name = genesis_account_name(prefix, first + i);
      keys[i].posting = private_key::from_login(name.view(), key_role::posting, password).public_key();
      keys[i].active = private_key::from_login(name.view(), key_role::active, password).public_key();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers; ++w) threads.emplace_back(derive, w);
  derive(0);
  for (auto& t : threads) t.join();
  if (stop.load()) throw genesis_cancelled();
  return keys;
}

}  // namespace apiary::core
