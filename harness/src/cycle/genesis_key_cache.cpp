#include "apiary/harness/cycle/genesis_key_cache.hpp"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "apiary/core/protocol/hash.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {

namespace {

constexpr std::string_view magic = "APIARYKC";
constexpr std::uint32_t format_version = 2;
constexpr std::uint32_t smallest_cached = 1000;
constexpr std::size_t key_bytes = 33;
constexpr std::size_t account_bytes = 2 * key_bytes;
constexpr std::size_t digest_bytes = 32;
constexpr std::uint32_t chunk_accounts = 65536;
// Longer prefixes or passwords than any genesis takes: a header that claims more is damage.
constexpr std::uint32_t longest_text = 4096;
// Accounts re-derived from a file that passed its checksums, spread over what was read.
constexpr std::uint32_t spot_checks = 8;

std::string file_name(const core::chain_options& o) {
  std::string text = o.account_prefix;
  text.push_back('\0');
  text += o.key_password;
  const core::sha256_digest d = core::sha256(text.data(), text.size());
  return "keys-" + core::to_hex(d).substr(0, 16) + ".bin";
}

void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

std::string header(const core::chain_options& o, std::uint32_t accounts) {
  std::string h(magic);
  put_u32(h, format_version);
  put_u32(h, accounts);
  put_u32(h, static_cast<std::uint32_t>(o.account_prefix.size()));
  h += o.account_prefix;
  put_u32(h, static_cast<std::uint32_t>(o.key_password.size()));
  h += o.key_password;
  return h;
}

std::uint64_t chunks_of(std::uint32_t accounts) {
  return (std::uint64_t{accounts} + chunk_accounts - 1) / chunk_accounts;
}

// The file's size for a header of `header_size` bytes and `accounts` accounts.
std::uint64_t file_size_of(std::size_t header_size, std::uint32_t accounts) {
  return header_size + digest_bytes + std::uint64_t{accounts} * account_bytes + chunks_of(accounts) * digest_bytes;
}

bool digest_matches(const std::string& bytes, const char* digest) {
  const core::sha256_digest sum = core::sha256(bytes.data(), bytes.size());
  return std::memcmp(sum.begin(), digest, digest_bytes) == 0;
}

// Reads a file piece by piece; `ok` turns false at the first short read. Owns the descriptor.
struct reader {
  explicit reader(int descriptor) : fd(descriptor) {}
  ~reader() { close(fd); }
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;

  int fd;
  std::uint64_t at = 0;  // the bytes read so far
  bool ok = true;
  std::string bytes(std::size_t n) {
    std::string b(n, '\0');
    std::size_t got = 0;
    while (ok && got < n) {
      const ssize_t r = ::read(fd, b.data() + got, n - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) ok = false;
      if (r > 0) got += static_cast<std::size_t>(r);
    }
    at += got;
    return b;
  }
  std::uint32_t u32(std::string& echo) {
    std::string b = bytes(4);
    echo += b;
    std::uint32_t v = 0;
    std::memcpy(&v, b.data(), 4);
    return v;
  }
};

// The header after its magic, checked: the number of accounts the file holds, or nullopt with `why`.
std::optional<std::uint32_t> read_header(reader& r, const core::chain_options& o, std::string& why) {
  std::string h(magic);  // the caller read it
  const std::uint32_t version = r.u32(h);
  if (!r.ok || version != format_version) {
    why = fmt::format("format version {}, this build reads {}", version, format_version);
    return std::nullopt;
  }
  const std::uint32_t accounts = r.u32(h);
  const std::uint32_t prefix_size = r.u32(h);
  const std::string prefix = r.bytes(std::min(prefix_size, longest_text));
  h += prefix;
  const std::uint32_t password_size = r.u32(h);
  const std::string password = r.bytes(std::min(password_size, longest_text));
  h += password;
  const std::string digest = r.bytes(digest_bytes);
  if (!r.ok) {
    why = "truncated in its header";
    return std::nullopt;
  }
  if (!digest_matches(h, digest.data())) {
    why = "its header's checksum does not match (a damaged file)";
    return std::nullopt;
  }
  if (prefix != o.account_prefix || password != o.key_password) {
    why = "its header names another prefix or password";
    return std::nullopt;
  }
  return accounts;
}

// The keys of the first `want` of the file's `accounts` accounts, from the chunks that hold
// them (each read and checked whole), or none with `why`.
std::vector<core::account_keys> read_chunks(reader& r, std::uint32_t accounts, std::uint32_t want, std::string& why) {
  std::vector<core::account_keys> keys(want);
  for (std::uint32_t first = 0; first < want; first += chunk_accounts) {
    const std::uint32_t n = std::min(chunk_accounts, accounts - first);
    const std::string chunk = r.bytes(std::size_t{n} * account_bytes);
    const std::string digest = r.bytes(digest_bytes);
    if (!r.ok || !digest_matches(chunk, digest.data())) {
      why = fmt::format("the checksum of its accounts from {} does not match (a damaged file)", first);
      return {};
    }
    const char* p = chunk.data();
    for (std::uint32_t i = first; i < std::min(first + n, want); ++i, p += account_bytes) {
      std::memcpy(keys[i].posting.begin(), p, key_bytes);
      std::memcpy(keys[i].active.begin(), p + key_bytes, key_bytes);
    }
  }
  return keys;
}

// Whether a few accounts' keys, spread over those read, are what the derivation gives.
bool spot_check(const std::vector<core::account_keys>& keys, const core::chain_options& o) {
  const auto n = static_cast<std::uint32_t>(keys.size());
  for (std::uint32_t s = 0; s < spot_checks && n > 0; ++s) {
    const std::uint32_t i =
        s == spot_checks - 1 ? n - 1 : static_cast<std::uint32_t>(std::uint64_t{n} * s / spot_checks);
    if (core::derive_genesis_keys(o.account_prefix, o.key_password, i, i + 1).front() != keys[i]) return false;
  }
  return true;
}

// The cache file opened for reading when it is a regular file, never through a link (and
// checked to be the file examined): its descriptor; else -1, with `why` empty when nothing is
// there and saying what is there otherwise.
int open_cache(const std::string& path, std::string& why) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return -1;  // nothing there (or no directory: saving says why)
  if (!S_ISREG(st.st_mode)) {
    why = file_kind(st.st_mode);
    return -1;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat now {};
  if (fd >= 0 && fstat(fd, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) return fd;
  why = fd < 0 ? std::string("cannot be read: ") + std::strerror(errno) : "it changed while it was opened";
  if (fd >= 0) close(fd);
  return -1;
}

// The cached keys of the genesis `o` describes: as many of its accounts as the file holds,
// reading only the chunks they are in; none, with the reason in `why`, when it cannot serve.
// `mine` says whether the file may be replaced: nothing is there, or a key cache (damaged or
// not); a link, a directory, a FIFO, a device or a file that is no key cache is left alone.
std::vector<core::account_keys> load(const std::string& path, const core::chain_options& o, std::string& why,
                                     bool& mine) {
  const int fd = open_cache(path, why);
  mine = fd >= 0 || why.empty();
  if (fd < 0) return {};
  reader r(fd);
  struct stat st {};
  const std::uint64_t size = fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  if (r.bytes(magic.size()) != magic || !r.ok) {
    why = "not a key cache (its first bytes are not APIARYKC): a file apiary did not make";
    mine = false;
    return {};
  }
  const std::optional<std::uint32_t> accounts = read_header(r, o, why);
  if (!accounts) return {};
  const std::uint64_t expected = file_size_of(r.at - digest_bytes, *accounts);
  if (size != expected) {
    why = fmt::format("{} ({} bytes, not the {} of {} accounts)", size < expected ? "truncated" : "too long", size,
                      expected, *accounts);
    return {};
  }
  std::vector<core::account_keys> keys = read_chunks(r, *accounts, std::min(*accounts, o.genesis_accounts), why);
  if (!keys.empty() && !spot_check(keys, o)) {
    why = "a key in it is not the account's (a file from another derivation)";
    keys.clear();
  }
  return keys;
}

// Writes the cache as a file of apiary's own: a temporary beside it, renamed over it.
void save(const std::string& path, const core::chain_options& o, const std::vector<core::account_keys>& keys) {
  const auto accounts = static_cast<std::uint32_t>(keys.size());
  const std::string h = header(o, accounts);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  output_file out(path, output_file::own_file_t{});
  out.write(h.data(), h.size());
  out.write(core::sha256(h.data(), h.size()).begin(), digest_bytes);
  std::string chunk;
  for (std::uint32_t first = 0; first < accounts; first += chunk_accounts) {
    const std::uint32_t n = std::min(chunk_accounts, accounts - first);
    chunk.resize(std::size_t{n} * account_bytes);
    char* p = chunk.data();
    for (std::uint32_t i = first; i < first + n; ++i, p += account_bytes) {
      std::memcpy(p, keys[i].posting.begin(), key_bytes);
      std::memcpy(p + key_bytes, keys[i].active.begin(), key_bytes);
    }
    out.write(chunk.data(), chunk.size());
    out.write(core::sha256(chunk.data(), chunk.size()).begin(), digest_bytes);
  }
  out.commit();
}

}  // namespace

std::string key_cache_dir() { return user_cache_dir("APIARY_KEY_CACHE", "keys"); }

std::string key_cache_file(const core::chain_options& options, const std::string& dir) {
  return dir.empty() ? std::string() : dir + "/" + file_name(options);
}

genesis_key_set genesis_keys(const core::chain_options& options, const std::string& dir,
                             const std::function<bool()>& cancelled) {
  genesis_key_set out;
  const std::uint32_t n = options.genesis_accounts;
  if (n < smallest_cached || dir.empty()) {
    out.note = dir.empty() ? "keys derived (no key cache)" : "keys derived";
    return out;
  }
  const std::string path = key_cache_file(options, dir);
  std::string why;
  bool mine = true;
  out.keys = load(path, options, why, mine);
  out.cached = static_cast<std::uint32_t>(out.keys.size());
  if (out.cached == n) {
    out.note = "keys from the cache " + path;
    return out;
  }
  std::vector<core::account_keys> more =
      core::derive_genesis_keys(options.account_prefix, options.key_password, out.cached, n, cancelled);
  out.keys.insert(out.keys.end(), more.begin(), more.end());
  out.note = fmt::format("{} keys from the cache, {} derived", grouped(out.cached), grouped(n - out.cached));
  if (!mine) {
    out.warning = "the key cache's file " + path + ": " + why +
                  "; apiary leaves it as it is and derives the keys without the cache";
    out.note += "; " + out.warning;
    return out;
  }
  if (!why.empty()) out.note += " (the cache " + path + " was not used: " + why + ")";
  try {
    save(path, options, out.keys);
    out.note += ", saved to " + path;
  } catch (const std::exception& e) {
    out.note += fmt::format("; not saved: {}", e.what());
  }
  return out;
}

std::unique_ptr<core::chain> make_genesis_chain(const core::chain_options& options,
                                                const std::function<bool()>& cancelled, std::string* note) {
  const genesis_key_set keys = genesis_keys(options, key_cache_dir(), cancelled);
  if (note != nullptr) *note = keys.note;
  if (!keys.warning.empty()) std::fprintf(stderr, "apiary: warning: %s\n", one_line(keys.warning).c_str());
  return std::make_unique<core::chain>(options, cancelled, keys.keys);
}

}  // namespace apiary::harness
