// Reliability of the harness's building blocks (docs/reliability.md): how outputs are written
// (output_file), how inputs are read (input_file), how errors echo values (error_text), what
// memory a command may take (memory_budget), and how config files and options refuse what
// they used to take silently. The end-to-end cases are in reliability_test.py.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>

#include "apiary/harness/config/config_file.hpp"
#include "apiary/harness/config/memory_budget.hpp"
#include "apiary/harness/config/options.hpp"
#include "apiary/harness/config/run_config.hpp"
#include "apiary/harness/io/error_text.hpp"
#include "apiary/harness/io/input_file.hpp"
#include "apiary/harness/io/output_file.hpp"
#include "apiary/harness/io/text_format.hpp"

namespace apiary::harness {
namespace {

namespace fs = std::filesystem;

// A scratch directory of the test's own, removed at the end.
class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("apiary-reliability-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const std::string& p, const std::string& content) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

// ---- error_text -----------------------------------------------------------------------------

TEST(ErrorText, ShownCutsLongValuesAndEscapesControlCharacters) {
  EXPECT_EQ(shown("64KiB"), "64KiB");
  EXPECT_EQ(shown(std::string(200, '9')), std::string(80, '9') + "…");
  EXPECT_EQ(shown("two\nlines\t\x01"), "two\\nlines\\t\\x01");
  EXPECT_EQ(shown("µs…"), "µs…");                                              // UTF-8 kept whole
  EXPECT_EQ(shown(std::string(79, 'a') + "µµ"), std::string(79, 'a') + "µ…");  // never cut inside a character
  EXPECT_EQ(shown("\xff"), "\\xff");                                           // a stray byte escaped alone
}

TEST(ErrorText, ShownPathKeepsTheStartAndTheFileName) {
  const std::string dir = "/build/" + std::string(300, 'd');
  EXPECT_EQ(shown_path("/tmp/r.json"), "/tmp/r.json");
  const std::string p = shown_path(dir + "/report.json");
  EXPECT_TRUE(p.starts_with("/build/ddd")) << p;
  EXPECT_TRUE(p.ends_with("ddd/report.json")) << p;
  EXPECT_NE(p.find("…"), std::string::npos);
  EXPECT_EQ(one_line("cannot write " + p + ": File name too long"), "cannot write " + p + ": File name too long");
}

TEST(ErrorText, OneLineCutsEveryLongWordButKeepsShownValuesWhole) {
  const std::string quoted = "'" + shown(std::string(500, 'x')) + "':";
  EXPECT_EQ(one_line("--name: " + quoted + " expected a name"), "--name: " + quoted + " expected a name");
  const std::string cut = one_line("not expected: " + std::string(100000, 'y'));
  EXPECT_LT(cut.size(), 300u);
  EXPECT_EQ(cut.find('\n'), std::string::npos);
  EXPECT_EQ(one_line("a\nb"), "a\\nb");
}

// ---- output_file ----------------------------------------------------------------------------

using OutputFile = Scratch;

TEST_F(OutputFile, AReplacedFileChangesOnlyAtCommitAndKeepsItsMode) {
  const std::string p = path("report.json");
  write(p, "old");
  ::chmod(p.c_str(), 0600);
  {
    output_file f(p);
    f.write("new", 3);
    EXPECT_EQ(read(p), "old");  // nothing under the final name before the commit
    EXPECT_EQ(entries(), 2u);   // the temporary file beside it
    f.commit();
  }
  EXPECT_EQ(read(p), "new");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFile, WithoutACommitTheOldFileStaysAndNothingIsLeftBehind) {
  const std::string p = path("report.json");
  write(p, "old");
  {
    output_file f(p);
    f.write("half", 4);
  }
  EXPECT_EQ(read(p), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFile, AFileNamedLikeATemporaryOneIsNotTouched) {
  const std::string p = path("report.json");
  write(p + ".tmp", "mine");
  output_file f(p);
  f.write("{}", 2);
  f.commit();
  EXPECT_EQ(read(p + ".tmp"), "mine");
  EXPECT_EQ(read(p), "{}");
}

TEST_F(OutputFile, ALinkStaysALinkAndItsTargetIsWritten) {
  fs::create_symlink("target.json", path("link.json"));
  ASSERT_EQ(check_output(path("link.json")), std::nullopt);
  output_file f(path("link.json"));
  f.write("{}", 2);
  f.commit();
  EXPECT_TRUE(fs::is_symlink(path("link.json")));
  EXPECT_EQ(read(path("target.json")), "{}");
}

TEST_F(OutputFile, ACharacterDeviceIsWrittenThroughNeverReplaced) {
  // /dev/null is safe here: this code writes through it (the point of the test).
  ASSERT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(writes_through("/dev/null"));
  EXPECT_EQ(check_output("/dev/null"), std::nullopt);
  output_file f("/dev/null");
  f.write("x", 1);
  f.commit();
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(OutputFile, AnOpenDescriptorIsWrittenThrough) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string read_end = "/proc/self/fd/" + std::to_string(fds[0]);
  const std::string write_end = "/dev/fd/" + std::to_string(fds[1]);
  EXPECT_NE(check_output(read_end).value_or("").find("open for reading only"), std::string::npos);
  EXPECT_EQ(check_output(write_end), std::nullopt);
  EXPECT_TRUE(writes_through(write_end));
  {
    output_file f(write_end);
    f.write("{}", 2);
    f.commit();
  }
  ::close(fds[1]);
  char got[8] = {};
  EXPECT_EQ(::read(fds[0], got, sizeof got), 2);
  EXPECT_EQ(std::string(got), "{}");
  ::close(fds[0]);
  EXPECT_NE(check_output("/dev/fd/987654").value_or("").find("not an open descriptor"), std::string::npos);
}

TEST_F(OutputFile, AFifoWithoutAReaderIsAnErrorNotAHang) {
  const std::string p = path("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto problem = check_output(p);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("a FIFO with no reader"), std::string::npos) << *problem;
  EXPECT_THROW(output_file{p}, std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(fs::is_fifo(p));
  // The log is written while the run goes: a FIFO would block its opening.
  EXPECT_NE(check_output(p, output_use::stream).value_or("").find("a FIFO"), std::string::npos);
}

TEST_F(OutputFile, DirectoriesAndDirectoryNamesAreRefusedAndNotCreated) {
  EXPECT_NE(check_output(dir_.string()).value_or("").find("it is a directory"), std::string::npos);
  EXPECT_NE(check_output(path("newdir") + "/").value_or("").find("a directory name"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("newdir")));
  EXPECT_EQ(check_output(path("sub/dir/report.json")), std::nullopt);  // parents are created
  EXPECT_EQ(entries(), 1u);                                            // and nothing else is left
}

// The report a hard exit leaves: nothing on disk until put(), then the whole file in place
// (through a link, keeping an existing file's mode), no temporary left; none for a device.
TEST_F(OutputFile, AStandbyFileAppearsWholeOnlyWhenPut) {
  write(path("target.json"), "old");
  ::chmod(path("target.json").c_str(), 0640);
  fs::create_symlink("target.json", path("report.json"));
  const standby_file standby(path("report.json"), "{\"status\":");
  ASSERT_TRUE(standby.ready());
  EXPECT_EQ(entries(), 2u);  // prepared, not written
  EXPECT_EQ(read(path("target.json")), "old");
  const std::string tail = "\"aborted\"}\n";
  EXPECT_TRUE(standby.put(tail.data(), tail.size()));
  EXPECT_EQ(read(path("target.json")), "{\"status\":\"aborted\"}\n");
  EXPECT_TRUE(fs::is_symlink(path("report.json")));
  EXPECT_EQ(fs::status(path("target.json")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entries(), 2u);  // the link and its target: no temporary

  const standby_file device("/dev/null", "x");
  EXPECT_FALSE(device.ready());
  EXPECT_FALSE(device.put("y", 1));
  const standby_file lost(path("gone/report.json"), "x");  // its directory is not there
  EXPECT_FALSE(lost.put("y", 1));
  EXPECT_EQ(entries(), 2u);
}

// Directories made by the checks of a command that is then refused go again; kept, they stay.
TEST_F(OutputFile, ARefusedCommandLeavesNoDirectoryItsChecksMade) {
  {
    const made_directories made;
    EXPECT_EQ(check_output(path("a/b/report.json")), std::nullopt);
    EXPECT_TRUE(fs::is_directory(path("a/b")));
  }
  EXPECT_EQ(entries(), 0u);
  made_directories made;
  EXPECT_EQ(check_output(path("a/b/report.json")), std::nullopt);
  made.keep();
  EXPECT_TRUE(fs::is_directory(path("a/b")));
}

// A binary output goes to a file or a device, never to a stream it would share with the summary.
TEST_F(OutputFile, ABinaryOutputIsRefusedOnAStream) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  for (const std::string& stream : {std::string("/dev/stdout"), std::string("/dev/fd/1"), path("fifo")})
    EXPECT_NE(check_output(stream, output_use::binary).value_or("").find("a stream"), std::string::npos) << stream;
  EXPECT_EQ(check_output("/dev/null", output_use::binary), std::nullopt);
  EXPECT_EQ(check_output(path("s.snap"), output_use::binary), std::nullopt);
}

// A lock is a file of apiary's own: a user's file, link or FIFO of its name is refused and
// kept; a lock a killed run left (the marker, not held) is taken over; held, it refuses a
// second taker; released, it is gone.
TEST_F(OutputFile, LocksNeverAdoptOrRemoveAUsersFile) {
  const std::string lock = path(".r.json.lock");
  write(path("victim"), "keep me");
  const auto refused = [&](const std::function<void()>& plant) {
    plant();
    output_locks locks;
    const auto problem = locks.take({{"--report", path("r.json")}});
    EXPECT_NE(problem.value_or("").find("no lock of apiary's"), std::string::npos) << problem.value_or("");
    EXPECT_TRUE(fs::exists(fs::symlink_status(lock)));
    fs::remove(lock);
  };
  refused([&] { write(lock, "the user's"); });
  refused([&] { fs::create_symlink(path("victim"), lock); });
  refused([&] { ASSERT_EQ(::mkfifo(lock.c_str(), 0600), 0); });
  EXPECT_EQ(read(path("victim")), "keep me");
  write(lock, "apiary output lock\npid 1\n");
  {
    output_locks first;
    EXPECT_EQ(first.take({{"--report", path("r.json")}}), std::nullopt);
    output_locks second;
    EXPECT_NE(second.take({{"--report", path("r.json")}}).value_or("").find("another apiary"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(lock));
}

TEST_F(OutputFile, DistinctFilesHoweverTheyAreSpelled) {
  write(path("run.toml"), "blocks = 3\n");
  fs::create_symlink("run.toml", path("alias.toml"));
  const std::vector<named_path> inputs = {{"--config", path("run.toml")}};
  auto problem = check_distinct(inputs, {{"--report", path("alias.toml")}});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("the same file as --config"), std::string::npos) << *problem;
  problem = check_distinct({}, {{"--report", path("r.json")}, {"--dump-blocks", path("sub/../r.json")}});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("--dump-blocks"), std::string::npos) << *problem;
  EXPECT_EQ(check_distinct(inputs, {{"--report", "/dev/null"}, {"--dump-blocks", "/dev/null"}}), std::nullopt);
  EXPECT_EQ(check_distinct(inputs, {{"--report", path("r.json")}, {"--log-file", ""}}), std::nullopt);
}

// ---- input_file -----------------------------------------------------------------------------

using InputFile = Scratch;

TEST_F(InputFile, OnlyARegularFileWithinTheSizeIsRead) {
  write(path("a.toml"), "blocks = 3\n");
  EXPECT_EQ(read_input_file(path("a.toml"), 100, "config file"), "blocks = 3\n");
  const auto refused = [&](const std::string& p, std::uint64_t max, const std::string& why) {
    try {
      read_input_file(p, max, "config file");
      ADD_FAILURE() << p << " was read";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(path("a.toml"), 5, "more than the 5 bytes");
  refused(path("missing"), 100, "no such file");
  refused(dir_.string(), 100, "a directory, not a config file");
  refused("/dev/zero", 100, "not a regular file (a character device)");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  refused(path("fifo"), 100, "not a regular file (a FIFO)");  // at once: no writer is waited for
}

// ---- memory_budget --------------------------------------------------------------------------

TEST(MemoryBudget, WhatCannotFitIsRefusedWithTheNumbers) {
  EXPECT_GT(available_memory(), 0u);
  EXPECT_EQ(memory_problem(1), std::nullopt);
  const auto problem = memory_problem(std::uint64_t{1} << 60);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("1.0 EiB in memory"), std::string::npos) << *problem;
  run_config c;
  EXPECT_EQ(check_memory(c, 20'000), std::nullopt);
  EXPECT_NE(check_memory(c, 999'999'999'999).value_or("").find("--transactions 999,999,999,999"), std::string::npos);
  EXPECT_EQ(bytes_text(1536), "1.5 KiB");
}

// ---- config files and options ---------------------------------------------------------------

using ConfigFile = Scratch;

std::string apply_file(const std::string& file, run_config& c) {
  CLI::App app;
  option_binder b(app, scope_run);
  bind_run_options(b, c);
  return apply_config_file(b, file);
}

// The problem of the config file `text` (written as name), or "".
std::string config_problem(const std::string& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  run_config c;
  return apply_file(file, c);
}

// The problem starts with FILE:LINE: and says each needle.
void expect_refused(const std::string& problem, const std::string& where, std::initializer_list<std::string> needles) {
  EXPECT_TRUE(problem.starts_with(where + ": ")) << "expected " << where << ": " << problem;
  for (const std::string& needle : needles)
    EXPECT_NE(problem.find(needle), std::string::npos) << needle << ": " << problem;
  EXPECT_LT(problem.size(), 400u);
}

TEST_F(ConfigFile, AKeyGivenTwiceIsNamedWithItsLine) {
  run_config c;
  write(path("twice.toml"), "blocks = 3\nseed = 2\n# blocks = 9\nblocks = 4\n");
  expect_refused(apply_file(path("twice.toml"), c), path("twice.toml") + ":4",
                 {"cannot redefine existing integer 'blocks'"});
  write(path("spelled.toml"), "block_size = \"64KiB\"\nblock-size = \"128KiB\"\n");
  expect_refused(apply_file(path("spelled.toml"), c), path("spelled.toml") + ":2",
                 {"duplicate key 'block-size' (lines 1 and 2)"});
  write(path("once.toml"), "blocks = 3\nseed = 2\n");
  EXPECT_EQ(apply_file(path("once.toml"), c), "");
  EXPECT_EQ(c.stop.blocks, 3u);
}

TEST_F(ConfigFile, WhatIsNoOptionIsAnUnknownKeyWithItsLine) {
  const struct {
    const char* text;
    const char* where;
    const char* key;
  } cases[] = {{"blocks = 3\nhelp = true\n", ":2", "'help'"},
               {"# a comment\n[colony]\nthread = 2\n", ":3", "'colony.thread'"},
               {"colony.threads = 2\n", ":1", "'colony.threads'"},
               {"seed = 1\nrun = { blocks = 3 }\n", ":2", "'run.blocks'"},
               {"[empty]\n", ":1", "'empty'"},
               {"config = \"other.toml\"\n", ":1", "'config'"},
               {"print-config = true\n", ":1", "'print-config'"},
               {"[[runs]]\nblocks = 3\n", ":1", "'runs'"}};
  for (const auto& k : cases)
    expect_refused(config_problem(path("x.toml"), k.text), path("x.toml") + k.where,
                   {std::string("unknown key ") + k.key});
}

TEST_F(ConfigFile, AWrongTypeNamesTheTypeExpected) {
  const struct {
    const char* text;
    const char* problem;
  } cases[] = {{"blocks = true\n", "'blocks': expected a number, not a boolean"},
               {"sign = 1\n", "'sign': expected true or false, not an integer"},
               {"report = [\"a.json\"]\n", "'report': expected a string, not an array"},
               {"name = 2026-11-27\n", "'name': expected a string, not a date or time"},
               {"rate = { tps = 5 }\n", "unknown key 'rate.tps'"},
               {"blocks = 5.0\n", "'5.0': expected a whole number"},
               {"blocks = 5.5\n", "'5.5': expected a whole number"},
               {"duration = nan\n", "expected a duration"}};
  for (const auto& k : cases)
    expect_refused(config_problem(path("x.toml"), k.text), path("x.toml") + ":1", {k.problem});
}

TEST_F(ConfigFile, EveryTypeAnOptionReadsReachesIt) {
  run_config c;
  write(path("typed.toml"),
        "blocks = 0x10\nduration = 1.5\nstall-timeout = \"2m\"\nsign = false\nwarm-keys = \"off\"\n"
        "block-size = \"64KiB\"\nrate = 5000\ngenesis-vesting = 100_000_000_000\nreport = 'C:\\r.json'\n");
  ASSERT_EQ(apply_file(path("typed.toml"), c), "");
  EXPECT_EQ(c.stop.blocks, 16u);
  EXPECT_EQ(c.stop.duration_s, 1.5);
  EXPECT_EQ(c.stop.stall_timeout_s, 120.0);
  EXPECT_FALSE(c.colony.sign);
  EXPECT_FALSE(c.colony.warm_keys);
  EXPECT_EQ(c.writer.block_size, 65536u);
  EXPECT_EQ(c.colony.tps_limit, 5000.0);
  EXPECT_EQ(c.out.report, "C:\\r.json");
}

TEST_F(ConfigFile, TheCommandLineWinsOverTheFile) {
  run_config c;
  CLI::App app;
  option_binder b(app, scope_run);
  bind_run_options(b, c);
  app.parse(std::vector<std::string>{"9", "--blocks"});
  write(path("file.toml"), "blocks = 3\nseed = 7\n");
  EXPECT_EQ(apply_config_file(b, path("file.toml")), "");
  EXPECT_EQ(c.stop.blocks, 9u);
  EXPECT_EQ(c.colony.seed, 7u);
}

TEST_F(ConfigFile, MalformedTomlIsNamedWithItsLine) {
  const struct {
    const char* text;
    const char* where;
    const char* problem;
  } cases[] = {{"blocks = 3\nseed =\n", ":2", "error while parsing"},
               {"blocks = 3\nseed = lots\n", ":2", "could not determine value type"},
               {"blocks\n", ":1", "expected '='"},
               {"[colony\n", ":1", "error while parsing table header"},
               {"name = \"open\n", ":1", "error while parsing string"},
               {"blocks = 99999999999999999999\n", ":1", "not representable in 64 bits"},
               {"blocks = 3\n\x01\n", ":2", "not a TOML text file"}};
  for (const auto& k : cases)
    expect_refused(config_problem(path("x.toml"), k.text), path("x.toml") + k.where, {k.problem});
}

// CLI11's reader took memory quadratic in a table header's parts (a 200 KB header exhausted
// the memory) and dropped dotted keys of more than 256 parts; toml++ frees nested tables
// recursively (a 100,000-part header overflowed the stack).
TEST_F(ConfigFile, DeepKeysAreRefusedInBoundedTime) {
  std::string header = "[a";
  while (header.size() < 200'000) header += ".a";
  std::string dotted = "k";
  for (int i = 1; i < 300; ++i) dotted += ".k";
  std::string arrays = "blocks = ";
  for (int i = 0; i < 300; ++i) arrays += "[\n";
  const auto start = std::chrono::steady_clock::now();
  expect_refused(config_problem(path("x.toml"), "seed = 1\n" + header + "]\nx = 1\n"), path("x.toml") + ":2",
                 {"more than 256 dots, brackets and braces on one line"});
  expect_refused(config_problem(path("x.toml"), dotted + " = 1\n"), path("x.toml") + ":1", {"more than 256"});
  expect_refused(config_problem(path("x.toml"), dotted.substr(0, 399) + " = 1\n"), path("x.toml") + ":1",
                 {"unknown key 'k.k.k"});
  expect_refused(config_problem(path("x.toml"), arrays), path("x.toml") + ":257", {"nested value depth of 256"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(ConfigFile, AByteOrderMarkIsSkipped) {
  run_config c;
  write(path("bom.toml"),
        "\xef\xbb\xbf"
        "blocks = 7\n");
  EXPECT_EQ(apply_file(path("bom.toml"), c), "");
  EXPECT_EQ(c.stop.blocks, 7u);
}

TEST_F(ConfigFile, AHugeKeyIsEchoedShort) {
  run_config c;
  write(path("key.toml"), std::string(100000, 'k') + " = 3\n");
  const std::string problem = apply_file(path("key.toml"), c);
  EXPECT_NE(problem.find("unknown key"), std::string::npos);
  EXPECT_LT(problem.size(), 300u);
}

TEST(Options, EveryCountStatesItsUpperBound) {
  const struct {
    const char* option;
    const char* value;
    const char* bound;
  } cases[] = {{"blocks", "4294967295", "to 1000000"},
               {"transactions", "18446744073709551615", "to 1000000000000"},
               {"accounts", "10000001", "to 10000000"},
               {"threads", "129", "to 128"}};
  for (const auto& k : cases) {
    run_config c;
    const std::string problem = apply_options(c, {"--" + std::string(k.option), k.value});
    EXPECT_NE(problem.find(k.bound), std::string::npos) << k.option << ": " << problem;
  }
}

TEST(Options, TheMixIsRefusedWhereTheColonyWouldClampIt) {
  run_config c;
  std::string problem = apply_options(c, {"--mix", "article=1:0-99999999"});
  EXPECT_NE(problem.find("60000"), std::string::npos) << problem;
  problem = apply_options(c, {"--mix", "vote=1:0-10"});
  EXPECT_NE(problem.find("no extra payload"), std::string::npos) << problem;
  EXPECT_EQ(apply_options(c, {"--mix", "article=1:0-60000"}), "");
  problem = apply_options(c, {"--mix", "vote=1,vote=2"});
  EXPECT_NE(problem.find("given twice"), std::string::npos) << problem;
  problem = apply_options(c, {"--mix", std::string(5000, 'v')});
  EXPECT_NE(problem.find("at most 1000"), std::string::npos);
  EXPECT_LT(problem.size(), 300u);
}

// Every option whose values are a list of names (the enumerations and the on/off toggles,
// "a|b|c" in --help) takes each name in any case, and with '_' for '-', and stores the
// canonical name: what --print-config and the report then show. "--dedup UNIFIED" used to be
// accepted while the default ran.
TEST(Options, EveryNamedValueTakesEffectWhateverItsCase) {
  CLI::App app;
  run_config defaults;
  option_binder b(app, scope_run);
  bind_run_options(b, defaults);
  std::size_t walked = 0;
  for (const CLI::Option* opt : app.get_options()) {
    const std::string names = opt->get_type_name();
    // A list of lower-case names; a placeholder such as "MS|off" is not an enumeration.
    const bool named = names.find('|') != std::string::npos && std::all_of(names.begin(), names.end(), [](char ch) {
                         return std::islower(ch) || ch == '|' || ch == '-';
                       });
    if (!named) continue;
    const std::string option = opt->get_name(false, true).substr(2);
    std::stringstream split(names);
    for (std::string name; std::getline(split, name, '|');) {
      std::string upper = name, mixed = name, underscored = name;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      for (std::size_t i = 0; i < mixed.size(); i += 2)
        mixed[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(mixed[i])));
      std::replace(underscored.begin(), underscored.end(), '-', '_');
      for (const std::string& given : {upper, mixed, underscored}) {
        run_config c;
        ASSERT_EQ(apply_options(c, {"--" + option, given}), "") << "--" << option << " " << given;
        std::string shown_value;
        for (const config_entry& e : describe(c, scope_run))
          if (e.name == option) shown_value = e.text;
        EXPECT_EQ(shown_value, name) << "--" << option << " " << given << " was not what took effect";
        ++walked;
      }
    }
  }
  EXPECT_GE(walked, 3u * 40u) << "fewer named values than the run's enumerations and toggles hold";
}

TEST(Options, ARateAboveTheLargestSaysSo) {
  run_config c;
  EXPECT_NE(apply_options(c, {"--rate", "1e10"}).find("above the largest rate"), std::string::npos);
  EXPECT_NE(apply_options(c, {"--rate", "0"}).find("above 0"), std::string::npos);
}

}  // namespace
}  // namespace apiary::harness
