#include "apiary/core/protocol/any_block.hpp"

namespace apiary::core {

namespace {

std::string block_error_text(std::uint32_t block_num, const std::string& problem,
                             const std::optional<std::size_t>& transaction, const std::optional<transaction_id>& id) {
  std::string out = block_num ? "block " + std::to_string(block_num) : std::string("block header");
  if (transaction) {
    out += ", transaction " + std::to_string(*transaction);
    if (id) out += " (id " + to_hex(*id) + ")";
  }
  return out + ": " + problem;
}

}  // namespace

block_error::block_error(std::uint32_t block_num, const std::string& problem, std::optional<std::size_t> transaction,
                         std::optional<transaction_id> id)
    : std::runtime_error(block_error_text(block_num, problem, transaction, id)),
      block_num_(block_num),
      transaction_(transaction) {}

any_block decode_any_block(std::span<const std::uint8_t> in, block_layout& layout) {
  byte_reader r(in);
  any_block b;
  std::uint32_t num = 0;
  std::optional<std::size_t> tx;
  try {
    unpack(r, b.previous);
    num = b.block_num();
    unpack(r, b.timestamp);
    unpack(r, b.witness);
    unpack(r, b.transaction_merkle_root);
    unpack(r, b.extensions);
    layout.header = {0, r.offset()};
    unpack(r, b.witness_signature);
    layout.signed_header = {0, r.offset()};
    const std::uint32_t n = unpack_varint(r, "transaction count");
    // Each transaction takes at least 13 bytes (see decode_block_with_ids).
    if (n > r.remaining() / 13)
      r.fail("transaction count " + std::to_string(n) + " cannot fit in the remaining " +
             std::to_string(r.remaining()) + " bytes");
    b.transactions.resize(n);
    layout.transactions.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      tx = i;
      const std::size_t begin = r.offset();
      unpack(r, static_cast<any_transaction_body&>(b.transactions[i]));
      layout.transactions[i].body = {begin, r.offset()};
      unpack(r, b.transactions[i].signatures);
      layout.transactions[i].whole = {begin, r.offset()};
    }
    tx.reset();
    if (!r.at_end()) r.fail(std::to_string(r.remaining()) + " unexpected trailing bytes after the block");
  } catch (const decode_error& e) {
    throw block_error(num, e.what(), tx);
  }
  return b;
}

}  // namespace apiary::core
