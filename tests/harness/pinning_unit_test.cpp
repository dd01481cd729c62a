// --pin's plan (cpu_pinning.hpp): which CPU the writer gets and where the other threads go, on
// machines of one, two and many CPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "apiary/harness/cycle/cpu_pinning.hpp"

namespace apiary::harness {
namespace {

TEST(CpuPinning, OneCpuPinsNothingAndSaysSo) {
  const std::vector<int> one{3};
  const cpu_pinning p = plan_pinning(one, 2);
  EXPECT_TRUE(p.requested);
  EXPECT_EQ(p.writer_cpu, -1);
  EXPECT_TRUE(p.others.empty());
  EXPECT_EQ(p.note, "not pinned: this process may use one CPU (CPU 3)");
  EXPECT_EQ(plan_pinning(std::vector<int>{}, 2).note, "not pinned: the CPUs this process may use are unknown");
}

TEST(CpuPinning, TwoCpusPutTheWriterAloneOnOne) {
  const std::vector<int> two{0, 1};
  const cpu_pinning p = plan_pinning(two, 2);
  EXPECT_EQ(p.writer_cpu, 1);
  EXPECT_EQ(p.others, std::vector<int>{0});
  EXPECT_FALSE(p.producers_own);
  EXPECT_EQ(p.note, "the writer alone on CPU 1; the 2 producers and the other threads share CPU 0");
}

TEST(CpuPinning, EnoughCpusGiveEveryProducerItsOwn) {
  const std::vector<int> cpus{2, 4, 5, 7};
  const cpu_pinning p = plan_pinning(cpus, 3);
  EXPECT_EQ(p.writer_cpu, 7);
  EXPECT_EQ(p.others, (std::vector<int>{2, 4, 5}));
  EXPECT_TRUE(p.producers_own);
  EXPECT_FALSE(plan_pinning(cpus, 4).producers_own);
}

TEST(CpuPinning, TheProcessMayRunSomewhere) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
}

}  // namespace
}  // namespace apiary::harness
