#include "apiary/core/blocklog/block_log_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "apiary/core/blocklog/artifacts.hpp"
#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/blocklog/zstd_codec.hpp"
#include "apiary/core/protocol/serialize.hpp"

namespace apiary::core::blocklog {

namespace {

constexpr std::uint64_t word_size = sizeof(std::uint64_t);
// The most bytes an entry's block may take in the log: a stored block, or its frame (which zstd
// may make a little longer than the block).
constexpr std::uint64_t max_stored_size = ZSTD_COMPRESSBOUND(max_block_size);

// The fewest bytes an entry's block takes: a packed block, or a zstd frame (a few bytes at least).
std::uint64_t min_stored_size(const entry_attributes& a) { return a.compressed ? 1 : min_block_size; }

std::string hex_word(std::uint64_t w) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s = "0x0000000000000000";
  for (std::size_t i = 0; i < 16; ++i) s[17 - i] = digits[(w >> (4 * i)) & 0xf];
  return s;
}

// A file opened for reading: a regular file only (no FIFO can block the open), read with pread.
class input {
 public:
  explicit input(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0)
      throw block_log_error(path, std::nullopt, std::nullopt, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw block_log_error(path, std::nullopt, std::nullopt, "not a regular file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~input() {
    if (fd_ >= 0) ::close(fd_);
  }
  input(const input&) = delete;
  input& operator=(const input&) = delete;

  std::uint64_t size() const { return size_; }

  // n bytes at `at`, which the caller has checked lie within size(); a file that shrank since
  // is an error for `block`.
  void read(void* out, std::uint64_t n, std::uint64_t at, std::optional<std::uint32_t> block) const {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw block_log_error(path_, block, at, std::string("cannot read: ") + std::strerror(errno));
      if (got == 0) throw block_log_error(path_, block, at, "truncated while being read");
      p += got;
      at += static_cast<std::uint64_t>(got);
      n -= static_cast<std::uint64_t>(got);
    }
  }
  std::uint64_t word_at(std::uint64_t at, std::optional<std::uint32_t> block) const {
    std::uint64_t w = 0;
    read(&w, word_size, at, block);
    return w;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace

struct block_log_reader::segment {
  std::string path;
  std::unique_ptr<input> file;
  std::uint32_t first = 1;
  std::vector<std::uint64_t> words;    // each entry's position word, in block order
  std::vector<stripped_id> ids;        // from the artifacts; empty without them
  std::uint64_t artifacts_header = 0;  // the artifacts header's size

  std::uint32_t count() const { return static_cast<std::uint32_t>(words.size()); }
  std::uint64_t start(std::size_t i) const { return words[i] & max_offset; }
  // Where entry i's position word is: before the next entry, or the file's last 8 bytes.
  std::uint64_t word_offset(std::size_t i) const {
    return (i + 1 < words.size() ? start(i + 1) : file->size()) - word_size;
  }
};

struct block_log_reader::state {
  reader_options options;
  std::vector<segment> segments;
  zstd_codec codec;
  bool artifacts = true;

  explicit state(reader_options o) : options(std::move(o)), codec(options.dictionary_dir) {}
};

namespace {

using segment_list = std::vector<std::pair<std::string, std::uint32_t>>;  // a file and its first block

// The files of the log at `path`, each with its first block's number.
segment_list files_of(const std::filesystem::path& path, std::uint32_t part_blocks) {
  std::error_code ec;
  std::filesystem::path dir;
  std::uint32_t from_part = 1;
  if (std::filesystem::is_directory(path, ec)) {
    dir = path;
    if (std::filesystem::is_regular_file(dir / "block_log", ec)) return {{(dir / "block_log").string(), 1}};
  } else if (const std::uint32_t part = part_of_file_name(path.filename().string()); part != 0) {
    dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    from_part = part;
  } else {
    return {{path.string(), 1}};
  }
  std::vector<std::uint32_t> parts;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (const std::uint32_t p = part_of_file_name(e.path().filename().string()); p >= from_part) parts.push_back(p);
  if (ec) throw block_log_error(dir.string(), std::nullopt, std::nullopt, "cannot list: " + ec.message());
  std::sort(parts.begin(), parts.end());
  if (parts.empty() || parts.front() != from_part)
    throw block_log_error(
        (dir / part_file_name(from_part)).string(), std::nullopt, std::nullopt,
        from_part == 1 && parts.empty() ? "no block_log or block_log_part.NNNN file there" : "no such file");
  segment_list out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && parts[i] != parts[i - 1] + 1)
      throw block_log_error(
          (dir / part_file_name(parts[i - 1] + 1)).string(), std::nullopt, std::nullopt,
          "missing: the split log jumps from " + part_file_name(parts[i - 1]) + " to " + part_file_name(parts[i]));
    const std::uint64_t first = std::uint64_t{parts[i] - 1} * part_blocks + 1;
    if (first > UINT32_MAX)
      throw block_log_error((dir / part_file_name(parts[i])).string(), std::nullopt, std::nullopt,
                            "its blocks would be numbered past 2^32");
    out.emplace_back((dir / part_file_name(parts[i])).string(), static_cast<std::uint32_t>(first));
  }
  return out;
}

// The entries of a file without artifacts: its position words walked back from the end.
std::vector<std::uint64_t> walk_words(const std::string& path, const input& f) {
  std::vector<std::uint64_t> words;
  std::uint64_t end = f.size();
  while (end > 0) {
    if (end < word_size + 1)
      throw block_log_error(path, std::nullopt, 0,
                            "truncated: " + std::to_string(end) + " bytes before the entry ending at byte " +
                                std::to_string(end) + ", too few for a block and its position word");
    const std::uint64_t at = end - word_size;
    const std::uint64_t w = f.word_at(at, std::nullopt);
    const auto p = unpack_position(w);
    if (!p)
      throw block_log_error(path, std::nullopt, at, "position word " + hex_word(w) + " has bits set that no log sets");
    if (p->offset + min_stored_size(p->attributes) > at)
      throw block_log_error(path, std::nullopt, at,
                            "position word " + hex_word(w) + " points to byte " + std::to_string(p->offset) +
                                ", not to the start of an entry before it");
    if (at - p->offset > max_stored_size)
      throw block_log_error(path, std::nullopt, at,
                            "position word " + hex_word(w) + " makes an entry of " + std::to_string(at - p->offset) +
                                " bytes, more than a block takes");
    words.push_back(w);
    end = p->offset;
  }
  std::reverse(words.begin(), words.end());
  return words;
}

// The artifacts file beside a log file, checked against it; false when there is none.
bool read_artifacts(const std::string& path, const input& log, std::uint32_t first, std::vector<std::uint64_t>& words,
                    std::vector<stripped_id>& ids, std::uint64_t& header_size) {
  const std::string name = path + ".artifacts";
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(name, ec);
  if (!std::filesystem::exists(status)) return false;
  const input f(name);
  // At most an entry for every 9 bytes of the log, and the header.
  if (f.size() > 56 + (log.size() / (word_size + 1) + 1) * artifacts_entry_size)
    throw block_log_error(name, std::nullopt, std::nullopt,
                          std::to_string(f.size()) + " bytes, more entries than " + path + " can hold");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(f.size()));
  f.read(bytes.data(), bytes.size(), 0, std::nullopt);
  const artifacts a = parse_artifacts(bytes, name);
  header_size = a.header.size();
  const std::uint64_t count = a.entries.size();
  const std::uint32_t head = static_cast<std::uint32_t>(first - 1 + count);
  if (a.header.generating_interrupted_at_block != 0)
    throw block_log_error(name, a.header.generating_interrupted_at_block, std::nullopt,
                          "hived's generation of this file was interrupted there");
  if (a.header.head_block_num != head)
    throw block_log_error(name, std::nullopt, 0,
                          "its header's head block " + std::to_string(a.header.head_block_num) +
                              " is not its last entry's block " + std::to_string(head));
  if ((count == 0) != (log.size() == 0))
    throw block_log_error(name, std::nullopt, std::nullopt,
                          count == 0 ? "indexes no block of a non-empty log" : "indexes blocks of an empty log");
  words.clear();
  ids.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t num = first + static_cast<std::uint32_t>(i);
    const std::uint64_t at = a.header.size() + i * artifacts_entry_size;
    const std::uint64_t w = a.entries[i].position;
    const auto p = unpack_position(w);
    if (!p) throw block_log_error(name, num, at, "position word " + hex_word(w) + " has bits set that no log sets");
    const std::uint64_t expected =
        i == 0 ? 0
               : (words.back() & max_offset) + min_stored_size(unpack_position(words.back())->attributes) + word_size;
    const std::uint64_t end = i + 1 < count ? (a.entries[i + 1].position & max_offset) : log.size();
    if ((i == 0 && p->offset != 0) || p->offset < expected ||
        p->offset + min_stored_size(p->attributes) + word_size > end || end - p->offset - word_size > max_stored_size)
      throw block_log_error(name, num, at,
                            "gives offset " + std::to_string(p->offset) + ", which is no entry of " + path + " (" +
                                std::to_string(log.size()) + " bytes)");
    words.push_back(w);
    ids.push_back(a.entries[i].id);
  }
  if (count > 0) {
    const std::uint64_t last = log.word_at(log.size() - word_size, head);
    if (last != words.back())
      throw block_log_error(
          name, head, a.header.size() + (count - 1) * artifacts_entry_size,
          "gives position word " + hex_word(words.back()) + ", the log's last word is " + hex_word(last));
  }
  return true;
}

}  // namespace

block_log_reader::block_log_reader(const std::filesystem::path& path, reader_options options)
    : s_(std::make_unique<state>(std::move(options))) {
  if (s_->options.part_blocks == 0) throw std::invalid_argument("block_log_reader: part_blocks must be positive");
  const segment_list files = files_of(path, s_->options.part_blocks);
  for (std::size_t i = 0; i < files.size(); ++i) {
    segment seg;
    seg.path = files[i].first;
    seg.first = files[i].second;
    seg.file = std::make_unique<input>(seg.path);
    if (!read_artifacts(seg.path, *seg.file, seg.first, seg.words, seg.ids, seg.artifacts_header)) {
      s_->artifacts = false;
      seg.words = walk_words(seg.path, *seg.file);
    }
    if (std::uint64_t{seg.first} + seg.words.size() - 1 > UINT32_MAX)
      throw block_log_error(seg.path, std::nullopt, std::nullopt, "holds blocks numbered past 2^32");
    const bool last = i + 1 == files.size();
    if (!last && seg.words.size() != s_->options.part_blocks)
      throw block_log_error(seg.path, std::nullopt, std::nullopt,
                            "holds " + std::to_string(seg.words.size()) + " blocks; each part but the last holds " +
                                std::to_string(s_->options.part_blocks));
    s_->segments.push_back(std::move(seg));
  }
  // The first and last block of each file, as hived reads the head when it opens a log.
  for (const segment& seg : s_->segments)
    if (seg.count() > 0) {
      read_block(seg.first);
      read_block(seg.first + seg.count() - 1);
    }
}

block_log_reader::~block_log_reader() = default;

std::uint32_t block_log_reader::first_block_num() const { return s_->segments.front().first; }

std::uint32_t block_log_reader::head_block_num() const {
  const segment& last = s_->segments.back();
  return last.first + last.count() - 1;
}

std::size_t block_log_reader::file_count() const { return s_->segments.size(); }

bool block_log_reader::has_artifacts() const { return s_->artifacts; }

std::optional<block_id> block_log_reader::artifacts_id(std::uint32_t num) const {
  if (num < first_block_num() || num > head_block_num()) throw std::out_of_range("no block " + std::to_string(num));
  for (const segment& seg : s_->segments)
    if (num >= seg.first && num - seg.first < seg.count())
      return seg.ids.empty() ? std::nullopt : std::optional(unstrip_id(num, seg.ids[num - seg.first]));
  return std::nullopt;
}

block_data block_log_reader::read_block(std::uint32_t num) {
  if (num < first_block_num() || num > head_block_num())
    throw std::out_of_range("block " + std::to_string(num) + " is not in the log (" +
                            std::to_string(first_block_num()) + " to " + std::to_string(head_block_num()) + ")");
  const segment* found = nullptr;
  for (const segment& seg : s_->segments)
    if (num >= seg.first && num - seg.first < seg.count()) found = &seg;
  const segment& seg = *found;
  const std::size_t i = num - seg.first;
  const std::uint64_t start = seg.start(i);
  const std::uint64_t word_at = seg.word_offset(i);
  const std::uint64_t stored = seg.file->word_at(word_at, num);
  if (stored != seg.words[i])
    throw block_log_error(seg.path, num, word_at,
                          "position word " + hex_word(stored) + " is not the entry's own (" + hex_word(seg.words[i]) +
                              (seg.ids.empty() ? "" : ", as the artifacts give it") + ")");
  const position_word p = *unpack_position(stored);
  block_data b;
  b.num = num;
  b.stored = p.attributes;
  b.stored_size = word_at - start;
  b.file = seg.path;
  b.offset = start;
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(b.stored_size));
  seg.file->read(raw.data(), raw.size(), start, num);
  if (p.attributes.compressed) {
    try {
      b.packed = s_->codec.decompress(raw, p.attributes.dictionary);
    } catch (const codec_error& e) {
      throw block_log_error(seg.path, num, start, e.what());
    }
  } else {
    b.packed = std::move(raw);
  }
  const auto held = packed_block_num(b.packed);
  if (!held || b.packed.size() < min_block_size)
    throw block_log_error(seg.path, num, start,
                          "holds " + std::to_string(b.packed.size()) + " bytes, too few for a block");
  if (*held != num)
    throw block_log_error(seg.path, num, start,
                          "holds block " + std::to_string(*held) + " out of sequence (its previous block is " +
                              std::to_string(*held - 1) + ")");
  try {
    b.id = packed_block_id(b.packed);
  } catch (const decode_error& e) {
    throw block_log_error(seg.path, num, p.attributes.compressed ? start : start + e.offset(),
                          std::string("malformed block header: ") + e.what() + " of the packed block");
  }
  if (!seg.ids.empty() && strip_id(b.id) != seg.ids[i])
    throw block_log_error(seg.path + ".artifacts", num, seg.artifacts_header + i * artifacts_entry_size + word_size,
                          "gives the id " + to_hex(unstrip_id(num, seg.ids[i])) + ", the block's is " + to_hex(b.id));
  return b;
}

}  // namespace apiary::core::blocklog
