#include <spdlog/fmt/fmt.h>

#include <array>
#include <string_view>

#include "apiary/harness/config/options.hpp"
#include "apiary/harness/io/text_format.hpp"
#include "apiary/harness/replay/replay.hpp"
#include "cycle/rc_stats_json.hpp"
#include "report/report_json.hpp"

namespace apiary::harness {

namespace {

double per_tx_us(const replay_result& r) {
  return r.transactions == 0 ? 0.0 : static_cast<double>(r.replay_ns) / 1e3 / static_cast<double>(r.transactions);
}

std::uint64_t in_blocks(const replay_result& r) {
  std::uint64_t n = 0;
  for (const queen::block_record& b : r.blocks) n += b.transactions;
  return n;
}

}  // namespace

namespace {

void write_workload(json_out& j, const workload_meta& w, const std::string& workload_source, const replay_result& r) {
  j.key("workload");
  j.begin_object();
  j.field("source", workload_source);
  j.field("seed", w.seed);
  j.field("streams", w.streams);
  j.field("accounts", w.accounts);
  j.field("sign", w.sign);
  j.field("transactions", r.transactions);
  j.field("chain_id", core::to_hex(w.chain));
  j.key("faults");
  j.begin_object();
  for (std::size_t i = 0; i < colony::fault_kind_count; ++i)
    j.field(colony::fault_kind_name(static_cast<colony::fault_kind>(i)), w.faults[i]);
  j.end_object();
  j.end_object();
}

void write_result(json_out& j, const replay_result& r) {
  j.key("result");
  j.begin_object();
  j.field("transactions", r.transactions);
  j.field("accepted", r.accepted);
  j.field("rejected", r.rejections.rejected());
  j.key("rejections");
  j.begin_object();
  for (std::size_t i = 1; i < core::reject_count; ++i)
    if (core::is_rejection(static_cast<core::reject>(i)))
      j.field(core::reject_name(static_cast<core::reject>(i)), r.rejections.by_reason[i]);
  j.end_object();
  j.field("blocks", static_cast<std::uint64_t>(r.blocks.size()));
  j.field("transactions_in_blocks", in_blocks(r));
  j.field("pending_at_end", r.pending_at_end);
  j.field("head_block_num", r.head_block_num);
  j.field("head_block_id", r.head_block_id);
  j.field("state_digest", r.state_digest);
  j.field("genesis_ms", ms(r.genesis_ns), 3);
  j.field("genesis_keys", r.genesis_keys);
  j.key("state_at_start");
  j.begin_object();
  write_indexes(j, r.state_at_start);
  j.end_object();
  j.key("state_at_end");
  j.begin_object();
  write_indexes(j, r.state_at_end);
  j.end_object();
  j.field("replay_ms", ms(r.replay_ns), 3);
  j.field("us_per_tx", per_tx_us(r), 4);
  j.key("writer");
  j.begin_object();
  j.field("transactions_ms", ms(r.breakdown.tx_ns), 3);
  j.field("blocks_ms", ms(r.breakdown.block_ns), 3);
  j.field("queue_ms", ms(r.breakdown.wait_work_ns + r.breakdown.wait_lock_ns), 3);
  j.field("unknown_ms", ms(r.breakdown.unknown_ns()), 3);
  j.end_object();
  j.end_object();
}

// A replay has no warm-up: rc.stats sums every archive.
void write_replay_rc(json_out& j, const run_config& c, const replay_result& r) {
  j.key("rc");
  j.begin_object();
  write_rc_params(j, c);
  write_rc_statistics(j, c.chain.rc_stats_blocks, r.rc_archives, 0);
  j.end_object();
}

void write_replay_blocks(json_out& j, const replay_result& r) {
  j.key("blocks");
  j.begin_array();
  for (const queen::block_record& b : r.blocks) {
    j.begin_object();
    j.field("num", b.num);
    j.field("transactions", b.transactions);
    j.field("size_bytes", b.size_bytes);
    j.field("pending_after", b.pending_after);
    j.field("produced_us", us(b.produced_ns), 3);
    j.field("applied_us", us(b.applied_ns), 3);
    j.end_object();
  }
  j.end_array();
}

}  // namespace

void write_replay_report(core::out_buffer& out, const run_config& c, const run_context& ctx, const workload_meta& w,
                         const std::string& workload_source, const replay_result& r, const real_traffic* real) {
  out.reserve(out.size() + 4096 + r.blocks.size() * 160);
  json_out j(out);
  j.begin_object();
  j.field("schema_version", 1);
  j.field("kind", "replay");
  j.field("failed", !r.error.empty());
  j.key("error");
  j.text_or_null(r.error);
  j.key("context");
  j.begin_object();
  write_context_fields(j, ctx);
  j.end_object();
  write_workload(j, w, workload_source, r);
  j.key("config");
  j.begin_object();
  // The options that shape the chain and its blocks (those of the workload are above).
  for (const config_entry& e : describe(c, scope_replay))
    if ((e.scope & scope_workload) == 0) write_option(j, e);
  j.end_object();
  write_result(j, r);
  if (real != nullptr) write_real_traffic(j, *real, c.colony.mix);
  write_replay_rc(j, c, r);
  write_replay_blocks(j, r);
  j.end_object();
  out.put('\n');
}

std::string format_replay_summary(const run_context& ctx, const workload_meta& w, const replay_result& r,
                                  const run_config& c, const real_traffic* real) {
  std::string s =
      real != nullptr
          ? fmt::format("apiary replay: {} transactions of real blocks (unsigned, the authority check off)\n",
                        grouped(r.transactions))
          : fmt::format("apiary replay: {} transactions (seed {}, {} streams, {} accounts, {})\n",
                        grouped(r.transactions), w.seed, w.streams, grouped(w.accounts),
                        w.sign ? "signed" : "unsigned");
  s += fmt::format("  {} build, commit {}\n", ctx.build_type, ctx.commit);
  s += fmt::format("Genesis in {:.3f} s: {}\n", ms(r.genesis_ns) / 1e3, r.genesis_keys);
  s += fmt::format(
      "Replayed in {:.1f} ms on one thread: {:.3f} us per transaction (pushes {:.1f} ms, blocks {:.1f} ms)\n",
      ms(r.replay_ns), per_tx_us(r), ms(r.breakdown.tx_ns), ms(r.breakdown.block_ns));
  s += fmt::format("Accepted {}, rejected {}; {} blocks hold {}, {} pending at the end\n", grouped(r.accepted),
                   grouped(r.rejections.rejected()), r.blocks.size(), grouped(in_blocks(r)), grouped(r.pending_at_end));
  if (!ctx.state.path.empty())
    s += fmt::format("Started from state {} (head block {}), loaded in {:.1f} ms\n", ctx.state.path,
                     ctx.state.head_block_num, ms(ctx.state.load_ns));
  if (real != nullptr) s += format_real_traffic(*real, c.colony.mix);
  s += fmt::format("Head block {}, state digest {}\n", r.head_block_num, r.state_digest);
  if (!r.error.empty()) s += "Failed: " + r.error + "\n";
  return s;
}

}  // namespace apiary::harness
