// genesis_additions: accounts and comments added to a chain's genesis by name, beside the
// numbered accounts chain_options describes. A replay of real blocks creates each account and
// comment its operations reference before the replay starts (Hive's "iceberg" conversion:
// what lies below the replayed range is made to exist), so that the operations apply.
// Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apiary/core/protocol/account_name.hpp"

namespace apiary::core {

struct genesis_account {
  account_name name;
  std::int64_t hive = 0;     // thousandths
  std::int64_t hbd = 0;      // thousandths
  std::int64_t vesting = 0;  // micro-VESTS: the RC manabar's maximum, and the votes' weight
};

// A comment as it stood when the chain began: created at the genesis time, so its cashout
// window starts there. A reply names its parent, which must exist by then.
struct genesis_comment {
  account_name author;
  std::string permlink;
  account_name parent_author;   // empty for a root post
  std::string parent_permlink;  // the category for a root post
};

struct genesis_additions {
  std::vector<genesis_account> accounts;
  std::vector<genesis_comment> comments;  // after the accounts; a parent before its replies
};

}  // namespace apiary::core
