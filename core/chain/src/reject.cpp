#include "apiary/core/chain/reject.hpp"

namespace apiary::core {

std::string_view reject_name(reject r) {
  switch (r) {
    case reject::none: return "none";
    case reject::oversize: return "oversize";
    case reject::expired: return "expired";
    case reject::expiration_too_far: return "expiration_too_far";
    case reject::unknown_reference_block: return "unknown_reference_block";
    case reject::duplicate: return "duplicate";
    case reject::no_operations: return "no_operations";
    case reject::unknown_account: return "unknown_account";
    case reject::missing_authority: return "missing_authority";
    case reject::bad_signature: return "bad_signature";
    case reject::unknown_comment: return "unknown_comment";
    case reject::unknown_parent: return "unknown_parent";
    case reject::invalid_operation: return "invalid_operation";
    case reject::insufficient_funds: return "insufficient_funds";
    case reject::invalid_json: return "invalid_json";
    case reject::custom_json_id_too_long: return "custom_json_id_too_long";
    case reject::custom_json_too_large: return "custom_json_too_large";
    case reject::custom_op_limit: return "custom_op_limit";
    case reject::insufficient_rc: return "insufficient_rc";
    case reject::shutdown: return "shutdown";
    case reject::count_: break;
  }
  return "unknown";
}

std::uint64_t reject_counts::rejected() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < reject_count; ++i)
    if (is_rejection(static_cast<reject>(i))) n += by_reason[i];
  return n;
}

}  // namespace apiary::core
