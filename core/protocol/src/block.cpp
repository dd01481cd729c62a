#include "apiary/core/protocol/block.hpp"

#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

sha256_digest header_digest(const block_header& h) {
  out_buffer buf(256);
  pack_into(buf, h);
  return sha256(buf.data(), buf.size());
}

block_id compute_block_id(const signed_block_header& h) {
  out_buffer buf(256);
  pack_into(buf, h);
  return block_id_of_packed_header(buf.span(), h.block_num());
}

block_id block_id_of_packed_header(std::span<const std::uint8_t> packed_signed_header, std::uint32_t block_num) {
  sha224_digest d = sha224(packed_signed_header.data(), packed_signed_header.size());
  block_id id;
  std::memcpy(id.begin(), d.begin(), id.size());
  id.data[0] = static_cast<std::uint8_t>(block_num >> 24);
  id.data[1] = static_cast<std::uint8_t>(block_num >> 16);
  id.data[2] = static_cast<std::uint8_t>(block_num >> 8);
  id.data[3] = static_cast<std::uint8_t>(block_num);
  return id;
}

ripemd160_digest merkle_root(std::span<sha256_digest> leaves) {
  if (leaves.empty()) return {};
  std::size_t n = leaves.size();
  while (n > 1) {
    std::size_t k = 0;
    for (std::size_t i = 0; i + 1 < n; i += 2)
      leaves[k++] =
          sha256(std::span<const std::uint8_t>(leaves[i].data), std::span<const std::uint8_t>(leaves[i + 1].data));
    if (n & 1) leaves[k++] = leaves[n - 1];
    n = k;
  }
  return ripemd160(leaves[0].begin(), leaves[0].size());
}

ripemd160_digest compute_merkle_root(const signed_block& b) {
  std::vector<sha256_digest> leaves;
  leaves.reserve(b.transactions.size());
  for (const auto& tx : b.transactions) leaves.push_back(merkle_digest(tx));
  return merkle_root(leaves);
}

decoded_block decode_block_with_ids(std::span<const std::uint8_t> in) {
  byte_reader r(in);
  decoded_block out;
  unpack(r, static_cast<signed_block_header&>(out.block));
  std::uint32_t n = unpack_varint(r, "transaction count");
  // The smallest signed transaction takes 13 bytes (TaPoS 6, expiration 4, and three empty
  // lists): a count beyond remaining / 13 cannot be real, and must not make us allocate
  // ~360 bytes per claimed transaction before the first one fails to decode.
  constexpr std::size_t min_transaction_bytes = 13;
  if (n > r.remaining() / min_transaction_bytes)
    r.fail("transaction count " + std::to_string(n) + " cannot fit in the remaining " + std::to_string(r.remaining()) +
           " bytes");
  out.block.transactions.resize(n);
  out.transaction_ids.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    signed_transaction& tx = out.block.transactions[i];
    const std::uint8_t* start = r.position();
    unpack(r, static_cast<transaction&>(tx));
    // The id hashes the unsigned part, which is exactly the bytes just decoded.
    out.transaction_ids[i] = transaction_id_of({start, static_cast<std::size_t>(r.position() - start)});
    unpack(r, tx.signatures);
  }
  if (!r.at_end()) r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes after the block");
  return out;
}

}  // namespace apiary::core
