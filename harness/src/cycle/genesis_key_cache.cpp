#include "apiary/harness/cycle/genesis_key_cache.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "apiary/core/protocol/hash.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {

namespace {

constexpr std::string_view magic = "APIARYKC";
constexpr std::uint32_t format_version = 1;
constexpr std::uint32_t smallest_cached = 1000;
constexpr std::size_t key_bytes = 33;
constexpr std::size_t account_bytes = 2 * key_bytes;
constexpr std::size_t digest_bytes = 32;
// The most accounts a genesis has, their keys and a header of the longest names.
constexpr std::uint64_t largest_file = std::uint64_t{max_genesis_accounts} * account_bytes + 4096;
// Accounts re-derived from a file that passed its checksum, spread over it.
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

// A reader over the file's bytes that never reads past the end.
struct cursor {
  std::string_view rest;
  bool take(std::size_t n, std::string_view& out) {
    if (rest.size() < n) return false;
    out = rest.substr(0, n);
    rest.remove_prefix(n);
    return true;
  }
  bool u32(std::uint32_t& v) {
    std::string_view b;
    if (!take(4, b)) return false;
    std::memcpy(&v, b.data(), 4);
    return true;
  }
};

// The cached keys; none, with the reason in `why`, when the file cannot serve.
std::vector<core::account_keys> parse(const std::string& bytes, const core::chain_options& o, std::string& why) {
  cursor c{bytes};
  std::string_view m, prefix, password;
  std::uint32_t version = 0, accounts = 0, prefix_size = 0, password_size = 0;
  if (!c.take(magic.size(), m) || m != magic) {
    why = "not a key cache";
    return {};
  }
  if (!c.u32(version) || version != format_version) {
    why = fmt::format("format version {}, this build reads {}", version, format_version);
    return {};
  }
  if (!c.u32(accounts) || !c.u32(prefix_size) || !c.take(prefix_size, prefix) || !c.u32(password_size) ||
      !c.take(password_size, password)) {
    why = fmt::format("truncated in its header ({} bytes)", bytes.size());
    return {};
  }
  if (prefix != o.account_prefix || password != o.key_password) {
    why = "its header names another prefix or password";
    return {};
  }
  const std::size_t body = bytes.size() - c.rest.size();
  const std::size_t expected = body + std::size_t{accounts} * account_bytes + digest_bytes;
  if (bytes.size() != expected) {
    why = fmt::format("{} ({} bytes, not the {} of {} accounts)", bytes.size() < expected ? "truncated" : "too long",
                      bytes.size(), expected, accounts);
    return {};
  }
  const std::size_t signed_size = bytes.size() - digest_bytes;
  const core::sha256_digest sum = core::sha256(bytes.data(), signed_size);
  if (std::memcmp(sum.begin(), bytes.data() + signed_size, digest_bytes) != 0) {
    why = "its checksum does not match (a damaged file)";
    return {};
  }
  std::vector<core::account_keys> keys(accounts);
  const char* p = bytes.data() + body;
  for (auto& k : keys) {
    std::memcpy(k.posting.begin(), p, key_bytes);
    std::memcpy(k.active.begin(), p + key_bytes, key_bytes);
    p += account_bytes;
  }
  return keys;
}

// Whether a few accounts' keys, spread over the file, are what the derivation gives.
bool spot_check(const std::vector<core::account_keys>& keys, const core::chain_options& o) {
  const auto n = static_cast<std::uint32_t>(keys.size());
  for (std::uint32_t s = 0; s < spot_checks && n > 0; ++s) {
    const std::uint32_t i =
        s == spot_checks - 1 ? n - 1 : static_cast<std::uint32_t>(std::uint64_t{n} * s / spot_checks);
    if (core::derive_genesis_keys(o.account_prefix, o.key_password, i, i + 1).front() != keys[i]) return false;
  }
  return true;
}

void save(const std::string& path, const core::chain_options& o, const std::vector<core::account_keys>& keys) {
  std::string bytes = header(o, static_cast<std::uint32_t>(keys.size()));
  const std::size_t body = bytes.size();
  bytes.resize(body + keys.size() * account_bytes);
  char* p = bytes.data() + body;
  for (const auto& k : keys) {
    std::memcpy(p, k.posting.begin(), key_bytes);
    std::memcpy(p + key_bytes, k.active.begin(), key_bytes);
    p += account_bytes;
  }
  const core::sha256_digest sum = core::sha256(bytes.data(), bytes.size());
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  output_file out(path);
  out.write(bytes.data(), bytes.size());
  out.write(sum.begin(), sum.size());
  out.commit();
}

// The cached keys for `o` (at most o.genesis_accounts of them), and why none, if none.
std::vector<core::account_keys> load(const std::string& path, const core::chain_options& o, std::string& why) {
  if (!std::filesystem::exists(path)) return {};
  std::string bytes;
  try {
    bytes = read_input_file(path, largest_file, "key cache");
  } catch (const input_error& e) {
    why = e.what();
    return {};
  }
  std::vector<core::account_keys> keys = parse(bytes, o, why);
  if (keys.size() > o.genesis_accounts) keys.resize(o.genesis_accounts);
  if (!keys.empty() && !spot_check(keys, o)) {
    why = "a key in it is not the account's (a file from another derivation)";
    keys.clear();
  }
  return keys;
}

}  // namespace

std::string key_cache_dir() {
  const char* set = std::getenv("APIARY_KEY_CACHE");
  if (set != nullptr && *set != '\0') return std::string_view(set) == "off" ? std::string() : std::string(set);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::string(xdg) + "/apiary/keys";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::string(home) + "/.cache/apiary/keys";
  return {};
}

genesis_key_set genesis_keys(const core::chain_options& options, const std::string& dir,
                             const std::function<bool()>& cancelled) {
  genesis_key_set out;
  const std::uint32_t n = options.genesis_accounts;
  if (n < smallest_cached || dir.empty()) {
    out.note = dir.empty() ? "keys derived (no key cache)" : "keys derived";
    return out;
  }
  const std::string path = dir + "/" + file_name(options);
  std::string why;
  out.keys = load(path, options, why);
  out.cached = static_cast<std::uint32_t>(out.keys.size());
  if (out.cached == n) {
    out.note = "keys from the cache " + path;
    return out;
  }
  std::vector<core::account_keys> more =
      core::derive_genesis_keys(options.account_prefix, options.key_password, out.cached, n, cancelled);
  out.keys.insert(out.keys.end(), more.begin(), more.end());
  out.note = fmt::format("{} keys from the cache, {} derived", grouped(out.cached), grouped(n - out.cached));
  if (!why.empty()) out.note += " (the cache " + path + " was not used: " + why + ")";
  try {
    save(path, options, out.keys);
    out.note += ", saved to " + path;
  } catch (const std::exception& e) {
    out.note += fmt::format("; not saved: {}", e.what());
  }
  return out;
}

}  // namespace apiary::harness
