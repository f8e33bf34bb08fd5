#include "spec/scheduler_yaml.h"

namespace tessera::spec {

Result<sched::SchedulerConfig> ParseSchedulerConfig(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"jobOrder", "queueOrder", "admission", "placement", "victimCost", "reservation",
                                   "actions", "fairShareHalfLife", "defaultWalltime", "maxDomainTries",
                                   "maxPreemptorsPerCycle", "preemptByJobOrder"});
  if (!map.ok()) return map.status();
  sched::SchedulerConfig config;
  TESSERA_RETURN_IF_ERROR(map->ReadString("jobOrder", &config.job_order));
  TESSERA_RETURN_IF_ERROR(map->ReadString("queueOrder", &config.queue_order));
  TESSERA_RETURN_IF_ERROR(map->ReadString("admission", &config.admission));
  TESSERA_RETURN_IF_ERROR(map->ReadString("placement", &config.placement));
  TESSERA_RETURN_IF_ERROR(map->ReadString("victimCost", &config.victim_cost));
  TESSERA_RETURN_IF_ERROR(map->ReadString("reservation", &config.reservation));
  TESSERA_RETURN_IF_ERROR(map->ReadStringList("actions", &config.actions));
  TESSERA_RETURN_IF_ERROR(map->ReadDuration("fairShareHalfLife", &config.fair_share_half_life));
  TESSERA_RETURN_IF_ERROR(map->ReadDuration("defaultWalltime", &config.default_walltime));
  TESSERA_RETURN_IF_ERROR(map->ReadInt("maxDomainTries", &config.max_domain_tries, 1, 1024));
  TESSERA_RETURN_IF_ERROR(map->ReadInt("maxPreemptorsPerCycle", &config.max_preemptors_per_cycle, 0, 100000));
  TESSERA_RETURN_IF_ERROR(map->ReadBool("preemptByJobOrder", &config.preempt_by_job_order));
  return config;
}

}  // namespace tessera::spec
