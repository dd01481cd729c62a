// block_figures: the figures taken of every block, each defined once here. The report
// summarizes each over the measured blocks (aggregates.<name>: count, min, avg, max, median,
// p90, p99, stddev, and the blocks of the extremes); the interval log gives each interval's
// mean and max (<name>: {mean, max}), and the Prometheus textfile the same
// (apiary_block_<name>{stat="mean|max"}).
//
// A new per-block figure is one more entry in the table below, from what the writer records
// of a block (queen::block_record); the report, the interval log, the textfile and the tools
// that read them by name pick it up.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "apiary/queen/block_stats.hpp"

namespace apiary::harness {

struct block_figure {
  std::string_view name;  // the key in the report's aggregates and in the interval log
  int decimals;           // in the JSON
  // The block's value, or none (the first block has no cycle: nothing came before it).
  std::optional<double> (*of)(const queen::block_record&);
};

namespace figure_of {
inline std::optional<double> us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }
}  // namespace figure_of

inline constexpr std::array block_figures{
    block_figure{
        "cycle_us", 3,
        [](const queen::block_record& b) { return b.cycle_ns < 0 ? std::nullopt : figure_of::us(b.cycle_ns); }},
    block_figure{"produced_us", 3, [](const queen::block_record& b) { return figure_of::us(b.produced_ns); }},
    block_figure{"applied_us", 3, [](const queen::block_record& b) { return figure_of::us(b.applied_ns); }},
    block_figure{"processing_us", 3, [](const queen::block_record& b) { return figure_of::us(b.processing_ns); }},
    block_figure{"transactions_per_block", 3,
                 [](const queen::block_record& b) -> std::optional<double> { return b.transactions; }},
    block_figure{"size_bytes", 3, [](const queen::block_record& b) -> std::optional<double> { return b.size_bytes; }},
    block_figure{"bytes_per_transaction", 3,
                 [](const queen::block_record& b) -> std::optional<double> {
                   if (b.transactions == 0) return std::nullopt;  // an empty block has no average
                   return static_cast<double>(b.size_bytes) / b.transactions;
                 }},
};
inline constexpr std::size_t block_figure_count = block_figures.size();

// The index of the figure with this name, checked when the program is compiled.
consteval std::size_t block_figure_index(std::string_view name) {
  for (std::size_t i = 0; i < block_figures.size(); ++i)
    if (block_figures[i].name == name) return i;
  throw "no block figure of that name";
}

// A figure's count, sum and maximum over some blocks (an interval's).
struct figure_sum {
  std::uint64_t count = 0;
  double sum = 0;
  double max = 0;
  void add(double v) {
    max = count == 0 ? v : (v > max ? v : max);
    ++count;
    sum += v;
  }
  double mean() const { return count == 0 ? 0.0 : sum / static_cast<double>(count); }
};

// Every figure's sums over the same blocks.
struct block_figure_sums {
  std::array<figure_sum, block_figure_count> figures{};
  void add(const queen::block_record& r) {
    for (std::size_t i = 0; i < block_figure_count; ++i)
      if (const std::optional<double> v = block_figures[i].of(r)) figures[i].add(*v);
  }
};

}  // namespace apiary::harness
