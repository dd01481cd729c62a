#include "apiary/colony/workload.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <thread>
#include <utility>

#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/core/check.hpp"

namespace apiary::colony {

namespace {

// Signs the slice [begin, end) of `unsigned_txs` into `out`, with its own key cache.
void sign_range(const colony_config& config, std::vector<generated_transaction>& unsigned_txs, std::size_t begin,
                std::size_t end, std::vector<core::full_transaction_ptr>& out) {
  key_cache keys(config.key_password);
  for (std::size_t i = begin; i < end; ++i) {
    generated_transaction& g = unsigned_txs[i];
    const core::private_key& priv = keys.private_key(g.signer, g.role);
    std::span<const core::public_key> signer_keys;
    if (config.attach_signer_keys) signer_keys = std::span(&keys.public_key(g.signer, g.role), 1);
    out[i] = std::make_shared<const core::full_transaction>(std::move(g.tx), config.chain, std::span(&priv, 1),
                                                            signer_keys);
  }
}

}  // namespace

workload generate_workload(const colony_config& config, std::uint64_t transactions, const head_info& head) {
  APIARY_CHECK(!config.validate().has_value());
  const std::vector<core::account_name> genesis = genesis_account_names(config.genesis_accounts, config.account_prefix);
  comment_ring ring(std::max<std::size_t>(config.comment_ring_capacity, 1));
  std::vector<generator> streams;
  streams.reserve(config.threads);
  for (std::uint32_t t = 0; t < config.threads; ++t) {
    streams.emplace_back(config.mix, generator_options{config.seed, t, true},
                         deal_accounts(genesis, t, config.threads), ring);
    streams.back().set_head(head.id, head.time);
  }

  // The sequence first, on this thread: the streams take turns.
  std::vector<generated_transaction> built;
  built.reserve(transactions);
  for (std::uint64_t i = 0; i < transactions; ++i) built.push_back(streams[i % config.threads].next());

  workload w;
  for (const generator& g : streams) w.stats += g.stats();
  w.transactions.resize(built.size());
  if (!config.sign) {
    for (std::size_t i = 0; i < built.size(); ++i)
      w.transactions[i] = std::make_shared<const core::full_transaction>(std::move(built[i].tx), config.chain,
                                                                         std::span<const core::private_key>{});
    return w;
  }

  // Then the signatures, in contiguous slices over the cores.
  const std::size_t n = built.size();
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(n / 256, 1));
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(workers);
  for (std::size_t k = 0; k < workers; ++k) {
    const std::size_t begin = n * k / workers;
    const std::size_t end = n * (k + 1) / workers;
    threads.emplace_back([&, k, begin, end] {
      try {
        sign_range(config, built, begin, end, w.transactions);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return w;
}

}  // namespace apiary::colony
