// The typical transaction mix of Hive's colony test: five kinds of transaction, each with a
// relative weight and a random extra payload size
//   extra = (max - min) * U^exponent + min,  U uniform in [0, 1),
// clamped to the kind's hard maximum (what keeps the payload within Hive's limits: a
// custom_json text under 8 KiB, a memo under 2 KiB). An exponent above 1 favours small
// payloads, below 1 large ones. Plain values: thread-safe to share read-only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace apiary::colony {

enum class op_kind : std::uint8_t { article, reply, vote, transfer, custom_json };
inline constexpr std::size_t op_kind_count = 5;
inline constexpr std::array<op_kind, op_kind_count> all_op_kinds = {op_kind::article, op_kind::reply, op_kind::vote,
                                                                    op_kind::transfer, op_kind::custom_json};

// "article", "reply", "vote", "transfer", "custom_json".
std::string_view op_kind_name(op_kind k);
std::optional<op_kind> op_kind_from_name(std::string_view name);
constexpr std::size_t index_of(op_kind k) { return static_cast<std::size_t>(k); }

struct op_kind_params {
  std::uint32_t min = 0;     // extra payload bytes, at least
  std::uint32_t max = 0;     // and at most (before the hard maximum clamps it)
  std::uint32_t weight = 0;  // relative frequency in the mix
  double exponent = 1.0;     // shape of the size distribution, >= 0

  bool operator==(const op_kind_params&) const = default;
};

// The extra size for a uniform draw u in [0, 1), clamped to hard_max.
std::uint32_t extra_size(const op_kind_params& p, std::uint32_t hard_max, double u);

struct mix_config {
  // What the payload of each kind may grow to: article and reply bodies, the transfer memo
  // (a memo is shorter than 2,048 bytes) and the custom_json text (with its 8 bytes of
  // framing under 8,192); a vote has none.
  static constexpr std::array<std::uint32_t, op_kind_count> hard_max = {60000, 20000, 0, 2047, 8183};

  // Hive's defaults; indexed by op_kind.
  std::array<op_kind_params, op_kind_count> kinds = {{
      {100, 5000, 16, 4.0},  // article
      {30, 1000, 110, 5.0},  // reply
      {0, 0, 2070, 1.0},     // vote
      {0, 350, 87, 4.0},     // transfer
      {20, 400, 6006, 1.0},  // custom_json
  }};

  const op_kind_params& operator[](op_kind k) const { return kinds[index_of(k)]; }
  op_kind_params& operator[](op_kind k) { return kinds[index_of(k)]; }

  std::uint64_t total_weight() const;
  // The share of a kind in the mix, in [0, 1].
  double share(op_kind k) const;
  // The extra size of kind k for a uniform draw u in [0, 1).
  std::uint32_t extra_size(op_kind k, double u) const {
    return colony::extra_size((*this)[k], hard_max[index_of(k)], u);
  }
  // The kind whose weight range holds roll, for roll in [0, total_weight()): kinds take
  // consecutive ranges in enum order, as in Hive.
  op_kind pick(std::uint64_t roll) const;

  // A message naming the first problem (min above max, a negative or NaN exponent, no
  // weight at all), or nullopt when the mix is usable. A max above the hard maximum is not
  // an error: sizes are clamped.
  std::optional<std::string> validate() const;

  bool operator==(const mix_config&) const = default;
};

// The text form of the --mix option: "kind=weight:min-max^exponent,..." for every kind in
// enum order, the exponent in the shortest form that reads back as the same double, so
// parse_mix(to_string(m)) gives m exactly, e.g.
// "article=16:100-5000^4,reply=110:30-1000^5,...,custom_json=6006:20-400^1".
std::string to_string(const mix_config& m);
// Changes the kinds it names, each "kind=weight", "kind=weight:min-max" (the extra payload
// range) or "kind=weight:min-max^exponent" (and the size distribution's exponent, a decimal
// >= 0); what an item leaves out, and the kinds it does not name, keep their values from
// `out`. A kind named twice is an error, not the last one winning. Then checks the result
// (validate()). The error names the bad part and what is allowed; `out` is left alone on
// error.
std::optional<std::string> parse_mix(std::string_view text, mix_config& out);

}  // namespace apiary::colony
