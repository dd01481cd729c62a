// genesis_key_cache: the genesis accounts' public keys kept on disk once derived, so that a big
// genesis pays its key derivation once per machine instead of once per run
// (core/chain/genesis_keys.hpp: about 25 µs of CPU per account). The keys depend only on the
// account prefix and the key password, so one file serves every run, replay, multirun round
// and ladder step with those two, whatever their other options: a run of 3,000,000 accounts
// after one of 1,000,000 derives only the 2,000,000 it lacks and keeps them all.
//
// Where: $APIARY_KEY_CACHE (a directory; "off": no cache), else $XDG_CACHE_HOME/apiary/keys,
// else $HOME/.cache/apiary/keys. Used from 1,000 accounts up (fewer derive in milliseconds).
// One file per prefix and password, keys-<16 hex digits>.bin:
//
//   header    magic "APIARYKC", format version (u32), accounts (u32),
//             prefix length (u32) and bytes, password length (u32) and bytes
//             SHA-256 of the header (32 bytes)
//   chunks    per 65,536 accounts (the last one fewer): each account's posting and active key
//             (33 bytes each), then the chunk's SHA-256 (32 bytes)
//
// integers little-endian. A genesis reads the header and only the chunks of its accounts. A
// key cache that does not serve (wrong size, version, prefix, password or checksum) is
// ignored with a note and replaced; a key that the checksums pass but a fresh derivation of a
// few accounts contradicts is refused the same way, so the state (and its digest) never
// depends on the cache. A cache that cannot be written costs only its speed: the note says
// why. Files are replaced atomically, by renaming an exclusive temporary file beside them
// (output_file's own files), so runs sharing a cache never read half a file. apiary writes
// only into files of its own: what it did not make at a cache file's name (a symbolic link,
// a directory, a FIFO, a device, a file that does not start with the magic) is neither read
// through nor replaced; the genesis derives its keys without the cache, with a one-line
// warning on stderr.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/chain/genesis_keys.hpp"

namespace apiary::harness {

// The cache directory the environment names; empty: no cache.
std::string key_cache_dir();

// The file in `dir` that holds the keys of the genesis `options` describes (empty without a
// directory): apiary's own, which no output of a command may replace.
std::string key_cache_file(const core::chain_options& options, const std::string& dir);

struct genesis_key_set {
  std::vector<core::account_keys> keys;  // account i at [i]: every genesis account, or none
  std::uint32_t cached = 0;              // how many came from the cache
  std::string note;                      // one line for the log: where the keys came from
  std::string warning;                   // one line for stderr when the cache's path is not apiary's
};

// The keys of the genesis `options` describes, from the cache in `dir` (empty: none) and
// derived for the rest, which are then saved. `cancelled` as derive_genesis_keys(), which
// throws core::genesis_cancelled. Below 1,000 accounts: no keys (the chain derives them).
genesis_key_set genesis_keys(const core::chain_options& options, const std::string& dir,
                             const std::function<bool()>& cancelled = {});

// The chain of the genesis `options` describes, its keys from the key cache key_cache_dir()
// names (derived and saved when missing); `note` (optional) receives where they came from.
// Throws core::genesis_cancelled as the chain's constructor does.
std::unique_ptr<core::chain> make_genesis_chain(const core::chain_options& options,
                                                const std::function<bool()>& cancelled = {},
                                                std::string* note = nullptr);

}  // namespace apiary::harness
