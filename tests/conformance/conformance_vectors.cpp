// apiary_conformance_vectors: prints deterministic test vectors, one JSON object per line,
// for check.js to verify against the independent Hive client library dhive.
//
// Every value here is computed by apiary::core: packed bytes, transaction ids, signature
// digests, signatures, keys in text form, block ids, merkle roots, and the Hive legacy JSON
// of each transaction and block (which check.js feeds to dhive's serializer, so our JSON is
// checked too). Besides the hand-made transactions, the colony's own generator makes one or
// more of every kind of transaction it generates, and build_fault the companion of every
// fault kind, signed as the colony signs them; check-wax.mjs checks those against hived's
// protocol code (wax), including which ones hived's validation refuses. The tool also
// checks a few things it can check alone (decoding what it packed gives the value back, the
// cached and the direct computations agree); any failure of those is printed to stderr and
// makes the exit status 1, after all vectors are printed.
//
// Line kinds: "key", "wif", "sig", "time", "asset", "tapos", "tx", "block". See README.md.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/faults.hpp"
#include "apiary/colony/generator.hpp"
#include "apiary/colony/genesis.hpp"
#include "apiary/colony/key_cache.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/chain/reject.hpp"
#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/full_transaction.hpp"
#include "apiary/core/protocol/hash.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "apiary/core/protocol/serialize.hpp"
#include "apiary/core/protocol/time_point.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace {

namespace ac = apiary::core;
using namespace std::string_literals;

// ---- self checks ------------------------------------------------------------------------

int g_self_failures = 0;

void self_check(bool ok, const std::string& what) {
  if (ok) return;
  ++g_self_failures;
  std::fprintf(stderr, "apiary_conformance_vectors: self-check failed: %s\n", what.c_str());
}

// ---- small helpers ------------------------------------------------------------------------

template <class T>
std::vector<std::uint8_t> packed(const T& v) {
  ac::out_buffer buf;
  ac::pack_into(buf, v);
  return {buf.bytes(), buf.bytes() + buf.size()};
}

template <std::size_t N>
ac::fixed_bytes<N> from_hex_or_die(std::string_view hex) {
  auto b = ac::fixed_from_hex<N>(hex);
  if (!b) {
    std::fprintf(stderr, "apiary_conformance_vectors: bad hex constant %.*s\n", static_cast<int>(hex.size()),
                 hex.data());
    std::exit(2);
  }
  return *b;
}

ac::sha256_digest sha256_of(std::string_view s) { return ac::sha256(s.data(), s.size()); }

// "voter-007": the prefix and i in at least three digits (snprintf into a fixed buffer is a
// truncation warning at -O1, where GCC no longer sees that i stays below 1,000).
std::string numbered(std::string_view prefix, int i) {
  const std::string digits = std::to_string(i);
  return std::string(prefix) + std::string(digits.size() < 3 ? 3 - digits.size() : 0, '0') + digits;
}

// Text of exactly `bytes` bytes of valid UTF-8 mixing 1-, 2-, 3- and 4-byte characters.
std::string utf8_text(std::size_t bytes) {
  static constexpr std::string_view pieces[] = {"Hive ", "\xF0\x9F\x90\x9D ",  // bee emoji
                                                "\xC3\xBCn\xC3\xAF\x63\xC3\xB6\x64\xC3\xA9 ",
                                                "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E ", "apiary, "};
  std::string s;
  s.reserve(bytes);
  for (std::size_t i = 0;; ++i) {
    std::string_view p = pieces[i % std::size(pieces)];
    if (s.size() + p.size() > bytes) break;
    s += p;
  }
  s.append(bytes - s.size(), '.');
  return s;
}

struct signer {
  std::string account;
  ac::key_role role = ac::key_role::active;
  std::string password;
  std::optional<std::string> seed;  // instead of a login: secret = sha256(seed), like dhive's fromSeed

  ac::private_key key() const {
    if (seed) {
      auto k = ac::private_key::from_secret(sha256_of(*seed));
      if (!k) {
        std::fprintf(stderr, "apiary_conformance_vectors: seed gives no valid key\n");
        std::exit(2);
      }
      return *k;
    }
    return ac::private_key::from_login(account, role, password);
  }
};

signer login(std::string account, ac::key_role role, std::string password) {
  return signer{std::move(account), role, std::move(password), std::nullopt};
}

// ---- one output line --------------------------------------------------------------------

class record {
 public:
  record(std::string_view kind, std::string_view name) : w_(buf_) {
    w_.put('{');
    str("kind", kind);
    str("name", name);
  }

  ac::json_writer& w() { return w_; }

  void key(std::string_view k) {
    if (!first_) w_.put(',');
    first_ = false;
    w_.key(k);
  }
  void str(std::string_view k, std::string_view v) {
    key(k);
    w_.string(v);
  }
  void hex(std::string_view k, std::span<const std::uint8_t> b) {
    key(k);
    w_.hex(b.data(), b.size());
  }
  template <std::size_t N>
  void hex(std::string_view k, const ac::fixed_bytes<N>& b) {
    key(k);
    w_.hex(b.begin(), N);
  }
  void num(std::string_view k, std::int64_t v) {
    key(k);
    w_.number(v);
  }
  void unum(std::string_view k, std::uint64_t v) {
    key(k);
    w_.number(v);
  }
  void boolean(std::string_view k, bool v) {
    key(k);
    w_.boolean(v);
  }
  template <class Range, class F>
  void array(std::string_view k, const Range& r, F&& each) {
    key(k);
    w_.put('[');
    bool first = true;
    for (const auto& e : r) {
      if (!first) w_.put(',');
      first = false;
      each(w_, e);
    }
    w_.put(']');
  }
  void signer_object(const signer& s) {
    w_.put('{');
    if (s.seed) {
      w_.key("seed");
      w_.string(*s.seed);
    } else {
      w_.key("account");
      w_.string(s.account);
      w_.put(',');
      w_.key("role");
      w_.string(ac::key_role_name(s.role));
      w_.put(',');
      w_.key("password");
      w_.string(s.password);
    }
    w_.put('}');
  }

  void emit() {
    w_.put('}');
    w_.put('\n');
    std::fwrite(buf_.data(), 1, buf_.size(), stdout);
  }

 private:
  ac::out_buffer buf_;
  ac::json_writer w_;
  bool first_ = true;
};

// ---- keys ----------------------------------------------------------------------------------

void emit_key(const signer& s) {
  ac::private_key k = s.key();
  ac::public_key pub = k.public_key();
  std::string pub_text = ac::public_key_to_string(pub);
  std::string wif = k.to_wif();

  std::string name = s.account + "/" + std::string(ac::key_role_name(s.role)) + "/" + s.password;
  record r("key", name);
  r.str("account", s.account);
  r.str("role", ac::key_role_name(s.role));
  r.str("password", s.password);
  r.hex("secret", k.secret());
  r.str("wif", wif);
  r.str("public_key", pub_text);
  r.hex("public_key_hex", pub);

  auto back = ac::private_key::from_wif(wif);
  self_check(back.has_value() && *back == k, "from_wif(to_wif()) gives the key back for " + name);
  auto parsed = ac::public_key_from_string(pub_text);
  self_check(parsed.has_value() && *parsed == pub,
             "public_key_from_string(public_key_to_string()) gives the key back for " + name);
  if (back) r.str("wif_roundtrip_public_key", ac::public_key_to_string(back->public_key()));
  if (parsed) r.hex("parsed_public_key_hex", *parsed);
  r.emit();
}

void emit_wif(std::string_view name, std::string_view wif) {
  record r("wif", name);
  r.str("wif", wif);
  auto k = ac::private_key::from_wif(wif);
  self_check(k.has_value(), "from_wif accepts " + std::string(name));
  if (k) {
    r.str("wif_out", k->to_wif());
    r.hex("secret", k->secret());
    r.str("public_key", ac::public_key_to_string(k->public_key()));
  }
  r.emit();
}

// ---- raw signatures ------------------------------------------------------------------------

void emit_sig(std::string_view name, const ac::sha256_digest& digest, const signer& s) {
  ac::private_key k = s.key();
  ac::compact_signature sig = k.sign(digest);
  record r("sig", name);
  r.hex("digest", digest);
  r.key("signer");
  r.signer_object(s);
  r.hex("signature", sig);
  r.str("public_key", ac::public_key_to_string(k.public_key()));
  auto rec = ac::recover_public_key(sig, digest);
  self_check(rec.has_value() && *rec == k.public_key(),
             "recover_public_key gives the signer's key for " + std::string(name));
  r.str("recovered", rec ? ac::public_key_to_string(*rec) : std::string());
  r.boolean("canonical", ac::is_canonical(sig));
  self_check(ac::is_canonical(sig), "signature is canonical for " + std::string(name));
  r.emit();
}

// ---- times ---------------------------------------------------------------------------------

void emit_time(std::uint32_t secs) {
  ac::time_point_sec t{secs};
  char iso[19];
  t.to_iso(iso);
  std::string text(iso, sizeof iso);
  record r("time", text);
  r.unum("secs", secs);
  r.str("iso", text);
  auto back = ac::time_point_sec::from_iso(text);
  self_check(back.has_value() && back->secs == secs, "from_iso(to_iso()) for " + text);
  ac::out_buffer buf;
  ac::json_writer w(buf);
  w.time(t);
  r.str("json", buf.view());
  r.emit();
}

// ---- assets ---------------------------------------------------------------------------------

void emit_asset(ac::asset a) {
  ac::out_buffer buf;
  ac::json_writer w(buf);
  w.amount(a);
  const std::vector<std::uint8_t> bytes = packed(a);
  record r("asset", std::to_string(a.amount) + " " + std::string(ac::asset::symbol_text(a.symbol)));
  r.str("amount", std::to_string(a.amount));
  r.str("symbol", ac::asset::symbol_text(a.symbol));
  r.str("json", buf.view());
  r.hex("hex", bytes);
  r.emit();
  try {
    self_check(ac::unpack_from<ac::asset>(bytes) == a, "unpack_from<asset>(packed) for " + std::to_string(a.amount));
  } catch (const std::exception& e) {
    self_check(false, "decoding asset " + std::to_string(a.amount) + " threw: " + e.what());
  }
}

// ---- TaPoS ---------------------------------------------------------------------------------

void emit_tapos(std::string_view name, const ac::block_id& id) {
  ac::transaction tx;
  tx.set_reference_block(id);
  record r("tapos", name);
  r.hex("block_id", id);
  r.unum("block_num", ac::block_num_from_id(id));
  r.unum("ref_block_num", tx.ref_block_num);
  r.unum("ref_block_prefix", tx.ref_block_prefix);
  r.emit();
}

// ---- transactions --------------------------------------------------------------------------

// colony: built and signed by the colony (make_transaction, build_fault), not by build().
enum class sign_path { constructor, constructor_attach_keys, manual, colony };

std::string_view sign_path_name(sign_path p) {
  switch (p) {
    case sign_path::constructor: return "full_transaction(tx, chain, keys)";
    case sign_path::constructor_attach_keys: return "full_transaction(tx, chain, keys, signer_keys)";
    case sign_path::manual: return "private_key::sign(signature_digest()) + full_transaction(signed_tx, chain)";
    case sign_path::colony: return "colony::make_transaction / colony::build_fault (key_cache)";
  }
  return "?";
}

// What hived's transaction::validate() (its checks of the operations' own fields, without
// the chain) does with a transaction: check-wax.mjs holds wax's validate() to it.
enum class hived_validate { pass, reject };

struct tx_case {
  std::string name;
  std::string note;
  ac::transaction tx;
  std::vector<signer> signers;
  sign_path path = sign_path::constructor;
  hived_validate validate = hived_validate::pass;
  std::optional<apiary::colony::op_kind> generated;  // made by the colony's generator
  std::optional<apiary::colony::fault_kind> fault;   // a fault companion (build_fault)
};

tx_case make_case(std::string name, std::string note, ac::transaction tx, std::vector<signer> signers,
                  sign_path path = sign_path::constructor) {
  tx_case c;
  c.name = std::move(name);
  c.note = std::move(note);
  c.tx = std::move(tx);
  c.signers = std::move(signers);
  c.path = path;
  return c;
}

ac::full_transaction_ptr build(const tx_case& c) {
  const ac::chain_id chain = ac::hive_mainnet_chain_id();
  std::vector<ac::private_key> keys;
  for (const auto& s : c.signers) keys.push_back(s.key());
  if (c.path == sign_path::manual) {
    ac::signed_transaction stx;
    static_cast<ac::transaction&>(stx) = c.tx;
    const ac::sha256_digest d = ac::signature_digest(c.tx, chain);
    for (const auto& k : keys) stx.signatures.push_back(k.sign(d));
    return std::make_shared<const ac::full_transaction>(std::move(stx), chain);
  }
  std::vector<ac::public_key> pubs;
  if (c.path == sign_path::constructor_attach_keys)
    for (const auto& k : keys) pubs.push_back(k.public_key());
  return std::make_shared<const ac::full_transaction>(c.tx, chain, std::span<const ac::private_key>(keys),
                                                      std::span<const ac::public_key>(pubs));
}

// `made`: the transaction as the colony built and signed it; null: build(c).
ac::full_transaction_ptr emit_tx(const tx_case& c, ac::full_transaction_ptr made = nullptr) {
  const ac::chain_id chain = ac::hive_mainnet_chain_id();
  ac::full_transaction_ptr ft = made ? std::move(made) : build(c);
  const ac::signed_transaction& stx = ft->tx();
  const ac::transaction& utx = stx;

  const std::vector<std::uint8_t> signed_bytes = packed(stx);
  const std::vector<std::uint8_t> unsigned_bytes = packed(utx);
  const ac::sha256_digest digest = ac::signature_digest(utx, chain);

  record r("tx", c.name);
  if (!c.note.empty()) r.str("note", c.note);
  r.str("sign_path", sign_path_name(c.path));
  r.hex("chain_id", chain);
  r.str("hived_validate", c.validate == hived_validate::pass ? "pass" : "reject");
  if (c.generated) r.str("generated", apiary::colony::op_kind_name(*c.generated));
  if (c.fault) {
    r.str("fault", apiary::colony::fault_kind_name(*c.fault));
    r.str("rejected_at", apiary::colony::fault_stage_name(apiary::colony::rejected_at(*c.fault)));
    r.str("expected_reject", ac::reject_name(apiary::colony::expected_reject(*c.fault)));
  }
  r.str("json", ac::to_json(stx));
  r.str("json_unsigned", ac::to_json(utx));
  r.hex("hex", signed_bytes);
  r.hex("hex_full", ft->packed());
  r.hex("unsigned_hex", unsigned_bytes);
  r.unum("packed_size", ac::packed_size(stx));
  r.unum("packed_size_full", ft->packed_size());
  r.unum("unsigned_packed_size", ac::packed_size(utx));
  r.hex("id", ac::compute_id(utx));
  r.hex("id_full", ft->id());
  r.hex("id_from_bytes", ac::transaction_id_of(unsigned_bytes));
  r.hex("sig_digest", digest);
  r.hex("sig_digest_full", ft->sig_digest());
  r.hex("sig_digest_from_bytes", ac::signature_digest_of(chain, unsigned_bytes));
  r.hex("merkle_leaf", ac::merkle_digest(stx));
  r.hex("merkle_leaf_full", ft->merkle_digest());
  r.array("signers", c.signers, [&r](ac::json_writer&, const signer& s) { r.signer_object(s); });
  r.array("signatures", stx.signatures,
          [](ac::json_writer& w, const ac::compact_signature& s) { w.hex(s.begin(), s.size()); });
  r.array("signer_public_keys", c.signers,
          [](ac::json_writer& w, const signer& s) { w.string(ac::public_key_to_string(s.key().public_key())); });
  r.array("attached_signer_keys", ft->signer_keys(),
          [](ac::json_writer& w, const ac::public_key& k) { w.string(ac::public_key_to_string(k)); });
  r.array("recovered", stx.signatures, [&digest](ac::json_writer& w, const ac::compact_signature& s) {
    auto k = ac::recover_public_key(s, digest);
    w.string(k ? ac::public_key_to_string(*k) : std::string());
  });
  r.array("canonical", stx.signatures,
          [](ac::json_writer& w, const ac::compact_signature& s) { w.boolean(ac::is_canonical(s)); });
  r.emit();

  // What apiary can check alone.
  const std::string& n = c.name;
  self_check(std::vector<std::uint8_t>(ft->packed().begin(), ft->packed().end()) == signed_bytes,
             n + ": full_transaction::packed() equals pack_into(signed_transaction)");
  self_check(ft->id() == ac::compute_id(utx), n + ": full_transaction::id() equals compute_id()");
  self_check(ft->sig_digest() == digest, n + ": full_transaction::sig_digest() equals signature_digest()");
  self_check(ft->merkle_digest() == ac::merkle_digest(stx),
             n + ": full_transaction::merkle_digest() equals merkle_digest()");
  self_check(stx.signatures.size() == c.signers.size(), n + ": one signature per signer");
  for (std::size_t i = 0; i < stx.signatures.size() && i < c.signers.size(); ++i) {
    const auto k = ac::recover_public_key(stx.signatures[i], digest);
    self_check(k.has_value() && *k == c.signers[i].key().public_key(),
               n + ": signature " + std::to_string(i) + " recovers its signer's key");
  }
  if (c.path == sign_path::constructor_attach_keys) {
    self_check(ft->signer_keys().size() == c.signers.size(), n + ": attached signer keys kept");
  }
  try {
    self_check(ac::unpack_from<ac::signed_transaction>(signed_bytes) == stx,
               n + ": unpack_from<signed_transaction>(packed) gives the transaction back");
    self_check(ac::unpack_from<ac::transaction>(unsigned_bytes) == utx,
               n + ": unpack_from<transaction>(packed) gives the transaction back");
  } catch (const std::exception& e) {
    self_check(false, n + ": decoding what apiary packed threw: " + e.what());
  }
  return ft;
}

// ---- blocks --------------------------------------------------------------------------------

struct block_case {
  std::string name;
  std::string note;
  ac::block_id previous;
  ac::time_point_sec timestamp;
  std::optional<signer> witness;  // synthetic blocks: the witness signs here
  std::string witness_account;    // real blocks: given signature
  std::optional<ac::compact_signature> witness_signature;
  std::vector<ac::full_transaction_ptr> transactions;
};

// What emit_block computes for one block case, then records and checks.
struct block_values {
  ac::full_block fb;
  ac::sha256_digest hdigest;  // the digest the witness signs
  ac::signed_block sb;        // fb as a signed_block
  ac::block_id id;
  std::vector<std::uint8_t> bytes;      // pack_into(signed_block)
  ac::out_buffer full_bytes;            // full_block::pack_into
  std::vector<ac::transaction_id> ids;  // from decode_block_with_ids, or the transactions' own ids
  std::optional<ac::public_key> rec;    // the key the witness signature recovers
};

// The case's block with its merkle root, signed by the case's witness or given its real
// signature.
void assemble_block(const block_case& c, block_values& v) {
  ac::full_block& fb = v.fb;
  fb.header.previous = c.previous;
  fb.header.timestamp = c.timestamp;
  fb.header.witness = c.witness ? ac::account_name(c.witness->account) : ac::account_name(c.witness_account);
  fb.transactions = c.transactions;
  fb.header.transaction_merkle_root = fb.compute_merkle_root();

  v.hdigest = ac::header_digest(fb.header);
  if (c.witness) {
    fb.header.witness_signature = c.witness->key().sign(v.hdigest);
  } else if (c.witness_signature) {
    fb.header.witness_signature = *c.witness_signature;
  }
}

// The transaction ids as decode_block_with_ids finds them in the packed block (checking it
// gives the block back), or the transactions' own ids when it cannot decode it.
std::vector<ac::transaction_id> decoded_transaction_ids(const block_case& c, const block_values& v) {
  std::vector<ac::transaction_id> ids;
  std::optional<ac::decoded_block> decoded;
  try {
    decoded = ac::decode_block_with_ids(v.bytes);
  } catch (const std::exception& e) {
    self_check(false, c.name + ": decode_block_with_ids threw: " + e.what());
  }
  if (decoded) {
    ids = decoded->transaction_ids;
    self_check(decoded->block == v.sb, c.name + ": decode_block_with_ids gives the block back");
  } else {
    for (const auto& t : c.transactions) ids.push_back(t->id());
  }
  return ids;
}

void compute_block(const block_case& c, block_values& v) {
  assemble_block(c, v);
  v.sb = v.fb.to_signed_block();
  v.id = ac::compute_block_id(v.sb);
  v.bytes = packed(v.sb);
  v.fb.pack_into(v.full_bytes);
  v.ids = decoded_transaction_ids(c, v);
  v.rec = ac::recover_public_key(v.sb.witness_signature, v.hdigest);
}

void record_block(const block_case& c, const block_values& v) {
  const ac::full_block& fb = v.fb;
  const ac::signed_block& sb = v.sb;
  ac::out_buffer json_buf;
  ac::json_writer jw(json_buf);
  ac::write_json(jw, sb, v.id, v.ids);

  record r("block", c.name);
  if (!c.note.empty()) r.str("note", c.note);
  r.str("json", json_buf.view());
  r.str("json_plain", ac::to_json(sb));
  r.hex("hex", v.bytes);
  r.hex("hex_full", v.full_bytes.span());
  r.unum("packed_size", ac::packed_size(sb));
  r.unum("packed_size_full", fb.packed_size());
  r.unum("overhead_size", ac::block_overhead_size(fb.header, fb.transactions.size()));
  r.unum("transaction_count", fb.transactions.size());
  r.unum("block_num", sb.block_num());
  r.hex("block_id", v.id);
  r.hex("merkle_root", ac::compute_merkle_root(sb));
  r.hex("merkle_root_full", fb.compute_merkle_root());
  r.hex("header_digest", v.hdigest);
  if (c.witness) {
    r.key("witness_signer");
    r.signer_object(*c.witness);
    r.str("witness_public_key", ac::public_key_to_string(c.witness->key().public_key()));
  }
  r.str("recovered_signing_key", v.rec ? ac::public_key_to_string(*v.rec) : std::string());
  r.array("transaction_ids", v.ids,
          [](ac::json_writer& w, const ac::transaction_id& t) { w.hex(t.begin(), t.size()); });
  r.array("merkle_leaves", c.transactions, [](ac::json_writer& w, const ac::full_transaction_ptr& t) {
    auto d = t->merkle_digest();
    w.hex(d.begin(), d.size());
  });
  r.emit();
}

// The full and the signed block agree, and so do the ids and the witness key.
void check_block(const block_case& c, const block_values& v) {
  const ac::out_buffer& full_bytes = v.full_bytes;
  self_check(std::vector<std::uint8_t>(full_bytes.bytes(), full_bytes.bytes() + full_bytes.size()) == v.bytes,
             c.name + ": full_block::pack_into equals pack_into(signed_block)");
  self_check(v.fb.packed_size() == v.bytes.size(), c.name + ": full_block::packed_size()");
  self_check(ac::compute_merkle_root(v.sb) == v.fb.compute_merkle_root(),
             c.name + ": compute_merkle_root(signed_block) equals full_block::compute_merkle_root()");
  for (std::size_t i = 0; i < v.ids.size() && i < c.transactions.size(); ++i)
    self_check(v.ids[i] == c.transactions[i]->id(),
               c.name + ": decode_block_with_ids id " + std::to_string(i) + " equals full_transaction::id()");
  if (c.witness)
    self_check(v.rec.has_value() && *v.rec == c.witness->key().public_key(),
               c.name + ": witness signature recovers the witness key");
}

ac::block_id emit_block(const block_case& c) {
  block_values v;
  compute_block(c, v);
  record_block(c, v);
  check_block(c, v);
  return v.id;
}

// ---- the vectors ---------------------------------------------------------------------------

constexpr std::uint32_t t_2024_05_01 = 1714564800;  // 2024-05-01T12:00:00

ac::transaction base_tx(std::uint16_t ref_num, std::uint32_t ref_prefix, std::uint32_t expiration) {
  ac::transaction tx;
  tx.ref_block_num = ref_num;
  tx.ref_block_prefix = ref_prefix;
  tx.expiration = ac::time_point_sec{expiration};
  return tx;
}

ac::vote_operation vote(std::string_view voter, std::string_view author, std::string permlink, std::int16_t weight) {
  ac::vote_operation v;
  v.voter = voter;
  v.author = author;
  v.permlink = std::move(permlink);
  v.weight = weight;
  return v;
}

ac::transfer_operation transfer(std::string_view from, std::string_view to, ac::asset amount, std::string memo) {
  ac::transfer_operation t;
  t.from = from;
  t.to = to;
  t.amount = amount;
  t.memo = std::move(memo);
  return t;
}

ac::comment_operation comment(std::string_view parent_author, std::string parent_permlink, std::string_view author,
                              std::string permlink, std::string title, std::string body, std::string json_metadata) {
  ac::comment_operation c;
  c.parent_author = parent_author;
  c.parent_permlink = std::move(parent_permlink);
  c.author = author;
  c.permlink = std::move(permlink);
  c.title = std::move(title);
  c.body = std::move(body);
  c.json_metadata = std::move(json_metadata);
  return c;
}

ac::custom_json_operation custom_json(ac::account_set auths, ac::account_set posting_auths, std::string id,
                                      std::string json) {
  ac::custom_json_operation c;
  c.required_auths = std::move(auths);
  c.required_posting_auths = std::move(posting_auths);
  c.id = std::move(id);
  c.json = std::move(json);
  return c;
}

const std::string k_password = "apiary-conformance-seed";

signer posting(std::string_view a) { return login(std::string(a), ac::key_role::posting, k_password); }
signer active(std::string_view a) { return login(std::string(a), ac::key_role::active, k_password); }
signer owner(std::string_view a) { return login(std::string(a), ac::key_role::owner, k_password); }

// A JSON payload with quotes, backslashes, escaped and raw unicode, escaped control
// characters and raw whitespace control characters between tokens.
const std::string k_payload =
    "{\n\t\"quote\": \"say \\\"hi\\\"\",\r\n"
    "\t\"backslash\": \"C:\\\\hive\\\\apiary \\\\\\\"\",\n"
    "\t\"solidus\": \"a\\/b\",\n"
    "\t\"unicode_escaped\": \"h\\u00e9 \\u65e5\\u672c \\ud83d\\udc1d\",\n"
    "\t\"unicode_raw\": \"h\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x90\x9D \xE2\x80\xA8\",\n"
    "\t\"control\": \"\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t\",\n"
    "\t\"numbers\": [0, -1, 2.5e10, 1E-3, 12345678901234567890],\n"
    "\t\"nested\": {\"a\": [true, false, null, {}, []]}\n}";

// Arbitrary text with raw control characters (including NUL and DEL), quotes, backslashes,
// a solidus and non-ASCII characters, for memos, titles and bodies.
const std::string k_wild_text = "ctrl:"s + std::string("\0\x01\x02\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f", 13) +
                                " quote\" backslash\\ solidus/ <script>&amp; "
                                "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x90\x9D \xE2\x80\xA8\xE2\x80\xA9 \xEF\xBB\xBF end";

// The transaction cases, in the order they are printed.
struct tx_cases {
  std::vector<tx_case> list;

  tx_case& add(std::string name, std::string note, ac::transaction tx, std::vector<signer> signers,
               sign_path path = sign_path::constructor) {
    return list.emplace_back(make_case(std::move(name), std::move(note), std::move(tx), std::move(signers), path));
  }
  // The case just added is one hived's validation refuses (its note says why).
  void refused_by_validation() { list.back().validate = hived_validate::reject; }
};

// dhive's own test transaction (test/crypto.ts, test/serializer-tests.json) without its
// "long-pants" extension, signed with dhive's PrivateKey.fromSeed("hello").
void dhive_cases(tx_cases& cs) {
  {
    auto tx = base_tx(1234, 1122334455, 1500137479);  // 2017-07-15T16:51:19
    tx.operations.push_back(vote("foo", "bar", "baz", 10000));
    cs.add("dhive_test_vote", "dhive's test transaction without extensions", tx,
           {signer{"", ac::key_role::active, "", "hello"}}, sign_path::manual);
  }
  {
    auto tx = base_tx(1234, 1122334455, 1500137479);
    tx.operations.push_back(transfer("foo", "bar", ac::asset::hive(1000), "wedding present"));
    cs.add("dhive_test_transfer", "dhive's serializer test operation", tx, {});
  }
}

// Votes: up, down, small and int16-extreme weights.
void vote_cases(tx_cases& cs) {
  {
    auto tx = base_tx(4660, 0x12345678, t_2024_05_01);
    tx.operations.push_back(vote("alice", "bob", "hello-world", 10000));
    cs.add("vote_full_upvote", "", tx, {posting("alice")});
  }
  {
    auto tx = base_tx(4661, 0x9abcdef0, t_2024_05_01 + 3);
    tx.operations.push_back(vote("carol.dev", "bob", "hello-world", -10000));
    cs.add("vote_full_downvote", "negative weight", tx, {posting("carol.dev")}, sign_path::manual);
  }
  {
    auto tx = base_tx(0, 0, t_2024_05_01 + 6);
    tx.operations.push_back(vote("alice", "bob", "re-hello-world-20240501t120000z", -1));
    tx.operations.push_back(vote("alice", "carol.dev", "unvote", 0));
    tx.operations.push_back(vote("alice", "hive-witness", "tiny", 1));
    cs.add("vote_small_weights", "weights -1, 0, 1; unsigned", tx, {});
  }
  {
    auto tx = base_tx(65535, 0xffffffff, t_2024_05_01 + 9);
    tx.operations.push_back(vote("a-very-long-name", "abc", "p", -32768));
    tx.operations.push_back(vote("abc", "a-very-long-name", std::string(255, 'z'), 32767));
    cs.add("vote_int16_extremes", "wire edge: int16 extremes (not valid weights on chain), max uint16/uint32 TaPoS", tx,
           {posting("a-very-long-name"), posting("abc")}, sign_path::constructor_attach_keys);
    cs.refused_by_validation();
  }
}

// Comments: a root post, a reply, and bodies whose lengths sit at varint boundaries.
void comment_cases(tx_cases& cs) {
  {
    auto tx = base_tx(1, 0x01020304, t_2024_05_01 + 12);
    tx.operations.push_back(comment("", "hive", "alice", "my-first-post",
                                    "Hell\xC3\xB6 fr\xC3\xB6m Sw\xC3\xA4"
                                    "den! \xE5\xA4\xA7\xE3\x81\x8D\xE3\x81\xAA "
                                    "\xF0\x9F\x90\x9D",
                                    "# Title\n\nA *markdown* body with \"quotes\", a tab\tand\r\nCRLF.\n",
                                    R"({"tags":["hive","apiary"],"app":"apiary/0.1","format":"markdown"})"));
    cs.add("comment_root_post", "root post: empty parent_author, category as parent_permlink", tx, {posting("alice")});
  }
  {
    auto tx = base_tx(2, 0x05060708, t_2024_05_01 + 15);
    tx.operations.push_back(
        comment("alice", "my-first-post", "bob", "re-alice-my-first-post-20240501t120015z", "", k_wild_text, ""));
    cs.add("comment_reply", "reply with raw control characters, NUL and non-ASCII in the body", tx, {posting("bob")},
           sign_path::manual);
  }
  for (std::size_t n : {std::size_t{127}, std::size_t{128}, std::size_t{16383}, std::size_t{16384}}) {
    auto tx = base_tx(3, 0x0a0b0c0d, t_2024_05_01 + 18);
    tx.operations.push_back(comment("", "apiary", "carol.dev", "body-" + std::to_string(n),
                                    utf8_text(n < 200 ? n : 200), utf8_text(n), "{}"));
    cs.add("comment_body_" + std::to_string(n) + "_bytes",
           "body length at a varint boundary (" + std::to_string(ac::varint_size(static_cast<std::uint32_t>(n))) +
               "-byte length)",
           tx, {posting("carol.dev")});
  }
  {
    // 2^21 bytes: the first length that takes a 4-byte varint (far beyond Hive's size
    // limits, a wire-format edge only).
    const std::size_t n = std::size_t{1} << 21;
    auto tx = base_tx(4, 0x0e0f1011, t_2024_05_01 + 21);
    tx.operations.push_back(comment("", "apiary", "carol.dev", "huge", "huge", utf8_text(n), "{}"));
    cs.add("comment_body_2097152_bytes", "wire edge: 4-byte varint length", tx, {posting("carol.dev")});
  }
}

// comment_options: defaults, and none to 128 beneficiaries.
void comment_options_cases(tx_cases& cs) {
  {
    auto tx = base_tx(5, 0x12131415, t_2024_05_01 + 24);
    ac::comment_options_operation o;
    o.author = "alice";
    o.permlink = "my-first-post";
    tx.operations.push_back(o);
    cs.add("comment_options_defaults", "no extensions, default payout 1000000.000 HBD", tx, {posting("alice")});
  }
  {
    auto tx = base_tx(6, 0x16171819, t_2024_05_01 + 27);
    ac::comment_options_operation o;
    o.author = "alice";
    o.permlink = "my-first-post";
    o.max_accepted_payout = ac::asset::hbd(0);
    o.percent_hbd = 0;
    o.allow_votes = false;
    o.allow_curation_rewards = false;
    o.extensions.push_back(
        ac::comment_payout_beneficiaries{{{"bob", 1000}, {"carol.dev", 2500}, {"hive-witness", 50}}});
    tx.operations.push_back(o);
    cs.add("comment_options_beneficiaries", "three beneficiaries, everything off", tx, {posting("alice")},
           sign_path::constructor_attach_keys);
  }
  {
    auto tx = base_tx(7, 0x1a1b1c1d, t_2024_05_01 + 30);
    ac::comment_options_operation o;
    o.author = "bob";
    o.permlink = "many-beneficiaries";
    o.max_accepted_payout = ac::asset::hbd(123'456);
    o.percent_hbd = 5000;
    ac::comment_payout_beneficiaries b;
    for (int i = 0; i < 128; ++i) {
      b.beneficiaries.push_back({ac::account_name(numbered("ben-", i)), 78});
    }
    o.extensions.push_back(b);
    tx.operations.push_back(o);
    cs.add("comment_options_128_beneficiaries",
           "wire edge: 128 beneficiaries, a 2-byte count (hived's validation allows 127, its chain 8)", tx,
           {posting("bob")});
    cs.refused_by_validation();
  }
  {
    auto tx = base_tx(8, 0x1e1f2021, t_2024_05_01 + 33);
    ac::comment_options_operation o;
    o.author = "bob";
    o.permlink = "empty-beneficiaries";
    o.extensions.push_back(ac::comment_payout_beneficiaries{});
    tx.operations.push_back(o);
    cs.add("comment_options_empty_beneficiaries", "wire edge: a beneficiaries extension with an empty list", tx, {});
    cs.refused_by_validation();
  }
}

// Transfers: HIVE and HBD, large and negative amounts, wild and long memos.
void transfer_cases(tx_cases& cs) {
  {
    auto tx = base_tx(9, 0x22232425, t_2024_05_01 + 36);
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(1000), "thanks!"));
    cs.add("transfer_hive", "", tx, {active("alice")});
  }
  {
    auto tx = base_tx(10, 0x26272829, t_2024_05_01 + 39);
    tx.operations.push_back(transfer("bob", "alice", ac::asset::hbd(1), ""));
    cs.add("transfer_hbd_empty_memo", "0.001 HBD, empty memo", tx, {active("bob")}, sign_path::manual);
  }
  {
    auto tx = base_tx(11, 0x2a2b2c2d, t_2024_05_01 + 42);
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(1'000'000'000'000'000), "max supply"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(999'999'999'999'999), "just under"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(123'456'789'012'345), "odd digits"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(1'000'000'001), "1000000.001"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(10), "0.010"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(100), "0.100"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(0), "zero"));
    cs.add("transfer_large_amounts", "HIVE_MAX_SHARE_SUPPLY and other amounts; the 0.000 one is invalid on chain", tx,
           {active("alice"), owner("alice")});
    cs.refused_by_validation();
  }
  {
    auto tx = base_tx(12, 0x2e2f3031, t_2024_05_01 + 45);
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(-1), "-0.001"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(-100'333), "-100.333"));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(-1'000'000'000'000'000), "-max"));
    cs.add("transfer_negative_amounts", "wire edge: negative amounts (invalid on chain; checks JSON amount text)", tx,
           {});
    cs.refused_by_validation();
  }
  {
    auto tx = base_tx(13, 0x32333435, t_2024_05_01 + 48);
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(42'000), k_wild_text));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(7), "#" + std::string(200, 'm')));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(7), utf8_text(300)));
    cs.add("transfer_memos", "memo with control characters; 2-byte memo lengths", tx, {active("alice")});
  }
}

// custom_json: posting, active and both auth sets; payloads with every kind of escape.
void custom_json_cases(tx_cases& cs) {
  {
    auto tx = base_tx(14, 0x36373839, t_2024_05_01 + 51);
    tx.operations.push_back(
        custom_json({}, {"alice"}, "follow", R"(["follow",{"follower":"alice","following":"bob","what":["blog"]}])"));
    cs.add("custom_json_posting", "required_posting_auths", tx, {posting("alice")});
  }
  {
    auto tx = base_tx(15, 0x3a3b3c3d, t_2024_05_01 + 54);
    tx.operations.push_back(custom_json({"alice", "bob"}, {}, "ssc-mainnet-hive", k_payload));
    cs.add("custom_json_active", "required_auths; payload with quotes, backslashes, unicode, control characters", tx,
           {active("alice"), active("bob")}, sign_path::manual);
  }
  {
    auto tx = base_tx(16, 0x3e3f4041, t_2024_05_01 + 57);
    tx.operations.push_back(custom_json({"bob"}, {"alice", "carol.dev", "hive-witness"},
                                        "apiary-conformance-0123456789abc", k_payload + "\n"));
    // hived's JSON check refuses a null followed by trailing whitespace ("[null] ",
    // "null\n"), which RFC 8259 and apiary's is_valid_json allow; the payload has both.
    cs.add("custom_json_both_auths",
           "both auth sets, 32-character id; hived's JSON check refuses the payload's null with a trailing newline", tx,
           {active("bob"), posting("alice"), posting("carol.dev")}, sign_path::constructor_attach_keys);
    cs.refused_by_validation();
  }
  {
    auto tx = base_tx(17, 0x42434445, t_2024_05_01 + 60);
    tx.operations.push_back(custom_json({}, {}, "", "{}"));
    tx.operations.push_back(custom_json({}, {"bob"}, "x", "\"" + utf8_text(20000) + "\""));
    cs.add("custom_json_edges", "wire edge: empty auth sets and id; 3-byte json length", tx, {posting("bob")});
    cs.refused_by_validation();
  }
}

// Several operations in one transaction, and signature counts.
void several_operation_cases(tx_cases& cs) {
  {
    auto tx = base_tx(18, 0x46474849, t_2024_05_01 + 63);
    tx.operations.push_back(comment("", "hive", "alice", "all-ops", "All ops", "body", "{}"));
    ac::comment_options_operation o;
    o.author = "alice";
    o.permlink = "all-ops";
    o.extensions.push_back(ac::comment_payout_beneficiaries{{{"bob", 500}}});
    tx.operations.push_back(o);
    tx.operations.push_back(vote("alice", "alice", "all-ops", 10000));
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hbd(3'141), "pi"));
    tx.operations.push_back(custom_json({"alice"}, {"alice"}, "notify", R"(["setLastRead",{"date":"2024-05-01"}])"));
    cs.add("all_operation_types", "every operation apiary knows in one transaction", tx,
           {posting("alice"), active("alice")});
  }
  {
    auto tx = base_tx(19, 0x4a4b4c4d, t_2024_05_01 + 66);
    for (int i = 0; i < 130; ++i) {
      const std::string name = numbered("voter-", i);
      tx.operations.push_back(
          vote(name, "bob", "popular-" + std::to_string(i), static_cast<std::int16_t>(i * 75 - 5000)));
    }
    cs.add("many_operations", "130 operations: a 2-byte operation count", tx, {posting("voter-000")});
  }
  {
    auto tx = base_tx(20, 0x4e4f5051, t_2024_05_01 + 69);
    cs.add("no_operations", "wire edge: no operations, no signatures", tx, {});
    cs.refused_by_validation();
  }
  {
    auto tx = base_tx(21, 0x52535455, t_2024_05_01 + 72);
    tx.operations.push_back(transfer("alice", "bob", ac::asset::hive(5), "three signers"));
    cs.add("three_signatures", "", tx, {owner("alice"), active("bob"), posting("carol.dev")}, sign_path::manual);
  }
  {
    auto tx = base_tx(22, 0x56575859, t_2024_05_01 + 75);
    tx.operations.push_back(vote("bob", "alice", "two-sigs", 2500));
    cs.add("two_signatures_same_account", "", tx, {posting("bob"), active("bob")});
  }
}

// Expiration times: the epoch, around 2000, 2038, 2100 (not a leap year) and the largest uint32.
void expiration_cases(tx_cases& cs) {
  struct when {
    const char* name;
    std::uint32_t secs;
  };
  for (const when& t :
       {when{"epoch", 0u}, when{"leap_day_2000", 951868799u}, when{"before_2000", 946684799u},
        when{"2038", 2147483648u}, when{"2100_no_leap", 4107542400u}, when{"max_uint32", 4294967295u}}) {
    auto tx = base_tx(static_cast<std::uint16_t>(t.secs & 0xffffu), t.secs, t.secs);
    tx.operations.push_back(vote("alice", "bob", std::string("expires-") + t.name, 100));
    cs.add(std::string("expiration_") + t.name, "", tx, {posting("alice")});
  }
}

// TaPoS from a block id.
void tapos_cases(tx_cases& cs) {
  auto tx = base_tx(0, 0, t_2024_05_01 + 78);
  tx.set_reference_block(from_hex_or_die<20>("04c4b3fffedcba9876543210aabbccddeeff0011"));
  tx.operations.push_back(vote("alice", "bob", "tapos", 100));
  cs.add("tapos_from_block_id", "ref_block_num and ref_block_prefix from set_reference_block", tx, {posting("alice")});
}

std::vector<tx_case> transaction_cases() {
  tx_cases cs;
  dhive_cases(cs);
  vote_cases(cs);
  comment_cases(cs);
  comment_options_cases(cs);
  transfer_cases(cs);
  custom_json_cases(cs);
  several_operation_cases(cs);
  expiration_cases(cs);
  tapos_cases(cs);
  return std::move(cs.list);
}

struct genesis_block {
  const char* name;
  std::uint32_t timestamp;
  const char* previous;
  const char* signature;
};

// Hive's first blocks (inherited from Steem), as the chain has them. check.js knows their
// real ids and the signing key.
constexpr genesis_block k_genesis[] = {
    {"hive_block_1", 1458835500, "0000000000000000000000000000000000000000",
     "204f8ad56a8f5cf722a02b035a61b500aa59b9519b2c33c77a80c0a714680a5a5a7a340d909d19996613c5e4ae92146b9add8a7a663eef37d"
     "837ef881477313043"},
    {"hive_block_2", 1458835536, "0000000109833ce528d5bbfb3f6225b39ee10086",
     "1f3e85ab301a600f391f11e859240f090a9404f8ebf0bf98df58eb17f455156e2d16e1dcfc621acb3a7acbedc86b6d2560fdd87ce5709e80f"
     "a333a2bbb92966df3"},
    {"hive_block_3", 1458835539, "00000002ed04e3c3def0238f693931ee7eebbdf1",
     "205ad1d3f0d42abcfdacb179de1acecf873be432cc546dde6b35184d261868b47b17dc1717b78a1572843fdd71a654e057db03f2df5d846b7"
     "1606ec80455a199a6"},
    {"hive_block_4", 1458835542, "000000035b094a812646289c622dba0ba67d1ffe",
     "202c7e5cada5104170365a83734a229eac0e427af5ed03fe2268e79bb9b05903d55cb96547987b57cd1ba5ed1a5ae1a9372f0ee6becfd871c"
     "2fcc26dc8b057149e"},
    {"hive_block_5", 1458835545, "00000004f9de0cfeb08c9d7d9d1fe536d902dc4a",
     "1f508f1124db7f1442946b5e3b3a5f822812e54e18dffcda83385a9664b825d27214f0cdd0a0a7e7aeb6467f428fbc291c6f64b60da29e8ad"
     "182c20daf71b68b8b"},
};

// Keys: login derivation for every role, several accounts and passwords (empty, unicode),
// and WIF keys.
void emit_keys() {
  emit_key(login("foo", ac::key_role::active, "barman"));  // dhive's test vector
  for (const char* account : {"alice", "bob", "carol.dev", "hive-witness", "a-very-long-name", "abc"})
    for (ac::key_role role : {ac::key_role::owner, ac::key_role::active, ac::key_role::posting, ac::key_role::memo})
      emit_key(login(account, role, k_password));
  emit_key(login("alice", ac::key_role::active, ""));
  emit_key(login("alice", ac::key_role::posting, "p\xC3\xA4ssw\xC3\xB6rd \xF0\x9F\x90\x9D with spaces"));
  emit_key(login("bob", ac::key_role::owner, "P5JDbZ7VC9KqDzwjHdcPAq7rZNVNHafBYAsRKudF6gW9ALpSvQtV"));

  // WIF keys from dhive's tests (test/crypto.ts): a main-net and a test-net pair.
  emit_wif("dhive_main_pair", "5K2yDAd9KAZ3ZitBsAPyRka9PLFemUrbcL6UziZiPaw2c6jCeLH");
  emit_wif("dhive_testnet_pair", "5JQy7moK9SvNNDxn8rKNfQYFME5VDYC2j9Mv2tb7uXV5jz3fQR8");
}

// Raw signatures over many digests: about half need dhive's retry for canonical form.
void emit_signatures() {
  const signer sig_signers[] = {posting("alice"), active("bob"), owner("carol.dev"),
                                login("hive-witness", ac::key_role::memo, "x")};
  for (int i = 0; i < 96; ++i) {
    std::string name = "digest-" + std::to_string(i);
    emit_sig(name, sha256_of("apiary conformance " + std::to_string(i)),
             sig_signers[static_cast<std::size_t>(i) % std::size(sig_signers)]);
  }
  emit_sig("digest-zero", ac::sha256_digest{}, posting("alice"));
  {
    ac::sha256_digest small{};
    small.data[31] = 1;
    emit_sig("digest-one", small, active("bob"));
  }
}

// Assets, including int64 amounts beyond what dhive can hold exactly.
void emit_assets() {
  for (std::int64_t amount : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{9}, std::int64_t{10},
                              std::int64_t{99}, std::int64_t{999}, std::int64_t{1000}, std::int64_t{-1000},
                              std::int64_t{1001}, std::int64_t{-100'333}, std::int64_t{1'000'000'000'000'000},
                              std::int64_t{9'007'199'254'740'991}, std::numeric_limits<std::int64_t>::max(),
                              std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::min() + 1})
    for (ac::asset_symbol sym : {ac::asset_symbol::hive, ac::asset_symbol::hbd}) emit_asset(ac::asset{amount, sym});
}

void emit_times() {
  for (std::uint32_t s :
       {0u, 1u, 59u, 86399u, 86400u, 951782400u, 951868799u, 951868800u, 946684799u, 1458835500u, 1500137479u,
        1709208000u, 1714564800u, 2147483647u, 2147483648u, 4107542400u, 4102444800u, 4294967295u})
    emit_time(s);
}

// The transactions emit_tx built, found by case name for the synthetic blocks.
struct emitted_transactions {
  std::vector<ac::full_transaction_ptr> txs;
  std::vector<std::string> names;

  ac::full_transaction_ptr named(std::string_view name) const {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return txs[i];
    std::fprintf(stderr, "apiary_conformance_vectors: no transaction named %.*s\n", static_cast<int>(name.size()),
                 name.data());
    std::exit(2);
  }
};

emitted_transactions emit_transactions() {
  emitted_transactions e;
  for (const tx_case& c : transaction_cases()) {
    auto ft = emit_tx(c);
    e.txs.push_back(ft);
    e.names.push_back(c.name);
  }
  return e;
}

// ---- the colony's transactions -------------------------------------------------------------

namespace colony = apiary::colony;

const std::string k_colony_password = "apiary-conformance-colony";

// A generator over the colony's accounts, its head the synthetic chain's parent block.
struct colony_source {
  std::vector<ac::account_name> accounts = colony::genesis_account_names(12);
  colony::comment_ring ring;
  colony::key_cache keys{k_colony_password};

  colony::generator make(const colony::mix_config& mix) {
    colony::generator g(mix, colony::generator_options{1, 0, true}, accounts, ring);
    g.set_head(from_hex_or_die<20>("04c4b3fffedcba9876543210aabbccddeeff0011"), ac::time_point_sec{t_2024_05_01});
    return g;
  }

  static signer signer_of(const ac::account_name& account, ac::key_role role, bool wrong_key) {
    return login(std::string(account.view()), role,
                 wrong_key ? colony::wrong_password(k_colony_password) : k_colony_password);
  }

  // Signed as the colony signs: make_transaction with the key cache.
  ac::full_transaction_ptr emit(std::string name, std::string note, const colony::generated_transaction& g,
                                hived_validate validate = hived_validate::pass) {
    tx_case c =
        make_case(std::move(name), std::move(note), g.tx, {signer_of(g.signer, g.role, false)}, sign_path::colony);
    c.generated = g.kind;
    c.validate = validate;
    return emit_tx(c, colony::make_transaction(g.tx, g.signer, g.role, keys, ac::hive_mainnet_chain_id(), true, false));
  }
};

bool holds_empty_comment_body(const ac::transaction& tx) {
  for (const ac::operation& op : tx.operations)
    if (const auto* c = std::get_if<ac::comment_operation>(&op); c != nullptr && c->body.empty()) return true;
  return false;
}

// Every kind of transaction the generator makes: each with its payload at the default mix's
// smallest and at the largest a mix allows (a vote has none), and with none at all where a
// mix may ask for that; then a stretch of the default mix.
std::vector<colony::generated_transaction> emit_generated(colony_source& src) {
  colony::mix_config smallest;
  colony::mix_config largest;
  colony::mix_config none;
  for (colony::op_kind k : colony::all_op_kinds) {
    smallest[k].max = smallest[k].min;
    largest[k].min = largest[k].max = colony::mix_config::hard_max[colony::index_of(k)];
    none[k].min = none[k].max = 0;
  }
  colony::generator small = src.make(smallest);
  colony::generator large = src.make(largest);
  colony::generator empty = src.make(none);
  for (colony::op_kind k : colony::all_op_kinds) {  // article first: replies and votes need one
    const std::string kind(colony::op_kind_name(k));
    src.emit("generated_" + kind + "_smallest", "the colony's generator, the default mix's smallest payload",
             small.next(k));
    if (colony::mix_config::hard_max[colony::index_of(k)] > 0)
      src.emit("generated_" + kind + "_largest", "the colony's generator, the largest payload", large.next(k));
    if (smallest[k].min > 0) {
      // An article or reply without a body: hived's validation refuses it ("Body is empty"),
      // and so does apiary's chain.
      const colony::generated_transaction g = empty.next(k);
      const bool refused = holds_empty_comment_body(g.tx);
      src.emit("generated_" + kind + "_no_payload",
               refused ? "the colony's generator asked for no payload: an empty body, which Hive refuses"
                       : "the colony's generator asked for no payload",
               g, refused ? hived_validate::reject : hived_validate::pass);
    }
  }
  colony::generator mixed = src.make(colony::mix_config{});
  std::vector<colony::generated_transaction> made;
  for (int i = 0; i < 24; ++i) {
    made.push_back(mixed.next());
    src.emit(numbered("generated_mix_", i), "the colony's generator, the default mix", made.back());
  }
  return made;
}

// The companion of every fault kind, each following another of the normal transactions.
void emit_faults(colony_source& src, const std::vector<colony::generated_transaction>& normals) {
  const ac::chain_id chain = ac::hive_mainnet_chain_id();
  self_check(normals.size() >= colony::fault_kind_count, "a normal transaction for every fault kind");
  for (std::size_t i = 0; i < colony::fault_kind_count && i < normals.size(); ++i) {
    const auto k = static_cast<colony::fault_kind>(i);
    const colony::generated_transaction& g = normals[i];
    const ac::full_transaction_ptr normal =
        colony::make_transaction(g.tx, g.signer, g.role, src.keys, chain, true, false);
    const ac::full_transaction_ptr made = colony::build_fault(k, normal, g.signer, src.keys, chain, true, false);
    // Who signed it with which key, for the checkers to sign again.
    const colony::faulty_transaction f = colony::make_faulty(k, g.tx, normal->id(), g.signer);
    const bool same = k == colony::fault_kind::duplicate;
    const signer who =
        colony_source::signer_of(same || f.signer.empty() ? g.signer : f.signer, same ? g.role : f.role, f.wrong_key);
    const std::string name(colony::fault_kind_name(k));
    tx_case c = make_case("fault_" + name, "the colony's " + name + " fault", made->tx(), {who}, sign_path::colony);
    c.fault = k;
    c.validate =
        colony::rejected_at(k) == colony::fault_stage::validation ? hived_validate::reject : hived_validate::pass;
    emit_tx(c, made);
  }
}

// Real blocks of the chain.
void emit_genesis_blocks() {
  for (const genesis_block& g : k_genesis) {
    block_case b;
    b.name = g.name;
    b.note = "a real block of the Hive chain";
    b.previous = from_hex_or_die<20>(g.previous);
    b.timestamp = ac::time_point_sec{g.timestamp};
    b.witness_account = "initminer";
    b.witness_signature = from_hex_or_die<65>(g.signature);
    emit_block(b);
  }
}

// A chain of synthetic blocks signed by one witness, each block following the one before.
struct synthetic_chain {
  signer witness;
  ac::block_id prev;

  void add(std::string name, std::string note, std::uint32_t ts, std::vector<ac::full_transaction_ptr> list) {
    block_case b;
    b.name = std::move(name);
    b.note = std::move(note);
    b.previous = prev;
    b.timestamp = ac::time_point_sec{ts};
    b.witness = witness;
    b.transactions = std::move(list);
    prev = emit_block(b);
    emit_tapos(b.name, prev);
  }
};

// 130 votes, each its own transaction signed by its voter.
std::vector<ac::full_transaction_ptr> many_vote_transactions() {
  std::vector<ac::full_transaction_ptr> many;
  for (int i = 0; i < 130; ++i) {
    const std::string name = numbered("voter-", i);
    ac::transaction tx = base_tx(static_cast<std::uint16_t>(i), static_cast<std::uint32_t>(i) * 2654435761u,
                                 t_2024_05_01 + 18 + static_cast<std::uint32_t>(i));
    tx.operations.push_back(vote(name, "alice", "block-" + std::to_string(i), 10000));
    const tx_case c = make_case(name, "", tx, {posting(name)});
    many.push_back(build(c));
  }
  return many;
}

// Synthetic chain of blocks with 5, 7, 0, 1, 2, 3 and 130 transactions.
void emit_synthetic_blocks(const emitted_transactions& e) {
  synthetic_chain chain{login("hive-witness", ac::key_role::active, k_password),
                        from_hex_or_die<20>("04c4b3fffedcba9876543210aabbccddeeff0011")};  // block 79999999
  emit_tapos("synthetic_parent", chain.prev);
  chain.add("block_5_txs", "odd leaf count: promoted twice", t_2024_05_01,
            {e.named("vote_full_upvote"), e.named("comment_root_post"), e.named("transfer_hive"),
             e.named("custom_json_posting"), e.named("comment_options_beneficiaries")});
  chain.add("block_7_txs", "", t_2024_05_01 + 3,
            {e.named("vote_full_downvote"), e.named("comment_reply"), e.named("comment_body_16384_bytes"),
             e.named("transfer_large_amounts"), e.named("custom_json_active"), e.named("all_operation_types"),
             e.named("three_signatures")});
  chain.add("block_empty", "no transactions: all-zero merkle root", t_2024_05_01 + 6, {});
  chain.add("block_1_tx", "one leaf: root = ripemd160(leaf)", t_2024_05_01 + 9, {e.named("transfer_memos")});
  chain.add("block_2_txs", "", t_2024_05_01 + 12,
            {e.named("custom_json_both_auths"), e.named("comment_options_defaults")});
  chain.add("block_3_txs", "", t_2024_05_01 + 15,
            {e.named("vote_small_weights"), e.named("no_operations"), e.named("dhive_test_vote")});
  chain.add("block_130_txs", "130 transactions: a 2-byte transaction count, 8 merkle levels", t_2024_05_01 + 18,
            many_vote_transactions());
}

void emit_block_num_tapos() {
  emit_tapos("block_num_1", from_hex_or_die<20>("0000000109833ce528d5bbfb3f6225b39ee10086"));
  emit_tapos("block_num_max", from_hex_or_die<20>("ffffffff00000000000000000000000000000000"));
  emit_tapos("block_num_65536", from_hex_or_die<20>("00010000ffffffff000000000000000000000000"));
}

}  // namespace

int main() {
  try {
    emit_keys();
    emit_signatures();
    emit_assets();
    emit_times();
    const emitted_transactions txs = emit_transactions();
    {
      colony_source src;
      emit_faults(src, emit_generated(src));
    }
    emit_genesis_blocks();
    emit_synthetic_blocks(txs);
    emit_block_num_tapos();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "apiary_conformance_vectors: exception: %s\n", e.what());
    return 1;
  }
  std::fflush(stdout);
  if (g_self_failures != 0) {
    std::fprintf(stderr, "apiary_conformance_vectors: %d self-check(s) failed\n", g_self_failures);
    return 1;
  }
  return 0;
}
