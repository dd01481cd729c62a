// state_region: a database made in a region, written to a file and opened by another process
// (where the program lies elsewhere, so its memory resources need their tables reattached),
// copy-on-write; and every way a state file can be wrong, refused in one line.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "apiary/core/state/state_region.hpp"
#include "state_test_objects.hpp"

namespace apiary::core::test {
namespace {

constexpr std::size_t test_reserve = std::size_t{1} << 30;
constexpr const char* child_file_variable = "APIARY_STATE_REGION_TEST_FILE";
constexpr const char* child_expect_variable = "APIARY_STATE_REGION_TEST_EXPECT";

std::string text_of(const snapshot& s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// A state of 300 accounts (names long enough to take memory of their own) and 300 items, in
// a region written to `file`; returns what it holds.
snapshot make_state_file(const std::filesystem::path& file, const database_options& options = {}) {
  auto region = state_region::make(test_reserve);
  database db(options, region.get());
  auto& accounts = db.add_index<account_index>();
  auto& items = db.add_index<item_index>();
  for (int i = 0; i < 300; ++i) {
    accounts.create([&](account& a) {
      a.name = numbered("an-account-of-the-state-region-test-", i);
      a.balance = i;
    });
    items.create([&](item& x) { x.owner = static_cast<std::uint32_t>(i % 7); });
  }
  auto s = db.start_undo_session();  // some removed and modified objects, then made permanent
  for (int i = 0; i < 300; i += 3) accounts.remove(accounts.get(static_cast<std::uint64_t>(i)));
  items.modify(items.get(5), [](item& x) { x.value = 99; });
  s.squash();
  const snapshot made = take_snapshot(db);
  const std::string payload = "payload";
  region->write(file, std::as_bytes(std::span(payload)));
  return made;
}

// Opens the file, checks it holds `expect`, then changes it in an undo session, undoes, and
// changes it for good: the reattached resources allocate and free.
void open_and_use(const std::filesystem::path& file, const std::string& expect) {
  auto region = state_region::open(file, {});
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(region->payload().data()), region->payload().size()), "payload");
  EXPECT_EQ(region->verify_content(), "");
  database db({}, region.get());
  auto& accounts = db.add_index<account_index>();
  auto& items = db.add_index<item_index>();
  EXPECT_EQ(text_of(take_snapshot(db)), expect);
  EXPECT_TRUE(indexes_consistent(accounts, items));
  {
    auto s = db.start_undo_session();
    for (int i = 0; i < 200; ++i)
      accounts.create([&](account& a) { a.name = numbered("a-new-account-made-after-opening-", i); });
    accounts.modify(accounts.get(1), [](account& a) { a.name = "renamed-to-something-quite-long"; });
  }  // undone
  EXPECT_EQ(text_of(take_snapshot(db)), expect);
  items.create([](item& x) { x.owner = 3; });
  EXPECT_TRUE(indexes_consistent(accounts, items));
}

TEST(StateRegion, AnotherProcessOpensTheFileAndItIsUnchangedAfter) {
  const auto file = temporary_path("region.state");
  const std::string expect = text_of(make_state_file(file));
  const std::string bytes = read_bytes(file);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a new program image: its code and tables at other addresses
    ::setenv(child_file_variable, file.c_str(), 1);
    ::setenv(child_expect_variable, expect.c_str(), 1);
    // A sharded run's share (tests/CMakeLists.txt) is not the child's: it runs its one test.
    ::unsetenv("GTEST_TOTAL_SHARDS");
    ::unsetenv("GTEST_SHARD_INDEX");
    ::execl("/proc/self/exe", "state_region_child", "--gtest_filter=StateRegionChild.*",
            "--gtest_also_run_disabled_tests", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's status: " << status;
  EXPECT_EQ(read_bytes(file), bytes);  // copy-on-write: the run changed nothing in the file
  open_and_use(file, expect);          // and this process can open it too
  EXPECT_EQ(read_bytes(file), bytes);
  std::filesystem::remove(file);
}

// Run only by the test above, in its child.
TEST(StateRegionChild, DISABLED_OpensTheParentsFile) {
  const char* file = std::getenv(child_file_variable);
  const char* expect = std::getenv(child_expect_variable);
  ASSERT_NE(file, nullptr);
  ASSERT_NE(expect, nullptr);
  open_and_use(file, expect);
}

TEST(StateRegion, OneRegionAtATime) {
  auto region = state_region::make(test_reserve);
  EXPECT_THROW(state_region::make(test_reserve), state_region_error);
}

TEST(StateRegion, AnAddressRangeAlreadyTakenIsOneClearError) {
  const std::size_t page = 4096;
  void* squatter = ::mmap(reinterpret_cast<void*>(state_region::base_address() + test_reserve / 2), page, PROT_READ,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_NE(squatter, MAP_FAILED);
  try {
    auto region = state_region::make(test_reserve);
    ADD_FAILURE() << "a region was made over another mapping";
  } catch (const state_region_error& e) {
    EXPECT_NE(std::string(e.what()).find("another mapping of this process lies in that address range"),
              std::string::npos)
        << e.what();
  }
  ::munmap(squatter, page);
  EXPECT_NO_THROW(state_region::make(test_reserve));  // free again: nothing was left held
}

TEST(StateRegion, StringsInTheRegionTakeItsMemory) {
  auto region = state_region::make(test_reserve);
  auto* on_heap = new state_string("a string longer than its own sixteen bytes");
  const std::size_t before = region->used_bytes();
  void* at = region->memory()->allocate(sizeof(state_string), alignof(state_string));
  auto* in_region = ::new (at) state_string(*on_heap);  // a copy into the region
  EXPECT_TRUE(region->contains(in_region->data()));
  EXPECT_FALSE(region->contains(on_heap->data()));
  EXPECT_GT(region->used_bytes(), before);
  *on_heap = std::move(*in_region);  // moved out of the region: copied to the heap
  EXPECT_FALSE(region->contains(on_heap->data()));
  EXPECT_EQ(on_heap->view(), "a string longer than its own sixteen bytes");
  in_region->~state_string();
  region->memory()->deallocate(at, sizeof(state_string), alignof(state_string));
  delete on_heap;
}

class StateFileDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = temporary_path("damaged.state");
    make_state_file(file_);
    bytes_ = read_bytes(file_);
  }
  void TearDown() override { std::filesystem::remove(file_); }

  // Opening the file as `bytes` fails with a message naming the file and containing `what`.
  void expect_refused(const std::string& bytes, const std::string& what) {
    write_bytes(file_, bytes);
    try {
      state_region::open(file_, {});
      ADD_FAILURE() << "opened a file that should be refused for: " << what;
    } catch (const state_region_error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(file_.string()), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }

  std::filesystem::path file_;
  std::string bytes_;
};

TEST_F(StateFileDamage, NotAStateFile) {
  expect_refused("short", "shorter than a state file's header");
  std::string other = bytes_;
  other[0] = 'X';
  expect_refused(other, "no APIARYMS magic");
}

TEST_F(StateFileDamage, HeaderChanged) {
  std::string flipped = bytes_;
  flipped[40] = static_cast<char>(flipped[40] ^ 1);  // inside the sizes
  expect_refused(flipped, "the header's digest does not match");
}

TEST_F(StateFileDamage, Truncated) { expect_refused(bytes_.substr(0, bytes_.size() - 100), "truncated"); }

TEST_F(StateFileDamage, BookkeepingChanged) {
  std::string flipped = bytes_;
  const std::size_t at = state_region::header_bytes + 8;  // the segment manager's header
  flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
  expect_refused(flipped, "bookkeeping");
}

TEST_F(StateFileDamage, ContentChangedIsFoundByVerify) {
  std::string flipped = bytes_;
  const std::size_t at = bytes_.size() - 64;  // inside the last objects
  flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
  write_bytes(file_, flipped);
  auto region = state_region::open(file_, {.prefault = false});  // opening checks the bookkeeping only
  EXPECT_NE(region->verify_content().find("does not match its digest"), std::string::npos);
}

TEST_F(StateFileDamage, AnotherDatabaseLayoutIsRefused) {
  auto region = state_region::open(file_, {});
  EXPECT_THROW(database({.keep_alive = true, .pool_objects = false, .pool_undo = true}, region.get()),
               state_region_error);
}

TEST(StateRegion, UnwritablePathLeavesNothing) {
  auto region = state_region::make(test_reserve);
  const std::filesystem::path file = "/proc/apiary-no-such-dir/x.state";
  try {
    region->write(file, {});
    ADD_FAILURE() << "wrote into /proc";
  } catch (const state_region_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace apiary::core::test
