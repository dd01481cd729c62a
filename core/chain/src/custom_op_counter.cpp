#include "apiary/core/chain/custom_op_counter.hpp"

namespace apiary::core {

reject custom_op_counter::count_in_index(const account_name& account) {
  if (const custom_op_counter_object* c = index_.find<by_account>(account)) {
    if (c->count >= chain_limits::custom_op_block_limit) return reject::custom_op_limit;
    index_.modify(*c, [](custom_op_counter_object& o) { ++o.count; });
  } else {
    index_.create([&](custom_op_counter_object& o) {
      o.account = account;
      o.count = 1;
    });
  }
  return reject::none;
}

std::size_t custom_op_counter::accounts_above_limit() const {
  std::size_t over = 0;
  if (mode_ == counter_mode::local) {
    for (const auto& [account, n] : block_)
      if (n > chain_limits::custom_op_block_limit) ++over;
  } else {
    for (const custom_op_counter_object& c : index_.indices())
      if (c.count > chain_limits::custom_op_block_limit) ++over;
  }
  return over;
}

}  // namespace apiary::core
