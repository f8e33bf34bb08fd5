#include "sched/plugins/easy_backfill.h"

#include <algorithm>
#include <bit>

#include "sched/session.h"

namespace tessera::sched {
namespace {
constexpr std::size_t kExactTries = 128;
}

std::optional<Reservation> EasyBackfill::Reserve(Session& session, model::JobId head) {
  SchedulerState& state = session.state();
  const model::Job& gang = state.job(head);
  std::vector<std::pair<Time, model::JobId>> ends;
  for (model::JobId id : state.jobs().running()) {
    const model::Job& job = state.job(id);
    ends.emplace_back(std::max(session.now(), job.start_time + session.Walltime(job)), id);
  }
  std::sort(ends.begin(), ends.end());

  Statement& statement = session.statement();
  const Statement::Checkpoint mark = statement.Mark();
  const std::int64_t need = gang.MinRequest().gpu_milli;
  std::optional<Reservation> reservation;
  std::vector<model::TaskPlacement> placement;
  std::size_t tries = 0;
  for (std::size_t i = 0; i < ends.size() && !reservation; ++i) {
    statement.Evict(ends[i].second, head, EvictReason::kPreempt);  // scratch only: rolled back below
    const model::Resources free = state.cluster().capacity() - state.cluster().allocated();
    if (free.gpu_milli < need) continue;
    const bool last = i + 1 == ends.size();
    if (++tries > kExactTries && !last && !std::has_single_bit(i + 1)) continue;
    placement.clear();
    if (session.plugins().placement->Place(gang, state.cluster(), PlaceOptions{}, placement)) {
      reservation = Reservation{head, ends[i].first, std::vector<std::uint8_t>(state.cluster().nodes().size(), 0)};
      for (const model::TaskPlacement& task : placement) reservation->nodes[task.node.index()] = 1;
    }
  }
  statement.RollbackTo(mark);
  return reservation;
}

}  // namespace tessera::sched
