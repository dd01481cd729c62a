// full_transaction: a signed transaction together with what derives from its packed form,
// computed once when it is built and reused by everyone after (queue, core, block
// producer, serializer): the packed signed bytes, their size, the id, the signature digest
// and the merkle leaf (so the block producer hashes no transaction). Immutable after construction, so it is shared
// between threads as full_transaction_ptr without locking.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

class full_transaction {
 public:
  // Packs tx once and derives the rest from those bytes; signer_keys as below (a saved
  // workload carries them).
  full_transaction(signed_transaction tx, const chain_id& chain, std::span<const public_key> signer_keys = {});
  // Packs tx once, signs the digest with each key, and appends the signatures to the
  // packed bytes, so nothing is packed twice. signer_keys, when not empty, are the public
  // keys of `keys` (the caller caches them: deriving one costs as much as a signature),
  // attached so a node can skip recovering them from the signatures.
  full_transaction(transaction tx, const chain_id& chain, std::span<const private_key> keys,
                   std::span<const public_key> signer_keys = {});

  const signed_transaction& tx() const { return tx_; }
  std::span<const std::uint8_t> packed() const { return packed_; }
  std::uint32_t packed_size() const { return static_cast<std::uint32_t>(packed_.size()); }
  const transaction_id& id() const { return id_; }
  const sha256_digest& sig_digest() const { return sig_digest_; }
  // Empty unless the producer attached them.
  const std::vector<public_key>& signer_keys() const { return signer_keys_; }
  // sha256 of the packed signed bytes, the leaf of the block's merkle tree.
  const sha256_digest& merkle_digest() const { return merkle_digest_; }

 private:
  void derive(std::span<const std::uint8_t> packed_unsigned, const chain_id& chain);
  void keep_packed(const out_buffer& signed_bytes);  // the packed bytes and the merkle leaf

  signed_transaction tx_;
  std::vector<std::uint8_t> packed_;
  transaction_id id_;
  sha256_digest sig_digest_;
  sha256_digest merkle_digest_;
  std::vector<public_key> signer_keys_;
};

using full_transaction_ptr = std::shared_ptr<const full_transaction>;

}  // namespace apiary::core
