#include "apiary/colony/colony.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/token_bucket.hpp"
#include "apiary/core/base/check.hpp"
#include "apiary/core/base/clock.hpp"
#include "apiary/core/base/thread_name.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "pause.hpp"
#include "thread_cpu.hpp"

namespace apiary::colony {

namespace detail {

using steady = std::chrono::steady_clock;

namespace {

std::int64_t ns_since_epoch(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::uint64_t elapsed_ns(steady::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now() - since).count());
}

}  // namespace

// A counter with one writer and any number of readers: a plain add, no locked instruction.
class counter {
 public:
  void add(std::uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  void set(std::uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  std::uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

enum class brake : std::uint8_t { in_flight, budget, tps, result };
constexpr std::size_t brake_count = 4;

// One producer thread's state. The first part is written by the producer only; the part
// after `completion side` by the completions on the writer thread: separate cache lines,
// so counting an outcome does not steal the line the producer writes.
struct alignas(64) worker {
  worker(std::uint32_t i, generator g, std::string password, fault_injector f)
      : index(i), gen(std::move(g)), keys(std::move(password)), faults(f) {}

  const std::uint32_t index;
  generator gen;
  key_cache keys;
  fault_injector faults;
  std::optional<token_bucket> bucket;
  std::uint64_t head_seq = ~std::uint64_t{0};
  // The in-flight limit and the count to wait for when braked at it, copied with the head.
  std::uint32_t limit = 1;
  std::uint32_t resume_at_most = 0;
  std::uint64_t cpu_at_start = 0;
  // Transactions to make before the next one whose CPU time is measured (colony::time_this_one).
  std::uint32_t untimed_left = 0;
  std::thread thread;
  std::atomic<int> tid{0};  // gettid(), published as the thread starts

  std::array<counter, colony_counter_count> counts;  // colony_counters.hpp
  std::array<counter, fault_kind_count> injected;
  std::array<counter, op_kind_count> kind_count;
  std::array<counter, op_kind_count> kind_extra;
  std::array<counter, op_kind_count> kind_packed;
  std::array<counter, brake_count> brake_waits;
  std::array<counter, brake_count> brake_ns;
  // While the thread is held (in-flight brake or waiting for an outcome): when that wait
  // began (steady clock, ns); 0 otherwise. Read by thread_stats() for held_ongoing_ns.
  std::atomic<std::int64_t> held_since_ns{0};
  std::atomic<bool> sink_closed{false};
  std::atomic<bool> finished{false};

  // ---- completion side ----
  alignas(64) comment_ring* ring = nullptr;
  std::array<std::atomic<std::uint64_t>, core::reject_count> outcomes{};
  // Submitted, completion not yet called: incremented before submit, so never negative.
  std::atomic<std::uint32_t> in_flight{0};
  // While the producer waits for in_flight to fall: the count at which to wake it; -1 when
  // it does not wait. The producer stores it and then reads in_flight, a completion
  // decrements in_flight and then reads it (both sequentially consistent), so one of the
  // two sees the other and no wake-up is lost.
  std::atomic<std::int64_t> wake_at{-1};
  core::mutex mutex;
  core::condition_variable cv;
  // submit_mode::async: one promise per transaction in flight, in submission order (the sink
  // completes one producer's transactions in the order it submitted them).
  core::mutex promise_mutex;
  std::deque<std::promise<core::reject>> promises APIARY_GUARDED_BY(promise_mutex);

  counter& count(colony_counter c) { return counts[static_cast<std::size_t>(c)]; }

  void add_wait(brake b, steady::time_point since) {
    brake_waits[static_cast<std::size_t>(b)].add(1);
    brake_ns[static_cast<std::size_t>(b)].add(elapsed_ns(since));
  }
};

// What make() built for send(): the transaction, and the faulty companion to follow it.
struct made {
  core::full_transaction_ptr tx;
  core::full_transaction_ptr companion;  // null when no fault was drawn
  std::optional<fault_kind> fault;
  std::uint8_t kind = 0;  // index_of(the built kind), for tx_intent
};

}  // namespace detail

using detail::brake;
using detail::made;
using detail::worker;

std::uint32_t auto_in_flight_limit(std::uint32_t block_transactions, std::uint32_t threads) {
  APIARY_CHECK(threads > 0);
  const std::uint64_t limit = (2 * std::uint64_t{block_transactions} + threads - 1) / threads;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(limit, 1, UINT32_MAX));
}

std::uint32_t next_block_budget(std::uint32_t max_budget, const block_counts& block) {
  if (block.pending_after == 0) return max_budget;
  const std::uint64_t n = block.transactions;
  const std::uint64_t margin =
      std::clamp<std::uint64_t>(n * budget_margin_bp / 10'000, budget_margin_min, budget_margin_max);
  const std::uint64_t adapted = std::min<std::uint64_t>(n + margin, max_budget);
  return adapted > block.pending_after ? static_cast<std::uint32_t>(adapted - block.pending_after) : 0;
}

double estimate_average_size(const mix_config& mix, std::span<const core::account_name> accounts, bool signed_,
                             std::uint64_t seed, std::size_t samples) {
  APIARY_CHECK(!accounts.empty() && samples > 0);
  comment_ring ring;
  // No head: the sizes are the same under every one (nonce_text_size).
  generator g(mix, generator_options{seed, 0, true}, std::vector<core::account_name>(accounts.begin(), accounts.end()),
              ring);
  // The signature list: its count, and one compact signature when signed.
  const std::size_t signatures = signed_ ? 1 + 65 : 1;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < samples; ++i) bytes += core::packed_size(g.next().tx) + signatures;
  return static_cast<double>(bytes) / static_cast<double>(samples);
}

std::uint32_t estimate_block_transactions(const colony_config& config) {
  const auto genesis = genesis_account_names(config.genesis_accounts, config.account_prefix);
  const auto sample = deal_accounts(genesis, 0, std::max<std::size_t>(1, genesis.size() / 1000));
  const double average = estimate_average_size(config.mix, sample, config.sign, config.seed);
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(static_cast<double>(config.block_size) / average));
}

colony::colony(const colony_config& config, core::transaction_sink& sink, const head_info& initial_head)
    : config_(config),
      sink_(sink),
      ring_(std::max<std::size_t>(config.comment_ring_capacity, 1), config.comment_max_age()),
      heads_(initial_head, config.first_in_flight_limit()),
      budget_(stop_, config.wait_for_work_ms) {
  if (auto problem = config_.validate()) throw std::invalid_argument(*problem);
  APIARY_CHECK(initial_head.block_num == core::block_num_from_id(initial_head.id));
  const std::uint32_t limit = heads_.in_flight_limit();

  const auto genesis = genesis_account_names(config_.genesis_accounts, config_.account_prefix);
  if (config_.rate == rate_mode::block_budget) {
    budget_per_block_ = config_.block_budget;
    if (config_.slots) budget_per_block_ = config_.slots->count(initial_head.block_num + 1);
    if (budget_per_block_ == 0 && !config_.slots) budget_per_block_ = estimate_block_transactions(config_);
    budget_.preset(budget_per_block_);
  }

  if (config_.submit == submit_mode::async)
    async_pool_ = std::make_unique<boost::asio::thread_pool>(config_.async_tasks);
  workers_.reserve(config_.threads);
  for (std::uint32_t t = 0; t < config_.threads; ++t) {
    // Comments are remembered when the chain accepts them (on_complete), not when made.
    generator g(config_.mix, generator_options{config_.seed, t, false}, deal_accounts(genesis, t, config_.threads),
                ring_, config_.thread_payer_weights(t));
    auto w = std::make_unique<worker>(t, std::move(g), config_.key_password,
                                      fault_injector(config_.faults, config_.seed, t));
    w->ring = &ring_;
    w->limit = limit;
    w->resume_at_most = config_.resume_below(limit) - 1;
    workers_.push_back(std::move(w));
  }
}

colony::~colony() {
  request_stop();
  join_threads();
  if (async_pool_) async_pool_->join();
}

void colony::start() {
  APIARY_CHECK(!started_);
  started_ = true;
  try {
    for (auto& w : workers_) w->thread = std::thread([this, p = w.get()] { producer_thread(*p); });
  } catch (...) {
    request_stop();
    join_threads();
    throw;
  }
  gate_.wait_for(workers_.size());
  budget_.stamp();  // the first block's budget, published as the threads start
  gate_.open();
}

void colony::request_stop() {
  stop_.store(true);
  // Take each mutex before notifying: a waiter between its check of stop_ and its wait
  // holds the mutex, so the notification cannot fall in between.
  gate_.wake();
  budget_.wake();
  for (auto& w : workers_) {
    { core::lock_guard lock(w->mutex); }
    w->cv.notify_all();
  }
}

void colony::join_threads() {
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

void colony::join() {
  join_threads();
  if (async_pool_) async_pool_->join();  // every submitted transaction's follow-up
  core::lock_guard lock(error_mutex_);
  if (error_) std::rethrow_exception(error_);
}

bool colony::finished() const {
  for (const auto& w : workers_)
    if (!w->finished.load()) return false;
  return true;
}

std::vector<int> colony::thread_ids() const {
  std::vector<int> ids;
  ids.reserve(workers_.size());
  for (const auto& w : workers_) ids.push_back(w->tid.load(std::memory_order_acquire));
  return ids;
}

std::optional<std::string> colony::error() const {
  core::lock_guard lock(error_mutex_);
  if (!error_) return std::nullopt;
  try {
    std::rethrow_exception(error_);
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown exception");
  }
}

void colony::fail(std::exception_ptr e) {
  {
    core::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::move(e);
  }
  request_stop();
}

void colony::on_block(const head_info& head, const block_counts& block) {
  APIARY_CHECK(head.block_num == core::block_num_from_id(head.id));
  block_plan plan;
  plan.block_num = head.block_num;
  plan.transactions = block.transactions;
  plan.pending_after = static_cast<std::uint32_t>(std::min<std::size_t>(block.pending_after, UINT32_MAX));
  ring_.advance(head.block_num);
  std::optional<std::uint32_t> limit;
  if (config_.in_flight_limit == 0) limit = auto_in_flight_limit(block.transactions, config_.threads);
  plan.in_flight_limit = heads_.post(head, limit);
  if (config_.rate == rate_mode::block_budget) {
    plan.budget =
        config_.slots ? config_.slots->count(head.block_num + 1) : next_block_budget(budget_per_block_, block);
    budget_.refill(plan.budget);  // after the head: a unit of it comes with the head
  }
  core::lock_guard lock(plans_mutex_);
  plans_.push_back(plan);
}

std::uint32_t colony::in_flight_limit() const { return heads_.in_flight_limit(); }

std::vector<block_plan> colony::block_plans() const {
  core::lock_guard lock(plans_mutex_);
  return {plans_.begin(), plans_.end()};
}

// ---- the producer thread ------------------------------------------------------------------

void colony::producer_thread(worker& w) {
  w.tid.store(static_cast<int>(::gettid()), std::memory_order_release);
  // A profile's name for it (apiary run --profile); named before start() returns.
  core::name_this_thread("producer-" + std::to_string(w.index));
  w.cpu_at_start = detail::thread_cpu_ns();
  try {
    prepare(w);
    gate_.arrive_and_wait();
    produce(w);
  } catch (...) {
    fail(std::current_exception());  // also lets start() return: it waits for a stop too
  }
  w.count(colony_counter::thread_cpu_ns).set(detail::thread_cpu_ns() - w.cpu_at_start);
  w.finished.store(true);
}

void colony::prepare(worker& w) {
  if (config_.rate == rate_mode::tps) {
    const double rate = config_.tps_limit / config_.threads;
    // Up to 50 ms worth of catch-up after an oversleep or a brake.
    w.bucket.emplace(rate, std::max(1.0, rate / 20.0), detail::steady::now());
  }
  if (config_.sign && config_.warm_keys) {
    const std::uint64_t t0 = detail::thread_cpu_ns();
    for (const auto& account : w.gen.accounts()) {
      if (stop_.load()) break;
      for (core::key_role role : {core::key_role::posting, core::key_role::active}) {
        if (config_.attach_signer_keys)
          w.keys.public_key(account, role);
        else
          w.keys.private_key(account, role);
      }
    }
    w.count(colony_counter::key_cpu_ns).add(detail::thread_cpu_ns() - t0);
  }
}

void colony::refresh_head(worker& w) {
  const std::optional<posted_head> posted = heads_.read_if_moved(w.head_seq);
  if (!posted) return;
  w.gen.set_head(posted->head.id, posted->head.time);
  if (posted->in_flight_limit != w.limit) {
    w.limit = posted->in_flight_limit;
    w.resume_at_most = config_.resume_below(w.limit) - 1;
  }
  // Once a block: cheap enough to keep the thread's CPU total current for stats().
  w.count(colony_counter::thread_cpu_ns).set(detail::thread_cpu_ns() - w.cpu_at_start);
}

bool colony::wait_in_flight(worker& w, std::uint32_t at_most, brake b) {
  if (w.in_flight.load() <= at_most) return true;
  const auto since = detail::steady::now();
  w.held_since_ns.store(detail::ns_since_epoch(since), std::memory_order_relaxed);
  if (config_.wait_for_work_ms && b == brake::in_flight) {
    // Hive's way: pause, then check, until few enough are left (completions do not wake it).
    do detail::pause_for_work(w.mutex, w.cv, *config_.wait_for_work_ms, stop_);
    while (w.in_flight.load() > at_most && !stop_.load());
  } else {
    core::unique_lock lock(w.mutex);
    w.wake_at.store(at_most);
    while (w.in_flight.load() > at_most && !stop_.load()) w.cv.wait(lock);
    w.wake_at.store(-1);
  }
  w.add_wait(b, since);
  w.held_since_ns.store(0, std::memory_order_relaxed);
  if (b == brake::in_flight && w.in_flight.load() == 0 && !stop_.load())
    w.count(colony_counter::in_flight_late_resumes).add(1);
  return !stop_.load();
}

bool colony::take_budget(worker& w) {
  for (;;) {
    if (budget_.try_take()) return true;
    const auto since = detail::steady::now();
    budget_.wait();
    w.add_wait(brake::budget, since);
    if (stop_.load()) return false;
  }
}

bool colony::take_token(worker& w) {
  if (w.bucket->try_take(detail::steady::now())) return true;
  const auto since = detail::steady::now();
  {
    core::unique_lock lock(w.mutex);
    while (!stop_.load()) {
      const auto now = detail::steady::now();
      if (w.bucket->try_take(now)) break;
      w.cv.wait_until(lock, w.bucket->ready_at(now));
    }
  }
  w.add_wait(brake::tps, since);
  return !stop_.load();
}

void colony::produce(worker& w) {
  for (std::uint64_t n = 0; config_.transactions_per_thread == 0 || n < config_.transactions_per_thread; ++n) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const std::optional<std::int64_t> intended = pass_brakes(w);
    if (!intended) return;
    made m = make(w);
    if (!send(w, m, *intended)) return;
  }
}

std::optional<std::int64_t> colony::pass_brakes(worker& w) {
  refresh_head(w);  // a new limit applies from now
  if (w.in_flight.load() >= w.limit && !wait_in_flight(w, w.resume_at_most, brake::in_flight)) return std::nullopt;
  // When the rate schedule meant this transaction to go (tx_intent): the publication of the
  // block's budget, the token's slot, or (no rate limit) now, as generation starts.
  std::int64_t intended = 0;
  if (config_.rate == rate_mode::block_budget) {
    if (!take_budget(w)) return std::nullopt;
    intended = budget_.published_ns();
  }
  if (config_.rate == rate_mode::tps) {
    if (!take_token(w)) return std::nullopt;
    intended = std::chrono::duration_cast<std::chrono::nanoseconds>(w.bucket->last_slot().time_since_epoch()).count();
  }
  refresh_head(w);  // again: a unit of a new block's budget comes with that block's head
  if (intended == 0) intended = core::steady_now_ns();
  return intended;
}

bool colony::time_this_one(worker& w) const {
  if (!config_.measure_cpu) return false;
  if (w.untimed_left != 0) {
    --w.untimed_left;
    return false;
  }
  w.untimed_left = cpu_sample_every - 1;
  w.count(colony_counter::cpu_timed).add(1);
  return true;
}

made colony::make(worker& w) {
  // One transaction in cpu_sample_every is timed and stands for them all (colony_config.hpp);
  // keys derived on first use are timed whenever that happens.
  const bool timed = time_this_one(w);
  const std::uint64_t t0 = timed ? detail::thread_cpu_ns() : 0;
  generated_transaction g = w.gen.next();
  if (timed) w.count(colony_counter::generation_cpu_ns).add(cpu_sample_every * (detail::thread_cpu_ns() - t0));

  signing_time timing{.time_transaction = timed};
  made m;
  m.tx = make_transaction(std::move(g.tx), g.signer, g.role, w.keys, config_.chain, config_.sign,
                          config_.attach_signer_keys, config_.measure_cpu ? &timing : nullptr);
  if (config_.measure_cpu) {
    w.count(colony_counter::signing_cpu_ns).add(cpu_sample_every * timing.signing_ns);
    w.count(colony_counter::key_cpu_ns).add(timing.key_ns);
  }

  const std::size_t k = index_of(g.kind);
  m.kind = static_cast<std::uint8_t>(k);
  w.count(colony_counter::generated).add(1);
  w.kind_count[k].add(1);
  w.kind_extra[k].add(g.extra_size);
  w.kind_packed[k].add(m.tx->packed_size());
  // Only a reply or a vote is ever replaced, by an article (no target in the ring).
  if (g.kind != g.drawn)
    w.count(g.drawn == op_kind::reply ? colony_counter::reply_substitutions : colony_counter::vote_substitutions)
        .add(1);

  // A faulty companion follows the normal transaction now and then (faults.hpp).
  m.fault = w.faults.draw();
  if (m.fault)
    m.companion =
        build_fault(*m.fault, m.tx, g.signer, w.keys, config_.chain, config_.sign, config_.attach_signer_keys);
  return m;
}

bool colony::send(worker& w, made& m, std::int64_t intended) {
  const core::tx_completion done{&colony::on_complete, &w};
  const core::tx_intent intent{intended, m.kind};
  if (!hand_over(w, std::move(m.tx), done, intent)) return false;
  if (m.companion) {
    // On the chain's clock a companion is one of the slot's transactions too.
    if (config_.slots && !take_budget(w)) return false;
    // Counted once the sink took it, so every injected companion gets an answer.
    if (!hand_over(w, std::move(m.companion), done, intent)) return false;
    w.injected[static_cast<std::size_t>(*m.fault)].add(1);
  }
  return config_.submit != submit_mode::sync || wait_in_flight(w, 0, brake::result);
}

bool colony::submit(worker& w, core::full_transaction_ptr tx, const core::tx_completion& done, core::tx_intent intent) {
  const std::uint32_t in_flight = w.in_flight.fetch_add(1) + 1;
  bool taken = false;
  try {
    taken = sink_.submit(std::move(tx), done, intent);
  } catch (...) {
    w.in_flight.fetch_sub(1);  // not taken: no completion will come
    throw;
  }
  if (!taken) {
    w.in_flight.fetch_sub(1);
    w.sink_closed.store(true);
    request_stop();
    return false;
  }
  w.count(colony_counter::submitted).add(1);
  detail::counter& peak = w.count(colony_counter::in_flight_peak);
  if (in_flight > peak.get()) peak.set(in_flight);
  return true;
}

bool colony::hand_over(worker& w, core::full_transaction_ptr tx, const core::tx_completion& done,
                       core::tx_intent intent) {
  if (config_.submit != submit_mode::async) return submit(w, std::move(tx), done, intent);
  // The promise is queued before the submit: its completion may come before submit returns.
  std::future<core::reject> outcome;
  {
    core::lock_guard lock(w.promise_mutex);
    outcome = w.promises.emplace_back().get_future();
  }
  core::full_transaction_ptr follow = tx;  // the follow-up puts an accepted comment in the ring
  bool taken = false;
  try {
    taken = submit(w, std::move(tx), {&colony::on_outcome_ready, &w}, intent);
  } catch (...) {
    core::lock_guard lock(w.promise_mutex);
    w.promises.pop_back();  // this thread's own, the last: no completion will come for it
    throw;
  }
  if (!taken) {
    core::lock_guard lock(w.promise_mutex);
    w.promises.pop_back();
    return false;
  }
  boost::asio::post(*async_pool_, [&w, outcome = std::move(outcome), tx = std::move(follow)]() mutable {
    record_outcome(w, *tx, outcome.get());
  });
  return true;
}

// ---- the completion, on the writer thread -------------------------------------------------

void colony::on_complete(void* ctx, const core::full_transaction& tx, core::reject outcome) {
  record_outcome(*static_cast<worker*>(ctx), tx, outcome);
}

void colony::on_outcome_ready(void* ctx, const core::full_transaction& /*tx*/, core::reject outcome) {
  worker& w = *static_cast<worker*>(ctx);
  std::promise<core::reject> p;
  {
    core::lock_guard lock(w.promise_mutex);
    p = std::move(w.promises.front());
    w.promises.pop_front();
  }
  p.set_value(outcome);  // wakes the async task waiting for it
}

void colony::record_outcome(worker& w, const core::full_transaction& tx, core::reject outcome) {
  const auto reason = static_cast<std::size_t>(outcome);
  APIARY_CHECK(reason < core::reject_count);
  w.outcomes[reason].fetch_add(1, std::memory_order_relaxed);
  // Before the in-flight decrement, so a producer woken by it finds the comment there.
  if (outcome == core::reject::none) w.ring->remember(tx.tx());
  const std::uint32_t now = w.in_flight.fetch_sub(1) - 1;
  const std::int64_t wake_at = w.wake_at.load();
  if (wake_at >= 0 && now <= wake_at) {
    core::lock_guard lock(w.mutex);
    w.cv.notify_one();
  }
}

// ---- stats ----------------------------------------------------------------------------------

std::vector<colony_stats> colony::thread_stats() const {
  std::vector<colony_stats> all;
  all.reserve(workers_.size());
  for (const auto& p : workers_) {
    const worker& w = *p;
    colony_stats s;
    s.threads = 1;
    s.accounts = w.gen.accounts().size();
    for (std::size_t c = 0; c < colony_counter_count; ++c) s.*colony_counters[c].member = w.counts[c].get();
    for (std::size_t k = 0; k < fault_kind_count; ++k) {
      s.faults[k] = w.injected[k].get();
      s.injected += s.faults[k];
    }
    for (std::size_t i = 0; i < core::reject_count; ++i)
      s.outcomes.by_reason[i] = w.outcomes[i].load(std::memory_order_relaxed);
    s.in_flight = w.in_flight.load();
    for (std::size_t k = 0; k < op_kind_count; ++k)
      s.kinds[k] = {w.kind_count[k].get(), w.kind_extra[k].get(), w.kind_packed[k].get()};
    s.article_substitutions = s.reply_substitutions + s.vote_substitutions;
    auto brake_of = [&w](brake b) {
      const auto i = static_cast<std::size_t>(b);
      return brake_totals{w.brake_waits[i].get(), w.brake_ns[i].get()};
    };
    s.in_flight_brake = brake_of(brake::in_flight);
    s.budget_brake = brake_of(brake::budget);
    s.tps_brake = brake_of(brake::tps);
    s.result_wait = brake_of(brake::result);
    if (const std::int64_t held = w.held_since_ns.load(std::memory_order_relaxed); held != 0)
      s.held_ongoing_ns =
          static_cast<std::uint64_t>(std::max<std::int64_t>(0, detail::ns_since_epoch(detail::steady::now()) - held));
    s.sink_closed = w.sink_closed.load();
    all.push_back(s);
  }
  return all;
}

colony_stats colony::stats() const {
  colony_stats total;
  for (const colony_stats& s : thread_stats()) total += s;
  return total;
}

}  // namespace apiary::colony
