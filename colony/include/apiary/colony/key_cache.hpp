// key_cache: the deterministic keys of the colony's accounts (Hive's login derivation,
// private_key::from_login(account, role, password)), derived once per account and role and
// kept. The private key is only a hash, but its public key costs an EC multiplication, so
// both are cached. Not thread-safe: each generator thread keeps its own cache for the
// accounts it owns. References it returns stay valid for the cache's lifetime.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/keys.hpp"

namespace apiary::colony {

class key_cache {
 public:
  explicit key_cache(std::string password) : password_(std::move(password)) {}

  const core::private_key& private_key(const core::account_name& account, core::key_role role);
  const core::public_key& public_key(const core::account_name& account, core::key_role role);
  // The cached key, or nullptr when it has not been derived yet: lets a caller time the
  // (rare, expensive) derivations apart from the (frequent, cheap) lookups.
  const core::private_key* find_private_key(const core::account_name& account, core::key_role role) const;
  const core::public_key* find_public_key(const core::account_name& account, core::key_role role) const;

  std::string_view password() const { return password_; }
  std::size_t accounts() const { return entries_.size(); }

 private:
  struct role_keys {
    std::optional<core::private_key> priv;
    std::optional<core::public_key> pub;
  };
  using entry = std::array<role_keys, 4>;  // by key_role

  role_keys& slot(const core::account_name& account, core::key_role role);
  const role_keys* find(const core::account_name& account, core::key_role role) const;

  std::string password_;
  std::unordered_map<core::account_name, entry> entries_;
};

// Where make_transaction spent its thread's CPU time, for a caller that measures it.
struct signing_time {
  // Time the transaction's own cost (two readings of the thread's CPU clock, each a system
  // call); false: time only the keys derived on first use, whose readings happen only then.
  bool time_transaction = true;
  // Packing, hashing and signing, key lookups included: the transaction's own cost.
  std::uint64_t signing_ns = 0;
  // Deriving the keys the cache did not hold yet: a first use's cost, not the transaction's.
  std::uint64_t key_ns = 0;
};

// `tx` ready to submit: signed with the signer's cached key for `role` (its public key
// attached when attach_key), or unsigned when sign is false. The one way the colony signs a
// transaction. With `timing`, its CPU time is measured and added there (signing_time says
// which part).
core::full_transaction_ptr make_transaction(core::transaction tx, const core::account_name& signer, core::key_role role,
                                            key_cache& keys, const core::chain_id& chain, bool sign, bool attach_key,
                                            signing_time* timing = nullptr);

}  // namespace apiary::colony
