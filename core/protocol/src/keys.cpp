#include "apiary/core/protocol/keys.hpp"

#include <openssl/rand.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include <algorithm>
#include <array>
#include <vector>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

namespace {

const secp256k1_context* ctx() {
  static const secp256k1_context* c = [] {
    secp256k1_context* made = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    APIARY_CHECK(made != nullptr);
    // Blinding against side channels; signatures stay deterministic (RFC 6979).
    unsigned char seed[32];
    if (RAND_bytes(seed, sizeof seed) == 1) APIARY_CHECK(secp256k1_context_randomize(made, seed) == 1);
    return made;
  }();
  return c;
}

// ---- base58 (Bitcoin alphabet); only for key text, never on a hot path ----------------

constexpr char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

std::string base58_encode(const std::uint8_t* p, std::size_t n) {
  std::size_t zeros = 0;
  while (zeros < n && p[zeros] == 0) ++zeros;
  std::vector<std::uint8_t> digits;  // base-58 digits, least significant first
  for (std::size_t i = zeros; i < n; ++i) {
    unsigned carry = p[i];
    for (auto& d : digits) {
      carry += static_cast<unsigned>(d) << 8;
      d = static_cast<std::uint8_t>(carry % 58);
      carry /= 58;
    }
    while (carry) {
      digits.push_back(static_cast<std::uint8_t>(carry % 58));
      carry /= 58;
    }
  }
  std::string out(zeros, '1');
  // NOLINTNEXTLINE(modernize-loop-convert): in reverse
  for (auto d = digits.rbegin(); d != digits.rend(); ++d) out.push_back(alphabet[*d]);
  return out;
}

std::optional<std::vector<std::uint8_t>> base58_decode(std::string_view s) {
  std::size_t ones = 0;
  while (ones < s.size() && s[ones] == '1') ++ones;
  std::vector<std::uint8_t> bytes;  // least significant first
  for (std::size_t i = ones; i < s.size(); ++i) {
    const char* pos = std::find(alphabet, alphabet + 58, s[i]);
    if (pos == alphabet + 58) return std::nullopt;
    auto carry = static_cast<unsigned>(pos - alphabet);
    for (auto& b : bytes) {
      carry += static_cast<unsigned>(b) * 58;
      b = static_cast<std::uint8_t>(carry & 0xff);
      carry >>= 8;
    }
    while (carry) {
      bytes.push_back(static_cast<std::uint8_t>(carry & 0xff));
      carry >>= 8;
    }
  }
  std::vector<std::uint8_t> out(ones, 0);
  out.insert(out.end(), bytes.rbegin(), bytes.rend());
  return out;
}

constexpr std::string_view key_prefix = "STM";
constexpr std::uint8_t wif_version = 0x80;

}  // namespace

std::string_view key_role_name(key_role r) {
  switch (r) {
    case key_role::owner: return "owner";
    case key_role::active: return "active";
    case key_role::posting: return "posting";
    case key_role::memo: return "memo";
  }
  return "posting";
}

private_key private_key::from_login(std::string_view account, key_role role, std::string_view password) {
  std::string seed;
  seed.reserve(account.size() + 8 + password.size());
  seed.append(account).append(key_role_name(role)).append(password);
  sha256_digest d = sha256(seed.data(), seed.size());
  while (secp256k1_ec_seckey_verify(ctx(), d.begin()) != 1) d = sha256(d.begin(), d.size());
  fixed_bytes<32> s;
  s.data = d.data;
  return private_key(s);
}

std::optional<private_key> private_key::from_secret(const fixed_bytes<32>& secret) {
  if (secp256k1_ec_seckey_verify(ctx(), secret.begin()) != 1) return std::nullopt;
  return private_key(secret);
}

std::optional<private_key> private_key::from_wif(std::string_view wif) {
  auto raw = base58_decode(wif);
  if (!raw || raw->size() != 37 || (*raw)[0] != wif_version) return std::nullopt;
  sha256_digest once = sha256(raw->data(), 33);
  sha256_digest twice = sha256(once.begin(), once.size());
  if (!std::equal(twice.begin(), twice.begin() + 4, raw->data() + 33)) return std::nullopt;
  fixed_bytes<32> s;
  std::copy_n(raw->data() + 1, 32, s.begin());
  return from_secret(s);
}

std::string private_key::to_wif() const {
  std::array<std::uint8_t, 37> raw{};
  raw[0] = wif_version;
  std::copy_n(secret_.begin(), 32, raw.data() + 1);
  sha256_digest once = sha256(raw.data(), 33);
  sha256_digest twice = sha256(once.begin(), once.size());
  std::copy_n(twice.begin(), 4, raw.data() + 33);
  return base58_encode(raw.data(), raw.size());
}

core::public_key private_key::public_key() const {
  secp256k1_pubkey pk;
  APIARY_CHECK(secp256k1_ec_pubkey_create(ctx(), &pk, secret_.begin()) == 1);
  core::public_key out;
  std::size_t len = out.size();
  secp256k1_ec_pubkey_serialize(ctx(), out.begin(), &len, &pk, SECP256K1_EC_COMPRESSED);
  APIARY_CHECK(len == out.size());
  return out;
}

bool is_canonical(const compact_signature& sig) {
  const auto& c = sig.data;
  return !(c[1] & 0x80) && !(c[1] == 0 && !(c[2] & 0x80)) && !(c[33] & 0x80) && !(c[33] == 0 && !(c[34] & 0x80));
}

compact_signature private_key::sign(const sha256_digest& digest) const {
  compact_signature out;
  std::array<std::uint8_t, 33> entropy_input{};
  std::copy_n(digest.begin(), 32, entropy_input.data());
  for (unsigned attempt = 1;; ++attempt) {
    entropy_input[32] = static_cast<std::uint8_t>(attempt);
    sha256_digest extra = sha256(entropy_input.data(), entropy_input.size());
    secp256k1_ecdsa_recoverable_signature sig;
    APIARY_CHECK(secp256k1_ecdsa_sign_recoverable(ctx(), &sig, digest.begin(), secret_.begin(),
                                                  secp256k1_nonce_function_rfc6979, extra.begin()) == 1);
    int recid = 0;
    secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx(), out.begin() + 1, &recid, &sig);
    out.data[0] = static_cast<std::uint8_t>(27 + 4 + recid);
    if (is_canonical(out)) return out;
  }
}

std::optional<public_key> recover_public_key(const compact_signature& sig, const sha256_digest& digest) {
  int header = sig.data[0] - 27;
  if (header < 0 || header > 7) return std::nullopt;
  secp256k1_ecdsa_recoverable_signature rs;
  if (secp256k1_ecdsa_recoverable_signature_parse_compact(ctx(), &rs, sig.begin() + 1, header & 3) != 1)
    return std::nullopt;
  secp256k1_pubkey pk;
  if (secp256k1_ecdsa_recover(ctx(), &pk, &rs, digest.begin()) != 1) return std::nullopt;
  public_key out;
  std::size_t len = out.size();
  secp256k1_ec_pubkey_serialize(ctx(), out.begin(), &len, &pk, SECP256K1_EC_COMPRESSED);
  return out;
}

std::string public_key_to_string(const public_key& k) {
  ripemd160_digest check = ripemd160(k.begin(), k.size());
  std::array<std::uint8_t, 37> raw{};
  std::copy_n(k.begin(), 33, raw.data());
  std::copy_n(check.begin(), 4, raw.data() + 33);
  return std::string(key_prefix) + base58_encode(raw.data(), raw.size());
}

std::optional<public_key> public_key_bytes_from_string(std::string_view text) {
  if (!text.starts_with(key_prefix)) return std::nullopt;
  auto raw = base58_decode(text.substr(key_prefix.size()));
  if (!raw || raw->size() != 37) return std::nullopt;
  ripemd160_digest check = ripemd160(raw->data(), 33);
  if (!std::equal(check.begin(), check.begin() + 4, raw->data() + 33)) return std::nullopt;
  public_key k;
  std::copy_n(raw->data(), 33, k.begin());
  return k;
}

std::optional<public_key> public_key_from_string(std::string_view text) {
  auto k = public_key_bytes_from_string(text);
  if (!k) return std::nullopt;
  secp256k1_pubkey pk;
  if (secp256k1_ec_pubkey_parse(ctx(), &pk, k->begin(), k->size()) != 1) return std::nullopt;
  return k;
}

}  // namespace apiary::core
