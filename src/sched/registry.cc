#include "sched/registry.h"

#include <functional>
#include <map>

#include "sched/plugins/drf_queue_order.h"
#include "sched/plugins/easy_backfill.h"
#include "sched/plugins/gittins_order.h"
#include "sched/plugins/hierarchical_quota.h"
#include "sched/plugins/job_order.h"
#include "sched/plugins/least_lost_work.h"
#include "sched/plugins/node_packing.h"
#include "sched/plugins/topology_packing.h"

namespace tessera::sched {
namespace {

template <typename T>
using Factories = std::map<std::string, std::function<std::unique_ptr<T>(const SchedulerConfig&)>>;

const Factories<JobOrder>& JobOrders() {
  static const Factories<JobOrder> kFactories = {
      {"fifo", [](const SchedulerConfig&) { return std::make_unique<FifoOrder>(); }},
      {"shortest-first", [](const SchedulerConfig& c) { return std::make_unique<ShortestFirstOrder>(c.default_walltime); }},
      {"oracle-shortest-first", [](const SchedulerConfig&) { return std::make_unique<OracleShortestFirstOrder>(); }},
      {"oracle-srtf", [](const SchedulerConfig&) { return std::make_unique<OracleSrtfOrder>(); }},
      {"las", [](const SchedulerConfig& c) { return std::make_unique<LasOrder>(c.plugin_args.las.thresholds); }},
      {"gittins", [](const SchedulerConfig& c) { return std::make_unique<GittinsOrder>(c.plugin_args.gittins); }},
  };
  return kFactories;
}

const Factories<QueueOrder>& QueueOrders() {
  static const Factories<QueueOrder> kFactories = {
      {"drf", [](const SchedulerConfig&) { return std::make_unique<DrfQueueOrder>(); }},
  };
  return kFactories;
}

const Factories<Admission>& Admissions() {
  static const Factories<Admission> kFactories = {
      {"quota", [](const SchedulerConfig&) { return std::make_unique<HierarchicalQuota>(); }},
  };
  return kFactories;
}

const Factories<Placement>& Placements() {
  static const Factories<Placement> kFactories = {
      {"topology-packing", [](const SchedulerConfig& c) { return std::make_unique<TopologyPacking>(c.max_domain_tries); }},
      {"random", [](const SchedulerConfig& c) -> std::unique_ptr<Placement> {
         return std::make_unique<RandomPlacement>(c.plugin_args.random.seed, std::make_unique<TopologyPacking>(c.max_domain_tries));
       }},
      {"fgd", [](const SchedulerConfig& c) -> std::unique_ptr<Placement> {
         return std::make_unique<FgdPlacement>(c.plugin_args.fgd.workload, std::make_unique<TopologyPacking>(c.max_domain_tries));
       }},
  };
  return kFactories;
}

const Factories<VictimCost>& VictimCosts() {
  static const Factories<VictimCost> kFactories = {
      {"least-lost-work", [](const SchedulerConfig&) { return std::make_unique<LeastLostWork>(); }},
  };
  return kFactories;
}

// "none" is a valid reservation policy: plain greedy allocation, which can
// starve large gangs; kept to measure what backfill buys.
const Factories<ReservationPolicy>& Reservations() {
  static const Factories<ReservationPolicy> kFactories = {
      {"easy-backfill", [](const SchedulerConfig&) { return std::make_unique<EasyBackfill>(); }},
      {"none", [](const SchedulerConfig&) { return std::unique_ptr<ReservationPolicy>(); }},
  };
  return kFactories;
}

const std::map<std::string, std::function<std::unique_ptr<Action>()>>& Actions() {
  static const std::map<std::string, std::function<std::unique_ptr<Action>()>> kFactories = {
      {"allocate", MakeAllocateAction},
      {"backfill", MakeBackfillAction},
      {"reclaim", MakeReclaimAction},
      {"preempt", MakePreemptAction},
  };
  return kFactories;
}

template <typename Map>
std::string Known(const Map& map) {
  std::string names;
  for (const auto& [name, factory] : map) names += (names.empty() ? "" : ", ") + name;
  return names;
}

template <typename T>
Status Make(const Factories<T>& factories, const std::string& point, const std::string& name,
            const SchedulerConfig& config, std::unique_ptr<T>& out) {
  const auto it = factories.find(name);
  if (it == factories.end()) {
    return InvalidArgument("scheduler." + point + ": unknown policy '" + name + "' (known: " + Known(factories) + ")");
  }
  out = it->second(config);
  return Status::Ok();
}

}  // namespace

Result<Plugins> BuildPlugins(const SchedulerConfig& config) {
  Plugins plugins;
  TESSERA_RETURN_IF_ERROR(Make(JobOrders(), "jobOrder", config.job_order, config, plugins.job_order));
  TESSERA_RETURN_IF_ERROR(Make(QueueOrders(), "queueOrder", config.queue_order, config, plugins.queue_order));
  TESSERA_RETURN_IF_ERROR(Make(Admissions(), "admission", config.admission, config, plugins.admission));
  TESSERA_RETURN_IF_ERROR(Make(Placements(), "placement", config.placement, config, plugins.placement));
  TESSERA_RETURN_IF_ERROR(Make(VictimCosts(), "victimCost", config.victim_cost, config, plugins.victim_cost));
  TESSERA_RETURN_IF_ERROR(Make(Reservations(), "reservation", config.reservation, config, plugins.reservation));
  return plugins;
}

Result<std::vector<std::unique_ptr<Action>>> BuildActions(const SchedulerConfig& config) {
  std::vector<std::unique_ptr<Action>> actions;
  bool allocate = false, backfill = false;
  for (const std::string& name : config.actions) {
    const auto it = Actions().find(name);
    if (it == Actions().end()) {
      return InvalidArgument("scheduler.actions: unknown action '" + name + "' (known: " + Known(Actions()) + ")");
    }
    if (name == "allocate") allocate = true;
    if (name == "backfill") {
      if (!allocate) return InvalidArgument("scheduler.actions: backfill must come after allocate");
      backfill = true;
    }
    actions.push_back(it->second());
  }
  if (!allocate) return InvalidArgument("scheduler.actions: allocate is required");
  // allocate stops at the first blocked gang when a reservation policy is set,
  // and only backfill carries on from there.
  if (config.reservation != "none" && !backfill) {
    return InvalidArgument("scheduler.actions: reservation '" + config.reservation + "' needs the backfill action");
  }
  return actions;
}

}  // namespace tessera::sched
