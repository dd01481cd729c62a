// workload_file: a workload (colony/workload.hpp) saved with what it was made from, so
// `apiary replay` can rebuild the same genesis and push the very same bytes.
//
// Format, version 2 (integers little-endian, in core's wire encoding):
//   "APIARYWL"                          8-byte magic
//   u32 version
//   u64 seed, u32 streams, u32 accounts, bool signed
//   u64 faulty companions per fault kind (colony/faults.hpp), 9 of them
//   string account prefix, string key password, 32-byte chain id
//   u64 transaction count
//   per transaction: varint length, the packed signed transaction, then the attached signer
//                    keys as a list of 33-byte compressed keys
//   32-byte sha256 of every byte before it
//
// Loading reads only a regular file that fits in memory (input_file.hpp), checks the magic,
// the version, the checksum (a truncated or damaged file), the header's values (1 to 128
// streams, 1 to 10,000,000 accounts, a valid account prefix: a valid checksum proves only
// that the file is what was written), the transaction count against the bytes left and the
// memory, and decodes every transaction; any problem is one workload_error naming the file
// and what is wrong with it.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "apiary/colony/faults.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/full_transaction.hpp"

namespace apiary::harness {

class workload_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct workload_meta {
  std::uint64_t seed = 0;
  std::uint32_t streams = 0;
  std::uint32_t accounts = 0;
  bool sign = true;
  std::array<std::uint64_t, colony::fault_kind_count> faults{};  // companions, by kind
  std::string account_prefix;
  std::string key_password;
  core::chain_id chain;
};

struct saved_workload {
  workload_meta meta;
  std::vector<core::full_transaction_ptr> transactions;
};

// Writes as output_file.hpp says: a regular file through an fsync'ed temporary file renamed
// into place, so a reader never sees half a file; a device or a FIFO written through.
void save_workload(const std::string& path, const saved_workload& w);
saved_workload load_workload(const std::string& path);

}  // namespace apiary::harness
