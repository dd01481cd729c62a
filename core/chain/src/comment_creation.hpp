// The fields of a new comment_object, for the comment evaluator (chain_evaluators.hpp) and
// the comments a genesis is given (chain_genesis.cpp): one rule for both.
#pragma once

#include <cstdint>

#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/state_objects.hpp"

namespace apiary::core {

// `c` names the comment and its parent (a comment_operation or a genesis_comment): created
// and last updated at `now`, paid out `cashout_blocks` blocks later.
template <class Comment>
void fill_new_comment(comment_object& o, const Comment& c, time_point_sec now, std::uint32_t cashout_blocks) {
  o.author = c.author;
  o.permlink = c.permlink;
  o.parent_author = c.parent_author;
  o.parent_permlink = c.parent_permlink;
  o.created = now;
  o.last_update = now;
  o.cashout_time = now + cashout_blocks * chain_limits::block_interval_secs;
}

}  // namespace apiary::core
