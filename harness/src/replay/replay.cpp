#include "apiary/harness/replay/replay.hpp"

#include <valgrind/callgrind.h>

#include <chrono>
#include <exception>

#include "apiary/colony/workload.hpp"
#include "apiary/core/base/clock.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/queen/block_observer.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"

// Outside every namespace and never inlined, so its name is stable for --toggle-collect.
// Under callgrind started with --instr-atstart=no, nothing before it (the genesis, the
// workload's loading) is simulated, which makes the cache simulation's run a third as long;
// elsewhere the two requests are a few instructions that do nothing.
extern "C" __attribute__((noinline)) void apiary_replay_measured(apiary::queen::writer* w) {
  CALLGRIND_START_INSTRUMENTATION;
  w->serve_here();
  CALLGRIND_STOP_INSTRUMENTATION;
  // Keeps the call a real call (no tail-call jump that a profiler would not see return).
  asm volatile("" ::: "memory");
}

namespace apiary::harness {

namespace {

void count_outcome(void* ctx, const core::full_transaction&, core::reject outcome) {
  static_cast<replay_result*>(ctx)->rejections.add(outcome);
}

// count_outcome, and the outcome kept in its transaction's place.
struct kept_outcome {
  replay_result* r;
  core::reject* place;
};
void keep_outcome(void* ctx, const core::full_transaction&, core::reject outcome) {
  auto* k = static_cast<kept_outcome*>(ctx);
  k->r->rejections.add(outcome);
  *k->place = outcome;
}

// The run's block targets; on the chain's clock, each block after its slot's count of pushes,
// whatever their outcomes, drawn with the workload's seed as its run drew them.
queen::writer_config replay_writer_config(const run_config& c, const workload_meta& w) {
  queen::writer_config wc;
  wc.block_size = c.writer.block_size;
  wc.block_transactions = c.writer.block_transactions;
  wc.clock = c.writer.clock;
  if (wc.clock) wc.clock->seed = w.seed;
  return wc;
}

// On the chain's clock: ends the replay at its last block, or (none given) at the block after
// which every transaction has been answered, so slots that offer nothing are not empty blocks
// forever. Writer thread; a few additions a block.
class clock_end final : public queen::block_observer {
 public:
  clock_end(std::uint32_t last_block, const replay_result& r) : last_block_(last_block), r_(r) {}
  std::string_view name() const override { return "replay end"; }
  bool on_block(const queen::block_record& b, const core::chain& /*chain*/) override {
    if (last_block_ != 0) return b.num < last_block_;
    std::uint64_t answered = 0;
    for (const std::uint64_t n : r_.rejections.by_reason) answered += n;
    return answered < r_.transactions;
  }

 private:
  std::uint32_t last_block_;
  const replay_result& r_;
};

}  // namespace

core::chain_options replay_chain_options(const run_config& c, const workload_meta& w) {
  core::chain_options o = c.chain;
  o.genesis_accounts = w.accounts;
  o.account_prefix = w.account_prefix;
  o.key_password = w.key_password;
  o.chain = w.chain;
  o.check_authority = w.sign;
  return o;
}

replay_result replay_workload(const run_config& c, const saved_workload& w, std::unique_ptr<core::chain> loaded,
                              std::uint32_t blocks, const core::genesis_additions* additions,
                              std::vector<core::reject>* outcomes) {
  replay_result r;
  r.transactions = w.transactions.size();

  if (!loaded) {
    const std::int64_t t0 = core::steady_now_ns();
    core::chain_options o = replay_chain_options(c, w.meta);
    // The id table sized as a run's (for the workload's ids at most), so it never rehashes.
    o.expected_transaction_ids = sized_chain(c, w.transactions.size()).expected_transaction_ids;
    loaded = make_genesis_chain(o, {}, &r.genesis_keys);
    if (additions != nullptr) loaded->add_to_genesis(*additions);
    r.genesis_ns = core::steady_now_ns() - t0;
  }
  core::chain& chain = *loaded;

  queen::writer_queue queue;
  std::vector<kept_outcome> kept;
  if (outcomes != nullptr) {
    outcomes->assign(w.transactions.size(), core::reject::none);
    kept.reserve(w.transactions.size());
    for (core::reject& place : *outcomes) kept.push_back({&r, &place});
  }
  for (std::size_t i = 0; i < w.transactions.size(); ++i)
    queue.submit(w.transactions[i],
                 kept.empty() ? core::tx_completion{&count_outcome, &r} : core::tx_completion{&keep_outcome, &kept[i]});
  queue.close();

  queen::writer writer(chain, queue, replay_writer_config(c, w.meta));
  // The writer hands its batches and blocks to a timing outbox as in a run, so the measured
  // part holds the writer's share of the latency records. The records are built after it,
  // as the harness's main thread builds them in a run; with every transaction queued before
  // the writer starts, the latencies themselves mean nothing here and are dropped.
  queen::timing_outbox timings;
  writer.record_timings(timings);
  clock_end end(blocks == 0 ? 0 : chain.head_block_num() + blocks, r);
  if (c.writer.clock) writer.observe(end);

  r.state_at_start = chain.census();
  const std::int64_t t1 = core::steady_now_ns();
  apiary_replay_measured(&writer);
  r.replay_ns = core::steady_now_ns() - t1;
  std::vector<queen::tx_timing> settled;
  timings.take(settled);

  r.error = writer.error_message();
  r.blocks = writer.take_blocks();
  r.breakdown = writer.breakdown();
  r.accepted = r.rejections[core::reject::none];
  r.pending_at_end = chain.pending_count();
  r.head_block_num = chain.head_block_num();
  r.head_block_id = core::to_hex(chain.head_block_id());
  r.state_digest = core::to_hex(chain.state_digest());
  r.state_at_end = chain.census();
  r.rc_archives = chain.rc_archives();
  return r;
}

colony::head_info genesis_head(const core::chain_options& chain) {
  return {0, core::block_id{}, core::time_point_sec{chain.genesis_time}};
}

saved_workload generate_saved_workload(const run_config& c, std::uint64_t transactions, const colony::head_info& head) {
  const core::chain_options& chain = c.chain;
  // The workload's accounts are the chain's genesis, whether or not resolve() ran.
  colony::colony_config k = c.colony;
  k.use_genesis_of(chain);
  colony::workload generated = colony::generate_workload(k, transactions, head);

  saved_workload w;
  w.meta.seed = c.colony.seed;
  w.meta.streams = c.colony.threads;
  w.meta.accounts = chain.genesis_accounts;
  w.meta.sign = c.colony.sign;
  w.meta.faults = generated.faults;
  w.meta.account_prefix = chain.account_prefix;
  w.meta.key_password = chain.key_password;
  w.meta.chain = chain.chain;
  w.transactions = std::move(generated.transactions);
  return w;
}

}  // namespace apiary::harness
