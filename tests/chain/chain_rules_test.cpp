// Transaction rules: every rejection reason from a minimal transaction, with no trace left
// behind, under every combination of the chain's switches; and the authority checks.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chain_test_support.hpp"

namespace {

using namespace apiary;
using namespace apiary::chain_test;

class ChainRejects : public ::testing::TestWithParam<modes> {
 protected:
  ChainRejects() : h(small_options(50, GetParam())) {}

  // Pushes a pending transaction first so the rejected one meets a non-empty pending state,
  // then checks that the rejection left everything as it was.
  void expect_no_trace(const core::full_transaction_ptr& t, reject expected, const account_name& who) {
    const trace before = h.snapshot(t->id(), who);
    EXPECT_EQ(h.push(t), expected);
    const trace after = h.snapshot(t->id(), who);
    EXPECT_EQ(before, after);
  }

  void SetUp() override {
    ASSERT_EQ(h.push(h.make(custom_json(user(9), "setup"), user(9))), reject::none);
    ASSERT_EQ(h.push(h.make(post(user(8), "existing"), user(8))), reject::none);
  }

  harness h;
};

TEST_P(ChainRejects, Oversize) {
  auto t = h.make(post(user(1), "big", std::string(70'000, 'x')), user(1));
  ASSERT_GT(t->packed_size(), core::chain_limits::max_transaction_size);
  expect_no_trace(t, reject::oversize, user(1));
}

TEST_P(ChainRejects, NoOperations) { expect_no_trace(h.sign(h.tx(60), {{user(1)}}), reject::no_operations, user(1)); }

TEST_P(ChainRejects, Expired) {
  expect_no_trace(h.make(custom_json(user(1)), user(1), key_role::posting, 0), reject::expired, user(1));
}

TEST_P(ChainRejects, ExpirationTooFar) {
  const std::uint32_t too_far = core::chain_limits::max_expiration_secs + 1;
  expect_no_trace(h.make(custom_json(user(1)), user(1), key_role::posting, too_far), reject::expiration_too_far,
                  user(1));
  // The limit itself is fine.
  EXPECT_EQ(h.push(h.make(custom_json(user(1)), user(1), key_role::posting, too_far - 1)), reject::none);
}

TEST_P(ChainRejects, UnknownReferenceBlock) {
  core::transaction t = h.tx(60, custom_json(user(1)));
  t.ref_block_prefix ^= 1;
  expect_no_trace(h.sign(std::move(t), {{user(1)}}), reject::unknown_reference_block, user(1));
}

// Hive's skip_tapos_check: with the check off, a reference to no recent block is accepted,
// and every other rule still holds.
TEST(ChainTapos, OffAcceptsAnyReferenceBlock) {
  core::chain_options o = small_options(50);
  o.check_tapos = false;
  harness h(o);
  core::transaction t = h.tx(60, custom_json(user(1)));
  t.ref_block_prefix ^= 1;
  EXPECT_EQ(h.push(h.sign(std::move(t), {{user(1)}})), reject::none);
  EXPECT_EQ(h.push(h.make(custom_json(user(1)), user(1), key_role::posting, 0)), reject::expired);
}

TEST_P(ChainRejects, Duplicate) {
  auto t = h.make(custom_json(user(1), "dup"), user(1));
  ASSERT_EQ(h.push(t), reject::none);
  expect_no_trace(t, reject::duplicate, user(1));
  // The same transaction signed again has the same id (the id covers no signature).
  expect_no_trace(h.sign(t->tx(), {{user(1), key_role::active}}), reject::duplicate, user(1));
}

TEST_P(ChainRejects, UnknownAccount) {
  expect_no_trace(h.make(transfer(user(1), "nobody", 1), user(1), key_role::active), reject::unknown_account, user(1));
  // A required authority of an account that does not exist.
  core::custom_json_operation op = custom_json(user(1));
  op.required_posting_auths.push_back("nobody");
  expect_no_trace(h.make(op, user(1)), reject::unknown_account, user(1));
}

TEST_P(ChainRejects, MissingAuthority) {
  expect_no_trace(h.make(transfer(user(1), user(2), 1), user(1), key_role::posting), reject::missing_authority,
                  user(1));
  expect_no_trace(h.make(custom_json(user(1)), user(2)), reject::missing_authority, user(1));
  expect_no_trace(std::make_shared<const core::full_transaction>(
                      signed_without_signatures(h.tx(60, custom_json(user(1), "unsigned"))), h.chain().options().chain),
                  reject::missing_authority, user(1));
}

// A canonical 65-byte signature from which no key recovers, found deterministically.
core::compact_signature unrecoverable_signature(const core::sha256_digest& digest) {
  core::compact_signature sig;
  sig.data.fill(0x11);
  sig.data[0] = 27 + 4;
  for (std::uint8_t b = 0;; ++b) {
    sig.data[2] = b;
    if (core::is_canonical(sig) && !core::recover_public_key(sig, digest)) return sig;
    if (b == 255) break;
  }
  ADD_FAILURE() << "no unrecoverable signature found";
  return sig;
}

TEST_P(ChainRejects, BadSignature) {
  // Without attached keys the keys are recovered whatever the switch says.
  core::signed_transaction st = signed_without_signatures(h.tx(60, custom_json(user(1), "garbage")));
  const core::sha256_digest digest = core::signature_digest(st, h.chain().options().chain);
  st.signatures.push_back(unrecoverable_signature(digest));
  expect_no_trace(std::make_shared<const core::full_transaction>(st, h.chain().options().chain), reject::bad_signature,
                  user(1));
  // A header byte outside 27..34.
  st.signatures.front().data[0] = 0;
  expect_no_trace(std::make_shared<const core::full_transaction>(st, h.chain().options().chain), reject::bad_signature,
                  user(1));
}

TEST_P(ChainRejects, UnknownComment) {
  expect_no_trace(h.make(vote(user(1), user(8), "missing", 100), user(1)), reject::unknown_comment, user(1));
  expect_no_trace(h.make(options(user(8), "missing"), user(8)), reject::unknown_comment, user(8));
}

TEST_P(ChainRejects, UnknownParent) {
  expect_no_trace(h.make(reply(user(1), "re", user(8), "missing"), user(1)), reject::unknown_parent, user(1));
}

TEST_P(ChainRejects, InvalidOperation) {
  expect_no_trace(h.make(vote(user(1), user(8), "existing", 10001), user(1)), reject::invalid_operation, user(1));
  expect_no_trace(h.make(transfer(user(1), user(2), 0), user(1), key_role::active), reject::invalid_operation, user(1));
  core::custom_json_operation no_auths = custom_json(user(1));
  no_auths.required_posting_auths.clear();
  expect_no_trace(h.make(no_auths, user(1)), reject::invalid_operation, user(1));
}

TEST_P(ChainRejects, InsufficientFunds) {
  expect_no_trace(h.make(transfer(user(1), user(2), genesis_balance + 1), user(1), key_role::active),
                  reject::insufficient_funds, user(1));
}

TEST_P(ChainRejects, InvalidJson) {
  expect_no_trace(h.make(custom_json(user(1), "bad", "{not json"), user(1)), reject::invalid_json, user(1));
  core::comment_operation c = post(user(1), "meta");
  c.json_metadata = "[1,";
  expect_no_trace(h.make(c, user(1)), reject::invalid_json, user(1));
}

TEST_P(ChainRejects, CustomJsonIdTooLong) {
  expect_no_trace(h.make(custom_json(user(1), std::string(33, 'i')), user(1)), reject::custom_json_id_too_long,
                  user(1));
}

TEST_P(ChainRejects, CustomJsonTooLarge) {
  // "…" is valid JSON of 8,193 bytes.
  std::string json = "\"" + std::string(8191, 'j') + "\"";
  expect_no_trace(h.make(custom_json(user(1), "big", json), user(1)), reject::custom_json_too_large, user(1));
}

TEST_P(ChainRejects, CustomOpLimit) {
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(h.push(h.make(custom_json(user(1), "op" + std::to_string(i)), user(1))), reject::none);
  ASSERT_EQ(h.chain().custom_ops_in_block(user(1)), 5u);
  expect_no_trace(h.make(custom_json(user(1), "op5"), user(1)), reject::custom_op_limit, user(1));
}

// A transaction whose later operation fails leaves none of its earlier ones behind.
TEST_P(ChainRejects, LaterOperationFailureUndoesEarlierOnes) {
  auto t = h.sign(h.tx(60, transfer(user(1), user(2), 5), custom_json(user(1), "x", "{"), post(user(1), "p")),
                  {{user(1), key_role::active}});
  expect_no_trace(t, reject::invalid_json, user(1));
  auto t2 = h.sign(h.tx(60, post(user(1), "p2"), vote(user(1), user(1), "p2", 100), reply(user(1), "r", user(7), "no")),
                   {{user(1)}});
  expect_no_trace(t2, reject::unknown_parent, user(1));
}

// Every reason but none appears above; this keeps the list honest when the enum grows.
TEST(ChainRejectNames, EveryReasonHasAName) {
  for (std::size_t i = 0; i < core::reject_count; ++i)
    EXPECT_NE(core::reject_name(static_cast<reject>(i)), "unknown") << i;
}

INSTANTIATE_TEST_SUITE_P(Modes, ChainRejects, ::testing::ValuesIn(all_modes()),
                         [](const ::testing::TestParamInfo<modes>& p) { return mode_name(p.param); });

// ---- authority --------------------------------------------------------------------------

class ChainAuthority : public ::testing::TestWithParam<core::signer_source> {
 protected:
  ChainAuthority() : h(small_options(20, modes{.signers = GetParam()})) {}
  bool recovering() const { return GetParam() == core::signer_source::recover; }
  harness h;
};

TEST_P(ChainAuthority, ActiveRequiredForTransfer) {
  EXPECT_EQ(h.push(h.make(transfer(user(1), user(2), 1), user(1), key_role::posting)), reject::missing_authority);
  EXPECT_EQ(h.push(h.make(transfer(user(1), user(2), 1), user(1), key_role::active)), reject::none);
}

TEST_P(ChainAuthority, ActiveKeySatisfiesPosting) {
  EXPECT_EQ(h.push(h.make(custom_json(user(1)), user(1), key_role::active)), reject::none);
  EXPECT_EQ(h.push(h.make(post(user(1), "p"), user(1), key_role::active)), reject::none);
  EXPECT_EQ(h.push(h.make(vote(user(2), user(1), "p", 100), user(2), key_role::active)), reject::none);
}

TEST_P(ChainAuthority, PostingKeySatisfiesPostingOperations) {
  EXPECT_EQ(h.push(h.make(post(user(1), "p"), user(1))), reject::none);
  EXPECT_EQ(h.push(h.make(options(user(1), "p", {{user(2), 100}}), user(1))), reject::none);
  EXPECT_EQ(h.push(h.make(vote(user(2), user(1), "p", 100), user(2))), reject::none);
  EXPECT_EQ(h.push(h.make(custom_json(user(3)), user(3))), reject::none);
}

TEST_P(ChainAuthority, RequiredAuthsNeedActive) {
  core::custom_json_operation op;
  op.required_auths.push_back(user(1));
  op.id = "active";
  op.json = "{}";
  EXPECT_EQ(h.push(h.make(op, user(1), key_role::posting)), reject::missing_authority);
  EXPECT_EQ(h.push(h.make(op, user(1), key_role::active)), reject::none);
}

TEST_P(ChainAuthority, WrongKeyMissingAuthority) {
  EXPECT_EQ(h.push(h.make(custom_json(user(1)), user(2))), reject::missing_authority);
  EXPECT_EQ(h.push(h.make(vote(user(1), user(1), "p", 1), user(1), key_role::memo)), reject::missing_authority);
}

TEST_P(ChainAuthority, EverySignerNeeded) {
  core::custom_json_operation op = custom_json(user(1), "both");
  op.required_posting_auths.push_back(user(2));
  EXPECT_EQ(h.push(h.sign(h.tx(60, op), {{user(1)}})), reject::missing_authority);
  EXPECT_EQ(h.push(h.sign(h.tx(60, op), {{user(1)}, {user(2)}})), reject::none);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(1)), 1u);
  EXPECT_EQ(h.chain().custom_ops_in_block(user(2)), 1u);
}

// Attached keys are the producer's word: the node does not recover them, so a transaction
// signed with one key but carrying another's public key passes with "attached" and fails
// with "recover". Without attached keys both recover.
TEST_P(ChainAuthority, AttachedKeysAreTrustedRecoveredKeysAreChecked) {
  const core::private_key wrong = h.keys().private_key(user(5), key_role::posting);
  const core::public_key claimed = h.keys().public_key(user(1), key_role::posting);
  auto forged = std::make_shared<const core::full_transaction>(h.tx(60, custom_json(user(1), "forged")),
                                                               h.chain().options().chain, std::span(&wrong, 1),
                                                               std::span(&claimed, 1));
  EXPECT_EQ(h.push(forged), recovering() ? reject::missing_authority : reject::none);

  auto plain = h.sign(h.tx(60, custom_json(user(1), "plain")), {{user(1)}}, /*attach=*/false);
  EXPECT_TRUE(plain->signer_keys().empty());
  EXPECT_EQ(h.push(plain), reject::none);
}

TEST_P(ChainAuthority, NonCanonicalSignatureRejectedWhenRecovering) {
  auto good = h.sign(h.tx(60, custom_json(user(1), "canon")), {{user(1)}}, /*attach=*/false);
  core::signed_transaction st = good->tx();
  st.signatures.front().data[1] |= 0x80;  // r's top bit: not canonical
  ASSERT_FALSE(core::is_canonical(st.signatures.front()));
  EXPECT_EQ(h.push(std::make_shared<const core::full_transaction>(st, h.chain().options().chain)),
            reject::bad_signature);
  EXPECT_EQ(h.push(good), reject::none);
}

INSTANTIATE_TEST_SUITE_P(Signers, ChainAuthority,
                         ::testing::Values(core::signer_source::attached, core::signer_source::recover),
                         [](const ::testing::TestParamInfo<core::signer_source>& p) {
                           return p.param == core::signer_source::attached ? std::string("Attached")
                                                                           : std::string("Recover");
                         });

}  // namespace

namespace {

// check_authority off (the harness's "core alone" mode): no signature is looked at, but every
// account an operation names must still exist.
TEST(ChainAuthorityOff, UnsignedAcceptedAccountsStillChecked) {
  core::chain_options o = small_options(20);
  o.check_authority = false;
  harness h(o);
  auto unsigned_tx = [&](auto op) {
    return std::make_shared<const core::full_transaction>(signed_without_signatures(h.tx(60, std::move(op))),
                                                          h.chain().options().chain);
  };
  EXPECT_EQ(h.push(unsigned_tx(transfer(user(1), user(2), 5))), reject::none);
  EXPECT_EQ(h.push(unsigned_tx(custom_json(user(1), "x"))), reject::none);
  EXPECT_EQ(h.push(unsigned_tx(transfer(user(1), "nobody", 5))), reject::unknown_account);
  EXPECT_EQ(h.push(unsigned_tx(transfer("nobody", user(1), 5))), reject::unknown_account);
  EXPECT_EQ(h.push(unsigned_tx(custom_json("nobody", "y"))), reject::unknown_account);
  EXPECT_EQ(h.push(unsigned_tx(vote("nobody", user(1), "p", 5))), reject::unknown_account);
  EXPECT_EQ(h.push(unsigned_tx(post("nobody", "p"))), reject::unknown_account);
  EXPECT_EQ(h.chain().pending_count(), 2u);
}

}  // namespace
