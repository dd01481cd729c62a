// Every Hive operation kind round-trips through its described layout; real main-net blocks
// (tests/data/hive, block_api JSON) verify whole: block ids, merkle roots, transaction ids and
// signatures; damage is reported naming the block and the transaction.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "apiary/core/protocol/any_block.hpp"
#include "apiary/core/protocol/block_api_json.hpp"
#include "apiary/core/protocol/block_verify.hpp"
#include "samples.hpp"

namespace apiary::core {
namespace {

using namespace testing;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(APIARY_HIVE_DATA) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << "missing fixture " << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class T>
std::vector<std::uint8_t> packed(const T& v) {
  out_buffer buf;
  pack_into(buf, v);
  return {buf.bytes(), buf.bytes() + buf.size()};
}

// A value of every shape `t` allows, varied by `seed`: optionals present or not, each
// alternative of a variant, sequences of none to two elements.
wire_value sample(const wire_type& t, std::uint32_t& seed) {
  ++seed;
  wire_value v;
  switch (t.kind) {
    case wire_kind::boolean: v.number = seed & 1; break;
    case wire_kind::uint8: v.number = seed & 0xff; break;
    case wire_kind::uint16:
    case wire_kind::int16: v.number = (seed * 977) & 0xffff; break;
    case wire_kind::uint32:
    case wire_kind::time:
    case wire_kind::version: v.number = seed * 2654435761u; break;
    case wire_kind::uint64:
    case wire_kind::int64: v.number = std::uint64_t{seed} * 0x9e3779b97f4a7c15ull; break;
    case wire_kind::string: v.bytes = "name-" + std::to_string(seed); break;
    case wire_kind::bytes: v.bytes = std::string(seed % 5, static_cast<char>(seed)); break;
    case wire_kind::asset:
      v.number = seed;
      v.symbol = known_symbols[seed % std::size(known_symbols)].legacy_word();
      break;
    case wire_kind::public_key: v.bytes = std::string(1, '\x02') + std::string(32, static_cast<char>(seed)); break;
    case wire_kind::fixed: v.bytes = std::string(t.size, static_cast<char>(seed)); break;
    case wire_kind::structure:
    case wire_kind::pair:
      for (const wire_field& f : t.fields) v.items.push_back(sample(*f.type, seed));
      break;
    case wire_kind::sequence:
      for (std::uint32_t i = 0; i < seed % 3; ++i) v.items.push_back(sample(*t.element, seed));
      break;
    case wire_kind::optional:
      if (seed & 1) v.items.push_back(sample(*t.element, seed));
      break;
    case wire_kind::variant:
      v.number = seed % t.fields.size();
      v.items.push_back(sample(*t.fields[v.number].type, seed));
      break;
    case wire_kind::nothing: break;
  }
  return v;
}

std::vector<any_operation> samples_of_every_kind() {
  std::vector<any_operation> out;
  for (const operation& op :
       {sample_vote(), sample_comment(), sample_transfer(), sample_custom_json(), sample_comment_options()})
    out.push_back({op});
  std::uint32_t seed = 0;
  for (const operation_kind& k : operation_kinds())
    if (k.how == operation_class::described)
      for (int i = 0; i < 4; ++i) out.push_back({described_operation{k.wire_id, sample(k.layout, seed)}});
  return out;
}

TEST(OperationKinds, OneTableOfHivesStaticVariant) {
  std::set<std::string_view> names;
  for (const operation_kind& k : operation_kinds()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(find_operation_kind(k.name), &k);
    EXPECT_EQ(find_operation_kind(std::string(k.name) + "_operation"), &k);
  }
  EXPECT_EQ(find_operation_kind("pow2")->wire_id, 30u);
  EXPECT_EQ(find_operation_kind("recurrent_transfer_operation")->wire_id, 49u);
  EXPECT_EQ(find_operation_kind("no_such"), nullptr);
}

TEST(OperationKinds, EveryKindRoundTripsByteForByte) {
  std::set<std::uint32_t> seen;
  for (const any_operation& op : samples_of_every_kind()) {
    seen.insert(op.wire_id());
    const std::vector<std::uint8_t> bytes = packed(op);
    EXPECT_EQ(packed_size(op), bytes.size());
    const any_operation back = unpack_from<any_operation>(bytes);
    EXPECT_EQ(back, op) << op.kind().name;
    EXPECT_EQ(packed(back), bytes) << op.kind().name;
    // Every strict prefix is refused with a decode_error, never read past.
    for (std::size_t n = 0; n < bytes.size(); ++n)
      EXPECT_THROW(unpack_from<any_operation>(std::span(bytes.data(), n)), decode_error) << op.kind().name << " " << n;
  }
  for (const operation_kind& k : operation_kinds())
    EXPECT_EQ(seen.count(k.wire_id), k.how == operation_class::virtual_op ? 0u : 1u) << k.name;
}

TEST(OperationKinds, ModeledKindsDecodeToApiarysTypes) {
  const any_operation back = unpack_from<any_operation>(packed(any_operation{sample_transfer()}));
  ASSERT_TRUE(std::holds_alternative<operation>(back.op));
  EXPECT_EQ(std::get<operation>(back.op), sample_transfer());
}

TEST(OperationKinds, VirtualOperationsAreRefusedByName) {
  for (const operation_kind& k : operation_kinds()) {
    if (k.how != operation_class::virtual_op) continue;
    out_buffer buf;
    byte_writer w(buf);
    pack_varint(w, k.wire_id);
    try {
      unpack_from<any_operation>(buf.span());
      ADD_FAILURE() << k.name << " decoded";
    } catch (const decode_error& e) {
      EXPECT_NE(std::string(e.what()).find("virtual operation " + std::string(k.name)), std::string::npos) << e.what();
    }
  }
  const std::uint8_t beyond[] = {static_cast<std::uint8_t>(operation_kinds().size())};
  EXPECT_THROW(unpack_from<any_operation>(beyond), decode_error);
  EXPECT_THROW(operation_from_json(R"(["producer_reward", {}])"), block_json_error);
}

TEST(BlockApiJson, LegacyAndHf26FormsReadAlike) {
  const any_operation legacy =
      operation_from_json(R"(["transfer_to_vesting", {"from": "alice", "to": "bob", "amount": "1.500 STEEM"}])");
  const any_operation hf26 = operation_from_json(
      R"({"type": "transfer_to_vesting_operation", "value": {"from": "alice", "to": "bob",
          "amount": {"amount": "1500", "precision": 3, "nai": "@@000000021"}}})");
  EXPECT_EQ(legacy, hf26);
  EXPECT_EQ(operation_from_json(R"(["withdraw_vesting", {"account": "a", "vesting_shares": "2.000001 VESTS"}])"),
            operation_from_json(R"({"type": "withdraw_vesting_operation", "value": {"account": "a",
                "vesting_shares": {"amount": "2000001", "precision": 6, "nai": "@@000000037"}}})"));
  // Today's names of the symbols and Steem's pack the same.
  EXPECT_EQ(
      packed(operation_from_json(R"(["transfer", {"from": "a", "to": "b", "amount": "1.000 HBD", "memo": ""}])")),
      packed(operation_from_json(R"(["transfer", {"from": "a", "to": "b", "amount": "1.000 SBD", "memo": ""}])")));
  EXPECT_EQ(std::get<operation>(operation_from_json(R"(["vote", {"voter": "a", "author": "b", "permlink": "p",
      "weight": -10000}])")
                                    .op),
            operation(vote_operation{"a", "b", "p", -10000}));
}

TEST(BlockApiJson, BadValuesNameTheirPlace) {
  try {
    operation_from_json(R"(["transfer", {"from": "a", "to": "b", "amount": "1.00 HIVE", "memo": ""}])");
    ADD_FAILURE();
  } catch (const block_json_error& e) {
    EXPECT_NE(std::string(e.what()).find("value.amount"), std::string::npos) << e.what();
  }
  EXPECT_THROW(operation_from_json(R"(["account_update", {"account": "a"}])"), block_json_error);
  EXPECT_THROW(operation_from_json(R"(["vote", {"voter": "a", "author": "b", "permlink": "p", "weight": 40000}])"),
               block_json_error);
  EXPECT_THROW(read_block_api_json(R"({"blocks": [)"), block_json_error);
  EXPECT_THROW(read_block_api_json(R"({"other": 1})"), block_json_error);
}

// The operation kinds a block_api file names, counted straight from its JSON.
std::map<std::string, std::uint64_t> kinds_in_json(const std::string& text, std::uint64_t& transactions) {
  std::map<std::string, std::uint64_t> out;
  transactions = 0;
  const boost::json::value doc = boost::json::parse(text);
  for (const auto& b : doc.at("blocks").as_array())
    for (const auto& tx : b.at("transactions").as_array()) {
      ++transactions;
      for (const auto& op : tx.at("operations").as_array()) {
        std::string name(op.at("type").as_string());
        ++out[name.substr(0, name.size() - std::string_view("_operation").size())];
      }
    }
  return out;
}

struct verified_file {
  std::uint64_t blocks = 0;
  std::uint64_t transactions = 0;
  std::uint64_t signatures = 0;
  std::map<std::string, std::uint64_t> kinds;
};

verified_file verify_file(const std::string& text) {
  verified_file out;
  block_verifier verifier;
  for (const json_block& b : read_block_api_json(text)) {
    EXPECT_TRUE(b.expected.id && b.expected.signing_key && b.expected.transaction_ids);
    const verified_block v = verifier.verify(packed(b.block), b.expected);
    EXPECT_EQ(v.id, *b.expected.id);
    ++out.blocks;
    out.transactions += v.transactions;
    out.signatures += v.signatures;
    for (std::uint32_t id : v.operation_ids) ++out.kinds[std::string(operation_kinds()[id].name)];
  }
  return out;
}

TEST(MainnetBlocks, MillionthBlocksVerifyWhole) {
  const std::string text = fixture("milion.pat.json");
  const verified_file v = verify_file(text);
  std::uint64_t transactions = 0;
  EXPECT_EQ(v.kinds, kinds_in_json(text, transactions));
  EXPECT_EQ(v.blocks, boost::json::parse(text).at("blocks").as_array().size());
  EXPECT_EQ(v.transactions, transactions);
  EXPECT_GT(v.transactions, 0u);
  EXPECT_GT(v.signatures, 0u);
}

TEST(MainnetBlocks, FirstBlocksVerifyWhole) {
  const std::string text = fixture("one.pat.json");
  const verified_file v = verify_file(text);
  EXPECT_EQ(v.blocks, boost::json::parse(text).at("blocks").as_array().size());
}

TEST(MainnetBlocks, JsonPacksToBytesThatDecodeBackTheSame) {
  for (const json_block& b : read_block_api_json(fixture("milion.pat.json"))) {
    const std::vector<std::uint8_t> bytes = packed(b.block);
    block_layout layout;
    const any_block back = decode_any_block(bytes, layout);
    ASSERT_EQ(back, b.block) << "block " << b.block.block_num();
    ASSERT_EQ(packed(back), bytes);
  }
}

// A block of the fixture with transactions, and its expectations.
json_block busy_block() {
  for (json_block& b : read_block_api_json(fixture("milion.pat.json")))
    if (b.block.transactions.size() >= 2) return b;
  ADD_FAILURE() << "no block with two transactions";
  return {};
}

TEST(MainnetBlocks, AFlippedByteInAnOperationIsReportedWithItsTransaction) {
  const json_block b = busy_block();
  const std::vector<std::uint8_t> good = packed(b.block);
  block_layout layout;
  decode_any_block(good, layout);
  // The first byte of the second transaction's operations whose flip still decodes: the
  // operations start after TaPoS (6 bytes), the expiration (4) and their count, each with its
  // type; the last byte of the body is the extensions' count.
  const byte_range body = layout.transactions[1].body;
  std::vector<std::uint8_t> bytes;
  for (std::size_t at = body.begin + 12; at + 1 < body.end && bytes.empty(); ++at) {
    std::vector<std::uint8_t> flipped = good;
    flipped[at] ^= 0x01;
    block_layout ignored;
    try {
      decode_any_block(flipped, ignored);
      bytes = std::move(flipped);
    } catch (const block_error&) {
    }
  }
  ASSERT_FALSE(bytes.empty()) << "no flip of an operation's byte decodes";
  try {
    verify_block(bytes, b.expected);
    ADD_FAILURE() << "a flipped byte verified";
  } catch (const block_error& e) {
    EXPECT_EQ(e.block_num(), b.block.block_num());
    EXPECT_EQ(e.transaction(), std::optional<std::size_t>(1)) << e.what();
    EXPECT_NE(std::string(e.what()).find("transaction 1 (id "), std::string::npos) << e.what();
  }
  // Without stated ids, the merkle root catches it.
  block_expectations none;
  EXPECT_THROW(verify_block(bytes, none), block_error);
}

TEST(MainnetBlocks, AForeignSigningKeyIsReported) {
  json_block b = busy_block();
  b.expected.signing_key = private_key::from_login("someone", key_role::active, "x").public_key();
  EXPECT_THROW(verify_block(packed(b.block), b.expected), block_error);
}

TEST(MainnetBlocks, TruncatedBlocksAreRefusedNamingTheBlock) {
  const json_block b = busy_block();
  const std::vector<std::uint8_t> bytes = packed(b.block);
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    try {
      verify_block(std::span(bytes.data(), n), b.expected);
      ADD_FAILURE() << n;
    } catch (const block_error& e) {
      if (n >= 20) {
        EXPECT_EQ(e.block_num(), b.block.block_num());
      }
    }
  }
}

TEST(MainnetBlocks, ChainIdSwitchesAtHardfork24) {
  EXPECT_EQ(mainnet_signing_chain_id(time_point_sec{1602703884}), chain_id{});
  EXPECT_EQ(mainnet_signing_chain_id(time_point_sec{1602703885}), hive_mainnet_chain_id());
}

}  // namespace
}  // namespace apiary::core
