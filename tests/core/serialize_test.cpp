#include "apiary/core/protocol/serialize.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace apiary::core {
namespace {

std::vector<std::uint8_t> packed(const auto& v) {
  out_buffer buf;
  pack_into(buf, v);
  return {buf.bytes(), buf.bytes() + buf.size()};
}

TEST(Varint, MatchesLeb128AtEveryLengthBoundary) {
  struct vec {
    std::uint32_t v;
    std::vector<std::uint8_t> bytes;
  };
  const vec cases[] = {{0, {0x00}},
                       {127, {0x7f}},
                       {128, {0x80, 0x01}},
                       {300, {0xac, 0x02}},
                       {16383, {0xff, 0x7f}},
                       {16384, {0x80, 0x80, 0x01}},
                       {UINT32_MAX, {0xff, 0xff, 0xff, 0xff, 0x0f}}};
  for (const auto& c : cases) {
    out_buffer buf;
    byte_writer w(buf);
    pack_varint(w, c.v);
    EXPECT_EQ(std::vector<std::uint8_t>(buf.bytes(), buf.bytes() + buf.size()), c.bytes) << c.v;
    EXPECT_EQ(varint_size(c.v), c.bytes.size()) << c.v;
    byte_reader r(c.bytes);
    EXPECT_EQ(unpack_varint(r, "test"), c.v);
    EXPECT_TRUE(r.at_end());
  }
}

TEST(Varint, RejectsOverlongAndOversizedForms) {
  const std::vector<std::uint8_t> overlong = {0x80, 0x00};
  byte_reader r1(overlong);
  EXPECT_THROW(unpack_varint(r1, "test"), decode_error);
  const std::vector<std::uint8_t> too_big = {0xff, 0xff, 0xff, 0xff, 0x1f};
  byte_reader r2(too_big);
  EXPECT_THROW(unpack_varint(r2, "test"), decode_error);
  const std::vector<std::uint8_t> six = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  byte_reader r3(six);
  EXPECT_THROW(unpack_varint(r3, "test"), decode_error);
}

TEST(Primitives, IntegersAreLittleEndian) {
  EXPECT_EQ(packed(std::uint16_t{0x1234}), (std::vector<std::uint8_t>{0x34, 0x12}));
  EXPECT_EQ(packed(std::int16_t{-2}), (std::vector<std::uint8_t>{0xfe, 0xff}));
  EXPECT_EQ(packed(std::uint32_t{0xdeadbeef}), (std::vector<std::uint8_t>{0xef, 0xbe, 0xad, 0xde}));
}

TEST(Primitives, StringIsVarintLengthThenBytes) {
  EXPECT_EQ(packed(std::string("abc")), (std::vector<std::uint8_t>{3, 'a', 'b', 'c'}));
  std::string big(200, 'z');
  auto b = packed(big);
  ASSERT_EQ(b.size(), 202u);
  EXPECT_EQ(b[0], 0xc8);
  EXPECT_EQ(b[1], 0x01);
}

TEST(Asset, PacksLegacySymbol) {
  EXPECT_EQ(packed(asset::hive(1000)),
            (std::vector<std::uint8_t>{0xe8, 0x03, 0, 0, 0, 0, 0, 0, 3, 'S', 'T', 'E', 'E', 'M', 0, 0}));
  EXPECT_EQ(packed(asset::hbd(1)), (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0, 0, 0, 3, 'S', 'B', 'D', 0, 0, 0, 0}));
}

TEST(Asset, RejectsUnknownSymbol) {
  std::vector<std::uint8_t> b = {1, 0, 0, 0, 0, 0, 0, 0, 3, 'V', 'E', 'S', 'T', 'S', 0, 0};
  EXPECT_THROW(unpack_from<asset>(b), decode_error);
}

TEST(AccountName, ValidityFollowsHiveRules) {
  for (const char* good : {"abc", "alice", "a-b-c", "foo.bar", "user123", "abcdefghijklmnop"})
    EXPECT_TRUE(account_name::is_valid(good)) << good;
  for (const char* bad : {"", "ab", "Alice", "1abc", "abc-", "foo..bar", "foo.ba", "abcdefghijklmnopq", "a_b"})
    EXPECT_FALSE(account_name::is_valid(bad)) << bad;
}

TEST(TimePoint, IsoRoundTrip) {
  char buf[19];
  time_point_sec{0}.to_iso(buf);
  EXPECT_EQ(std::string_view(buf, 19), "1970-01-01T00:00:00");
  time_point_sec{1'470'659'057}.to_iso(buf);
  EXPECT_EQ(std::string_view(buf, 19), "2016-08-08T12:24:17");
  for (std::uint32_t t : {0u, 951'782'400u, 1'470'659'057u, 4'102'444'800u, UINT32_MAX}) {
    time_point_sec{t}.to_iso(buf);
    auto back = time_point_sec::from_iso(std::string_view(buf, 19));
    ASSERT_TRUE(back) << t;
    EXPECT_EQ(back->secs, t);
  }
  EXPECT_FALSE(time_point_sec::from_iso("2016-02-30T00:00:00"));
  EXPECT_FALSE(time_point_sec::from_iso("2016-08-08 12:24:17"));
}

}  // namespace
}  // namespace apiary::core
