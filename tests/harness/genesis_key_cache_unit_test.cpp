// The genesis key cache (harness/.../cycle/genesis_key_cache.hpp): keys from the cache are the
// derivation's, a chain built from them has the same state digest, a bigger genesis extends
// the file, and a damaged, truncated or forged key cache is never believed, only replaced;
// what apiary did not make there is never written; a cache that cannot be written costs
// nothing but speed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "apiary/core/chain/chain.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "apiary/harness/cycle/genesis_key_cache.hpp"

namespace apiary::harness {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t accounts = 1200;

class GenesisKeyCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("apiary-key-cache-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.genesis_accounts = accounts;
  }
  void TearDown() override { fs::remove_all(dir_); }

  genesis_key_set keys() const { return genesis_keys(options_, dir_.string()); }
  fs::path file() const {
    for (const auto& e : fs::directory_iterator(dir_)) return e.path();
    return {};
  }
  std::string read() const {
    std::ifstream in(file(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write(const std::string& bytes) const {
    std::ofstream out(file(), std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  // After damaging the file: the next genesis derives everything again, says why, gets the
  // right keys and leaves a file that serves the one after.
  void expect_refused(const std::string& why) {
    const genesis_key_set k = keys();
    EXPECT_EQ(k.cached, 0u);
    EXPECT_NE(k.note.find(why), std::string::npos) << k.note;
    EXPECT_EQ(k.keys, core::derive_genesis_keys("user", "apiary", 0, accounts));
    EXPECT_EQ(keys().cached, accounts);
  }

  fs::path dir_;
  core::chain_options options_;
};

TEST_F(GenesisKeyCache, TheSecondGenesisReadsWhatTheFirstDerivedAndTheStateIsTheSame) {
  const genesis_key_set first = keys();
  EXPECT_EQ(first.cached, 0u);
  ASSERT_EQ(first.keys.size(), accounts);
  EXPECT_NE(first.note.find("saved to"), std::string::npos) << first.note;
  const genesis_key_set second = keys();
  EXPECT_EQ(second.cached, accounts);
  EXPECT_EQ(second.keys, core::derive_genesis_keys("user", "apiary", 0, accounts));
  const core::chain derived(options_);
  const core::chain cached(options_, {}, second.keys);
  EXPECT_EQ(cached.state_digest(), derived.state_digest());
}

TEST_F(GenesisKeyCache, ABiggerGenesisDerivesOnlyWhatTheCacheLacksAndKeepsAll) {
  keys();
  options_.genesis_accounts = accounts + 300;
  const genesis_key_set more = keys();
  EXPECT_EQ(more.cached, accounts);
  EXPECT_EQ(more.keys, core::derive_genesis_keys("user", "apiary", 0, accounts + 300));
  EXPECT_EQ(keys().cached, accounts + 300);
  options_.genesis_accounts = accounts;  // a smaller one takes the first accounts' keys
  const genesis_key_set fewer = keys();
  EXPECT_EQ(fewer.cached, accounts);
  EXPECT_EQ(fewer.keys.size(), accounts);
}

TEST_F(GenesisKeyCache, AnotherPrefixOrPasswordHasItsOwnFile) {
  keys();
  options_.key_password = "other";
  const genesis_key_set other = keys();
  EXPECT_EQ(other.cached, 0u);
  EXPECT_EQ(other.keys, core::derive_genesis_keys("user", "other", 0, accounts));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 2);
}

TEST_F(GenesisKeyCache, AFlippedByteIsCaughtByTheChecksum) {
  keys();
  std::string bytes = read();
  bytes[bytes.size() / 2] ^= 0x01;
  write(bytes);
  expect_refused("checksum");
}

TEST_F(GenesisKeyCache, AFlippedByteInTheHeaderIsCaughtByItsChecksum) {
  keys();
  std::string bytes = read();
  bytes[20] ^= 0x01;  // the account count
  write(bytes);
  expect_refused("header's checksum");
}

TEST_F(GenesisKeyCache, ATruncatedFileIsNotBelieved) {
  keys();
  for (const std::size_t keep : {std::size_t{20}, read().size() - 1}) {
    keys();
    write(read().substr(0, keep));
    expect_refused("truncated");
  }
}

TEST_F(GenesisKeyCache, AnotherFormatVersionIsNotRead) {
  keys();
  std::string bytes = read();
  bytes[8] = 3;
  write(bytes);
  expect_refused("format version 3");
}

// A file whose checksum holds but whose keys are not the derivation's (written by a build
// that derived differently): the spot check re-derives a few accounts and refuses it.
TEST_F(GenesisKeyCache, AForgedKeyWithAGoodChecksumIsRefused) {
  keys();
  std::string bytes = read();
  // One chunk of accounts, then its checksum, at the end of the file.
  const std::size_t chunk = bytes.size() - 32 - std::size_t{accounts} * 66;
  bytes[chunk + 1] ^= 0x40;  // account 0's posting key
  const core::sha256_digest sum = core::sha256(bytes.data() + chunk, bytes.size() - 32 - chunk);
  bytes.replace(bytes.size() - 32, 32, reinterpret_cast<const char*>(sum.begin()), 32);
  write(bytes);
  expect_refused("not the account's");
}

// What apiary did not make at the cache file's name is neither read through nor replaced: a
// link to a user's file, a directory, a FIFO, a file without the magic (a key cache cut
// before its magic is one too). The genesis derives its keys and says so on one line.
TEST_F(GenesisKeyCache, WhatApiaryDidNotMakeIsNeitherWrittenThroughNorReplaced) {
  keys();
  const fs::path path = file();
  const fs::path victim = dir_ / "victim";
  const std::string mine = "the user's own bytes\n";
  const auto plant = [&](const std::function<void()>& make, const std::string& what) {
    fs::remove_all(path);
    make();
    const genesis_key_set k = keys();
    EXPECT_EQ(k.cached, 0u) << what;
    EXPECT_EQ(k.keys, core::derive_genesis_keys("user", "apiary", 0, accounts)) << what;
    EXPECT_NE(k.warning.find(what), std::string::npos) << k.warning;
    EXPECT_EQ(k.warning.find('\n'), std::string::npos) << k.warning;
    EXPECT_EQ(k.note.find("saved to"), std::string::npos) << k.note;
  };
  const auto victim_file = [&] { std::ofstream(victim, std::ios::binary) << mine; };
  plant(
      [&] {
        victim_file();
        fs::create_symlink(victim, path);
      },
      "a symbolic link");
  EXPECT_TRUE(fs::is_symlink(path));
  std::ifstream in(victim, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), mine);
  plant([&] { fs::create_directory(path); }, "a directory");
  EXPECT_TRUE(fs::is_directory(path));
  plant([&] { ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0); }, "a FIFO");
  EXPECT_TRUE(fs::is_fifo(path));
  for (const std::string& foreign : {mine, std::string("APIA"), std::string()}) {
    plant([&] { std::ofstream(path, std::ios::binary) << foreign; }, "not a key cache");
    std::ifstream again(path, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), foreign);
  }
  EXPECT_FALSE(std::any_of(fs::directory_iterator(dir_), fs::directory_iterator(), [](const fs::directory_entry& e) {
    return e.path().string().find(".tmp") != std::string::npos;
  }));
}

TEST_F(GenesisKeyCache, ACacheThatCannotBeWrittenCostsOnlyItsSpeed) {
  fs::create_directories(dir_.parent_path());
  { std::ofstream(dir_.string()) << "a file where the directory should be"; }
  const genesis_key_set k = keys();
  EXPECT_EQ(k.keys, core::derive_genesis_keys("user", "apiary", 0, accounts));
  EXPECT_NE(k.note.find("not saved"), std::string::npos) << k.note;
  fs::remove(dir_);
}

TEST_F(GenesisKeyCache, SmallGenesesAndAnOffCacheDeriveInTheChain) {
  options_.genesis_accounts = 999;
  EXPECT_TRUE(keys().keys.empty());
  options_.genesis_accounts = accounts;
  EXPECT_TRUE(genesis_keys(options_, "").keys.empty());
  EXPECT_FALSE(fs::exists(dir_));
}

// Sets an environment variable (nullptr: unsets it) until destroyed.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(GenesisKeyCacheDir, TheEnvironmentNamesTheDirectory) {
  const scoped_env home("HOME", "/home/someone");
  {
    const scoped_env cache("APIARY_KEY_CACHE", "off");
    EXPECT_EQ(key_cache_dir(), "");
  }
  {
    const scoped_env cache("APIARY_KEY_CACHE", "/somewhere/keys");
    EXPECT_EQ(key_cache_dir(), "/somewhere/keys");
  }
  const scoped_env cache("APIARY_KEY_CACHE", nullptr);
  {
    const scoped_env xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(key_cache_dir(), "/xdg/apiary/keys");
  }
  const scoped_env xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(key_cache_dir(), "/home/someone/.cache/apiary/keys");
}

}  // namespace
}  // namespace apiary::harness
