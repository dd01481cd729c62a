#include "apiary/colony/faults.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>

#include "apiary/colony/key_cache.hpp"
#include "apiary/core/chain/chain_options.hpp"
#include "apiary/core/protocol/operations.hpp"
#include "text.hpp"

namespace apiary::colony {

namespace {

using detail::trim_blanks;

constexpr std::array<std::string_view, fault_kind_count> fault_names = {"duplicate",
                                                                        "expired",
                                                                        "unknown-reference",
                                                                        "missing-authority",
                                                                        "insufficient-funds",
                                                                        "invalid-json",
                                                                        "custom-op-limit",
                                                                        "oversize",
                                                                        "no-rc"};

std::string all_names() {
  std::string s;
  for (std::string_view n : fault_names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Concatenates pieces by appending (gcc 12 warns falsely about `"text" + std::string`).
std::string cat(std::initializer_list<std::string_view> pieces) {
  std::string s;
  for (std::string_view p : pieces) s.append(p);
  return s;
}

// The first 8 bytes of the normal transaction's id: what makes each companion unique.
std::string tag_of(const core::transaction_id& id) { return core::to_hex(id.begin(), 8); }

core::custom_json_operation custom_json(const core::account_name& account, std::string id, std::string json) {
  core::custom_json_operation op;
  op.required_posting_auths.push_back(account);
  op.id = std::move(id);
  op.json = std::move(json);
  return op;
}

}  // namespace

std::string_view fault_kind_name(fault_kind k) { return fault_names[static_cast<std::size_t>(k)]; }

std::optional<fault_kind> fault_kind_from_name(std::string_view name) {
  for (std::size_t i = 0; i < fault_names.size(); ++i)
    if (fault_names[i] == name) return static_cast<fault_kind>(i);
  return std::nullopt;
}

core::reject expected_reject(fault_kind k) {
  switch (k) {
    case fault_kind::duplicate: return core::reject::duplicate;
    case fault_kind::expired: return core::reject::expired;
    case fault_kind::unknown_reference: return core::reject::unknown_reference_block;
    case fault_kind::missing_authority: return core::reject::missing_authority;
    case fault_kind::insufficient_funds: return core::reject::insufficient_funds;
    case fault_kind::invalid_json: return core::reject::invalid_json;
    case fault_kind::custom_op_limit: return core::reject::custom_op_limit;
    case fault_kind::oversize: return core::reject::oversize;
    case fault_kind::no_rc: return core::reject::insufficient_rc;
  }
  return core::reject::none;
}

fault_stage rejected_at(fault_kind k) {
  switch (k) {
    case fault_kind::invalid_json: return fault_stage::validation;
    case fault_kind::duplicate:
    case fault_kind::expired:
    case fault_kind::unknown_reference:
    case fault_kind::missing_authority:
    case fault_kind::insufficient_funds:
    case fault_kind::custom_op_limit:
    case fault_kind::oversize:
    case fault_kind::no_rc: return fault_stage::chain_state;
  }
  return fault_stage::chain_state;
}

std::string_view fault_stage_name(fault_stage s) { return s == fault_stage::validation ? "validation" : "chain_state"; }

double fault_config::total() const {
  double sum = 0;
  for (double f : fraction) sum += f;
  return sum;
}

std::optional<std::string> fault_config::validate(bool sign) const {
  for (std::size_t i = 0; i < fault_kind_count; ++i)
    if (!(fraction[i] >= 0.0 && fraction[i] <= 1.0)) return cat({fault_names[i], ": a fraction from 0 to 1"});
  if (total() > 1.0 + 1e-12) return "the fractions add up to more than 1";
  if (!sign && (*this)[fault_kind::missing_authority] > 0)
    return "missing-authority needs signing on (unsigned transactions skip the authority check)";
  return std::nullopt;
}

std::string to_string(const fault_config& f) {
  std::string s;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    if (f.fraction[i] == 0) continue;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f.fraction[i]);
    if (!s.empty()) s += ',';
    s.append(fault_names[i]).append("=").append(buf, r.ptr);
  }
  return s.empty() ? "none" : s;
}

std::optional<std::string> parse_faults(std::string_view text, fault_config& out) {
  fault_config f;
  std::array<bool, fault_kind_count> named{};
  text = trim_blanks(text);
  if (text != "none") {
    while (!text.empty()) {
      const std::size_t comma = text.find(',');
      const std::string_view item = trim_blanks(text.substr(0, comma));
      text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos)
        return cat({"'", item, "': expected kind=fraction (kinds: ", all_names(), "), or none"});
      const std::string_view name = trim_blanks(item.substr(0, eq));
      const std::string_view value = trim_blanks(item.substr(eq + 1));
      const auto kind = fault_kind_from_name(name);
      if (!kind) return cat({"unknown fault kind '", name, "' (kinds: ", all_names(), ")"});
      if (std::exchange(named[static_cast<std::size_t>(*kind)], true))
        return cat({name, ": given twice (name each kind once)"});
      double v = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
      if (r.ec != std::errc{} || r.ptr != value.data() + value.size() || !(v >= 0.0 && v <= 1.0))
        return cat({name, "=", value, ": expected a fraction from 0 to 1"});
      f[*kind] = v;
    }
  }
  if (f.total() > 1.0 + 1e-12) return "the fractions add up to more than 1";
  out = f;
  return std::nullopt;
}

fault_injector::fault_injector(const fault_config& config, std::uint64_t seed, std::uint32_t thread_index)
    // A stream of its own: the generator's draws stay the same whether faults are on or off.
    : config_(config), rng_((seed + thread_index) ^ 0x6661756c74735eedULL), active_(config.any()) {}

std::optional<fault_kind> fault_injector::draw() {
  if (!active_) return std::nullopt;
  // A uniform double in [0, 1) from the top 53 bits: the same on every platform.
  double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    if (u < config_.fraction[i]) return static_cast<fault_kind>(i);
    u -= config_.fraction[i];
  }
  return std::nullopt;
}

faulty_transaction make_faulty(fault_kind k, const core::transaction& normal, const core::transaction_id& normal_id,
                               const core::account_name& signer) {
  faulty_transaction f;
  f.tx = normal;
  const std::string tag = tag_of(normal_id);
  auto replace_operations = [&](auto&&... ops) {
    f.tx.operations.clear();
    (f.tx.operations.emplace_back(std::move(ops)), ...);
  };
  switch (k) {
    case fault_kind::duplicate: break;  // the caller resubmits the normal transaction
    case fault_kind::expired:
      // The normal one expires an hour after the head it was made at; this one at that head.
      f.tx.expiration.secs -= 3600;
      break;
    case fault_kind::unknown_reference: f.tx.ref_block_prefix ^= 0xa5a5a5a5u; break;
    case fault_kind::missing_authority:
      f.wrong_key = true;
      f.tx.expiration.secs -= 1;  // another id than the normal one
      break;
    case fault_kind::insufficient_funds: {
      core::transfer_operation t;
      t.from = signer;
      t.to = signer;
      t.amount = core::asset::hive(std::numeric_limits<std::int64_t>::max() / 2);
      t.memo = cat({"fault ", tag});
      f.role = core::key_role::active;
      replace_operations(std::move(t));
      break;
    }
    case fault_kind::invalid_json:
      replace_operations(custom_json(signer, cat({"fault-", tag}), R"({"unterminated": )"));
      break;
    case fault_kind::custom_op_limit:
      f.tx.operations.clear();
      for (int i = 0; i < 6; ++i)
        f.tx.operations.emplace_back(custom_json(signer, cat({"fault-", tag}), cat({"[", std::to_string(i), "]"})));
      break;
    case fault_kind::oversize: {
      f.tx.operations.clear();
      const std::string json = cat({"\"", std::string(7998, 'x'), "\""});  // 8,000 bytes, valid JSON
      for (int i = 0; i < 9; ++i) f.tx.operations.emplace_back(custom_json(signer, cat({"fault-", tag}), json));
      break;
    }
    case fault_kind::no_rc:
      // Valid in every other way, signed by its payer; only its payer's mana is missing.
      f.signer = core::account_name(core::default_witness);
      replace_operations(custom_json(f.signer, cat({"fault-", tag}), "{}"));
      break;
  }
  return f;
}

std::string wrong_password(std::string_view password) {
  std::string other(password);
  other += "-not-this-one";
  return other;
}

core::private_key wrong_key_for(const core::account_name& account, core::key_role role, std::string_view password) {
  return core::private_key::from_login(account.view(), role, wrong_password(password));
}

core::full_transaction_ptr build_fault(fault_kind k, const core::full_transaction_ptr& normal,
                                       const core::account_name& signer, key_cache& keys, const core::chain_id& chain,
                                       bool sign, bool attach_keys) {
  if (k == fault_kind::duplicate) return normal;
  faulty_transaction f = make_faulty(k, normal->tx(), normal->id(), signer);
  if (sign && f.wrong_key) {
    const core::private_key wrong = wrong_key_for(signer, f.role, keys.password());
    const core::public_key pub = wrong.public_key();
    return std::make_shared<const core::full_transaction>(
        std::move(f.tx), chain, std::span(&wrong, 1),
        attach_keys ? std::span(&pub, 1) : std::span<const core::public_key>{});
  }
  return make_transaction(std::move(f.tx), f.signer.empty() ? signer : f.signer, f.role, keys, chain, sign,
                          attach_keys);
}

}  // namespace apiary::colony
