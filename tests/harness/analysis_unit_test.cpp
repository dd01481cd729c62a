// The analysis of a run made by hand: the process-CPU bound, the split of the process's CPU
// into signing, core and harness, and which targets apply with what verdict.
#include "apiary/harness/report/analysis.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace apiary::harness {
namespace {

constexpr std::int64_t ms = 1'000'000;  // ns

// Two warm-up and four measured blocks of 7,300 transactions, one every 100 ms, on 2 cores.
// Over the measured window the process used 784 ms of CPU (196 ms a block), the colony
// 600 ms signing (150 ms a block), the writer 120 ms pushing and 32 ms on blocks (38 ms a
// block): 8 ms a block are left to the harness.
class Analysis : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.cores = 2;
    r_.warmup_blocks = 2;
    for (std::uint32_t num = 1; num <= 6; ++num) {
      queen::block_record b;
      b.num = num;
      b.transactions = 7300;
      b.size_bytes = 2'000'000;
      b.cycle_ns = num == 1 ? -1 : 100 * ms;
      b.completed_ns = num * 100 * ms;
      r_.blocks.push_back(b);
    }
    r_.measured_blocks = 4;
    r_.window_start.writer_ns = 200 * ms;
    r_.window_end.writer_ns = 600 * ms;
    r_.window_start.usage.user_ns = 1000 * ms;
    r_.window_end.usage.user_ns = 1700 * ms;
    r_.window_end.usage.system_ns = 84 * ms;
    r_.window_start.breakdown = {.total_ns = 200 * ms, .tx_ns = 5 * ms, .block_ns = 1 * ms};
    r_.window_end.breakdown = {.total_ns = 600 * ms, .tx_ns = 125 * ms, .block_ns = 33 * ms};
    r_.window_start.colony.signing_cpu_ns = 10 * ms;
    r_.window_end.colony.signing_cpu_ns = 610 * ms;
  }

  static const target_check* find(const analysis& a, std::string_view name) {
    for (const target_check& t : a.targets)
      if (t.name == name) return &t;
    return nullptr;
  }

  run_config c_;  // the defaults: full 2 MB blocks, signed, infinite, measure-cpu on
  run_context ctx_;
  run_result r_;
};

TEST_F(Analysis, CycleAgainstTheProcessCpuBound) {
  const analysis a = analyze(c_, ctx_, r_);
  ASSERT_EQ(a.measured_blocks, 4u);
  EXPECT_DOUBLE_EQ(a.cycle_us().stats.avg, 100'000);
  EXPECT_NEAR(a.cpu_ms_per_block, 196, 1e-9);
  EXPECT_NEAR(a.cpu_bound_us, 98'000, 1e-6);  // 196 ms over 2 cores
  EXPECT_NEAR(a.cycle_to_cpu_bound, 100.0 / 98.0, 1e-12);
  // The signing bound stays, as information: 150 ms over 2 cores.
  EXPECT_NEAR(a.signing_bound_us, 75'000, 1e-6);
  EXPECT_NEAR(a.cycle_to_signing_bound, 100.0 / 75.0, 1e-12);

  const target_check* t = find(a, "cycle_to_cpu_bound");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->target, 1.05);
  EXPECT_EQ(t->value, a.cycle_to_cpu_bound);
  EXPECT_TRUE(t->met);
  EXPECT_EQ(find(a, "cycle_to_signing_bound"), nullptr);

  // 180 ms of CPU a block: a bound of 90 ms, the cycle 1.11x that, not met.
  r_.window_end.usage.system_ns = (720 - 700) * ms;
  const analysis slow = analyze(c_, ctx_, r_);
  EXPECT_NEAR(slow.cycle_to_cpu_bound, 100.0 / 90.0, 1e-12);
  ASSERT_NE(find(slow, "cycle_to_cpu_bound"), nullptr);
  EXPECT_FALSE(find(slow, "cycle_to_cpu_bound")->met);
}

TEST_F(Analysis, SplitsTheProcessCpuIntoSigningCoreAndHarness) {
  const analysis a = analyze(c_, ctx_, r_);
  ASSERT_TRUE(a.split.known);
  EXPECT_NEAR(a.split.process_ms, 196, 1e-9);
  EXPECT_NEAR(a.split.signing_ms, 150, 1e-9);
  EXPECT_NEAR(a.split.core_ms, 38, 1e-9);
  EXPECT_NEAR(a.split.harness_ms, 8, 1e-9);
  EXPECT_NEAR(a.split.harness_share, 8.0 / 196.0, 1e-12);
  const target_check* t = find(a, "harness_cpu_share");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->target, 0.05);
  EXPECT_TRUE(t->met);

  // 12 ms a block more of harness: 20 of 208 ms, 9.6%, not met.
  r_.window_end.usage.system_ns += 48 * ms;
  const analysis more = analyze(c_, ctx_, r_);
  EXPECT_NEAR(more.split.harness_share, 20.0 / 208.0, 1e-12);
  ASSERT_NE(find(more, "harness_cpu_share"), nullptr);
  EXPECT_FALSE(find(more, "harness_cpu_share")->met);
}

TEST_F(Analysis, WithoutMeasuredSigningCpuTheSplitIsUnknown) {
  c_.colony.measure_cpu = false;
  r_.window_end.colony.signing_cpu_ns = r_.window_start.colony.signing_cpu_ns;
  const analysis a = analyze(c_, ctx_, r_);
  EXPECT_FALSE(a.split.known);
  EXPECT_EQ(find(a, "harness_cpu_share"), nullptr);
  EXPECT_NE(find(a, "cycle_to_cpu_bound"), nullptr);  // it needs no split
}

TEST_F(Analysis, WithSigningOffTheColonyIsHarness) {
  // Core only: what the colony counts as signing CPU is then packing and hashing, which is
  // the harness's; the cycle is checked against 40 ms, not against a CPU bound.
  c_.colony.sign = false;
  c_.colony.measure_cpu = true;
  const analysis a = analyze(c_, ctx_, r_);
  ASSERT_TRUE(a.split.known);
  EXPECT_EQ(a.split.signing_ms, 0);
  EXPECT_NEAR(a.split.core_ms, 38, 1e-9);
  EXPECT_NEAR(a.split.harness_ms, 158, 1e-9);
  const target_check* t = find(a, "harness_cpu_share");
  ASSERT_NE(t, nullptr);
  EXPECT_NEAR(t->value, 158.0 / 196.0, 1e-12);
  EXPECT_FALSE(t->met);
  EXPECT_EQ(find(a, "cycle_to_cpu_bound"), nullptr);
  EXPECT_NE(find(a, "core_only_cycle_ms"), nullptr);

  c_.colony.measure_cpu = false;  // nothing to subtract for signing: still known
  EXPECT_TRUE(analyze(c_, ctx_, r_).split.known);
}

TEST(CpuSplit, TheRestIsTheHarnessEvenBelowZero) {
  const cpu_split s = split_cpu(300 * ms, 200 * ms, 60 * ms, 3);
  ASSERT_TRUE(s.known);
  EXPECT_NEAR(s.process_ms, 100, 1e-9);
  EXPECT_NEAR(s.signing_ms, 200.0 / 3, 1e-9);
  EXPECT_NEAR(s.core_ms, 20, 1e-9);
  EXPECT_NEAR(s.harness_ms, 40.0 / 3, 1e-9);
  EXPECT_NEAR(s.harness_share, 40.0 / 300, 1e-12);
  // A writer descheduled inside the core's phases counts more than the CPU it used: the
  // harness's part is then what is left, below zero, not clamped.
  const cpu_split over = split_cpu(100 * ms, 60 * ms, 50 * ms, 1);
  EXPECT_NEAR(over.harness_ms, -10, 1e-9);
  EXPECT_NEAR(over.harness_share, -0.1, 1e-12);
  EXPECT_FALSE(split_cpu(100 * ms, 0, 0, 0).known);
  EXPECT_FALSE(split_cpu(0, 0, 0, 4).known);
}

}  // namespace
}  // namespace apiary::harness
