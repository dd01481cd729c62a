// Fuzz target: a signed block in Hive's wire format, decoded as a node decodes a received
// block (decode_block_with_ids, which hashes each transaction's id from the bytes it came in).
//
// Properties (any failure aborts, and libFuzzer keeps the input):
//   - decoding either succeeds or throws decode_error with an offset inside the input;
//     no other exception, crash, undefined behaviour or leak;
//   - decode_block_with_ids and the generic unpack_from<signed_block> accept exactly the
//     same inputs and decode them to the same block;
//   - each transaction id is the hash of that transaction's unsigned bytes in the input;
//   - the block packs back to the input bytes, but for a test-net build's symbol words
//     (TESTS, TBD), which read as HIVE and HBD and pack again as the main net's
//     (repack.hpp), so an id computed by packing a transaction again is the hash of the
//     same range of the bytes packed again;
//   - a full_block built from the block (the block producer's path, from cached transaction
//     bytes) packs to the same bytes as the block, with the same size and merkle root;
//   - the block API's JSON form writes and is well-formed JSON (UTF-8 aside, as decoded
//     strings are copied as they came).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/json.hpp"
#include "json_grammar.hpp"
#include "repack.hpp"

using namespace apiary::core;

namespace {

// The generic decoder's answer for the same bytes: true when it accepts them.
bool generic_decode(std::span<const std::uint8_t> in, signed_block& out) {
  try {
    out = unpack_from<signed_block>(in);
    return true;
  } catch (const decode_error& e) {
    APIARY_CHECK(e.offset() <= in.size());
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  signed_block generic;
  const bool generic_ok = generic_decode(in, generic);
  decoded_block decoded;
  try {
    decoded = decode_block_with_ids(in);
  } catch (const decode_error& e) {
    APIARY_CHECK(e.offset() <= size);
    APIARY_CHECK(!generic_ok);
    return 0;
  }
  APIARY_CHECK(generic_ok);
  const signed_block& block = decoded.block;
  APIARY_CHECK(block == generic);

  out_buffer packed;
  pack_into(packed, block);
  APIARY_CHECK(apiary::fuzz::same_but_testnet_symbols(packed.span(), in));
  APIARY_CHECK(packed_size(block) == size);

  // The transactions are the block's last bytes, so the first starts where their sizes,
  // summed, end short of the block's.
  APIARY_CHECK(decoded.transaction_ids.size() == block.transactions.size());
  std::size_t at = size;
  for (const signed_transaction& tx : block.transactions) at -= packed_size(tx);
  for (std::size_t i = 0; i < block.transactions.size(); ++i) {
    const signed_transaction& tx = block.transactions[i];
    const std::size_t unsigned_size = packed_size(static_cast<const transaction&>(tx));
    APIARY_CHECK(decoded.transaction_ids[i] == transaction_id_of(in.subspan(at, unsigned_size)));
    APIARY_CHECK(compute_id(tx) == transaction_id_of(packed.span().subspan(at, unsigned_size)));
    at += packed_size(tx);
  }
  APIARY_CHECK(at == size);

  full_block full{static_cast<const signed_block_header&>(block), {}};
  full.transactions.reserve(block.transactions.size());
  for (const signed_transaction& tx : block.transactions)
    full.transactions.push_back(std::make_shared<const full_transaction>(tx, hive_mainnet_chain_id()));
  APIARY_CHECK(full.packed_size() == size);
  out_buffer from_cache;
  full.pack_into(from_cache);
  APIARY_CHECK(std::ranges::equal(from_cache.span(), packed.span()));
  APIARY_CHECK(full.compute_merkle_root() == compute_merkle_root(block));
  APIARY_CHECK(full.to_signed_block() == block);

  const block_id id = compute_block_id(block);
  APIARY_CHECK(block_num_from_id(id) == block.block_num());

  out_buffer json;
  json_writer w(json);
  write_json(w, block, id, decoded.transaction_ids);
  APIARY_CHECK(apiary::fuzz::json_grammar::check(json.view(), {.check_utf8 = false}) == apiary::fuzz::verdict::valid);
  return 0;
}
