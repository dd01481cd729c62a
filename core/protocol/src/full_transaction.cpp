#include "apiary/core/protocol/full_transaction.hpp"

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

full_transaction::full_transaction(signed_transaction tx, const chain_id& chain,
                                   std::span<const public_key> signer_keys)
    : tx_(std::move(tx)), signer_keys_(signer_keys.begin(), signer_keys.end()) {
  out_buffer& buf = thread_scratch();
  pack_into(buf, static_cast<const transaction&>(tx_));
  derive(buf.span(), chain);
  byte_writer w(buf);
  pack(w, tx_.signatures);
  keep_packed(buf);
}

full_transaction::full_transaction(transaction tx, const chain_id& chain, std::span<const private_key> keys,
                                   std::span<const public_key> signer_keys)
    : signer_keys_(signer_keys.begin(), signer_keys.end()) {
  APIARY_CHECK(signer_keys.empty() || signer_keys.size() == keys.size());
  static_cast<transaction&>(tx_) = std::move(tx);
  out_buffer& buf = thread_scratch();
  pack_into(buf, static_cast<const transaction&>(tx_));
  derive(buf.span(), chain);
  tx_.signatures.reserve(keys.size());
  for (const private_key& k : keys) tx_.signatures.push_back(k.sign(sig_digest_));
  byte_writer w(buf);
  pack(w, tx_.signatures);
  keep_packed(buf);
}

void full_transaction::derive(std::span<const std::uint8_t> packed_unsigned, const chain_id& chain) {
  id_ = transaction_id_of(packed_unsigned);
  sig_digest_ = signature_digest_of(chain, packed_unsigned);
}

void full_transaction::keep_packed(const out_buffer& signed_bytes) {
  packed_.assign(signed_bytes.bytes(), signed_bytes.bytes() + signed_bytes.size());
  merkle_digest_ = sha256(packed_.data(), packed_.size());
}

}  // namespace apiary::core
