// The queue tree: organisation -> team -> user, each with a guaranteed number of
// GPUs, a hard limit and a fair-share weight.
//
// Quota semantics (docs/scheduling.md has the long form):
//   * guaranteed: GPUs the queue's subtree can always get back. Children's
//     guarantees must fit in their parent's.
//   * limit: GPUs the subtree may never exceed, borrowed or not.
//   * borrowing: a subtree may run above its guarantee on capacity that others
//     leave idle, but only with preemptible jobs; those are the jobs a queue
//     below its guarantee reclaims. Non-preemptible ("pinned") GPUs must fit
//     inside the guarantee, so what is borrowed can always be given back.
//   * weight: divides the queue's dominant share when queues are ordered for
//     fair share, so weight 2 entitles a queue to twice the share of weight 1.
//   * user limit: GPUs the jobs of any one user may hold in the subtree
//     (Slurm's MaxTRESPerUser), so one member cannot take a team's share.
// Usage is kept per subtree (for quotas) and per queue (for its own jobs), plus
// an exponentially decayed average that gives fair share its memory.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "model/job.h"
#include "model/resources.h"

namespace tessera::model {

inline constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max() / 4;

// The path of a queue's parent: "research/nlp" -> "research" -> "" (the root).
std::string ParentQueuePath(std::string_view path);

struct QueueSpec {
  std::string path;                    // "research/nlp/alice"
  std::int64_t guaranteed_milli = 0;   // GPUs in milli-GPUs
  std::int64_t limit_milli = kUnlimited;
  double weight = 1.0;
  std::int64_t user_limit_milli = kUnlimited;  // per user, in the subtree
  // Container rules (docs/containers.md), for the queue and every queue
  // below it: every task must run from an image; a container may run as
  // root (uid 0 is the node's root: there is no user namespace).
  bool require_image = false;
  bool allow_root_containers = false;
};

struct Queue {
  QueueId id;
  QueueId parent;  // invalid for the root
  std::string path;  // "" for the root
  std::int32_t depth = 0;
  std::vector<QueueId> children;
  std::int64_t guaranteed_milli = 0;
  std::int64_t limit_milli = kUnlimited;
  double weight = 1.0;
  std::int64_t user_limit_milli = kUnlimited;
  // State.
  Resources allocated;      // this queue and every queue below it
  std::int64_t pinned_milli = 0;  // GPUs of that held by non-preemptible jobs
  Resources own_allocated;  // jobs submitted to this queue itself
  Resources usage_average;  // decayed average of `allocated`
  // Milli-GPUs each user's jobs hold in the subtree; kept only under a user limit.
  std::unordered_map<std::string, std::int64_t> user_gpu_milli;

  bool has_user_limit() const { return user_limit_milli < kUnlimited; }
  std::int64_t UserHeld(const std::string& user) const {
    auto it = user_gpu_milli.find(user);
    return it == user_gpu_milli.end() ? 0 : it->second;
  }
};

class QueueTree {
 public:
  // Builds the tree; parents named only through a child's path are created with
  // a guarantee equal to their children's sum and no limit.
  static Result<QueueTree> Build(const std::vector<QueueSpec>& specs);
  // One queue, "default", guaranteed the whole cluster.
  static QueueTree Default(std::int64_t cluster_gpu_milli);

  QueueId root() const { return QueueId(0); }
  const Queue& queue(QueueId id) const { return queues_[id.index()]; }
  const std::vector<Queue>& queues() const { return queues_; }
  QueueId Find(std::string_view path) const;  // invalid id when absent

  // Adds (sign +1) or removes (sign -1) resources held by a job of `queue`;
  // a non-preemptible job's GPUs also count as pinned, and under a user
  // limit, against `user`.
  void Charge(QueueId queue, const Resources& held, int sign, bool preemptible = true, const std::string& user = {});
  // Folds the current allocation into the decayed average: after `half_life`
  // seconds an old allocation weighs half as much.
  void Decay(Seconds elapsed, Seconds half_life);
  // Takes the decayed averages of a tree built from the same specs (the
  // server keeps a copy of its state for the scheduling cycle, which decays).
  void CopyUsageAverages(const QueueTree& from);

  // The lowest common ancestor of two queues.
  QueueId CommonAncestor(QueueId a, QueueId b) const;
  // The child of `ancestor` on the path to `queue` (queue itself if it is a child).
  QueueId ChildToward(QueueId ancestor, QueueId queue) const;

 private:
  QueueId Add(std::string path, QueueId parent);
  std::vector<Queue> queues_;
};

}  // namespace tessera::model
