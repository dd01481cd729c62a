// state_file: the files `apiary snapshot` writes and `apiary run --state` and `apiary replay
// --state` start from (the formats: core/chain/chain_snapshot.hpp), told apart by their magic:
//   a snapshot (APIARYST), the state object by object: loading reads the whole file
//     (input_file.hpp: a regular file within the caller's size bound) and builds the chain,
//     on the heap or in a new mapped region (chain_options::memory), so an older snapshot is
//     converted as it loads;
//   a state file (APIARYMS), a mapped chain's memory: opening maps it copy-on-write, and the
//     chain is there (core/state/state_region.hpp). The run never writes the file.
// A file that cannot be used is one state_file_error naming it and what is wrong. Writing a
// snapshot goes through output_file (an fsync'ed temporary renamed into place) in chunks and
// stops between two when asked (then no file is left); a mapped chain writes a state file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "apiary/core/chain/chain_snapshot.hpp"

namespace apiary::core {
class chain;
struct chain_options;
}  // namespace apiary::core

namespace apiary::harness {

// Where a chain came from, for the reports: a snapshot or state file, or (path empty) its
// genesis.
struct state_source {
  std::string path;
  std::string format;        // "snapshot" or "state file"
  std::string state_digest;  // hex: the digest the file recorded when it was written
  std::uint32_t head_block_num = 0;
  std::uint64_t bytes = 0;
  std::int64_t load_ns = 0;         // everything: reading, checking and building, or mapping
  std::int64_t open_ns = 0;         // a state file's header checks and mapping
  std::int64_t prefault_ns = 0;     // reading its pages in (0: --state-prefault off)
  std::int64_t verify_ns = 0;       // its content digest (0: --state-verify off)
  std::int64_t resident_bytes = 0;  // the process's resident memory once it was loaded or opened
  std::int64_t made_ns = 0;         // --state-blocks: making it into the state cache (0: found there)
};

// How a state file opens.
struct state_open {
  bool prefault = true;
  bool verify = false;
};

// Whether the file at path starts as a state file (APIARYMS); false when it cannot be read.
bool is_state_file(const std::string& path);

// The snapshot cannot be used: "--state PATH: what is wrong" (bad usage: nothing ran).
class state_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The chain the snapshot or state file at `path` holds, with `options` (whose state_options
// must be the file's; a state file runs mapped whatever options.memory says, and the caller
// refuses an explicit heap); `source` receives where it came from. A snapshot above max_bytes
// is refused before it is read. Throws state_file_error.
std::unique_ptr<core::chain> load_state_file(const std::string& path, const core::chain_options& options,
                                             std::uint64_t max_bytes, const state_open& how, state_source& source);

// A whole snapshot or state file checked (apiary snapshot --verify).
struct verified_state {
  std::string format;  // "snapshot" or "state file"
  core::snapshot_info info;
  std::int64_t check_ns = 0;  // reading and checking every byte
};

// Checks the file at `path` whole, without building a chain: a snapshot's size, magic, layout
// id and checksum (one above max_bytes is refused unread); a state file's header, bookkeeping,
// layout id and content digest. Throws state_file_error "PATH: what is wrong".
verified_state verify_state_file(const std::string& path, std::uint64_t max_bytes);

// Writes the chain's state (no pending transactions) to `path`: a mapped chain's as a state
// file (chain::write_state: its reversible blocks become permanent), a heap chain's as a
// snapshot (chain::write_snapshot). `cancelled` is asked between a snapshot's chunks, and when
// it says so the temporary file is removed and nullopt returned. Otherwise what was written
// (load_ns: the writing). Throws std::runtime_error naming the path.
std::optional<state_source> save_state_file(const std::string& path, core::chain& chain,
                                            const std::function<bool()>& cancelled);

}  // namespace apiary::harness
