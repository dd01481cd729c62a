// Truncated or malformed input is rejected with a decode_error that names the problem;
// never a crash or a read outside the input (the asan preset runs these).
#include <gtest/gtest.h>

#include <random>

#include "apiary/core/protocol/block.hpp"
#include "samples.hpp"

namespace apiary::core {
namespace {

using namespace testing;

std::vector<std::uint8_t> bytes_of(const auto& v) {
  out_buffer buf;
  pack_into(buf, v);
  return {buf.bytes(), buf.bytes() + buf.size()};
}

TEST(Malformed, EveryTruncationOfATransactionIsRejected) {
  auto b = bytes_of(sample_signed_transaction());
  for (std::size_t n = 0; n < b.size(); ++n)
    EXPECT_THROW(unpack_from<signed_transaction>({b.data(), n}), decode_error) << "prefix of " << n;
}

TEST(Malformed, EveryTruncationOfABlockIsRejected) {
  auto b = bytes_of(sample_block(2));
  for (std::size_t n = 0; n < b.size(); ++n) {
    EXPECT_THROW(unpack_from<signed_block>({b.data(), n}), decode_error) << "prefix of " << n;
    EXPECT_THROW(decode_block_with_ids({b.data(), n}), decode_error) << "prefix of " << n;
  }
}

TEST(Malformed, TrailingBytesAreRejected) {
  auto b = bytes_of(sample_signed_transaction());
  b.push_back(0);
  EXPECT_THROW(unpack_from<signed_transaction>(b), decode_error);
}

TEST(Malformed, ErrorNamesWhatAndWhere) {
  auto b = bytes_of(sample_signed_transaction());
  try {
    unpack_from<signed_transaction>({b.data(), 5});
    FAIL() << "no error";
  } catch (const decode_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 2u);  // after ref_block_num, the 4-byte prefix does not fit
  }
}

TEST(Malformed, UnknownOperationTypeIsRejected) {
  transaction tx;
  tx.operations.push_back(sample_vote());
  auto b = bytes_of(tx);
  b[11] = 7;  // the operation's type index, after ref fields (6), expiration (4), count (1)
  try {
    unpack_from<transaction>(b);
    FAIL() << "no error";
  } catch (const decode_error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported operation type 7"), std::string::npos) << e.what();
  }
}

TEST(Malformed, HugeCountsDoNotAllocate) {
  // A vector count of 2^32-1 with four bytes left: rejected before reserving anything.
  transaction tx;
  auto b = bytes_of(tx);
  b.resize(10);
  for (int x : {0xff, 0xff, 0xff, 0xff, 0x0f}) b.push_back(static_cast<std::uint8_t>(x));
  b.push_back(0);
  EXPECT_THROW(unpack_from<transaction>(b), decode_error);
}

TEST(Malformed, ABlockCountThatCannotFitIsRejectedBeforeAllocating) {
  // A header, then a claim of 2,000,000 transactions in 2 MB of zeros: each would need at
  // least 13 bytes, so the count alone is the error (it used to allocate ~700 MB first).
  signed_block_header h;
  auto b = bytes_of(h);
  for (int x : {0x80, 0x89, 0x7a}) b.push_back(static_cast<std::uint8_t>(x));  // varint 2,000,000
  b.resize(b.size() + 2'000'000, 0);
  try {
    decode_block_with_ids(b);
    FAIL() << "no error";
  } catch (const decode_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot fit"), std::string::npos) << e.what();
  }
}

TEST(Malformed, OverlongAccountNameIsRejected) {
  vote_operation v{"alice", "bob", "p", 1};
  auto b = bytes_of(v);
  b[0] = 17;  // the voter's length
  b.insert(b.begin() + 1, 12, 'z');
  EXPECT_THROW(unpack_from<vote_operation>(b), decode_error);
}

TEST(Malformed, UnsortedAccountSetIsRejected) {
  custom_json_operation c;
  c.required_posting_auths = {"bob", "alice"};  // not increasing
  auto b = bytes_of(c);
  EXPECT_THROW(unpack_from<custom_json_operation>(b), decode_error);
}

TEST(Malformed, BadBoolAndExtensionsAreRejected) {
  comment_options_operation o;
  o.author = "alice";
  o.permlink = "p";
  auto b = bytes_of(o);
  std::size_t allow_votes = 1 + 5 + 1 + 1 + 16 + 2;
  b[allow_votes] = 2;
  EXPECT_THROW(unpack_from<comment_options_operation>(b), decode_error);
  transaction tx;
  auto t = bytes_of(tx);
  t.back() = 1;  // one transaction extension
  EXPECT_THROW(unpack_from<transaction>(t), decode_error);
}

TEST(Malformed, RandomCorruptionNeverCrashes) {
  auto good = bytes_of(sample_block(3));
  std::mt19937 rng(7);
  int decoded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    auto b = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    try {
      decode_block_with_ids(b);
      ++decoded;
    } catch (const decode_error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(decoded, 0);  // flips inside strings and hashes are still valid encodings
}

}  // namespace
}  // namespace apiary::core
