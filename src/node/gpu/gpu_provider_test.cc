#include "node/gpu/gpu_provider.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "base/quantity.h"
#include "node/gpu/fake_gpu_provider.h"
#include "node/gpu/nvml_provider.h"

namespace tessera::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// A file in a directory of its own, removed with it at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / ("tessera_gpu_test_" + std::to_string(::getpid()) + "_" + name)),
        path_((dir_ / name).string()) {
    std::filesystem::create_directories(dir_);
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  void Append(const std::string& suffix, const std::string& text) const {
    std::ofstream(path_ + suffix, std::ios::app) << text;
  }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

std::vector<int> Domains(const std::vector<GpuInfo>& gpus) {
  std::vector<int> domains;
  for (const GpuInfo& gpu : gpus) domains.push_back(gpu.nvlink_domain);
  return domains;
}

std::vector<std::int64_t> Codes(const std::vector<GpuFault>& faults) {
  std::vector<std::int64_t> codes;
  for (const GpuFault& fault : faults) codes.push_back(fault.code);
  return codes;
}

std::string ParseError(const std::string& text) {
  Result<FakeGpuSpec> spec = ParseFakeGpuSpec(text, "node.yaml");
  EXPECT_FALSE(spec.ok());
  return spec.ok() ? "" : spec.status().message();
}

// --- the fake file ----------------------------------------------------------------

TEST(FakeGpuSpecTest, ReadsEveryField) {
  const Result<FakeGpuSpec> spec = ParseFakeGpuSpec(R"(
gpus: 4
model: A100
memory: 40Gi
nvlinkDomainSize: 2
numaNodes: 1
utilization: {0: 90, 2: 12.5}
faults:
  - {gpu: 3, kind: xid, code: 79, after: 5s}
  - {gpu: 1, kind: ecc-double-bit, detail: "row remap pending"}
)",
                                                    "node.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->count, 4);
  EXPECT_EQ(spec->model, "A100");
  EXPECT_EQ(spec->memory_bytes, 40 * kGiB);
  EXPECT_EQ(spec->gpus_per_nvlink_domain, 2);
  EXPECT_EQ(spec->numa_nodes, 1);
  EXPECT_EQ(spec->utilization_percent, 0);
  EXPECT_EQ(spec->utilization_by_gpu, (std::map<int, double>{{0, 90.0}, {2, 12.5}}));
  EXPECT_EQ(spec->label, "node.yaml");
  ASSERT_EQ(spec->faults.size(), 2u);
  EXPECT_EQ(spec->faults[0].fault.index, 3);
  EXPECT_EQ(spec->faults[0].fault.kind, GpuFaultKind::kXid);
  EXPECT_EQ(spec->faults[0].fault.code, 79);
  EXPECT_EQ(spec->faults[0].fault.detail, "Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(spec->faults[0].after, 5);
  EXPECT_EQ(spec->faults[1].fault.kind, GpuFaultKind::kEccDoubleBit);
  EXPECT_EQ(spec->faults[1].fault.detail, "row remap pending");
  EXPECT_EQ(spec->faults[1].after, 0);
}

TEST(FakeGpuSpecTest, DefaultsAreEightH100sOnOneNvlinkDomain) {
  const Result<FakeGpuSpec> spec = ParseFakeGpuSpec("utilization: 35\n", "node.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->count, 8);
  EXPECT_EQ(spec->model, "H100");
  EXPECT_EQ(spec->memory_bytes, 80 * kGiB);
  EXPECT_EQ(spec->gpus_per_nvlink_domain, 8);
  EXPECT_EQ(spec->utilization_percent, 35);
  EXPECT_THAT(spec->faults, IsEmpty());
}

TEST(FakeGpuSpecTest, UnknownFieldIsRejectedWithItsPosition) {
  EXPECT_EQ(ParseError("gpus: 8\nmodle: H100\n"),
            "node.yaml:2:1: modle: unknown field 'modle'; allowed: gpus, model, memory, nvlinkDomainSize, "
            "numaNodes, fabric, mig, utilization, faults");
  EXPECT_THAT(ParseError("faults:\n  - {gpu: 1, kind: xid, cod: 79}\n"),
              StartsWith("node.yaml:2:25: faults[0].cod: unknown field 'cod'"));
}

TEST(FakeGpuSpecTest, BadValuesSayWhereAndWhy) {
  EXPECT_EQ(ParseError("gpus: 4\nfaults:\n  - {gpu: 4, kind: xid}\n"),
            "node.yaml:3:11: faults[0].gpu: must be between 0 and 3, got 4");
  EXPECT_EQ(ParseError("faults:\n  - {gpu: 0, kind: fire}\n"),
            "node.yaml:2:20: faults[0].kind: unknown fault kind 'fire'; use xid, ecc-double-bit or ecc-single-bit");
  EXPECT_THAT(ParseError("faults:\n  - {kind: xid}\n"), HasSubstr("faults[0].gpu: required field is missing"));
  EXPECT_EQ(ParseError("utilization: {1: 150}\n"),
            "node.yaml:1:18: utilization.1: must be a percentage between 0 and 100, got '150'");
  EXPECT_EQ(ParseError("gpus: 2\nutilization: {2: 10}\n"),
            "node.yaml:2:15: utilization: must be between 0 and 1, got 2");
  EXPECT_THAT(ParseError("memory: lots\n"), StartsWith("node.yaml:1:9: memory: "));
  EXPECT_THAT(ParseError("gpus: [8\n"), HasSubstr("malformed YAML"));
}

TEST(FakeGpusTest, AFabricPutsEveryGpuInOneMultiNodeDomain) {
  const Result<FakeGpuSpec> spec =
      ParseFakeGpuSpec("gpus: 4\nfabric: {clusterUuid: 0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0, clique: 7}\n", "node.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const Result<std::vector<GpuInfo>> gpus = MakeFakeGpus(*spec)->Discover();
  ASSERT_TRUE(gpus.ok());
  for (const GpuInfo& gpu : *gpus) EXPECT_EQ(gpu.fabric_domain, "fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.7");
  EXPECT_EQ(NodeFabricDomain(*gpus), "fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.7");

  EXPECT_EQ(ParseError("fabric: {clusterUuid: 12ab, clique: 1}\n"),
            "node.yaml:1:23: fabric.clusterUuid: must be 32 hexadecimal digits (a UUID)");
  EXPECT_THAT(ParseError("fabric: {clique: 1}\n"), HasSubstr("fabric.clusterUuid: required field is missing"));
  // Without a fabric: no domain.
  EXPECT_EQ(NodeFabricDomain(*MakeFakeGpus(FakeGpuSpec{.count = 2})->Discover()), "");
}

TEST(FakeGpusTest, MigGpusListTheirDevicesWithUuidsOfTheirOwn) {
  const Result<FakeGpuSpec> spec = ParseFakeGpuSpec("gpus: 2\nmig: {0: [1g.10gb, 1g.10gb, 3g.40gb]}\n", "node.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const Result<std::vector<GpuInfo>> gpus = MakeFakeGpus(*spec)->Discover();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ((*gpus)[0].mig.size(), 3u);
  EXPECT_TRUE((*gpus)[1].mig.empty());
  EXPECT_EQ((*gpus)[0].mig[2].profile, "3g.40gb");
  std::set<std::string> uuids;
  for (const MigDeviceInfo& d : (*gpus)[0].mig) {
    EXPECT_THAT(d.uuid, StartsWith("MIG-"));
    uuids.insert(d.uuid);
  }
  EXPECT_EQ(uuids.size(), 3u) << "each device has its own UUID";

  EXPECT_EQ(ParseError("gpus: 2\nmig: {2: [1g.10gb]}\n"), "node.yaml:2:7: mig: must be between 0 and 1, got 2");
  EXPECT_THAT(ParseError("mig: {0: [1g10gb]}\n"), HasSubstr("'1g10gb' is not a MIG profile"));
  EXPECT_THAT(ParseError("mig: {0: []}\n"), HasSubstr("a GPU in MIG mode has at least one device"));
}

TEST(MigProfileNameTest, NamesDevicesAsNvidiaDoes) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  const std::int64_t h100 = 81559 * kMiB, h200 = 143771 * kMiB;  // what NVML reports as their memory
  EXPECT_EQ(MigProfileName(1, 1, 9856 * kMiB, h100), "1g.10gb");
  EXPECT_EQ(MigProfileName(3, 3, 40192 * kMiB, h100), "3g.40gb");
  EXPECT_EQ(MigProfileName(7, 7, 80896 * kMiB, h100), "7g.80gb");
  EXPECT_EQ(MigProfileName(1, 2, 19968 * kMiB, h100), "1c.2g.20gb");
  EXPECT_EQ(MigProfileName(1, 1, 16640 * kMiB, h200), "1g.18gb");
  EXPECT_EQ(MigProfileName(3, 3, 71424 * kMiB, h200), "3g.71gb");
}

TEST(FabricDomainTest, TheNodesDomainIsTheOneItsGpusShare) {
  const std::array<unsigned char, 16> none{};
  std::array<unsigned char, 16> uuid{};
  uuid[15] = 0xAB;
  EXPECT_EQ(FabricDomain(none, 3), "");
  EXPECT_EQ(FabricDomain(uuid, 3), "fabric-000000000000000000000000000000ab.3");
  std::vector<GpuInfo> gpus(3);
  for (GpuInfo& gpu : gpus) gpu.fabric_domain = "fabric-a.1";
  EXPECT_EQ(NodeFabricDomain(gpus), "fabric-a.1");
  gpus[1].fabric_domain = "";
  gpus[1].healthy = false;  // could not be asked: the others decide
  EXPECT_EQ(NodeFabricDomain(gpus), "fabric-a.1");
  gpus[2].fabric_domain = "fabric-b.1";  // a GPU that registered elsewhere: none, rather than a wrong one
  EXPECT_EQ(NodeFabricDomain(gpus), "");
}

TEST(FakeGpusTest, MissingFileIsNotFound) {
  const auto provider = LoadFakeGpus("/nonexistent/tessera/node.yaml");
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(provider.status().message(), HasSubstr("/nonexistent/tessera/node.yaml"));
}

// --- the fake provider --------------------------------------------------------------

TEST(FakeGpusTest, DiscoversTwoNvlinkIslandsAcrossTwoNumaNodes) {
  const TempFile file("islands.yaml");
  file.Append("", "gpus: 8\nmodel: H100\nmemory: 80Gi\nnvlinkDomainSize: 4\nnumaNodes: 2\n");
  auto provider = LoadFakeGpus(file.path());
  ASSERT_TRUE(provider.ok()) << provider.status().message();
  EXPECT_TRUE((*provider)->fake());
  EXPECT_EQ((*provider)->Describe(), "fake GPUs (" + file.path() + "): 8 x H100 80Gi");

  const Result<std::vector<GpuInfo>> gpus = (*provider)->Discover();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_THAT(Domains(*gpus), ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));
  EXPECT_THAT((*gpus)[0].nvlink_peers, ElementsAre(1, 2, 3));
  EXPECT_THAT((*gpus)[5].nvlink_peers, ElementsAre(4, 6, 7));
  std::set<std::string> uuids;
  std::set<std::string> buses;
  for (const GpuInfo& gpu : *gpus) {
    EXPECT_EQ(gpu.index, static_cast<int>(uuids.size()));
    EXPECT_EQ(gpu.model, "H100");
    EXPECT_EQ(ShortModelName(gpu.name), "H100");
    EXPECT_EQ(gpu.memory_bytes, 80 * kGiB);
    EXPECT_EQ(gpu.numa_node, gpu.index < 4 ? 0 : 1);
    EXPECT_TRUE(gpu.healthy);
    EXPECT_THAT(gpu.uuid, StartsWith("GPU-"));
    EXPECT_EQ(gpu.uuid.size(), 40u);  // as NVML's: "GPU-" and 8-4-4-4-12 hex digits
    uuids.insert(gpu.uuid);
    buses.insert(gpu.pci_bus_id);
  }
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(buses.size(), 8u);
  EXPECT_EQ((*gpus)[0].pci_bus_id, "00000000:18:00.0");
}

TEST(FakeGpusTest, LabelsSeedDistinctUuids) {
  FakeGpuSpec spec;
  spec.label = "node-0";
  const auto a = MakeFakeGpus(spec)->Discover();
  spec.label = "node-1";
  const auto b = MakeFakeGpus(spec)->Discover();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)[0].uuid, (*b)[0].uuid);
  EXPECT_EQ((*a)[0].uuid, (*MakeFakeGpus(FakeGpuSpec{.label = "node-0"})->Discover())[0].uuid);
}

TEST(FakeGpusTest, WithoutNvlinkEachGpuIsItsOwnDomain) {
  const auto gpus = MakeFakeGpus(FakeGpuSpec{.count = 3, .gpus_per_nvlink_domain = 1})->Discover();
  ASSERT_TRUE(gpus.ok());
  EXPECT_THAT(Domains(*gpus), ElementsAre(0, 1, 2));
  EXPECT_THAT((*gpus)[1].nvlink_peers, IsEmpty());
}

TEST(FakeGpusTest, TelemetryFollowsUtilization) {
  FakeGpuSpec spec{.count = 3, .memory_bytes = 80 * kGiB, .utilization_percent = 35};
  spec.utilization_by_gpu[2] = 100;
  const auto samples = MakeFakeGpus(spec)->Sample();
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].utilization_percent, 35);
  EXPECT_EQ((*samples)[0].memory_used_bytes, 28 * kGiB);
  EXPECT_DOUBLE_EQ((*samples)[0].temperature_c, 44);
  EXPECT_DOUBLE_EQ((*samples)[0].power_watts, 280);
  EXPECT_EQ((*samples)[2].index, 2);
  EXPECT_EQ((*samples)[2].memory_used_bytes, 80 * kGiB);
  EXPECT_DOUBLE_EQ((*samples)[2].power_watts, 670);
}

TEST(FakeGpusTest, FaultsArriveOnceTheirDelayHasPassed) {
  const TempFile file("faults.yaml");
  file.Append("", R"(
faults:
  - {gpu: 3, kind: xid, code: 79, after: 5s}
  - {gpu: 1, kind: ecc-double-bit, after: 0s}
  - {gpu: 2, kind: xid, code: 48, after: 2s}
)");
  ManualClock clock(1000);
  auto provider = LoadFakeGpus(file.path(), &clock);
  ASSERT_TRUE(provider.ok()) << provider.status().message();

  const std::vector<GpuFault> now = (*provider)->PollFaults();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].index, 1);
  EXPECT_EQ(now[0].kind, GpuFaultKind::kEccDoubleBit);
  EXPECT_EQ(now[0].detail, "double-bit ECC error");
  EXPECT_THAT((*provider)->PollFaults(), IsEmpty());  // each fault once

  clock.Advance(4);
  EXPECT_THAT(Codes((*provider)->PollFaults()), ElementsAre(48));
  clock.Advance(1);
  const std::vector<GpuFault> later = (*provider)->PollFaults();
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].index, 3);
  EXPECT_EQ(later[0].code, 79);
  clock.Advance(100);
  EXPECT_THAT((*provider)->PollFaults(), IsEmpty());
}

TEST(FakeGpusTest, FaultFileInjectsFaultsWhileRunning) {
  const TempFile file("running.yaml");
  file.Append("", "gpus: 4\n");
  ManualClock clock;
  auto provider = LoadFakeGpus(file.path(), &clock);
  ASSERT_TRUE(provider.ok()) << provider.status().message();
  EXPECT_THAT((*provider)->PollFaults(), IsEmpty());  // no fault file yet

  file.Append(".faults",
              "- {gpu: 2, kind: xid, code: 43}\n# a comment\n{\"gpu\": 0, \"kind\": \"xid\", \"code\": 31}\n");
  file.Append(".faults", "- {gpu: 1, kind: xid, code: 13}");  // still being written
  const std::vector<GpuFault> first = (*provider)->PollFaults();
  EXPECT_THAT(Codes(first), ElementsAre(43, 31));
  EXPECT_EQ(first[0].index, 2);
  EXPECT_EQ(first[1].detail, "Xid 31: GPU memory page fault");

  // The line is finished; the next is wrong (GPU 9) and is skipped; the last waits 10s.
  file.Append(".faults", "\n- {gpu: 9, kind: xid}\n- {gpu: 3, kind: xid, code: 74, after: 10s}\n");
  testing::internal::CaptureStderr();
  EXPECT_THAT(Codes((*provider)->PollFaults()), ElementsAre(13));
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            file.path() + ".faults:5:9: fault.gpu: must be between 0 and 3, got 9\n");
  EXPECT_THAT((*provider)->PollFaults(), IsEmpty());
  clock.Advance(10);
  EXPECT_THAT(Codes((*provider)->PollFaults()), ElementsAre(74));
}

// --- shared helpers -------------------------------------------------------------

TEST(ShortModelNameTest, KeepsTheModelWord) {
  EXPECT_EQ(ShortModelName("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(ShortModelName("NVIDIA H100 PCIe"), "H100");
  EXPECT_EQ(ShortModelName("NVIDIA H200"), "H200");
  EXPECT_EQ(ShortModelName("NVIDIA A100-SXM4-80GB"), "A100");
  EXPECT_EQ(ShortModelName("Tesla V100-SXM2-16GB"), "V100");
  EXPECT_EQ(ShortModelName("Tesla T4"), "T4");
  EXPECT_EQ(ShortModelName("NVIDIA GH200 480GB"), "GH200");
  EXPECT_EQ(ShortModelName("NVIDIA L40S"), "L40S");
  EXPECT_EQ(ShortModelName("NVIDIA GeForce RTX 4090"), "RTX4090");
  EXPECT_EQ(ShortModelName("Quadro RTX 8000"), "RTX8000");
  EXPECT_EQ(ShortModelName("NVIDIA RTX A6000"), "RTXA6000");
  EXPECT_EQ(ShortModelName("NVIDIA"), "NVIDIA");
  EXPECT_EQ(ShortModelName(""), "");
}

TEST(AssignNvlinkDomainsTest, NumbersConnectedComponentsByLowestIndex) {
  std::vector<GpuInfo> gpus(6);
  gpus[1].nvlink_peers = {4};  // written on one side only
  gpus[3].nvlink_peers = {5};
  gpus[5].nvlink_peers = {0};
  AssignNvlinkDomains(gpus);
  EXPECT_THAT(Domains(gpus), ElementsAre(0, 1, 2, 0, 1, 0));
}

TEST(FaultDetailTest, NamesKnownXids) {
  EXPECT_EQ(FaultDetail(GpuFaultKind::kXid, 79), "Xid 79: GPU has fallen off the bus");
  EXPECT_EQ(FaultDetail(GpuFaultKind::kXid, 12345), "Xid 12345");
  EXPECT_EQ(FaultDetail(GpuFaultKind::kEccSingleBit, 0), "single-bit ECC error");
}

// --- NVML -----------------------------------------------------------------------

TEST(NvmlTest, MissingLibraryIsNotFoundAndNamed) {
  const auto provider = OpenNvmlLibrary("libtessera-no-such-nvml.so.1");
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(provider.status().message(), HasSubstr("cannot load libtessera-no-such-nvml.so.1"));
}

// On a machine without the NVIDIA driver (CI) OpenNvml says so; on one with it,
// it must find GPUs that look like NVML's.
TEST(NvmlTest, OpenNvmlFindsTheDriverOrSaysItIsMissing) {
  auto provider = OpenNvml();
  if (!provider.ok()) {
    EXPECT_EQ(provider.status().code(), StatusCode::kNotFound) << provider.status().message();
    EXPECT_THAT(provider.status().message(), HasSubstr("libnvidia-ml.so.1"));
    return;
  }
  EXPECT_FALSE((*provider)->fake());
  const auto gpus = (*provider)->Discover();
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  for (const GpuInfo& gpu : *gpus) {
    EXPECT_THAT(gpu.uuid, StartsWith("GPU-"));
    EXPECT_GT(gpu.memory_bytes, 0);
  }
  const auto samples = (*provider)->Sample();
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), gpus->size());
}

TEST(NvmlTest, SysfsAddressesAreShortAndLowercase) {
  EXPECT_EQ(SysfsPciAddress("00000000:9A:00.0"), "0000:9a:00.0");
  EXPECT_EQ(SysfsPciAddress("00010000:1B:00.0"), "10000:1b:00.0");
  EXPECT_EQ(SysfsPciAddress("0000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(SysfsPciAddress(""), "");
}

TEST(NvmlTest, NvlinkPeersThroughBridgesAndSwitches) {
  // GPUs 0-1 joined by an NVLink bridge; 2-4 on one NVSwitch (two links each,
  // one of them to a second switch); 5 links only to a GPU this process
  // cannot see; 6 has no NVLink.
  const std::vector<std::string> buses = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                          "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0"};
  const std::vector<std::vector<std::string>> ends = {{"0000:2a:00.0", "0000:2a:00.0"},
                                                      {"0000:18:00.0"},
                                                      {"0000:c1:00.0", "0000:c2:00.0"},
                                                      {"0000:c1:00.0", "0000:c2:00.0"},
                                                      {"0000:c1:00.0"},
                                                      {"0000:db:00.0"},
                                                      {}};
  const std::vector<std::vector<int>> peers = NvlinkPeers(buses, ends);
  ASSERT_EQ(peers.size(), 7u);
  EXPECT_THAT(peers[0], ElementsAre(1));
  EXPECT_THAT(peers[1], ElementsAre(0));
  EXPECT_THAT(peers[2], ElementsAre(3, 4));
  EXPECT_THAT(peers[4], ElementsAre(2, 3));
  EXPECT_THAT(peers[5], IsEmpty());
  EXPECT_THAT(peers[6], IsEmpty());
}

}  // namespace
}  // namespace tessera::node
