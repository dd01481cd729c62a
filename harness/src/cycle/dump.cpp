#include "apiary/harness/cycle/dump.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <spdlog/fmt/fmt.h>

#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

void transaction_sample::read(std::span<const queen::tx_timing> transactions, std::span<const queen::settled_block>) {
  const std::size_t n = std::min(limit_ - records_.size(), transactions.size());
  records_.insert(records_.end(), transactions.begin(), transactions.begin() + static_cast<std::ptrdiff_t>(n));
}

void block_capture::read(std::span<const queen::tx_timing>, std::span<const queen::settled_block> blocks) {
  for (const queen::settled_block& b : blocks)
    if (b.num >= first_num_ && blocks_.size() < limit_) blocks_.push_back(b);
}

// ---- writing ----------------------------------------------------------------------------

namespace {

// A dump streamed through an output_file (a temporary file renamed into place at the end).
class file_writer {
 public:
  explicit file_writer(const std::string& path) : file_(path) {}

  void write(const core::out_buffer& b) { file_.write(b.data(), b.size()); }
  void close() { file_.commit(); }

 private:
  output_file file_;
};

void write_key_list(core::json_writer& w, const std::vector<core::public_key>& keys) {
  w.put('[');
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i != 0) w.put(',');
    w.string(core::public_key_to_string(keys[i]));
  }
  w.put(']');
}

// A settled transaction's outcome as the dump names it.
std::string_view outcome_name(const queen::tx_timing& t) {
  if (t.dropped) return "dropped";
  return t.outcome == core::reject::none ? std::string_view("accepted") : core::reject_name(t.outcome);
}

// intended_us, submitted_us, accepted_us and the settling moment (included_us, dropped_us or
// rejected_us), each followed by a comma.
void write_moments(core::json_writer& w, const queen::tx_timing& t, std::int64_t origin_ns) {
  const auto moment = [&](std::string_view key, std::int64_t ns) {
    w.key(key);
    w.raw(fmt::format("{:.3f}", static_cast<double>(ns - origin_ns) / 1e3));
    w.put(',');
  };
  moment("intended_us", t.intended_ns);
  moment("submitted_us", t.submitted_ns);
  moment("accepted_us", t.accepted_ns);
  moment(t.included() ? "included_us" : t.dropped ? "dropped_us" : "rejected_us", t.settled_ns);
}

}  // namespace

std::size_t write_transaction_dump(const std::string& path, const std::vector<queen::tx_timing>& records,
                                   std::int64_t origin_ns) {
  file_writer f(path);
  core::out_buffer buf(1 << 16);
  core::json_writer w(buf);
  std::size_t index = 0;
  for (const queen::tx_timing& t : records) {
    const core::full_transaction& tx = *t.tx;
    std::vector<core::public_key> signers;
    for (const core::compact_signature& sig : tx.tx().signatures)
      if (auto k = core::recover_public_key(sig, tx.sig_digest())) signers.push_back(*k);
    buf.clear();
    w.put('{');
    w.key("index");
    w.number(static_cast<std::uint64_t>(index++));
    w.put(',');
    w.key("outcome");
    w.string(outcome_name(t));
    w.put(',');
    w.key("id");
    w.hex(tx.id().begin(), tx.id().size());
    w.put(',');
    w.key("size_bytes");
    w.number(static_cast<std::uint64_t>(tx.packed_size()));
    w.put(',');
    write_moments(w, t, origin_ns);
    w.key("signer_keys");
    write_key_list(w, signers);
    w.put(',');
    w.key("attached_signer_keys");
    write_key_list(w, tx.signer_keys());
    w.put(',');
    w.key("packed_hex");
    w.hex(tx.packed().data(), tx.packed().size());
    w.put(',');
    w.key("transaction");
    core::write_json(w, tx.tx());
    w.raw("}\n");
    f.write(buf);
  }
  f.close();
  return records.size();
}

core::full_block rebuild_block(const queen::settled_block& c, const core::chain& chain) {
  core::full_block b;
  b.header.previous = c.previous;
  b.header.timestamp = c.timestamp;
  b.header.witness = core::account_name(chain.options().witness);
  b.transactions = c.transactions;
  b.header.transaction_merkle_root = b.compute_merkle_root();
  b.header.witness_signature = chain.witness_key().sign(core::header_digest(b.header));
  return b;
}

std::size_t write_block_dump(const std::string& path, const std::vector<queen::settled_block>& blocks,
                             const core::chain& chain) {
  file_writer f(path);
  core::out_buffer buf(1 << 20);
  core::json_writer w(buf);
  const core::public_key witness_key = chain.witness_key().public_key();
  for (const queen::settled_block& c : blocks) {
    const core::full_block b = rebuild_block(c, chain);
    const core::block_id id = core::compute_block_id(b.header);

    std::vector<core::transaction_id> ids;
    ids.reserve(b.transactions.size());
    for (const auto& tx : b.transactions) ids.push_back(tx->id());
    core::out_buffer packed(b.packed_size());
    b.pack_into(packed);

    buf.clear();
    w.put('{');
    w.key("block_num");
    w.number(static_cast<std::uint64_t>(c.num));
    w.put(',');
    w.key("id");
    w.hex(id.begin(), id.size());
    w.put(',');
    // The id the chain recorded when it applied the block: equal unless the rebuild is wrong.
    w.key("id_matches_chain");
    w.boolean(id == c.id);
    w.put(',');
    w.key("size_bytes");
    w.number(static_cast<std::uint64_t>(packed.size()));
    w.put(',');
    w.key("transaction_count");
    w.number(static_cast<std::uint64_t>(b.transactions.size()));
    w.put(',');
    w.key("witness");
    w.string(chain.options().witness);
    w.put(',');
    w.key("signing_key");
    w.string(core::public_key_to_string(witness_key));
    w.put(',');
    w.key("packed_hex");
    w.hex(packed.bytes(), packed.size());
    w.put(',');
    w.key("block");
    core::write_json(w, b.to_signed_block(), id, ids);
    w.raw("}\n");
    f.write(buf);
  }
  f.close();
  return blocks.size();
}

}  // namespace apiary::harness
