// entry: one block as a block_log stores it, and what is known of a block from its packed
// bytes alone.
//
// A block_log is a sequence of entries, each the packed signed block (or its zstd frame)
// followed by an 8-byte little-endian position word:
//   bits 0-47   the entry's start offset in its file;
//   bits 48-55  the dictionary's number, when bit 56 is set;
//   bit 56      the frame was compressed with a dictionary;
//   bit 63      the block is a zstd frame (else it is stored as packed);
// the other bits are zero. The last 8 bytes of a file are thus the last entry's word, and
// each word leads to the one before it. A block's number is not stored: it is one more than
// the number in the first 4 bytes (big-endian) of its `previous` block id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "apiary/core/protocol/bytes.hpp"

namespace apiary::core::blocklog {

// The largest packed block a log holds, and so the most a frame may decompress to.
inline constexpr std::size_t max_block_size = 2 * 1024 * 1024;
// The shortest packed signed block: a header with an empty witness name, no extensions and a
// signature, and no transactions.
inline constexpr std::size_t min_block_size = 20 + 4 + 1 + 20 + 1 + 65 + 1;
// Blocks in each block_log_part.NNNN file of a split log (main net; a test net's hived uses 400).
inline constexpr std::uint32_t blocks_per_part = 1'000'000;
// Blocks each compression dictionary serves: dictionary N was trained on blocks N million on.
inline constexpr std::uint32_t blocks_per_dictionary = 1'000'000;

struct entry_attributes {
  bool compressed = false;
  std::optional<std::uint8_t> dictionary;  // only with compressed
  bool operator==(const entry_attributes&) const = default;
};

struct position_word {
  std::uint64_t offset = 0;  // where the entry starts
  entry_attributes attributes;
};

inline constexpr std::uint64_t max_offset = (std::uint64_t{1} << 48) - 1;

std::uint64_t pack_position(const position_word& p);
// The word's parts; nullopt when a bit outside them is set, or a dictionary comes without
// compression (Hive never writes either).
std::optional<position_word> unpack_position(std::uint64_t word);

// The number of the packed block `packed` (its previous block's number + 1); nullopt when it
// is shorter than a block id.
std::optional<std::uint32_t> packed_block_num(std::span<const std::uint8_t> packed);

// The id of the packed block `packed`: sha224 of its packed signed header, cut to 20 bytes,
// its first 4 bytes replaced by the block's number (big-endian), as Hive computes it. Reads
// the header alone (with Hive's header extensions: none, version, hardfork vote); throws
// core::decode_error naming the byte where the header is malformed or cut short.
block_id packed_block_id(std::span<const std::uint8_t> packed);

// The 16 bytes of a block id after its number: what the .artifacts file keeps.
using stripped_id = fixed_bytes<16>;
stripped_id strip_id(const block_id& id);
block_id unstrip_id(std::uint32_t block_num, const stripped_id& s);

// A file name of a split log: "block_log_part.0001" for part 1, holding blocks 1 to
// blocks_per_part; and the part a file name names (0: none).
std::string part_file_name(std::uint32_t part);
std::uint32_t part_of_file_name(const std::string& name);

}  // namespace apiary::core::blocklog
