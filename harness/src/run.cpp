#include "apiary/harness/run.hpp"

#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "apiary/colony/colony.hpp"
#include "apiary/core/chain.hpp"
#include "apiary/harness/audit.hpp"
#include "apiary/harness/dump.hpp"
#include "apiary/harness/progress.hpp"
#include "apiary/harness/signals.hpp"
#include "apiary/queen/writer.hpp"
#include "apiary/queen/writer_queue.hpp"

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
  if (!c.report.empty()) return c.report;
  return "results/" + ctx.start_compact + "-" + c.name + ".json";
}

namespace {

// Ends the process if the shutdown does not finish: joining a thread that never returns
// would otherwise hang `apiary` forever.
class shutdown_watchdog {
 public:
  explicit shutdown_watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            static const char msg[] = "apiary: the run did not shut down within a minute; exiting (no report)\n";
            const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
            (void)ignored;
            _exit(1);
          }
        }) {}
  ~shutdown_watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  shutdown_watchdog(const shutdown_watchdog&) = delete;
  shutdown_watchdog& operator=(const shutdown_watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

colony::head_info head_of(const core::chain& chain) {
  return {chain.head_block_num(), chain.head_block_id(), chain.head_block_time()};
}

// What the block callback leaves for the main thread.
enum class writer_stop : int { none, blocks, transactions };

class cycle_test {
 public:
  cycle_test(const run_config& c, const run_context& ctx, bool progress)
      : config_(c), ctx_(ctx), progress_(c, progress, progress && isatty(STDERR_FILENO) == 1) {}

  run_result run();

 private:
  bool on_block(const queen::block_record& r, const core::chain& chain);
  void snapshot(window_edge& e, std::int64_t writer_ns);
  void fail(std::string message);

  const run_config& config_;
  const run_context& ctx_;
  progress_line progress_;
  progress_counters counters_;
  run_result result_;

  // Set before the writer starts, used by the callback on the writer thread.
  colony::colony* colony_ = nullptr;
  queen::writer* writer_ = nullptr;
  transaction_tap* tap_ = nullptr;
  std::uint32_t seen_blocks_ = 0;         // writer thread
  std::uint64_t measured_transactions_ = 0;  // writer thread
  std::atomic<int> writer_stop_{static_cast<int>(writer_stop::none)};
};

void cycle_test::snapshot(window_edge& e, std::int64_t writer_ns) {
  e.writer_ns = writer_ns;
  e.usage = read_usage();
  e.breakdown = writer_->breakdown_now();
  e.colony = colony_->stats();
}

bool cycle_test::on_block(const queen::block_record& r, const core::chain& chain) {
  // Account for the block first, so every record the writer keeps is in the figures even
  // when something below throws (the run then fails with a consistent report).
  ++seen_blocks_;
  const bool measured = seen_blocks_ > config_.warmup_blocks;
  const std::int64_t now = steady_ns();
  if (!measured) {
    if (seen_blocks_ == config_.warmup_blocks) {
      snapshot(result_.window_start, r.completed_ns);
      counters_.window_start_ns.store(now, std::memory_order_relaxed);
    }
    counters_.warmup_blocks.store(seen_blocks_, std::memory_order_relaxed);
  } else {
    measured_transactions_ += r.transactions;
    snapshot(result_.window_end, r.completed_ns);
    result_.measured_blocks = seen_blocks_ - config_.warmup_blocks;
    counters_.measured_transactions.store(measured_transactions_, std::memory_order_relaxed);
    counters_.measured_blocks.store(result_.measured_blocks, std::memory_order_relaxed);
  }
  counters_.last_block_ns.store(now, std::memory_order_relaxed);

  colony_->on_block(head_of(chain), {.transactions = r.transactions, .pending_after = r.pending_after});
  if (tap_ != nullptr) tap_->on_block(r, chain, measured);
  if (config_.fail_at_block != 0 && r.num == config_.fail_at_block)
    throw std::runtime_error("injected failure at block " + std::to_string(r.num) + " (--fail-at-block)");

  if (!measured) return true;
  if (config_.blocks != 0 && result_.measured_blocks >= config_.blocks) {
    writer_stop_.store(static_cast<int>(writer_stop::blocks));
    return false;
  }
  if (config_.transactions != 0 && measured_transactions_ >= config_.transactions) {
    writer_stop_.store(static_cast<int>(writer_stop::transactions));
    return false;
  }
  return true;
}

void cycle_test::fail(std::string message) {
  if (result_.status == run_status::failed) return;  // the first error is the one to report
  result_.status = run_status::failed;
  result_.stop_reason = "error";
  result_.error = std::move(message);
}

run_result cycle_test::run() {
  interrupt_guard signals;
  const std::int64_t t0 = steady_ns();

  // Genesis: an EC key derivation per account and role, a few seconds for 100,000.
  progress_.phase("genesis: " + grouped(config_.accounts) + " accounts");
  const core::chain_options chain_options = make_chain_options(config_);
  core::chain chain(chain_options);
  result_.genesis_ns = steady_ns() - t0;

  queen::writer_queue queue(config_.queue, config_.queue == queen::queue_policy::bounded ? config_.queue_capacity : 0);
  std::optional<transaction_tap> tap;
  // The tap sits between the colony and the queue only when a dump or the audit needs it.
  const bool tapping = !config_.dump_transactions.empty() || !config_.dump_blocks.empty() || config_.audit;
  if (tapping) {
    tap.emplace(queue, chain, config_.dump_transactions.empty() ? 0 : config_.dump_limit,
                config_.dump_blocks.empty() ? 0 : config_.dump_block_limit, config_.audit);
    tap_ = &*tap;
  }
  core::transaction_sink& sink = tapping ? static_cast<core::transaction_sink&>(*tap) : queue;

  // Declared before the writer: completions point into the colony, so it must outlive the
  // writer thread (the writer's destructor joins it).
  colony::colony producers(make_colony_config(config_, chain_options), sink, head_of(chain));
  colony_ = &producers;
  queen::writer_config wc;
  wc.block_size = config_.block_size;
  wc.block_transactions = config_.block_transactions;
  // Per-block budget mode: a block ends when the budget is pending (or the size target is
  // reached first); otherwise the colony, waiting for the next block to refill its budget,
  // and the writer, waiting for a full block, would wait for each other.
  if (config_.rate == rate_kind::block && wc.block_transactions == 0) wc.block_transactions = producers.block_budget();
  result_.block_transactions = wc.block_transactions;
  queen::writer writer(chain, queue, wc,
                       [this](const queen::block_record& r, const core::chain& c) { return on_block(r, c); });
  writer_ = &writer;
  result_.colony_block_budget = producers.block_budget();

  // The producers warm their keys and start together; the writer starts right after, so
  // its clock (and the first block's) does not include the key warm-up.
  if (interrupt_signal() == 0) {
    progress_.phase(config_.sign && config_.warm_keys ? "colony: deriving keys" : "colony: starting");
    const std::int64_t c0 = steady_ns();
    producers.start();
    result_.colony_start_ns = steady_ns() - c0;
  }
  const std::int64_t run_start = steady_ns();
  if (config_.warmup_blocks == 0) {
    // No warm-up: the window opens with the writer (whose breakdown starts at zero).
    result_.window_start.usage = read_usage();
    result_.window_start.colony = producers.stats();
    counters_.window_start_ns.store(run_start, std::memory_order_relaxed);
  }
  if (interrupt_signal() == 0) writer.start();

  // ---- wait for a stop condition ----
  bool machine_sampled = false;
  std::int64_t last_progress_ns = run_start;
  std::uint64_t last_accepted = 0;
  std::int64_t last_block_seen = -1;
  while (true) {
    if (const int sig = interrupt_signal(); sig != 0) {
      result_.status = run_status::interrupted;
      result_.signal = sig;
      result_.stop_reason = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
      break;
    }
    if (const auto why = static_cast<writer_stop>(writer_stop_.load()); why != writer_stop::none) {
      result_.stop_reason = why == writer_stop::blocks ? "blocks" : "transactions";
      break;
    }
    if (queue.closed()) {
      // The writer closes the queue when its loop ends: after the callback asked it to stop
      // (then writer_stop_ is set by now), or because it failed.
      if (const auto why = static_cast<writer_stop>(writer_stop_.load()); why != writer_stop::none) {
        result_.stop_reason = why == writer_stop::blocks ? "blocks" : "transactions";
      } else {
        fail("the writer stopped unexpectedly");  // replaced by its error after join
      }
      break;
    }
    if (auto e = producers.error()) {
      fail("a producer thread failed: " + *e);
      break;
    }
    if (producers.finished()) {
      fail("every producer thread stopped unexpectedly");
      break;
    }
    const std::int64_t now = steady_ns();
    const std::int64_t window_start = counters_.window_start_ns.load(std::memory_order_relaxed);
    if (!machine_sampled && window_start >= 0) {
      result_.machine_start = {read_machine_usage(), read_usage()};
      machine_sampled = true;
    }
    if (config_.duration_s > 0 && window_start >= 0 &&
        static_cast<double>(now - window_start) >= config_.duration_s * 1e9) {
      result_.stop_reason = "duration";
      break;
    }
    if (config_.stall_timeout_s > 0) {
      // Progress: a block, or an accepted transaction.
      const std::int64_t block_ns = counters_.last_block_ns.load(std::memory_order_relaxed);
      const std::uint64_t accepted = producers.stats().accepted();
      if (block_ns != last_block_seen || accepted != last_accepted) {
        last_block_seen = block_ns;
        last_accepted = accepted;
        last_progress_ns = now;
      } else if (static_cast<double>(now - last_progress_ns) >= config_.stall_timeout_s * 1e9) {
        const colony::colony_stats s = producers.stats();
        char head[96];
        std::snprintf(head, sizeof head, "no block and no accepted transaction for %g s (--stall-timeout); ",
                      config_.stall_timeout_s);
        std::string why = head;
        why.append(std::to_string(s.accepted())).append(" accepted, ");
        why.append(std::to_string(s.rejected())).append(" rejected so far");
        if (s.rejected() != 0) {
          std::size_t most = 1;
          for (std::size_t i = 1; i < core::reject_count; ++i)
            if (s.outcomes.by_reason[i] > s.outcomes.by_reason[most]) most = i;
          why += ", most as " + std::string(core::reject_name(static_cast<core::reject>(most)));
        }
        fail(why);
        result_.stop_reason = "stall";
        break;
      }
    }
    progress_.update(counters_, now);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  progress_.finish();
  if (machine_sampled) result_.machine_end = {read_machine_usage(), read_usage()};

  // ---- shut down in order ----
  const std::int64_t s0 = steady_ns();
  {
    shutdown_watchdog watchdog(std::chrono::seconds(60));
    writer.request_stop();
    producers.request_stop();
    queue.close();
    writer.join();
    try {
      producers.join();
    } catch (const std::exception& e) {
      fail(std::string("a producer thread failed: ") + e.what());
    } catch (...) {
      fail("a producer thread failed with an unknown exception");
    }
  }
  const std::int64_t end = steady_ns();
  result_.shutdown_ns = end - s0;
  result_.run_ns = end - run_start;
  if (writer.failed()) {
    // The writer's own error is the cause; replace what the main thread saw of it.
    const bool first = result_.status != run_status::failed || result_.error == "the writer stopped unexpectedly";
    if (first) {
      result_.status = run_status::failed;
      result_.error = "the writer failed: " + writer.error_message();
      result_.stop_reason = "error";
    }
  }

  // ---- collect (every thread is joined) ----
  result_.blocks = writer.blocks();
  result_.warmup_blocks = std::min<std::uint32_t>(config_.warmup_blocks, static_cast<std::uint32_t>(result_.blocks.size()));
  result_.writer_total = writer.breakdown();
  result_.colony_total = producers.stats();
  result_.pending_at_end = chain.pending_count();
  result_.queue_high_water = queue.high_water();
  result_.queue_full_waits = queue.full_waits();
  if (result_.measured_blocks == 0) result_.window_end = result_.window_start;

  if (tap) {
    try {
      if (!config_.dump_transactions.empty())
        result_.dumped_transactions = write_transaction_dump(config_.dump_transactions, tap->samples(), chain.options().chain);
      if (!config_.dump_blocks.empty()) result_.dumped_blocks = write_block_dump(config_.dump_blocks, tap->blocks(), chain);
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
  if (config_.audit) {
    result_.audit = audit_run(config_, chain, result_.blocks, tap->accepted_ids(), result_.colony_total);
    if (!result_.audit.passed()) {
      std::string why = "audit: " + result_.audit.violations.front();
      if (result_.audit.violations.size() > 1)
        why += " (and " + std::to_string(result_.audit.violations.size() - 1) + " more)";
      fail(why);
    }
  }
  result_.usage_end = read_usage();
  return std::move(result_);
}

}  // namespace

run_result run_cycle_test(const run_config& c, const run_context& ctx, bool progress) {
  run_result failed;
  try {
    cycle_test test(c, ctx, progress);
    return test.run();
  } catch (const std::exception& e) {
    failed.error = e.what();
  } catch (...) {
    failed.error = "unknown exception";
  }
  failed.status = run_status::failed;
  failed.stop_reason = "error";
  failed.usage_end = read_usage();
  return failed;
}

}  // namespace apiary::harness
