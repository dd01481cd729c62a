// block_log_reader: reads a Hive block log, whole or block by block.
//
// A log is one file (`block_log`, or any name: it holds blocks 1 on) or a split log: the
// files block_log_part.0001, .0002, ... of one directory, part N holding blocks
// (N-1)*blocks_per_part + 1 on, each with its own offsets; hived may have removed the oldest
// parts, so the parts start anywhere but follow each other without a gap.
//
// Opening indexes every file: from its .artifacts file beside it when there is one (checked
// against the log: its head, its entries' order and sizes, its last position word), otherwise
// by walking the position words back from the file's end as hived does. It then reads each
// file's first and last block and checks their numbers. Reading a block checks the rest:
// the position word stored after it, the zstd frame, its number, and its id against the
// artifacts'. Every problem is a block_log_error naming the file, the block and the byte
// offset; nothing is read outside a file or trusted before it is checked.
//
// Thread safety: one reader per thread (it owns a zstd context and reads with pread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiary/core/blocklog/entry.hpp"
#include "apiary/core/protocol/bytes.hpp"

namespace apiary::core::blocklog {

struct reader_options {
  // Where the compression dictionaries are (zstd_codec.hpp); empty: a block compressed with
  // a dictionary is an error.
  std::filesystem::path dictionary_dir;
  std::uint32_t part_blocks = blocks_per_part;  // blocks in each part of a split log
};

// One block as read.
struct block_data {
  std::uint32_t num = 0;
  block_id id;                       // computed from its header
  std::vector<std::uint8_t> packed;  // the packed signed block (decompressed)
  entry_attributes stored;           // how the log stored it
  std::uint64_t stored_size = 0;     // its bytes in the log, without the position word
  std::string file;                  // the log file holding it (a part's, for a split log)
  std::uint64_t offset = 0;          // where its entry starts in that file
};

class block_log_reader {
 public:
  // `path`: a block log file; a block_log_part.NNNN file (the split log from that part on);
  // or a directory of part files (or holding a `block_log`). Throws block_log_error.
  explicit block_log_reader(const std::filesystem::path& path, reader_options options = {});
  ~block_log_reader();
  block_log_reader(const block_log_reader&) = delete;
  block_log_reader& operator=(const block_log_reader&) = delete;

  std::uint32_t first_block_num() const;
  std::uint32_t head_block_num() const;  // first - 1 when the log is empty
  std::size_t file_count() const;
  // Whether every file came with its artifacts.
  bool has_artifacts() const;
  // The id the artifacts give block `num`; nullopt without artifacts.
  std::optional<block_id> artifacts_id(std::uint32_t num) const;

  // Block `num`, first_block_num() <= num <= head_block_num(), checked as above. Throws
  // block_log_error (std::out_of_range for a number outside the log).
  block_data read_block(std::uint32_t num);

 private:
  struct segment;
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace apiary::core::blocklog
