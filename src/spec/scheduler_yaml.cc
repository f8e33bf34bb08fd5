#include "spec/scheduler_yaml.h"

#include "spec/plugin_args/fgd_args_yaml.h"
#include "spec/plugin_args/gittins_args_yaml.h"
#include "spec/plugin_args/las_args_yaml.h"
#include "spec/plugin_args/random_args_yaml.h"

namespace tessera::spec {
namespace {

// pluginArgs: one block per plugin, each read by its plugin's own parser.
Status ParsePluginArgs(const YamlMap& config, sched::PluginArgs& args) {
  const auto blocks = config.Find("pluginArgs");
  if (!blocks) return Status::Ok();
  auto map = YamlMap::Read(*blocks, {"las", "gittins", "random", "fgd"});
  if (!map.ok()) return map.status();
  const auto read = [&](std::string_view plugin, auto parse, auto& out) -> Status {
    const auto block = map->Find(plugin);
    if (!block) return Status::Ok();
    auto parsed = parse(*block);
    if (!parsed.ok()) return parsed.status();
    out = *std::move(parsed);
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(read("las", ParseLasArgs, args.las));
  TESSERA_RETURN_IF_ERROR(read("gittins", ParseGittinsArgs, args.gittins));
  TESSERA_RETURN_IF_ERROR(read("random", ParseRandomArgs, args.random));
  return read("fgd", ParseFgdArgs, args.fgd);
}

}  // namespace

Result<sched::SchedulerConfig> ParseSchedulerConfig(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"jobOrder", "queueOrder", "admission", "placement", "victimCost", "reservation",
                                   "actions", "fairShareHalfLife", "defaultWalltime", "maxDomainTries",
                                   "maxPreemptorsPerCycle", "preemptByJobOrder", "pluginArgs"});
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
  TESSERA_RETURN_IF_ERROR(ParsePluginArgs(*map, config.plugin_args));
  return config;
}

Result<sched::SchedulerConfig> ParseSchedulerConfigDocument(std::string_view text, std::string_view source) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return sched::SchedulerConfig{};
  Result<YamlValue> document = LoadSingleDocument(text, source, "SchedulerConfig");
  if (!document.ok()) return document.status();
  Result<YamlMap> top = ReadDocument(*document, "SchedulerConfig");
  if (!top.ok()) return top.status();
  Result<YamlValue> spec = top->Get("spec");
  if (!spec.ok()) return spec.status();
  return ParseSchedulerConfig(*spec);
}

}  // namespace tessera::spec
