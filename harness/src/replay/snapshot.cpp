#include "apiary/harness/replay/snapshot.hpp"

#include <algorithm>

#include "apiary/colony/colony.hpp"
#include "apiary/colony/workload.hpp"
#include "apiary/queen/block_observer.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"
#include "cycle/observers.hpp"

namespace apiary::harness {

namespace {

// Ends the writer's loop at the round's last block, or when cancelled.
class round_end final : public queen::block_observer {
 public:
  round_end(std::uint32_t last_block, const std::function<bool()>& cancelled)
      : last_block_(last_block), cancelled_(cancelled) {}
  std::string_view name() const override { return "snapshot round"; }
  bool on_block(const queen::block_record& r, const core::chain& /*chain*/) override {
    return r.num < last_block_ && !cancelled_();
  }

 private:
  std::uint32_t last_block_;
  const std::function<bool()>& cancelled_;
};

// Rejections; a round's transactions left over when it ends are completed with shutdown.
void count_rejected(void* ctx, const core::full_transaction& /*tx*/, core::reject outcome) {
  if (core::is_rejection(outcome)) ++*static_cast<std::uint64_t*>(ctx);
}

}  // namespace

advance_result advance_chain(const run_config& c, core::chain& chain, std::uint32_t blocks,
                             const std::function<bool()>& cancelled,
                             const std::function<void(std::uint32_t made)>& progress) {
  advance_result out;
  colony::colony_config k = c.colony;
  k.use_genesis_of(chain.options());
  // A round's transactions fill its blocks with a tenth to spare (the estimate is an average).
  std::uint64_t per_block = colony::estimate_block_transactions(k);
  if (c.writer.block_transactions != 0) per_block = std::min<std::uint64_t>(per_block, c.writer.block_transactions);
  const std::uint64_t round_blocks = std::max<std::uint64_t>(1, snapshot_round_transactions * 10 / 11 / per_block);
  const std::uint32_t first = chain.head_block_num();
  const std::uint32_t target = first + blocks;
  while (chain.head_block_num() < target && !cancelled()) {
    const std::uint32_t head = chain.head_block_num();
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(target - head, round_blocks));
    // Each round's streams draw from their own seeds, so rounds do not repeat one another.
    k.seed = c.colony.seed + std::uint64_t{head} * k.threads;
    // Each transaction expires an hour after the block slot it was made for (at most the
    // round's tenth to spare early), as on a live chain: the blocks after the state prune a
    // block's worth of ids each, not a round's every ninth block.
    const std::uint64_t spread = per_block * 11 / 10;
    const colony::workload w = colony::generate_workload(k, n * spread + 1, head_of(chain), spread);
    queen::writer_queue queue;
    for (const core::full_transaction_ptr& tx : w.transactions)
      queue.submit(tx, core::tx_completion{&count_rejected, &out.rejected});
    queue.close();
    queen::writer writer(chain, queue, c.writer);
    round_end end(head + n, cancelled);
    writer.observe(end);
    writer.serve_here();
    ++out.rounds;
    for (const queen::block_record& b : writer.blocks()) out.in_blocks += b.transactions;
    if (writer.failed()) {
      out.error = writer.error_message();
      break;
    }
    if (chain.head_block_num() == head) {
      out.error = "a round of " + std::to_string(w.transactions.size()) + " transactions made no block";
      break;
    }
    progress(chain.head_block_num() - first);
  }
  out.blocks = chain.head_block_num() - first;
  out.cancelled = out.blocks < blocks && out.error.empty();
  return out;
}

}  // namespace apiary::harness
