// Verifies real Hive blocks from their packed bytes (a block_log's, or block_api JSON packed
// again in the legacy serialization): the block id, the transaction merkle root, every
// transaction id, every signature (each must recover a key from the transaction's signature
// digest) and the witness's signature; against what the source states beside the block
// (block_api's block_id, signing_key and transaction_ids) when it states it.
// Thread safety: a block_verifier is one thread's; the functions may be called from any.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "apiary/core/protocol/any_block.hpp"
#include "apiary/core/protocol/keys.hpp"

namespace apiary::core {

// Hive main net's transactions were signed for Steem's chain id (all zero) until Hive's
// hardfork 24 was applied (its first block after 2020-10-14T19:31:24), and for Hive's
// (beeab0de...) since: the chain id of a transaction in a block made at `block_time`.
chain_id mainnet_signing_chain_id(time_point_sec block_time);

// The chain ids hived's test-net and mirror-net builds sign for unless their --chain-id option
// names another (HIVE_CHAIN_ID in hive/protocol/config.hpp: sha256 of "testnet", and 0x42
// followed by 31 zero bytes); such a build uses its one chain id from block 1 on.
chain_id testnet_chain_id();
chain_id mirrornet_chain_id();

// What a source states about a block beside its bytes.
struct block_expectations {
  std::optional<block_id> id;
  std::optional<public_key> signing_key;
  std::optional<std::vector<transaction_id>> transaction_ids;
};

struct verified_block {
  std::uint32_t block_num = 0;
  block_id id;
  block_id previous;
  std::uint32_t transactions = 0;
  std::uint32_t signatures = 0;
  std::vector<std::uint32_t> operation_ids;  // each operation's wire id, in block order
};

// Verifies one packed block; throws block_error naming the block, the transaction and what
// does not match. `chain`: the chain id its transactions were signed for; nullopt: main net's
// by the block's time (mainnet_signing_chain_id). A signature recovers some key under any chain
// id, so the chain id chooses the digests and is not checked.
verified_block verify_block(std::span<const std::uint8_t> packed, const block_expectations& expected,
                            const std::optional<chain_id>& chain = std::nullopt);

// Verifies blocks in order, and that each one's `previous` is the id computed for the block
// before it when that one was verified just before.
class block_verifier {
 public:
  explicit block_verifier(std::optional<chain_id> chain = std::nullopt) : chain_(chain) {}
  verified_block verify(std::span<const std::uint8_t> packed, const block_expectations& expected);

 private:
  std::optional<chain_id> chain_;  // as verify_block's
  std::optional<verified_block> last_;
};

}  // namespace apiary::core
