#include "sched/actions/victim_search.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tessera::sched {
namespace {

using model::Job;
using model::JobId;
using model::TopologyLevel;

struct Candidate {
  double cost;
  JobId job;
};

struct Plan {
  PlaceOptions domain;
  std::vector<Candidate> victims;  // cheapest first
  double estimate = 0;
};

class Search {
 public:
  Search(Session& session, JobId preemptor, const VictimFilter& eligible, EvictReason reason)
      : s_(session), preemptor_(preemptor), job_(session.state().job(preemptor)), eligible_(eligible), reason_(reason) {}

  SearchResult Run();

 private:
  TopologyLevel SearchLevel() const;
  std::vector<Plan> RankDomains(const std::vector<Candidate>& candidates) const;
  std::int64_t FreeGpus(const PlaceOptions& domain) const;
  // Places the preemptor in `domain` into placement_, optional members within its quota headroom.
  bool PlaceWithinQuota(const PlaceOptions& domain);
  // Evicts `victims` (skipping any no longer eligible) and tries to place;
  // leaves the evictions and binds in the statement on success.
  bool TryVictims(const PlaceOptions& domain, const std::vector<Candidate>& victims, bool stop_when_placed,
                  std::vector<Candidate>* used);

  Session& s_;
  JobId preemptor_;
  const Job& job_;
  const VictimFilter& eligible_;
  EvictReason reason_;
  std::vector<model::TaskPlacement> placement_;
};

TopologyLevel Search::SearchLevel() const {
  if (job_.single_task()) return TopologyLevel::kNode;
  if (job_.topology.required && job_.topology.level != TopologyLevel::kNvlink) return job_.topology.level;
  return TopologyLevel::kCluster;
}

bool Search::PlaceWithinQuota(const PlaceOptions& domain) {
  PlaceOptions options = domain;
  options.max_gpu_milli = s_.plugins().admission->GpuHeadroom(job_, s_.state().queues());
  placement_.clear();
  return s_.plugins().placement->Place(job_, s_.state().cluster(), options, placement_).fits();
}

std::int64_t Search::FreeGpus(const PlaceOptions& domain) const {
  return s_.state().cluster().GroupFreeGpus(domain.within_level, domain.within_group);
}

std::vector<Plan> Search::RankDomains(const std::vector<Candidate>& candidates) const {
  const model::Cluster& cluster = s_.state().cluster();
  const TopologyLevel level = SearchLevel();
  std::map<std::int32_t, Plan> by_domain;
  for (const Candidate& c : candidates) {
    for (const model::TaskPlacement& task : s_.state().job(c.job).placements) {
      const std::int32_t group = cluster.GroupOf(task.node, level);
      Plan& plan = by_domain[group];
      plan.domain.within_level = level;
      plan.domain.within_group = group;
      if (plan.victims.empty() || plan.victims.back().job != c.job) plan.victims.push_back(c);
    }
  }
  // Lower bound: free GPUs plus the cheapest victims' GPUs must cover the gang.
  const std::int64_t need = (job_.MinGpuMilli() + 999) / 1000;
  std::vector<Plan> plans;
  for (auto& [group, plan] : by_domain) {
    std::int64_t have = FreeGpus(plan.domain);
    for (const Candidate& c : plan.victims) {
      if (have >= need) break;
      have += (s_.state().job(c.job).Held().gpu_milli + 999) / 1000;
      plan.estimate += c.cost;
    }
    if (have >= need) plans.push_back(std::move(plan));
  }
  std::sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    return std::tie(a.estimate, a.domain.within_group) < std::tie(b.estimate, b.domain.within_group);
  });
  if (plans.size() > static_cast<std::size_t>(s_.config().max_domain_tries)) plans.resize(s_.config().max_domain_tries);
  return plans;
}

bool Search::TryVictims(const PlaceOptions& domain, const std::vector<Candidate>& victims, bool stop_when_placed,
                        std::vector<Candidate>* used) {
  Statement& statement = s_.statement();
  const model::QueueTree& queues = s_.state().queues();
  for (const Candidate& c : victims) {
    const Job& victim = s_.state().job(c.job);
    if (victim.state != model::JobState::kRunning || !eligible_(victim)) continue;
    statement.Evict(c.job, preemptor_, reason_);
    if (used) used->push_back(c);
    if (!stop_when_placed) continue;
    if (s_.plugins().admission->Admit(job_, queues)) continue;
    if (PlaceWithinQuota(domain)) return true;
  }
  if (stop_when_placed || s_.plugins().admission->Admit(job_, queues)) return false;
  return PlaceWithinQuota(domain);
}

SearchResult Search::Run() {
  std::vector<Candidate> candidates;
  const VictimCost& cost = *s_.plugins().victim_cost;
  for (JobId id : s_.state().jobs().running()) {
    const Job& victim = s_.state().job(id);
    if (!victim.preemptible || s_.BoundThisCycle(id) || !eligible_(victim)) continue;
    candidates.push_back({cost.Cost(victim, s_.now()), id});
  }
  if (candidates.empty()) return SearchResult::kNoCandidates;
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    const Job& x = s_.state().job(a.job);
    const Job& y = s_.state().job(b.job);
    // Cheapest first; then lower priority; then the youngest.
    return std::tie(a.cost, x.priority, y.start_time, a.job) < std::tie(b.cost, y.priority, x.start_time, b.job);
  });

  Statement& statement = s_.statement();
  const Statement::Checkpoint mark = statement.Mark();
  std::optional<Plan> best;
  double best_cost = 0;
  for (Plan& plan : RankDomains(candidates)) {
    std::vector<Candidate> used;
    if (TryVictims(plan.domain, plan.victims, true, &used)) {
      double total = 0;
      for (const Candidate& c : used) total += c.cost;
      if (!best || total < best_cost) {
        best_cost = total;
        best = Plan{plan.domain, std::move(used), total};
      }
    }
    statement.RollbackTo(mark);
  }
  if (!best) return SearchResult::kNoFit;

  std::vector<Candidate> victims = best->victims;
  // Victims on nodes the gang does not land on free nothing it uses (unless
  // its quota needed them): give them all back at once if the gang still fits.
  if (TryVictims(best->domain, victims, false, nullptr)) {
    std::set<model::NodeId> landing;
    for (const model::TaskPlacement& task : placement_) landing.insert(task.node);
    statement.RollbackTo(mark);
    std::vector<Candidate> near;
    for (const Candidate& c : victims) {
      const auto& tasks = s_.state().job(c.job).placements;
      if (std::any_of(tasks.begin(), tasks.end(), [&](const model::TaskPlacement& t) { return landing.contains(t.node); })) {
        near.push_back(c);
      }
    }
    if (near.size() < victims.size() && TryVictims(best->domain, near, false, nullptr)) victims = std::move(near);
  }
  statement.RollbackTo(mark);
  // Give back victims the gang does not need, most expensive first.
  constexpr std::size_t kMaxPrunedVictims = 64;  // pruning costs one placement per victim per round
  for (std::size_t i = victims.size(); victims.size() <= kMaxPrunedVictims && i-- > 0 && victims.size() > 1;) {
    std::vector<Candidate> without = victims;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (TryVictims(best->domain, without, false, nullptr)) victims = std::move(without);
    statement.RollbackTo(mark);
  }
  // Apply for real: evictions recorded, then the preemptor's bind.
  for (const Candidate& c : victims) s_.Evict(c.job, preemptor_, reason_);
  if (s_.plugins().admission->Admit(job_, s_.state().queues()) || !PlaceWithinQuota(best->domain)) {
    statement.RollbackTo(mark);  // cannot happen when costs and state are deterministic; stay safe
    s_.result().evictions.resize(s_.result().evictions.size() - victims.size());
    return SearchResult::kNoFit;
  }
  s_.Bind(preemptor_, std::move(placement_));
  return SearchResult::kPlaced;
}

}  // namespace

SearchResult EvictAndPlace(Session& session, JobId preemptor, const VictimFilter& eligible, EvictReason reason) {
  return Search(session, preemptor, eligible, reason).Run();
}

}  // namespace tessera::sched
