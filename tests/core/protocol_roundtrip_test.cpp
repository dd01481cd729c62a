#include <gtest/gtest.h>

#include <memory>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "samples.hpp"

namespace apiary::core {
namespace {

using namespace testing;

template <class T>
void expect_round_trip(const T& v) {
  out_buffer buf;
  pack_into(buf, v);
  EXPECT_EQ(packed_size(v), buf.size()) << "size computer disagrees with the writer";
  T back = unpack_from<T>(buf.span());
  EXPECT_EQ(back, v);
  out_buffer again;
  pack_into(again, back);
  EXPECT_EQ(again.view(), buf.view()) << "re-packing changed the bytes";
}

TEST(RoundTrip, EveryOperation) {
  for (const operation& op : {sample_vote(), sample_comment(), sample_comment(20'000), sample_transfer(),
                              sample_custom_json(), sample_comment_options()})
    expect_round_trip(op);
}

TEST(RoundTrip, ParticularTypes) {
  expect_round_trip(asset::hive(-5));
  expect_round_trip(asset::hbd(INT64_MAX));
  expect_round_trip(account_name("abcdefghijklmnop"));
  expect_round_trip(beneficiary_route{"bob", 10000});
  expect_round_trip(time_point_sec{123});
  expect_round_trip(comment_payout_beneficiaries{{{"a-b", 1}, {"c-d", 2}}});
}

TEST(RoundTrip, TransactionsAndBlocks) {
  expect_round_trip(transaction{});
  expect_round_trip(sample_transaction());
  expect_round_trip(sample_signed_transaction());
  expect_round_trip(static_cast<const block_header&>(sample_block()));
  expect_round_trip(static_cast<const signed_block_header&>(sample_block()));
  expect_round_trip(sample_block(0));
  expect_round_trip(sample_block(5));
}

TEST(Transaction, OperationIndexIsHiveWireId) {
  out_buffer buf;
  byte_writer w(buf);
  pack(w, sample_custom_json());
  EXPECT_EQ(buf.bytes()[0], 18);
  buf.clear();
  pack(w, sample_comment_options());
  EXPECT_EQ(buf.bytes()[0], 19);
}

TEST(Transaction, IdIsTruncatedSha256OfUnsignedBytes) {
  signed_transaction st = sample_signed_transaction();
  out_buffer buf;
  pack_into(buf, static_cast<const transaction&>(st));
  sha256_digest d = sha256(buf.data(), buf.size());
  transaction_id id = compute_id(st);
  EXPECT_TRUE(std::equal(id.begin(), id.begin() + 20, d.begin()));
  // Signatures do not change the id.
  st.signatures.clear();
  EXPECT_EQ(compute_id(st), id);
}

TEST(Transaction, ReferenceBlockTakesNumberAndPrefix) {
  block_id id;
  for (std::size_t i = 0; i < id.size(); ++i) id.data[i] = static_cast<std::uint8_t>(i + 1);
  transaction tx;
  tx.set_reference_block(id);
  EXPECT_EQ(block_num_from_id(id), 0x01020304u);
  EXPECT_EQ(tx.ref_block_num, 0x0304);
  EXPECT_EQ(tx.ref_block_prefix, 0x08070605u);
}

TEST(FullTransaction, CachesWhatPackingWouldGive) {
  signed_transaction st = sample_signed_transaction();
  full_transaction ft(st, hive_mainnet_chain_id());
  out_buffer buf;
  pack_into(buf, st);
  EXPECT_EQ(ft.packed_size(), buf.size());
  EXPECT_TRUE(std::equal(ft.packed().begin(), ft.packed().end(), buf.bytes()));
  EXPECT_EQ(ft.id(), compute_id(st));
  EXPECT_EQ(ft.sig_digest(), signature_digest(st, hive_mainnet_chain_id()));
  EXPECT_EQ(ft.merkle_digest(), merkle_digest(st));
}

TEST(FullTransaction, SigningConstructorMatchesSigningByHand) {
  auto key = private_key::from_login("alice", key_role::posting, "apiary-test");
  const private_key keys[] = {key};
  const public_key pubs[] = {key.public_key()};
  full_transaction ft(sample_transaction(), hive_mainnet_chain_id(), keys, pubs);
  signed_transaction by_hand = sample_signed_transaction();
  EXPECT_EQ(ft.tx(), by_hand);
  full_transaction reference(by_hand, hive_mainnet_chain_id());
  EXPECT_TRUE(std::equal(ft.packed().begin(), ft.packed().end(), reference.packed().begin(), reference.packed().end()));
  ASSERT_EQ(ft.signer_keys().size(), 1u);
  EXPECT_EQ(recover_public_key(ft.tx().signatures[0], ft.sig_digest()), ft.signer_keys()[0]);
}

TEST(FullBlock, PacksLikeTheSignedBlock) {
  signed_block b = sample_block(4);
  full_block fb;
  fb.header = b;
  for (const auto& tx : b.transactions)
    fb.transactions.push_back(std::make_shared<const full_transaction>(tx, hive_mainnet_chain_id()));
  out_buffer a, c;
  fb.pack_into(a);
  pack_into(c, b);
  EXPECT_EQ(a.view(), c.view());
  EXPECT_EQ(fb.packed_size(), packed_size(b));
  EXPECT_EQ(fb.compute_merkle_root(), compute_merkle_root(b));
  EXPECT_EQ(fb.to_signed_block(), b);
}

TEST(Block, DecodeWithIdsGivesEachTransactionId) {
  signed_block b = sample_block(5);
  out_buffer buf;
  pack_into(buf, b);
  decoded_block d = decode_block_with_ids(buf.span());
  EXPECT_EQ(d.block, b);
  ASSERT_EQ(d.transaction_ids.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(d.transaction_ids[i], compute_id(b.transactions[i]));
}

TEST(Block, IdCarriesBlockNumber) {
  signed_block b = sample_block(1);
  block_id id = compute_block_id(b);
  EXPECT_EQ(block_num_from_id(id), 42u);
  out_buffer buf;
  pack_into(buf, static_cast<const signed_block_header&>(b));
  sha224_digest h = sha224(buf.data(), buf.size());
  EXPECT_TRUE(std::equal(id.begin() + 4, id.end(), h.begin() + 4));
}

TEST(Block, MerkleRootPairsLeavesAndCarriesTheOddOneUp) {
  std::vector<sha256_digest> leaves(3);
  for (std::size_t i = 0; i < 3; ++i) leaves[i].data[0] = static_cast<std::uint8_t>(i + 1);
  auto l = leaves;
  sha256_digest ab = sha256(std::span<const std::uint8_t>(l[0].data), std::span<const std::uint8_t>(l[1].data));
  sha256_digest top = sha256(std::span<const std::uint8_t>(ab.data), std::span<const std::uint8_t>(l[2].data));
  EXPECT_EQ(merkle_root(leaves), ripemd160(top.begin(), top.size()));
  std::vector<sha256_digest> one = {l[0]};
  EXPECT_EQ(merkle_root(one), ripemd160(l[0].begin(), 32));
  EXPECT_TRUE(merkle_root({}).is_zero());
}

}  // namespace
}  // namespace apiary::core
