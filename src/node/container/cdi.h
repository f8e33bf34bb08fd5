// GPUs into containers through the Container Device Interface
// (github.com/cncf-tags/container-device-interface, SPEC.md): what
// `nvidia-ctk cdi generate` writes to /etc/cdi or /var/run/cdi, read here
// and applied to a task's container for the GPUs it holds.
//
// A spec names a kind ("nvidia.com/gpu"), edits every device of it needs
// (the driver's libraries and binaries mounted, /dev/nvidiactl, hooks that
// refresh the linker cache) and its devices, each with edits of its own
// (/dev/nvidiaN). A device is asked for by any of its names: nvidia-ctk
// names GPUs by index ("0"), by UUID ("GPU-...") and MIG devices as "0:1" or
// "MIG-..." as its --device-name-strategy says; the agent asks by UUID first
// and then by index, so either strategy works.
//
// Specs are JSON or YAML. A file that cannot be read or is not a valid spec
// is skipped, and the reason kept for the agent's log; two specs of one kind
// naming the same device is an error for that device (CDI's rule), said when
// it is asked for.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "node/container/oci_config.h"

namespace tessera::node {

inline constexpr std::string_view kGpuKind = "nvidia.com/gpu";

// The edits a spec or a device makes to a container.
struct ContainerEdits {
  std::vector<std::string> env;  // "NAME=value"
  std::vector<DeviceNode> device_nodes;
  std::vector<BindMount> mounts;
  std::vector<OciHook> hooks;

  void Add(const ContainerEdits& other);
};

struct CdiSpec {
  std::string source;  // the file it came from
  std::string kind;
  ContainerEdits edits;  // for every device of the spec
  std::map<std::string, ContainerEdits> devices;
};

// Parses one spec file's text; errors name `source` and the field.
Result<CdiSpec> ParseCdiSpec(std::string_view text, const std::string& source);

class CdiRegistry {
 public:
  // Every *.json, *.yaml and *.yml in `dirs` (missing directories are fine);
  // files that fail are skipped and said in `problems`.
  static CdiRegistry Load(const std::vector<std::string>& dirs, std::vector<std::string>* problems);
  void Add(CdiSpec spec) { specs_.push_back(std::move(spec)); }

  // The edits for one device of `kind` found by the first of `names` any
  // spec has; NotFound naming the device and where specs were looked for.
  Result<ContainerEdits> Device(std::string_view kind, const std::vector<std::string>& names) const;
  std::size_t size() const { return specs_.size(); }
  bool HasKind(std::string_view kind) const {
    return std::any_of(specs_.begin(), specs_.end(), [&](const CdiSpec& s) { return s.kind == kind; });
  }

 private:
  std::vector<CdiSpec> specs_;
  std::vector<std::string> dirs_;
};

// A CDI spec for fake GPUs (node/gpu/fake_gpus.h): each GPU a device named
// by its index and UUID, with a /dev/nvidiaN that is the null device (1:3),
// so a task can open it; for all of them /dev/nvidiactl likewise, the
// variable TESSERA_CDI_FAKE=1, and `driver_file` mounted read-only at
// /usr/local/tessera-fake-driver/version. So CI runs the whole CDI path.
CdiSpec FakeGpuCdiSpec(const std::vector<std::pair<int, std::string>>& gpus, const std::string& driver_file);

}  // namespace tessera::node
