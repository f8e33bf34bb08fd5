// Job arrays in the control plane (model/job_array.h): what "12[3]" names,
// the records of elements as the cycle spawns them, cancelling an element
// that has not started, and the end of an array once its elements' states
// end it.
#include "controlplane/control_plane.h"
#include "controlplane/record_codecs.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

// An element's record before it runs: its array's owner, queue and times.
JobRecord ElementRecord(model::JobId parent, const JobRecord& array) {
  JobRecord record;
  record.user = array.user;
  record.queue = array.queue;
  record.submit_dir = array.submit_dir;
  record.submit_ms = array.submit_ms;
  record.array_parent = parent;
  return record;
}

bool Ended(model::JobState state) { return state != model::JobState::kPending && state != model::JobState::kRunning; }

// "85 succeeded, 2 failed, 13 cancelled": how the elements of an array that
// ended by itself ended (every one of them exists by then).
std::string EndedCounts(const model::Job& parent) {
  const model::ArrayProgress& p = parent.array_progress;
  std::string text;
  for (const auto& [count, what] : {std::pair{p[model::JobState::kSucceeded], "succeeded"},
                                    std::pair{p[model::JobState::kFailed], "failed"},
                                    std::pair{p[model::JobState::kCancelled], "cancelled"}}) {
    if (count > 0) text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  }
  return text;
}

}  // namespace

Result<ControlPlane::NamedJob> ControlPlane::Resolve(const JobRef& ref) {
  if (FindRecord(ref.id) == nullptr) return NoJob(ref.id);
  const model::JobId id(static_cast<std::int32_t>(ref.id));
  if (!ref.index) return NamedJob{id, true, {}, -1};
  const model::Job& job = state_->job(id);
  if (!job.is_array_parent) return NotFound("job " + std::to_string(ref.id) + " is not an array: it has no element " + ref.Text());
  const std::optional<std::int32_t> position = job.array->PositionOf(*ref.index);
  if (!position) {
    return NotFound("array " + std::to_string(ref.id) + " has no index " + std::to_string(*ref.index) + " (its indices: " +
                    job.array->Describe() + ")");
  }
  const model::JobId element = model::ArrayElementId(id, *position);
  return NamedJob{element, state_->jobs().contains(element), id, *position};
}

json ControlPlane::UnstartedElementJson(const NamedJob& named) const {
  const model::Job& parent = state_->job(named.parent);
  model::Job element = model::ArrayElement(parent, named.position);
  JobRecord record = ElementRecord(named.parent, records_.at(named.parent));
  if (Ended(parent.state)) {
    element.state = model::JobState::kCancelled;
    record.message = "never started: its array ended first";
  } else {
    record.message = "not started yet: an array starts its elements in index order, as capacity and its limit allow";
  }
  return JobDocument(named.id, element, record);
}

void ControlPlane::CancelUnstarted(const NamedJob& named, const std::string& message) {
  const model::JobState before = state_->job(named.parent).state;
  state_.CancelUnstarted(named.parent, named.position);
  JobRecord record = ElementRecord(named.parent, records_.at(named.parent));
  record.end_ms = NowMs();
  record.end_commit = commits_submitted_ + 1;
  record.message = message;
  records_.Add(named.id, std::move(record));
  Emit("JobCancelled", named.id.value(), "", message);
  PersistJob(named.id);
  ArrayFollowed(named.parent, before);
}

void ControlPlane::AddElementRecords(const std::vector<std::pair<model::JobId, model::JobId>>& spawned) {
  for (const auto& [parent, element] : spawned) {
    records_.Add(element, ElementRecord(parent, records_.at(parent)));
    // A bound element is written with its run; one evicted in the cycle
    // that spawned it waits, and is written as it waits.
    if (state_->job(element).state != model::JobState::kRunning) PersistJob(element);
  }
}

void ControlPlane::ArrayFollowed(model::JobId parent, model::JobState before) {
  const model::Job& array = state_->job(parent);
  if (array.state == before) return;
  JobRecord& record = records_.at(parent);
  if (Ended(array.state) && record.end_ms == 0) {  // not ended by a cancel, which did all this
    record.end_ms = NowMs();
    record.end_commit = commits_submitted_ + 1;
    ended_.push_back(parent);
    record.message = "its elements ended: " + EndedCounts(array);
    const bool succeeded = array.state == model::JobState::kSucceeded;
    Emit(succeeded ? "JobSucceeded" : array.state == model::JobState::kFailed ? "JobFailed" : "JobCancelled", parent.value(), "",
         record.message);
    RequestCycle();  // jobs that depend on it may start
  }
  PersistJob(parent);
}

std::vector<model::JobId> ControlPlane::ElementsOf(model::JobId parent) const {
  std::vector<model::JobId> elements;
  for (std::int32_t position = 0; position < state_->job(parent).array->size(); ++position) {
    const model::JobId element = model::ArrayElementId(parent, position);
    if (records_.contains(element)) elements.push_back(element);
  }
  return elements;
}

}  // namespace tessera::controlplane
