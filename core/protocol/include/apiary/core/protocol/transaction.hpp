// Hive transactions: the unsigned transaction whose packed form is hashed for the id and
// the signature digest, and the signed transaction that travels in blocks.
#pragma once

#include <cstdint>
#include <vector>

#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

// 65 bytes: recovery byte (27 + 4 + recid for a compressed key), then r and s.
using compact_signature = fixed_bytes<65>;

// Hive's future_extensions: an empty static variant set. apiary writes none and rejects any
// when decoding, since no main-net transaction extension exists.
struct no_extensions {
  bool operator==(const no_extensions&) const = default;
};
template <class S>
void pack(S& s, const no_extensions&) {
  pack_varint(s, 0);
}
void unpack(byte_reader& r, no_extensions&);

// Nearly every transaction carries one operation and one signature: both are kept inline.
using operation_list = boost::container::small_vector<operation, 1>;
using signature_list = boost::container::small_vector<compact_signature, 1>;

struct transaction {
  std::uint16_t ref_block_num = 0;     // low 16 bits of the reference block's number
  std::uint32_t ref_block_prefix = 0;  // bytes 4..7 of the reference block's id
  time_point_sec expiration;
  operation_list operations;
  no_extensions extensions;

  // TaPoS fields from a block id (Hive's set_reference_block).
  void set_reference_block(const block_id& id);

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("ref_block_num", s.ref_block_num);
    f("ref_block_prefix", s.ref_block_prefix);
    f("expiration", s.expiration);
    f("operations", s.operations);
    f("extensions", s.extensions);
  }
  bool operator==(const transaction&) const = default;
};

struct signed_transaction : transaction {
  signature_list signatures;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    transaction::fields(static_cast<std::conditional_t<std::is_const_v<Self>, const transaction&, transaction&>>(s), f);
    f("signatures", s.signatures);
  }
  bool operator==(const signed_transaction&) const = default;
};

// Hive's transaction digest, id and signature digest, from the packed unsigned bytes.
transaction_id transaction_id_of(std::span<const std::uint8_t> packed_unsigned);
sha256_digest signature_digest_of(const chain_id& chain, std::span<const std::uint8_t> packed_unsigned);

transaction_id compute_id(const transaction& tx);
sha256_digest signature_digest(const transaction& tx, const chain_id& chain);
// sha256 of the packed signed transaction: the leaf of the block's merkle tree.
sha256_digest merkle_digest(const signed_transaction& tx);

// Block number encoded in a block id (its first 4 bytes, big-endian).
std::uint32_t block_num_from_id(const block_id& id);

}  // namespace apiary::core
