// replay: the deterministic measurement mode (`apiary replay`). A saved workload
// (workload_file.hpp) is pushed through the queen's writer and the core on the calling
// thread: the queue is filled and closed first, then the writer loop runs here, with the
// same block producer as `apiary run` (block-full rule, generate, apply, timing outbox). No other
// thread runs while it does, so the same binary, workload and options execute the same
// instructions every time: the CI performance gate counts them under callgrind.
//
// The measured part is the function apiary_replay_measured (extern "C", never inlined), so a
// profiler can restrict its counts to it by name:
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=apiary_replay_measured ...
// and it starts and stops callgrind's instrumentation itself, so that
//   valgrind --tool=callgrind --instr-atstart=no ...
// counts it alone and runs everything before it uninstrumented (far faster with --cache-sim).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apiary/colony/colony.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/genesis_additions.hpp"
#include "apiary/core/chain/rc_stats.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/cycle/context.hpp"
#include "apiary/harness/replay/real_traffic.hpp"
#include "apiary/harness/replay/workload_file.hpp"
#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

struct replay_result {
  std::uint64_t transactions = 0;
  std::uint64_t accepted = 0;
  core::reject_counts rejections;
  std::vector<queen::block_record> blocks;
  queen::writer_breakdown breakdown;
  std::uint64_t pending_at_end = 0;
  std::int64_t genesis_ns = 0;
  std::string genesis_keys;    // where the genesis keys came from (genesis_key_cache.hpp)
  std::int64_t replay_ns = 0;  // the measured part: the writer loop over the whole workload
  std::uint32_t head_block_num = 0;
  std::string head_block_id;          // hex
  std::string state_digest;           // hex: the chain's state after the replay
  core::state_census state_at_start;  // what the state held when the replay began
  core::state_census state_at_end;
  std::vector<core::rc_archive> rc_archives;  // Hive's RC statistics, every --rc-stats-blocks blocks
  std::string error;                          // the writer failed: why (the figures are up to the failure)
};

// The chain options a replay of `w` uses: c's switches and block settings, w's genesis.
core::chain_options replay_chain_options(const run_config& c, const workload_meta& w);

// Builds the genesis and replays every transaction of w. c supplies the chain switches and
// the block size settings; the genesis and the chain id come from the workload. `loaded`: the
// chain loaded from --state instead (its genesis options are c's; the workload must start
// from its head), genesis_ns then 0. On the chain's clock, where a slot that offers nothing
// is an empty block at once, the replay ends after `blocks` blocks (0: once every
// transaction is answered), never in a run of empty slots.
// `additions` (optional) join the genesis before the replay (chain::add_to_genesis), part of
// genesis_ns; `outcomes` (optional) receives each transaction's outcome, in workload order.
replay_result replay_workload(const run_config& c, const saved_workload& w,
                              std::unique_ptr<core::chain> loaded = nullptr, std::uint32_t blocks = 0,
                              const core::genesis_additions* additions = nullptr,
                              std::vector<core::reject>* outcomes = nullptr);

// The head a chain with these options starts from at genesis: block 0 at the genesis time.
colony::head_info genesis_head(const core::chain_options& chain);

// The workload `apiary workload` and `apiary replay` generate from c's seed, threads
// (streams), accounts and sign options: every transaction references `head` and expires an
// hour after it, so it serves the 1,199 blocks after `head`.
saved_workload generate_saved_workload(const run_config& c, std::uint64_t transactions, const colony::head_info& head);
inline saved_workload generate_saved_workload(const run_config& c, std::uint64_t transactions) {
  return generate_saved_workload(c, transactions, genesis_head(c.chain));
}

// The result as JSON (kind "replay"): the context, the workload, the options, the outcome,
// the RC statistics (rc.archives, rc.stats over them all) and one entry per block. `workload_source` names the file, or
// "generated".
// `real`: the replay was of real blocks (real_traffic.hpp), whose section follows the result.
void write_replay_report(core::out_buffer& out, const run_config& c, const run_context& ctx, const workload_meta& w,
                         const std::string& workload_source, const replay_result& r,
                         const real_traffic* real = nullptr);

// A few lines for the terminal.
std::string format_replay_summary(const run_context& ctx, const workload_meta& w, const replay_result& r,
                                  const run_config& c, const real_traffic* real = nullptr);

}  // namespace apiary::harness
