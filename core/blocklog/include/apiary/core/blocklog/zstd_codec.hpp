// zstd_codec: a block's zstd frame as Hive's block_log stores it, and the dictionaries.
//
// Hive writes each compressed block as one zstd frame without the 4-byte magic number, the
// content size, the dictionary id or a checksum (ZSTD_f_zstd1_magicless): the position word
// says whether and with which dictionary it was compressed. This codec makes the same frames
// through zstd's stable API (the frame without its first 4 bytes) and reads them by putting
// the magic number back, so a stock `zstd -d` reads a stored frame with 28 B5 2F FD before it.
//
// Dictionaries: Hive's, one per million blocks (openhive-network/compression_dictionaries),
// each a file NNNM.dict.zst (dictionary 1: 001M.dict.zst) holding the dictionary itself
// zstd-compressed. They are read from one directory when first needed and kept, digested.
// Thread safety: one codec per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace apiary::core::blocklog {

// Why a frame or a dictionary cannot be used; the block log's reader and writer add the file,
// block and offset.
class codec_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file name of dictionary `number`: "001M.dict.zst".
std::string dictionary_file_name(std::uint8_t number);

class zstd_codec {
 public:
  // Dictionaries come from `dictionary_dir` (empty: none; a block that needs one is an error
  // naming the option's absence). `level`: zstd's compression level.
  explicit zstd_codec(std::filesystem::path dictionary_dir = {}, int level = 3);
  ~zstd_codec();
  zstd_codec(const zstd_codec&) = delete;
  zstd_codec& operator=(const zstd_codec&) = delete;

  // The frame, without its magic number. Throws codec_error.
  std::vector<std::uint8_t> compress(std::span<const std::uint8_t> block, std::optional<std::uint8_t> dictionary);
  // The block a magicless frame holds, at most max_block_size bytes. Throws codec_error:
  // "bad zstd frame: ..." or the dictionary's problem.
  std::vector<std::uint8_t> decompress(std::span<const std::uint8_t> frame, std::optional<std::uint8_t> dictionary);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace apiary::core::blocklog
