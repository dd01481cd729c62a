// real_traffic: real Hive blocks turned into a replay (`apiary replay --blocks-from FILE`).
//
// Each real transaction of the range becomes one transaction on the replay's chain: its
// operations of the kinds apiary models, in order, on the genesis head's TaPoS and expiring an
// hour after it, as a workload's own transactions; unsigned (the real keys are not the
// chain's, so the replay runs with the authority check off). Operations of other kinds are
// counted by kind and left out, and a transaction left with none is left out whole.
//
// What the operations reference below the range is made to exist at genesis (Hive's iceberg
// conversion): every account a modelled operation names, with the genesis balances (more
// when its transfers send more) and vesting, and every comment voted on, replied to or given
// options before an operation of the range creates it (its parent first, when a later
// operation of the range shows it is a reply).
// Thread safety: plain values; built and read on one thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/genesis_additions.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/harness/io/block_file.hpp"

namespace apiary::harness {

struct real_traffic {
  std::string kind;  // of the file: block_file::kind()
  std::uint32_t first_block = 0;
  std::uint32_t last_block = 0;
  std::uint64_t blocks = 0;
  std::uint64_t transactions = 0;          // in the blocks of the range
  std::uint64_t transactions_skipped = 0;  // holding no operation of a modelled kind
  // Per operation kind, indexed by wire id (core::operation_kinds()).
  std::vector<std::uint64_t> in_blocks;
  std::vector<std::uint64_t> applied;   // in transactions the chain accepted (apply_outcomes)
  std::vector<std::uint64_t> rejected;  // in transactions the chain rejected
  // The modelled operations by the colony's kinds (an article is a comment without a parent);
  // comment_options has none.
  std::array<std::uint64_t, colony::op_kind_count> by_mix_kind{};
  core::genesis_additions genesis;                    // created before the replay
  std::vector<core::full_transaction_ptr> converted;  // what the replay pushes, in block order
};

// Reads blocks `from` to `to` of `file` and converts them for a chain with `chain`'s genesis
// options (its balances, vesting, time and chain id). Throws block_file_error or
// core::block_error for a damaged block.
real_traffic convert_real_blocks(block_file& file, std::uint32_t from, std::uint32_t to,
                                 const core::chain_options& chain);

// After the replay: each converted transaction's outcome, in order, counted into
// applied/rejected by the kinds of its operations.
void apply_outcomes(real_traffic& t, const std::vector<core::reject>& outcomes);

class json_out;
// The report's "real_traffic" section: the range, per kind the count in the blocks and how
// many were applied, rejected and skipped, the transactions, the genesis additions, and the
// real mix beside `mix`'s shares.
void write_real_traffic(json_out& j, const real_traffic& t, const colony::mix_config& mix);
// The summary's lines.
std::string format_real_traffic(const real_traffic& t, const colony::mix_config& mix);

}  // namespace apiary::harness
