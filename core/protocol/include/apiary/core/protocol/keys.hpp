// Keys and signatures as Hive uses them, over libsecp256k1.
//
// - Deterministic keys: Hive's login derivation, secret = sha256(account + role + password),
//   with apiary's seed text as the password, so any Hive tool derives the same keys.
// - Text forms: public keys as "STM" + base58(key ‖ ripemd160(key)[0..4]); private keys as
//   WIF, base58(0x80 ‖ secret ‖ sha256(sha256(0x80 ‖ secret))[0..4]).
// - Signing: 65-byte compact recoverable signatures over a 32-byte digest, in Hive's
//   canonical form (neither r nor s has its top bit set or a needless leading zero).
//   Each attempt signs with RFC 6979 and the extra entropy sha256(digest ‖ attempt),
//   attempt = 1, 2, ... until the result is canonical: the same scheme as Hive's
//   JavaScript library dhive, so both produce byte-identical signatures.
// Thread safety: every function may be called from any thread; the shared secp256k1
// context is created once and only read afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

using public_key = fixed_bytes<33>;  // compressed secp256k1 point

enum class key_role : std::uint8_t { owner, active, posting, memo };
std::string_view key_role_name(key_role r);

class private_key {
 public:
  // Hive's login derivation; a digest that is not a valid secret (probability ~2^-128) is
  // rehashed until it is.
  static private_key from_login(std::string_view account, key_role role, std::string_view password);
  static std::optional<private_key> from_wif(std::string_view wif);
  static std::optional<private_key> from_secret(const fixed_bytes<32>& secret);

  std::string to_wif() const;
  const fixed_bytes<32>& secret() const { return secret_; }
  core::public_key public_key() const;

  compact_signature sign(const sha256_digest& digest) const;

  bool operator==(const private_key&) const = default;

 private:
  explicit private_key(const fixed_bytes<32>& s) : secret_(s) {}
  fixed_bytes<32> secret_;
};

std::string public_key_to_string(const public_key& k);
std::optional<public_key> public_key_from_string(std::string_view text);
// The text form's bytes when its prefix and checksum are right, whether or not they are a
// point of the curve: Hive's chain holds keys that are not (the null key, STM1111...), and
// its operations must pack back to their bytes.
std::optional<public_key> public_key_bytes_from_string(std::string_view text);

bool is_canonical(const compact_signature& sig);
// nullopt when the signature is malformed or no key recovers from it.
std::optional<public_key> recover_public_key(const compact_signature& sig, const sha256_digest& digest);

}  // namespace apiary::core
