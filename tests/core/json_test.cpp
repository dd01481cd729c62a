#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "apiary/core/protocol/custom_json.hpp"
#include "apiary/core/protocol/json.hpp"
#include "samples.hpp"

namespace apiary::core {
namespace {

using namespace testing;

TEST(Json, VoteTransactionInLegacyForm) {
  transaction tx;
  tx.ref_block_num = 36029;
  tx.ref_block_prefix = 1164960351;
  tx.expiration = time_point_sec{1'470'659'057};
  tx.operations.push_back(vote_operation{"foo", "bar", "baz", 10000});
  EXPECT_EQ(to_json(tx), R"({"ref_block_num":36029,"ref_block_prefix":1164960351,"expiration":"2016-08-08T12:24:17",)"
                         R"("operations":[["vote",{"voter":"foo","author":"bar","permlink":"baz","weight":10000}]],)"
                         R"("extensions":[]})");
}

TEST(Json, AssetsAndBeneficiaries) {
  EXPECT_EQ(to_json(operation(transfer_operation{"a", "b", asset::hbd(1), ""})),
            R"(["transfer",{"from":"a","to":"b","amount":"0.001 HBD","memo":""}])");
  EXPECT_EQ(to_json(operation(transfer_operation{"a", "b", asset::hive(-123456), "m"})),
            R"(["transfer",{"from":"a","to":"b","amount":"-123.456 HIVE","memo":"m"}])");
  std::string opts = to_json(sample_comment_options());
  EXPECT_NE(opts.find(R"("extensions":[[0,{"beneficiaries":[{"account":"bob","weight":500},)"
                      R"({"account":"carol","weight":500}]}]])"),
            std::string::npos)
      << opts;
  EXPECT_NE(opts.find(R"("max_accepted_payout":"1000000.000 HBD")"), std::string::npos) << opts;
}

TEST(Json, StringsAreEscaped) {
  std::string nasty = "q\"b\\n\nt\tc\x01\x1f u\xc3\xa9";
  out_buffer buf;
  json_writer w(buf);
  w.string(nasty);
  EXPECT_EQ(buf.view(), R"("q\"b\\n\nt\tc\u0001\u001f u)"
                        "\xc3\xa9\"");
  // And a real parser reads the original back.
  EXPECT_EQ(boost::json::parse(buf.view()).as_string(), nasty);
}

TEST(Json, SignedBlockParsesAndCarriesIds) {
  signed_block b = sample_block(3);
  std::vector<transaction_id> ids;
  for (const auto& tx : b.transactions) ids.push_back(compute_id(tx));
  block_id id = compute_block_id(b);
  out_buffer buf;
  json_writer w(buf);
  write_json(w, b, id, ids);
  boost::json::value v = boost::json::parse(buf.view());
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("witness").as_string(), "initminer");
  EXPECT_EQ(o.at("block_id").as_string(), to_hex(id));
  EXPECT_EQ(o.at("transaction_merkle_root").as_string(), to_hex(b.transaction_merkle_root));
  EXPECT_EQ(o.at("witness_signature").as_string(), to_hex(b.witness_signature));
  ASSERT_EQ(o.at("transactions").as_array().size(), 3u);
  ASSERT_EQ(o.at("transaction_ids").as_array().size(), 3u);
  EXPECT_EQ(o.at("transaction_ids").as_array()[1].as_string(), to_hex(ids[1]));
  const auto& tx0 = o.at("transactions").as_array()[0].as_object();
  EXPECT_EQ(tx0.at("signatures").as_array()[0].as_string(), to_hex(b.transactions[0].signatures[0]));
  EXPECT_EQ(tx0.at("operations").as_array().size(), 5u);
  EXPECT_EQ(tx0.at("operations").as_array()[3].as_array()[0].as_string(), "custom_json");
}

TEST(CustomJson, ValidatesWithARealParser) {
  for (const char* good : {"{}", "[]", "1", "\"s\"", "null", R"({"a":[1,2,{"b":null}],"c":"\u00e9"})", " [1 , 2] "})
    EXPECT_TRUE(is_valid_json(good)) << good;
  for (const char* bad : {"", "{", "[1,]", "{\"a\":}", "[1] [2]", "{'a':1}", "// c\n1", "tru", "\"\xff\""})
    EXPECT_FALSE(is_valid_json(bad)) << bad;
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_FALSE(is_valid_json(deep)) << "nesting beyond 64 levels";
}

}  // namespace
}  // namespace apiary::core
