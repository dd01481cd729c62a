#include "apiary/core/protocol/block_verify.hpp"

#include <string_view>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {

namespace {

// Hive's rule (HIVE_HARDFORK_1_24_ACTUAL_TIME): blocks made after this second hold
// transactions signed for Hive's chain id.
constexpr std::uint32_t hf24_applied = 1602703884;  // 2020-10-14T19:31:24

std::span<const std::uint8_t> part(std::span<const std::uint8_t> in, byte_range r) {
  return in.subspan(r.begin, r.end - r.begin);
}

std::string differs(std::string_view what, const std::string& computed, const std::string& stated) {
  return std::string(what) + " computed " + computed + " differs from the stated " + stated;
}

}  // namespace

chain_id mainnet_signing_chain_id(time_point_sec block_time) {
  return block_time.secs > hf24_applied ? hive_mainnet_chain_id() : chain_id{};
}

chain_id testnet_chain_id() {
  constexpr std::string_view name = "testnet";
  return sha256(name.data(), name.size());
}

chain_id mirrornet_chain_id() {
  chain_id id;
  id.data[0] = 0x42;
  return id;
}

verified_block verify_block(std::span<const std::uint8_t> packed, const block_expectations& expected,
                            const std::optional<chain_id>& chain) {
  block_layout layout;
  const any_block b = decode_any_block(packed, layout);
  verified_block out;
  out.block_num = b.block_num();
  out.previous = b.previous;
  out.transactions = static_cast<std::uint32_t>(b.transactions.size());
  const auto fail = [&](const std::string& problem, std::optional<std::size_t> tx = {},
                        std::optional<transaction_id> id = {}) { throw block_error(out.block_num, problem, tx, id); };

  out.id = block_id_of_packed_header(part(packed, layout.signed_header), out.block_num);
  if (expected.id && *expected.id != out.id) fail(differs("block id", to_hex(out.id), to_hex(*expected.id)));

  const std::span<const std::uint8_t> header = part(packed, layout.header);
  const auto witness_key = recover_public_key(b.witness_signature, sha256(header.data(), header.size()));
  if (!witness_key) fail("the witness signature recovers no public key");
  if (expected.signing_key && *witness_key != *expected.signing_key)
    fail(differs("the witness signature's key", public_key_to_string(*witness_key),
                 public_key_to_string(*expected.signing_key)));

  if (expected.transaction_ids && expected.transaction_ids->size() != b.transactions.size())
    fail(std::to_string(b.transactions.size()) + " transactions, but " +
         std::to_string(expected.transaction_ids->size()) + " transaction ids stated");
  const chain_id signed_for = chain ? *chain : mainnet_signing_chain_id(b.timestamp);
  std::vector<sha256_digest> leaves;
  leaves.reserve(b.transactions.size());
  for (std::size_t i = 0; i < b.transactions.size(); ++i) {
    const any_transaction& tx = b.transactions[i];
    const std::span<const std::uint8_t> body = part(packed, layout.transactions[i].body);
    const transaction_id id = transaction_id_of(body);
    if (expected.transaction_ids && (*expected.transaction_ids)[i] != id)
      fail(differs("id", to_hex(id), to_hex((*expected.transaction_ids)[i])), i, id);
    const sha256_digest digest = signature_digest_of(signed_for, body);
    for (std::size_t k = 0; k < tx.signatures.size(); ++k)
      if (!recover_public_key(tx.signatures[k], digest))
        fail("signature " + std::to_string(k) + " recovers no public key", i, id);
    out.signatures += static_cast<std::uint32_t>(tx.signatures.size());
    for (const any_operation& op : tx.operations) out.operation_ids.push_back(op.wire_id());
    const std::span<const std::uint8_t> whole = part(packed, layout.transactions[i].whole);
    leaves.push_back(sha256(whole.data(), whole.size()));
  }
  const ripemd160_digest root = merkle_root(leaves);
  if (root != b.transaction_merkle_root)
    fail(differs("transaction merkle root", to_hex(root), to_hex(b.transaction_merkle_root)));
  return out;
}

verified_block block_verifier::verify(std::span<const std::uint8_t> packed, const block_expectations& expected) {
  verified_block v = verify_block(packed, expected, chain_);
  if (last_ && v.block_num == last_->block_num + 1 && v.previous != last_->id)
    throw block_error(v.block_num, "previous " + to_hex(v.previous) + " is not the id computed for block " +
                                       std::to_string(last_->block_num) + ", " + to_hex(last_->id));
  last_ = v;
  return v;
}

}  // namespace apiary::core
