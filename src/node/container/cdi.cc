#include "node/container/cdi.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace tessera::node {
namespace {

namespace fs = std::filesystem;

// A spec that is not what CDI says; its message names the file and the field.
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The OCI hook stages a CDI hook may name.
constexpr std::string_view kHookStages[] = {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"};

std::vector<std::string> Strings(const YAML::Node& node, const std::string& where) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsSequence()) throw SpecError(where + ": expected a list of strings");
  for (const YAML::Node& item : node) out.push_back(item.as<std::string>());
  return out;
}

std::string Text(const YAML::Node& node, const char* key, const std::string& where, bool required = true) {
  const YAML::Node value = node[key];
  if (!value) {
    if (required) throw SpecError(where + "." + key + ": required");
    return "";
  }
  return value.as<std::string>();
}

// A device node as the spec writes it; type, major and minor from the host's
// node when the spec leaves them out (nvidia-ctk does).
DeviceNode ReadDeviceNode(const YAML::Node& node, const std::string& where) {
  DeviceNode d;
  d.path = Text(node, "path", where);
  const std::string host = node["hostPath"] ? node["hostPath"].as<std::string>() : d.path;
  if (node["major"] && node["minor"]) {
    d.major = node["major"].as<std::int64_t>();
    d.minor = node["minor"].as<std::int64_t>();
    const std::string type = node["type"] ? node["type"].as<std::string>() : "c";
    if (type != "c" && type != "b" && type != "u") throw SpecError(where + ".type: '" + type + "' is not one of: c, b, u");
    d.type = type == "b" ? 'b' : 'c';
  } else {
    struct stat st {};
    if (stat(host.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
      throw SpecError(where + ": " + host + " is not a device node on this machine, and the spec gives no major/minor");
    }
    d.type = S_ISBLK(st.st_mode) ? 'b' : 'c';
    d.major = major(st.st_rdev);
    d.minor = minor(st.st_rdev);
  }
  if (node["fileMode"]) d.file_mode = node["fileMode"].as<std::uint32_t>();
  return d;
}

ContainerEdits ReadEdits(const YAML::Node& node, const std::string& where) {
  ContainerEdits edits;
  if (!node) return edits;
  if (!node.IsMap()) throw SpecError(where + ": expected a mapping");
  edits.env = Strings(node["env"], where + ".env");
  const YAML::Node nodes = node["deviceNodes"];
  for (std::size_t i = 0; nodes && i < nodes.size(); ++i) {
    edits.device_nodes.push_back(ReadDeviceNode(nodes[i], where + ".deviceNodes[" + std::to_string(i) + "]"));
  }
  const YAML::Node mounts = node["mounts"];
  for (std::size_t i = 0; mounts && i < mounts.size(); ++i) {
    const std::string at = where + ".mounts[" + std::to_string(i) + "]";
    const std::vector<std::string> options = Strings(mounts[i]["options"], at + ".options");
    const bool read_only = std::find(options.begin(), options.end(), "ro") != options.end();
    edits.mounts.push_back({Text(mounts[i], "hostPath", at), Text(mounts[i], "containerPath", at), read_only});
  }
  const YAML::Node hooks = node["hooks"];
  for (std::size_t i = 0; hooks && i < hooks.size(); ++i) {
    const std::string at = where + ".hooks[" + std::to_string(i) + "]";
    OciHook hook;
    hook.stage = Text(hooks[i], "hookName", at);
    if (std::find(std::begin(kHookStages), std::end(kHookStages), hook.stage) == std::end(kHookStages)) {
      throw SpecError(at + ".hookName: '" + hook.stage + "' is not an OCI hook stage");
    }
    hook.path = Text(hooks[i], "path", at);
    hook.args = Strings(hooks[i]["args"], at + ".args");
    hook.env = Strings(hooks[i]["env"], at + ".env");
    if (hooks[i]["timeout"]) hook.timeout_s = hooks[i]["timeout"].as<int>();
    edits.hooks.push_back(std::move(hook));
  }
  return edits;
}

}  // namespace

void ContainerEdits::Add(const ContainerEdits& other) {
  env.insert(env.end(), other.env.begin(), other.env.end());
  device_nodes.insert(device_nodes.end(), other.device_nodes.begin(), other.device_nodes.end());
  mounts.insert(mounts.end(), other.mounts.begin(), other.mounts.end());
  hooks.insert(hooks.end(), other.hooks.begin(), other.hooks.end());
}

Result<CdiSpec> ParseCdiSpec(std::string_view text, const std::string& source) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return InvalidArgument(source + ": a CDI spec is a mapping");
    CdiSpec spec;
    spec.source = source;
    Text(root, "cdiVersion", source);
    spec.kind = Text(root, "kind", source);
    const std::size_t slash = spec.kind.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == spec.kind.size()) {
      return InvalidArgument(source + ": kind: '" + spec.kind + "' is not VENDOR/CLASS");
    }
    spec.edits = ReadEdits(root["containerEdits"], source + ": containerEdits");
    const YAML::Node devices = root["devices"];
    if (!devices || !devices.IsSequence()) return InvalidArgument(source + ": devices: required, a list");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const std::string at = source + ": devices[" + std::to_string(i) + "]";
      const std::string name = Text(devices[i], "name", at);
      if (!spec.devices.emplace(name, ReadEdits(devices[i]["containerEdits"], at + ".containerEdits")).second) {
        return InvalidArgument(at + ".name: device '" + name + "' is named twice");
      }
    }
    return spec;
  } catch (const SpecError& e) {
    return InvalidArgument(e.what());
  } catch (const YAML::Exception& e) {  // malformed text, or a value of the wrong type
    return InvalidArgument(source + ": " + e.what());
  }
}

CdiRegistry CdiRegistry::Load(const std::vector<std::string>& dirs, std::vector<std::string>* problems) {
  CdiRegistry registry;
  registry.dirs_ = dirs;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".json" || ext == ".yaml" || ext == ".yml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::ifstream in(file);
      std::stringstream text;
      text << in.rdbuf();
      Result<CdiSpec> spec = in ? ParseCdiSpec(text.str(), file.string()) : Result<CdiSpec>(NotFound(file.string() + ": cannot be read"));
      if (!spec.ok()) {
        problems->push_back("CDI spec skipped: " + spec.status().message());
        continue;
      }
      registry.specs_.push_back(std::move(*spec));
    }
  }
  return registry;
}

Result<ContainerEdits> CdiRegistry::Device(std::string_view kind, const std::vector<std::string>& names) const {
  for (const std::string& name : names) {
    const CdiSpec* found = nullptr;
    for (const CdiSpec& spec : specs_) {
      if (spec.kind != kind || !spec.devices.contains(name)) continue;
      if (found != nullptr) {
        return FailedPrecondition("CDI device " + std::string(kind) + "=" + name + " is in two specs: " + found->source + " and " + spec.source);
      }
      found = &spec;
    }
    if (found == nullptr) continue;
    ContainerEdits edits = found->edits;
    edits.Add(found->devices.at(name));
    return edits;
  }
  std::string where;
  for (const std::string& dir : dirs_) where += (where.empty() ? "" : ", ") + dir;
  return NotFound("no CDI spec names " + std::string(kind) + "=" + (names.empty() ? std::string("?") : names.front()) +
                  " (looked in " + where + "; `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` writes one)");
}

CdiSpec FakeGpuCdiSpec(const std::vector<std::pair<int, std::string>>& gpus, const std::string& driver_file) {
  CdiSpec spec;
  spec.source = "the agent's fake GPUs";
  spec.kind = std::string(kGpuKind);
  spec.edits.env = {"TESSERA_CDI_FAKE=1"};
  spec.edits.device_nodes.push_back({"/dev/nvidiactl", 'c', 1, 3, 0666});
  spec.edits.mounts.push_back({driver_file, "/usr/local/tessera-fake-driver/version", true});
  for (const auto& [index, uuid] : gpus) {
    ContainerEdits device;
    device.device_nodes.push_back({"/dev/nvidia" + std::to_string(index), 'c', 1, 3, 0666});
    spec.devices[std::to_string(index)] = device;
    spec.devices[uuid] = device;
  }
  return spec;
}

}  // namespace tessera::node
