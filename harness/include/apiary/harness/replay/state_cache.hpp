// state_cache: the states `apiary run --state-blocks N` and `apiary replay --state-blocks N`
// start from: the state file N blocks of the mix make on the genesis, made once per machine
// and kept, so that every run, A/B round, ladder step and bisection step of a realistic state
// opens it in milliseconds (docs/snapshots.md, "The state cache") instead of making it.
//
// Where: $APIARY_STATE_CACHE (a directory), else $XDG_CACHE_HOME/apiary/states, else
// $HOME/.cache/apiary/states. One state file per key, named KEY-LAYOUT.state:
//   KEY     16 hex digits of a SHA-256 over N and every option `apiary snapshot` takes that
//           shapes the state (config_entry::shapes_state: the genesis, the mix and its seed and
//           threads, signing, the block size, the RC parameters' values, the pools), so the
//           chain's switches (dedup, custom-ops, rc, reuse-pending, ...) share one state;
//   LAYOUT  this build's state_file_layout_id() in hex: a build whose layout differs makes its
//           own state, and says which other layouts the cache holds for the key.
// A missing state is made under an exclusive lock (KEY-LAYOUT.lock beside it: a second process
// waits for the first, then opens what it made) with a progress line, written to a temporary
// file and renamed into place, so no process ever sees half a state. A cached state that does
// not open (damaged, truncated) is made again, with a note.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "apiary/harness/config/run_config.hpp"

namespace apiary::harness {

// The cache cannot be used (no directory, one that cannot be made): bad usage, one line.
class state_cache_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The directory the environment names for the cache.
std::string state_cache_dir();

// The file in `dir` that holds the state `blocks` blocks of c's mix make on c's genesis, with
// this build's layout.
std::string cached_state_path(const run_config& c, std::uint32_t blocks, const std::string& dir);

struct cached_state {
  std::string path;
  bool made = false;         // made now, rather than found
  std::int64_t make_ns = 0;  // making and writing it (0 when found)
};

// The cached state for c and `blocks` (resolve()d c), made when it is missing. `say` gets one
// line at a time (the note on what was found or made, the progress while making, about every
// five seconds); `cancelled` is asked between blocks and while waiting for another process's
// lock. nullopt when cancelled: nothing is left in the cache then. Throws state_cache_error
// when the cache cannot be used, std::runtime_error when making the state failed.
std::optional<cached_state> find_or_make_state(const run_config& c, std::uint32_t blocks,
                                               const std::function<bool()>& cancelled,
                                               const std::function<void(const std::string&)>& say);

// Removes a cached state that would not open (so the next find_or_make_state makes it again);
// false when it could not be removed.
bool forget_cached_state(const std::string& path);

}  // namespace apiary::harness
