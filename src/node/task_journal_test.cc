#include "node/task_journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tessera::node {
namespace {

TEST(TaskJournalTest, StartsSurviveReopenAndUnfinishedAreListed) {
  const auto path = std::filesystem::temp_directory_path() / ("tessera-journal-" + std::to_string(getpid())) / "journal";
  std::filesystem::remove_all(path.parent_path());
  {
    auto journal = TaskJournal::Open(path.string());
    ASSERT_TRUE(journal.ok()) << journal.status().message();
    journal->RecordStart({1, 1, 0});
    journal->RecordPid({1, 1, 0}, 4242);
    journal->RecordStart({1, 1, 1});
    journal->RecordPid({1, 1, 1}, 4243);
    journal->RecordEnd({1, 1, 1}, 0);
    journal->RecordStart({2, 3, 0});  // launch never happened (agent died in between)
  }
  // A torn last line, as after a crash mid-write.
  std::ofstream(path, std::ios::app) << "end 2 3";
  auto journal = TaskJournal::Open(path.string());
  ASSERT_TRUE(journal.ok());
  ASSERT_NE(journal->Find({1, 1, 0}), nullptr);
  EXPECT_EQ(journal->Find({1, 1, 0})->pid, 4242);
  EXPECT_TRUE(journal->Find({1, 1, 1})->ended);
  EXPECT_EQ(journal->Find({9, 9, 9}), nullptr);
  const auto unfinished = journal->Unfinished();
  ASSERT_EQ(unfinished.size(), 2u);
  EXPECT_EQ(unfinished[0].first, (api::TaskKey{1, 1, 0}));
  EXPECT_EQ(unfinished[1].first, (api::TaskKey{2, 3, 0}));
  EXPECT_EQ(unfinished[1].second.pid, 0);
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace tessera::node
