#include "apiary/core/chain/rc_ledger.hpp"

#include "apiary/core/chain/rc.hpp"

namespace apiary::core {

std::int64_t rc_ledger::available(const account_object& a, time_point_sec now) const {
  const std::int64_t mana = rc_regenerated(a.rc, a.vesting, now).current;
  return mode_ == rc_mode::state ? mana : mana - pending_charge(a.name);
}

reject rc_ledger::charge_pending(const account_object& payer, std::int64_t cost, time_point_sec now,
                                 std::int64_t* mana) {
  if (mode_ == rc_mode::state) return charge_in_state(payer, cost, now, mana);
  tx_cost_ = 0;
  const std::int64_t has = available(payer, now);
  if (mana != nullptr) *mana = has;
  if (has < cost) return reject::insufficient_rc;
  tx_payer_ = payer.name;
  tx_cost_ = cost;
  return reject::none;
}

reject rc_ledger::charge_block(const account_object& payer, std::int64_t cost, time_point_sec now, std::int64_t* mana) {
  return charge_in_state(payer, cost, now, mana);
}

reject rc_ledger::charge_in_state(const account_object& payer, std::int64_t cost, time_point_sec now,
                                  std::int64_t* mana) {
  const manabar m = rc_regenerated(payer.rc, payer.vesting, now);
  if (mana != nullptr) *mana = m.current;
  if (m.current < cost) return reject::insufficient_rc;
  // Skip the write (and its undo copy) when nothing would change.
  if (cost == 0 && m == payer.rc) return reject::none;
  accounts_.modify(payer, [&](account_object& a) {
    a.rc = m;
    a.rc.current -= cost;
  });
  return reject::none;
}

void rc_ledger::audit(time_point_sec now, std::vector<std::string>& violations) const {
  std::size_t below = 0;
  std::size_t above = 0;
  for (const account_object& a : accounts_.indices()) {
    if (a.rc.current < 0 || available(a, now) < 0) ++below;
    if (a.rc.current > a.vesting) ++above;
  }
  if (below != 0) violations.push_back("rc: " + std::to_string(below) + " accounts have mana below zero");
  if (above != 0) violations.push_back("rc: " + std::to_string(above) + " accounts have mana above their vesting");
  std::size_t bad = 0;
  for (const auto& [account, owed] : pending_)
    if (owed <= 0 || accounts_.find<by_name>(account) == nullptr) ++bad;
  if (bad != 0)
    violations.push_back("rc: " + std::to_string(bad) + " pending charges are not positive or name no account");
}

}  // namespace apiary::core
