#include "apiary/core/protocol/full_block.hpp"

namespace apiary::core {

std::size_t block_overhead_size(const signed_block_header& h, std::size_t n) {
  return packed_size(h) + varint_size(static_cast<std::uint32_t>(n));
}

std::size_t full_block::packed_size() const {
  std::size_t n = block_overhead_size(header, transactions.size());
  for (const auto& tx : transactions) n += tx->packed_size();
  return n;
}

void full_block::pack_into(out_buffer& out) const {
  out.reserve(out.size() + packed_size());
  byte_writer w(out);
  pack(w, header);
  pack_varint(w, static_cast<std::uint32_t>(transactions.size()));
  for (const auto& tx : transactions) out.append(tx->packed().data(), tx->packed_size());
}

ripemd160_digest full_block::compute_merkle_root() const {
  std::vector<sha256_digest> leaves;
  leaves.reserve(transactions.size());
  for (const auto& tx : transactions) leaves.push_back(tx->merkle_digest());
  return merkle_root(leaves);
}

signed_block full_block::to_signed_block() const {
  signed_block b;
  static_cast<signed_block_header&>(b) = header;
  b.transactions.reserve(transactions.size());
  for (const auto& tx : transactions) b.transactions.push_back(tx->tx());
  return b;
}

}  // namespace apiary::core
