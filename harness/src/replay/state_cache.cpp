#include "apiary/harness/replay/state_cache.hpp"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "apiary/core/base/clock.hpp"
#include "apiary/core/chain/chain_snapshot.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/rc_params_file.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/state_file.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/snapshot.hpp"

namespace apiary::harness {

namespace {

namespace fs = std::filesystem;

// Progress while a state is made: a line at most this often.
constexpr std::int64_t progress_every_ns = 5'000'000'000;

// What the key hashes: the blocks, then every shaping option of `apiary snapshot` as name=value
// in option order, then the RC parameters' values (--rc-params names a file, whose content
// counts, not its name).
std::string key_text(const run_config& c, std::uint32_t blocks) {
  std::string text = fmt::format("apiary state cache 2\nblocks={}\n", blocks);
  for (const config_entry& e : describe(c, scope_snapshot))
    if (e.shapes_state) text += e.name + "=" + (e.text.empty() ? "(" + e.default_text + ")" : e.text) + "\n";
  return text + rc_params_toml(c.chain.rc_params, c.chain.rc_scale, "");
}

std::string key_of(const run_config& c, std::uint32_t blocks) {
  const std::string text = key_text(c, blocks);
  return core::to_hex(core::sha256(text.data(), text.size())).substr(0, 16);
}

std::string layout_hex() { return fmt::format("{:016x}", core::state_file_layout_id()); }

std::string path_of(const std::string& dir, const std::string& key) {
  return dir + "/" + key + "-" + layout_hex() + ".state";
}

// The layouts other builds made this key's state with (their file names' second part).
std::vector<std::string> other_layouts(const std::string& dir, const std::string& key) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 16 + 1 + 16 + 6 && name.starts_with(key + "-") && name.ends_with(".state") &&
        name.substr(17, 16) != layout_hex())
      out.push_back(name.substr(17, 16));
  }
  return out;
}

// An exclusive lock on `path` (a file of its own, created if missing), held while it lives.
class cache_lock {
 public:
  explicit cache_lock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw state_cache_error("the state cache's lock " + shown_path(path) + ": " + std::strerror(errno));
  }
  ~cache_lock() { ::close(fd_); }  // closing releases the lock
  cache_lock(const cache_lock&) = delete;
  cache_lock& operator=(const cache_lock&) = delete;

  // Takes the lock, waiting while another process holds it (`waiting` is told once); false
  // when cancelled first.
  bool take(const std::function<bool()>& cancelled, const std::function<void()>& waiting) {
    bool told = false;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR)
        throw state_cache_error(std::string("the state cache's lock: ") + std::strerror(errno));
      if (!told) waiting();
      told = true;
      if (cancelled()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
  }

 private:
  int fd_;
};

// Makes the state into `path`: the genesis, the blocks, the state file. False when cancelled
// (nothing written); throws std::runtime_error when the blocks or the file fail.
bool make_state(const run_config& c, std::uint32_t blocks, const std::string& path,
                const std::function<bool()>& cancelled, const std::function<void(const std::string&)>& say) {
  run_config m = c;
  m.chain.memory = core::state_memory::mapped;
  // Tables sized for the state's blocks and an hour of a run after them.
  m.stop.blocks = blocks + core::chain_limits::expiration_blocks;
  m.stop.warmup_blocks = 0;
  std::unique_ptr<core::chain> chain;
  try {
    chain = make_genesis_chain(sized_chain(m), cancelled);
  } catch (const core::genesis_cancelled&) {
    return false;
  }
  const std::int64_t t0 = core::steady_now_ns();
  std::int64_t told = t0;
  const advance_result made = advance_chain(m, *chain, blocks, cancelled, [&](std::uint32_t n) {
    const std::int64_t now = core::steady_now_ns();
    if (now - told < progress_every_ns && n < blocks) return;
    told = now;
    say(fmt::format("making the state: {} of {} blocks in {:.1f} s", grouped(n), grouped(blocks),
                    seconds_of(now - t0)));
  });
  if (!made.error.empty()) throw std::runtime_error("making the state's blocks failed: " + made.error);
  if (made.cancelled || cancelled()) return false;
  chain->clear_pending();
  return save_state_file(path, *chain, cancelled).has_value();
}

}  // namespace

std::string state_cache_dir() { return user_cache_dir("APIARY_STATE_CACHE", "states"); }

std::string cached_state_path(const run_config& c, std::uint32_t blocks, const std::string& dir) {
  return path_of(dir, key_of(c, blocks));
}

std::optional<cached_state> find_or_make_state(const run_config& c, std::uint32_t blocks,
                                               const std::function<bool()>& cancelled,
                                               const std::function<void(const std::string&)>& say) {
  const std::string dir = state_cache_dir();
  if (dir.empty())
    throw state_cache_error("the state cache is off or has no directory: set APIARY_STATE_CACHE to one (or HOME)");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw state_cache_error("the state cache " + shown_path(dir) +
                            " cannot be made: " + (ec ? ec.message() : std::string("something else is there")) +
                            " (set APIARY_STATE_CACHE to a directory apiary can make)");
  const std::string key = key_of(c, blocks);
  cached_state out{.path = path_of(dir, key)};
  if (is_state_file(out.path)) return out;
  cache_lock lock(out.path.substr(0, out.path.size() - 6) + ".lock");
  if (!lock.take(cancelled, [&] { say("waiting for another apiary that is making " + shown_path(out.path)); }))
    return std::nullopt;
  if (is_state_file(out.path)) return out;  // made while this one waited
  const std::vector<std::string> others = other_layouts(dir, key);
  say(fmt::format("no state of {} blocks for these options in the cache{}: making {} once", grouped(blocks),
                  others.empty() ? std::string()
                                 : fmt::format(" for this build's layout {} (it holds them for the layout{} {}, which "
                                               "this build cannot open)",
                                               layout_hex(), others.size() == 1 ? "" : "s", fmt::join(others, ", ")),
                  shown_path(out.path)));
  const std::int64_t t0 = core::steady_now_ns();
  if (!make_state(c, blocks, out.path, cancelled, say)) return std::nullopt;
  out.made = true;
  out.make_ns = core::steady_now_ns() - t0;
  say(fmt::format("made {} ({}) in {:.1f} s", shown_path(out.path), bytes_text(fs::file_size(out.path, ec)),
                  seconds_of(out.make_ns)));
  return out;
}

bool forget_cached_state(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  return !ec;
}

}  // namespace apiary::harness
