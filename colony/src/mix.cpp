#include "apiary/colony/mix.hpp"

#include <algorithm>
#include <cmath>

namespace apiary::colony {

namespace {
constexpr std::array<std::string_view, op_kind_count> kind_names = {"article", "reply", "vote",
                                                                    "transfer", "custom_json"};
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
    if (!(p.exponent >= 0.0) || std::isinf(p.exponent))
      return name + ": exponent must be a finite number >= 0";
  }
  if (total_weight() == 0) return std::string("the mix has no weight: at least one kind needs weight > 0");
  return std::nullopt;
}

}  // namespace apiary::colony
