// Blocks and transactions as Hive's chain holds them, for reading real blocks: any kind of
// operation (any_operation.hpp), the header's extensions (a witness's version and hardfork
// vote) and the transactions' extensions. Packed in Hive's legacy serialization, as blocks
// are hashed and stored. apiary's own blocks and transactions, which carry none of these,
// keep the lean types of block.hpp and transaction.hpp on the hot path.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "apiary/core/protocol/any_operation.hpp"
#include "apiary/core/protocol/transaction.hpp"
#include "apiary/core/protocol/wire_value.hpp"

namespace apiary::core {

struct any_transaction_body {
  std::uint16_t ref_block_num = 0;
  std::uint32_t ref_block_prefix = 0;
  time_point_sec expiration;
  std::vector<any_operation> operations;
  described<wire::extensions> extensions;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("ref_block_num", s.ref_block_num);
    f("ref_block_prefix", s.ref_block_prefix);
    f("expiration", s.expiration);
    f("operations", s.operations);
    f("extensions", s.extensions);
  }
  bool operator==(const any_transaction_body&) const = default;
};

struct any_transaction : any_transaction_body {
  std::vector<compact_signature> signatures;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    any_transaction_body::fields(
        static_cast<std::conditional_t<std::is_const_v<Self>, const any_transaction_body&, any_transaction_body&>>(s),
        f);
    f("signatures", s.signatures);
  }
  bool operator==(const any_transaction&) const = default;
};

struct any_block_header {
  block_id previous;
  time_point_sec timestamp;
  std::string witness;
  ripemd160_digest transaction_merkle_root;
  described<wire::block_header_extensions> extensions;

  std::uint32_t block_num() const { return block_num_from_id(previous) + 1; }

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    f("previous", s.previous);
    f("timestamp", s.timestamp);
    f("witness", s.witness);
    f("transaction_merkle_root", s.transaction_merkle_root);
    f("extensions", s.extensions);
  }
  bool operator==(const any_block_header&) const = default;
};

struct any_block : any_block_header {
  compact_signature witness_signature;
  std::vector<any_transaction> transactions;

  template <class Self, class F>
  static void fields(Self& s, F&& f) {
    any_block_header::fields(
        static_cast<std::conditional_t<std::is_const_v<Self>, const any_block_header&, any_block_header&>>(s), f);
    f("witness_signature", s.witness_signature);
    f("transactions", s.transactions);
  }
  bool operator==(const any_block&) const = default;
};

// Where each part of a packed block lies, as offsets into its bytes: what the ids, digests and
// the merkle tree hash.
struct byte_range {
  std::size_t begin = 0;
  std::size_t end = 0;
};
struct block_layout {
  byte_range header;         // the unsigned header: what the witness signs
  byte_range signed_header;  // the header and the witness's signature: what the block id hashes
  struct transaction_ranges {
    byte_range body;   // the unsigned transaction: its id and signature digest
    byte_range whole;  // with its signatures: its merkle leaf
  };
  std::vector<transaction_ranges> transactions;
};

// A block that is malformed or does not verify: its number (0 when not even the header could
// be read), the transaction's index and id when the problem is in one, and what is wrong.
class block_error : public std::runtime_error {
 public:
  block_error(std::uint32_t block_num, const std::string& problem, std::optional<std::size_t> transaction = {},
              std::optional<transaction_id> id = {});
  std::uint32_t block_num() const { return block_num_; }
  const std::optional<std::size_t>& transaction() const { return transaction_; }

 private:
  std::uint32_t block_num_;
  std::optional<std::size_t> transaction_;
};

// Decodes a packed signed block whole (trailing bytes are an error) and where its parts lie.
// Throws block_error naming the block, the transaction and the byte offset of the problem.
any_block decode_any_block(std::span<const std::uint8_t> in, block_layout& layout);

}  // namespace apiary::core
