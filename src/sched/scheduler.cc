#include "sched/scheduler.h"

#include <cstdio>
#include <cstdlib>

#include "base/quantity.h"
#include "model/invariants.h"
#include "sched/registry.h"

namespace tessera::sched {

Result<Scheduler> Scheduler::Create(const SchedulerConfig& config) {
  Scheduler scheduler;
  auto plugins = BuildPlugins(config);
  if (!plugins.ok()) return plugins.status();
  auto actions = BuildActions(config);
  if (!actions.ok()) return actions.status();
  scheduler.config_ = std::make_unique<SchedulerConfig>(config);
  scheduler.plugins_ = std::make_unique<Plugins>(std::move(plugins).value());
  scheduler.actions_ = std::move(actions).value();
  return scheduler;
}

CycleResult Scheduler::RunCycle(SchedulerState& state, Time now, Binder& binder) {
  if (last_decay_ != kNever) state.queues().Decay(now - last_decay_, config_->fair_share_half_life);
  last_decay_ = now;
  plugins_->job_order->Learn(state.history());
  Session session(state, *plugins_, *config_, now);
  for (const auto& action : actions_) action->Run(session);
  session.statement().Commit(binder);
#ifndef NDEBUG
  // Debug builds check every cycle; tests check explicitly in every build.
  if (const auto problems = model::CheckInvariants(state.cluster(), state.jobs().all(), state.queues()); !problems.empty()) {
    for (const std::string& p : problems) std::fprintf(stderr, "tessera: invariant violated: %s\n", p.c_str());
    std::abort();
  }
#endif
  return std::move(session.result());
}

std::string Explain(const Outcome& outcome, const SchedulerState& state) {
  const auto job_name = [&](std::int32_t id) {
    return id >= 0 && state.jobs().contains(model::JobId(id)) ? state.job(model::JobId(id)).name : std::string("?");
  };
  const auto queue = [&]() -> const model::Queue& { return state.queues().queue(model::QueueId(outcome.detail)); };
  switch (outcome.reason) {
    case WaitReason::kNone:
      return outcome.backfilled ? "placed (backfilled)" : outcome.preempted_for ? "placed (after eviction)" : "placed";
    case WaitReason::kCapacity:
      return "waiting: not enough free capacity that satisfies the job's resources and topology";
    case WaitReason::kReservation:
      return "waiting: would delay the gang '" + job_name(outcome.detail) + "' that holds the reservation";
    case WaitReason::kQueueLimit:
      return "waiting: queue '" + queue().path + "' is at its limit of " + FormatMilli(queue().limit_milli) + " GPUs";
    case WaitReason::kUserLimit: {
      const std::string& user = state.job(outcome.job).user;
      return "waiting: " + (user.empty() ? std::string("its user") : "user " + user) + " holds " +
             FormatMilli(queue().UserHeld(user)) + " of the " + FormatMilli(queue().user_limit_milli) + " GPUs queue '" + queue().path +
             "' allows one user";
    }
    case WaitReason::kOverGuarantee:
      return "waiting: non-preemptible jobs must stay within the guarantee of queue '" + queue().path + "' (" +
             FormatMilli(queue().guaranteed_milli) + " GPUs)";
    case WaitReason::kDependency:
      if (outcome.detail < 0) {  // a name no job has (yet): it may still be submitted
        for (const model::Dependency& dep : state.job(outcome.job).depends_on) {
          if (dep.job_id.valid() && !state.jobs().contains(dep.job_id)) {
            return "waiting: depends on job " + std::to_string(dep.job_id.value()) + ", which this server does not know";
          }
          if (!dep.job_id.valid() && !state.jobs().FindByName(dep.job_name).valid()) {
            return "waiting: depends on job '" + dep.job_name + "', which has not been submitted";
          }
        }
      }
      return "waiting: depends on job '" + job_name(outcome.detail) + "'";
    case WaitReason::kBackoff:
      return "waiting: restart backoff, " + std::to_string(outcome.detail) + "s left (spec.restart.backoff)";
    case WaitReason::kDependencyFailed: {
      for (const model::Dependency& dep : state.job(outcome.job).depends_on) {
        const bool same = dep.job_id.valid() ? dep.job_id.value() == outcome.detail : dep.job_name == job_name(outcome.detail);
        if (same && dep.when == model::Dependency::When::kFailed) {
          return "never: depends on job '" + job_name(outcome.detail) + "' failing, and it succeeded";
        }
      }
      return "never: depends on job '" + job_name(outcome.detail) + "', which did not succeed";
    }
    case WaitReason::kArrayLimit:
      return "waiting: " + std::to_string(outcome.detail) + " of its elements are active, as many as its limit allows (%" +
             std::to_string(outcome.detail) + ")";
    case WaitReason::kSingleton:
      return "waiting: singleton: job " + std::to_string(outcome.detail) + " of the same name and user has not ended";
    case WaitReason::kInfeasible:
      return "never: " + state.job(outcome.job).never_reason;
  }
  return "?";
}

}  // namespace tessera::sched
