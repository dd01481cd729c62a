// generator: one colony thread's source of transactions of the typical mix (mix.hpp).
//
// - Randomness: one std::mt19937_64 seeded with base_seed + thread_index, and draws made
//   with plain arithmetic rather than std:: distributions, so a seed gives the same stream
//   on every platform.
// - Actors: the thread's own accounts, in turn (Hive's round-robin), or, given payer weights,
//   each drawn with its weight's share from an alias table (Boost.Random's
//   discrete_distribution) built once. Transfers go to the account after the actor,
//   beneficiaries are other accounts of the thread.
// - Uniqueness: a nonce block_num<<40 | tx_num<<8 | thread_index (the head block's number,
//   of which the low 24 bits fit; tx_num counts the thread's transactions, never reset)
//   goes into every permlink, custom_json id and memo as nonce_text_size hex digits, and
//   (nonce>>8) % 10000 + 1 is a vote's weight. Transactions of one thread differ
//   in their nonce, and votes, whose text carries none, differ in weight: two votes against
//   the same head block would have to be 10,000 transactions apart to share one. Threads
//   never share an actor, and the TaPoS fields differ between head blocks.
// - Each transaction has one primary operation (an article adds its comment_options);
//   expiration = head time + 3,600 s, reference block = head block.
//
// Thread safety: a generator belongs to one thread; only the comment_ring is shared.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <boost/random/discrete_distribution.hpp>

#include "apiary/colony/comment_ring.hpp"
#include "apiary/colony/mix.hpp"
#include "apiary/core/protocol/account_name.hpp"
#include "apiary/core/protocol/bytes.hpp"
#include "apiary/core/protocol/keys.hpp"
#include "apiary/core/protocol/time_point.hpp"
#include "apiary/core/protocol/transaction.hpp"

namespace apiary::colony {

// Hive's limit on the time until a transaction expires, which the colony always uses.
inline constexpr std::uint32_t expiration_seconds = 3600;

// The nonce's text: its 64 bits as lower-case hex digits, zero-padded to this width whatever
// the head block and the count, so that a transaction is as long in a run's millionth block
// as in a workload made at the genesis.
inline constexpr std::size_t nonce_text_size = 2 * sizeof(std::uint64_t);

struct generated_transaction {
  core::transaction tx;  // unsigned: sign with full_transaction and the signer's key
  // What was built: an article when a reply or vote found no target in the ring.
  op_kind kind = op_kind::custom_json;
  // What the mix drew: differs from `kind` when the article replaced it.
  op_kind drawn = op_kind::custom_json;
  std::uint32_t extra_size = 0;
  // Whose key signs it, and which: active for transfers, posting for everything else.
  core::account_name signer;
  core::key_role role = core::key_role::posting;
  std::uint64_t nonce = 0;
};

struct kind_stats {
  std::uint64_t count = 0;
  std::uint64_t extra_bytes = 0;
};

struct generator_stats {
  std::array<kind_stats, op_kind_count> kinds{};
  // Replies and votes made articles because the comment ring was empty.
  std::uint64_t article_substitutions = 0;

  const kind_stats& operator[](op_kind k) const { return kinds[index_of(k)]; }
  std::uint64_t transactions() const;
  generator_stats& operator+=(const generator_stats& o);
};

struct generator_options {
  std::uint64_t base_seed = 0;
  std::uint32_t thread_index = 0;  // 0..255: the low byte of every nonce
  // Push each generated comment into the ring at once, so a generator on its own (tests,
  // benchmarks) has targets. A harness that executes the transactions turns this off and
  // calls comment_ring::remember from its post-apply callback (Hive's way), so replies and
  // votes only target comments the chain already has.
  bool remember_own_comments = true;
};

class generator {
 public:
  // accounts: the thread's own, at least one. The ring is shared and must outlive this.
  // payer_weights: one per account, in the accounts' order: each transaction's actor (its
  // payer) is drawn with probability weight / sum. Empty: the accounts in turn. Weights whose
  // sum is not a positive finite number count as equal.
  generator(const mix_config& mix, const generator_options& options, std::vector<core::account_name> accounts,
            comment_ring& ring, const std::vector<double>& payer_weights = {});

  // The block the next transactions reference and expire after; its number goes into the
  // nonce. Call after every block (Hive's colony does).
  void set_head(const core::block_id& head_id, core::time_point_sec head_time);

  // The next transaction of the mix.
  generated_transaction next();
  // The next transaction of the given kind (a reply or vote still becomes an article when
  // the ring is empty).
  generated_transaction next(op_kind kind);

  const generator_stats& stats() const { return stats_; }
  const mix_config& mix() const { return mix_; }
  const std::vector<core::account_name>& accounts() const { return accounts_; }
  std::uint32_t thread_index() const { return thread_index_; }

 private:
  std::uint64_t next_random() { return rng_(); }
  double next_unit();  // uniform in [0, 1)
  std::uint32_t draw_extra(op_kind k);
  std::size_t next_actor();

  void start(generated_transaction& g, op_kind kind, std::size_t actor, core::key_role role);
  void build_article(generated_transaction& g, std::size_t actor, std::string_view nonce_text);
  void build_reply(generated_transaction& g, std::size_t actor, std::string_view nonce_text);
  void build_vote(generated_transaction& g, std::size_t actor, std::string_view nonce_text);
  void build_transfer(generated_transaction& g, std::size_t actor, std::string_view nonce_text);
  void build_custom_json(generated_transaction& g, std::size_t actor, std::string_view nonce_text);

  mix_config mix_;
  std::uint64_t total_weight_;
  std::uint32_t thread_index_;
  bool remember_own_comments_;
  std::vector<core::account_name> accounts_;
  comment_ring& ring_;
  std::mt19937_64 rng_;

  core::transaction header_;  // TaPoS and expiration of the current head, no operations
  std::uint32_t block_num_ = 0;
  std::uint32_t tx_num_ = 0;
  std::size_t cursor_ = 0;  // the next actor in turn
  // The actors' weights as an alias table; unset: in turn.
  std::optional<boost::random::discrete_distribution<std::uint32_t, double>> payer_pick_;
  generator_stats stats_;
};

}  // namespace apiary::colony
