#include "simkit/scenario.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "model/invariants.h"
#include "sched/scheduler.h"
#include "spec/cluster_yaml.h"
#include "spec/job_yaml.h"
#include "spec/queue_yaml.h"
#include "spec/scheduler_yaml.h"
#include "spec/yaml_util.h"

namespace tessera::simkit {
namespace {

using spec::YamlMap;
using spec::YamlValue;

struct JobEntry {
  std::string name;
  Time submit = 0;
  Seconds duration = 0;  // 0: runs until an event ends it
  std::string rejected;  // expected rejection message (substring)
  model::Job job;
};

struct Event {
  Time at = 0;
  std::string kind;    // finish | fail | cancel | checkpoint | failGpu | repairGpu | cordon | uncordon
  std::string target;  // a job name, a node name, or node/gpu-index
};

struct PlacementCheck {
  std::vector<std::string> nodes;  // the exact set of nodes its tasks use
  std::string within;              // a topology level all its tasks share
  std::string same_gpu_as;         // another job sharing its (single) GPU
};

struct Expectation {
  Time at = 0;
  std::optional<std::vector<std::string>> running, pending, evicted, backfilled;
  std::map<std::string, std::string> reasons;
  std::map<std::string, PlacementCheck> placements;
  std::optional<std::int64_t> gpus_in_use;
};

struct Scenario {
  std::string name;
  std::string source;
  std::unique_ptr<sched::SchedulerState> state;
  sched::SchedulerConfig config;
  std::vector<JobEntry> jobs;
  std::vector<Event> events;
  std::vector<Expectation> expectations;
};

// Builds a full document of `kind` around a scenario section so the regular
// spec parsers (and all their validation) read it.
std::string AsDocument(std::string_view kind, const YAML::Node& spec, const YAML::Node& metadata = {}) {
  YAML::Node doc;
  doc["apiVersion"] = std::string(spec::kApiVersion);
  doc["kind"] = std::string(kind);
  if (metadata.IsMap()) doc["metadata"] = metadata;
  doc["spec"] = spec;
  return YAML::Dump(doc);
}

Status ParseJobs(const YamlValue& list, Scenario& s) {
  auto items = list.Items();
  if (!items.ok()) return items.status();
  for (const YamlValue& item : *items) {
    auto map = YamlMap::Read(item, {"name", "queue", "submit", "duration", "rejected", "spec"}, {"name", "spec"});
    if (!map.ok()) return map.status();
    JobEntry entry;
    std::string queue = "default";
    TESSERA_RETURN_IF_ERROR(map->ReadDnsLabel("name", &entry.name));
    TESSERA_RETURN_IF_ERROR(map->ReadString("queue", &queue));
    TESSERA_RETURN_IF_ERROR(map->ReadDuration("submit", &entry.submit));
    TESSERA_RETURN_IF_ERROR(map->ReadDuration("duration", &entry.duration));
    TESSERA_RETURN_IF_ERROR(map->ReadString("rejected", &entry.rejected));
    YAML::Node metadata;
    metadata["name"] = entry.name;
    metadata["queue"] = queue;
    const std::string text = AsDocument("Job", map->Find("spec")->node(), metadata);
    auto parsed = spec::ParseJobYaml(text, s.source + " job " + entry.name, s.state->cluster(), s.state->queues());
    if (!entry.rejected.empty()) {
      if (parsed.ok()) return item.Error("expected the job to be rejected with '" + entry.rejected + "', but it was accepted");
      if (parsed.status().message().find(entry.rejected) == std::string::npos) {
        return item.Error("expected rejection '" + entry.rejected + "', got: " + parsed.status().message());
      }
      continue;  // correctly rejected: never submitted
    }
    if (!parsed.ok()) return parsed.status();
    entry.job = std::move(parsed->front());
    s.jobs.push_back(std::move(entry));
  }
  return Status::Ok();
}

Status ParseEvents(const YamlValue& list, Scenario& s) {
  static const std::set<std::string> kKinds = {"finish", "fail", "cancel", "checkpoint",
                                               "failGpu", "repairGpu", "cordon", "uncordon"};
  auto items = list.Items();
  if (!items.ok()) return items.status();
  for (const YamlValue& item : *items) {
    auto map = YamlMap::Read(item, {"at", "finish", "fail", "cancel", "checkpoint", "failGpu", "repairGpu", "cordon", "uncordon"}, {"at"});
    if (!map.ok()) return map.status();
    Event event;
    TESSERA_RETURN_IF_ERROR(map->ReadDuration("at", &event.at));
    for (const std::string& kind : kKinds) {
      if (map->Has(kind)) {
        if (!event.kind.empty()) return item.Error("an event does one thing: both '" + event.kind + "' and '" + kind + "'");
        event.kind = kind;
        TESSERA_RETURN_IF_ERROR(map->ReadString(kind, &event.target));
      }
    }
    if (event.kind.empty()) return item.Error("an event needs one of: finish, fail, cancel, checkpoint, failGpu, repairGpu, cordon, uncordon");
    s.events.push_back(std::move(event));
  }
  return Status::Ok();
}

Status ParsePlacement(const YamlValue& value, PlacementCheck& check) {
  auto map = YamlMap::Read(value, {"nodes", "within", "sameGpuAs"});
  if (!map.ok()) return map.status();
  TESSERA_RETURN_IF_ERROR(map->ReadStringList("nodes", &check.nodes));
  TESSERA_RETURN_IF_ERROR(map->ReadString("within", &check.within));
  TESSERA_RETURN_IF_ERROR(map->ReadString("sameGpuAs", &check.same_gpu_as));
  if (!check.within.empty() && !model::ParseTopologyLevel(check.within)) {
    return value.Error("within: unknown topology level '" + check.within + "'");
  }
  return Status::Ok();
}

Status ReadNameMap(const YamlMap& map, std::string_view key,
                   const std::function<Status(const std::string&, const YamlValue&)>& read) {
  const auto field = map.Find(key);
  if (!field) return Status::Ok();
  if (!field->node().IsMap()) return field->Error("expected a mapping of job names");
  for (const auto& kv : field->node()) {
    const std::string name = kv.first.as<std::string>();
    TESSERA_RETURN_IF_ERROR(read(name, YamlValue(kv.second, field->source(), field->FieldPath(name), kv.second.Mark())));
  }
  return Status::Ok();
}

Status ParseExpectations(const YamlValue& list, Scenario& s) {
  auto items = list.Items();
  if (!items.ok()) return items.status();
  for (const YamlValue& item : *items) {
    auto map = YamlMap::Read(item, {"at", "running", "pending", "evicted", "backfilled", "reasons", "placements", "gpusInUse"}, {"at"});
    if (!map.ok()) return map.status();
    Expectation e;
    TESSERA_RETURN_IF_ERROR(map->ReadDuration("at", &e.at));
    for (auto [key, out] : {std::pair{"running", &e.running}, {"pending", &e.pending}, {"evicted", &e.evicted},
                            {"backfilled", &e.backfilled}}) {
      if (map->Has(key)) {
        out->emplace();
        TESSERA_RETURN_IF_ERROR(map->ReadStringList(key, &**out));
      }
    }
    if (map->Has("gpusInUse")) {
      std::int64_t milli = 0;
      TESSERA_RETURN_IF_ERROR(map->ReadMilli("gpusInUse", &milli));
      e.gpus_in_use = milli;
    }
    TESSERA_RETURN_IF_ERROR(ReadNameMap(*map, "reasons", [&](const std::string& job, const YamlValue& v) {
      auto text = v.String();
      if (!text.ok()) return text.status();
      e.reasons[job] = *text;
      return Status::Ok();
    }));
    TESSERA_RETURN_IF_ERROR(ReadNameMap(*map, "placements", [&](const std::string& job, const YamlValue& v) {
      return ParsePlacement(v, e.placements[job]);
    }));
    s.expectations.push_back(std::move(e));
  }
  return Status::Ok();
}

Result<Scenario> Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read scenario file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  Scenario s;
  s.source = path;
  Status status = spec::CatchYaml(path, [&]() -> Status {
    auto docs = spec::LoadYamlDocuments(text.str(), path);
    if (!docs.ok()) return docs.status();
    if (docs->size() != 1) return InvalidArgument(path + ": a scenario is one YAML document");
    auto map = YamlMap::Read(docs->front(), {"scenario", "cluster", "queues", "scheduler", "jobs", "events", "expect"},
                             {"scenario", "cluster", "jobs", "expect"});
    if (!map.ok()) return map.status();
    TESSERA_RETURN_IF_ERROR(map->ReadString("scenario", &s.name));

    const YamlValue cluster_value = *map->Find("cluster");
    Result<model::Cluster> cluster = [&]() -> Result<model::Cluster> {
      if (cluster_value.node().IsScalar()) return spec::LoadCluster(cluster_value.node().as<std::string>());
      auto nodes = spec::ParseClusterYaml(AsDocument("Cluster", cluster_value.node()), path + " cluster");
      if (!nodes.ok()) return nodes.status();
      return model::Cluster::Build(*nodes);
    }();
    if (!cluster.ok()) return cluster.status();

    model::QueueTree queues = model::QueueTree::Default(cluster->capacity().gpu_milli);
    if (const auto q = map->Find("queues")) {
      YAML::Node spec_node;
      spec_node["queues"] = q->node();
      auto specs = spec::ParseQueueYaml(AsDocument("QueueTree", spec_node), path + " queues");
      if (!specs.ok()) return specs.status();
      auto tree = model::QueueTree::Build(*specs);
      if (!tree.ok()) return tree.status();
      queues = std::move(*tree);
    }
    if (const auto config = map->Find("scheduler")) {
      auto parsed = spec::ParseSchedulerConfig(*config);
      if (!parsed.ok()) return parsed.status();
      s.config = *parsed;
    }
    s.state = std::make_unique<sched::SchedulerState>(std::move(*cluster), std::move(queues));
    TESSERA_RETURN_IF_ERROR(ParseJobs(*map->Find("jobs"), s));
    if (const auto events = map->Find("events")) TESSERA_RETURN_IF_ERROR(ParseEvents(*events, s));
    return ParseExpectations(*map->Find("expect"), s);
  });
  if (!status.ok()) return status;
  return s;
}

class Runner {
 public:
  explicit Runner(Scenario& s) : s_(s) { report_.name = s.name; }
  Result<ScenarioReport> Run();

 private:
  Status Apply(const Event& e, Time now);
  void Check(const Expectation& e, const sched::CycleResult& cycle);
  void Fail(Time at, const std::string& what) { report_.failures.push_back("t=" + std::to_string(at) + ": " + what); }
  model::JobId Id(const std::string& name) const {
    const auto it = ids_.find(name);
    return it == ids_.end() ? model::JobId() : it->second;
  }
  std::vector<std::string> NamesIn(model::JobState state) const;

  Scenario& s_;
  ScenarioReport report_;
  std::map<std::string, model::JobId> ids_;
  std::map<std::string, const JobEntry*> entries_;
};

std::vector<std::string> Runner::NamesIn(model::JobState state) const {
  std::vector<std::string> names;
  for (const auto& [name, id] : ids_) {
    if (s_.state->job(id).state == state) names.push_back(name);
  }
  return names;
}

std::string Join(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

Status Runner::Apply(const Event& e, Time now) {
  sched::SchedulerState& state = *s_.state;
  const bool on_job = e.kind == "finish" || e.kind == "fail" || e.kind == "cancel" || e.kind == "checkpoint";
  if (on_job) {
    const model::JobId id = Id(e.target);
    if (!id.valid()) return InvalidArgument(s_.source + ": event at " + std::to_string(e.at) + " names unknown job '" + e.target + "'");
    if (e.kind == "finish") state.Finish(id, model::JobState::kSucceeded, now);
    if (e.kind == "fail") state.Finish(id, model::JobState::kFailed, now);
    if (e.kind == "cancel") state.Finish(id, model::JobState::kCancelled, now);
    if (e.kind == "checkpoint") state.Checkpointed(id, now);
    return Status::Ok();
  }
  const std::size_t slash = e.target.find('/');
  auto node = state.cluster().FindNode(e.target.substr(0, slash));
  if (!node.ok()) return InvalidArgument(s_.source + ": event " + e.kind + ": " + node.status().message());
  if (e.kind == "cordon" || e.kind == "uncordon") {
    state.cluster().SetSchedulable(*node, e.kind == "uncordon");
    return Status::Ok();
  }
  const model::Node& n = state.cluster().node(*node);
  const int local = slash == std::string::npos ? -1 : std::atoi(e.target.c_str() + slash + 1);
  if (local < 0 || local >= n.gpu_count) return InvalidArgument(s_.source + ": event " + e.kind + ": write NODE/GPU-INDEX");
  // A failed GPU takes its jobs down: each restarts within its restart budget, or fails.
  for (model::JobId id : state.SetGpuHealthy(n.gpu(local), e.kind == "repairGpu")) static_cast<void>(state.Requeue(id, now));
  return Status::Ok();
}

void Runner::Check(const Expectation& e, const sched::CycleResult& cycle) {
  ++report_.checks;
  const auto compare = [&](const char* what, const std::optional<std::vector<std::string>>& want,
                           std::vector<std::string> got) {
    if (want && Join(*want) != Join(got)) Fail(e.at, std::string(what) + ": expected " + Join(*want) + ", got " + Join(got));
  };
  compare("running", e.running, NamesIn(model::JobState::kRunning));
  compare("pending", e.pending, NamesIn(model::JobState::kPending));
  std::vector<std::string> evicted, backfilled;
  for (const sched::Eviction& ev : cycle.evictions) evicted.push_back(s_.state->job(ev.victim).name);
  for (const sched::Outcome& o : cycle.outcomes) {
    if (o.backfilled) backfilled.push_back(s_.state->job(o.job).name);
  }
  compare("evicted", e.evicted, evicted);
  compare("backfilled", e.backfilled, backfilled);
  if (e.gpus_in_use && *e.gpus_in_use != s_.state->cluster().allocated().gpu_milli) {
    Fail(e.at, "GPUs in use: expected " + FormatMilli(*e.gpus_in_use) + ", got " + FormatMilli(s_.state->cluster().allocated().gpu_milli));
  }
  for (const auto& [name, want] : e.reasons) {
    const model::JobId id = Id(name);
    std::string got = "(not considered in this cycle)";
    for (const sched::Outcome& o : cycle.outcomes) {
      if (o.job == id) got = sched::Explain(o, *s_.state);
    }
    if (got.find(want) == std::string::npos) Fail(e.at, "reason of " + name + ": expected '" + want + "', got '" + got + "'");
  }
  const model::Cluster& cluster = s_.state->cluster();
  for (const auto& [name, check] : e.placements) {
    const model::JobId id = Id(name);
    if (!id.valid() || s_.state->job(id).state != model::JobState::kRunning) {
      Fail(e.at, "placement of " + name + ": it is not running");
      continue;
    }
    const auto& tasks = s_.state->job(id).placements;
    std::set<std::string> nodes;
    for (const auto& t : tasks) nodes.insert(cluster.node(t.node).name);
    if (!check.nodes.empty() && Join(check.nodes) != Join({nodes.begin(), nodes.end()})) {
      Fail(e.at, "nodes of " + name + ": expected " + Join(check.nodes) + ", got " + Join({nodes.begin(), nodes.end()}));
    }
    if (!check.within.empty()) {
      const model::TopologyLevel level = *model::ParseTopologyLevel(check.within);
      std::set<std::int64_t> domains;
      for (const auto& t : tasks) {
        for (const auto& g : t.gpus) {
          domains.insert(level == model::TopologyLevel::kNvlink ? cluster.gpu(g.gpu).nvlink.value()
                                                                 : cluster.GroupOf(t.node, level));
        }
      }
      if (domains.size() != 1) Fail(e.at, name + " spans " + std::to_string(domains.size()) + " " + check.within + " domains");
    }
    if (!check.same_gpu_as.empty()) {
      const model::JobId other = Id(check.same_gpu_as);
      const bool same = other.valid() && s_.state->job(other).state == model::JobState::kRunning &&
                        tasks.at(0).gpus.at(0).gpu == s_.state->job(other).placements.at(0).gpus.at(0).gpu;
      if (!same) Fail(e.at, name + " does not share its GPU with " + check.same_gpu_as);
    }
  }
}

Result<ScenarioReport> Runner::Run() {
  auto scheduler = sched::Scheduler::Create(s_.config);
  if (!scheduler.ok()) return scheduler.status();
  for (const JobEntry& entry : s_.jobs) entries_[entry.name] = &entry;
  std::set<Time> times;
  for (const JobEntry& j : s_.jobs) times.insert(j.submit);
  for (const Event& e : s_.events) times.insert(e.at);
  for (const Expectation& e : s_.expectations) times.insert(e.at);
  const Time horizon = *times.rbegin();
  std::multimap<Time, model::JobId> ends;  // true completions of running jobs
  sched::NullBinder binder;

  while (!times.empty() || !ends.empty()) {
    Time now = times.empty() ? ends.begin()->first : *times.begin();
    if (!ends.empty()) now = std::min(now, ends.begin()->first);
    if (now > horizon) break;
    times.erase(now);
    for (auto it = ends.begin(); it != ends.end() && it->first == now; it = ends.erase(it)) {
      const model::Job& job = s_.state->job(it->second);
      // A job preempted and restarted since has a later completion queued.
      if (job.state == model::JobState::kRunning && job.start_time + entries_[job.name]->duration == now) {
        s_.state->Finish(it->second, model::JobState::kSucceeded, now);
        report_.log.push_back("t=" + std::to_string(now) + " " + job.name + " finished");
      }
    }
    for (const JobEntry& j : s_.jobs) {
      if (j.submit == now) ids_[j.name] = s_.state->Submit(j.job, now);
    }
    for (const Event& e : s_.events) {
      if (e.at == now) TESSERA_RETURN_IF_ERROR(Apply(e, now));
    }
    const sched::CycleResult cycle = scheduler->RunCycle(*s_.state, now, binder);
    ++report_.cycles;
    for (const std::string& problem : model::CheckInvariants(s_.state->cluster(), s_.state->jobs().all(), s_.state->queues())) {
      Fail(now, "invariant violated: " + problem);
    }
    for (const sched::Eviction& ev : cycle.evictions) {
      report_.log.push_back("t=" + std::to_string(now) + " " + s_.state->job(ev.victim).name + " evicted (" +
                            std::string(sched::ToString(ev.reason)) + ") for " + s_.state->job(ev.preemptor).name);
    }
    for (const sched::Outcome& o : cycle.outcomes) {
      const model::Job& job = s_.state->job(o.job);
      report_.log.push_back("t=" + std::to_string(now) + " " + job.name + ": " + sched::Explain(o, *s_.state));
      if (o.verdict == sched::Verdict::kPlaced && entries_[job.name]->duration > 0) {
        ends.emplace(now + entries_[job.name]->duration, o.job);
      }
    }
    for (const Expectation& e : s_.expectations) {
      if (e.at == now) Check(e, cycle);
    }
  }
  return report_;
}

}  // namespace

Result<ScenarioReport> RunScenarioFile(const std::string& path) {
  auto scenario = Load(path);
  if (!scenario.ok()) return scenario.status();
  return Runner(*scenario).Run();
}

}  // namespace tessera::simkit
