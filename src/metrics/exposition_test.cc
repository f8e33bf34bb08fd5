#include "metrics/exposition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/counter.h>

namespace tessera::metrics {
namespace {

using ::testing::HasSubstr;

TEST(SnapshotTest, RendersRegistryAndSnapshotFamiliesInTextFormat) {
  prometheus::Registry registry;
  prometheus::BuildCounter().Name("tessera_things_total").Help("Things.").Register(registry).Add({}).Increment(3);
  Snapshot s;
  s.Gauge("tessera_queue_pending_jobs", "Jobs waiting.").Add({{"queue", "research/nlp"}}, 4);
  s.Gauge("tessera_queue_pending_jobs", "Jobs waiting.").Add({{"queue", "default"}}, 1);
  s.Counter("tessera_done_total", "Done.").Add({}, 7);
  const std::string text = s.Render(&registry);
  EXPECT_THAT(text, HasSubstr("# TYPE tessera_things_total counter\ntessera_things_total 3"));
  EXPECT_THAT(text, HasSubstr("# HELP tessera_queue_pending_jobs Jobs waiting.\n# TYPE tessera_queue_pending_jobs gauge\n"
                              "tessera_queue_pending_jobs{queue=\"research/nlp\"} 4\n"
                              "tessera_queue_pending_jobs{queue=\"default\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE tessera_done_total counter\ntessera_done_total 7"));
}

TEST(SnapshotTest, EscapesLabelValues) {
  Snapshot s;
  s.Gauge("tessera_x", "X.").Add({{"job", "a\"b\\c\nd"}}, 1);
  EXPECT_THAT(s.Render(), HasSubstr(R"(tessera_x{job="a\"b\\c\nd"} 1)"));
}

}  // namespace
}  // namespace tessera::metrics
