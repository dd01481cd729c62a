// chain::build_genesis: the accounts, the global properties and the TaPoS block summaries
// a new chain starts from (chain_options' genesis fields), and the witness's account.
#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include <limits>
#include <stdexcept>

#include "apiary/core/chain/rc.hpp"
#include "voting_mana.hpp"

namespace apiary::core {

void chain::build_genesis(const std::function<bool()>& cancelled) {
  const std::uint32_t n = options_.genesis_accounts;
  std::vector<account_name> names(n);
  std::vector<public_key> posting(n), active(n);
  for (std::uint32_t i = 0; i < n; ++i) names[i] = genesis_account_name(options_.account_prefix, i);

  // Deriving a public key is an EC multiplication: spread the accounts over the cores.
  // `cancelled` is asked every 256 accounts per worker (a few milliseconds of derivation).
  const unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
  std::atomic<bool> stop{false};
  auto derive = [&](unsigned w) {
    std::uint32_t done = 0;
    for (std::uint32_t i = w; i < n; i += workers, ++done) {
      if (cancelled && done % 256 == 0 && (stop.load(std::memory_order_relaxed) || cancelled())) {
        stop.store(true, std::memory_order_relaxed);
        return;
      }
      posting[i] = private_key::from_login(names[i].view(), key_role::posting, options_.key_password).public_key();
      active[i] = private_key::from_login(names[i].view(), key_role::active, options_.key_password).public_key();
    }
  };
  if (n < 1000 || workers == 1) {
    for (unsigned w = 0; w < workers; ++w) derive(w);
  } else {
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(derive, w);
    derive(0);
    for (auto& t : threads) t.join();
  }
  if (stop.load()) throw genesis_cancelled();

  const time_point_sec now{options_.genesis_time};
  // Every price scales with the vesting summed over the accounts, which must fit in 64 bits.
  if (options_.genesis_vesting > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / std::max(n, 1u))
    throw std::invalid_argument("genesis vesting times accounts does not fit in 64 bits");
  const auto vesting = static_cast<std::int64_t>(options_.genesis_vesting);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (cancelled && i % 65536 == 0 && cancelled()) throw genesis_cancelled();
    accounts_.create([&](account_object& a) {
      a.name = names[i];
      a.posting_key = posting[i];
      a.active_key = active[i];
      a.hive = options_.genesis_hive;
      a.hbd = options_.genesis_hbd;
      a.voting = {detail::max_mana, now};
      a.vesting = vesting;
      a.rc = {vesting, now};  // full
    });
  }
  const account_name witness(options_.witness);
  if (find_account(witness) == nullptr)
    accounts_.create([&](account_object& a) {
      a.name = witness;
      a.posting_key = private_key::from_login(witness.view(), key_role::posting, options_.key_password).public_key();
      a.active_key = witness_key_.public_key();
      a.voting = {detail::max_mana, now};
      a.rc = {0, now};
    });
  globals_.create([&](global_properties_object& g) {
    g.time = now;
    g.current_supply_hive = options_.genesis_hive * n;
    g.current_supply_hbd = options_.genesis_hbd * n;
    g.total_vesting = vesting * static_cast<std::int64_t>(n);
    g.rc_pools = rc_initial_pools();
  });
  // Block 0 (all-zero id) is a valid TaPoS reference, so the first block can be built.
  for (std::uint32_t i = 0; i < 0x10000; ++i) summaries_.create([](block_summary_object&) {});
}

}  // namespace apiary::core
