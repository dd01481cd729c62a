#include "cycle/progress.hpp"
#include "apiary/harness/io/text_format.hpp"

#include <algorithm>
#include <cstdio>

namespace apiary::harness {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<std::uint64_t>(std::max(0.0, seconds) + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  return buf;
}

}  // namespace

progress_line::progress_line(const run_config& c, bool enabled, bool in_place)
    : config_(c), enabled_(enabled), in_place_(in_place) {}

progress_line::~progress_line() { finish(); }

void progress_line::draw(const std::string& text) {
  if (in_place_)
    std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  else
    std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void progress_line::phase(const std::string& text) {
  if (enabled_) draw(text);
}

void progress_line::update(const progress_counters& p, std::int64_t now_ns) {
  if (!enabled_) return;
  const std::int64_t interval = in_place_ ? 250'000'000 : 5'000'000'000;
  if (drawn_ && now_ns - last_draw_ns_ < interval) return;
  last_draw_ns_ = now_ns;

  const std::uint32_t warm = p.warmup_blocks.load(std::memory_order_relaxed);
  const std::uint32_t blocks = p.measured_blocks.load(std::memory_order_relaxed);
  const std::uint64_t txs = p.measured_transactions.load(std::memory_order_relaxed);
  const std::int64_t start_ns = p.window_start_ns.load(std::memory_order_relaxed);
  const std::int64_t last_ns = p.last_block_ns.load(std::memory_order_relaxed);

  char buf[128];
  if (warm < config_.stop.warmup_blocks || start_ns < 0) {
    std::snprintf(buf, sizeof buf, "warm-up %u/%u blocks", warm, config_.stop.warmup_blocks);
    draw(buf);
    return;
  }
  if (config_.stop.blocks != 0)
    std::snprintf(buf, sizeof buf, "block %u/%u", blocks, config_.stop.blocks);
  else
    std::snprintf(buf, sizeof buf, "block %u", blocks);
  std::string line = buf;
  if (blocks != 0) {
    const double window_s = static_cast<double>(last_ns - start_ns) / 1e9;
    const double tx_per_s = window_s > 0 ? static_cast<double>(txs) / window_s : 0;
    // The window over its blocks: the mean cycle (with warm-up, exactly).
    const double avg_cycle_ms = window_s * 1e3 / blocks;
    line.append(" | ").append(grouped(txs / blocks)).append(" tx/block | ");
    line.append(grouped(static_cast<std::uint64_t>(tx_per_s))).append(" tx/s");
    std::snprintf(buf, sizeof buf, " | cycle avg %.1f ms", avg_cycle_ms);
    line += buf;
    // The nearest of the limits that are set.
    double eta = -1;
    const double elapsed_s = static_cast<double>(now_ns - start_ns) / 1e9;
    auto consider = [&eta](double s) { eta = eta < 0 ? s : std::min(eta, s); };
    if (config_.stop.blocks != 0)
      consider(static_cast<double>(config_.stop.blocks - std::min(config_.stop.blocks, blocks)) * avg_cycle_ms / 1e3);
    if (config_.stop.duration_s > 0) consider(config_.stop.duration_s - elapsed_s);
    if (config_.stop.transactions != 0 && tx_per_s > 0)
      consider(static_cast<double>(config_.stop.transactions - std::min(config_.stop.transactions, txs)) / tx_per_s);
    if (eta >= 0) line.append(" | ETA ").append(clock_text(eta));
  } else {
    line += " | measuring";
  }
  draw(line);
}

void progress_line::finish() {
  if (enabled_ && drawn_ && in_place_) {
    std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace apiary::harness
