#include "cycle/run.hpp"

#include <unistd.h>

#include <csignal>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "apiary/colony/colony.hpp"
#include "apiary/core/base/clock.hpp"
#include "apiary/core/base/mutex.hpp"
#include "apiary/core/chain/chain.hpp"
#include "apiary/harness/cycle/audit.hpp"
#include "apiary/harness/cycle/block_log_out.hpp"
#include "apiary/harness/cycle/dump.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/cycle/latency.hpp"
#include "apiary/harness/cycle/settled.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"
#include "cycle/interval_log.hpp"
#include "cycle/observers.hpp"
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

// A warning once nothing has happened for this long (the run fails at --stall-timeout).
constexpr std::int64_t stall_warning_ns = 10'000'000'000;

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
  std::uint64_t last_accepted = 0;  // on the chain's clock: answered, accepted or rejected
  std::int64_t last_block_seen = -1;
};

// The main thread's side of the interval records.
struct interval_state {
  std::int64_t next_ns = 0;           // the next timed record is due
  std::int64_t last_ns = 0;           // the last record (or the writer's start)
  std::uint64_t blocks = 0;           // blocks so far
  queen::writer_breakdown breakdown;  // at the last record
};

// The block observers of a run, in the order the writer calls them (observers.hpp).
struct run_observers {
  std::unique_ptr<window_counter> window;
  std::unique_ptr<interval_sampler> intervals;  // only with an interval output
  std::unique_ptr<block_log> log;
  std::unique_ptr<colony_feed> colony;
  std::unique_ptr<stop_limits> stop;
  std::unique_ptr<counter_sampler> counters;  // only with --counters on; after stop, whose reason it reads
};

// --counters: the groups (thread_counters.hpp), one slot per thread: the writer, the
// producers, the main thread. The main thread opens them in start() and reads its own edges;
// the counter sampler reads the window's edges on the writer thread.
struct run_counters {
  std::unique_ptr<thread_counters> set;
  counter_edge start;     // without warm-up, the window opens with the writer: read then
  counter_edge end;       // when the main thread stopped the run itself
  counter_edge interval;  // at the last interval record
  std::size_t main_slot() const { return set->size() - 1; }
};

// The readers of the settled stream besides the latency histograms (settled.hpp), each only
// when its output is asked for.
struct run_readers {
  std::optional<transaction_sample> transactions;  // --dump-transactions
  std::optional<block_capture> blocks;             // --dump-blocks
  std::optional<acceptance_log> acceptances;       // --audit
  std::unique_ptr<block_log_out> block_log;        // --block-log
};

class cycle_test {
 public:
  cycle_test(const run_config& c, bool progress, spdlog::logger& log, profiler* profile,
             std::unique_ptr<core::chain> loaded)
      : config_(c),
        log_(log),
        profile_(profile),
        progress_(c, progress, progress && isatty(STDERR_FILENO) == 1),
        chain_(std::move(loaded)) {}

  run_result run();

 private:
  bool build();
  void build_writer();
  void interrupted_in_genesis();
  void start_colony();
  void start();
  void open_counters();
  void open_writer_counters();
  int writer_tid() const;
  void take_counter_end(stop_reason why);
  counter_results counter_window() const;
  void wait_for_stop();
  stop_reason poll(poll_state& s, std::int64_t now);
  bool stalled(poll_state& s, std::int64_t now);
  void shutdown();
  // Main thread: passes on what the writer settled; writes the interval records the sampler
  // closed, and closes the open one when its time is due. last: the run's end.
  void track(std::int64_t now, bool last);
  void write_interval(const interval_sample& s, std::int64_t now, bool last);
  std::int64_t interval_ns() const { return static_cast<std::int64_t>(config_.out.interval_s * 1e9); }
  void write_histograms();
  void collect();
  void write_dumps();
  void run_audit();

  void fail(std::string message, stop_reason why = stop_reason::error);

  const run_config& config_;
  spdlog::logger& log_;
  profiler* const profile_;  // --profile; else null
  progress_line progress_;
  progress_counters counters_;
  run_result result_;
  std::int64_t run_start_ns_ = 0;
  interval_state interval_;  // main thread

  // Declared in the order they are built, so they are destroyed in the reverse: the writer
  // (which joins its thread) before the observers it calls and the colony its completions
  // point into, the colony before the queue its producers submit to, the chain, and the
  // settled stream (and its readers) the writer hands over to.
  latency_tracker latency_;
  run_readers readers_;
  settled_stream settled_;
  std::unique_ptr<interval_outputs> intervals_;
  run_counters perf_;  // the counter sampler reads its groups
  std::unique_ptr<core::chain> chain_;
  std::unique_ptr<queen::writer_queue> queue_;
  std::unique_ptr<colony::colony> colony_;
  run_observers observers_;
  std::unique_ptr<queen::writer> writer_;
};

void cycle_test::fail(std::string message, stop_reason why) {
  if (result_.status == run_status::failed) return;  // the first error is the one to report
  result_.status = run_status::failed;
  result_.stopped_by = why;
  result_.error = std::move(message);
}

// ---- build and start ----

bool cycle_test::build() {
  if (chain_) {
    log_.info("state: loaded at head block {} ({} accounts)", chain_->head_block_num(), config_.chain.genesis_accounts);
  } else {
    const std::int64_t t0 = core::steady_now_ns();
    // Genesis: an EC key derivation per account and role not in the key cache
    // (genesis_key_cache.hpp), a few seconds for 100,000; a signal stops it within milliseconds.
    progress_.phase("genesis: " + grouped(config_.chain.genesis_accounts) + " accounts");
    std::string keys;
    try {
      chain_ = make_genesis_chain(
          sized_chain(config_), [] { return interrupt_signal() != 0; }, &keys);
    } catch (const core::genesis_cancelled&) {
      result_.genesis_ns = core::steady_now_ns() - t0;
      return false;
    }
    result_.genesis_ns = core::steady_now_ns() - t0;
    log_.info("genesis: {} accounts in {:.3f} s; {}", config_.chain.genesis_accounts,
              static_cast<double>(result_.genesis_ns) / 1e9, keys);
  }

  const queue_settings& q = config_.queue;
  // A sync producer waits for each outcome, so nothing more comes while the writer gathers.
  const double gather_s = config_.colony.submit == colony::submit_mode::sync ? 0 : q.gather_s;
  queue_ = std::make_unique<queen::writer_queue>(q.policy, q.policy == queen::queue_policy::bounded ? q.capacity : 0,
                                                 static_cast<std::int64_t>(gather_s * 1e9));
  colony_ = std::make_unique<colony::colony>(config_.colony, *queue_, head_of(*chain_));
  build_writer();
  return true;
}

// The writer, what it hands over and to whom: the settled stream's readers (main thread) and
// the block observers (writer thread).
void cycle_test::build_writer() {
  queen::writer_config wc = config_.writer;
  // Per-block budget mode: a block ends when the budget is pending (or the size target is
  // reached first); otherwise the colony, waiting for the next block to refill its budget,
  // and the writer, waiting for a full block, would wait for each other.
  // (On the chain's clock the writer cuts each slot's block by the count it shares with the
  // colony instead.)
  if (config_.colony.rate == colony::rate_mode::block_budget && !wc.clock && wc.block_transactions == 0)
    wc.block_transactions = colony_->block_budget();
  result_.block_transactions = wc.block_transactions;
  result_.colony_block_budget = colony_->block_budget();
  writer_ = std::make_unique<queen::writer>(*chain_, *queue_, wc);
  if (config_.stop.blocks != 0)
    writer_->reserve_blocks(std::size_t{config_.stop.blocks} + config_.stop.warmup_blocks + 1);

  const outputs& o = config_.out;
  writer_->record_timings(settled_.outbox());
  settled_.add(latency_);
  if (!o.dump_transactions.empty()) settled_.add(readers_.transactions.emplace(o.dump_limit));
  if (!o.dump_blocks.empty())
    settled_.add(
        readers_.blocks.emplace(chain_->head_block_num() + config_.stop.warmup_blocks + 1, o.dump_block_limit));
  if (!o.block_log.empty()) {
    readers_.block_log = std::make_unique<block_log_out>(o.block_log, *chain_);
    settled_.add(*readers_.block_log);
  }
  if (config_.audit) {
    settled_.add(readers_.acceptances.emplace());
    readers_.acceptances->inherit(*chain_);
  }

  intervals_ = std::make_unique<interval_outputs>(o.interval_log, o.prometheus_textfile);
  run_observers& b = observers_;
  b.window = std::make_unique<window_counter>(config_.stop, *writer_, *colony_, counters_, result_.window_start,
                                              result_.window_end, profile_);
  if (intervals_->enabled()) b.intervals = std::make_unique<interval_sampler>(*writer_, o.checkpoint_blocks);
  b.log = std::make_unique<block_log>(log_, *writer_);
  b.colony = std::make_unique<colony_feed>(*colony_);
  b.stop = std::make_unique<stop_limits>(config_);
  if (config_.counters) {
    std::vector<std::string> names{"writer"};
    for (std::uint32_t t = 0; t < config_.colony.threads; ++t) names.push_back("producer-" + std::to_string(t));
    names.emplace_back("main");
    perf_.set = std::make_unique<thread_counters>(std::move(names));
    b.counters = std::make_unique<counter_sampler>(config_.stop.warmup_blocks, *perf_.set, 0, *b.stop);
  }
  for (queen::block_observer* each : std::initializer_list<queen::block_observer*>{
           b.window.get(), b.intervals.get(), b.log.get(), b.colony.get(), b.stop.get(), b.counters.get()})
    if (each != nullptr) writer_->observe(*each);
}

// --counters on a run whose threads never ran to be counted: the section says why.
counter_results counters_not_run(const run_config& c, const std::string& why) {
  counter_results out;
  out.enabled = c.counters;
  if (!c.counters) return out;
  out.unavailable = why;
  for (event_availability& e : out.events) e = {false, why};
  return out;
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
  result_.counters = counters_not_run(config_, "the run stopped during genesis, before its threads started");
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
    if (config_.pin) {
      // Off the writer's CPU from here on: the main thread, and what it starts after.
      result_.pinning = plan_pinning(allowed_cpus(), k.threads);
      confine_calling_thread(result_.pinning);
    }
    start_colony();
    result_.colony_start_ns = core::steady_now_ns() - c0;
  }
  run_start_ns_ = core::steady_now_ns();
  if (config_.colony.rate == colony::rate_mode::tps) {
    result_.schedule.rate = config_.colony.tps_limit;
    result_.schedule.threads = config_.colony.threads;
    sample_schedule(result_.schedule, 0, colony_->stats());
  }
  if (config_.stop.warmup_blocks == 0) {
    // No warm-up: the window opens with the writer (whose breakdown starts at zero).
    result_.window_start.usage = read_usage();
    result_.window_start.colony = colony_->stats();
    counters_.window_start_ns.store(run_start_ns_, std::memory_order_relaxed);
    if (profile_ != nullptr && interrupt_signal() == 0) profile_->open_window();
  }
  open_counters();
  if (interrupt_signal() == 0) {
    writer_->start();
    // Every thread of the run is started and named (the producers name themselves before
    // the colony's start returns, the writer is named by its start): the profile's names.
    if (profile_ != nullptr) profile_->name_threads();
    log_.info("run '{}': {} producer threads, blocks of {} bytes", config_.name, config_.colony.threads,
              config_.writer.block_size);
  }
  open_writer_counters();
  if (config_.pin && interrupt_signal() == 0) pin_run_threads(result_.pinning, colony_->thread_ids(), writer_tid());
}

// The writer's kernel thread id, which it publishes as it starts serving, microseconds after
// its start(); 0 when a signal came first or it took over a second.
int cycle_test::writer_tid() const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (writer_->thread_id() == 0 && interrupt_signal() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  return writer_->thread_id();
}

// ---- the per-thread counters (main thread) ----

// The main thread's and the producers' groups, before the writer starts: the writer's first
// block waits for the groups, so open as few as possible after it has started.
void cycle_test::open_counters() {
  if (!perf_.set) return;
  thread_counters& set = *perf_.set;
  set.open(perf_.main_slot(), static_cast<int>(::gettid()));
  const std::vector<int> producers = colony_->thread_ids();
  for (std::size_t t = 0; t < producers.size(); ++t) set.open(1 + t, producers[t]);
}

void cycle_test::open_writer_counters() {
  if (!perf_.set) return;
  thread_counters& set = *perf_.set;
  if (const int tid = writer_tid(); tid != 0) set.open(0, tid);
  perf_.interval = set.make_edge();
  // Without warm-up the window opens now: its edge before the writer's first reading.
  if (config_.stop.warmup_blocks != 0) set.mark_ready();
  set.read_edge(perf_.interval);
  if (config_.stop.warmup_blocks == 0) {
    perf_.start = perf_.interval;
    set.mark_ready();
  }
}

// When a block or transaction limit ends the run, the writer takes every thread's end edge at
// that block (the counter sampler): wait for it before the producers stop. Otherwise the
// main thread takes it now, before it stops anything.
void cycle_test::take_counter_end(stop_reason why) {
  if (!perf_.set) return;
  const bool by_writer = why == stop_reason::blocks || why == stop_reason::transactions;
  if (by_writer && observers_.counters->wait_end(std::chrono::seconds(1))) return;
  perf_.end = perf_.set->make_edge();
  perf_.set->read_edge(perf_.end);
}

// After join: each thread's counts over the measured window; an event not every thread
// counts is null for all.
counter_results cycle_test::counter_window() const {
  counter_results out;
  out.enabled = config_.counters;
  if (!perf_.set) return out;
  const thread_counters& set = *perf_.set;
  for (std::size_t e = 0; e < counter_event_count; ++e) out.events[e] = set.availability(e);
  const counter_sampler& sampler = *observers_.counters;
  const counter_edge& start = config_.stop.warmup_blocks == 0 ? perf_.start : sampler.start();
  const counter_edge& end = sampler.end().taken ? sampler.end() : perf_.end;
  if (!set.unavailable().empty())
    out.unavailable = set.unavailable();
  else if (sampler.missed())
    out.unavailable = "the counters were not open when the first block completed";
  else if (result_.measured_blocks == 0 || !start.taken || !end.taken)
    out.unavailable = "no measured window";
  if (!out.unavailable.empty()) return out;
  for (std::size_t i = 0; i < set.size(); ++i) {
    // The writer's own reading at its last measured block; the end edge's when the writer
    // failed inside that block's observers, before the sampler's turn.
    const bool writer = i == 0 && sampler.writer_end().nr != 0;
    const group_reading& last = writer ? sampler.writer_end() : end.groups[i];
    counted_thread t{set.name(i), set.tid(i), set.counts(i, start.groups[i], last, start.switches[i], end.switches[i])};
    for (std::size_t e = 0; e < counter_event_count; ++e)
      if (!out.events[e].available) t.window.events[e].reset();
    out.threads.push_back(std::move(t));
  }
  return out;
}

// ---- wait for a stop condition (main thread) ----

bool cycle_test::stalled(poll_state& s, std::int64_t now) {
  // Progress: a block, or an accepted transaction.
  const std::int64_t block_ns = counters_.last_block_ns.load(std::memory_order_relaxed);
  // On the chain's clock a rejection is progress too: the slot's block comes once every one of
  // its transactions is answered, whatever the outcomes (a slot may take long to answer).
  const colony::colony_stats now_stats = colony_->stats();
  const bool by_clock = config_.writer.clock.has_value();
  const std::uint64_t accepted = now_stats.accepted() + (by_clock ? now_stats.rejected() : 0);
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
    log_.warn("no block and no {} transaction for {:.0f} s (the run fails after --stall-timeout {} s)",
              by_clock ? "answered" : "accepted", static_cast<double>(quiet) / 1e9, config_.stop.stall_timeout_s);
  }
  const double timeout_s = config_.stop.stall_timeout_s;
  if (timeout_s <= 0 || static_cast<double>(quiet) < timeout_s * 1e9) return false;
  const colony::colony_stats& st = now_stats;
  std::string why =
      fmt::format("no block and no {} transaction for {} s (--stall-timeout); {} accepted, {} rejected so far",
                  by_clock ? "answered" : "accepted", timeout_s, st.accepted(), st.rejected());
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
  if (const stop_reason why = observers_.stop->reason(); why != stop_reason::none) return why;
  if (queue_->closed()) {
    // The writer closes the queue when its loop ends: after a stop condition (then the stop
    // observer's reason is set by now), or because it failed.
    if (const stop_reason why = observers_.stop->reason(); why != stop_reason::none) return why;
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
    sample_schedule(result_.schedule, now - run_start_ns_, colony_->stats());
    track(now, false);
    if (result_.status == run_status::failed) {
      why = stop_reason::error;
      break;
    }
    // Every 50 ms, or at once when the sampler closes an interval at a checkpoint.
    constexpr std::chrono::milliseconds look_every(50);
    if (observers_.intervals)
      observers_.intervals->wait(look_every);
    else
      std::this_thread::sleep_for(look_every);
  }
  if (result_.stopped_by == stop_reason::none) result_.stopped_by = why;
  take_counter_end(why);
  // A stop the main thread makes (duration, a signal, a failure) ends the window here.
  if (profile_ != nullptr) profile_->close_window();
  progress_.finish();
  if (s.machine_sampled) result_.machine_end = {read_machine_usage(), read_usage()};
  if (!result_.schedule.samples.empty())
    result_.schedule.samples.push_back(schedule_sample_of(core::steady_now_ns() - run_start_ns_, colony_->stats()));
  log_.info("stopping: {}", to_string(result_.stopped_by));
}

// ---- latency and interval records (main thread) ----

void cycle_test::track(std::int64_t now, bool last) {
  settled_.drain();
  const bool timed = last || now >= interval_.next_ns;
  if (observers_.intervals) {
    const std::vector<interval_sample> samples = observers_.intervals->take(timed);
    for (std::size_t i = 0; i < samples.size(); ++i) write_interval(samples[i], now, last && i + 1 == samples.size());
  } else if (timed) {
    latency_.roll();
  }
  if (timed) interval_.next_ns = now + interval_ns();
}

void cycle_test::write_interval(const interval_sample& s, std::int64_t now, bool last) {
  // The run's end right after a checkpoint's record: no block since, nothing to add. (A
  // block's latency records can come after it, with the writer's batch that held its last
  // pushes: those are still to add.)
  if (last && s.blocks.blocks == 0 && interval_.blocks != 0 && latency_.interval().empty()) return;
  // A checkpoint's record ends at its block, however late it is written.
  const std::int64_t end = s.checkpoint ? s.closed_ns : now;
  interval_record r;
  r.blocks = s.blocks;
  r.writer = s.breakdown - interval_.breakdown;
  interval_.breakdown = s.breakdown;
  r.state = s.state;
  r.rc = s.rc;
  r.rc_low_share = s.rc_low_share;
  r.rc_archives = s.rc_archives;
  interval_.blocks += r.blocks.blocks;
  r.t_s = static_cast<double>(end - run_start_ns_) / 1e9;
  r.interval_s = static_cast<double>(end - interval_.last_ns) / 1e9;
  r.blocks_total = interval_.blocks;
  r.transactions_total = latency_.included();
  r.queue_wait = latency_.interval().stage(latency_stage::queue_wait).summary();
  r.inclusion = latency_.interval().stage(latency_stage::inclusion).summary();
  r.end_to_end = latency_.interval().stage(latency_stage::end_to_end).summary();
  r.queue_depth = queue_->size();
  r.in_flight = colony_->stats().in_flight;
  r.rss_bytes = current_rss_bytes();
  if (perf_.set && perf_.interval.taken && perf_.set->unavailable().empty()) {
    // Each counted thread over the interval, from the main thread's reading at the last record.
    const thread_counters& set = *perf_.set;
    counter_edge now_edge = set.make_edge();
    set.read_edge(now_edge);
    for (std::size_t i = 0; i < set.size(); ++i)
      r.counters.push_back({set.name(i), set.counts(i, perf_.interval.groups[i], now_edge.groups[i],
                                                    perf_.interval.switches[i], now_edge.switches[i])});
    perf_.interval = std::move(now_edge);
  }
  try {
    intervals_->write(r);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  latency_.roll();
  interval_.last_ns = end;
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
    if (readers_.transactions)
      result_.dumped_transactions =
          write_transaction_dump(o.dump_transactions, readers_.transactions->records(), run_start_ns_);
    if (readers_.blocks) result_.dumped_blocks = write_block_dump(o.dump_blocks, readers_.blocks->blocks(), *chain_);
    if (readers_.block_log) result_.block_log_blocks = readers_.block_log->finish();
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void cycle_test::run_audit() {
  result_.audit = audit_run(config_, *chain_, result_.blocks, readers_.acceptances->accepted(), result_.colony_total,
                            readers_.acceptances->inherited());
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
  result_.observer_costs = writer_->observer_costs();
  result_.measured_blocks = observers_.window->measured_blocks();
  result_.colony_total = colony_->stats();
  result_.colony_threads = colony_->thread_stats();
  result_.pending_at_end = chain_->pending_count();
  result_.rc = chain_->rc();
  result_.rc_archives = chain_->rc_archives();
  result_.rc_low_share = chain_->rc_share_below(low_mana_percent);
  result_.state = chain_->census();
  result_.queue_high_water = queue_->high_water();
  result_.queue_full_waits = queue_->full_waits();
  if (result_.measured_blocks == 0) result_.window_end = result_.window_start;
  track(core::steady_now_ns(), true);  // what settled last, and the last interval
  result_.latency = latency_.total();
  try {
    write_histograms();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  write_dumps();
  if (config_.audit) run_audit();
  result_.counters = counter_window();
  result_.usage_end = read_usage();
}

run_result cycle_test::run() {
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

run_result run_cycle_test(const run_config& c, bool progress, spdlog::logger& log, profiler* profile,
                          std::unique_ptr<core::chain> loaded) {
  run_result failed;
  try {
    cycle_test test(c, progress, log, profile, std::move(loaded));
    return test.run();
  } catch (const std::exception& e) {
    failed.error = e.what();
  } catch (...) {
    failed.error = "unknown exception";
  }
  failed.status = run_status::failed;
  failed.stopped_by = stop_reason::error;
  failed.usage_end = read_usage();
  failed.counters = counters_not_run(c, "the run failed before its threads were counted");
  return failed;
}

}  // namespace apiary::harness
