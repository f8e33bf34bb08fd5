#include "model/queue.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/quantity.h"

namespace tessera::model {

std::string ParentQueuePath(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

QueueId QueueTree::Add(std::string path, QueueId parent) {
  Queue q;
  q.id = QueueId(static_cast<std::int32_t>(queues_.size()));
  q.parent = parent;
  q.path = std::move(path);
  if (parent.valid()) {
    q.depth = queues_[parent.index()].depth + 1;
    queues_[parent.index()].children.push_back(q.id);
  }
  queues_.push_back(std::move(q));
  return queues_.back().id;
}

QueueId QueueTree::Find(std::string_view path) const {
  for (const Queue& q : queues_) {
    if (q.path == path) return q.id;
  }
  return QueueId();
}

Result<QueueTree> QueueTree::Build(const std::vector<QueueSpec>& specs) {
  QueueTree tree;
  tree.Add("", QueueId());
  std::map<std::string, const QueueSpec*> declared;
  for (const QueueSpec& spec : specs) {
    if (spec.path.empty() || spec.path.front() == '/' || spec.path.back() == '/' ||
        spec.path.find("//") != std::string::npos) {
      return InvalidArgument("queue '" + spec.path + "': a queue path is names joined by '/', e.g. research/nlp");
    }
    if (!declared.emplace(spec.path, &spec).second) return InvalidArgument("queue '" + spec.path + "' is defined twice");
    if (spec.guaranteed_milli < 0) return InvalidArgument("queue '" + spec.path + "': guaranteed must not be negative");
    if (spec.limit_milli < spec.guaranteed_milli) {
      return InvalidArgument("queue '" + spec.path + "': limit is below its guarantee");
    }
    if (!(spec.weight > 0) || !std::isfinite(spec.weight)) return InvalidArgument("queue '" + spec.path + "': weight must be positive");
    if (spec.user_limit_milli <= 0) return InvalidArgument("queue '" + spec.path + "': userLimit must be above zero");
  }
  // std::map orders "a" before "a/b": parents are created before their children.
  std::map<std::string, bool> implicit;
  for (const auto& [path, spec] : declared) {
    QueueId parent = tree.root();
    std::size_t pos = 0;
    while (true) {
      pos = path.find('/', pos);
      const std::string prefix = path.substr(0, pos);
      QueueId id = tree.Find(prefix);
      if (!id.valid()) {
        id = tree.Add(prefix, parent);
        implicit[prefix] = !declared.contains(prefix);
      }
      parent = id;
      if (pos == std::string::npos) break;
      ++pos;
    }
    Queue& q = tree.queues_[parent.index()];
    q.guaranteed_milli = spec->guaranteed_milli;
    q.limit_milli = spec->limit_milli;
    q.weight = spec->weight;
    q.user_limit_milli = spec->user_limit_milli;
  }
  // Implicit parents guarantee what their children do; deepest first so sums nest.
  std::vector<Queue*> order;
  for (Queue& q : tree.queues_) order.push_back(&q);
  std::sort(order.begin(), order.end(), [](const Queue* a, const Queue* b) { return a->depth > b->depth; });
  for (Queue* q : order) {
    std::int64_t children = 0;
    for (QueueId c : q->children) children += tree.queues_[c.index()].guaranteed_milli;
    if (q->id == tree.root() || implicit[q->path]) {
      q->guaranteed_milli = children;
    } else if (children > q->guaranteed_milli) {
      return InvalidArgument("queue '" + q->path + "': its children are guaranteed " +
                             FormatMilli(children) + " GPUs, more than its own guarantee of " +
                             FormatMilli(q->guaranteed_milli));
    }
  }
  return tree;
}

QueueTree QueueTree::Default(std::int64_t cluster_gpu_milli) {
  return *Build({QueueSpec{"default", cluster_gpu_milli, kUnlimited, 1.0}});
}

void QueueTree::Charge(QueueId queue, const Resources& held, int sign, bool preemptible, const std::string& user) {
  const Resources delta = held * sign;
  queues_[queue.index()].own_allocated += delta;
  for (QueueId q = queue; q.valid(); q = queues_[q.index()].parent) {
    Queue& node = queues_[q.index()];
    node.allocated += delta;
    if (!preemptible) node.pinned_milli += delta.gpu_milli;
    if (node.has_user_limit()) {
      auto it = node.user_gpu_milli.try_emplace(user, 0).first;
      it->second += delta.gpu_milli;
      if (it->second == 0) node.user_gpu_milli.erase(it);
    }
  }
}

void QueueTree::Decay(Seconds elapsed, Seconds half_life) {
  if (elapsed <= 0) return;
  const double keep = half_life > 0 ? std::exp2(-static_cast<double>(elapsed) / static_cast<double>(half_life)) : 0.0;
  const auto blend = [keep](std::int64_t avg, std::int64_t now) {
    return static_cast<std::int64_t>(std::llround(keep * static_cast<double>(avg) + (1.0 - keep) * static_cast<double>(now)));
  };
  for (Queue& q : queues_) {
    q.usage_average = Resources{blend(q.usage_average.gpu_milli, q.allocated.gpu_milli),
                                blend(q.usage_average.gpu_memory, q.allocated.gpu_memory),
                                blend(q.usage_average.cpu_milli, q.allocated.cpu_milli),
                                blend(q.usage_average.memory, q.allocated.memory)};
  }
}

void QueueTree::CopyUsageAverages(const QueueTree& from) {
  for (std::size_t i = 0; i < queues_.size() && i < from.queues_.size(); ++i) queues_[i].usage_average = from.queues_[i].usage_average;
}

QueueId QueueTree::CommonAncestor(QueueId a, QueueId b) const {
  while (queues_[a.index()].depth > queues_[b.index()].depth) a = queues_[a.index()].parent;
  while (queues_[b.index()].depth > queues_[a.index()].depth) b = queues_[b.index()].parent;
  while (a != b) {
    a = queues_[a.index()].parent;
    b = queues_[b.index()].parent;
  }
  return a;
}

QueueId QueueTree::ChildToward(QueueId ancestor, QueueId queue) const {
  QueueId child = queue;
  while (child.valid() && queues_[child.index()].parent != ancestor) child = queues_[child.index()].parent;
  return child;
}

}  // namespace tessera::model
