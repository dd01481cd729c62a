// block_log_writer: writes packed blocks as a Hive block log file and its .artifacts (v1.1),
// so that Hive's tools (block_log_util, hived's replay) read what apiary made.
//
// The log's bytes go to a byte_sink as blocks are appended; the artifacts are kept (24 bytes a
// block) and come out whole at the end, for the caller to write beside the log. Writing to a
// temporary file and renaming it into place is the sink's (the harness's output_file), so a
// failed or interrupted write leaves no half file under the log's name.
//
// Each block may be stored as a zstd frame (magicless, optionally with one of Hive's
// dictionaries: zstd_codec.hpp). Blocks must come in sequence from options.first_block_num
// (1 for a `block_log`; a split log's part N starts at (N-1) * blocks_per_part + 1).
// Thread safety: one writer per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apiary/core/blocklog/artifacts.hpp"
#include "apiary/core/blocklog/entry.hpp"
#include "apiary/core/blocklog/zstd_codec.hpp"

namespace apiary::core::blocklog {

// Where the log's bytes go. write() throws on failure.
class byte_sink {
 public:
  virtual ~byte_sink() = default;
  virtual void write(const void* data, std::size_t size) = 0;

 protected:
  byte_sink() = default;
  byte_sink(const byte_sink&) = default;
  byte_sink& operator=(const byte_sink&) = default;
};

// A sink into memory: the tests', and whoever wants the bytes.
class memory_sink final : public byte_sink {
 public:
  void write(const void* data, std::size_t size) override {
    const auto* p = static_cast<const std::uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + size);
  }
  std::vector<std::uint8_t> bytes;
};

struct writer_options {
  std::string file;  // the log's name in messages
  bool compress = false;
  std::optional<std::uint8_t> dictionary;  // with compress: the dictionary every block uses
  std::filesystem::path dictionary_dir;    // where it is (zstd_codec.hpp)
  int level = 3;                           // zstd's
  std::uint32_t first_block_num = 1;
  std::string revision = "apiary";  // the artifacts header's revision field (40 characters at most)
};

class block_log_writer {
 public:
  block_log_writer(byte_sink& log, writer_options options);

  // Appends block next_block_num(), packed, with its position word. Throws block_log_error
  // naming the block: its number is not the next one, it is no block (too short, a malformed
  // header), too large, or cannot be compressed (a missing dictionary); nothing is written then.
  void append(std::span<const std::uint8_t> packed);

  std::uint32_t next_block_num() const { return next_; }
  std::uint64_t size() const { return size_; }  // the log's bytes so far
  // The artifacts file for the blocks appended so far.
  std::vector<std::uint8_t> artifacts() const;

 private:
  byte_sink& log_;
  writer_options options_;
  zstd_codec codec_;
  std::uint32_t next_;
  std::uint64_t size_ = 0;
  std::vector<artifacts_entry> entries_;
};

}  // namespace apiary::core::blocklog
