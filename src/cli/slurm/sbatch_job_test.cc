#include "cli/slurm/sbatch_job.h"

#include <gtest/gtest.h>

namespace tessera::cli::slurm {
namespace {

using nlohmann::json;

SubmitContext Context() {
  SubmitContext c;
  c.script = "#!/bin/bash\nhostname\n";
  c.script_name = "/home/alice/train.sh";
  c.submit_dir = "/home/alice";
  c.submit_host = "login1";
  c.user = "alice";
  c.tessera_binary = "/usr/bin/tessera";
  c.environment = {{"HOME", "/home/alice"}, {"WANDB_KEY", "k"}, {"TESSERA_TOKEN", "secret"}, {"SLURM_JOB_ID", "9"},
                   {"CUDA_VISIBLE_DEVICES", "0"}};
  c.job_exists = [](std::int64_t id) -> Status {
    if (id == 404) return NotFound("job 404 does not exist");
    return {};
  };
  c.node_gpus = 8;
  return c;
}

Result<json> Translate(const std::string& directives, SubmitContext c = Context()) {
  SbatchOptions o;
  Result<std::vector<Word>> words = ScanDirectives(directives, "train.sh");
  if (!words.ok()) return words.status();
  Result<Parsed> p = ApplyOptions(*words, false, false, &o);
  if (!p.ok()) return p.status();
  return TranslateToJob(o, c);
}

std::string ErrorOf(const std::string& directives, SubmitContext c = Context()) {
  const Result<json> r = Translate(directives, std::move(c));
  return r.ok() ? "(accepted)" : r.status().message();
}

TEST(SbatchJobTest, AnArrayBecomesSpecArray) {
  const Result<json> r = Translate("#SBATCH --array=0-99%10 --gres=gpu:1 -o out-%A_%a.txt\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["spec"]["array"], "0-99%10");
  EXPECT_FALSE(Translate("#SBATCH -N 1\n")->at("spec").contains("array"));
}

TEST(SbatchJobTest, MultiNodeGangOneTaskPerNode) {
  const Result<json> r = Translate(R"(#SBATCH -N 4 --ntasks-per-node=8 --gres=gpu:h100:8 -c 6 --mem=512G
#SBATCH -t 2-00:00:00 -p research/nlp -A nlp --qos=high -J llama --signal=B:USR1@120 --requeue
#SBATCH -d afterok:7,afternotok:8,afterany:9,singleton
)");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& job = *r;
  EXPECT_EQ(job["metadata"]["name"], "llama");
  EXPECT_EQ(job["metadata"]["queue"], "research/nlp");
  const json& spec = job["spec"];
  EXPECT_EQ(spec["walltime"], "172800s");
  EXPECT_EQ(spec["priority"], 100);
  EXPECT_EQ(spec["restart"]["maxRestarts"], 3);
  EXPECT_EQ(spec["checkpoint"], (json{{"signal", "SIGUSR1"}, {"gracePeriod", "120s"}}));
  EXPECT_EQ(spec["dependsOn"], (json::array({{{"jobId", 7}, {"when", "succeeded"}},
                                             {{"jobId", 8}, {"when", "failed"}},
                                             {{"jobId", 9}, {"when", "ended"}}})));
  EXPECT_TRUE(spec["singleton"].get<bool>());
  const json& task = spec["tasks"][0];
  EXPECT_EQ(task["replicas"], 4);
  EXPECT_TRUE(task["onePerNode"].get<bool>());
  EXPECT_EQ(task["command"], (json::array({"/usr/bin/tessera", "slurm-step"})));
  EXPECT_EQ(task["resources"], (json{{"gpus", 8}, {"gpuModel", "H100"}, {"cpus", 48}, {"memory", std::to_string(std::int64_t{512} << 30)}}));
  EXPECT_EQ(task["workingDir"], "/home/alice");
  const json& env = task["env"];
  EXPECT_EQ(env["SLURM_JOB_NAME"], "llama");
  EXPECT_EQ(env["SLURM_NNODES"], "4");
  EXPECT_EQ(env["SLURM_NTASKS"], "32");
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "8");
  EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "6");
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "8");
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "524288");
  EXPECT_EQ(env["SLURM_JOB_PARTITION"], "research/nlp");
  EXPECT_EQ(env["SLURM_JOB_ACCOUNT"], "nlp");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/home/alice");
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "tessera");
  const json step = json::parse(env["TESSERA_SLURM_STEP"].get<std::string>());
  EXPECT_EQ(step["timeLimit"], 172800);
  EXPECT_EQ(step["signal"]["seconds"], 120);
  EXPECT_EQ(step["script"], "#!/bin/bash\nhostname\n");
}

TEST(SbatchJobTest, DefaultsAreOneNodeOneTaskNamedAfterTheScript) {
  const Result<json> r = Translate("");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& task = (*r)["spec"]["tasks"][0];
  EXPECT_EQ((*r)["metadata"]["name"], "train-sh");
  EXPECT_FALSE((*r)["metadata"].contains("queue"));
  EXPECT_EQ(task["replicas"], 1);
  EXPECT_FALSE(task.contains("onePerNode"));
  EXPECT_FALSE(task.contains("resources"));
  EXPECT_EQ(task["env"]["SLURM_JOB_NAME"], "train.sh");
  EXPECT_EQ(task["env"]["SLURM_JOB_PARTITION"], "default");
}

TEST(SbatchJobTest, GpuSpellingsAgree) {
  for (const char* d : {"#SBATCH -N 2 --gres=gpu:4", "#SBATCH -N 2 --gpus-per-node=4", "#SBATCH -N 2 --gpus=8",
                        "#SBATCH -N 2 --ntasks-per-node=4 --gpus-per-task=1", "#SBATCH -N 2 --exclusive --gpus=16"}) {
    const Result<json> r = Translate(d);
    ASSERT_TRUE(r.ok()) << d << ": " << r.status().message();
    const int expected = std::string(d).find("exclusive") != std::string::npos ? 8 : 4;
    EXPECT_EQ((*r)["spec"]["tasks"][0]["resources"]["gpus"], expected) << d;
  }
  // The task count follows from the tasks per node, the node count from the tasks.
  const Result<json> r = Translate("#SBATCH -n 16 --ntasks-per-node=8 --gpus-per-task=1 --mem-per-gpu=10G");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["spec"]["tasks"][0]["replicas"], 2);
  EXPECT_EQ((*r)["spec"]["tasks"][0]["resources"]["memory"], std::to_string(std::int64_t{80} << 30));
}

TEST(SbatchJobTest, ExportAllLeavesSecretsAndNodeVariablesBehind) {
  const json env = (*Translate("#SBATCH --export=ALL,EXTRA=1"))["spec"]["tasks"][0]["env"];
  EXPECT_EQ(env["HOME"], "/home/alice");
  EXPECT_EQ(env["EXTRA"], "1");
  EXPECT_FALSE(env.contains("TESSERA_TOKEN"));
  EXPECT_FALSE(env.contains("CUDA_VISIBLE_DEVICES"));
  EXPECT_FALSE(env.contains("SLURM_JOB_ID"));
  const json none = (*Translate("#SBATCH --export=NONE"))["spec"]["tasks"][0]["env"];
  EXPECT_FALSE(none.contains("HOME"));
  const json named = (*Translate("#SBATCH --export=WANDB_KEY,LR=0.1"))["spec"]["tasks"][0]["env"];
  EXPECT_EQ(named["WANDB_KEY"], "k");
  EXPECT_EQ(named["LR"], "0.1");
  EXPECT_FALSE(named.contains("HOME"));
}

TEST(SbatchJobTest, ConstraintAndChdir) {
  const json job = *Translate("#SBATCH --gpus=1 -C 'a100|h100' -D out");
  EXPECT_EQ(job["spec"]["tasks"][0]["resources"]["gpuModel"], "A100|H100");
  EXPECT_EQ(job["spec"]["tasks"][0]["workingDir"], "/home/alice/out");
}

TEST(SbatchJobTest, AMigGresTypeAsksForAMigDevice) {
  const Result<json> r = Translate("#SBATCH --gres=gpu:1g.10gb:1");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["spec"]["tasks"][0]["resources"], (json{{"mig", "1g.10gb"}}));
  EXPECT_EQ(ErrorOf("#SBATCH --gres=gpu:3g.40gb:2"),
            "train.sh:1: --gres: asks 2 MIG devices of 3g.40gb per node; a Tessera allocation holds one MIG device on each node "
            "(CUDA shows a process one)");
}

TEST(SbatchJobTest, ErrorsNameTheOptionAndItsLine) {
  EXPECT_EQ(ErrorOf("#SBATCH -N 3\n#SBATCH --gpus=4"),
            "train.sh:2: --gpus: 4 GPUs do not divide evenly over 3 nodes; every node of a Tessera allocation holds the same GPUs (use --gpus-per-node)");
  EXPECT_EQ(ErrorOf("#SBATCH --gres=gpu:4\n#SBATCH --gpus-per-node=2"),
            "train.sh:2: --gpus-per-node: asks 2 GPUs per node, but train.sh:1: --gres asks 4");
  EXPECT_EQ(ErrorOf("#SBATCH --gpus=1 -C 'a100&ib'"),
            "train.sh:1: --constraint: 'a100&ib' asks for several features at once; Tessera nodes have one feature, their GPU model (write alternatives with '|')");
  EXPECT_EQ(ErrorOf("#SBATCH --gres=gpu:v100:1\n#SBATCH -C a100"),
            "train.sh:2: --constraint: GPU model 'A100' differs from the GPU type 'V100' of train.sh:1: --gres");
  EXPECT_EQ(ErrorOf("#SBATCH --qos=gold"),
            "train.sh:1: --qos: 'gold' is not a QOS Tessera knows (standby, scavenger, low, normal, high, urgent)");
  EXPECT_EQ(ErrorOf("#SBATCH -d afterok:404"), "train.sh:1: --dependency: job 404 does not exist");
  EXPECT_EQ(ErrorOf("#SBATCH --mem=1G --mem-per-cpu=100"), "train.sh:1: --mem-per-cpu: --mem, --mem-per-gpu and --mem-per-cpu exclude each other");
  EXPECT_EQ(ErrorOf("#SBATCH --mem-per-gpu=1G"), "train.sh:1: --mem-per-gpu: the job asks no GPUs");
  EXPECT_EQ(ErrorOf("#SBATCH -N 4 -n 2"), "train.sh:1: --ntasks: 2 tasks cannot cover 4 nodes");
  SubmitContext unknown_size = Context();
  unknown_size.node_gpus.reset();
  EXPECT_EQ(ErrorOf("#SBATCH --exclusive", unknown_size), "train.sh:1: --exclusive: needs the server to know how many GPUs a node has");
}

TEST(SbatchJobTest, NamesAndQos) {
  EXPECT_EQ(TesseraName("My_Train run!"), "my-train-run");
  EXPECT_EQ(TesseraName("___"), "sbatch");
  EXPECT_EQ(*PriorityOfQos("urgent"), 1000);
  EXPECT_EQ(*PriorityOfQos("standby"), -100);
}

}  // namespace
}  // namespace tessera::cli::slurm
