// What a task group asks of the container its tasks run in (docs/containers.md):
// the image, when to pull it, what of the node it sees, and who it runs as.
// A group without an image runs its tasks as host processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::model {

// Kubernetes' imagePullPolicy, with its names.
enum class PullPolicy {
  kIfNotPresent,  // a cached image is used as is, without asking the registry
  kAlways,        // asks the registry every time; unpacks again only when the digest changed
  kNever,         // only a cached image; NotFound otherwise
};
std::string_view ToString(PullPolicy policy);
std::optional<PullPolicy> ParsePullPolicy(std::string_view name);

// What the scheduler knows an image by: a 64-bit hash (FNV-1a) of its
// canonical reference, never 0. Nodes list the keys of the images they hold;
// placement prefers them for a task of that image (a pull saved). A rare
// collision only misplaces that preference.
std::uint64_t ImageKey(std::string_view canonical_reference);

// A path of the node bound into the container (a dataset, the checkpoint
// directory): read-only unless the spec says otherwise.
struct HostMount {
  std::string host_path;   // absolute, on the node
  std::string mount_path;  // absolute, in the container
  bool read_only = true;
};

struct TaskContainer {
  std::string image;  // canonical (model/image_reference.h); empty: a host process
  PullPolicy pull_policy = PullPolicy::kIfNotPresent;
  std::vector<HostMount> mounts;
  std::int64_t shm_bytes = 0;  // /dev/shm's size; 0: the runtime's default (64 MiB)
  // uid and gid to run as; absent: the image's user.
  std::optional<std::uint32_t> uid, gid;

  bool enabled() const { return !image.empty(); }
};

}  // namespace tessera::model
