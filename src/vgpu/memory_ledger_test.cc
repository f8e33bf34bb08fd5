#include "vgpu/memory_ledger.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace tessera::vgpu {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class MemoryLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("ledger-" + std::to_string(getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(path_);
    std::string error;
    ledger_ = MemoryLedger::Open(path_, 10 * kGiB, &error);
    ASSERT_TRUE(ledger_) << error;
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::filesystem::path path_;
  std::unique_ptr<MemoryLedger> ledger_;
  const int me_ = getpid();
  const int parent_ = getppid();  // a second live process
};

TEST_F(MemoryLedgerTest, ATaskGetsItsCapAndNoMore) {
  const TaskTerms a{"a", 4 * kGiB, 0};
  EXPECT_EQ(ledger_->Reserve(a, me_, 3 * kGiB, 1), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve(a, me_, kGiB, 2), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve(a, me_, 1, 3), Grant::kRefused);
  ledger_->Release("a", me_, kGiB);
  EXPECT_EQ(ledger_->TaskUsed("a"), 3 * kGiB);
  EXPECT_EQ(ledger_->Reserve(a, me_, kGiB, 4), Grant::kGranted);
}

TEST_F(MemoryLedgerTest, AllProcessesOfATaskShareOneCap) {
  const TaskTerms a{"a", 4 * kGiB, 0};
  EXPECT_EQ(ledger_->Reserve(a, me_, 3 * kGiB, 1), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve(a, parent_, 2 * kGiB, 2), Grant::kRefused);
  EXPECT_EQ(ledger_->Reserve(a, parent_, kGiB, 3), Grant::kGranted);
  const LedgerSnapshot s = ledger_->Read();
  ASSERT_EQ(s.tasks.size(), 1U);
  EXPECT_EQ(s.tasks[0].used, 4 * kGiB);
  EXPECT_EQ(s.tasks[0].pids.size(), 2U);
}

TEST_F(MemoryLedgerTest, ABurstBorrowsFreeMemoryUpToItsAllowance) {
  const TaskTerms a{"a", 4 * kGiB, 3 * kGiB};
  EXPECT_EQ(ledger_->Reserve(a, me_, 4 * kGiB, 10), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve(a, me_, 2 * kGiB, 20), Grant::kBurst);
  EXPECT_EQ(ledger_->Reserve(a, me_, kGiB, 30), Grant::kBurst);
  EXPECT_EQ(ledger_->Reserve(a, me_, 1, 40), Grant::kRefused) << "past cap + burst";
  LedgerSnapshot s = ledger_->Read();
  EXPECT_TRUE(s.tasks[0].bursting());
  EXPECT_EQ(s.tasks[0].burst_since_ns, 20) << "timed from the first byte past the cap";
  ledger_->Release("a", me_, 3 * kGiB);
  s = ledger_->Read();
  EXPECT_FALSE(s.tasks[0].bursting());
  EXPECT_EQ(s.tasks[0].burst_since_ns, 0);
}

TEST_F(MemoryLedgerTest, ABurstNeedsMemoryNobodyHolds) {
  EXPECT_EQ(ledger_->Reserve({"b", 6 * kGiB, 0}, parent_, 6 * kGiB, 1), Grant::kGranted);
  const TaskTerms a{"a", 3 * kGiB, 5 * kGiB};
  EXPECT_EQ(ledger_->Reserve(a, me_, 3 * kGiB, 2), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve(a, me_, 2 * kGiB, 3), Grant::kRefused) << "only 1 GiB of the GPU is free";
  EXPECT_EQ(ledger_->Reserve(a, me_, kGiB, 4), Grant::kBurst);
}

TEST_F(MemoryLedgerTest, AGuaranteedTaskGetsItsMemoryBackFromABurst) {
  const TaskTerms burster{"burster", 4 * kGiB, 6 * kGiB};
  const TaskTerms owner{"owner", 6 * kGiB, 0};
  ASSERT_EQ(ledger_->Reserve(burster, parent_, 10 * kGiB, 1), Grant::kBurst);
  EXPECT_EQ(ledger_->Reserve(owner, me_, 2 * kGiB, 2), Grant::kReclaim);
  LedgerSnapshot s = ledger_->Read();
  EXPECT_EQ(s.reclaim_wanted, 2 * kGiB);
  EXPECT_EQ(s.reclaim_since_ns, 2);
  EXPECT_EQ(ledger_->Reserve(burster, parent_, 1, 3), Grant::kRefused) << "no new burst while memory is reclaimed";
  ledger_->Release("burster", parent_, 3 * kGiB);
  EXPECT_EQ(ledger_->Reserve(owner, me_, 2 * kGiB, 4), Grant::kGranted);
  EXPECT_EQ(ledger_->Read().reclaim_wanted, 0) << "the waiter's grant ends the reclaim";
}

TEST_F(MemoryLedgerTest, TheMemoryOfAProcessThatDiedIsGivenBack) {
  const TaskTerms a{"a", 4 * kGiB, 0};
  const pid_t child = fork();
  if (child == 0) {
    std::string error;
    auto own = MemoryLedger::Open(path_, 0, &error);  // a second mapping of the same file
    _exit(own && own->Reserve(a, getpid(), 4 * kGiB, 1) == Grant::kGranted ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ledger_->TaskUsed("a"), 4 * kGiB) << "the child's reservation is in the shared file";
  EXPECT_EQ(ledger_->Reserve(a, me_, kGiB, 2), Grant::kGranted) << "the dead child's 4 GiB were collected";
  EXPECT_EQ(ledger_->TaskUsed("a"), kGiB);
}

TEST_F(MemoryLedgerTest, WithoutBurstsAFullGpuRefusesAtOnce) {
  // Guaranteed tasks that overcommit the GPU (not what the scheduler does, but
  // a GPU smaller than promised): waiting for a reclaim would not help.
  EXPECT_EQ(ledger_->Reserve({"a", 8 * kGiB, 0}, me_, 8 * kGiB, 1), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve({"b", 8 * kGiB, 0}, parent_, 4 * kGiB, 2), Grant::kRefused);
  EXPECT_EQ(ledger_->Read().reclaim_wanted, 0);
}

TEST_F(MemoryLedgerTest, AGpuOfUnknownSizeChecksOnlyCaps) {
  std::string error;
  const auto path = path_.string() + ".unknown";
  auto unknown = MemoryLedger::Open(path, 0, &error);
  ASSERT_TRUE(unknown) << error;
  EXPECT_EQ(unknown->Reserve({"a", 4 * kGiB, 0}, me_, 4 * kGiB, 1), Grant::kGranted);
  EXPECT_EQ(unknown->Reserve({"a", 4 * kGiB, 0}, me_, 1, 2), Grant::kRefused);
  std::filesystem::remove(path);
}

TEST_F(MemoryLedgerTest, TheSlotsOfTasksWhoseProcessesAreGoneAreReused) {
  const pid_t child = fork();
  if (child == 0) {
    std::string error;
    auto own = MemoryLedger::Open(path_, 0, &error);
    for (int i = 0; i < kMaxTasks; ++i) own->Reserve({"t" + std::to_string(i), kGiB / 64, 0}, getpid(), 1, 1);
    _exit(0);
  }
  waitpid(child, nullptr, 0);
  EXPECT_EQ(ledger_->Read().tasks.size(), static_cast<std::size_t>(kMaxTasks)) << "the table is full";
  EXPECT_EQ(ledger_->Reserve({"late", kGiB, 0}, me_, kGiB, 2), Grant::kGranted);
}

TEST_F(MemoryLedgerTest, ALongTaskNameIsOneTask) {
  const std::string name(100, 'x');
  EXPECT_EQ(ledger_->Reserve({name, 2 * kGiB, 0}, me_, kGiB, 1), Grant::kGranted);
  EXPECT_EQ(ledger_->Reserve({name, 2 * kGiB, 0}, me_, kGiB, 2), Grant::kGranted);
  EXPECT_EQ(ledger_->Read().tasks.size(), 1U);
  EXPECT_EQ(ledger_->TaskUsed(name), 2 * kGiB);
}

TEST_F(MemoryLedgerTest, ForgettingATaskFreesItsSlotAndMemory) {
  EXPECT_EQ(ledger_->Reserve({"a", 10 * kGiB, 0}, me_, 10 * kGiB, 1), Grant::kGranted);
  ledger_->Forget("a");
  EXPECT_TRUE(ledger_->Read().tasks.empty());
  EXPECT_EQ(ledger_->Reserve({"b", 10 * kGiB, 0}, parent_, 10 * kGiB, 2), Grant::kGranted);
}

TEST_F(MemoryLedgerTest, AnExistingLedgerKeepsItsSize) {
  std::string error;
  auto again = MemoryLedger::Open(path_, 99 * kGiB, &error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->Read().physical, 10 * kGiB);
}

TEST_F(MemoryLedgerTest, AnUnwritableLedgerSaysWhere) {
  std::string error;
  EXPECT_FALSE(MemoryLedger::Open("/nonexistent-dir/gpu-0.ledger", kGiB, &error));
  EXPECT_NE(error.find("/nonexistent-dir/gpu-0.ledger"), std::string::npos) << error;
}

}  // namespace
}  // namespace tessera::vgpu
