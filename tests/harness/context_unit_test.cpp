#include <gtest/gtest.h>

#include "apiary/harness/cycle/context.hpp"

namespace apiary::harness {
namespace {

run_context release_context() {
  run_context c;
  c.build_type = "Release";
  return c;
}

TEST(BuildContext, AReleaseBuildWithoutSanitizerOrPlantMeasures) { EXPECT_TRUE(measuring_build(release_context())); }

TEST(BuildContext, APlantedSlowdownIsNotAMeasuringBuildAndTheWarningSaysWhy) {
  run_context c = release_context();
  c.planted_push_rounds = 40;
  EXPECT_FALSE(measuring_build(c));
  EXPECT_EQ(build_caveat(c), "a Release build planting 40 rounds of work in every push (APIARY_PLANT_PUSH_ROUNDS)");
}

TEST(BuildContext, TheWarningNamesTheBuildTypeAndSanitizer) {
  run_context c = release_context();
  c.build_type = "RelWithDebInfo";
  c.sanitizer = "address";
  EXPECT_FALSE(measuring_build(c));
  EXPECT_EQ(build_caveat(c), "a RelWithDebInfo build with address");
}

}  // namespace
}  // namespace apiary::harness
