// chain_snapshot: a chain's state saved whole, so a run can start from a large or warm state
// (millions of accounts, an hour of transaction ids, a cashout window of comments and votes)
// without building it again. chain::write_snapshot writes one, chain::from_snapshot builds a
// chain from one; the file around it is the caller's (the harness maps it and writes it
// atomically).
//
// Format, version 1 (integers little-endian; names, strings and lists in Hive's wire encoding,
// serialize.hpp):
//   "APIARYST"                      8-byte magic
//   u32 format version
//   u64 file size                   every byte, the checksum included
//   u64 layout id                   snapshot_layout_id(): the state objects' field lists
//   u32 head block number, 20-byte head block id, u32 head block time
//   32-byte state digest            chain::state_digest() when written
//   varint count, then per option   "name=value" (chain_options::state_options)
//   varint count, then per section  name, u64 objects, u64 next id, the objects in id order,
//                                   each its fields() in order, nested objects' fields inline
//   u64 checksum                    XXH3-64 of every byte before it
//
// Sections, in this order: accounts, comments, votes, block_summaries, global_properties,
// transactions, custom_op_counters (every index of the chain's database).
//
// Loading checks, before anything is built: the size (truncated), the magic, the version,
// the recorded size against the file's, the checksum (corrupted), the layout id (a build whose
// objects differ), the options (a chain with other genesis options); then it decodes the
// sections, each object checked as it is inserted (a malformed or inconsistent one is
// refused too). Any refusal is a snapshot_error naming what is wrong; the chain being built
// is then destroyed whole, never handed out half-loaded.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/time_point.hpp"

namespace apiary::core {

inline constexpr std::uint32_t snapshot_format_version = 1;

// What is wrong with a snapshot, each with its own message.
enum class snapshot_problem : std::uint8_t {
  truncated,  // shorter than its header says (or than any header)
  size,       // longer than its header says, or the size field is damaged
  magic,      // not a snapshot
  version,    // another format version
  corrupted,  // the checksum does not match
  layout,     // written by a build whose state objects differ
  options,    // made with other chain options than the chain it would load into
  malformed,  // checksummed, yet its contents do not decode into a consistent state
};

class snapshot_error : public std::runtime_error {
 public:
  snapshot_error(snapshot_problem problem, const std::string& what) : std::runtime_error(what), problem_(problem) {}
  snapshot_problem problem() const { return problem_; }

 private:
  snapshot_problem problem_;
};

// A snapshot's header, once the whole file checked out.
struct snapshot_info {
  std::uint32_t format_version = 0;
  std::uint64_t layout_id = 0;
  std::uint64_t file_size = 0;
  std::uint32_t head_block_num = 0;
  block_id head_block_id;
  time_point_sec head_block_time;
  sha256_digest state_digest;
  std::vector<std::pair<std::string, std::string>> options;  // name, value
  std::size_t header_size = 0;                               // where the sections start
};

// A hash of the sections' names and of every field list they write (names and types, nested
// objects' too): two builds read each other's snapshots only when theirs are equal.
std::uint64_t snapshot_layout_id();

// State files (chain::write_state, chain::open_state): a mapped state's bytes as they lie in
// memory (state_region.hpp), with this header in the region's payload:
//   u64 layout id                   state_file_layout_id()
//   u32 head block number, 20-byte head block id, u32 head block time
//   32-byte state digest            chain::state_digest() when written
//   varint count, then per option   "name=value" (chain_options::state_options)
// The layout id covers what the bytes depend on beyond the objects' fields: the size of every
// index's body, container and object, the hashed tables' buckets an object (state_objects.hpp), the
// compiler and standard library, Boost, and the address states are mapped at. Two builds open
// each other's state files only when theirs are equal; a build that differs makes its own.
std::uint64_t state_file_layout_id();

// Checks a whole snapshot file: its size, magic, version, checksum and layout id, and reads its
// header. Throws snapshot_error. Cheap next to loading it: the checksum runs at memory speed.
snapshot_info check_snapshot(std::span<const std::uint8_t> file);

}  // namespace apiary::core
