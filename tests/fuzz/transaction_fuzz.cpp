// Fuzz target: a signed transaction in Hive's wire format, as a node receives it.
//
// Properties (any failure aborts, and libFuzzer keeps the input):
//   - decoding either succeeds or throws decode_error with an offset inside the input;
//     no other exception, crash, undefined behaviour or leak;
//   - what decodes packs back to the input bytes, and packed_size() agrees: the decoder
//     accepts only the canonical encoding, except that a test-net build's symbol words
//     (TESTS, TBD) read as HIVE and HBD and pack again as the main net's (repack.hpp);
//   - full_transaction, built from the decoded value, holds the bytes packed again, and its
//     id is the hash of their unsigned prefix;
//   - recovering a signer from whatever signature bytes arrived never crashes;
//   - the JSON form writes and is well-formed JSON (UTF-8 aside: strings are copied as they
//     came, and a decoded string need not be UTF-8).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "json_grammar.hpp"
#include "repack.hpp"

using namespace apiary::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  signed_transaction tx;
  try {
    tx = unpack_from<signed_transaction>(in);
  } catch (const decode_error& e) {
    APIARY_CHECK(e.offset() <= size);
    return 0;
  }

  out_buffer packed;
  pack_into(packed, tx);
  APIARY_CHECK(apiary::fuzz::same_but_testnet_symbols(packed.span(), in));
  APIARY_CHECK(packed_size(tx) == size);

  const std::size_t unsigned_size = packed_size(static_cast<const transaction&>(tx));
  APIARY_CHECK(unsigned_size <= size);
  const transaction_id id = transaction_id_of(packed.span().first(unsigned_size));
  APIARY_CHECK(compute_id(tx) == id);

  const full_transaction full(tx, hive_mainnet_chain_id());
  APIARY_CHECK(std::ranges::equal(full.packed(), packed.span()));
  APIARY_CHECK(full.id() == id);
  APIARY_CHECK(full.tx() == tx);

  // Recovery costs tens of microseconds; two signatures cover the header-byte and
  // malformed-point cases without slowing the search much.
  const std::size_t n = std::min<std::size_t>(tx.signatures.size(), 2);
  for (std::size_t i = 0; i < n; ++i) (void)recover_public_key(tx.signatures[i], full.sig_digest());

  out_buffer json;
  json_writer w(json);
  write_json(w, tx);
  APIARY_CHECK(apiary::fuzz::json_grammar::check(json.view(), {.check_utf8 = false}) == apiary::fuzz::verdict::valid);
  return 0;
}
