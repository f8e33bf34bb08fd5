#include "spec/task_container_yaml.h"

#include <charconv>
#include <set>
#include <string>

#include "model/image_reference.h"

namespace tessera::spec {
namespace {

constexpr std::uint32_t kMaxId = 0x7fffffff;  // uids above are not portable (and -1 means "unchanged")

std::optional<std::uint32_t> ParseId(std::string_view text) {
  std::uint32_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id > kMaxId) return std::nullopt;
  return id;
}

// "uid" or "uid:gid", numbers only: the node need not know the image's user names.
Status ReadUser(const YamlValue& value, model::TaskContainer* out) {
  Result<std::string> text = value.String();
  if (!text.ok()) return text.status();
  const std::size_t colon = text->find(':');
  const std::optional<std::uint32_t> uid = ParseId(std::string_view(*text).substr(0, colon));
  const std::optional<std::uint32_t> gid =
      colon == std::string::npos ? uid : ParseId(std::string_view(*text).substr(colon + 1));
  if (!uid || !gid) return value.Error("'" + *text + "' is not UID or UID:GID (numbers, as in \"1000:1000\")");
  out->uid = uid;
  out->gid = gid;
  return Status::Ok();
}

Status ReadAbsolutePath(const YamlMap& map, std::string_view key, std::string* out) {
  TESSERA_RETURN_IF_ERROR(map.ReadString(key, out));
  if (out->front() != '/') return map.Get(key)->Error("must be an absolute path, got '" + *out + "'");
  return Status::Ok();
}

Status ReadMounts(const YamlValue& value, model::TaskContainer* out) {
  Result<std::vector<YamlValue>> items = value.Items();
  if (!items.ok()) return items.status();
  std::set<std::string> targets;
  for (const YamlValue& item : *items) {
    Result<YamlMap> map = YamlMap::Read(item, {"hostPath", "mountPath", "readOnly"}, {"hostPath", "mountPath"});
    if (!map.ok()) return map.status();
    model::HostMount mount;
    TESSERA_RETURN_IF_ERROR(ReadAbsolutePath(*map, "hostPath", &mount.host_path));
    TESSERA_RETURN_IF_ERROR(ReadAbsolutePath(*map, "mountPath", &mount.mount_path));
    TESSERA_RETURN_IF_ERROR(map->ReadBool("readOnly", &mount.read_only));
    if (mount.mount_path == "/") return map->Get("mountPath")->Error("cannot mount over the container's root");
    if (!targets.insert(mount.mount_path).second) {
      return map->Get("mountPath")->Error("'" + mount.mount_path + "' is mounted twice in this task");
    }
    out->mounts.push_back(std::move(mount));
  }
  return Status::Ok();
}

}  // namespace

Status ParseTaskContainer(const YamlMap& task, model::TaskContainer* out) {
  const std::optional<YamlValue> image = task.Find("image");
  if (!image) {
    for (const std::string_view field : kTaskContainerFields) {
      if (task.Has(field)) {
        return task.Get(field)->Error(std::string(field) + " applies to a container, but the task names no image (it runs as a host process)");
      }
    }
    return Status::Ok();
  }
  Result<std::string> text = image->String();
  if (!text.ok()) return text.status();
  Result<model::ImageReference> reference = model::ParseImageReference(*text);
  if (!reference.ok()) return image->Error(reference.status().message());
  out->image = reference->Canonical();
  if (const std::optional<YamlValue> policy = task.Find("imagePullPolicy")) {
    Result<std::string> name = policy->String();
    if (!name.ok()) return name.status();
    const std::optional<model::PullPolicy> parsed = model::ParsePullPolicy(*name);
    if (!parsed) return policy->Error("'" + *name + "' is not one of: IfNotPresent, Always, Never");
    out->pull_policy = *parsed;
  }
  if (const std::optional<YamlValue> mounts = task.Find("mounts")) TESSERA_RETURN_IF_ERROR(ReadMounts(*mounts, out));
  TESSERA_RETURN_IF_ERROR(task.ReadBytes("shmSize", &out->shm_bytes));
  if (task.Has("shmSize") && out->shm_bytes <= 0) return task.Get("shmSize")->Error("must be positive");
  if (const std::optional<YamlValue> user = task.Find("user")) TESSERA_RETURN_IF_ERROR(ReadUser(*user, out));
  return Status::Ok();
}

}  // namespace tessera::spec
