#include "apiary/core/protocol/keys.hpp"

#include <gtest/gtest.h>

#include "apiary/core/protocol/hash.hpp"

namespace apiary::core {
namespace {

TEST(Keys, LoginDerivationIsSha256OfAccountRolePassword) {
  auto k = private_key::from_login("alice", key_role::posting, "secret");
  std::string seed = "alicepostingsecret";
  EXPECT_EQ(k.secret().data, sha256(seed.data(), seed.size()).data);
  EXPECT_NE(k, private_key::from_login("alice", key_role::active, "secret"));
  EXPECT_NE(k, private_key::from_login("alicf", key_role::posting, "secret"));
}

TEST(Keys, WifRoundTripAndChecksum) {
  auto k = private_key::from_login("bob", key_role::active, "pw");
  std::string wif = k.to_wif();
  EXPECT_EQ(wif[0], '5');
  EXPECT_EQ(wif.size(), 51u);
  auto back = private_key::from_wif(wif);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, k);
  std::string broken = wif;
  broken[10] = broken[10] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(private_key::from_wif(broken));
  EXPECT_FALSE(private_key::from_wif("0OIl"));  // not base58
  EXPECT_FALSE(private_key::from_wif(""));
}

TEST(Keys, PublicKeyTextRoundTrip) {
  auto pub = private_key::from_login("bob", key_role::posting, "pw").public_key();
  std::string text = public_key_to_string(pub);
  EXPECT_TRUE(text.starts_with("STM"));
  EXPECT_EQ(text.size(), 53u);
  EXPECT_EQ(public_key_from_string(text), pub);
  std::string broken = text;
  broken.back() = broken.back() == 'a' ? 'b' : 'a';
  EXPECT_FALSE(public_key_from_string(broken));
  EXPECT_FALSE(public_key_from_string("TST" + text.substr(3)));
}

TEST(Keys, SignaturesAreCanonicalDeterministicAndRecoverable) {
  auto k = private_key::from_login("carol", key_role::posting, "pw");
  auto pub = k.public_key();
  for (int i = 0; i < 64; ++i) {
    sha256_digest d = sha256(&i, sizeof i);
    compact_signature s = k.sign(d);
    EXPECT_TRUE(is_canonical(s));
    EXPECT_EQ(s, k.sign(d)) << "signing must be deterministic";
    EXPECT_GE(s.data[0], 31);
    EXPECT_LE(s.data[0], 34);
    EXPECT_EQ(recover_public_key(s, d), pub);
    sha256_digest other = d;
    other.data[0] ^= 1;
    EXPECT_NE(recover_public_key(s, other), pub);
  }
}

TEST(Keys, MalformedSignaturesDoNotRecover) {
  compact_signature zero;
  sha256_digest d;
  EXPECT_FALSE(recover_public_key(zero, d));
  compact_signature bad_header;
  bad_header.data[0] = 99;
  EXPECT_FALSE(recover_public_key(bad_header, d));
}

}  // namespace
}  // namespace apiary::core
