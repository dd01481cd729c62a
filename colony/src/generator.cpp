#include "apiary/colony/generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <utility>

#include "apiary/core/base/check.hpp"
#include "apiary/core/protocol/operations.hpp"

namespace apiary::colony {

namespace detail {

// Text that payloads are cut from: lower-case words of 2..9 letters between single spaces,
// made once. Safe inside a JSON string and a memo without escaping.
const std::string& filler() {
  static const std::string text = [] {
    std::size_t longest = 0;
    for (auto m : mix_config::hard_max) longest = std::max<std::size_t>(longest, m);
    std::string t;
    t.reserve(longest + 16);
    std::uint32_t x = 0x9e3779b9u;
    while (t.size() < longest) {
      x = x * 1664525u + 1013904223u;
      const std::uint32_t len = 2 + (x >> 28) % 8;
      for (std::uint32_t i = 0; i < len; ++i) {
        x = x * 1664525u + 1013904223u;
        t.push_back(static_cast<char>('a' + (x >> 24) % 26));
      }
      t.push_back(' ');
    }
    t.resize(longest);
    return t;
  }();
  return text;
}

std::string_view fill(std::size_t n) { return std::string_view(filler()).substr(0, n); }

// Hive-like categories for root posts.
constexpr std::array<std::string_view, 16> categories = {
    "hive",   "photography", "life",  "travel",  "food",   "art",    "music",  "gaming",
    "crypto", "blockchain",  "story", "writing", "nature", "sports", "health", "technology"};

constexpr std::uint16_t beneficiary_weight = 500;  // 5%
constexpr std::uint32_t max_beneficiaries = 7;
constexpr std::int64_t transfer_amount = 1;  // 0.001 HBD

std::string concat(std::string_view a, std::string_view b) {
  std::string s;
  s.reserve(a.size() + b.size());
  s.append(a);
  s.append(b);
  return s;
}

}  // namespace detail

std::uint64_t generator_stats::transactions() const {
  std::uint64_t n = 0;
  for (const auto& k : kinds) n += k.count;
  return n;
}

generator_stats& generator_stats::operator+=(const generator_stats& o) {
  for (std::size_t i = 0; i < op_kind_count; ++i) {
    kinds[i].count += o.kinds[i].count;
    kinds[i].extra_bytes += o.kinds[i].extra_bytes;
  }
  article_substitutions += o.article_substitutions;
  return *this;
}

generator::generator(const mix_config& mix, const generator_options& options, std::vector<core::account_name> accounts,
                     comment_ring& ring, const std::vector<double>& payer_weights)
    : mix_(mix),
      total_weight_(mix.total_weight()),
      thread_index_(options.thread_index),
      remember_own_comments_(options.remember_own_comments),
      accounts_(std::move(accounts)),
      ring_(ring),
      rng_(options.base_seed + options.thread_index) {
  APIARY_CHECK(total_weight_ > 0);
  APIARY_CHECK(thread_index_ < 256);
  APIARY_CHECK(!accounts_.empty());
  if (!payer_weights.empty()) {
    APIARY_CHECK(payer_weights.size() == accounts_.size());
    double sum = 0;
    for (double w : payer_weights) sum += w;
    if (sum > 0 && std::isfinite(sum))
      payer_pick_.emplace(payer_weights.begin(), payer_weights.end());
    else
      payer_pick_.emplace(std::vector<double>(accounts_.size(), 1.0));
  }
  detail::filler();  // build the shared text now rather than in the first timed call
}

void generator::set_head(const core::block_id& head_id, core::time_point_sec head_time) {
  header_.set_reference_block(head_id);
  header_.expiration = head_time + expiration_seconds;
  block_num_ = core::block_num_from_id(head_id);
}

double generator::next_unit() {
  // The top 53 bits as a double in [0, 1): exact, and the same on every platform.
  return static_cast<double>(next_random() >> 11) * 0x1.0p-53;
}

std::uint32_t generator::draw_extra(op_kind k) {
  const op_kind_params& p = mix_[k];
  if (p.max <= p.min) return mix_.extra_size(k, 0.0);  // nothing random: keep the stream
  return mix_.extra_size(k, next_unit());
}

std::size_t generator::next_actor() {
  if (payer_pick_) return (*payer_pick_)(rng_);
  const std::size_t a = cursor_;
  cursor_ = cursor_ + 1 == accounts_.size() ? 0 : cursor_ + 1;
  return a;
}

generated_transaction generator::next() { return next(mix_.pick(next_random() % total_weight_)); }

generated_transaction generator::next(op_kind kind) {
  generated_transaction g;
  g.tx.ref_block_num = header_.ref_block_num;
  g.tx.ref_block_prefix = header_.ref_block_prefix;
  g.tx.expiration = header_.expiration;

  const std::size_t actor = next_actor();
  g.nonce = (std::uint64_t{block_num_} << 40) | (std::uint64_t{tx_num_} << 8) | thread_index_;
  ++tx_num_;
  std::array<char, nonce_text_size> digits;
  std::uint64_t rest = g.nonce;
  for (std::size_t i = digits.size(); i-- > 0; rest >>= 4) digits[i] = "0123456789abcdef"[rest & 0xf];
  const std::string_view nonce_text(digits.data(), digits.size());

  switch (kind) {
    case op_kind::article: build_article(g, actor, nonce_text); break;
    case op_kind::reply: build_reply(g, actor, nonce_text); break;
    case op_kind::vote: build_vote(g, actor, nonce_text); break;
    case op_kind::transfer: build_transfer(g, actor, nonce_text); break;
    case op_kind::custom_json: build_custom_json(g, actor, nonce_text); break;
  }
  g.drawn = kind;
  if (g.kind == op_kind::article && kind != op_kind::article) ++stats_.article_substitutions;
  kind_stats& s = stats_.kinds[index_of(g.kind)];
  ++s.count;
  s.extra_bytes += g.extra_size;
  if (remember_own_comments_ && (g.kind == op_kind::article || g.kind == op_kind::reply)) ring_.remember(g.tx);
  return g;
}

// What every builder sets first: the kind, its extra size (drawn now, so the random stream
// keeps its order), and who signs with which key.
void generator::start(generated_transaction& g, op_kind kind, std::size_t actor, core::key_role role) {
  g.kind = kind;
  g.extra_size = draw_extra(kind);
  g.signer = accounts_[actor];
  g.role = role;
}

void generator::build_article(generated_transaction& g, std::size_t actor, std::string_view nonce_text) {
  start(g, op_kind::article, actor, core::key_role::posting);

  core::comment_operation c;
  c.parent_permlink = std::string(detail::categories[next_random() % detail::categories.size()]);
  c.author = accounts_[actor];
  c.permlink = detail::concat("a", nonce_text);
  c.title = detail::concat("Article ", nonce_text);
  c.body = std::string(detail::fill(g.extra_size));

  core::comment_options_operation o;
  o.author = c.author;
  o.permlink = c.permlink;
  // 0..7 other accounts of the thread, each at 5%, sorted by name as Hive requires.
  const std::size_t others = accounts_.size() - 1;
  const std::size_t wanted = std::min<std::size_t>(next_random() % (detail::max_beneficiaries + 1), others);
  if (wanted > 0) {
    std::vector<core::beneficiary_route> routes;
    routes.reserve(wanted);
    std::array<std::size_t, detail::max_beneficiaries> taken{};
    std::size_t n = 0;
    if (wanted == others) {  // everyone else: no sampling needed
      for (std::size_t i = 0; i < accounts_.size(); ++i)
        if (i != actor) taken[n++] = i;
    } else {
      while (n < wanted) {
        const std::size_t i = static_cast<std::size_t>(next_random() % accounts_.size());
        if (i == actor || std::find(taken.begin(), taken.begin() + static_cast<std::ptrdiff_t>(n), i) !=
                              taken.begin() + static_cast<std::ptrdiff_t>(n))
          continue;
        taken[n++] = i;
      }
    }
    for (std::size_t i = 0; i < n; ++i) routes.push_back({accounts_[taken[i]], detail::beneficiary_weight});
    std::sort(routes.begin(), routes.end(),
              [](const core::beneficiary_route& a, const core::beneficiary_route& b) { return a.account < b.account; });
    o.extensions.push_back(core::comment_payout_beneficiaries{std::move(routes)});
  }

  g.tx.operations.reserve(2);
  g.tx.operations.emplace_back(std::move(c));
  g.tx.operations.emplace_back(std::move(o));
}

void generator::build_reply(generated_transaction& g, std::size_t actor, std::string_view nonce_text) {
  std::optional<comment_ref> parent = ring_.pick(next_random());
  if (!parent) return build_article(g, actor, nonce_text);
  start(g, op_kind::reply, actor, core::key_role::posting);

  core::comment_operation c;
  c.parent_author = parent->author;
  c.parent_permlink = std::move(parent->permlink);
  c.author = accounts_[actor];
  c.permlink = detail::concat("r", nonce_text);
  c.body = std::string(detail::fill(g.extra_size));
  g.tx.operations.emplace_back(std::move(c));
}

void generator::build_vote(generated_transaction& g, std::size_t actor, std::string_view nonce_text) {
  std::optional<comment_ref> target = ring_.pick(next_random());
  if (!target) return build_article(g, actor, nonce_text);
  start(g, op_kind::vote, actor, core::key_role::posting);

  core::vote_operation v;
  v.voter = accounts_[actor];
  v.author = target->author;
  v.permlink = std::move(target->permlink);
  // The nonce without the thread byte: block and transaction number.
  v.weight = static_cast<std::int16_t>((g.nonce >> 8) % 10000 + 1);
  g.tx.operations.emplace_back(std::move(v));
}

void generator::build_transfer(generated_transaction& g, std::size_t actor, std::string_view nonce_text) {
  start(g, op_kind::transfer, actor, core::key_role::active);

  core::transfer_operation t;
  t.from = accounts_[actor];
  t.to = accounts_[actor + 1 == accounts_.size() ? 0 : actor + 1];  // another account unless the thread has one
  t.amount = core::asset::hbd(detail::transfer_amount);
  // The nonce, then ":" and filler up to the extra size (Hive's memo, without its
  // off-by-one), so the memo is max(extra size, nonce_text_size) long.
  t.memo.reserve(std::max<std::size_t>(g.extra_size, nonce_text.size()));
  t.memo.append(nonce_text);
  if (g.extra_size > nonce_text.size()) {
    t.memo.push_back(':');
    t.memo.append(detail::fill(g.extra_size - nonce_text.size() - 1));
  }
  g.tx.operations.emplace_back(std::move(t));
}

void generator::build_custom_json(generated_transaction& g, std::size_t actor, std::string_view nonce_text) {
  start(g, op_kind::custom_json, actor, core::key_role::posting);

  core::custom_json_operation cj;
  cj.required_posting_auths.push_back(accounts_[actor]);
  cj.id = detail::concat("id", nonce_text);  // 2 + nonce_text_size characters, of Hive's 32
  // {"v":"<filler>"}: 8 bytes of framing, so the hard maximum keeps it under 8,192.
  static constexpr std::string_view open = R"({"v":")";
  static constexpr std::string_view close = R"("})";
  const std::string_view body = detail::fill(g.extra_size);
  cj.json.reserve(open.size() + body.size() + close.size());
  cj.json.append(open);
  cj.json.append(body);
  cj.json.append(close);
  g.tx.operations.emplace_back(std::move(cj));
}

}  // namespace apiary::colony
