#include "apiary/colony/mix.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "text.hpp"

namespace apiary::colony {

namespace {
constexpr std::array<std::string_view, op_kind_count> kind_names = {"article", "reply", "vote", "transfer",
                                                                    "custom_json"};
}  // namespace

std::string_view op_kind_name(op_kind k) { return kind_names[index_of(k)]; }

std::optional<op_kind> op_kind_from_name(std::string_view name) {
  for (op_kind k : all_op_kinds)
    if (kind_names[index_of(k)] == name) return k;
  return std::nullopt;
}

std::uint32_t extra_size(const op_kind_params& p, std::uint32_t hard_max, double u) {
  if (p.max <= p.min) return std::min(p.min, hard_max);
  const double span = static_cast<double>(p.max - p.min);
  // Truncation, as Hive does; u < 1 keeps the result below max except for exponent 0.
  const double size = span * std::pow(u, p.exponent) + static_cast<double>(p.min);
  const double clamped = std::min(size, static_cast<double>(std::min(p.max, hard_max)));
  return clamped <= 0.0 ? 0 : static_cast<std::uint32_t>(clamped);
}

std::uint64_t mix_config::total_weight() const {
  std::uint64_t total = 0;
  for (const auto& k : kinds) total += k.weight;
  return total;
}

double mix_config::share(op_kind k) const {
  const std::uint64_t total = total_weight();
  return total == 0 ? 0.0 : static_cast<double>((*this)[k].weight) / static_cast<double>(total);
}

op_kind mix_config::pick(std::uint64_t roll) const {
  for (op_kind k : all_op_kinds) {
    const std::uint32_t w = (*this)[k].weight;
    if (roll < w) return k;
    roll -= w;
  }
  return op_kind::custom_json;  // roll out of range: the default kind, as in Hive
}

std::optional<std::string> mix_config::validate() const {
  for (op_kind k : all_op_kinds) {
    const op_kind_params& p = (*this)[k];
    const std::string name(op_kind_name(k));
    if (p.min > p.max)
      return name + ": min (" + std::to_string(p.min) + ") is above max (" + std::to_string(p.max) + ")";
    if (!(p.exponent >= 0.0) || std::isinf(p.exponent)) return name + ": exponent must be a finite number >= 0";
  }
  if (total_weight() == 0) return std::string("the mix has no weight: at least one kind needs weight > 0");
  return std::nullopt;
}

namespace {

using detail::trim_blanks;

std::optional<std::uint32_t> parse_u32(std::string_view s) {
  s = trim_blanks(s);
  std::uint32_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A non-negative finite decimal: "4", "0.5", "1e-3". No sign, no inf or nan.
std::optional<double> parse_exponent(std::string_view s) {
  s = trim_blanks(s);
  if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string kind_list() {
  std::string s;
  for (op_kind k : all_op_kinds) {
    if (!s.empty()) s.append(", ");
    s.append(op_kind_name(k));
  }
  return s;
}

}  // namespace

std::string to_string(const mix_config& m) {
  std::string s;
  for (op_kind k : all_op_kinds) {
    const op_kind_params& p = m[k];
    if (!s.empty()) s.push_back(',');
    s.append(op_kind_name(k)).append("=").append(std::to_string(p.weight));
    s.append(":").append(std::to_string(p.min)).append("-").append(std::to_string(p.max));
    // The shortest text that reads back as the same double.
    char exponent[32];
    const auto r = std::to_chars(std::begin(exponent), std::end(exponent), p.exponent);
    s.append("^").append(exponent, r.ptr);
  }
  return s;
}

std::optional<std::string> parse_mix(std::string_view text, mix_config& out) {
  mix_config m = out;
  std::array<bool, op_kind_count> named{};
  text = trim_blanks(text);
  if (text.empty())
    return std::string("expected kind=weight[:min-max[^exponent]],... (kinds: ").append(kind_list()).append(")");
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim_blanks(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      std::string e("'");
      e.append(item)
          .append("': expected kind=weight, kind=weight:min-max or kind=weight:min-max^exponent (kinds: ")
          .append(kind_list())
          .append(")");
      return e;
    }
    const std::string_view name = trim_blanks(item.substr(0, eq));
    const auto kind = op_kind_from_name(name);
    if (!kind) {
      std::string e("unknown operation kind '");
      e.append(name).append("' (kinds: ").append(kind_list()).append(")");
      return e;
    }
    if (std::exchange(named[index_of(*kind)], true))
      return std::string(name).append(": given twice (name each kind once)");
    std::string_view rest = item.substr(eq + 1);
    const std::size_t colon = rest.find(':');
    const auto weight = parse_u32(rest.substr(0, colon));
    if (!weight) {
      std::string e(name);
      e.append(": weight '")
          .append(trim_blanks(rest.substr(0, colon)))
          .append("' is not a whole number from 0 to 4294967295");
      return e;
    }
    op_kind_params& p = m[*kind];
    p.weight = *weight;
    if (colon != std::string_view::npos) {
      std::string_view range = rest.substr(colon + 1);
      const std::size_t caret = range.find('^');
      if (caret != std::string_view::npos) {
        const std::string_view shape = range.substr(caret + 1);
        const auto exponent = parse_exponent(shape);
        if (!exponent) {
          std::string e(name);
          e.append(": exponent '").append(trim_blanks(shape)).append("' is not a number >= 0 (e.g. 4 or 0.5)");
          return e;
        }
        p.exponent = *exponent;
        range = range.substr(0, caret);
      }
      const std::size_t dash = range.find('-');
      const auto lo = dash == std::string_view::npos ? std::nullopt : parse_u32(range.substr(0, dash));
      const auto hi = dash == std::string_view::npos ? std::nullopt : parse_u32(range.substr(dash + 1));
      if (!lo || !hi) {
        std::string e(name);
        e.append(": extra size range '").append(trim_blanks(range)).append("' is not min-max in bytes (e.g. 20-400)");
        return e;
      }
      p.min = *lo;
      p.max = *hi;
    }
  }
  if (auto problem = m.validate()) return problem;
  out = m;
  return std::nullopt;
}

}  // namespace apiary::colony
