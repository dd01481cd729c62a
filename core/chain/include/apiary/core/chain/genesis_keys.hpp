// genesis_keys: the public keys of the genesis accounts, which Hive's login derivation fixes
// (private_key::from_login(name, role, password)): one secp256k1 multiplication per account
// and role, about 25 µs of CPU each, so 3,000,000 accounts cost two and a half minutes of
// CPU however many cores share it. The chain derives them at genesis unless it is given them
// (chain's constructor): a caller that builds big geneses often keeps them once derived (the
// harness's key cache), so the state, and its digest, is the same either way.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "apiary/core/protocol/keys.hpp"

namespace apiary::core {

// Genesis account i's keys, in the roles the chain checks.
struct account_keys {
  public_key posting;
  public_key active;
  bool operator==(const account_keys&) const = default;
};

// Thrown when a `cancelled` callback says so during the derivation (or the chain's genesis).
class genesis_cancelled : public std::runtime_error {
 public:
  genesis_cancelled() : std::runtime_error("genesis cancelled") {}
};

// The keys of genesis accounts [first, end) named prefix0, prefix1, ..., in order, derived
// over the machine's cores (up to 16 threads; one below 1,000 accounts). `cancelled`
// (optional) is asked every 256 accounts by each thread, from several threads at once: when
// it returns true the derivation stops and throws genesis_cancelled.
std::vector<account_keys> derive_genesis_keys(std::string_view prefix, std::string_view password, std::uint32_t first,
                                              std::uint32_t end, const std::function<bool()>& cancelled = {});

}  // namespace apiary::core
