// block_log_error: the one error type of the block log's reader and writer. Whatever is wrong
// with a file (truncated, a position word that points astray, a bad zstd frame, a missing
// dictionary, a block out of sequence, an artifacts file that disagrees with its log) is one
// of these, and its message is one line naming the file, and the block and the byte offset
// where they are known: "FILE: block N at byte B: what".
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace apiary::core::blocklog {

class block_log_error : public std::runtime_error {
 public:
  block_log_error(const std::string& file, std::optional<std::uint32_t> block, std::optional<std::uint64_t> offset,
                  const std::string& what);

  const std::string& file() const { return file_; }
  std::optional<std::uint32_t> block() const { return block_; }
  std::optional<std::uint64_t> offset() const { return offset_; }

 private:
  std::string file_;
  std::optional<std::uint32_t> block_;
  std::optional<std::uint64_t> offset_;
};

}  // namespace apiary::core::blocklog
