// Hive blocks: header, signed header and signed block, with the block id and transaction
// merkle root computed as Hive computes them (legacy serialization).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "apiary/core/protocol/transaction.hpp"

namespace apiary::core {

// Hive's block_header_extensions; apiary writes none and rejects any when decoding.
using block_extensions = no_extensions;

struct block_header {
  block_id previous;
  time_point_sec timestamp;
  account_name witness;
  ripemd160_digest transaction_merkle_root;
  block_extensions extensions;

  std::uint32_t block_num() const { return block_num_from_id(previous) + 1; }

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("previous", s.previous);
    f("timestamp", s.timestamp);
    f("witness", s.witness);
    f("transaction_merkle_root", s.transaction_merkle_root);
    f("extensions", s.extensions);
  }
  bool operator==(const block_header&) const = default;
};

struct signed_block_header : block_header {
  compact_signature witness_signature;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    block_header::fields(static_cast<std::conditional_t<std::is_const_v<Self>, const block_header&, block_header&>>(s),
                         f);
    f("witness_signature", s.witness_signature);
  }
  bool operator==(const signed_block_header&) const = default;
};

struct signed_block : signed_block_header {
  std::vector<signed_transaction> transactions;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    signed_block_header::fields(
        static_cast<std::conditional_t<std::is_const_v<Self>, const signed_block_header&, signed_block_header&>>(s), f);
    f("transactions", s.transactions);
  }
  bool operator==(const signed_block&) const = default;
};

// sha256 of the packed unsigned header: what the witness signs.
sha256_digest header_digest(const block_header& h);
// sha224 of the packed signed header, truncated to 20 bytes, its first 4 bytes replaced
// by the block number (big-endian).
block_id compute_block_id(const signed_block_header& h);
// The same from the packed signed header's bytes and the block's number.
block_id block_id_of_packed_header(std::span<const std::uint8_t> packed_signed_header, std::uint32_t block_num);
// Pairwise sha256 up the tree (an odd last leaf moves up unchanged), ripemd160 of the root;
// all zero for no transactions. `leaves` is consumed as scratch space.
ripemd160_digest merkle_root(std::span<sha256_digest> leaves);
ripemd160_digest compute_merkle_root(const signed_block& b);

// A decoded block with every transaction id, taken from the decoded byte ranges instead of
// packing each transaction again.
struct decoded_block {
  signed_block block;
  std::vector<transaction_id> transaction_ids;
};
decoded_block decode_block_with_ids(std::span<const std::uint8_t> in);

}  // namespace apiary::core
