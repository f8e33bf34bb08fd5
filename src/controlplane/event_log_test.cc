#include "controlplane/event_log.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

std::vector<std::int64_t> Revisions(const std::vector<Event>& events) {
  std::vector<std::int64_t> out;
  for (const Event& e : events) out.push_back(e.revision);
  return out;
}

TEST(EventLogTest, AJobsEventsComeFromItsIndexAndLeaveWithTheWindow) {
  EventLog log(5);
  for (int i = 0; i < 8; ++i) log.Append({0, i, "JobSubmitted", i % 2, "", "e"});  // revisions 1..8, jobs 0,1,0,1,...
  EXPECT_EQ(log.first_revision(), 4);
  EventFilter job0;
  job0.job = 0;
  EXPECT_EQ(Revisions(log.Since(0, job0, 100)), (std::vector<std::int64_t>{5, 7})) << "1 and 3 left the window";
  EXPECT_EQ(Revisions(log.Since(5, job0, 100)), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(Revisions(log.Since(0, job0, 1)), (std::vector<std::int64_t>{5}));
  EventFilter job9;
  job9.job = 9;
  EXPECT_TRUE(log.Since(0, job9, 100).empty());
  EXPECT_EQ(Revisions(log.Since(6, EventFilter{}, 100)), (std::vector<std::int64_t>{7, 8}));
  EXPECT_TRUE(log.Since(std::numeric_limits<std::int64_t>::max(), EventFilter{}, 100).empty());
}

TEST(EventLogTest, RestoredEventsWithGapsAreFoundByRevision) {
  EventLog log(10);
  for (const std::int64_t r : {3, 4, 7, 9}) log.Restore({r, 0, "JobScheduled", r == 4 ? 2 : 1, "", ""});  // 5, 6 and 8 were set aside
  EventFilter job1;
  job1.job = 1;
  EXPECT_EQ(Revisions(log.Since(0, job1, 100)), (std::vector<std::int64_t>{3, 7, 9}));
  EXPECT_EQ(Revisions(log.Since(4, EventFilter{}, 100)), (std::vector<std::int64_t>{7, 9}));
  EXPECT_EQ(log.Append({0, 0, "JobRunning", 1, "", ""}).revision, 10);
  EXPECT_EQ(Revisions(log.Since(7, job1, 100)), (std::vector<std::int64_t>{9, 10}));
}

}  // namespace
}  // namespace tessera::controlplane
