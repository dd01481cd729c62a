#include "apiary/harness/cycle/block_log_out.hpp"

#include <stdexcept>

#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/cycle/dump.hpp"

namespace apiary::harness {

namespace {

core::blocklog::writer_options options_for(const std::string& path) {
  core::blocklog::writer_options o;
  o.file = path;
  return o;
}

}  // namespace

block_log_out::block_log_out(const std::string& path, const core::chain& chain)
    : path_(path), chain_(chain), file_(path), sink_(file_), writer_(sink_, options_for(path)) {}

void block_log_out::read(std::span<const queen::tx_timing>, std::span<const queen::settled_block> blocks) {
  if (!error_.empty()) return;
  core::out_buffer packed;
  for (const queen::settled_block& c : blocks) {
    try {
      const core::full_block b = rebuild_block(c, chain_);
      if (core::compute_block_id(b.header) != c.id)
        throw std::runtime_error("--block-log " + path_ + ": block " + std::to_string(c.num) +
                                 " rebuilt with another id than the chain's");
      packed.clear();
      b.pack_into(packed);
      writer_.append(packed.span());
    } catch (const std::exception& e) {
      error_ = e.what();
      return;
    }
  }
}

std::uint64_t block_log_out::finish() {
  if (!error_.empty()) throw std::runtime_error(error_);
  output_file artifacts(path_ + ".artifacts");
  const std::vector<std::uint8_t> index = writer_.artifacts();
  artifacts.write(index.data(), index.size());
  file_.commit();
  artifacts.commit();
  return writer_.next_block_num() - 1;
}

}  // namespace apiary::harness
