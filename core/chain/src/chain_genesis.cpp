// chain::build_genesis: the accounts, the global properties and the TaPoS block summaries
// a new chain starts from (chain_options' genesis fields), and the witness's account.
#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

#include "apiary/core/chain/genesis_vesting.hpp"
#include "apiary/core/chain/rc.hpp"
#include "voting_mana.hpp"

namespace apiary::core {

void chain::build_genesis(const std::function<bool()>& cancelled, std::span<const account_keys> given) {
  const std::uint32_t n = options_.genesis_accounts;
  // Every price scales with the vesting summed over the accounts, which must fit in 64 bits.
  if (auto problem = check_vesting_spec(options_.genesis_vesting))
    throw std::invalid_argument("genesis vesting " + to_string(options_.genesis_vesting) + ": " + *problem);
  const std::optional<std::int64_t> total_vesting = total_vesting_of(options_.genesis_vesting, n);
  if (!total_vesting) throw std::invalid_argument("genesis vesting summed over the accounts does not fit in 64 bits");
  const vesting_sampler vesting_of_account(options_.genesis_vesting);
  // The keys not given are derived (over the cores: an EC multiplication per key).
  const auto known = static_cast<std::uint32_t>(std::min<std::size_t>(given.size(), n));
  const std::vector<account_keys> derived =
      derive_genesis_keys(options_.account_prefix, options_.key_password, known, n, cancelled);
  auto keys_of = [&](std::uint32_t i) -> const account_keys& { return i < known ? given[i] : derived[i - known]; };

  const time_point_sec now{options_.genesis_time};
  accounts_.reserve<by_name>(std::size_t{n} + 1);  // the witness too; no rehash while they come
  for (std::uint32_t i = 0; i < n; ++i) {
    if (cancelled && i % 65536 == 0 && cancelled()) throw genesis_cancelled();
    accounts_.create([&](account_object& a) {
      a.name = genesis_account_name(options_.account_prefix, i);
      a.posting_key = keys_of(i).posting;
      a.active_key = keys_of(i).active;
      a.hive = options_.genesis_hive;
      a.hbd = options_.genesis_hbd;
      a.voting = {detail::max_mana, now};
      a.vesting = static_cast<std::int64_t>(vesting_of_account(i));
      a.rc = {a.vesting, now};  // full
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
    g.total_vesting = *total_vesting;
    g.rc_pools = rc_initial_pools(rc_params());
  });
  // Block 0 (all-zero id) is a valid TaPoS reference, so the first block can be built.
  for (std::uint32_t i = 0; i < 0x10000; ++i) summaries_.create([](block_summary_object&) {});
}

}  // namespace apiary::core
