// dump: what --dump-transactions and --dump-blocks write. Both read the settled stream
// (settled.hpp) on the main thread, so neither the submit path nor the writer does anything
// for them:
//
//   transaction_sample   keeps the records of the first `limit` transactions to settle
//                        (included in a block, rejected at their push, or dropped), in the
//                        order they settled, each with the transaction itself;
//   block_capture        keeps the first `limit` blocks from a given number on (the measured
//                        ones), with their transactions;
//   write_*              after the run, stream them as JSON lines to a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/queen/tx_timing.hpp"

namespace apiary::harness {

class transaction_sample final : public settled_reader {
 public:
  explicit transaction_sample(std::size_t limit) : limit_(limit) { records_.reserve(limit); }
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override;
  const std::vector<queen::tx_timing>& records() const { return records_; }

 private:
  std::size_t limit_;
  std::vector<queen::tx_timing> records_;
};

class block_capture final : public settled_reader {
 public:
  block_capture(std::uint32_t first_num, std::size_t limit) : first_num_(first_num), limit_(limit) {}
  void read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block> blocks) override;
  const std::vector<queen::settled_block>& blocks() const { return blocks_; }

 private:
  std::uint32_t first_num_;
  std::size_t limit_;
  std::vector<queen::settled_block> blocks_;
};

// JSON lines, one per sampled transaction: its position, outcome (accepted, dropped or the
// reject reason), id, packed size, its moments in microseconds since origin_ns
// (intended_us, submitted_us, accepted_us, then included_us, dropped_us or rejected_us),
// signer public keys (recovered from its signatures), packed bytes in hex and Hive JSON form.
// Returns how many lines were written; throws std::runtime_error naming the path.
std::size_t write_transaction_dump(const std::string& path, const std::vector<queen::tx_timing>& records,
                                   std::int64_t origin_ns);
// The block the chain applied, rebuilt from what settled of it: its header signed again with the
// chain's witness key (signatures are deterministic, so its id is the chain's).
core::full_block rebuild_block(const queen::settled_block& c, const core::chain& chain);

// JSON lines, one per captured block: number, id, size, transaction count, witness and its
// public key, packed bytes in hex and the block in the block API's JSON form. The header is
// signed again with the chain's witness key (signatures are deterministic) and its id
// checked against the chain's.
std::size_t write_block_dump(const std::string& path, const std::vector<queen::settled_block>& blocks,
                             const core::chain& chain);

}  // namespace apiary::harness
