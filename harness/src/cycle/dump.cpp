#include "apiary/harness/cycle/dump.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include <spdlog/fmt/fmt.h>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/block.hpp"
#include "apiary/core/protocol/buffer.hpp"
#include "apiary/core/protocol/full_block.hpp"
#include "apiary/core/protocol/json.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/harness/io/output_file.hpp"

namespace apiary::harness {

transaction_tap::transaction_tap(core::transaction_sink& next, const core::chain& chain, std::size_t sample_limit,
                                 std::size_t block_limit, bool record_accepted)
    : next_(next),
      chain_(chain),
      sample_limit_(sample_limit),
      block_limit_(block_limit),
      record_accepted_(record_accepted) {
  samples_.reserve(sample_limit);
  sample_full_.store(sample_limit == 0);
  tracking_ = block_limit != 0;
  head_ = chain.head_block_id();
  pending_ = chain.pending();
}

transaction_tap::relay_slot* transaction_tap::slot_for(const core::tx_completion& done) {
  const std::size_t n = relay_count_.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (relays_[i].inner.fn == done.fn && relays_[i].inner.ctx == done.ctx) return &relays_[i];
  core::lock_guard lock(relay_mutex_);
  const std::size_t m = relay_count_.load(std::memory_order_relaxed);
  for (std::size_t i = n; i < m; ++i)
    if (relays_[i].inner.fn == done.fn && relays_[i].inner.ctx == done.ctx) return &relays_[i];
  APIARY_CHECK(m < max_relays);  // the colony has one completion per producer thread
  relays_[m] = {this, done};
  relay_count_.store(m + 1, std::memory_order_release);
  return &relays_[m];
}

bool transaction_tap::submit(core::full_transaction_ptr tx, core::tx_completion done, core::tx_intent intent) {
  if (!sample_full_.load(std::memory_order_relaxed)) {
    core::lock_guard lock(sample_mutex_);
    if (samples_.size() < sample_limit_) {
      samples_.push_back({tx, core::reject::count_});
      sample_ids_.insert(tx->id());
      outcomes_missing_.fetch_add(1, std::memory_order_relaxed);
      if (samples_.size() == sample_limit_) sample_full_.store(true, std::memory_order_relaxed);
    }
  }
  relay_slot* slot = slot_for(done);
  return next_.submit(std::move(tx), core::tx_completion{&transaction_tap::relay, slot}, intent);
}

void transaction_tap::relay(void* ctx, const core::full_transaction& tx, core::reject outcome) {
  auto* slot = static_cast<relay_slot*>(ctx);
  transaction_tap& tap = *slot->tap;
  if (tap.outcomes_missing_.load(std::memory_order_relaxed) != 0) {
    core::lock_guard lock(tap.sample_mutex_);
    for (sampled& s : tap.samples_) {
      if (s.tx.get() == &tx && s.outcome == core::reject::count_) {
        s.outcome = outcome;
        tap.outcomes_missing_.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
    }
  }
  if (outcome == core::reject::none && tap.record_accepted_) tap.accepted_ids_.push_back({tx.id(), tx.tx().expiration});
  if (outcome == core::reject::none && tap.tracking_) {
    // The completion hands out a reference; the chain appended the owning pointer to its
    // pending list in the writer's current run of pushes, so it is among the last few (the
    // writer thread runs both, and completes a run before it produces a block).
    const auto& pending = tap.chain_.pending();
    const auto owner = std::find_if(pending.rbegin(), pending.rend(), [&tx](const auto& p) { return p.get() == &tx; });
    APIARY_CHECK(owner != pending.rend());
    tap.accepted_.push_back(*owner);
  }
  slot->inner(tx, outcome);
}

void transaction_tap::select_sampled(std::span<const queen::tx_timing> records, std::vector<queen::tx_timing>& out) {
  core::lock_guard lock(sample_mutex_);
  for (const queen::tx_timing& t : records)
    if (sample_ids_.contains(t.id)) out.push_back(t);
}

void transaction_tap::on_block(const queen::block_record& r, const core::chain& chain, bool measured) {
  if (!tracking_) return;
  if (measured) {
    captured_block b;
    b.num = r.num;
    b.previous = head_;
    b.id = chain.head_block_id();
    b.timestamp = chain.head_block_time();
    // The block is the first r.transactions of what was pending when it was generated.
    b.transactions.reserve(r.transactions);
    for (std::size_t i = 0; i < pending_.size() && b.transactions.size() < r.transactions; ++i)
      b.transactions.push_back(pending_[i]);
    for (std::size_t i = 0; i < accepted_.size() && b.transactions.size() < r.transactions; ++i)
      b.transactions.push_back(accepted_[i]);
    blocks_.push_back(std::move(b));
  }
  // From here on follow the chain: what it has pending now, and what it accepts next.
  tracking_ = blocks_.size() < block_limit_;
  head_ = chain.head_block_id();
  accepted_.clear();
  if (tracking_)
    pending_ = chain.pending();
  else
    pending_.clear();
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

// intended_us, submitted_us, accepted_us and included_us (rejected_us for a rejection), each
// followed by a comma; all null without a record.
void write_moments(core::json_writer& w, const queen::tx_timing* t, std::int64_t origin_ns, bool rejected) {
  const auto moment = [&](std::string_view key, std::int64_t ns) {
    w.key(key);
    if (t == nullptr)
      w.raw("null");
    else
      w.raw(fmt::format("{:.3f}", static_cast<double>(ns - origin_ns) / 1e3));
    w.put(',');
  };
  moment("intended_us", t ? t->intended_ns : 0);
  moment("submitted_us", t ? t->submitted_ns : 0);
  moment("accepted_us", t ? t->accepted_ns : 0);
  moment(rejected ? "rejected_us" : "included_us", t ? t->settled_ns : 0);
}

}  // namespace

std::size_t write_transaction_dump(const std::string& path, const std::vector<transaction_tap::sampled>& samples,
                                   const dump_timings& timings) {
  file_writer f(path);
  core::out_buffer buf(1 << 16);
  core::json_writer w(buf);
  std::size_t index = 0;
  for (const transaction_tap::sampled& s : samples) {
    const core::full_transaction& tx = *s.tx;
    std::vector<core::public_key> signers;
    for (const core::compact_signature& sig : tx.tx().signatures)
      if (auto k = core::recover_public_key(sig, tx.sig_digest())) signers.push_back(*k);
    buf.clear();
    w.put('{');
    w.key("index");
    w.number(static_cast<std::uint64_t>(index++));
    w.put(',');
    w.key("outcome");
    if (s.outcome == core::reject::count_)
      w.raw("null");
    else
      w.string(s.outcome == core::reject::none ? std::string_view("accepted") : core::reject_name(s.outcome));
    w.put(',');
    w.key("id");
    w.hex(tx.id().begin(), tx.id().size());
    w.put(',');
    w.key("size_bytes");
    w.number(static_cast<std::uint64_t>(tx.packed_size()));
    w.put(',');
    const bool known = timings.find && s.outcome != core::reject::count_ && s.outcome != core::reject::shutdown;
    write_moments(w, known ? timings.find(tx.id(), s.outcome == core::reject::none) : nullptr, timings.origin_ns,
                  core::is_rejection(s.outcome));
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
  return samples.size();
}

std::size_t write_block_dump(const std::string& path, const std::vector<transaction_tap::captured_block>& blocks,
                             const core::chain& chain) {
  file_writer f(path);
  core::out_buffer buf(1 << 20);
  core::json_writer w(buf);
  const core::public_key witness_key = chain.witness_key().public_key();
  for (const transaction_tap::captured_block& c : blocks) {
    core::full_block b;
    b.header.previous = c.previous;
    b.header.timestamp = c.timestamp;
    b.header.witness = core::account_name(chain.options().witness);
    b.transactions = c.transactions;
    b.header.transaction_merkle_root = b.compute_merkle_root();
    b.header.witness_signature = chain.witness_key().sign(core::header_digest(b.header));
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
