// Reads the blocks of Hive's block_api JSON: a get_block result ({"block": {...}}) or a
// get_block_range result ({"blocks": [...]}), bare or inside a JSON-RPC response's "result".
// Both forms hived writes are read: legacy (operations as ["vote", {...}], assets as
// "1.000 STEEM", "1.000 HBD", "1.000000 VESTS") and HF26 (operations as {"type":
// "vote_operation", "value": {...}}, assets as {"amount", "precision", "nai"}). What block_api
// states beside each block (block_id, signing_key, transaction_ids) becomes its expectations.
// Parsed with Boost.JSON; not for the hot path.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/core/protocol/any_block.hpp"
#include "apiary/core/protocol/block_verify.hpp"

namespace apiary::core {

struct json_block {
  std::size_t index = 0;  // its place in the file's list of blocks
  any_block block;
  block_expectations expected;
};

// The text is not block_api JSON, or a block in it does not fit Hive's types: one line naming
// where ("line 3, column 9 (byte 52)", or "blocks[4] (block 1000004): transactions[0]...").
class block_json_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether `text` starts, after white space, as a JSON object: how a file of block_api JSON is
// told from a binary block log.
bool looks_like_json_object(std::string_view text);

std::vector<json_block> read_block_api_json(std::string_view text);

// Reads one operation or transaction of either JSON form (for tests and tools).
any_operation operation_from_json(std::string_view text);
any_transaction transaction_from_json(std::string_view text);

}  // namespace apiary::core
