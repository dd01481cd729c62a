// Hand-built protocol values covering every field and every operation, shared by the
// core tests.
#pragma once

#include <string>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/keys.hpp"

namespace apiary::core::testing {

inline operation sample_vote() { return vote_operation{"alice", "bob", "a-post", -2500}; }

inline operation sample_comment(std::size_t body_size = 40) {
  comment_operation c;
  c.parent_author = "bob";
  c.parent_permlink = "a-post";
  c.author = "alice";
  c.permlink = "re-a-post";
  c.title = "";
  c.body = std::string(body_size, 'x');
  c.json_metadata = R"({"app":"apiary/0.1","tags":["x"]})";
  return c;
}

inline operation sample_transfer() { return transfer_operation{"alice", "carol", asset::hbd(1), "memo \"quoted\""}; }

inline operation sample_custom_json() {
  custom_json_operation c;
  c.required_posting_auths = {"alice", "bob"};
  c.id = "follow";
  c.json = R"(["follow",{"follower":"alice","following":"bob","what":["blog"]}])";
  return c;
}

inline operation sample_comment_options() {
  comment_options_operation o;
  o.author = "alice";
  o.permlink = "a-post";
  o.max_accepted_payout = asset::hbd(1'000'000'000);
  o.percent_hbd = 5000;
  o.allow_votes = true;
  o.allow_curation_rewards = false;
  o.extensions.push_back({{{"bob", 500}, {"carol", 500}}});
  return o;
}

inline transaction sample_transaction() {
  transaction tx;
  tx.ref_block_num = 0x1234;
  tx.ref_block_prefix = 0xdeadbeef;
  tx.expiration = time_point_sec{1'700'000'000};
  tx.operations = {sample_vote(), sample_comment(300), sample_transfer(), sample_custom_json(),
                   sample_comment_options()};
  return tx;
}

inline signed_transaction sample_signed_transaction() {
  signed_transaction st;
  static_cast<transaction&>(st) = sample_transaction();
  auto key = private_key::from_login("alice", key_role::posting, "apiary-test");
  st.signatures.push_back(key.sign(signature_digest(st, hive_mainnet_chain_id())));
  return st;
}

inline signed_block sample_block(std::size_t n_tx = 3) {
  signed_block b;
  b.previous.data[3] = 41;  // block 41, so this is block 42
  b.timestamp = time_point_sec{1'700'000'003};
  b.witness = "initminer";
  for (std::size_t i = 0; i < n_tx; ++i) {
    signed_transaction st = sample_signed_transaction();
    st.ref_block_num = static_cast<std::uint16_t>(i);
    b.transactions.push_back(std::move(st));
  }
  b.transaction_merkle_root = compute_merkle_root(b);
  auto key = private_key::from_login("initminer", key_role::active, "apiary-test");
  b.witness_signature = key.sign(header_digest(b));
  return b;
}

}  // namespace apiary::core::testing
