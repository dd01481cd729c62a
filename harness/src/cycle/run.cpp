#include "cycle/run.hpp"

#include <unistd.h>

#include <csignal>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "apiary/colony/colony.hpp"
#include "apiary/core/base/clock.hpp"
#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/cycle/audit.hpp"
#include "apiary/harness/cycle/dump.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"
#include "cycle/interval_log.hpp"
#include "cycle/progress.hpp"
#include "cycle/signals.hpp"

namespace apiary::harness {

std::string_view to_string(run_status s) {
  switch (s) {
    case run_status::completed: return "completed";
    case run_status::interrupted: return "interrupted";
    case run_status::failed: return "failed";
  }
  return "unknown";
}

std::string report_path(const run_config& c, const run_context& ctx) {
  if (!c.out.report.empty()) return c.out.report;
  return "results/" + ctx.start_compact + "-" + c.name + ".json";
}

namespace {

// Ends the process if the shutdown does not finish: joining a thread that never returns
// would otherwise hang `apiary` forever.
class shutdown_watchdog {
 public:
  explicit shutdown_watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          core::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this]() APIARY_REQUIRES(mutex_) { return done_; })) {
            static const char msg[] = "apiary: the run did not shut down within a minute; exiting (no report)\n";
            const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
            (void)ignored;
            _exit(1);
          }
        }) {}
  ~shutdown_watchdog() {
    {
      core::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  shutdown_watchdog(const shutdown_watchdog&) = delete;
  shutdown_watchdog& operator=(const shutdown_watchdog&) = delete;

 private:
  core::mutex mutex_;
  core::condition_variable cv_;
  bool done_ APIARY_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

colony::head_info head_of(const core::chain& chain) {
  return {chain.head_block_num(), chain.head_block_id(), chain.head_block_time()};
}

// Hive's chain_plugin prints the writer loop's time split every 30 s, over those 30 s.
constexpr std::int64_t breakdown_interval_ns = 30'000'000'000;
// A warning once nothing has happened for this long (the run fails at --stall-timeout).
constexpr std::int64_t stall_warning_ns = 10'000'000'000;

void log_breakdown(spdlog::logger& log, const queen::writer_breakdown& d) {
  if (d.total_ns <= 0) return;
  const double total = static_cast<double>(d.total_ns) / 100.0;
  log.info(
      "waiting for work: {:.2f}%, waiting for locks: {:.2f}%, processing transactions: {:.2f}%, "
      "processing blocks: {:.2f}%, unknown: {:.2f}%",
      static_cast<double>(d.wait_work_ns) / total, static_cast<double>(d.wait_lock_ns) / total,
      static_cast<double>(d.tx_ns) / total, static_cast<double>(d.block_ns) / total,
      static_cast<double>(d.unknown_ns()) / total);
}

stop_reason stop_reason_for(int sig) {
  switch (sig) {
    case SIGINT: return stop_reason::sigint;
    case SIGTERM: return stop_reason::sigterm;
    case SIGHUP: return stop_reason::sighup;
    default: return stop_reason::other_signal;
  }
}

// What the main thread's wait remembers between two looks.
struct poll_state {
  bool machine_sampled = false;
  bool stall_warned = false;
  std::int64_t last_progress_ns = 0;
  std::uint64_t last_accepted = 0;
  std::int64_t last_block_seen = -1;
};

// The main thread's side of the interval records.
struct interval_state {
  std::int64_t next_ns = 0;           // the next record is due
  std::int64_t last_ns = 0;           // the last one (or the writer's start)
  std::uint64_t blocks = 0;           // blocks so far
  queen::writer_breakdown breakdown;  // at the last record
};

class cycle_test {
 public:
  cycle_test(const run_config& c, bool progress, spdlog::logger& log)
      : config_(c), log_(log), progress_(c, progress, progress && isatty(STDERR_FILENO) == 1) {}

  run_result run();

 private:
  bool build();
  void interrupted_in_genesis();
  void start_colony();
  void start();
  void wait_for_stop();
  stop_reason poll(poll_state& s, std::int64_t now);
  bool stalled(poll_state& s, std::int64_t now);
  void shutdown();
  // Main thread: records what the writer settled; ends the interval when it is due.
  void track_latency(std::int64_t now, bool last);
  // last: the run's end, which writes no record when no block came since the last one.
  void write_interval(std::int64_t now, bool last);
  std::int64_t interval_ns() const { return static_cast<std::int64_t>(config_.out.interval_s * 1e9); }
  void write_histograms();
  void collect();
  void write_dumps();
  void run_audit();

  // Writer thread.
  bool on_block(const queen::block_record& r, const core::chain& chain);
  void count_block(const queen::block_record& r, bool measured, std::int64_t now);
  void snapshot(window_edge& e, std::int64_t writer_ns);
  void log_block(const queen::block_record& r);

  void fail(std::string message, stop_reason why = stop_reason::error);

  const run_config& config_;
  spdlog::logger& log_;
  progress_line progress_;
  progress_counters counters_;
  run_result result_;
  std::int64_t run_start_ns_ = 0;

  // Declared in the order they are built, so they are destroyed in the reverse: the writer
  // (which joins its thread) before the colony its completions point into, the colony
  // before the tap and the queue its producers submit to, the chain, and the latency
  // tracker whose outbox the writer publishes to last.
  latency_tracker latency_;
  std::unique_ptr<interval_outputs> intervals_;
  std::unique_ptr<core::chain> chain_;
  std::unique_ptr<queen::writer_queue> queue_;
  std::unique_ptr<transaction_tap> tap_;
  std::unique_ptr<colony::colony> colony_;
  std::unique_ptr<queen::writer> writer_;

  // Writer thread.
  std::uint32_t seen_blocks_ = 0;
  std::uint64_t measured_transactions_ = 0;
  queen::writer_breakdown last_breakdown_;  // at the last breakdown line
  std::atomic<stop_reason> writer_stop_{stop_reason::none};

  // The blocks of the current interval and the writer's time split at the last block: added
  // by the block callback, taken by the main thread at each interval record.
  core::mutex interval_mutex_;
  interval_blocks interval_blocks_ APIARY_GUARDED_BY(interval_mutex_);
  queen::writer_breakdown interval_breakdown_ APIARY_GUARDED_BY(interval_mutex_);
  interval_state interval_;  // main thread
  core::state_census interval_state_ APIARY_GUARDED_BY(interval_mutex_);
  core::rc_status interval_rc_ APIARY_GUARDED_BY(interval_mutex_);
  double interval_low_share_ APIARY_GUARDED_BY(interval_mutex_) = -1;
  std::atomic<bool> sample_low_mana_{true};  // main thread asks, the block callback samples
  std::atomic<std::uint64_t> blocks_applied_{0};
  // --checkpoint-blocks: the block count from which the block callback wakes the main thread,
  // once (it swaps in checkpoint_signalled; the main thread re-arms it with the next multiple
  // after the record), so a checkpoint record is written right after its block and not up to
  // a polling period later. checkpoint_signalled also when there are no checkpoints.
  static constexpr std::uint64_t checkpoint_signalled = std::numeric_limits<std::uint64_t>::max();
  std::atomic<std::uint64_t> next_checkpoint_{checkpoint_signalled};
  core::mutex wake_mutex_;
  core::condition_variable wake_;
  bool checkpoint_due_ APIARY_GUARDED_BY(wake_mutex_) = false;
};

void cycle_test::fail(std::string message, stop_reason why) {
  if (result_.status == run_status::failed) return;  // the first error is the one to report
  result_.status = run_status::failed;
  result_.stopped_by = why;
  result_.error = std::move(message);
}

// ---- build and start ----

bool cycle_test::build() {
  const std::int64_t t0 = core::steady_now_ns();
  // Genesis: an EC key derivation per account and role, a few seconds for 100,000; a signal
  // stops it within milliseconds.
  progress_.phase("genesis: " + grouped(config_.chain.genesis_accounts) + " accounts");
  try {
    chain_ = std::make_unique<core::chain>(sized_chain(config_), [] { return interrupt_signal() != 0; });
  } catch (const core::genesis_cancelled&) {
    result_.genesis_ns = core::steady_now_ns() - t0;
    return false;
  }
  result_.genesis_ns = core::steady_now_ns() - t0;
  log_.info("genesis: {} accounts in {:.3f} s", config_.chain.genesis_accounts,
            static_cast<double>(result_.genesis_ns) / 1e9);

  const queue_settings& q = config_.queue;
  // A sync producer waits for each outcome, so nothing more comes while the writer gathers.
  const double gather_s = config_.colony.submit == colony::submit_mode::sync ? 0 : q.gather_s;
  queue_ = std::make_unique<queen::writer_queue>(q.policy, q.policy == queen::queue_policy::bounded ? q.capacity : 0,
                                                 static_cast<std::int64_t>(gather_s * 1e9));
  // The tap sits between the colony and the queue only when a dump or the audit needs it.
  const outputs& o = config_.out;
  if (!o.dump_transactions.empty() || !o.dump_blocks.empty() || config_.audit)
    tap_ = std::make_unique<transaction_tap>(*queue_, *chain_, o.dump_transactions.empty() ? 0 : o.dump_limit,
                                             o.dump_blocks.empty() ? 0 : o.dump_block_limit, config_.audit);
  core::transaction_sink& sink = tap_ ? static_cast<core::transaction_sink&>(*tap_) : *queue_;
  colony_ = std::make_unique<colony::colony>(config_.colony, sink, head_of(*chain_));

  queen::writer_config wc = config_.writer;
  // Per-block budget mode: a block ends when the budget is pending (or the size target is
  // reached first); otherwise the colony, waiting for the next block to refill its budget,
  // and the writer, waiting for a full block, would wait for each other.
  if (config_.colony.rate == colony::rate_mode::block_budget && wc.block_transactions == 0)
    wc.block_transactions = colony_->block_budget();
  result_.block_transactions = wc.block_transactions;
  result_.colony_block_budget = colony_->block_budget();
  writer_ = std::make_unique<queen::writer>(
      *chain_, *queue_, wc, [this](const queen::block_record& r, const core::chain& c) { return on_block(r, c); });
  writer_->record_timings(latency_.outbox());
  next_checkpoint_.store(o.checkpoint_blocks != 0 ? o.checkpoint_blocks : checkpoint_signalled,
                         std::memory_order_relaxed);
  if (config_.stop.blocks != 0)
    writer_->reserve_blocks(std::size_t{config_.stop.blocks} + config_.stop.warmup_blocks + 1);
  if (tap_ && !o.dump_transactions.empty())
    latency_.keep([this](std::span<const queen::tx_timing> records, std::vector<queen::tx_timing>& out) {
      tap_->select_sampled(records, out);
    });
  intervals_ = std::make_unique<interval_outputs>(o.interval_log, o.prometheus_textfile);
  return true;
}

// A signal during genesis: nothing else was built, nothing ran; the report says so.
void cycle_test::interrupted_in_genesis() {
  progress_.finish();
  const int sig = interrupt_signal();
  result_.status = run_status::interrupted;
  result_.signal = sig;
  result_.stopped_by = stop_reason_for(sig);
  // The colony never started: its threads, each with nothing produced.
  result_.colony_total.threads = config_.colony.threads;
  result_.colony_threads.resize(config_.colony.threads);
  result_.usage_end = read_usage();
  log_.info("stopping: {} during genesis", to_string(result_.stopped_by));
}

// The producers derive their keys before they start (seconds for 100,000 accounts): a signal
// meanwhile stops them, so start() returns at once.
void cycle_test::start_colony() {
  std::promise<void> started;
  std::thread watcher([this, done = started.get_future()] {
    while (done.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout)
      if (interrupt_signal() != 0) {
        colony_->request_stop();
        return;
      }
  });
  // The watcher ends when start() returns or throws.
  struct join_watcher {
    std::promise<void>& started;
    std::thread& watcher;
    ~join_watcher() {
      started.set_value();
      watcher.join();
    }
  } join{started, watcher};
  colony_->start();
}

void cycle_test::start() {
  // The producers warm their keys and start together; the writer starts right after, so
  // its clock (and the first block's) does not include the key warm-up.
  if (interrupt_signal() == 0) {
    const colony::colony_config& k = config_.colony;
    progress_.phase(k.sign && k.warm_keys ? "colony: deriving keys" : "colony: starting");
    const std::int64_t c0 = core::steady_now_ns();
    start_colony();
    result_.colony_start_ns = core::steady_now_ns() - c0;
  }
  run_start_ns_ = core::steady_now_ns();
  if (config_.stop.warmup_blocks == 0) {
    // No warm-up: the window opens with the writer (whose breakdown starts at zero).
    result_.window_start.usage = read_usage();
    result_.window_start.colony = colony_->stats();
    counters_.window_start_ns.store(run_start_ns_, std::memory_order_relaxed);
  }
  if (interrupt_signal() == 0) {
    writer_->start();
    log_.info("run '{}': {} producer threads, blocks of {} bytes", config_.name, config_.colony.threads,
              config_.writer.block_size);
  }
}

// ---- the block callback (writer thread) ----

void cycle_test::snapshot(window_edge& e, std::int64_t writer_ns) {
  e.writer_ns = writer_ns;
  e.usage = read_usage();
  e.breakdown = writer_->breakdown_now();
  e.colony = colony_->stats();
}

void cycle_test::count_block(const queen::block_record& r, bool measured, std::int64_t now) {
  const std::uint32_t warmup = config_.stop.warmup_blocks;
  if (!measured) {
    if (seen_blocks_ == warmup) {
      snapshot(result_.window_start, r.completed_ns);
      counters_.window_start_ns.store(now, std::memory_order_relaxed);
    }
    counters_.warmup_blocks.store(seen_blocks_, std::memory_order_relaxed);
  } else {
    measured_transactions_ += r.transactions;
    snapshot(result_.window_end, r.completed_ns);
    result_.measured_blocks = seen_blocks_ - warmup;
    counters_.measured_transactions.store(measured_transactions_, std::memory_order_relaxed);
    counters_.measured_blocks.store(result_.measured_blocks, std::memory_order_relaxed);
  }
  counters_.last_block_ns.store(now, std::memory_order_relaxed);
}

void cycle_test::log_block(const queen::block_record& r) {
  log_.debug(
      "block #{}: {} transactions, {} bytes, cycle {:.3f} ms, produced {:.3f} ms, applied {:.3f} ms, "
      "{} pending after",
      r.num, r.transactions, r.size_bytes, r.cycle_ns < 0 ? 0.0 : static_cast<double>(r.cycle_ns) / 1e6,
      static_cast<double>(r.produced_ns) / 1e6, static_cast<double>(r.applied_ns) / 1e6, r.pending_after);
  if (r.completed_ns - last_breakdown_.total_ns >= breakdown_interval_ns) {
    const queen::writer_breakdown now = writer_->breakdown_now();
    log_breakdown(log_, now - last_breakdown_);
    last_breakdown_ = now;
  }
}

bool cycle_test::on_block(const queen::block_record& r, const core::chain& chain) {
  // Account for the block first, so every record the writer keeps is in the figures even
  // when something below throws (the run then fails with a consistent report).
  ++seen_blocks_;
  const bool measured = seen_blocks_ > config_.stop.warmup_blocks;
  count_block(r, measured, core::steady_now_ns());
  log_block(r);
  const std::uint64_t applied = blocks_applied_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Once per checkpoint: the main thread re-arms it after the record.
  std::uint64_t due = next_checkpoint_.load(std::memory_order_relaxed);
  if (applied >= due &&
      next_checkpoint_.compare_exchange_strong(due, checkpoint_signalled, std::memory_order_relaxed)) {
    core::lock_guard lock(wake_mutex_);
    checkpoint_due_ = true;
    wake_.notify_one();
  }
  if (intervals_->enabled()) {
    // Counts and pools are a few loads; the mana walk is sampled, once per interval.
    const double low = sample_low_mana_.exchange(false, std::memory_order_relaxed)
                           ? chain.rc_share_below(low_mana_percent, low_mana_samples)
                           : -1;
    core::lock_guard lock(interval_mutex_);
    interval_blocks_.add(r);
    interval_breakdown_ = writer_->breakdown_now();
    interval_state_ = chain.census();
    interval_rc_ = chain.rc();
    if (low >= 0) interval_low_share_ = low;
  }

  colony_->on_block(head_of(chain), {.transactions = r.transactions, .pending_after = r.pending_after});
  if (tap_) tap_->on_block(r, chain, measured);
  if (config_.fail_at_block != 0 && r.num == config_.fail_at_block)
    throw std::runtime_error("injected failure at block " + std::to_string(r.num) + " (--fail-at-block)");

  if (!measured) return true;
  const stop_conditions& stop = config_.stop;
  if (stop.blocks != 0 && result_.measured_blocks >= stop.blocks) {
    writer_stop_.store(stop_reason::blocks);
    return false;
  }
  if (stop.transactions != 0 && measured_transactions_ >= stop.transactions) {
    writer_stop_.store(stop_reason::transactions);
    return false;
  }
  return true;
}

// ---- wait for a stop condition (main thread) ----

bool cycle_test::stalled(poll_state& s, std::int64_t now) {
  // Progress: a block, or an accepted transaction.
  const std::int64_t block_ns = counters_.last_block_ns.load(std::memory_order_relaxed);
  const std::uint64_t accepted = colony_->stats().accepted();
  if (block_ns != s.last_block_seen || accepted != s.last_accepted) {
    s.last_block_seen = block_ns;
    s.last_accepted = accepted;
    s.last_progress_ns = now;
    s.stall_warned = false;
    return false;
  }
  const std::int64_t quiet = now - s.last_progress_ns;
  if (!s.stall_warned && quiet >= stall_warning_ns) {
    s.stall_warned = true;
    log_.warn("no block and no accepted transaction for {:.0f} s (the run fails after --stall-timeout {} s)",
              static_cast<double>(quiet) / 1e9, config_.stop.stall_timeout_s);
  }
  const double timeout_s = config_.stop.stall_timeout_s;
  if (timeout_s <= 0 || static_cast<double>(quiet) < timeout_s * 1e9) return false;
  const colony::colony_stats st = colony_->stats();
  std::string why = fmt::format(
      "no block and no accepted transaction for {} s (--stall-timeout); {} accepted, {} "
      "rejected so far",
      timeout_s, st.accepted(), st.rejected());
  if (st.rejected() != 0) {
    std::size_t most = 1;
    for (std::size_t i = 1; i < core::reject_count; ++i)
      if (st.outcomes.by_reason[i] > st.outcomes.by_reason[most]) most = i;
    why += ", most as " + std::string(core::reject_name(static_cast<core::reject>(most)));
  }
  fail(why, stop_reason::stall);
  return true;
}

stop_reason cycle_test::poll(poll_state& s, std::int64_t now) {
  if (const int sig = interrupt_signal(); sig != 0) {
    result_.status = run_status::interrupted;
    result_.signal = sig;
    return stop_reason_for(sig);
  }
  if (const stop_reason why = writer_stop_.load(); why != stop_reason::none) return why;
  if (queue_->closed()) {
    // The writer closes the queue when its loop ends: after the callback asked it to stop
    // (then writer_stop_ is set by now), or because it failed.
    if (const stop_reason why = writer_stop_.load(); why != stop_reason::none) return why;
    fail("the writer stopped unexpectedly");  // replaced by its error after join
    return stop_reason::error;
  }
  if (auto e = colony_->error()) {
    fail("a producer thread failed: " + *e);
    return stop_reason::error;
  }
  if (colony_->finished()) {
    fail("every producer thread stopped unexpectedly");
    return stop_reason::error;
  }
  const std::int64_t window_start = counters_.window_start_ns.load(std::memory_order_relaxed);
  if (!s.machine_sampled && window_start >= 0) {
    result_.machine_start = {read_machine_usage(), read_usage()};
    s.machine_sampled = true;
  }
  const double duration_s = config_.stop.duration_s;
  if (duration_s > 0 && window_start >= 0 && static_cast<double>(now - window_start) >= duration_s * 1e9)
    return stop_reason::duration;
  if (stalled(s, now)) return stop_reason::stall;
  return stop_reason::none;
}

void cycle_test::wait_for_stop() {
  poll_state s;
  s.last_progress_ns = run_start_ns_;
  interval_ = {};
  interval_.next_ns = run_start_ns_ + interval_ns();
  interval_.last_ns = run_start_ns_;
  stop_reason why = stop_reason::none;
  while ((why = poll(s, core::steady_now_ns())) == stop_reason::none) {
    const std::int64_t now = core::steady_now_ns();
    progress_.update(counters_, now);
    track_latency(now, false);
    if (result_.status == run_status::failed) {
      why = stop_reason::error;
      break;
    }
    // Every 50 ms, or at once when the block callback says a checkpoint is due.
    core::unique_lock lock(wake_mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(50),
                   [this]() APIARY_REQUIRES(wake_mutex_) { return checkpoint_due_; });
    checkpoint_due_ = false;
  }
  if (result_.stopped_by == stop_reason::none) result_.stopped_by = why;
  progress_.finish();
  if (s.machine_sampled) result_.machine_end = {read_machine_usage(), read_usage()};
  log_.info("stopping: {}", to_string(result_.stopped_by));
}

// ---- latency and interval records (main thread) ----

void cycle_test::track_latency(std::int64_t now, bool last) {
  latency_.drain();
  const std::uint32_t every = config_.out.checkpoint_blocks;
  const bool checkpoint = every != 0 && next_checkpoint_.load(std::memory_order_relaxed) == checkpoint_signalled;
  if (!last && !checkpoint && now < interval_.next_ns) return;
  if (intervals_->enabled()) {
    try {
      write_interval(now, last);
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  latency_.roll();
  // The next multiple of `every`: a record that came late does not push the later ones back.
  if (every != 0) next_checkpoint_.store((interval_.blocks / every + 1) * every, std::memory_order_relaxed);
  interval_.last_ns = now;
  interval_.next_ns = now + interval_ns();
}

void cycle_test::write_interval(std::int64_t now, bool last) {
  interval_record r;
  {
    core::lock_guard lock(interval_mutex_);
    // The run's end right after a checkpoint's record: no block since, nothing to add. (A
    // block's latency records can come after it, with the writer's batch that held its
    // last pushes: those are still to add.)
    if (last && interval_blocks_.blocks == 0 && interval_.blocks != 0 && latency_.interval().empty()) return;
    r.blocks = std::exchange(interval_blocks_, {});
    r.writer = interval_breakdown_ - interval_.breakdown;
    interval_.breakdown = interval_breakdown_;
    r.state = interval_state_;
    r.rc = interval_rc_;
    r.rc_low_share = interval_low_share_;
  }
  sample_low_mana_.store(true, std::memory_order_relaxed);
  interval_.blocks += r.blocks.blocks;
  r.t_s = static_cast<double>(now - run_start_ns_) / 1e9;
  r.interval_s = static_cast<double>(now - interval_.last_ns) / 1e9;
  r.blocks_total = interval_.blocks;
  r.transactions_total = latency_.included();
  r.queue_wait = latency_.interval().stage(latency_stage::queue_wait).summary();
  r.inclusion = latency_.interval().stage(latency_stage::inclusion).summary();
  r.end_to_end = latency_.interval().stage(latency_stage::end_to_end).summary();
  r.queue_depth = queue_->size();
  r.in_flight = colony_->stats().in_flight;
  r.rss_bytes = current_rss_bytes();
  intervals_->write(r);
}

void cycle_test::write_histograms() {
  const std::string& dir = config_.out.hgrm_dir;
  if (dir.empty()) return;
  for (const auto& [name, stage] : latency_stage_names) {
    const std::string text = hgrm_text(result_.latency.stage(stage));
    output_file f(hgrm_path(dir, stage));
    f.write(text.data(), text.size());
    f.commit();
  }
}

// ---- shut down and collect ----

void cycle_test::shutdown() {
  const std::int64_t s0 = core::steady_now_ns();
  {
    shutdown_watchdog watchdog(std::chrono::seconds(60));
    writer_->request_stop();
    colony_->request_stop();
    queue_->close();
    writer_->join();
    try {
      colony_->join();
    } catch (const std::exception& e) {
      fail(std::string("a producer thread failed: ") + e.what());
    } catch (...) {
      fail("a producer thread failed with an unknown exception");
    }
  }
  const std::int64_t end = core::steady_now_ns();
  result_.shutdown_ns = end - s0;
  result_.run_ns = end - run_start_ns_;
  if (writer_->failed()) {
    // The writer's own error is the cause; replace what the main thread saw of it.
    const bool first = result_.status != run_status::failed || result_.error == "the writer stopped unexpectedly";
    if (first) {
      result_.status = run_status::failed;
      result_.error = "the writer failed: " + writer_->error_message();
      result_.stopped_by = stop_reason::error;
    }
  }
}

void cycle_test::write_dumps() {
  const outputs& o = config_.out;
  try {
    if (!o.dump_transactions.empty())
      result_.dumped_transactions = write_transaction_dump(
          o.dump_transactions, tap_->samples(),
          {[this](const core::transaction_id& id, bool accepted) { return latency_.kept(id, accepted); },
           run_start_ns_});
    if (!o.dump_blocks.empty()) result_.dumped_blocks = write_block_dump(o.dump_blocks, tap_->blocks(), *chain_);
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void cycle_test::run_audit() {
  result_.audit = audit_run(config_, *chain_, result_.blocks, tap_->accepted_ids(), result_.colony_total);
  if (result_.audit.passed()) return;
  std::string why = "audit: " + result_.audit.violations.front();
  if (result_.audit.violations.size() > 1)
    why += " (and " + std::to_string(result_.audit.violations.size() - 1) + " more)";
  fail(why);
}

void cycle_test::collect() {
  // Every thread is joined.
  result_.blocks = writer_->take_blocks();
  result_.warmup_blocks =
      std::min<std::uint32_t>(config_.stop.warmup_blocks, static_cast<std::uint32_t>(result_.blocks.size()));
  result_.writer_total = writer_->breakdown();
  result_.colony_total = colony_->stats();
  result_.colony_threads = colony_->thread_stats();
  result_.pending_at_end = chain_->pending_count();
  result_.rc = chain_->rc();
  result_.rc_low_share = chain_->rc_share_below(low_mana_percent);
  result_.state = chain_->census();
  result_.queue_high_water = queue_->high_water();
  result_.queue_full_waits = queue_->full_waits();
  if (result_.measured_blocks == 0) result_.window_end = result_.window_start;
  track_latency(core::steady_now_ns(), true);  // what settled last, and the last interval
  result_.latency = latency_.total();
  try {
    write_histograms();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (tap_) write_dumps();
  if (config_.audit) run_audit();
  result_.usage_end = read_usage();
}

run_result cycle_test::run() {
  interrupt_guard signals;
  if (!build()) {
    interrupted_in_genesis();
    return std::move(result_);
  }
  start();
  wait_for_stop();
  shutdown();
  collect();
  return std::move(result_);
}

}  // namespace

run_result run_cycle_test(const run_config& c, bool progress, spdlog::logger& log) {
  run_result failed;
  try {
    cycle_test test(c, progress, log);
    return test.run();
  } catch (const std::exception& e) {
    failed.error = e.what();
  } catch (...) {
    failed.error = "unknown exception";
  }
  failed.status = run_status::failed;
  failed.stopped_by = stop_reason::error;
  failed.usage_end = read_usage();
  return failed;
}

}  // namespace apiary::harness
