#include "model/mig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::model {
namespace {

using ::testing::HasSubstr;

TEST(MigProfileTest, ReadsTheNamesNvidiaGivesItsProfiles) {
  const Result<MigProfile> small = ParseMigProfile("1g.10gb");
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->compute_slices, 1);
  EXPECT_EQ(small->gpu_slices, 1);
  EXPECT_EQ(small->memory, std::int64_t{10} << 30);
  EXPECT_EQ(small->milli(), 142);

  const Result<MigProfile> compute = ParseMigProfile("1c.2g.20gb");
  ASSERT_TRUE(compute.ok()) << compute.status().message();
  EXPECT_EQ(compute->compute_slices, 1);
  EXPECT_EQ(compute->gpu_slices, 2);
  EXPECT_EQ(compute->memory, std::int64_t{20} << 30);

  const Result<MigProfile> media = ParseMigProfile("1g.18gb+me");
  ASSERT_TRUE(media.ok()) << media.status().message();
  EXPECT_EQ(media->name, "1g.18gb+me");
  EXPECT_EQ(media->memory, std::int64_t{18} << 30);
}

TEST(MigProfileTest, AWholeGpuInstanceStillCountsAsAFraction) {
  // 7g.141gb is all of an H200, but it is a MIG device, never a whole GPU.
  const Result<MigProfile> all = ParseMigProfile("7g.141gb");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->milli(), 999);
}

TEST(MigProfileTest, RefusesWhatIsNotAProfile) {
  for (const char* bad : {"", "1g", "1g.10", "g.10gb", "0g.10gb", "1g.0gb", "1g10gb", "1g.10gb+", "2c.1g.10gb", "9g.10gb",
                          "1g.10gbx", "-1g.10gb", "1G.10GB"}) {
    const Result<MigProfile> profile = ParseMigProfile(bad);
    ASSERT_FALSE(profile.ok()) << bad;
    EXPECT_THAT(profile.status().message(), HasSubstr("is not a MIG profile (like 1g.10gb")) << bad;
  }
}

}  // namespace
}  // namespace tessera::model
