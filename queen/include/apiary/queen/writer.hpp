// writer: the thread that owns the chain. It takes what the producers queued, pushes each
// transaction into the chain, calls its completion, and runs the block producer:
//
//   The pushes come in bursts of up to burst_limit, back to back with one clock read each
//   (a push's time runs from the end of the one before); the burst's completions follow it,
//   before the next burst or block. The next few transactions are prefetched while one is
//   pushed: a producer on another core wrote them. The latency records are not built here:
//   a finished batch, with each push's outcome and time, and each applied block go to the
//   timing outbox as they are, and its consumer builds them (tx_timing.hpp).
//
//   Every accepted transaction counts against the target block. When the room left is not
//   larger than that transaction's packed size (the next one is unlikely to fit), or the
//   transaction-count target is reached, the producer asks for a block; the request is
//   served before the next transaction. The block is built from the pending transactions in
//   order without re-executing them, signed, and applied; chain time advances one 3-second
//   slot per block whatever the wall clock says.
//
//   On the chain's clock (writer_config::clock) a block is one 3-second slot instead: the
//   writer counts the slot's pushes, accepted or rejected, and once the schedule's count for
//   that block is answered it produces the block, full or not, empty if none was accepted (and
//   at once when the count is 0). Accepted transactions beyond the size target are pushed as
//   may-be-left-out and stay pending for the next slot (Hive's overflow); the count target
//   does not apply.
//
//   After each block the writer hands the block to the timing outbox and publishes it to its
//   block observers (block_observer.hpp), timing both as observe_ns, a part of the breakdown
//   of its own (the next block's cycle, wall time from this block's end, holds it).
//
// At its end, however the loop ended (stop requested, an observer's stop, the queue closed
// and emptied, an error), the writer closes the queue and completes every transaction it did
// not push with reject::shutdown: the rest of the batch in hand (the one whose push threw
// too), then everything still queued (writer_queue::drain), which also holds all that
// producers submitted until the close; later submits return false. So every transaction a
// submit took is completed exactly once, on the writer thread, before join() or serve_here()
// returns. After join(), the producers' in-flight counts are final once no producer is
// inside a submit any more (join the producers too).
//
// Thread safety: start/serve_here/request_stop/join from the controlling thread; the block
// observers and the completions run on the writer thread; results (records, breakdown,
// observer costs, error) are read after join() or serve_here(); thread_id() from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/slot_schedule.hpp"
#include "apiary/queen/block_observer.hpp"
#include "apiary/queen/block_stats.hpp"
#include "apiary/queen/tx_timing.hpp"
#include "apiary/queen/writer_queue.hpp"

namespace apiary::queen {

struct writer_config {
  // Block size target in bytes; Hive's default is the maximum minus 256.
  std::uint32_t block_size = core::chain_limits::max_block_size - 256;
  // Also ask for a block after this many transactions (0: size only).
  std::uint32_t block_transactions = 0;
  // Set: blocks on the chain's clock, each after this schedule's count of pushes for its
  // number (the size target still bounds what a block holds); unset: by size.
  std::optional<core::slot_schedule> clock;
};

class writer {
 public:
  writer(core::chain& chain, writer_queue& queue, writer_config config);
  // Requests a stop and joins: the queue and every completion's target must outlive it.
  ~writer();
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;

  // Before start() or serve_here(): hand every batch and block to `out`, from which its
  // consumer builds each settled transaction's moments (see tx_timing.hpp). Without it the
  // writer keeps nothing of them.
  void record_timings(timing_outbox& out) { outbox_ = &out; }
  // Before start() or serve_here(): publish each applied block to `o` (after those added
  // before it), which must outlive the writer's loop.
  void observe(block_observer& o) { observers_.push_back({&o, {o.name(), 0}}); }
  // Before start(): room for this many block records, so a long run's list is never moved
  // (moving a list of a million records would stall the block that grows it).
  void reserve_blocks(std::size_t n) { blocks_.reserve(n); }

  void start();
  // Serves the queue on the calling thread instead of starting one, until the queue is
  // closed and emptied or an observer asks to stop: the deterministic single-thread replay
  // (fill the queue, close it, then call this). Ends as the thread does: what it did not
  // push is completed with reject::shutdown before it returns. Not together with start().
  void serve_here();
  // Ends the loop after the transaction or block in hand (any thread). The current block,
  // if one is being produced, is finished; the transactions not pushed are completed with
  // reject::shutdown.
  void request_stop();
  // Waits for the writer thread. If neither start() nor serve_here() ever ran, it does the
  // writer's end here instead (close the queue, complete what is queued with
  // reject::shutdown), so a run stopped before its writer started leaves nothing unanswered.
  void join();

  // After join(): every block, the time split, and the error that ended the loop, if any.
  const std::vector<block_record>& blocks() const { return blocks_; }
  // After join(): the records, moved out (a million-block run's list is 107 MiB; a copy
  // would double it at the end of the run). blocks() is empty afterwards.
  std::vector<block_record> take_blocks() { return std::move(blocks_); }
  const writer_breakdown& breakdown() const { return breakdown_; }
  // After join(): the time spent handing blocks to the timing outbox ("timing outbox", when
  // there is one), then each observer's, in the order they were added.
  std::vector<observer_cost> observer_costs() const;
  // A snapshot of the breakdown taken on the writer thread (by a block observer), to leave
  // warm-up out of the figures.
  writer_breakdown breakdown_now() const;
  bool failed() const { return error_ != nullptr; }
  std::string error_message() const;
  // The Linux thread id (gettid()) of the thread that serves the queue, published as it
  // starts serving (start() or serve_here()); 0 before. For a harness that counts the
  // writer's thread by its id (perf_event_open); the writer itself does nothing with it.
  int thread_id() const { return thread_id_.load(std::memory_order_acquire); }

 private:
  // The writer's whole work on whichever thread serves the queue (start() or serve_here()):
  // loop(), then finish().
  void serve() noexcept;
  void loop();
  // The end of serving: completes what loop() did not push with reject::shutdown.
  void finish() noexcept;
  void complete_unpushed(const queued_tx& item) noexcept;
  // Pushes the batch's next transactions back to back, one clock read each, until a block
  // is due, burst_limit are pushed or the batch ends; their outcomes wait in outcomes_ for
  // complete_burst(). Returns whether a block is due. If a push throws, the ones before it are
  // completed first.
  bool push_burst(std::uint64_t overhead);
  // The completions of the burst just pushed, in order.
  void complete_burst() noexcept;
  // Once every transaction of the batch is answered: hands it over with its outcomes to the
  // outbox (which gives back emptied vectors), or drops it without one.
  void end_batch() noexcept;
  void produce_block();
  // produce_block(), then on the chain's clock the blocks of the slots that offer nothing.
  void produce_blocks();
  // The block just applied (at applied_ns), to the outbox and the observers.
  void publish(const block_record& r, core::full_block&& block, std::int64_t applied_ns);
  std::uint32_t pending_bytes() const;

  core::chain& chain_;
  writer_queue& queue_;
  writer_config config_;
  struct observer_entry {
    block_observer* observer;
    observer_cost cost;  // writer thread
  };
  std::vector<observer_entry> observers_;
  std::thread thread_;
  bool ran_ = false;  // controlling thread: start() or serve_here() was called
  std::atomic<bool> stop_{false};
  std::atomic<int> thread_id_{0};

  // Writer-thread state.
  queue_batch batch_;           // taken from the queue
  std::size_t batch_done_ = 0;  // batch_.txs before this index are completed
  // Each pushed transaction of the batch: its outcome and when its push ended, in batch
  // order. Completions wait for the end of a burst (at most burst_limit pushes, a fraction of a
  // millisecond), so the pushes follow each other with nothing else between them.
  static constexpr std::size_t burst_limit = 128;
  std::vector<push_outcome> outcomes_;
  std::vector<block_record> blocks_;
  writer_breakdown breakdown_;
  std::int64_t start_ns_ = 0;
  std::int64_t last_block_ns_ = -1;
  std::uint64_t pending_bytes_ = 0;
  std::uint32_t pending_count_ = 0;
  std::uint32_t slot_left_ = 0;  // on the chain's clock: the pushes the current slot awaits
  std::exception_ptr error_;

  // Writer-thread state for record_timings().
  timing_outbox* outbox_ = nullptr;
  std::uint64_t pushes_handed_ = 0;  // outcomes in the batches handed over
  std::int64_t outbox_ns_ = 0;       // handing blocks over
  // While a block is handed to the outbox and the observers: when that began; 0 otherwise.
  // breakdown_now() counts the time since as observing, so that an observer's snapshot splits
  // the wall time and the observing time at the same moment.
  std::int64_t publish_start_ns_ = 0;
};

}  // namespace apiary::queen
