// Everything that shapes a chain: genesis, limits, and the runtime switches that exist so
// each optimization of docs/design.md's ladder can be measured on and off. Every combination of
// switches produces the same chain state for the same input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apiary/core/base/named_enum.hpp"
#include "apiary/core/chain/cashout.hpp"
#include "apiary/core/chain/genesis_vesting.hpp"
#include "apiary/core/chain/rc.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/state/database.hpp"

namespace apiary::core {

// Where the ids of pending transactions live.
enum class dedup_mode : std::uint8_t {
  split,    // pending ids in a volatile hash set; only included ids in the undoable index
  unified,  // pending ids in the undoable transaction index too, removed by undo
};

// Where the per-account custom-operation counts of the current block live.
enum class counter_mode : std::uint8_t {
  local,  // a hash map merged only after a transaction succeeds
  state,  // an undoable index whose changes a failed transaction's undo reverts
};

// Where the resource-credit charges of pending transactions live (rc_ledger).
enum class rc_mode : std::uint8_t {
  state,             // in the payer's account object, changed inside the transaction's undo session
  volatile_charges,  // in a hash map beside the pending list; state sees only the blocks' charges
};

// Where the keys that signed a transaction come from.
enum class signer_source : std::uint8_t {
  attached,  // the producer's attached signer keys, when present (else recovered)
  recover,   // always recovered from the signatures
};

// Where the chain keeps its state (state_region.hpp).
enum class state_memory : std::uint8_t {
  heap,    // the process's heap, object by object
  mapped,  // one region at a fixed address, which a state file maps back whole
};

// The names the command line, config files and reports use (named_enum.hpp).
inline constexpr std::array<enum_name<dedup_mode>, 2> dedup_mode_names{
    {{"split", dedup_mode::split}, {"unified", dedup_mode::unified}}};
inline constexpr std::array<enum_name<counter_mode>, 2> counter_mode_names{
    {{"local", counter_mode::local}, {"state", counter_mode::state}}};
inline constexpr std::array<enum_name<rc_mode>, 2> rc_mode_names{
    {{"state", rc_mode::state}, {"volatile", rc_mode::volatile_charges}}};
inline constexpr std::array<enum_name<state_memory>, 2> state_memory_names{
    {{"heap", state_memory::heap}, {"mapped", state_memory::mapped}}};
inline constexpr std::array<enum_name<signer_source>, 2> signer_source_names{
    {{"attached", signer_source::attached}, {"recover", signer_source::recover}}};

constexpr std::string_view to_string(dedup_mode m) { return name_of(dedup_mode_names, m); }
constexpr std::string_view to_string(counter_mode m) { return name_of(counter_mode_names, m); }
constexpr std::string_view to_string(rc_mode m) { return name_of(rc_mode_names, m); }
constexpr std::string_view to_string(signer_source s) { return name_of(signer_source_names, s); }
constexpr std::string_view to_string(state_memory m) { return name_of(state_memory_names, m); }

// The account that signs the blocks. Genesis makes it an account too, with keys but no
// balance and no vesting, so it has no resource credits: a transaction it pays is always
// turned away with insufficient_rc (the colony's no-rc fault relies on it).
inline constexpr std::string_view default_witness = "initminer";

struct chain_limits {
  static constexpr std::uint32_t max_block_size = 2 * 1024 * 1024;
  static constexpr std::uint32_t max_transaction_size = 64 * 1024;
  static constexpr std::uint32_t max_expiration_secs = 3600;
  static constexpr std::uint32_t block_interval_secs = 3;
  // The blocks a transaction id stays in the dedup index at most: an hour.
  static constexpr std::uint32_t expiration_blocks = max_expiration_secs / block_interval_secs;
  static constexpr std::uint32_t max_custom_json_id = 32;
  static constexpr std::uint32_t max_custom_json_size = 8 * 1024;
  static constexpr std::uint32_t custom_op_block_limit = 5;
  static constexpr std::uint32_t max_memo_size = 2048;  // exclusive: 2,047 bytes at most
  static constexpr std::uint32_t max_permlink_size = 256;
  // Hive's HIVE_MAX_COMMENT_BENEFICIARIES: a node turns away a new transaction with more (its
  // validation alone allows up to 127, which wax's validate() checks: tests/conformance).
  static constexpr std::uint32_t max_beneficiaries = 8;
};

struct chain_options {
  // Undo layer: keep_alive, pool allocator for objects, pool allocator for undo states.
  database_options db;
  // Where the state lives. A chain opened from a state file (chain::open_state) is mapped.
  state_memory memory = state_memory::heap;
  dedup_mode dedup = dedup_mode::split;
  counter_mode custom_ops = counter_mode::local;
  rc_mode rc = rc_mode::state;
  signer_source signers = signer_source::attached;
  // Off skips the signature and authority check (as Hive's skip flags do), so unsigned
  // transactions measure the core alone; the accounts named must still exist.
  bool check_authority = true;
  // Off skips the TaPoS check (Hive's skip_tapos_check): any reference block is accepted.
  bool check_tapos = true;
  // Apply blocks inside an undo session (pushed, then committed when irreversible); off
  // applies them straight to the state.
  bool apply_block_in_session = true;
  // A block that holds exactly the pending transactions, in order (as the writer produces
  // them), keeps the pending state as its own instead of undoing it and applying the same
  // transactions again on the same state (Hive re-applies). Applies where the pending
  // bookkeeping is in state as a block would leave it: custom_ops local, rc state.
  bool reuse_pending = true;
  // Blocks kept undoable before they are committed.
  std::uint32_t reversible_blocks = 3;
  // The transaction ids the dedup index will hold at once (about an hour of transactions):
  // its hash table is sized for them at genesis, so that it never rehashes while blocks
  // apply. 0: it grows as needed, rehashing each time it doubles.
  std::size_t expected_transaction_ids = 0;
  // The comments the state will hold at once: their hash table by (author, permlink) is sized
  // for them at genesis, so that it does not rehash while they grow (a rehash relinks every
  // comment: about 0.1 s for 200,000). 0: it grows as needed.
  std::size_t expected_comments = 0;
  // Blocks from a comment's creation to its payout, after which it and its votes leave the
  // state (cashout.hpp); Hive's seven days by default.
  std::uint32_t cashout_blocks = cashout_constants::default_window_blocks;
  // Hive's RC statistics (rc_stats.hpp) are archived at every block whose number is a multiple
  // of this; 0: not kept at all. They are no part of the state.
  std::uint32_t rc_stats_blocks = 200;
  // The resource credits' base parameters and Hive's rc_scale (1 to rc_max_scale): the chain
  // uses rc_scaled(rc_params, rc_scale) (rc.hpp, docs/rc.md). Not among the state options: a
  // snapshot's pools move on under whatever parameters load it.
  rc_base_parameters rc_params = rc_default_params;
  std::uint32_t rc_scale = 1;

  // Genesis: `genesis_accounts` accounts named prefix0, prefix1, ..., keys derived with
  // private_key::from_login(name, role, key_password), each with these balances.
  std::uint32_t genesis_accounts = 100'000;
  std::string account_prefix = "user";
  std::string key_password = "apiary";
  std::int64_t genesis_hive = 1'000'000'000;  // 1,000,000.000 HIVE
  std::int64_t genesis_hbd = 1'000'000'000;
  // Each account's vesting in micro-VESTS, its RC manabar's maximum: 100,000 VESTS each, or
  // drawn per account from a distribution (genesis_vesting.hpp). Prices scale with the sum
  // over all accounts, so any amount well above the few mana a transaction costs at the least
  // keeps the default mix sustainable (docs/rc.md).
  vesting_spec genesis_vesting = vesting_spec(100'000'000'000);
  std::uint32_t genesis_time = 1'700'000'000;
  std::string witness{default_witness};
  chain_id chain = hive_mainnet_chain_id();

  // The options a chain's state depends on beyond its objects: its genesis (audit() checks the
  // supply against it, the colony derives the accounts' names and keys from it), the witness,
  // the chain id the signatures cover, and the cashout window its comments were created with.
  // f(name, member pointer) each. A state snapshot records them as name=value and loads only
  // into a chain with the same values (chain_snapshot.hpp); the switches above are left out:
  // every combination of them gives the same state.
  template <class F>
  static constexpr void state_options(F&& f) {
    f("genesis_accounts", &chain_options::genesis_accounts);
    f("account_prefix", &chain_options::account_prefix);
    f("key_password", &chain_options::key_password);
    f("genesis_hive", &chain_options::genesis_hive);
    f("genesis_hbd", &chain_options::genesis_hbd);
    f("genesis_vesting", &chain_options::genesis_vesting);
    f("genesis_time", &chain_options::genesis_time);
    f("witness", &chain_options::witness);
    f("chain", &chain_options::chain);
    f("cashout_blocks", &chain_options::cashout_blocks);
  }
};

// The name of genesis account i: prefix followed by i in decimal.
account_name genesis_account_name(std::string_view prefix, std::uint32_t i);

}  // namespace apiary::core
