// chain::build_genesis: the accounts, the global properties and the TaPoS block summaries
// a new chain starts from (chain_options' genesis fields), and the witness's account;
// chain::add_to_genesis: the accounts and comments added to it by name.
#include "apiary/core/chain/chain.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "apiary/core/chain/genesis_vesting.hpp"
#include "apiary/core/chain/rc.hpp"
#include "comment_creation.hpp"
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
  accounts_.reserve<by_name>(account_buckets * (std::size_t{n} + 1));  // the witness too
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
    g.genesis_supply_hive = g.current_supply_hive;
    g.total_vesting = *total_vesting;
    g.rc_pools = rc_initial_pools(rc_params());
  });
  // Block 0 (all-zero id) is a valid TaPoS reference, so the first block can be built.
  for (std::uint32_t i = 0; i < 0x10000; ++i) summaries_.create([](block_summary_object&) {});
}

namespace {

// a + b, or nullopt past 64 bits; both non-negative.
std::optional<std::int64_t> checked_sum(std::int64_t a, std::int64_t b) {
  if (b > std::numeric_limits<std::int64_t>::max() - a) return std::nullopt;
  return a + b;
}

}  // namespace

void chain::add_to_genesis(const genesis_additions& add) {
  if (head_block_num() != 0 || !pending_.empty())
    throw std::logic_error("add_to_genesis: the chain has left its genesis (a block or a pending transaction)");
  // The pending session is empty at genesis; closed, the objects below become the genesis.
  clear_pending_state();
  struct reopen {
    chain& c;
    ~reopen() { c.start_pending(); }
  } reopen_pending{*this};

  const time_point_sec now{options_.genesis_time};
  for (const genesis_account& a : add.accounts) {
    const std::string name(a.name.view());
    if (name.empty()) throw std::invalid_argument("genesis account: an empty name");
    if (find_account(a.name) != nullptr) throw std::invalid_argument("genesis account " + name + ": exists already");
    if (a.hive < 0 || a.hbd < 0 || a.vesting < 0)
      throw std::invalid_argument("genesis account " + name + ": a negative balance or vesting");
    const global_properties_object& g = globals_.get(0);
    const auto hive = checked_sum(g.current_supply_hive, a.hive);
    const auto hbd = checked_sum(g.current_supply_hbd, a.hbd);
    const auto vesting = checked_sum(g.total_vesting, a.vesting);
    if (!hive || !hbd || !vesting)
      throw std::invalid_argument("genesis account " + name + ": the supply or the total vesting passes 64 bits");
    accounts_.create([&](account_object& o) {
      o.name = a.name;
      o.posting_key = private_key::from_login(a.name.view(), key_role::posting, options_.key_password).public_key();
      o.active_key = private_key::from_login(a.name.view(), key_role::active, options_.key_password).public_key();
      o.hive = a.hive;
      o.hbd = a.hbd;
      o.voting = {detail::max_mana, now};
      o.vesting = a.vesting;
      o.rc = {a.vesting, now};  // full
    });
    globals_.modify(g, [&](global_properties_object& p) {
      p.current_supply_hive = *hive;
      p.genesis_supply_hive += a.hive;
      p.current_supply_hbd = *hbd;
      p.total_vesting = *vesting;
    });
  }
  for (const genesis_comment& c : add.comments) {
    const std::string name = "genesis comment @" + std::string(c.author.view()) + "/" + c.permlink;
    if (c.permlink.empty() || c.permlink.size() > chain_limits::max_permlink_size ||
        c.parent_permlink.size() > chain_limits::max_permlink_size)
      throw std::invalid_argument(name + ": a permlink empty or longer than " +
                                  std::to_string(chain_limits::max_permlink_size) + " bytes");
    const account_object* author = find_account(c.author);
    if (author == nullptr) throw std::invalid_argument(name + ": its author does not exist");
    if (find_comment(c.author, c.permlink) != nullptr) throw std::invalid_argument(name + ": exists already");
    if (c.parent_author.empty()) {
      if (c.parent_permlink.empty()) throw std::invalid_argument(name + ": a root post needs a category");
    } else {
      const comment_object* parent = find_comment(c.parent_author, c.parent_permlink);
      if (parent == nullptr) throw std::invalid_argument(name + ": its parent does not exist");
      comments_.modify(*parent, [](comment_object& p) { ++p.children; });
    }
    comments_.create([&](comment_object& o) { fill_new_comment(o, c, now, options_.cashout_blocks); });
    accounts_.modify(*author, [](account_object& a) { ++a.post_count; });
  }
}

}  // namespace apiary::core
