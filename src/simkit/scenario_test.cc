// Runs every scenario in tests/scenarios/ (one test case each) and checks that
// the runner itself rejects malformed scenarios.
#include "simkit/scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tessera::simkit {
namespace {

std::filesystem::path ScenarioDir() {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "tests" / "scenarios";
}

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioDir())) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, ExpectationsHold) {
  const auto report = RunScenarioFile(GetParam());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GT(report->checks, 0) << "a scenario without expectations proves nothing";
  std::string log;
  for (const std::string& line : report->log) log += "  " + line + "\n";
  for (const std::string& failure : report->failures) ADD_FAILURE() << report->name << ": " << failure;
  if (!report->failures.empty()) std::cerr << "what happened:\n" << log;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = std::filesystem::path(param.param).stem().string();
                           for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(ScenarioRunnerTest, FindsTheScenarios) { EXPECT_GE(ScenarioFiles().size(), 8u); }

TEST(ScenarioRunnerTest, RejectsMalformedScenarios) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "tessera_bad_scenario.yaml";
  std::ofstream(file) << "scenario: bad\ncluster: \"2 nodes x 8 GPUs\"\njobs: []\nexpect: [{at: 0, runing: []}]\n";
  const auto report = RunScenarioFile(file.string());
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("unknown field 'runing'"), std::string::npos) << report.status().message();
  std::filesystem::remove(file);
}

TEST(ScenarioRunnerTest, ReportsAFailedExpectation) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "tessera_wrong_scenario.yaml";
  std::ofstream(file) << "scenario: wrong on purpose\ncluster: \"1 nodes x 8 GPUs\"\n"
                         "jobs: [{name: a, spec: {tasks: [{name: w, resources: {gpus: 2}}]}}]\n"
                         "expect: [{at: 0, pending: [a]}]\n";
  const auto report = RunScenarioFile(file.string());
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->failures.size(), 1u);
  EXPECT_NE(report->failures[0].find("pending: expected [a], got []"), std::string::npos) << report->failures[0];
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tessera::simkit
