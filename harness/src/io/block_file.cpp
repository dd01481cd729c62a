#include "apiary/harness/io/block_file.hpp"

#include <fstream>
#include <optional>
#include <vector>

#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/blocklog/block_log_reader.hpp"
#include "apiary/core/blocklog/entry.hpp"
#include "apiary/core/protocol/block_api_json.hpp"
#include "apiary/core/protocol/block_verify.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/harness/io/input_file.hpp"

namespace apiary::harness {

namespace {

// A block_api JSON file's tree takes several times the file in memory: a generous bound.
constexpr std::uint64_t most_json_bytes = std::uint64_t{1} << 30;

// Whether the regular file at `path` ends in a position word that points back into it, as a
// block_log does. Its last byte, the word's top byte, is then 0x00, 0x01, 0x80 or 0x81: never
// the closing brace or white space that ends JSON.
bool ends_in_position_word(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff size = in.tellg();
  unsigned char bytes[sizeof(std::uint64_t)];
  if (size <= static_cast<std::streamoff>(sizeof bytes)) return false;
  if (!in.seekg(size - static_cast<std::streamoff>(sizeof bytes)) ||
      !in.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    return false;
  std::uint64_t word = 0;
  for (std::size_t i = sizeof bytes; i-- > 0;) word = word << 8 | bytes[i];
  const auto p = core::blocklog::unpack_position(word);
  return p && p->offset < static_cast<std::uint64_t>(size) - sizeof bytes;
}

// Whether `path` is read as a Hive block log (the header says which paths are).
bool is_block_log(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // read_input_file says what it is
  const std::string name = std::filesystem::path(path).filename().string();
  return name == "block_log" || core::blocklog::part_of_file_name(name) != 0 || ends_in_position_word(path);
}

}  // namespace

struct block_file::source {
  std::vector<core::json_block> json;  // block_api JSON, decoded whole
  std::optional<core::blocklog::block_log_reader> log;
  std::uint32_t first = 1;
  std::uint32_t last = 0;
};

block_file::block_file(const std::string& path, const std::filesystem::path& dictionary_dir)
    : s_(std::make_unique<source>()) {
  if (is_block_log(path)) {
    try {
      s_->log.emplace(path, core::blocklog::reader_options{.dictionary_dir = dictionary_dir});
    } catch (const core::blocklog::block_log_error& e) {
      throw block_file_error(e.what());
    }
    s_->first = s_->log->first_block_num();
    s_->last = s_->log->head_block_num();
    return;
  }
  const std::string content = read_input_file(path, most_json_bytes, "block file");
  if (!core::looks_like_json_object(content))
    throw block_file_error(
        "neither block_api JSON (a get_block or get_block_range result) nor a Hive block_log (named block_log "
        "or block_log_part.NNNN, or ending in a position word): apiary reads no other kind of block file");
  try {
    s_->json = core::read_block_api_json(content);
  } catch (const core::block_json_error& e) {
    throw block_file_error(e.what());
  }
  if (!s_->json.empty()) {
    s_->first = s_->json.front().block.block_num();
    s_->last = s_->json.back().block.block_num();
  }
}

block_file::~block_file() = default;

std::string_view block_file::kind() const { return s_->log ? "block_log" : "block_api JSON"; }
std::uint32_t block_file::first_block_num() const { return s_->first; }
std::uint32_t block_file::last_block_num() const { return s_->last; }

void block_file::read(std::uint32_t from, std::uint32_t to, const block_visitor& visit) {
  if (s_->log) {
    for (std::uint32_t n = from; n <= to && n >= from; ++n) {
      core::blocklog::block_data b;
      try {
        b = s_->log->read_block(n);
      } catch (const core::blocklog::block_log_error& e) {
        throw block_file_error(e.what());
      }
      core::block_expectations expected;
      expected.id = s_->log->artifacts_id(n);
      try {
        visit(b.packed, expected);
      } catch (const core::block_error& e) {  // the block's own message names it
        throw block_file_error(core::blocklog::block_log_error(b.file, std::nullopt, b.offset, e.what()).what());
      }
    }
    return;
  }
  core::out_buffer buf;
  for (const core::json_block& b : s_->json) {
    const std::uint32_t n = b.block.block_num();
    if (n < from || n > to) continue;
    buf.clear();
    core::pack_into(buf, b.block);
    visit(buf.span(), b.expected);
  }
}

}  // namespace apiary::harness
