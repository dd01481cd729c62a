#include "apiary/core/chain/rc_books.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace apiary::core {

namespace {

// The options' RC parameters scaled, or std::invalid_argument naming the first bad one.
rc_parameters checked_rc_params(const chain_options& o) {
  for (std::size_t i = 0; i < rc_resource_count; ++i)
    if (std::string problem = rc_params_problem(o.rc_params[i], o.rc_scale); !problem.empty())
      throw std::invalid_argument("rc parameters, " + std::string(rc_resource_name(static_cast<rc_resource>(i))) + " " +
                                  problem);
  return rc_scaled(o.rc_params, o.rc_scale);
}

}  // namespace

rc_books::rc_books(const chain_options& options)
    : params_(checked_rc_params(options)), stats_blocks_(options.rc_stats_blocks) {}

rc_status rc_books::status(const global_properties_object& g) const {
  rc_status s = status_;
  s.pools = g.rc_pools;
  for (std::size_t i = 0; i < rc_resource_count; ++i) s.equilibria[i] = params_[i].equilibrium;
  s.total_vesting = g.total_vesting;
  return s;
}

void rc_books::finish_block(const rc_stats& block, const global_properties_object& g) {
  status_.max_block_rejected = std::max(status_.max_block_rejected, rejected_in_block_);
  rejected_in_block_ = 0;
  ++status_.blocks;
  if (!keeps_stats()) return;
  stats_ += block;
  const std::uint32_t num = g.head_block_number;
  if (archive_first_ == 0) archive_first_ = num;
  if (num % stats_blocks_ == 0) archive(g);
}

// The open statistics with the pools and prices now; the next archive's cant_afford compares
// with this one's average costs.
void rc_books::archive(const global_properties_object& g) {
  rc_archive& a = archives_.emplace_back();
  a.block = g.head_block_number;
  a.first_block = archive_first_;
  a.pools = g.rc_pools;
  a.levels = rc_pool_levels(g.rc_pools, params_);
  a.prices = rc_unit_prices(g.rc_pools, g.total_vesting, params_);
  a.regen = rc_regen_per_block(g.total_vesting);
  a.accepted = stats_.transactions();
  a.rejected_rc = status_.rejected - rejected_at_archive_;
  a.stats = stats_;
  reference_ = stats_.reference_costs(reference_);
  stats_ = {};
  rejected_at_archive_ = status_.rejected;
  archive_first_ = a.block + 1;
}

}  // namespace apiary::core
