#include "apiary/colony/workload.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "apiary/colony/faults.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/core/base/check.hpp"
#include "apiary/core/chain/chain_options.hpp"

namespace apiary::colony {

namespace {

// One step of the sequence: a normal transaction and the fault drawn after it, if any.
struct step {
  generated_transaction normal;
  std::optional<fault_kind> fault;
};

// The signed transactions of one step (the normal one, then its faulty companion).
struct built_step {
  core::full_transaction_ptr normal;
  core::full_transaction_ptr companion;
};

// Builds the steps [begin, end) into `out`, with a key cache of its own.
void build_range(const colony_config& config, std::vector<step>& steps, std::size_t begin, std::size_t end,
                 std::vector<built_step>& out) {
  key_cache keys(config.key_password);
  for (std::size_t i = begin; i < end; ++i) {
    generated_transaction& g = steps[i].normal;
    out[i].normal =
        make_transaction(std::move(g.tx), g.signer, g.role, keys, config.chain, config.sign, config.attach_signer_keys);
    if (steps[i].fault)
      out[i].companion = build_fault(*steps[i].fault, out[i].normal, g.signer, keys, config.chain, config.sign,
                                     config.attach_signer_keys);
  }
}

}  // namespace

workload generate_workload(const colony_config& config, std::uint64_t transactions, const head_info& head,
                           std::uint64_t block_every) {
  APIARY_CHECK(!config.validate().has_value());
  const std::vector<core::account_name> genesis = genesis_account_names(config.genesis_accounts, config.account_prefix);
  comment_ring ring(std::max<std::size_t>(config.comment_ring_capacity, 1));
  std::vector<generator> streams;
  std::vector<fault_injector> injectors;
  streams.reserve(config.threads);
  for (std::uint32_t t = 0; t < config.threads; ++t) {
    streams.emplace_back(config.mix, generator_options{config.seed, t, true}, deal_accounts(genesis, t, config.threads),
                         ring, config.thread_payer_weights(t));
    streams.back().set_head(head.id, head.time);
    injectors.emplace_back(config.faults, config.seed, t);
  }

  // The sequence first, on this thread: the streams take turns.
  std::vector<step> steps;
  steps.reserve(transactions);
  for (std::uint64_t i = 0; i < transactions; ++i) {
    if (block_every != 0 && i != 0 && i % block_every == 0) {
      const auto slot = static_cast<std::uint32_t>(i / block_every);
      for (generator& g : streams) g.set_head(head.id, head.time + slot * core::chain_limits::block_interval_secs);
    }
    const std::size_t t = i % config.threads;
    steps.push_back({streams[t].next(), injectors[t].draw()});
  }

  workload w;
  for (const step& s : steps)
    if (s.fault) w.faults[static_cast<std::size_t>(*s.fault)] += 1;

  // Then the signatures, in contiguous slices over the cores.
  const std::size_t n = steps.size();
  std::vector<built_step> built(n);
  const std::size_t workers =
      config.sign ? std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(n / 256, 1))
                  : 1;
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(workers);
  for (std::size_t k = 0; k < workers; ++k) {
    const std::size_t begin = n * k / workers;
    const std::size_t end = n * (k + 1) / workers;
    threads.emplace_back([&, k, begin, end] {
      try {
        build_range(config, steps, begin, end, built);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  w.transactions.reserve(n + n / 8);
  for (std::size_t i = 0; i < n; ++i) {
    built_step& b = built[i];
    kind_totals& k = w.kinds[index_of(steps[i].normal.kind)];
    ++k.count;
    k.extra_bytes += steps[i].normal.extra_size;
    k.packed_bytes += b.normal->packed_size();
    w.transactions.push_back(std::move(b.normal));
    if (b.companion) w.transactions.push_back(std::move(b.companion));
  }
  return w;
}

}  // namespace apiary::colony
