// block_file: the blocks of a file apiary is given (`apiary blocks verify`, `apiary replay
// --blocks-from`), the one place that tells the kinds of block files apart:
//   - a Hive block log (block_log_reader.hpp): a directory (of block_log_part files, or
//     holding a block_log), a file named block_log or block_log_part.NNNN, or a file whose
//     last 8 bytes are a position word pointing back into it (the last byte of JSON is a
//     brace or white space, never a position word's top byte);
//   - otherwise block_api JSON (a get_block or get_block_range result, block_api_json.hpp).
// Every block reaches the caller as packed bytes with what the file states about it (a log
// states its ids where it has artifacts, never a signing key), whatever the kind.
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace apiary::core {
struct block_expectations;  // block_verify.hpp
}  // namespace apiary::core

namespace apiary::harness {

// A file that holds no blocks apiary reads, or whose blocks are damaged: one line. A block
// log's errors name the file, the block and the byte its entry starts at; the caller names a
// JSON file.
class block_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using block_visitor = std::function<void(std::span<const std::uint8_t> packed, const core::block_expectations&)>;

class block_file {
 public:
  // Opens `path` and tells its kind; `dictionary_dir` holds Hive's compression dictionaries
  // (NNNM.dict.zst) for a compressed block log, empty: none. Throws input_error
  // (io/input_file.hpp) when it cannot be read at all, block_file_error when it is no block
  // file or is damaged.
  explicit block_file(const std::string& path, const std::filesystem::path& dictionary_dir = {});
  ~block_file();
  block_file(const block_file&) = delete;
  block_file& operator=(const block_file&) = delete;

  // "block_api JSON" or "block_log".
  std::string_view kind() const;
  // The numbers of its first and last blocks; no blocks: first is last + 1.
  std::uint32_t first_block_num() const;
  std::uint32_t last_block_num() const;
  // Visits blocks `from` to `to` (within the two above) in order. Throws block_file_error for
  // a damaged block; a block_error that `visit` throws for a block of a log comes back as a
  // block_file_error naming the file and the entry's byte; anything else `visit` throws passes.
  void read(std::uint32_t from, std::uint32_t to, const block_visitor& visit);
  void read(const block_visitor& visit) { read(first_block_num(), last_block_num(), visit); }

 private:
  struct source;
  std::unique_ptr<source> s_;
};

}  // namespace apiary::harness
