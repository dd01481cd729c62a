// Why the core turned a transaction away. A rejection is an expected outcome, returned as a
// value and counted in reports, never thrown. `none` means accepted. `shutdown` is the one
// outcome that is not the chain's: the transaction was never pushed (the run stopped first),
// so it is not a rejection (is_rejection, reject_counts::rejected).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace apiary::core {

enum class reject : std::uint8_t {
  none,
  oversize,                 // packed size above the 64 KiB maximum
  expired,                  // expiration not after the head block time
  expiration_too_far,       // more than 3,600 s after the head block time
  unknown_reference_block,  // TaPoS: ref_block_num/prefix name no recent block
  duplicate,                // id pending or included and unexpired
  no_operations,
  unknown_account,    // an account an operation names does not exist
  missing_authority,  // no signature from a key with the required authority
  bad_signature,      // a signature from which no key recovers
  unknown_comment,    // vote or comment_options on a comment that does not exist
  unknown_parent,     // reply to a comment that does not exist
  invalid_operation,  // an operation field outside what Hive allows
  insufficient_funds,
  invalid_json,             // custom_json payload or comment json_metadata is not JSON
  custom_json_id_too_long,  // more than 32 characters
  custom_json_too_large,    // payload above 8 KiB
  custom_op_limit,          // more than 5 custom operations by one account in one block
  insufficient_rc,          // the payer's resource credits are less than the cost (rc.hpp)
  shutdown,                 // not the chain's: the run stopped before the writer pushed it
  count_
};

inline constexpr std::size_t reject_count = static_cast<std::size_t>(reject::count_);

std::string_view reject_name(reject r);

// The chain turned it away: every outcome but none (accepted) and shutdown (never pushed).
constexpr bool is_rejection(reject r) { return r != reject::none && r != reject::shutdown; }

// One counter per reason, indexable by the enum.
struct reject_counts {
  std::array<std::uint64_t, reject_count> by_reason{};
  void add(reject r) { ++by_reason[static_cast<std::size_t>(r)]; }
  std::uint64_t operator[](reject r) const { return by_reason[static_cast<std::size_t>(r)]; }
  std::uint64_t rejected() const;  // the chain's rejections: every reason but none and shutdown
};

}  // namespace apiary::core
