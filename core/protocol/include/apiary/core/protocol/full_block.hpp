// full_block: a signed block header and shared full transactions. Its packed size is the
// header's plus the cached sizes of its transactions, and packing it copies each
// transaction's cached bytes, so a block producer never re-serializes what it already has.
#pragma once

#include <cstdint>
#include <vector>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/full_transaction.hpp"

namespace apiary::core {

struct full_block {
  signed_block_header header;
  std::vector<full_transaction_ptr> transactions;

  std::size_t packed_size() const;
  // Appends the block in wire format: byte-identical to packing to_signed_block().
  void pack_into(out_buffer& out) const;
  ripemd160_digest compute_merkle_root() const;
  signed_block to_signed_block() const;
};

// Packed size of a block header plus the transaction count's varint, for n transactions:
// what a block costs before its transactions.
std::size_t block_overhead_size(const signed_block_header& h, std::size_t n);

}  // namespace apiary::core
