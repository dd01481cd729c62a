#include "apiary/core/blocklog/block_log_writer.hpp"

#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core::blocklog {

block_log_writer::block_log_writer(byte_sink& log, writer_options options)
    : log_(log),
      options_(std::move(options)),
      codec_(options_.dictionary_dir, options_.level),
      next_(options_.first_block_num) {
  if (options_.dictionary && !options_.compress)
    throw block_log_error(options_.file, std::nullopt, std::nullopt, "a dictionary without compression");
}

void block_log_writer::append(std::span<const std::uint8_t> packed) {
  const std::uint32_t num = next_;
  if (packed.size() < min_block_size || packed.size() > max_block_size)
    throw block_log_error(options_.file, num, size_,
                          "a block of " + std::to_string(packed.size()) + " bytes (a block takes " +
                              std::to_string(min_block_size) + " to " + std::to_string(max_block_size) + ")");
  if (const std::uint32_t held = *packed_block_num(packed); held != num)
    throw block_log_error(
        options_.file, num, size_,
        "given block " + std::to_string(held) + " out of sequence, block " + std::to_string(num) + " comes next");
  if (size_ > max_offset) throw block_log_error(options_.file, num, size_, "the log is longer than 2^48 bytes");
  block_id id;
  try {
    id = packed_block_id(packed);
  } catch (const decode_error& e) {
    throw block_log_error(options_.file, num, size_, std::string("malformed block header: ") + e.what());
  }
  position_word p;
  p.offset = size_;
  std::vector<std::uint8_t> frame;
  if (options_.compress) {
    p.attributes.compressed = true;
    p.attributes.dictionary = options_.dictionary;
    try {
      frame = codec_.compress(packed, options_.dictionary);
    } catch (const codec_error& e) {
      throw block_log_error(options_.file, num, size_, e.what());
    }
    packed = frame;
  }
  const std::uint64_t word = pack_position(p);
  log_.write(packed.data(), packed.size());
  log_.write(&word, sizeof word);
  size_ += packed.size() + sizeof word;
  entries_.push_back({word, strip_id(id)});
  ++next_;
}

std::vector<std::uint8_t> block_log_writer::artifacts() const {
  artifacts_header h;
  h.head_block_num = next_ - 1;
  h.git_revision = options_.revision;
  h.tail_block_num = options_.first_block_num;
  return format_artifacts(h, entries_);
}

}  // namespace apiary::core::blocklog
