// apiary_fuzz_corpus OUT_DIR: writes the fuzz targets' seed corpus, OUT_DIR/<target>/<name>.
//
// The seeds are deterministic (the colony's generator with a fixed seed, RFC 6979 signatures,
// fixed heads and times), so writing them again gives the same bytes unless the protocol or
// the generator changed. Generated seeds give the fuzzer the shape of real traffic to mutate;
// the edge cases reach what the generator never produces (extreme values, every byte value in
// a string, invalid UTF-8, deep nesting). An input that once revealed a bug belongs here too,
// built in code like the edge cases, so the replay test keeps it fixed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "repack.hpp"

namespace {

namespace core = apiary::core;
namespace colony = apiary::colony;
namespace fs = std::filesystem;

// Seeds stay small so the fuzzer's default maximum input length stays small and fast.
constexpr std::size_t max_seed_bytes = 1500;
constexpr std::string_view key_password = "apiary-fuzz-seed";

class corpus_writer {
 public:
  explicit corpus_writer(fs::path root) : root_(std::move(root)) {}

  void write(std::string_view target, std::string_view name, std::span<const std::uint8_t> bytes) {
    fs::path dir = root_ / target;
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
    ++count_;
  }
  void write(std::string_view target, std::string_view name, std::string_view text) {
    write(target, name, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  }
  template <class T>
  void write_packed(std::string_view target, std::string_view name, const T& value) {
    core::out_buffer buf;
    core::pack_into(buf, value);
    write(target, name, buf.span());
  }
  int count() const { return count_; }

 private:
  fs::path root_;
  int count_ = 0;
};

core::block_id head_id(std::uint32_t num) {
  core::block_id id;
  for (std::size_t i = 0; i < id.size(); ++i) id.data[i] = static_cast<std::uint8_t>(0x40 + i);
  id.data[0] = static_cast<std::uint8_t>(num >> 24);
  id.data[1] = static_cast<std::uint8_t>(num >> 16);
  id.data[2] = static_cast<std::uint8_t>(num >> 8);
  id.data[3] = static_cast<std::uint8_t>(num);
  return id;
}

core::signed_transaction sign(const colony::generated_transaction& g) {
  const core::private_key key = core::private_key::from_login(g.signer.view(), g.role, key_password);
  const core::full_transaction full(g.tx, core::hive_mainnet_chain_id(), std::span(&key, 1));
  return full.tx();
}

core::signed_block make_block(const core::block_id& previous, core::time_point_sec time,
                              std::vector<core::signed_transaction> txs) {
  core::signed_block b;
  b.previous = previous;
  b.timestamp = time;
  b.witness = "initminer";
  b.transactions = std::move(txs);
  b.transaction_merkle_root = core::compute_merkle_root(b);
  const auto key = core::private_key::from_login("initminer", core::key_role::active, key_password);
  b.witness_signature = key.sign(core::header_digest(b));
  return b;
}

// Extreme values in every field the JSON writer formats specially, strings holding every
// byte value, and signatures that are not signatures.
core::signed_transaction extreme_transaction() {
  core::signed_transaction tx;
  tx.ref_block_num = std::numeric_limits<std::uint16_t>::max();
  tx.ref_block_prefix = std::numeric_limits<std::uint32_t>::max();
  tx.expiration = core::time_point_sec{std::numeric_limits<std::uint32_t>::max()};

  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));

  tx.operations.push_back(core::transfer_operation{
      "abcdefghijklmnop", "a", core::asset::hive(std::numeric_limits<std::int64_t>::min()), every_byte});
  tx.operations.push_back(
      core::vote_operation{"", "zzzzzzzzzzzzzzzz", "\"\\", std::numeric_limits<std::int16_t>::min()});
  core::custom_json_operation cj;
  cj.required_auths = {"alice", "bob", "carol"};
  cj.required_posting_auths = {"a", "b"};
  cj.id = std::string(32, 'i');
  cj.json = R"({"k":[1,-2.5e3,true,null,"\u00e9"]})";
  tx.operations.push_back(cj);
  core::comment_options_operation o;
  o.author = "alice";
  o.permlink = "p";
  o.max_accepted_payout = core::asset::hbd(std::numeric_limits<std::int64_t>::max());
  o.percent_hbd = std::numeric_limits<std::uint16_t>::max();
  o.allow_votes = false;
  o.extensions.push_back({{{"bob", 0}, {"carol", std::numeric_limits<std::uint16_t>::max()}}});
  o.extensions.push_back({});
  tx.operations.push_back(o);
  core::comment_operation c;
  c.title = "\xc0\x80\xed\xa0\x80\xff";  // invalid UTF-8: copied into JSON as is
  c.body = "\x7f\n\t\x1f";
  tx.operations.push_back(c);

  core::compact_signature zero, ones;
  ones.data.fill(0xff);
  tx.signatures = {zero, ones};
  return tx;
}

// The packed bytes with every main-net symbol word (STEEM, SBD) replaced by the test-net
// build's (TESTS, TBD): the decoders read those as HIVE and HBD, so packing again does not
// give the input back (a regression: the targets once required that it did).
std::vector<std::uint8_t> with_testnet_symbols(const core::out_buffer& packed) {
  std::vector<std::uint8_t> bytes(packed.span().begin(), packed.span().end());
  for (const core::symbol_info& s : core::known_symbols) {
    const auto from = apiary::fuzz::word_bytes(s.legacy_word());
    const auto to = apiary::fuzz::word_bytes(s.testnet_legacy_word());
    for (auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end()); at != bytes.end();
         at = std::search(at + 8, bytes.end(), from.begin(), from.end()))
      std::copy(to.begin(), to.end(), at);
  }
  return bytes;
}

void write_transactions_and_blocks(corpus_writer& out) {
  colony::comment_ring ring;
  colony::generator gen(colony::mix_config{}, colony::generator_options{1, 0, true},
                        colony::genesis_account_names(8, "fuzz"), ring);
  const core::block_id head = head_id(1000);
  const core::time_point_sec head_time{1'700'000'000};
  gen.set_head(head, head_time);

  // Two small transactions of each kind, in the order the mix makes them (articles first,
  // so replies and votes find targets in the ring).
  std::vector<core::signed_transaction> made;
  for (colony::op_kind kind : colony::all_op_kinds) {
    int written = 0;
    for (int attempt = 0; written < 2 && attempt < 100; ++attempt) {
      core::signed_transaction tx = sign(gen.next(kind));
      if (core::packed_size(tx) > max_seed_bytes / 3) continue;
      std::string name = "gen-" + std::string(colony::op_kind_name(kind)) + "-" + std::to_string(++written);
      out.write_packed("transaction", name, tx);
      made.push_back(std::move(tx));
    }
  }

  out.write("transaction", "edge-empty", std::string_view());
  out.write_packed("transaction", "edge-no-operations", core::signed_transaction{});
  out.write_packed("transaction", "edge-extremes", extreme_transaction());

  out.write("block", "edge-empty", std::string_view());
  out.write_packed("block", "gen-0-transactions", make_block(head, head_time + 3, {}));
  out.write_packed("block", "gen-1-transaction", make_block(head, head_time + 3, {made[0]}));
  // One transaction of each kind, the smallest ones, so the block stays small.
  std::vector<core::signed_transaction> one_each;
  for (std::size_t i = 0; i < made.size(); i += 2) one_each.push_back(made[i]);
  out.write_packed("block", "gen-5-transactions", make_block(head, head_time + 3, one_each));
  core::block_id last;
  last.data.fill(0xff);  // block number 2^32-1: the next one wraps to 0
  out.write_packed("block", "edge-extremes",
                   make_block(last, core::time_point_sec{std::numeric_limits<std::uint32_t>::max()},
                              {extreme_transaction(), core::signed_transaction{}}));

  core::out_buffer packed;
  core::pack_into(packed, extreme_transaction());
  out.write("transaction", "regress-testnet-symbols", with_testnet_symbols(packed));
  packed.clear();
  core::pack_into(packed, make_block(head, head_time + 3, {extreme_transaction()}));
  out.write("block", "regress-testnet-symbols", with_testnet_symbols(packed));

  // custom_json payloads as the colony writes them.
  int payloads = 0;
  for (const core::signed_transaction& tx : made)
    for (const core::operation& op : tx.operations)
      if (const auto* cj = std::get_if<core::custom_json_operation>(&op))
        out.write("custom_json", "gen-payload-" + std::to_string(++payloads), cj->json);
}

void write_json_edges(corpus_writer& out) {
  struct edge {
    std::string_view name;
    std::string_view text;
  };
  using namespace std::string_view_literals;
  const edge edges[] = {
      {"edge-empty", ""},
      {"edge-whitespace-only", " \t\r\n"},
      {"edge-form-feed", "\f1"},  // not JSON whitespace
      {"edge-scalars", "[true,false,null,0,-0,1.5e-3,2E+10,-0.0e-0]"},
      {"edge-escapes", R"(["\"\\\/\b\f\n\r\t","\u0000\u001F\u00e9\uD83D\uDE00"])"},
      {"edge-bad-escape", R"(["\a"])"},
      {"edge-utf8", "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf\"]"},
      {"edge-invalid-utf8", "[\"\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\"]"},
      {"edge-lone-surrogate", R"(["\ud800"])"},
      {"edge-control-char", "[\"\x01\"]"},
      {"edge-nul-in-string", "\"a\0b\""sv},
      {"edge-trailing-comma", "[1,2,]"},
      {"edge-comment", "/* c */ {}"},
      {"edge-two-values", "{} {}"},
      {"edge-leading-zero", "[01]"},
      {"edge-big-numbers", "[123456789012345678901234567890,-9223372036854775809,18446744073709551616,1e400]"},
      {"edge-huge-exponent", "[1e2147483647,1e2147483648]"},
      {"edge-duplicate-keys", R"({"a":1,"a":{"b":[],"b":{}}})"},
      {"edge-truncated", R"({"a":[1,2)"},
      {"edge-bom", "\xef\xbb\xbf{}"},
  };
  for (const edge& e : edges) out.write("custom_json", e.name, e.text);
  // The deepest nesting is_valid_json accepts, and one more.
  for (std::size_t depth : {std::size_t{64}, std::size_t{65}}) {
    std::string text = std::string(depth, '[') + std::string(depth, ']');
    out.write("custom_json", "edge-depth-" + std::to_string(depth), text);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR  (writes OUT_DIR/transaction, OUT_DIR/block, OUT_DIR/custom_json)\n",
                 argv[0]);
    return 2;
  }
  try {
    corpus_writer out{fs::path(argv[1])};
    write_transactions_and_blocks(out);
    write_json_edges(out);
    std::printf("wrote %d seeds under %s\n", out.count(), argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "apiary_fuzz_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
