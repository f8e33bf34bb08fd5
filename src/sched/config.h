// Which plugin serves each extension point, which actions run, and their knobs.
// Defaults are Tessera's own policy set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "sched/plugins/gittins_order.h"
#include "sched/plugins/job_order.h"
#include "sched/plugins/node_packing.h"

namespace tessera::sched {

// The arguments of the plugins that take any, each declared beside its
// plugin and read from YAML in its own file (spec/plugin_args/); a plugin
// the config does not choose ignores its arguments.
struct PluginArgs {
  LasArgs las;
  GittinsArgs gittins;
  RandomArgs random;
  FgdArgs fgd;
};

struct SchedulerConfig {
  // gittins | fifo | shortest-first | las | oracle-shortest-first | oracle-srtf
  // (the oracle-* orders read true durations: simulation baselines only)
  std::string job_order = "gittins";
  std::string queue_order = "drf";             // drf
  std::string admission = "quota";             // quota
  // topology-packing | random (seeded baseline) | fgd (fragmentation gradient descent)
  std::string placement = "topology-packing";
  std::string victim_cost = "least-lost-work"; // least-lost-work
  std::string reservation = "easy-backfill";   // easy-backfill | none
  // From least to most disruptive.
  std::vector<std::string> actions = {"allocate", "backfill", "reclaim", "preempt"};

  Seconds fair_share_half_life = 24 * 3600;  // 0: fair share on current usage only
  Seconds default_walltime = 24 * 3600;      // estimate for jobs that give none
  int max_domain_tries = 8;                  // topology domains tried per gang and level
  int max_preemptors_per_cycle = 16;         // victim searches per cycle (each action)
  // Preempt also for equal priority, when the job order ranks the waiting job
  // before a running one of its queue (gittins, SRTF and LAS need it; the
  // order's Displaces says by how much).
  bool preempt_by_job_order = true;
  PluginArgs plugin_args;
};

}  // namespace tessera::sched
