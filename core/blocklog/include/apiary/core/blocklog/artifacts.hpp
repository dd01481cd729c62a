// artifacts: the .artifacts file Hive keeps beside each block_log file (block_log.artifacts,
// block_log_part.0001.artifacts), an index of its entries.
//
// A header, then 24 bytes for each block of the log file from its first on: the block's
// position word (entry.hpp) and the 16 bytes of its id after the number. The header, all
// integers little-endian:
//   0  uint32   head_block_num: the last block indexed
//   4  char[41] the writing tool's git revision, NUL-terminated
//   45 uint8    format major version (1)
//   46 uint8    format minor version (0 or 1)
//   47 uint8    dirty_close: the writer did not close it
//   48 uint32   tail_block_num (v1.1 only): the first block of the indexed range
//   52 uint32   generating_interrupted_at_block (v1.1 only): non-zero while hived is still
//               building the file
// so 48 bytes in v1.0 and 56 in v1.1; apiary reads both and writes v1.1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apiary/core/blocklog/entry.hpp"

namespace apiary::core::blocklog {

inline constexpr std::size_t artifacts_entry_size = 24;

struct artifacts_header {
  std::uint32_t head_block_num = 0;
  std::string git_revision;  // at most 40 characters
  std::uint8_t major = 1;
  std::uint8_t minor = 1;
  bool dirty_close = false;
  std::uint32_t tail_block_num = 0;                   // v1.1
  std::uint32_t generating_interrupted_at_block = 0;  // v1.1

  std::size_t size() const { return minor == 0 ? 48 : 56; }
};

struct artifacts_entry {
  std::uint64_t position = 0;  // the entry's position word
  stripped_id id;
};

struct artifacts {
  artifacts_header header;
  std::vector<artifacts_entry> entries;  // from the log file's first block on
};

// The file's content parsed: its header and entries. Throws block_log_error naming `file`
// and the byte where it is malformed: truncated, an unknown version, a length that is not the
// header plus whole entries.
artifacts parse_artifacts(std::span<const std::uint8_t> bytes, const std::string& file);

// The file's content (v1.1) for these entries.
std::vector<std::uint8_t> format_artifacts(const artifacts_header& header, std::span<const artifacts_entry> entries);

}  // namespace apiary::core::blocklog
