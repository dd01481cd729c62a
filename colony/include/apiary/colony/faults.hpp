// faults: deliberately bad transactions mixed into the colony's stream. Each kind breaks
// exactly one of the chain's rules, so the chain must turn it away for that reason and
// leave no trace of it in the state.
//
// A fault is a companion: after a normal transaction, a fault_injector with its own random
// stream (seed and thread index, apart from the generator's) decides whether a faulty
// transaction follows it, and make_faulty builds it from that normal transaction. The
// normal transactions are therefore the same with and without faults, and a run with faults
// must end in the same state as the run without them (the tests compare state digests).
//
//   duplicate           the normal transaction submitted a second time
//   expired             expiration set to the head time it was made at
//   unknown-reference   TaPoS prefix that names no block
//   missing-authority   signed with a key the account does not have (needs signing on)
//   insufficient-funds  a transfer of more HIVE than exists
//   invalid-json        a custom_json whose payload is not JSON
//   custom-op-limit     one account's six custom_json operations in one transaction
//   oversize            nine 8,000-byte custom_json operations: above the 64 KiB maximum
//   no-rc               a custom_json paid by the witness's account, which genesis gives no
//                       vesting and so no resource credits (core::default_witness)
//
// Where Hive turns each kind away (fault_stage): invalid-json alone breaks a rule of an
// operation's own fields, which hived's transaction::validate() checks without the chain; the
// other kinds are well-formed and only the chain's state refuses them (its pending and
// recent transactions, head time, block summaries, the accounts' keys and balances, the
// block's custom operations so far, the voted maximum block size, resource credits).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::colony {

enum class fault_kind : std::uint8_t {
  duplicate,
  expired,
  unknown_reference,
  missing_authority,
  insufficient_funds,
  invalid_json,
  custom_op_limit,
  oversize,
  no_rc,
};
inline constexpr std::size_t fault_kind_count = 9;

// "duplicate", "expired", "unknown-reference", ...: the names the --faults option takes.
std::string_view fault_kind_name(fault_kind k);
std::optional<fault_kind> fault_kind_from_name(std::string_view name);
// The reason the chain must give.
core::reject expected_reject(fault_kind k);

// What turns a fault away in Hive: its own checks of the transaction's fields
// (transaction::validate(), which needs no chain), or only the chain's state.
enum class fault_stage : std::uint8_t { validation, chain_state };
fault_stage rejected_at(fault_kind k);
std::string_view fault_stage_name(fault_stage s);  // "validation", "chain_state"

struct fault_config {
  // Per kind: the probability that a normal transaction is followed by a fault of the kind.
  std::array<double, fault_kind_count> fraction{};

  double operator[](fault_kind k) const { return fraction[static_cast<std::size_t>(k)]; }
  double& operator[](fault_kind k) { return fraction[static_cast<std::size_t>(k)]; }
  double total() const;
  bool any() const { return total() > 0; }
  // Each fraction in [0, 1], their sum at most 1, and missing-authority only when signing
  // (unsigned transactions are accepted without an authority check): a message naming the
  // problem, or nullopt.
  std::optional<std::string> validate(bool sign) const;
  bool operator==(const fault_config&) const = default;
};

// "none", or "kind=fraction,..." with the non-zero kinds in enum order (what parse reads).
std::string to_string(const fault_config& f);
// Kinds not named are 0; "none" sets all to 0. A kind named twice is an error, not the
// last one winning. The error names the bad part and what is allowed.
std::optional<std::string> parse_faults(std::string_view text, fault_config& out);

// One thread's draws: after each normal transaction, which fault (if any) follows it.
class fault_injector {
 public:
  fault_injector(const fault_config& config, std::uint64_t seed, std::uint32_t thread_index);
  std::optional<fault_kind> draw();

 private:
  fault_config config_;
  std::mt19937_64 rng_;
  bool active_;
};

struct faulty_transaction {
  core::transaction tx;
  core::key_role role = core::key_role::posting;  // the key that signs it
  bool wrong_key = false;                         // sign with wrong_key_for() instead of the account's key
  core::account_name signer;                      // who signs it: empty for the normal transaction's signer
};

// The faulty companion of `normal` (signed by `signer`), for every kind but duplicate (which
// resubmits the normal transaction itself). It differs from `normal` and from every other
// companion, so it cannot be turned away as a duplicate instead.
faulty_transaction make_faulty(fault_kind k, const core::transaction& normal, const core::transaction_id& normal_id,
                               const core::account_name& signer);

// A key that is not the account's: from_login with another password, wrong_password's.
core::private_key wrong_key_for(const core::account_name& account, core::key_role role, std::string_view password);
std::string wrong_password(std::string_view password);

class key_cache;

// The signed companion of `normal` (made by `signer`), ready to submit: for a duplicate the
// normal transaction itself. Signed when `sign`, with the signer's public key attached when
// `attach_keys` (the wrong key's, for missing-authority).
core::full_transaction_ptr build_fault(fault_kind k, const core::full_transaction_ptr& normal,
                                       const core::account_name& signer, key_cache& keys, const core::chain_id& chain,
                                       bool sign, bool attach_keys);

}  // namespace apiary::colony
