// state_file: chain state snapshot files (the format: core/chain/chain_snapshot.hpp), which
// `apiary snapshot` writes and `apiary run --state` and `apiary replay --state` start from.
// Loading reads the whole file (input_file.hpp: a regular file within the caller's size
// bound), lets the core check it and build the chain, and times it all; a file that cannot be
// used is one state_file_error naming it and what is wrong. Writing goes through output_file
// (an fsync'ed temporary renamed into place) in chunks, and stops between two when asked:
// then no file is left.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace apiary::core {
class chain;
struct chain_options;
}  // namespace apiary::core

namespace apiary::harness {

// Where a chain came from, for the reports: a snapshot, or (path empty) its genesis.
struct state_source {
  std::string path;
  std::string state_digest;  // hex: the digest the snapshot recorded when it was written
  std::uint32_t head_block_num = 0;
  std::uint64_t bytes = 0;
  std::int64_t load_ns = 0;  // reading, checking and building
};

// The snapshot cannot be used: "--state PATH: what is wrong" (bad usage: nothing ran).
class state_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The chain the snapshot at `path` holds, with `options` (whose state_options must be the
// snapshot's); `source` receives where it came from. A file above max_bytes is refused before
// it is read. Throws state_file_error.
std::unique_ptr<core::chain> load_state_file(const std::string& path, const core::chain_options& options,
                                             std::uint64_t max_bytes, state_source& source);

// Writes the chain's state (no pending transactions: chain::write_snapshot) to `path`;
// `cancelled` is asked between chunks, and when it says so the temporary file is removed and
// nullopt returned. Otherwise what was written, checked as a load checks it (load_ns: the
// writing). Throws std::runtime_error naming the path.
std::optional<state_source> save_state_file(const std::string& path, const core::chain& chain,
                                            const std::function<bool()>& cancelled);

}  // namespace apiary::harness
