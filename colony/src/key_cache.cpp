#include "apiary/colony/key_cache.hpp"

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

}  // namespace apiary::colony
