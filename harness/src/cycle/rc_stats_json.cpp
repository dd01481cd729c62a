#include "cycle/rc_stats_json.hpp"

#include "apiary/core/protocol/buffer.hpp"

namespace apiary::harness {

namespace {

template <class Array>
void write_ints(json_out& j, std::string_view key, const Array& values) {
  j.key(key);
  j.begin_array();
  for (const auto v : values) j.value(v);
  j.end_array();
}

template <class Array>
void write_doubles(json_out& j, std::string_view key, const Array& values) {
  j.key(key);
  j.begin_array();
  for (const double v : values) j.exact(v);
  j.end_array();
}

}  // namespace

void write_rc_stats_fields(json_out& j, const core::rc_stats& s) {
  j.key("ops");
  j.begin_array();
  for (std::size_t k = 0; k < core::rc_op_kind_count; ++k) {
    const core::rc_op_stats& op = s.ops[k];
    j.begin_object();
    j.field("kind", core::rc_op_kind_name(static_cast<core::rc_op_kind>(k)));
    j.field("count", op.count);
    write_ints(j, "cost", op.cost);
    write_ints(j, "usage", op.usage);
    j.end_object();
  }
  j.end_array();
  j.key("payers");
  j.begin_array();
  for (std::size_t r = 0; r < core::rc_payer_rank_count; ++r) {
    const core::rc_payer_stats& p = s.payers[r];
    j.begin_object();
    j.field("rank", static_cast<std::uint64_t>(r));
    j.field("count", p.count);
    j.field("below_5", p.below_5);
    j.field("below_10", p.below_10);
    j.field("below_20", p.below_20);
    write_ints(j, "cant_afford", p.cant_afford);
    j.end_object();
  }
  j.end_array();
}

void write_rc_archive(json_out& j, const core::rc_archive& a) {
  j.begin_object();
  j.field("block", a.block);
  write_ints(j, "pools", a.pools);
  write_doubles(j, "levels", a.levels);
  write_doubles(j, "prices", a.prices);
  j.field("regen", a.regen);
  j.field("accepted", a.accepted);
  j.field("rejected_rc", a.rejected_rc);
  write_rc_stats_fields(j, a.stats);
  j.end_object();
}

std::string rc_archive_line(const core::rc_archive& a) {
  core::out_buffer buf(2048);
  json_out j(buf);
  j.begin_object();
  j.key("rc_archive");
  write_rc_archive(j, a);
  j.end_object();
  return std::string(buf.data(), buf.size()) + "\n";
}

core::rc_stats sum_rc_archives(std::span<const core::rc_archive> archives, std::uint32_t from) {
  core::rc_stats sum;
  for (const core::rc_archive& a : archives)
    if (a.first_block >= from) sum += a.stats;
  return sum;
}

void write_rc_statistics(json_out& j, std::uint32_t stats_blocks, std::span<const core::rc_archive> archives,
                         std::uint32_t from) {
  j.field("stats_blocks", stats_blocks);
  j.key("archives");
  j.begin_array();
  for (const core::rc_archive& a : archives) write_rc_archive(j, a);
  j.end_array();
  j.key("stats");
  j.begin_object();
  write_rc_stats_fields(j, sum_rc_archives(archives, from));
  j.end_object();
}

}  // namespace apiary::harness
