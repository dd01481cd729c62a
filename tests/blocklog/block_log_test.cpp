// Hive's block_log files: Hive's own logs read block for block, logs apiary writes read back
// byte for byte, the split format, the stored zstd frames checked with the zstd tool, and every
// kind of damage one block_log_error line naming the file, the block and the byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "apiary/core/blocklog/artifacts.hpp"
#include "apiary/core/blocklog/block_log_error.hpp"
#include "apiary/core/blocklog/block_log_reader.hpp"
#include "apiary/core/blocklog/block_log_writer.hpp"
#include "apiary/core/blocklog/entry.hpp"
#include "apiary/core/blocklog/zstd_codec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace apiary::core;
using namespace apiary::core::blocklog;
using bytes = std::vector<std::uint8_t>;

// The environment's variable (set by ctest); a test run without it fails, and says why.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) ADD_FAILURE() << name << " is not set: run this test through ctest";
  return v == nullptr ? std::string() : std::string(v);
}

fs::path data() { return env("APIARY_HIVE_DATA"); }
fs::path dictionaries() { return data() / "dictionaries"; }

bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& p, const bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ASSERT_TRUE(out.good()) << p;
}

// A directory of the test's own, removed at the end.
class scratch {
 public:
  scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("apiary-blocklog-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~scratch() { fs::remove_all(dir_); }
  fs::path operator/(const std::string& name) const { return dir_ / name; }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

// Options by what they change (designated initializers would leave the others unnamed).
reader_options with_dictionaries(fs::path dir = dictionaries()) {
  reader_options o;
  o.dictionary_dir = std::move(dir);
  return o;
}
reader_options in_parts_of(std::uint32_t blocks) {
  reader_options o;
  o.part_blocks = blocks;
  return o;
}
writer_options compressed(std::optional<std::uint8_t> dictionary = std::nullopt) {
  writer_options o;
  o.compress = true;
  o.dictionary = dictionary;
  return o;
}
writer_options named(std::string file) {
  writer_options o;
  o.file = std::move(file);
  return o;
}

// Every block of a log, read in order, and checks that each names its predecessor's id.
std::vector<block_data> read_all(block_log_reader& r) {
  std::vector<block_data> blocks;
  for (std::uint32_t n = r.first_block_num(); n <= r.head_block_num(); ++n) {
    blocks.push_back(r.read_block(n));
    if (blocks.size() > 1) {
      block_id previous;
      std::memcpy(previous.begin(), blocks.back().packed.data(), block_id::size());
      EXPECT_EQ(previous, blocks[blocks.size() - 2].id) << "block " << n << " does not follow block " << n - 1;
    }
  }
  return blocks;
}

std::vector<bytes> packed_of(const std::vector<block_data>& blocks) {
  std::vector<bytes> out;
  for (const auto& b : blocks) out.push_back(b.packed);
  return out;
}

// Writes `blocks` as a log at `path` with its artifacts beside it.
void write_log(const fs::path& path, const std::vector<bytes>& blocks, writer_options o = {}) {
  memory_sink sink;
  o.file = path.string();
  block_log_writer w(sink, o);
  for (const bytes& b : blocks) w.append(b);
  write_file(path, sink.bytes);
  write_file(path.string() + ".artifacts", w.artifacts());
}

// The one error a damaged log gives, from opening it and reading every block.
std::string error_of(const fs::path& path, reader_options o = {}) {
  try {
    block_log_reader r(path, o);
    read_all(r);
  } catch (const block_log_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  ADD_FAILURE() << path << " was read without an error";
  return {};
}

void expect_contains(const std::string& m, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
}

std::uint64_t word_at(const bytes& b, std::size_t at) {
  std::uint64_t w;
  std::memcpy(&w, b.data() + at, sizeof w);
  return w;
}

void put_word(bytes& b, std::size_t at, std::uint64_t w) { std::memcpy(b.data() + at, &w, sizeof w); }

// The packed blocks of a fixture.
std::vector<bytes> fixture_blocks(const std::string& name, reader_options o = {}) {
  block_log_reader r(data() / name / "block_log", o);
  return packed_of(read_all(r));
}

// ---- Hive's own logs -------------------------------------------------------------------

TEST(BlockLogFixture, Hf28ReadsBlockForBlock) {
  block_log_reader r(data() / "hf28" / "block_log");
  EXPECT_EQ(r.first_block_num(), 1u);
  EXPECT_EQ(r.head_block_num(), 109u);
  EXPECT_FALSE(r.has_artifacts());
  const auto blocks = read_all(r);
  ASSERT_EQ(blocks.size(), 109u);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].num, i + 1);
    EXPECT_EQ(packed_block_num(blocks[i].packed), i + 1);
    // This log stores every block as a zstd frame without a dictionary.
    EXPECT_TRUE(blocks[i].stored.compressed);
    EXPECT_FALSE(blocks[i].stored.dictionary);
  }
  EXPECT_TRUE(std::all_of(blocks[0].packed.begin(), blocks[0].packed.begin() + 20, [](auto b) { return b == 0; }));
}

TEST(BlockLogFixture, MirrornetReadsBlockForBlock) {
  block_log_reader r(data() / "mirrornet_1k" / "block_log");
  EXPECT_EQ(r.head_block_num(), 1000u);
  const auto blocks = read_all(r);
  ASSERT_EQ(blocks.size(), 1000u);
  std::uint64_t stored = 0;
  for (const auto& b : blocks) {
    EXPECT_FALSE(b.stored.compressed);
    stored += b.stored_size + 8;
  }
  EXPECT_EQ(stored, fs::file_size(data() / "mirrornet_1k" / "block_log"));
}

TEST(BlockLogFixture, TestnetPatternNeedsDictionaryZero) {
  block_log_reader r(data() / "testnet_pattern" / "block_log", with_dictionaries());
  EXPECT_EQ(r.head_block_num(), 1311u);
  const auto blocks = read_all(r);
  ASSERT_EQ(blocks.size(), 1311u);
  for (const auto& b : blocks) {
    EXPECT_TRUE(b.stored.compressed);
    EXPECT_EQ(b.stored.dictionary, std::optional<std::uint8_t>(0));
  }
}

// A stored frame, given back its magic number, is one the zstd tool reads.
bytes zstd_tool_decompress(const scratch& s, const bytes& frame, std::optional<std::uint8_t> dictionary) {
  bytes framed{0x28, 0xb5, 0x2f, 0xfd};
  framed.insert(framed.end(), frame.begin(), frame.end());
  write_file(s / "frame.zst", framed);
  std::string cmd = "zstd -q -d -f";
  if (dictionary) {
    const std::string dict = (s / "dict").string();
    const std::string unpack =
        "zstd -q -d -f -o '" + dict + "' '" + (dictionaries() / dictionary_file_name(*dictionary)).string() + "'";
    EXPECT_EQ(std::system(unpack.c_str()), 0) << unpack;
    cmd += " -D '" + dict + "'";
  }
  cmd += " -o '" + (s / "frame").string() + "' '" + (s / "frame.zst").string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return read_file(s / "frame");
}

// The stored bytes of block `num` of the log file `path` (one file, from its position words).
bytes stored_entry(const fs::path& path, std::uint32_t num, std::uint32_t count) {
  const bytes log = read_file(path);
  std::size_t end = log.size();
  for (std::uint32_t n = count; n > num; --n) end = word_at(log, end - 8) & max_offset;
  const std::size_t start = word_at(log, end - 8) & max_offset;
  return bytes(log.begin() + static_cast<std::ptrdiff_t>(start), log.begin() + static_cast<std::ptrdiff_t>(end - 8));
}

TEST(BlockLogFixture, ZstdToolReadsTheStoredFrames) {
  scratch s;
  block_log_reader hf28(data() / "hf28" / "block_log");
  for (std::uint32_t n : {1u, 55u, 109u})
    EXPECT_EQ(zstd_tool_decompress(s, stored_entry(data() / "hf28" / "block_log", n, 109), std::nullopt),
              hf28.read_block(n).packed)
        << "hf28 block " << n;
  block_log_reader testnet(data() / "testnet_pattern" / "block_log", with_dictionaries());
  for (std::uint32_t n : {1u, 700u, 1311u})
    EXPECT_EQ(zstd_tool_decompress(s, stored_entry(data() / "testnet_pattern" / "block_log", n, 1311), 0),
              testnet.read_block(n).packed)
        << "testnet block " << n;
}

// ---- logs apiary writes ------------------------------------------------------------------

void expect_round_trip(const std::vector<bytes>& blocks, writer_options o) {
  scratch s;
  const fs::path path = s / "block_log";
  o.dictionary_dir = dictionaries();
  write_log(path, blocks, o);
  block_log_reader r(path, with_dictionaries());
  EXPECT_TRUE(r.has_artifacts());
  ASSERT_EQ(r.head_block_num(), blocks.size());
  const auto back = read_all(r);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(back[i].packed, blocks[i]) << "block " << i + 1;
    EXPECT_EQ(back[i].stored.compressed, o.compress);
    EXPECT_EQ(back[i].stored.dictionary, o.dictionary);
    EXPECT_EQ(r.artifacts_id(back[i].num), back[i].id);
  }
  // The frames are zstd's, as the tool reads them.
  if (o.compress) {
    for (std::uint32_t n : {1u, static_cast<std::uint32_t>(blocks.size())})
      EXPECT_EQ(zstd_tool_decompress(s, stored_entry(path, n, static_cast<std::uint32_t>(blocks.size())), o.dictionary),
                blocks[n - 1]);
  }
  // Without its artifacts the log reads the same, by its position words.
  fs::remove(path.string() + ".artifacts");
  block_log_reader walked(path, with_dictionaries());
  EXPECT_FALSE(walked.has_artifacts());
  EXPECT_EQ(packed_of(read_all(walked)), blocks);
}

TEST(BlockLogWriter, PlainReadsBackByteIdentical) { expect_round_trip(fixture_blocks("mirrornet_1k"), {}); }

TEST(BlockLogWriter, CompressedReadsBackByteIdentical) {
  expect_round_trip(fixture_blocks("mirrornet_1k"), compressed());
}

TEST(BlockLogWriter, CompressedWithDictionaryReadsBackByteIdentical) {
  expect_round_trip(fixture_blocks("hf28"), compressed(1));
  expect_round_trip(fixture_blocks("mirrornet_1k"), compressed(0));
}

TEST(BlockLogWriter, RewritesHivesOwnLogByteIdentical) {
  // mirrornet_1k is stored plainly: written plainly again, the same bytes.
  scratch s;
  write_log(s / "block_log", fixture_blocks("mirrornet_1k"));
  EXPECT_EQ(read_file(s / "block_log"), read_file(data() / "mirrornet_1k" / "block_log"));
  const artifacts a = parse_artifacts(read_file(s / "block_log.artifacts"), "block_log.artifacts");
  EXPECT_EQ(a.header.head_block_num, 1000u);
  EXPECT_EQ(a.header.tail_block_num, 1u);
  EXPECT_EQ(a.header.minor, 1u);
  EXPECT_EQ(a.entries.size(), 1000u);
}

TEST(BlockLogWriter, RefusesABlockOutOfSequence) {
  const auto blocks = fixture_blocks("hf28");
  memory_sink sink;
  block_log_writer w(sink, named("out"));
  w.append(blocks[0]);
  try {
    w.append(blocks[2]);
    FAIL() << "block 3 was taken as block 2";
  } catch (const block_log_error& e) {
    expect_contains(e.what(), {"out: block 2 at byte", "given block 3 out of sequence"});
  }
  EXPECT_EQ(w.next_block_num(), 2u);
}

TEST(BlockLogWriter, MissingDictionaryNamesItsFile) {
  memory_sink sink;
  writer_options o = compressed(7);
  o.file = "out";
  o.dictionary_dir = dictionaries();
  block_log_writer w(sink, o);
  try {
    w.append(fixture_blocks("hf28")[0]);
    FAIL() << "compressed with a dictionary that is not there";
  } catch (const block_log_error& e) {
    expect_contains(e.what(), {"out: block 1 at byte 0", "007M.dict.zst"});
  }
  EXPECT_TRUE(sink.bytes.empty());
}

// ---- the split format --------------------------------------------------------------------

// hf28's 109 blocks as parts of 40 blocks: 1-40, 41-80, 81-109.
void write_parts(const fs::path& dir, const std::vector<bytes>& blocks, std::uint32_t part_blocks) {
  for (std::uint32_t part = 1; (part - 1) * part_blocks < blocks.size(); ++part) {
    const auto from = blocks.begin() + static_cast<std::ptrdiff_t>((part - 1) * part_blocks);
    const auto to =
        blocks.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(part * part_blocks, blocks.size()));
    writer_options o = part % 2 == 0 ? compressed() : writer_options{};
    o.first_block_num = (part - 1) * part_blocks + 1;
    write_log(dir / part_file_name(part), std::vector<bytes>(from, to), o);
  }
}

TEST(BlockLogSplit, ReadsPartsAsOneLog) {
  scratch s;
  const auto blocks = fixture_blocks("hf28");
  write_parts(s.path(), blocks, 40);
  for (const fs::path& open : {s.path(), s / "block_log_part.0001"}) {
    block_log_reader r(open, in_parts_of(40));
    EXPECT_EQ(r.file_count(), 3u);
    EXPECT_EQ(r.first_block_num(), 1u);
    EXPECT_EQ(r.head_block_num(), 109u);
    EXPECT_EQ(packed_of(read_all(r)), blocks);
  }
  // From the second part on: the log hived keeps when it pruned the first.
  block_log_reader tail(s / "block_log_part.0002", in_parts_of(40));
  EXPECT_EQ(tail.first_block_num(), 41u);
  EXPECT_EQ(packed_of(read_all(tail)), std::vector<bytes>(blocks.begin() + 40, blocks.end()));
  // Without artifacts, each part's offsets are its own.
  for (int part = 1; part <= 3; ++part)
    fs::remove((s / part_file_name(static_cast<std::uint32_t>(part))).string() + ".artifacts");
  block_log_reader walked(s.path(), in_parts_of(40));
  EXPECT_EQ(packed_of(read_all(walked)), blocks);
}

TEST(BlockLogSplit, MissingOrShortPartIsOneLine) {
  scratch s;
  const auto blocks = fixture_blocks("hf28");
  write_parts(s.path(), blocks, 40);
  fs::rename(s / "block_log_part.0002", s / "aside");
  expect_contains(error_of(s.path(), in_parts_of(40)), {"block_log_part.0002", "missing"});
  fs::rename(s / "aside", s / "block_log_part.0002");
  // Parts of 40 read as parts of 50: the first holds too few, and the numbers disagree.
  expect_contains(error_of(s.path(), in_parts_of(50)), {"block_log_part.0001", "holds 40 blocks"});
}

// ---- damage ------------------------------------------------------------------------------

TEST(BlockLogDamage, TruncatedIsOneLine) {
  scratch s;
  const bytes log = read_file(data() / "mirrornet_1k" / "block_log");
  for (std::size_t cut : {std::size_t{1}, std::size_t{7}, std::size_t{100}, log.size() / 2 + 3, log.size() - 5}) {
    write_file(s / "block_log", bytes(log.begin(), log.end() - static_cast<std::ptrdiff_t>(cut)));
    const std::string m = error_of(s / "block_log");
    if (m.empty()) ADD_FAILURE() << "cut by " << cut;
    expect_contains(m, {(s / "block_log").string() + ":", "at byte"});
  }
  // Cut at an entry's end, a log is a shorter log; its artifacts say it is not.
  const auto blocks = fixture_blocks("mirrornet_1k");
  write_log(s / "block_log", blocks);
  bytes cut = read_file(s / "block_log");
  cut.resize(cut.size() - blocks.back().size() - 8);
  write_file(s / "block_log", cut);
  expect_contains(error_of(s / "block_log"), {(s / "block_log.artifacts").string() + ":", "at byte"});
}

TEST(BlockLogDamage, BitFlippedPositionWordIsOneLine) {
  scratch s;
  const bytes log = read_file(data() / "mirrornet_1k" / "block_log");
  const std::size_t last = log.size() - 8;
  // Block 998's word: before block 999, which starts where block 1000's word says.
  const std::size_t block998_word = (word_at(log, (word_at(log, last) & max_offset) - 8) & max_offset) - 8;
  for (const auto& [at, bit] : std::vector<std::pair<std::size_t, int>>{
           {last, 3}, {last, 40}, {last, 60}, {last, 56}, {block998_word, 2}, {block998_word, 63}}) {
    bytes damaged = log;
    put_word(damaged, at, word_at(log, at) ^ (std::uint64_t{1} << bit));
    write_file(s / "block_log", damaged);
    const std::string m = error_of(s / "block_log");
    expect_contains(m, {(s / "block_log").string() + ":", "at byte"});
    if (m.empty()) ADD_FAILURE() << "bit " << bit << " of the word at byte " << at;
  }
}

TEST(BlockLogDamage, BitFlippedBodyIsOneLine) {
  scratch s;
  // A plain block's previous id: it names another block.
  bytes log = read_file(data() / "mirrornet_1k" / "block_log");
  const std::size_t block1000 = word_at(log, log.size() - 8) & max_offset;
  log[block1000 + 3] ^= 0x01;
  write_file(s / "block_log", log);
  expect_contains(error_of(s / "block_log"), {"block 1000 at byte " + std::to_string(block1000), "out of sequence"});
  // A compressed block's frame header.
  log = read_file(data() / "hf28" / "block_log");
  const std::size_t block109 = word_at(log, log.size() - 8) & max_offset;
  log[block109] ^= 0x80;
  write_file(s / "block_log", log);
  expect_contains(error_of(s / "block_log"), {"block 109 at byte " + std::to_string(block109), "zstd"});
}

TEST(BlockLogDamage, WronglyCompressedIsOneLine) {
  scratch s;
  // A plain block marked compressed.
  bytes log = read_file(data() / "mirrornet_1k" / "block_log");
  put_word(log, log.size() - 8, word_at(log, log.size() - 8) | (std::uint64_t{1} << 63));
  write_file(s / "block_log", log);
  expect_contains(error_of(s / "block_log"), {"block 1000 at byte", "bad zstd frame"});
  // A frame marked plain.
  log = read_file(data() / "hf28" / "block_log");
  put_word(log, log.size() - 8, word_at(log, log.size() - 8) & max_offset);
  write_file(s / "block_log", log);
  expect_contains(error_of(s / "block_log"), {"block 109 at byte"});
}

TEST(BlockLogDamage, MissingDictionaryIsOneLine) {
  const fs::path log = data() / "testnet_pattern" / "block_log";
  expect_contains(error_of(log), {"block 1 at byte 0", "000M.dict.zst", "no dictionary directory"});
  scratch s;
  expect_contains(error_of(log, with_dictionaries(s.path())),
                  {"block 1 at byte 0", "dictionary 0 is missing", (s / "000M.dict.zst").string()});
}

TEST(BlockLogDamage, BlockOutOfSequenceIsOneLine) {
  scratch s;
  const auto blocks = fixture_blocks("mirrornet_1k");
  // Blocks 1, 2, 4: the entries are whole, the third is block 4.
  bytes log;
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
    const std::uint64_t word = log.size();
    log.insert(log.end(), blocks[i].begin(), blocks[i].end());
    log.resize(log.size() + 8);
    put_word(log, log.size() - 8, word);
  }
  write_file(s / "block_log", log);
  expect_contains(error_of(s / "block_log"), {"block 3 at byte", "holds block 4 out of sequence"});
}

TEST(BlockLogDamage, DisagreeingArtifactsAreOneLine) {
  scratch s;
  const auto blocks = fixture_blocks("hf28");
  write_log(s / "block_log", blocks, compressed());
  const bytes good = read_file(s / "block_log.artifacts");
  const std::string name = (s / "block_log.artifacts").string();
  const auto damaged = [&](const std::function<void(bytes&)>& change) {
    bytes a = good;
    change(a);
    write_file(s / "block_log.artifacts", a);
    return error_of(s / "block_log");
  };
  // Its head, its last entry gone, a word, an id, its version, a torn entry.
  expect_contains(damaged([](bytes& a) { a[0] ^= 1; }), {name, "head block"});
  expect_contains(damaged([](bytes& a) { a.erase(a.end() - 24, a.end()); }), {name});
  expect_contains(damaged([](bytes& a) { a[56 + 24 * 50] ^= 4; }), {"at byte"});
  expect_contains(damaged([](bytes& a) { a[56 + 24 * 50 + 12] ^= 4; }),
                  {name, "block 51 at byte 1264", "gives the id"});
  expect_contains(damaged([](bytes& a) { a[46] = 7; }), {name, "artifacts format 1.7"});
  expect_contains(damaged([](bytes& a) { a.erase(a.end() - 5, a.end()); }), {name, "truncated"});
  // Another log's artifacts.
  write_file(s / "block_log.artifacts", good);
  write_log(s / "other", fixture_blocks("mirrornet_1k"));
  fs::copy_file(s / "block_log.artifacts", s / "other.artifacts", fs::copy_options::overwrite_existing);
  expect_contains(error_of(s / "other"), {(s / "other.artifacts").string()});
}

TEST(BlockLogArtifacts, ReadsVersionOnePointZero) {
  scratch s;
  const auto blocks = fixture_blocks("hf28");
  write_log(s / "block_log", blocks);
  // v1.1's header without its last two fields, marked 1.0.
  bytes a = read_file(s / "block_log.artifacts");
  a.erase(a.begin() + 48, a.begin() + 56);
  a[46] = 0;
  write_file(s / "block_log.artifacts", a);
  block_log_reader r(s / "block_log");
  EXPECT_TRUE(r.has_artifacts());
  EXPECT_EQ(packed_of(read_all(r)), blocks);
  EXPECT_EQ(r.artifacts_id(109), r.read_block(109).id);
}

TEST(BlockLogEntry, PositionWordLayout) {
  const position_word p{.offset = 0x123456789abc, .attributes = {.compressed = true, .dictionary = 0x42}};
  const std::uint64_t w = pack_position(p);
  EXPECT_EQ(w, 0x8142123456789abcull);
  const auto back = unpack_position(w);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->offset, p.offset);
  EXPECT_EQ(back->attributes, p.attributes);
  EXPECT_FALSE(unpack_position(w | (std::uint64_t{1} << 60)));  // an unused bit
  EXPECT_FALSE(unpack_position(0x0100000000000010ull));         // a dictionary without compression
  EXPECT_FALSE(unpack_position(0x0042000000000010ull));         // a number without its flag
  EXPECT_EQ(part_file_name(3), "block_log_part.0003");
  EXPECT_EQ(part_of_file_name("block_log_part.0123"), 123u);
  EXPECT_EQ(part_of_file_name("block_log_part.12a4"), 0u);
  EXPECT_EQ(dictionary_file_name(1), "001M.dict.zst");
}

}  // namespace
