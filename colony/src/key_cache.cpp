#include "apiary/colony/key_cache.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <utility>

#include "thread_cpu.hpp"

namespace apiary::colony {

key_cache::role_keys& key_cache::slot(const core::account_name& account, core::key_role role) {
  return entries_[account][static_cast<std::size_t>(role)];
}

const key_cache::role_keys* key_cache::find(const core::account_name& account, core::key_role role) const {
  const auto it = entries_.find(account);
  return it == entries_.end() ? nullptr : &it->second[static_cast<std::size_t>(role)];
}

const core::private_key* key_cache::find_private_key(const core::account_name& account, core::key_role role) const {
  const role_keys* k = find(account, role);
  return k != nullptr && k->priv ? &*k->priv : nullptr;
}

const core::public_key* key_cache::find_public_key(const core::account_name& account, core::key_role role) const {
  const role_keys* k = find(account, role);
  return k != nullptr && k->pub ? &*k->pub : nullptr;
}

const core::private_key& key_cache::private_key(const core::account_name& account, core::key_role role) {
  role_keys& k = slot(account, role);
  if (!k.priv) k.priv = core::private_key::from_login(account.view(), role, password_);
  return *k.priv;
}

const core::public_key& key_cache::public_key(const core::account_name& account, core::key_role role) {
  role_keys& k = slot(account, role);
  if (!k.pub) {
    if (!k.priv) k.priv = core::private_key::from_login(account.view(), role, password_);
    k.pub = k.priv->public_key();
  }
  return *k.pub;
}

namespace {

// Derives the keys make_transaction will need that the cache lacks; returns the CPU time it took.
std::uint64_t derive_missing_keys(key_cache& keys, const core::account_name& signer, core::key_role role,
                                  bool attach_key) {
  if (keys.find_private_key(signer, role) != nullptr && (!attach_key || keys.find_public_key(signer, role) != nullptr))
    return 0;
  const std::uint64_t t0 = detail::thread_cpu_ns();
  keys.private_key(signer, role);
  if (attach_key) keys.public_key(signer, role);
  return detail::thread_cpu_ns() - t0;
}

}  // namespace

core::full_transaction_ptr make_transaction(core::transaction tx, const core::account_name& signer, core::key_role role,
                                            key_cache& keys, const core::chain_id& chain, bool sign, bool attach_key,
                                            signing_time* timing) {
  const bool whole = timing != nullptr && timing->time_transaction;
  const std::uint64_t t0 = whole ? detail::thread_cpu_ns() : 0;
  // Timed apart, so the transaction's own cost leaves out a first use's derivations.
  const std::uint64_t key_ns = timing != nullptr && sign ? derive_missing_keys(keys, signer, role, attach_key) : 0;
  core::full_transaction_ptr made;
  if (!sign) {
    made = std::make_shared<const core::full_transaction>(std::move(tx), chain, std::span<const core::private_key>{});
  } else {
    const core::private_key& priv = keys.private_key(signer, role);
    std::span<const core::public_key> attached;
    if (attach_key) attached = std::span(&keys.public_key(signer, role), 1);
    made = std::make_shared<const core::full_transaction>(std::move(tx), chain, std::span(&priv, 1), attached);
  }
  if (whole) {
    const std::uint64_t total = detail::thread_cpu_ns() - t0;
    timing->signing_ns += total - std::min(key_ns, total);
  }
  if (timing != nullptr) timing->key_ns += key_ns;
  return made;
}

}  // namespace apiary::colony
