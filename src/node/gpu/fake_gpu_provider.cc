#include "node/gpu/fake_gpu_provider.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "base/quantity.h"
#include "spec/mig_yaml.h"
#include "spec/yaml_util.h"

namespace tessera::node {
namespace {

using spec::YamlMap;
using spec::YamlValue;

constexpr int kMaxGpus = 1024;
constexpr int kMaxNumaNodes = 64;

// Whole seconds since the clock was made, rounded down, so a fault is never early.
class SteadyClock final : public Clock {
 public:
  Time Now() const override {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// --- parsing ------------------------------------------------------------------

Result<int> GpuIndex(const YamlValue& value, int count) {
  if (count == 0) return value.Error("this fake has no GPUs");
  Result<std::int64_t> index = value.Int(0, count - 1);
  if (!index.ok()) return index.status();
  return static_cast<int>(*index);  // in [0, count), count <= kMaxGpus
}

Result<double> Percent(const YamlValue& value) {
  Result<double> percent = value.Number();
  if (percent.ok() && (*percent < 0 || *percent > 100)) {
    return value.Error("must be a percentage between 0 and 100, got " + value.Describe());
  }
  return percent;
}

Status ReadUtilization(const YamlValue& value, FakeGpuSpec& fake) {
  if (!value.node().IsMap()) {
    Result<double> percent = Percent(value);
    if (!percent.ok()) return percent.status();
    fake.utilization_percent = *percent;
    return Status::Ok();
  }
  TESSERA_RETURN_IF_ERROR(YamlMap::Read(value).status());  // plain keys, none twice
  for (auto it = value.node().begin(); it != value.node().end(); ++it) {
    const YAML::Node key = it->first;  // copies: `it` yields proxies
    const YAML::Node percent_node = it->second;
    Result<int> gpu = GpuIndex(YamlValue(key, value.source(), value.path(), key.Mark()), fake.count);
    if (!gpu.ok()) return gpu.status();
    Result<double> percent =
        Percent(YamlValue(percent_node, value.source(), value.FieldPath(key.Scalar()), percent_node.Mark()));
    if (!percent.ok()) return percent.status();
    fake.utilization_by_gpu[*gpu] = *percent;
  }
  return Status::Ok();
}

Result<FakeFault> ParseFault(const YamlValue& value, int gpu_count) {
  Result<YamlMap> map = YamlMap::Read(value, {"gpu", "kind", "code", "after", "detail"}, {"gpu", "kind"});
  if (!map.ok()) return map.status();
  FakeFault fault;
  Result<int> gpu = GpuIndex(*map->Find("gpu"), gpu_count);
  if (!gpu.ok()) return gpu.status();
  fault.fault.index = *gpu;

  const YamlValue kind_value = *map->Find("kind");
  Result<std::string> kind = kind_value.String();
  if (!kind.ok()) return kind.status();
  bool known = false;
  for (GpuFaultKind candidate : {GpuFaultKind::kXid, GpuFaultKind::kEccDoubleBit, GpuFaultKind::kEccSingleBit}) {
    if (FaultKindName(candidate) == *kind) {
      fault.fault.kind = candidate;
      known = true;
    }
  }
  if (!known) return kind_value.Error("unknown fault kind '" + *kind + "'; use xid, ecc-double-bit or ecc-single-bit");

  TESSERA_RETURN_IF_ERROR(map->ReadInt("code", &fault.fault.code, 0, std::numeric_limits<std::int32_t>::max()));
  TESSERA_RETURN_IF_ERROR(map->ReadDuration("after", &fault.after));
  TESSERA_RETURN_IF_ERROR(map->ReadString("detail", &fault.fault.detail));
  if (fault.fault.detail.empty()) fault.fault.detail = FaultDetail(fault.fault.kind, fault.fault.code);
  return fault;
}

// --- the fake GPUs ----------------------------------------------------------------

std::uint64_t Fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// SplitMix64's finalizer: FNV-1a alone leaves keys that differ in their last
// character with similar high bits.
std::uint64_t Mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// "GPU-" and 32 hex digits grouped as NVML groups them, stable for a label and index.
// "GPU-..." for a GPU, "MIG-..." for a MIG device (`kind`), unique per label and seed.
std::string FakeUuid(const char* kind, const std::string& label, const std::string& seed) {
  const std::uint64_t high = Mix(Fnv1a(label + "#" + seed));
  const std::uint64_t low = Mix(high + 0x9e3779b97f4a7c15ULL);
  const auto hex = [](std::uint64_t bits) { return static_cast<unsigned long long>(bits); };
  char text[48];
  std::snprintf(text, sizeof text, "%s-%08llx-%04llx-%04llx-%04llx-%012llx", kind, hex(high >> 32),
                hex((high >> 16) & 0xffff), hex(high & 0xffff), hex(low >> 48), hex(low & 0xffffffffffffULL));
  return text;
}

// In NVML's form, with bus numbers spread as on a real board; 28 to a PCI domain.
std::string FakeBusId(int index) {
  char text[32];
  std::snprintf(text, sizeof text, "%08X:%02X:00.0", static_cast<unsigned>(index / 28),
                static_cast<unsigned>(0x18 + 8 * (index % 28)));
  return text;
}

std::vector<GpuInfo> MakeGpuInfos(const FakeGpuSpec& spec) {
  const int domain_size = std::max(spec.gpus_per_nvlink_domain, 1);
  const int numa_nodes = std::max(spec.numa_nodes, 1);
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < spec.count; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.uuid = FakeUuid("GPU", spec.label, std::to_string(i));
    const std::vector<std::string> none;
    const std::vector<std::string>& mig = static_cast<std::size_t>(i) < spec.mig.size() ? spec.mig[static_cast<std::size_t>(i)] : none;
    for (std::size_t d = 0; d < mig.size(); ++d) {
      gpu.mig.push_back({mig[d], FakeUuid("MIG", spec.label, std::to_string(i) + "/" + std::to_string(d))});
    }
    gpu.model = spec.model;
    gpu.name = "NVIDIA " + spec.model + " " + FormatBytes(spec.memory_bytes) + " (fake)";
    gpu.memory_bytes = spec.memory_bytes;
    gpu.pci_bus_id = FakeBusId(i);
    gpu.numa_node = i * numa_nodes / spec.count;
    gpu.fabric_domain = FabricDomain(spec.fabric_cluster_uuid, spec.fabric_clique);
    const int first = i / domain_size * domain_size;
    for (int peer = first; peer < std::min(first + domain_size, spec.count); ++peer) {
      if (peer != i) gpu.nvlink_peers.push_back(peer);
    }
    gpus.push_back(std::move(gpu));
  }
  AssignNvlinkDomains(gpus);
  return gpus;
}

class FakeGpuProvider final : public GpuProvider {
 public:
  FakeGpuProvider(const FakeGpuSpec& spec, const Clock* clock)
      : spec_(spec),
        own_clock_(clock == nullptr ? std::make_unique<SteadyClock>() : nullptr),
        clock_(clock != nullptr ? clock : own_clock_.get()),
        start_(clock_->Now()),
        gpus_(MakeGpuInfos(spec)) {
    AddPending(spec.faults);
  }

  std::string Describe() const override {
    return "fake GPUs (" + spec_.label + "): " + std::to_string(spec_.count) + " x " + spec_.model + " " +
           FormatBytes(spec_.memory_bytes);
  }
  bool fake() const override { return true; }
  Result<std::vector<GpuInfo>> Discover() override { return gpus_; }
  Result<std::vector<GpuSample>> Sample() override;
  std::vector<GpuFault> PollFaults() override;
  Status CheckHealth(int index) override {
    if (lost_.contains(index)) return Status(StatusCode::kFailedPrecondition, "GPU " + std::to_string(index) + ": GPU is lost");
    return Status::Ok();
  }

 private:
  void AddPending(const std::vector<FakeFault>& faults);
  void ReadFaultFile();
  Result<std::vector<FakeFault>> ParseFaultLine(const std::string& line, int number) const;

  FakeGpuSpec spec_;
  std::unique_ptr<Clock> own_clock_;  // when the caller gave none
  const Clock* clock_;
  Time start_;
  std::vector<GpuInfo> gpus_;
  std::vector<FakeFault> pending_;      // not yet delivered, ordered by `after` (stable)
  std::streamoff fault_file_read_ = 0;  // bytes of the fault file taken
  int fault_file_lines_ = 0;            // lines taken
  std::set<int> lost_;                  // GPUs that reported an Xid 79: their health check fails
};

void FakeGpuProvider::AddPending(const std::vector<FakeFault>& faults) {
  pending_.insert(pending_.end(), faults.begin(), faults.end());
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const FakeFault& a, const FakeFault& b) { return a.after < b.after; });
}

Result<std::vector<GpuSample>> FakeGpuProvider::Sample() {
  std::vector<GpuSample> samples;
  for (const GpuInfo& gpu : gpus_) {
    const auto listed = spec_.utilization_by_gpu.find(gpu.index);
    const double percent = listed != spec_.utilization_by_gpu.end() ? listed->second : spec_.utilization_percent;
    GpuSample sample;
    sample.index = gpu.index;
    sample.utilization_percent = percent;
    sample.memory_used_bytes = std::llround(static_cast<double>(gpu.memory_bytes) * percent / 100);
    sample.temperature_c = 30 + 0.4 * percent;
    sample.power_watts = 70 + 6 * percent;
    samples.push_back(sample);
  }
  return samples;
}

std::vector<GpuFault> FakeGpuProvider::PollFaults() {
  ReadFaultFile();
  const Seconds elapsed = clock_->Now() - start_;
  const auto due_end = std::partition_point(pending_.begin(), pending_.end(),
                                            [elapsed](const FakeFault& f) { return f.after <= elapsed; });
  std::vector<GpuFault> faults;
  for (auto it = pending_.begin(); it != due_end; ++it) {
    if (it->fault.kind == GpuFaultKind::kXid && it->fault.code == 79) lost_.insert(it->fault.index);  // fell off the bus
    faults.push_back(std::move(it->fault));
  }
  pending_.erase(pending_.begin(), due_end);
  return faults;
}

void FakeGpuProvider::ReadFaultFile() {
  if (spec_.fault_file.empty()) return;
  std::ifstream in(spec_.fault_file, std::ios::binary);
  if (!in || !in.seekg(fault_file_read_)) return;
  std::vector<FakeFault> added;
  // A last line without its '\n' is still being written: getline sets eof on
  // it, and it waits for the next poll.
  for (std::string line; std::getline(in, line) && !in.eof();) {
    fault_file_read_ += static_cast<std::streamoff>(line.size()) + 1;
    Result<std::vector<FakeFault>> faults = ParseFaultLine(line, ++fault_file_lines_);
    if (!faults.ok()) {
      std::cerr << faults.status().message() << '\n';
      continue;
    }
    added.insert(added.end(), faults->begin(), faults->end());
  }
  AddPending(added);
}

Result<std::vector<FakeFault>> FakeGpuProvider::ParseFaultLine(const std::string& line, int number) const {
  // Preceded by as many empty lines as came before it, so that positions in
  // messages are the file's. Quadratic in the file's length, which a test's
  // handful of lines does not notice.
  const std::string text = std::string(static_cast<std::size_t>(number - 1), '\n') + line;
  const std::string_view source = spec_.fault_file;
  return spec::CatchYaml(source, [&]() -> Result<std::vector<FakeFault>> {
    Result<std::vector<YamlValue>> documents = spec::LoadYamlDocuments(text, source);
    if (!documents.ok()) return documents.status();
    std::vector<FakeFault> faults;
    for (const YamlValue& document : *documents) {  // none for a blank or comment line, else one
      std::vector<YamlValue> items = {document};    // a JSON object
      if (document.node().IsSequence()) {           // "- {...}"
        Result<std::vector<YamlValue>> list = document.Items();
        if (!list.ok()) return list.status();
        items = *list;
      }
      for (const YamlValue& item : items) {
        Result<FakeFault> fault = ParseFault(YamlValue(item.node(), source, "fault", item.mark()), spec_.count);
        if (!fault.ok()) return fault.status();
        faults.push_back(std::move(*fault));
      }
    }
    return faults;
  });
}

// fabric: {clusterUuid: 32 hex digits (dashes allowed), clique: N}, as NVML's
// GPU fabric information reports a GPU of an NVL72 rack.
Status ReadFabric(const YamlValue& value, FakeGpuSpec& fake) {
  Result<YamlMap> fabric = YamlMap::Read(value, {"clusterUuid", "clique"}, {"clusterUuid"});
  if (!fabric.ok()) return fabric.status();
  std::string uuid;
  TESSERA_RETURN_IF_ERROR(fabric->ReadString("clusterUuid", &uuid));
  std::erase(uuid, '-');
  const auto nibble = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10; };
  if (uuid.size() != 32 || !std::all_of(uuid.begin(), uuid.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return fabric->Find("clusterUuid")->Error("must be 32 hexadecimal digits (a UUID)");
  }
  for (std::size_t i = 0; i < 16; ++i) {
    fake.fabric_cluster_uuid[i] = static_cast<unsigned char>(nibble(uuid[2 * i]) << 4 | nibble(uuid[2 * i + 1]));
  }
  int clique = 0;
  TESSERA_RETURN_IF_ERROR(fabric->ReadInt("clique", &clique, 0, std::numeric_limits<int>::max()));
  fake.fabric_clique = static_cast<unsigned int>(clique);
  return Status::Ok();
}

}  // namespace

Result<FakeGpuSpec> ParseFakeGpuSpec(std::string_view text, std::string_view source) {
  return spec::CatchYaml(source, [&]() -> Result<FakeGpuSpec> {
    Result<YamlValue> document = spec::LoadSingleDocument(text, source, "fake GPU");
    if (!document.ok()) return document.status();
    Result<YamlMap> map =
        YamlMap::Read(*document, {"gpus", "model", "memory", "nvlinkDomainSize", "numaNodes", "fabric", "mig", "utilization", "faults"});
    if (!map.ok()) return map.status();
    FakeGpuSpec fake;
    fake.label = std::string(source);
    TESSERA_RETURN_IF_ERROR(map->ReadInt("gpus", &fake.count, 0, kMaxGpus));
    TESSERA_RETURN_IF_ERROR(map->ReadString("model", &fake.model));
    TESSERA_RETURN_IF_ERROR(map->ReadBytes("memory", &fake.memory_bytes));
    if (fake.memory_bytes <= 0) return map->Find("memory")->Error("must be more than 0");  // so it was written
    TESSERA_RETURN_IF_ERROR(map->ReadInt("nvlinkDomainSize", &fake.gpus_per_nvlink_domain, 0, kMaxGpus));
    TESSERA_RETURN_IF_ERROR(map->ReadInt("numaNodes", &fake.numa_nodes, 1, kMaxNumaNodes));
    if (const std::optional<YamlValue> fabric = map->Find("fabric")) TESSERA_RETURN_IF_ERROR(ReadFabric(*fabric, fake));
    if (const std::optional<YamlValue> mig = map->Find("mig")) {
      Result<std::vector<std::vector<std::string>>> layout = spec::ParseMigLayout(*mig, fake.count);
      if (!layout.ok()) return layout.status();
      fake.mig = std::move(*layout);
    }
    if (const std::optional<YamlValue> utilization = map->Find("utilization")) {
      TESSERA_RETURN_IF_ERROR(ReadUtilization(*utilization, fake));
    }
    if (const std::optional<YamlValue> faults = map->Find("faults")) {
      Result<std::vector<YamlValue>> items = faults->Items();
      if (!items.ok()) return items.status();
      for (const YamlValue& item : *items) {
        Result<FakeFault> fault = ParseFault(item, fake.count);
        if (!fault.ok()) return fault.status();
        fake.faults.push_back(std::move(*fault));
      }
    }
    return fake;
  });
}

std::unique_ptr<GpuProvider> MakeFakeGpus(const FakeGpuSpec& spec, const Clock* clock) {
  return std::make_unique<FakeGpuProvider>(spec, clock);
}

Result<std::unique_ptr<GpuProvider>> LoadFakeGpus(const std::string& path, const Clock* clock) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the fake GPU file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  Result<FakeGpuSpec> fake = ParseFakeGpuSpec(text.str(), path);
  if (!fake.ok()) return fake.status();
  fake->fault_file = path + ".faults";
  return MakeFakeGpus(*fake, clock);
}

}  // namespace tessera::node
