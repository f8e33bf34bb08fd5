// Golden results of small simulations (worked out by hand), determinism, and
// the accounting of preempted work.
#include "simkit/simulator.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simkit/report.h"
#include "simkit/sources.h"
#include "simkit/summary.h"
#include "spec/cluster_yaml.h"

namespace tessera::simkit {
namespace {

WorkloadJob Job(std::string name, Time submit, Seconds duration, std::int64_t gpus, std::int32_t priority = 0) {
  WorkloadJob w;
  w.job.name = std::move(name);
  model::TaskGroup group;
  group.name = "main";
  group.request.gpu_milli = gpus * 1000;
  w.job.groups.push_back(group);
  w.job.priority = priority;
  w.submit = submit;
  w.duration = duration;
  return w;
}

sched::SchedulerState State(const std::string& shape) {
  model::Cluster cluster = std::move(spec::LoadCluster(shape)).value();
  const std::int64_t capacity = cluster.capacity().gpu_milli;
  return sched::SchedulerState(std::move(cluster), model::QueueTree::Default(capacity));
}

SimOptions Policy(const std::string& job_order) {
  SimOptions options;
  options.scheduler.job_order = job_order;
  options.scheduler.reservation = "none";
  options.scheduler.actions = {"allocate"};
  return options;
}

const JobRecord& Record(const SimResult& r, const std::string& name) {
  for (const JobRecord& j : r.jobs) {
    if (j.name == name) return j;
  }
  throw std::runtime_error("no job " + name);
}

// One 8-GPU node. a (8 GPUs, 100 s) runs first; b (8 GPUs, 50 s) and c
// (8 GPUs, 10 s) wait. FIFO runs b then c; oracle SJF runs c then b.
Workload ThreeJobs() {
  return Workload{"test", {Job("a", 0, 100, 8), Job("b", 1, 50, 8), Job("c", 2, 10, 8)}, {}};
}

// A vGPU half of a GPU that bursts: 30 GiB guaranteed, up to 40 GiB more.
WorkloadJob Burster(std::string name, Time submit, Seconds duration) {
  WorkloadJob w = Job(std::move(name), submit, duration, 0);
  model::TaskRequest& r = w.job.groups[0].request;
  r.gpu_milli = 500;
  r.gpu_memory = std::int64_t{30} << 30;
  r.gpu_memory_burst = std::int64_t{40} << 30;
  w.job.checkpoint_signal = SIGUSR1;
  return w;
}

WorkloadJob Half(std::string name, Time submit, Seconds duration) {
  WorkloadJob w = Job(std::move(name), submit, duration, 0);
  w.job.groups[0].request.gpu_milli = 500;
  w.job.groups[0].request.gpu_memory = std::int64_t{30} << 30;
  return w;
}

constexpr double kGiBSecond = 1.0 / 3600;  // one GiB held for a second, in GiB-hours

TEST(SimulatorTest, ABurstIsGivenBackWhenATenantNeedsTheMemory) {
  // One 80 GiB GPU: the burster borrows 40 GiB at 0; at 10 the owner's 30 GiB
  // no longer fit beside it, and the burster, asked with its checkpoint
  // signal, gives its burst back and runs on.
  const Workload w{"test", {Burster("burster", 0, 1000), Half("owner", 10, 100)}, {}};
  auto r = Simulate(State("1 nodes x 1 GPUs, 80Gi per GPU"), w, Policy("fifo"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->bursts.bursts, 1);
  EXPECT_EQ(r->bursts.given_back, 1);
  EXPECT_NEAR(r->bursts.byte_seconds / static_cast<double>(std::int64_t{1} << 30) / 3600, 40 * 10 * kGiBSecond, 1e-9);
  EXPECT_EQ(Record(*r, "burster").end, 1000) << "it was never stopped";
  EXPECT_EQ(Record(*r, "owner").first_start, 10);
}

TEST(SimulatorTest, ABurstEndsAtTheNodesLimit) {
  SimOptions options = Policy("fifo");
  options.max_burst = 100;
  const Workload w{"test", {Burster("burster", 0, 1000)}, {}};
  auto r = Simulate(State("1 nodes x 1 GPUs, 80Gi per GPU"), w, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->bursts.given_back, 1);
  EXPECT_NEAR(r->bursts.byte_seconds / static_cast<double>(std::int64_t{1} << 30) / 3600, 40 * 101 * kGiBSecond, 1e-9);
}

TEST(SimulatorTest, FifoGolden) {
  auto r = Simulate(State("1 nodes x 8 GPUs"), ThreeJobs(), Policy("fifo"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Record(*r, "a").end, 100);
  EXPECT_EQ(Record(*r, "b").end, 150);
  EXPECT_EQ(Record(*r, "c").end, 160);
  const nlohmann::json s = Summarize(*r, 1.0);
  EXPECT_DOUBLE_EQ(s["avg_jct_s"].get<double>(), (100.0 + 149.0 + 158.0) / 3);
  EXPECT_DOUBLE_EQ(s["avg_queue_delay_s"].get<double>(), (0.0 + 99.0 + 148.0) / 3);
  EXPECT_EQ(s["makespan_s"].get<std::int64_t>(), 160);
  EXPECT_DOUBLE_EQ(s["gpu_alloc_ratio"].get<double>(), 1.0);  // always full while b or c waited
}

TEST(SimulatorTest, OracleSjfGolden) {
  auto r = Simulate(State("1 nodes x 8 GPUs"), ThreeJobs(), Policy("oracle-shortest-first"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Record(*r, "c").end, 110);
  EXPECT_EQ(Record(*r, "b").end, 160);
}

// The learned order reads the workload's past, never a true duration: with
// a history in which 4-GPU jobs ran 10 s and 8-GPU jobs 1,000 s, c (4 GPUs)
// goes before b (8 GPUs), which came first; without one the order is FIFO.
TEST(SimulatorTest, TheLearnedOrderStartsFromTheWorkloadsHistory) {
  Workload w{"test", {Job("a", 0, 100, 8), Job("b", 1, 50, 8), Job("c", 2, 10, 4)}, {}};
  auto fresh = Simulate(State("1 nodes x 8 GPUs"), w, Policy("gittins"));
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_EQ(Record(*fresh, "b").end, 150);
  for (int i = 0; i < 10; ++i) {
    w.history.push_back(Job("short-" + std::to_string(i), 0, 10, 4));
    w.history.push_back(Job("long-" + std::to_string(i), 0, 1000, 8));
  }
  auto learned = Simulate(State("1 nodes x 8 GPUs"), w, Policy("gittins"));
  ASSERT_TRUE(learned.ok()) << learned.status().message();
  EXPECT_EQ(Record(*learned, "c").end, 110);
  EXPECT_EQ(Record(*learned, "b").end, 160);
  EXPECT_EQ(learned->jobs.size(), 3u) << "history is not simulated";
}

TEST(SimulatorTest, PreemptedWorkResumesWithWhatIsLeft) {
  // low (4 GPUs, 100 s) starts at 0; high (4 GPUs, priority 10) arrives at 30
  // on the 4-GPU node: low is evicted, high runs 30..50, low resumes at 50 with
  // 70 s left and ends at 120.
  Workload w{"test", {Job("low", 0, 100, 4), Job("high", 30, 20, 4, 10)}, {}};
  SimOptions options;  // the default policy set preempts by priority
  auto r = Simulate(State("1 nodes x 4 GPUs"), w, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Record(*r, "high").end, 50);
  EXPECT_EQ(Record(*r, "low").end, 120);
  EXPECT_EQ(Record(*r, "low").preemptions, 1);
  EXPECT_EQ(r->preemptions, 1);
  EXPECT_DOUBLE_EQ(r->lost_gpu_seconds, 0.0);  // it checkpointed when asked to stop

  options.keep_progress_on_preempt = false;  // no checkpoint at all: the 30 s are lost
  auto lossy = Simulate(State("1 nodes x 4 GPUs"), w, options);
  ASSERT_TRUE(lossy.ok());
  EXPECT_EQ(Record(*lossy, "low").end, 150);
  EXPECT_DOUBLE_EQ(lossy->lost_gpu_seconds, 4 * 30.0);
}

// a (8 GPUs, 100 s) starts at 0; b (8 GPUs, 10 s) arrives at 20. SRTF: b has
// less left than a's 80 s, so a is preempted, b runs 20..30 and a resumes to
// end at 110. LAS with a threshold of 100 GPU-seconds: a has attained 160, b 0,
// so b goes first too. Plain FIFO lets b wait until 100.
TEST(SimulatorTest, PreemptiveOrdersGolden) {
  const Workload w{"test", {Job("a", 0, 100, 8), Job("b", 20, 10, 8)}, {}};
  for (const std::string order : {"oracle-srtf", "las"}) {
    SimOptions options;
    options.scheduler.job_order = order;
    options.scheduler.preempt_by_job_order = true;
    options.scheduler.reservation = "none";
    options.scheduler.actions = {"allocate", "preempt"};
    options.scheduler.plugin_args.las.thresholds = {100.0};
    auto r = Simulate(State("1 nodes x 8 GPUs"), w, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Record(*r, "b").end, 30) << order;
    EXPECT_EQ(Record(*r, "a").end, 110) << order;
    EXPECT_EQ(r->preemptions, 1) << order;
  }
  auto fifo = Simulate(State("1 nodes x 8 GPUs"), w, Policy("fifo"));
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(Record(*fifo, "b").end, 110);
}

TEST(SimulatorTest, DeterministicAndCycleInterval) {
  Workload w{"test", {}, {}};
  for (int i = 0; i < 200; ++i) w.jobs.push_back(Job("j" + std::to_string(i), i * 7, 50 + (i * 37) % 400, 1 + i % 4));
  const auto a = Simulate(State("2 nodes x 8 GPUs"), w, SimOptions{});
  const auto b = Simulate(State("2 nodes x 8 GPUs"), w, SimOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Summarize(*a, 0).dump(), Summarize(*b, 0).dump());
  SimOptions coarse;
  coarse.cycle_interval = 60;
  const auto c = Simulate(State("2 nodes x 8 GPUs"), w, coarse);
  ASSERT_TRUE(c.ok());
  EXPECT_LT(c->cycles, a->cycles);
  for (const JobRecord& j : c->jobs) EXPECT_EQ(j.first_start % 60, 0) << j.name;  // starts only on cycles
}

// One 8-GPU job of 10 hours on two nodes, with failures every ~30 minutes of
// the cluster. The same seed gives the same failures in every run, so runs
// differ only in what the job keeps: more frequent checkpoints lose less.
TEST(SimulatorTest, FailuresRestartFromTheLastCheckpoint) {
  const auto run = [](Seconds checkpoint_interval, Seconds restart_cost) {
    Workload w{"test", {Job("train", 0, 36000, 8)}, {}};
    w.jobs[0].job.checkpoint_interval = checkpoint_interval;
    SimOptions options;
    options.failures.per_gpu_hour = 2.0 / 16;  // two interruptions an hour on 16 GPUs
    options.failures.gpu_repair = 600;
    options.failures.node_repair = 1800;
    options.failures.restart_cost = restart_cost;
    options.failures.seed = 42;
    auto r = Simulate(State("2 nodes x 8 GPUs"), w, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  };
  const SimResult often = run(600, 0), rarely = run(3600, 0), never = run(0, 0), costly = run(600, 300);
  const JobRecord& job = Record(often, "train");
  ASSERT_GT(job.failures, 0);
  EXPECT_GT(often.failures, 0);
  EXPECT_GE(job.end - job.first_start, 36000);  // never faster than its work
  // Work lost is what ran past the last checkpoint, per interruption.
  EXPECT_GT(often.lost_gpu_seconds, 0);
  EXPECT_LT(often.lost_gpu_seconds, rarely.lost_gpu_seconds);
  EXPECT_LE(Record(often, "train").end, Record(rarely, "train").end);
  // A restart cost of 300 s is paid once per interruption, on 8 GPUs.
  EXPECT_DOUBLE_EQ(costly.lost_gpu_seconds - often.lost_gpu_seconds, 8.0 * 300 * Record(costly, "train").failures);
  // Without checkpoints, a 10-hour job meets an interruption of its node in
  // almost every run-through and may never finish; it never finishes early.
  if (Record(never, "train").end >= 0) {
    EXPECT_GE(Record(never, "train").end, Record(often, "train").end);
  }
  EXPECT_LT(Summarize(often, 0)["goodput_ratio"].get<double>(), 1.0);
  EXPECT_LE(Summarize(often, 0)["effective_time_ratio"].get<double>(), Summarize(often, 0)["goodput_ratio"].get<double>());
  EXPECT_EQ(Summarize(run(600, 0), 0).dump(), Summarize(often, 0).dump());  // deterministic
}

// The jobs' own failures: a run fails by its age, and no GPU goes out of
// service, so the job restarts at once. Under a falling hazard (shape 0.3)
// failures come early in runs: many more of them, each losing less.
TEST(SimulatorTest, JobFaultsRestartARunWithoutTakingAGpu) {
  const auto run = [](double shape, double scale) {
    Workload w{"test", {Job("train", 0, 36000, 8)}, {}};
    w.jobs[0].job.checkpoint_interval = 600;
    SimOptions options;
    options.failures.job_fault_shape = shape;
    options.failures.job_fault_scale = scale;
    options.failures.seed = 7;
    auto r = Simulate(State("1 nodes x 8 GPUs"), w, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  };
  const SimResult constant = run(1.0, 3600.0);  // one failure an hour
  const JobRecord& job = Record(constant, "train");
  ASSERT_GT(job.failures, 2);
  EXPECT_EQ(constant.failures, job.failures);
  EXPECT_GE(job.end, 36000);
  EXPECT_GT(constant.lost_gpu_seconds, 0);
  ASSERT_EQ(constant.restart_gaps.size(), static_cast<std::size_t>(job.failures));
  for (Seconds gap : constant.restart_gaps) EXPECT_EQ(gap, 0) << "nothing to repair: it restarts where it was";
  const SimResult early = run(0.3, 360.0);  // a run fails in its first 10 minutes 69% of the time
  EXPECT_GT(Record(early, "train").failures, job.failures);
  EXPECT_LT(early.lost_gpu_seconds / Record(early, "train").failures, constant.lost_gpu_seconds / job.failures);
  EXPECT_EQ(run(1.0, 0).failures, 0) << "scale 0: no job faults";
}

TEST(SimulatorTest, HtmlReportIsSelfContained) {
  auto r = Simulate(State("1 nodes x 8 GPUs"), ThreeJobs(), Policy("fifo"));
  ASSERT_TRUE(r.ok());
  const std::string path = (std::filesystem::temp_directory_path() / "tessera_report_test.html").string();
  ASSERT_TRUE(WriteHtmlReport(*r, Summarize(*r, 0), path).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::string html = text.str();
  for (const char* part : {"GPU allocation over time", "Job completion time, CDF", "Average queueing delay by job size",
                           "Share of GPU time by queue", "<polyline", "<rect", "135.667"}) {  // avg JCT (100+149+158)/3
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  for (const char* remote : {"http://", "https://", "<script"}) EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  std::filesystem::remove(path);
}

TEST(SimulatorTest, MergeSumsPartsAndTheirSeriesAsStepFunctions) {
  SimResult total, part;
  total.series = {{0, 1000, 1, 1}, {10, 3000, 0, 2}};
  part.series = {{5, 2000, 4, 1}, {10, 0, 0, 0}, {20, 1000, 0, 1}};
  total.jobs.resize(2);
  part.jobs.resize(3);
  part.preemptions = 4;
  Merge(total, part);
  EXPECT_EQ(total.jobs.size(), 5u);
  EXPECT_EQ(total.preemptions, 4);
  std::vector<std::pair<Time, std::int64_t>> allocated;
  for (const Sample& s : total.series) allocated.emplace_back(s.time, s.allocated_milli);
  EXPECT_EQ(allocated, (std::vector<std::pair<Time, std::int64_t>>{{0, 1000}, {5, 3000}, {10, 3000}, {20, 4000}}));
}

TEST(SimulatorTest, WorkloadSources) {
  auto gang = LoadWorkloadSource("gang:64:2h", {});
  ASSERT_TRUE(gang.ok()) << gang.status().message();
  EXPECT_EQ(gang->jobs[0].job.groups[0].replicas, 8);
  EXPECT_EQ(gang->jobs[0].duration, 7200);
  EXPECT_FALSE(LoadWorkloadSource("gang:60:2h", {}).ok());  // not a multiple of 8
  SourceOptions options;
  options.rate = 1;
  auto synthetic = LoadWorkloadSource("synthetic:50", options);
  ASSERT_TRUE(synthetic.ok());
  EXPECT_EQ(synthetic->jobs.size(), 50u);
  EXPECT_NE(LoadWorkloadSource("csv:x", {}).status().message().find("write philly:PATH"), std::string::npos);
  EXPECT_EQ(HeliosVcNodes().size(), 11u);
  std::int32_t nodes = 0;
  for (const auto& [vc, n] : HeliosVcNodes()) nodes += n;
  EXPECT_EQ(nodes * 8, 2816);  // the published 2,816 GPUs
  auto cluster = LoadClusterSource("4 nodes x 8 GPUs");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->capacity().gpu_milli, 32000);
}

TEST(SimulatorTest, AJobThatCouldNeverOutrunItsFailuresIsAnError) {
  Workload w{"wl.jsonl", {Job("long", 0, 100 * 3600, 8)}, {}};
  SimOptions options;
  options.failures.per_gpu_hour = 2.0 / 16;  // 100 expected in one 100-hour run on 8 GPUs
  const auto r = Simulate(State("2 nodes x 8 GPUs"), w, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wl.jsonl: job long expects 100 failures per run"), std::string::npos) << r.status().message();
  w.jobs[0].job.checkpoint_interval = 3600;
  EXPECT_TRUE(Simulate(State("2 nodes x 8 GPUs"), w, options).ok()) << "with checkpoints it finishes";
}

TEST(SimulatorTest, UnknownQueueIsAnError) {
  Workload w{"wl.jsonl", {Job("a", 0, 10, 1)}, {}};
  w.jobs[0].queue = "nope";
  const auto r = Simulate(State("1 nodes x 8 GPUs"), w, SimOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown queue 'nope'"), std::string::npos);
}

}  // namespace
}  // namespace tessera::simkit
