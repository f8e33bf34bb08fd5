#include "cli/slurm/sbatch_options.h"

#include <gtest/gtest.h>

namespace tessera::cli::slurm {
namespace {

// Parses a script's directives, then a command line.
Result<SbatchOptions> Parse(const std::string& script, std::vector<std::string> argv = {}, bool ignore = false,
                            std::vector<std::string>* warnings = nullptr) {
  SbatchOptions options;
  Result<std::vector<Word>> words = ScanDirectives(script, "job.sh");
  if (!words.ok()) return words.status();
  Result<Parsed> parsed = ApplyOptions(*words, false, ignore, &options);
  if (!parsed.ok()) return parsed.status();
  if (warnings) *warnings = parsed->warnings;
  std::vector<Word> line;
  for (const std::string& a : argv) line.push_back({a, "command line"});
  Result<Parsed> cli = ApplyOptions(line, true, ignore, &options);
  if (!cli.ok()) return cli.status();
  if (warnings) warnings->insert(warnings->end(), cli->warnings.begin(), cli->warnings.end());
  return options;
}

std::string ErrorOf(const std::string& script, std::vector<std::string> argv = {}) {
  const Result<SbatchOptions> r = Parse(script, std::move(argv));
  return r.ok() ? "(accepted)" : r.status().message();
}

TEST(SbatchOptionsTest, EveryHonouredOption) {
  const std::string script = R"(#!/bin/bash
#SBATCH -N 2
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=4
#SBATCH --gres=gpu:a100:4
#SBATCH --gpus=8
#SBATCH --gpus-per-node=a100:4
#SBATCH --gpus-per-task=1
#SBATCH -c 8
#SBATCH --cpus-per-gpu=6
#SBATCH --mem=64G
#SBATCH --mem-per-gpu=16G
#SBATCH --mem-per-cpu=2048
#SBATCH -t 1-02:00:00
#SBATCH -p research
#SBATCH -A nlp
#SBATCH --qos=high
#SBATCH -J "llama finetune"
#SBATCH -o logs/%x-%j.out
#SBATCH -e logs/%x-%j.err
#SBATCH --open-mode=append
#SBATCH -d afterok:12:13,afternotok:14,afterany:15,singleton
#SBATCH --kill-on-invalid-dep=yes
#SBATCH --exclusive
#SBATCH -C 'a100|h100'
#SBATCH --requeue
#SBATCH --signal=B:USR1@90
#SBATCH -D /scratch/run
#SBATCH --export=ALL,WANDB_MODE=offline
#SBATCH --wrap "echo hi"
python3 train.py
)";
  const Result<SbatchOptions> r = Parse(script);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const SbatchOptions& o = *r;
  EXPECT_EQ(*o.nodes, 2);
  EXPECT_EQ(*o.ntasks, 8);
  EXPECT_EQ(*o.ntasks_per_node, 4);
  EXPECT_EQ(o.gres->type, "a100");
  EXPECT_EQ(o.gres->count, 4);
  EXPECT_EQ(o.gpus->count, 8);
  EXPECT_EQ(o.gpus_per_node->type, "a100");
  EXPECT_EQ(o.gpus_per_task->count, 1);
  EXPECT_EQ(*o.cpus_per_task, 8);
  EXPECT_EQ(*o.cpus_per_gpu, 6);
  EXPECT_EQ(*o.mem, std::int64_t{64} << 30);
  EXPECT_EQ(*o.mem_per_gpu, std::int64_t{16} << 30);
  EXPECT_EQ(*o.mem_per_cpu, std::int64_t{2048} << 20);  // bare: megabytes
  EXPECT_EQ(*o.time_limit, 86400 + 2 * 3600);
  EXPECT_EQ(o.partition, "research");
  EXPECT_EQ(o.account, "nlp");
  EXPECT_EQ(o.qos, "high");
  EXPECT_EQ(o.job_name, "llama finetune");
  EXPECT_EQ(o.output, "logs/%x-%j.out");
  EXPECT_EQ(o.error, "logs/%x-%j.err");
  EXPECT_EQ(o.open_mode, "append");
  ASSERT_EQ(o.dependencies.size(), 4u);
  EXPECT_EQ(o.dependencies[1].job_id, 13);
  EXPECT_EQ(o.dependencies[2].kind, SbatchDependency::Kind::kAfterNotOk);
  EXPECT_EQ(o.dependencies[3].kind, SbatchDependency::Kind::kAfterAny);
  EXPECT_TRUE(o.singleton);
  EXPECT_TRUE(o.exclusive);
  EXPECT_EQ(o.constraint, "a100|h100");
  EXPECT_TRUE(*o.requeue);
  EXPECT_EQ(o.signal->name, "SIGUSR1");
  EXPECT_EQ(o.signal->seconds, 90);
  EXPECT_TRUE(o.signal->batch_only);
  EXPECT_EQ(o.chdir, "/scratch/run");
  EXPECT_EQ(*o.export_spec, "ALL,WANDB_MODE=offline");
  EXPECT_EQ(o.wrap, "echo hi");
  EXPECT_EQ(o.origin.at("gres"), "job.sh:5");
  EXPECT_EQ(o.origin.at("wrap"), "job.sh:30");
}

TEST(SbatchOptionsTest, ShortLongAttachedAndSeparateFormsAreOne) {
  for (const char* line : {"#SBATCH -N 3", "#SBATCH -N3", "#SBATCH --nodes=3", "#SBATCH --nodes 3", "#SBATCH -N=3"}) {
    const Result<SbatchOptions> r = Parse(std::string(line) + "\nhostname\n");
    ASSERT_TRUE(r.ok()) << line << ": " << r.status().message();
    EXPECT_EQ(*r->nodes, 3) << line;
  }
}

TEST(SbatchOptionsTest, SeveralOptionsOnALineAndTrailingComments) {
  const Result<SbatchOptions> r = Parse("#SBATCH -N 2 --gres=gpu:4   # two full nodes\n#SBATCH --job-name='a b' -t 30\nsrun hostname\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->nodes, 2);
  EXPECT_EQ(r->gres->count, 4);
  EXPECT_EQ(r->job_name, "a b");
  EXPECT_EQ(*r->time_limit, 1800);
}

TEST(SbatchOptionsTest, DirectivesEndAtTheFirstCommand) {
  const Result<SbatchOptions> r = Parse(R"(#!/bin/bash

# a comment, then directives
#SBATCH -N 2
# SBATCH -N 5 is a comment
#SBATCHX -N 6 too
  #SBATCH -t 10
echo start
#SBATCH -N 4
)");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->nodes, 2);  // the -N 4 after `echo` is a comment
  EXPECT_EQ(*r->time_limit, 600);  // indented directives count
}

TEST(SbatchOptionsTest, TheCommandLineWins) {
  std::vector<Word> line;
  SbatchOptions o;
  const Result<SbatchOptions> r = Parse("#SBATCH -N 2\n#SBATCH -J from-script\n#SBATCH -t 60\nhostname\n",
                                        {"-N", "4", "--job-name=cli", "run.sh", "--lr", "3e-4"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->nodes, 4);
  EXPECT_EQ(r->job_name, "cli");
  EXPECT_EQ(*r->time_limit, 3600);
  EXPECT_EQ(r->origin.at("nodes"), "command line");
  EXPECT_EQ(r->origin.at("time"), "job.sh:3");
}

TEST(SbatchOptionsTest, TheCommandLineStopsAtTheScript) {
  SbatchOptions o;
  const std::vector<Word> words = {{"-N", "command line"}, {"2", "command line"}, {"--dry-run", "command line"},
                                   {"train.sh", "command line"}, {"-N", "command line"}, {"5", "command line"}};
  const Result<Parsed> p = ApplyOptions(words, true, false, &o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*o.nodes, 2);
  EXPECT_TRUE(o.tessera.contains("dry-run"));
  EXPECT_EQ(p->positionals, (std::vector<std::string>{"train.sh", "-N", "5"}));  // the script's own arguments
}

TEST(SbatchOptionsTest, ErrorsNameFileLineAndOption) {
  EXPECT_EQ(ErrorOf("#SBATCH -N 2\n#SBATCH --array=9-0%2\n"), "job.sh:2: --array=9-0%2: range 9-0 runs backwards: write 0-9");
  EXPECT_EQ(ErrorOf("#SBATCH -a 0-9%0\n"), "job.sh:1: --array=0-9%0: '%0': the limit must be at least 1");
  EXPECT_EQ(ErrorOf("#SBATCH --mail-type=END\n"),
            "job.sh:1: --mail-type=END: Tessera sends no mail (watch the job with tessera jobs, or its events) (--ignore-unknown warns instead)");
  EXPECT_EQ(ErrorOf("#SBATCH --frobnicate=3\n"),
            "job.sh:1: --frobnicate=3: not an sbatch option Tessera knows (--ignore-unknown warns instead)");
  EXPECT_EQ(ErrorOf("\n\n#SBATCH -t 1h\n"),
            "job.sh:3: --time=1h: '1h' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
  EXPECT_EQ(ErrorOf("#SBATCH -N\n"), "job.sh:1: --nodes needs a value");
  EXPECT_EQ(ErrorOf("#SBATCH -N 0\n"), "job.sh:1: --nodes=0: '0' is not a whole number of at least 1");
  EXPECT_EQ(ErrorOf("#SBATCH -N 2-4\n"), "job.sh:1: --nodes=2-4: a range of node counts is not supported: a Tessera gang has one size; give -N 4");
  EXPECT_EQ(ErrorOf("#SBATCH --gres=gpu:a100:x\n"), "job.sh:1: --gres=gpu:a100:x: 'x' is not a whole number of at least 1");
  EXPECT_EQ(ErrorOf("#SBATCH --gres=nvme:1\n"),
            "job.sh:1: --gres=nvme:1: 'nvme:1': the only generic resource Tessera schedules is gpu (gpu[:type]:count)");
  EXPECT_EQ(ErrorOf("#SBATCH --mem=12X\n"), "job.sh:1: --mem=12X: '12X' is not a size (a number of megabytes, or with K, M, G or T)");
  EXPECT_EQ(ErrorOf("#SBATCH --signal=KILL@30\n"),
            "job.sh:1: --signal=KILL@30: 'SIGKILL' cannot be a checkpoint signal (SIGUSR1, SIGUSR2, SIGTERM, SIGINT or SIGHUP)");
  EXPECT_EQ(ErrorOf("#SBATCH -d after:12\n"), "job.sh:1: --dependency=after:12: 'after' is not supported (afterok, afterany, afternotok and singleton are)");
  EXPECT_EQ(ErrorOf("#SBATCH -d afterok:12?afterok:13\n"),
            "job.sh:1: --dependency=afterok:12?afterok:13: '?' (any one of several dependencies) is not supported: Tessera waits for all of them");
  EXPECT_EQ(ErrorOf("#SBATCH -d afterok:12_3\n"),
            "job.sh:1: --dependency=afterok:12_3: '12_3': a dependency on one element of an array is not supported: depend on the whole array (12)");
  EXPECT_EQ(ErrorOf("#SBATCH -d afterok\n"), "job.sh:1: --dependency=afterok: 'afterok' names no job: write afterok:JOBID");
  EXPECT_EQ(ErrorOf("#SBATCH --exclusive=user\n"), "job.sh:1: --exclusive=user: --exclusive=user is not supported; plain --exclusive is");
  EXPECT_EQ(ErrorOf("#SBATCH --requeue=yes\n"), "job.sh:1: --requeue takes no value");
  EXPECT_EQ(ErrorOf("#SBATCH --job-name 'unclosed\n"), "job.sh:1: unterminated ' quote");
  EXPECT_EQ(ErrorOf("#SBATCH hostname\n"), "job.sh:1: 'hostname' is not an option (a directive holds options only)");
  EXPECT_EQ(ErrorOf("#SBATCH --dry-run\n"), "job.sh:1: --dry-run is a flag of tessera sbatch, not a directive");
  EXPECT_EQ(ErrorOf("#SBATCH --open-mode=rewrite\n"), "job.sh:1: --open-mode=rewrite: 'rewrite' is not append or truncate");
  EXPECT_EQ(ErrorOf("", {"-a", "1-x", "x.sh"}), "command line: --array=1-x: '1-x' is not an index or a range (write e.g. 0-99, 1,3,5-9 or 0-15:4)");
}

TEST(SbatchOptionsTest, IgnoreUnknownWarnsAndGoesOn) {
  std::vector<std::string> warnings;
  const Result<SbatchOptions> r =
      Parse("#SBATCH --mail-type=ALL --mail-user=a@b.c\n#SBATCH -w n1\n#SBATCH -N 2 --bogus\n", {}, true, &warnings);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->nodes, 2);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[2], "job.sh:2: --nodelist=n1: Tessera places gangs itself; nodes cannot be named; ignored");
  EXPECT_EQ(warnings[3], "job.sh:3: --bogus: not an sbatch option Tessera knows; ignored");
}

TEST(SbatchOptionsTest, ArraysAsSlurmWritesThem) {
  EXPECT_EQ(Parse("#SBATCH --array=0-99%10\n")->array, "0-99%10");
  EXPECT_EQ(Parse("#SBATCH -a 1,3,5-9\n")->array, "1,3,5-9");
  EXPECT_EQ(Parse("", {"-a0-15:4", "x.sh"})->array, "0-15:4");
}

TEST(SbatchOptionsTest, GresForms) {
  EXPECT_EQ(Parse("#SBATCH --gres=gpu\n")->gres->count, 1);
  EXPECT_EQ(Parse("#SBATCH --gres=gpu:2\n")->gres->count, 2);
  EXPECT_EQ(Parse("#SBATCH --gres=gpu:h100:8\n")->gres->type, "h100");
  EXPECT_EQ(Parse("#SBATCH --gres=gpu:h100\n")->gres->count, 1);
  EXPECT_EQ(Parse("#SBATCH --gres=gres/gpu:4\n")->gres->count, 4);
  EXPECT_FALSE(Parse("#SBATCH --gres=none\n")->gres.has_value());
}

TEST(SbatchOptionsTest, SignalForms) {
  EXPECT_EQ(Parse("#SBATCH --signal=USR2\n")->signal->seconds, 60);  // Slurm's default
  EXPECT_EQ(Parse("#SBATCH --signal=SIGTERM@120\n")->signal->name, "SIGTERM");
  EXPECT_EQ(Parse("#SBATCH --signal=10@5\n")->signal->name, "SIGUSR1");
  EXPECT_FALSE(Parse("#SBATCH --signal=USR2\n")->signal->batch_only);
}

TEST(SbatchOptionsTest, Sizes) {
  EXPECT_EQ(*ParseSlurmSize("100"), std::int64_t{100} << 20);
  EXPECT_EQ(*ParseSlurmSize("512K"), std::int64_t{512} << 10);
  EXPECT_EQ(*ParseSlurmSize("1.5g"), std::int64_t{3} << 29);
  EXPECT_EQ(*ParseSlurmSize("2T"), std::int64_t{2} << 40);
  EXPECT_EQ(*ParseSlurmSize("0"), 0);
  EXPECT_FALSE(ParseSlurmSize("G").ok());
  EXPECT_FALSE(ParseSlurmSize("-1G").ok());
}

}  // namespace
}  // namespace tessera::cli::slurm
