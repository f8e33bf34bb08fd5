// What the node agent knows about its GPUs, and where it learns it from.
//
// A GpuProvider answers three questions: which GPUs are here (Discover), how
// busy are they (Sample, DCGM-like telemetry), and what went wrong since the
// last look (PollFaults: Xid errors and ECC events). There are two providers:
//
//   OpenNvml      the real one. NVML is loaded with dlopen at run time, so the
//                 agent builds and runs on machines without the NVIDIA driver;
//                 there OpenNvml answers NotFound and the agent may fall back
//                 to a fake. nvml_provider.h says how each field is obtained.
//   LoadFakeGpus  a fake described in a small YAML file (fake_gpu_provider.h
//   MakeFakeGpus  has the format), or built from a FakeGpuSpec in memory, for
//                 `tessera up` on a laptop and for tests: GPUs, memory, NVLink
//                 islands, NUMA nodes, telemetry and faults injected on a timer
//                 or from a file appended to while the agent runs.
//
// GpuInfo.index is the GPU's position in NVML's enumeration, which is PCI bus
// order. CUDA numbers GPUs the same way only under CUDA_DEVICE_ORDER=PCI_BUS_ID,
// so whoever sets CUDA_VISIBLE_DEVICES from these indexes sets that too (or
// passes the UUIDs instead). NVML itself ignores CUDA_VISIBLE_DEVICES.
//
// Providers report; they do not judge. Whether an Xid 79 or a double-bit ECC
// error makes a GPU unschedulable is the agent's policy. `healthy` is false
// only when the provider cannot talk to the GPU at all.
//
// A provider is used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tessera::node {

// A MIG device of a GPU in MIG mode.
struct MigDeviceInfo {
  std::string profile;  // "1g.10gb", named as NVIDIA's device plugin names it (MigProfileName)
  std::string uuid;     // "MIG-..."
};

struct GpuInfo {
  int index = 0;      // 0..n-1, the CUDA_VISIBLE_DEVICES index (see above)
  std::string uuid;   // "GPU-..." as NVML reports it
  std::string model;  // the scheduler's short model name: ShortModelName(name)
  std::string name;   // full device name, "NVIDIA H100 80GB HBM3"
  std::int64_t memory_bytes = 0;
  std::string pci_bus_id;         // as NVML writes it: "00000000:17:00.0"
  int numa_node = 0;              // the CPUs' NUMA node nearest the GPU; 0 when unknown
  int nvlink_domain = 0;          // see AssignNvlinkDomains
  std::vector<int> nvlink_peers;  // indexes one NVLink hop away (directly or via an NVSwitch), ascending
  bool healthy = true;            // false when the provider cannot query the GPU
  std::string fabric_domain{};    // the multi-node NVLink domain (FabricDomain); empty: none
  std::vector<MigDeviceInfo> mig{};  // in MIG mode: its devices; empty: not in MIG mode
};

// Telemetry, as DCGM's basic fields. A value the GPU does not report is 0.
struct GpuSample {
  int index = 0;
  double utilization_percent = 0;  // share of the last sample period a kernel ran
  std::int64_t memory_used_bytes = 0;
  double temperature_c = 0;
  double power_watts = 0;
};

enum class GpuFaultKind { kXid, kEccDoubleBit, kEccSingleBit };

struct GpuFault {
  int index = 0;
  GpuFaultKind kind = GpuFaultKind::kXid;
  std::int64_t code = 0;  // the Xid number; 0 for ECC events
  std::string detail{};   // for people: "Xid 79: GPU has fallen off the bus"
};

class GpuProvider {
 public:
  virtual ~GpuProvider() = default;
  // One line for logs: "NVML, driver 550.54.15, 8 GPUs" or
  // "fake GPUs from node.yaml: 8 x H100 80Gi".
  virtual std::string Describe() const = 0;
  virtual bool fake() const = 0;
  virtual Result<std::vector<GpuInfo>> Discover() = 0;
  virtual Result<std::vector<GpuSample>> Sample() = 0;  // one per GPU, in index order
  // Faults since the last call, oldest first; never blocks.
  virtual std::vector<GpuFault> PollFaults() = 0;
  // Whether the GPU answers as a working device does (the agent's check before
  // it returns a GPU to service). A fake GPU fails it once it has reported an
  // Xid 79, as a GPU that fell off the bus does on NVML.
  virtual Status CheckHealth(int index) = 0;
};

// NVML loaded with dlopen("libnvidia-ml.so.1"). NotFound when the library or
// the kernel driver is absent (the message names the library and says why);
// FailedPrecondition when a driver is there but unusable (too old to export a
// required function, no permission, ...).
Result<std::unique_ptr<GpuProvider>> OpenNvml();

// A fault a fake delivers once `after` has passed since the fake was made.
struct FakeFault {
  GpuFault fault;
  Seconds after = 0;
};

// What a fake looks like; LoadFakeGpus reads one from a file.
struct FakeGpuSpec {
  int count = 8;
  std::string model = "H100";
  std::int64_t memory_bytes = std::int64_t{80} << 30;
  int gpus_per_nvlink_domain = 8;              // 0 or 1: no NVLink; 4 with 8 GPUs: two islands
  int numa_nodes = 2;                          // GPUs are split among them in index order
  std::array<unsigned char, 16> fabric_cluster_uuid{};  // all GPUs in this fabric clique (all zeros: none)...
  unsigned int fabric_clique = 0;                       // ...as NVML's fabric information reports it
  double utilization_percent = 0;              // reported by Sample() for every GPU...
  std::map<int, double> utilization_by_gpu{};  // ...but those listed here
  std::vector<std::vector<std::string>> mig{};  // by GPU: its MIG devices' profiles (empty or absent: not in MIG mode)
  std::vector<FakeFault> faults{};
  std::string label = "fake";  // names the fake in Describe and seeds its UUIDs: one per node
  std::string fault_file{};    // read by PollFaults when not empty (fake_gpu_provider.h)
};
// ({} on the members above lets FakeGpuSpec{.count = 4} compile without
// -Wmissing-field-initializers.)

// Telemetry of a fake GPU at utilization u percent: memory used u% of memory,
// 30 + 0.4u degrees C, 70 + 6u watts.
//
// `clock` measures the faults' delays; null means the system's steady clock.
// A clock given must outlive the provider. MakeFakeGpus trusts its spec's
// fault GPU indexes to be in range; ParseFakeGpuSpec checks a file's.
Result<std::unique_ptr<GpuProvider>> LoadFakeGpus(const std::string& path, const Clock* clock = nullptr);
std::unique_ptr<GpuProvider> MakeFakeGpus(const FakeGpuSpec& spec, const Clock* clock = nullptr);

// --- shared by the providers ----------------------------------------------------

// The scheduler's model name from NVML's device name: vendor and brand words
// (NVIDIA, Tesla, GeForce, Quadro) and form-factor suffixes go; "RTX"/"GTX"/
// "TITAN" join the word after them. "NVIDIA H100 80GB HBM3" -> "H100",
// "NVIDIA A100-SXM4-80GB" -> "A100", "NVIDIA GeForce RTX 4090" -> "RTX4090".
std::string ShortModelName(std::string_view name);

// The name of a multi-node NVLink domain (an NVL72 rack) as NVML's fabric
// information gives it: "fabric-" + the cluster UUID in hex + "." + the clique
// id. Empty when the UUID is all zeros (a GPU in no fabric).
std::string FabricDomain(std::span<const unsigned char, 16> cluster_uuid, unsigned int clique);

// A MIG device's profile name as NVIDIA's device plugin and nvidia-smi write
// it, from what NVML tells of the device: "1g.10gb", or "1c.2g.20gb" where the
// compute instance has fewer slices than its GPU instance. The gigabytes are
// the device's share of its GPU's memory, rounded up to an eighth, times the
// GPU's memory in whole GiB rounded up, rounded to the nearest (go-nvlib's
// rule), so a 9,856 MiB device of an 81,559 MiB H100 is "10gb".
std::string MigProfileName(int compute_slices, int gpu_slices, std::int64_t device_bytes, std::int64_t gpu_bytes);

// The node's multi-node NVLink domain: the fabric domain all its GPUs with
// one share; empty when none has one or they disagree (a GPU whose fabric
// registration failed).
std::string NodeFabricDomain(const std::vector<GpuInfo>& gpus);

// Sets each GPU's nvlink_domain from the nvlink_peers graph: its connected
// components, numbered from 0 in order of their lowest index. A GPU without
// NVLink is a component of its own. Peers must be valid indexes into `gpus`.
void AssignNvlinkDomains(std::vector<GpuInfo>& gpus);

// "xid", "ecc-double-bit", "ecc-single-bit": the fake file's words, also used
// in JSON output.
std::string_view FaultKindName(GpuFaultKind kind);

// A fault's detail when its source gives none: "Xid 79: GPU has fallen off the
// bus" (the meaning only for the Xids operators meet most), "double-bit ECC error".
std::string FaultDetail(GpuFaultKind kind, std::int64_t code);

}  // namespace tessera::node
