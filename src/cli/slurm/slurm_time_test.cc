#include "cli/slurm/slurm_time.h"

#include <gtest/gtest.h>

namespace tessera::cli::slurm {
namespace {

TEST(SlurmTimeTest, EveryFormatSlurmAccepts) {
  EXPECT_EQ(*ParseSlurmTime("30"), 30 * 60);                 // MM
  EXPECT_EQ(*ParseSlurmTime("30:15"), 30 * 60 + 15);         // MM:SS
  EXPECT_EQ(*ParseSlurmTime("12:30:15"), 12 * 3600 + 30 * 60 + 15);  // HH:MM:SS
  EXPECT_EQ(*ParseSlurmTime("2-12"), 2 * 86400 + 12 * 3600);  // D-HH
  EXPECT_EQ(*ParseSlurmTime("1-02:30"), 86400 + 2 * 3600 + 30 * 60);  // D-HH:MM
  EXPECT_EQ(*ParseSlurmTime("1-02:30:05"), 86400 + 2 * 3600 + 30 * 60 + 5);  // D-HH:MM:SS
  EXPECT_EQ(*ParseSlurmTime("0-00:00:01"), 1);
  EXPECT_EQ(*ParseSlurmTime("120"), 7200);  // minutes past an hour are fine
  EXPECT_EQ(*ParseSlurmTime("UNLIMITED"), 0);
  EXPECT_EQ(*ParseSlurmTime("infinite"), 0);
}

TEST(SlurmTimeTest, MalformedTimesSayWhatIsAccepted) {
  for (const char* bad : {"", "1h", "1:2:3:4", "a-01", "1-", "-5", "1:", "1-2:3:4:5", "01:xx", "0", "0-0"}) {
    const Result<std::int64_t> r = ParseSlurmTime(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
  EXPECT_NE(ParseSlurmTime("1h").status().message().find("MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cli::slurm
