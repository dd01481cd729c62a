#include "apiary/colony/colony_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "apiary/colony/generator.hpp"
#include "apiary/core/chain/genesis_vesting.hpp"

namespace apiary::colony {

std::optional<std::string> parse_payer_weighting(std::string_view text, payer_weighting& out) {
  const std::string allowed = "expected uniform, or vesting:E with an exponent E from 0 to " +
                              std::to_string(static_cast<int>(payer_weighting::max_exponent)) + " (e.g. vesting:1)";
  if (text == "uniform") {
    out = payer_weighting{};
    return std::nullopt;
  }
  // Built by appending: "'" + std::string(...) makes GCC 12 warn falsely (-Wrestrict, bug 105329).
  std::string refusal(1, '\'');
  refusal.append(text).append("': ").append(allowed);
  if (!text.starts_with("vesting:")) return refusal;
  const std::string_view e = text.substr(8);
  double exponent = 0;
  const auto r = std::from_chars(e.data(), e.data() + e.size(), exponent);
  if (e.empty() || r.ec != std::errc{} || r.ptr != e.data() + e.size() || !(exponent >= 0) ||
      !(exponent <= payer_weighting::max_exponent))
    return refusal;
  out = payer_weighting{true, exponent};
  return std::nullopt;
}

std::string to_string(const payer_weighting& p) {
  if (!p.by_vesting) return "uniform";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, p.exponent);
  return "vesting:" + std::string(buf, r.ptr);
}

std::vector<double> colony_config::thread_payer_weights(std::uint32_t thread) const {
  std::vector<double> weights;
  if (!payers.by_vesting) return weights;
  const core::vesting_sampler vesting(genesis_vesting);
  weights.reserve(genesis_accounts / threads + 1);
  // The accounts deal_accounts gives the thread: every threads-th from its index.
  for (std::uint32_t i = thread; i < genesis_accounts; i += threads)
    weights.push_back(std::pow(static_cast<double>(vesting(i)), payers.exponent));
  return weights;
}

void colony_config::use_genesis_of(const core::chain_options& o) {
  genesis_accounts = o.genesis_accounts;
  genesis_vesting = o.genesis_vesting;
  account_prefix = o.account_prefix;
  key_password = o.key_password;
  chain = o.chain;
  cashout_blocks = o.cashout_blocks;
}

std::uint32_t colony_config::comment_max_age() const {
  constexpr std::uint32_t expiry_blocks = expiration_seconds / core::chain_limits::block_interval_secs;
  if (cashout_blocks == 0) return 0;
  return cashout_blocks - std::min(expiry_blocks, cashout_blocks / 2);
}

std::uint32_t colony_config::resume_below(std::uint32_t limit) const {
  const double below = std::floor(static_cast<double>(limit) * resume_fraction);
  if (!(below >= 1.0)) return 1;  // also NaN
  if (below >= static_cast<double>(limit)) return std::max<std::uint32_t>(limit, 1);
  return static_cast<std::uint32_t>(below);
}

std::optional<std::string> colony_config::validate() const {
  if (threads < 1 || threads > max_threads)
    return "threads: " + std::to_string(threads) + " is outside 1.." + std::to_string(max_threads);
  if (auto problem = mix.validate()) return "mix: " + *problem;
  if (async_tasks < 1) return "async_tasks: 0; the async pool needs a thread at least";
  if (auto problem = faults.validate(sign)) return "faults: " + *problem;
  if (genesis_accounts < threads)
    return "genesis_accounts: " + std::to_string(genesis_accounts) + " is fewer than the " + std::to_string(threads) +
           " threads (each needs an account of its own)";
  if (account_prefix.size() < 3 || account_prefix.size() > 10)
    return "account_prefix: '" + account_prefix + "' must be 3..10 lower-case letters";
  for (char c : account_prefix)
    if (c < 'a' || c > 'z') return "account_prefix: '" + account_prefix + "' must be 3..10 lower-case letters";
  if (account_prefix.size() + std::to_string(genesis_accounts - 1).size() > core::account_name::max_size)
    return "account_prefix: '" + account_prefix + "' with " + std::to_string(genesis_accounts) +
           " genesis accounts makes names longer than 16 characters";
  // A binder that casts a number could hand over a value no name stands for.
  if (!core::value_of(rate_mode_names, to_string(rate)))
    return "rate: " + std::to_string(static_cast<int>(rate)) +
           " is not a rate mode (allowed: " + core::names_text(rate_mode_names, ", ") + ")";
  if (!core::value_of(submit_mode_names, to_string(submit)))
    return "submit: " + std::to_string(static_cast<int>(submit)) +
           " is not a submit mode (allowed: " + core::names_text(submit_mode_names, ", ") + ")";
  if (rate == rate_mode::tps && !(tps_limit > 0.0 && std::isfinite(tps_limit)))
    return "tps_limit: must be a number > 0 in tps rate mode";
  if (rate == rate_mode::block_budget && block_budget == 0 && block_size == 0)
    return "block_size: must be > 0 to derive the block budget";
  if (wait_for_work_ms && *wait_for_work_ms > max_wait_for_work_ms)
    return "wait_for_work_ms: " + std::to_string(*wait_for_work_ms) + " is above " +
           std::to_string(max_wait_for_work_ms) +
           " (allowed: unset to wake on notification, 0 to yield between checks, or 1.." +
           std::to_string(max_wait_for_work_ms) + " ms between checks)";
  if (!(resume_fraction > 0.0 && resume_fraction <= 1.0))
    return "resume_fraction: " + std::to_string(resume_fraction) + " is outside (0, 1]";
  if (payers.by_vesting && !(payers.exponent >= 0 && payers.exponent <= payer_weighting::max_exponent))
    return "payers: the exponent " + to_string(payers) + " is outside 0.." +
           std::to_string(static_cast<int>(payer_weighting::max_exponent));
  if (auto problem = core::check_vesting_spec(genesis_vesting))
    return "genesis_vesting: " + core::to_string(genesis_vesting) + ": " + *problem;
  if (comment_ring_capacity == 0) return std::string("comment_ring_capacity: must be at least 1");
  return std::nullopt;
}

}  // namespace apiary::colony
