#include "apiary/core/protocol/transaction.hpp"

#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

void unpack(byte_reader& r, no_extensions&) {
  std::uint32_t n = unpack_varint(r, "extensions count");
  if (n != 0) r.fail("extensions are not supported (found " + std::to_string(n) + ")");
}

void transaction::set_reference_block(const block_id& id) {
  ref_block_num = static_cast<std::uint16_t>(block_num_from_id(id));
  std::memcpy(&ref_block_prefix, id.begin() + 4, 4);
}

std::uint32_t block_num_from_id(const block_id& id) {
  return std::uint32_t{id.data[0]} << 24 | std::uint32_t{id.data[1]} << 16 | std::uint32_t{id.data[2]} << 8 |
         std::uint32_t{id.data[3]};
}

transaction_id transaction_id_of(std::span<const std::uint8_t> packed_unsigned) {
  sha256_digest d = sha256(packed_unsigned.data(), packed_unsigned.size());
  transaction_id id;
  std::memcpy(id.begin(), d.begin(), id.size());
  return id;
}

sha256_digest signature_digest_of(const chain_id& chain, std::span<const std::uint8_t> packed_unsigned) {
  return sha256(std::span<const std::uint8_t>(chain.begin(), chain.size()), packed_unsigned);
}

transaction_id compute_id(const transaction& tx) {
  out_buffer& buf = thread_scratch();
  pack_into(buf, tx);
  return transaction_id_of(buf.span());
}

sha256_digest signature_digest(const transaction& tx, const chain_id& chain) {
  out_buffer& buf = thread_scratch();
  pack_into(buf, tx);
  return signature_digest_of(chain, buf.span());
}

sha256_digest merkle_digest(const signed_transaction& tx) {
  out_buffer& buf = thread_scratch();
  pack_into(buf, tx);
  return sha256(buf.data(), buf.size());
}

}  // namespace apiary::core
