#include "node/gpu/gpu_provider.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

namespace tessera::node {
namespace {

bool IsBrandWord(std::string_view word) {
  return word == "NVIDIA" || word == "Tesla" || word == "GeForce" || word == "Quadro";
}

// "A100-SXM4-80GB" -> "A100": NVML joins the form factor with dashes.
std::string_view BeforeDash(std::string_view word) { return word.substr(0, word.find('-')); }

}  // namespace

std::string ShortModelName(std::string_view name) {
  std::vector<std::string_view> words;
  for (std::size_t start = 0; start < name.size();) {
    const std::size_t end = std::min(name.find(' ', start), name.size());
    if (end > start) words.push_back(name.substr(start, end - start));
    start = end + 1;
  }
  std::size_t i = 0;
  while (i < words.size() && IsBrandWord(words[i])) ++i;
  if (i == words.size()) return words.empty() ? std::string() : std::string(words.back());  // "NVIDIA"
  const std::string_view first = BeforeDash(words[i]);
  std::string model(first);
  if ((first == "RTX" || first == "GTX" || first == "TITAN") && i + 1 < words.size()) {
    model += BeforeDash(words[i + 1]);
  }
  return model;
}

void AssignNvlinkDomains(std::vector<GpuInfo>& gpus) {
  // Union-find whose root is always the smallest index of its set, so that a
  // peer list written on one side only still joins the two GPUs.
  std::vector<std::size_t> parent(gpus.size());
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  const auto find = [&parent](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    for (int peer : gpus[g].nvlink_peers) {
      const std::size_t a = find(g);
      const std::size_t b = find(static_cast<std::size_t>(peer));
      parent[std::max(a, b)] = std::min(a, b);
    }
  }
  // A root precedes the members of its set, so it is numbered before them.
  int next = 0;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    const std::size_t root = find(g);
    gpus[g].nvlink_domain = root == g ? next++ : gpus[root].nvlink_domain;
  }
}

std::string FabricDomain(std::span<const unsigned char, 16> cluster_uuid, unsigned int clique) {
  if (std::all_of(cluster_uuid.begin(), cluster_uuid.end(), [](unsigned char b) { return b == 0; })) return "";
  std::string name = "fabric-";
  for (const unsigned char b : cluster_uuid) {
    constexpr char kHex[] = "0123456789abcdef";
    name += kHex[b >> 4];
    name += kHex[b & 0xF];
  }
  return name + "." + std::to_string(clique);
}

std::string MigProfileName(int compute_slices, int gpu_slices, std::int64_t device_bytes, std::int64_t gpu_bytes) {
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  const double share = std::ceil(static_cast<double>(device_bytes) / static_cast<double>(std::max<std::int64_t>(gpu_bytes, 1)) * 8) / 8;
  const auto gigabytes = static_cast<long long>(std::llround(share * static_cast<double>((gpu_bytes + kGiB - 1) / kGiB)));
  const std::string memory = std::to_string(gpu_slices) + "g." + std::to_string(gigabytes) + "gb";
  return compute_slices == gpu_slices ? memory : std::to_string(compute_slices) + "c." + memory;
}

std::string NodeFabricDomain(const std::vector<GpuInfo>& gpus) {
  std::string domain;
  for (const GpuInfo& gpu : gpus) {
    if (gpu.fabric_domain.empty() && !gpu.healthy) continue;  // an unhealthy GPU could not be asked
    if (gpu.fabric_domain.empty() || (!domain.empty() && gpu.fabric_domain != domain)) return "";
    domain = gpu.fabric_domain;
  }
  return domain;
}

std::string_view FaultKindName(GpuFaultKind kind) {
  switch (kind) {
    case GpuFaultKind::kXid: return "xid";
    case GpuFaultKind::kEccDoubleBit: return "ecc-double-bit";
    case GpuFaultKind::kEccSingleBit: return "ecc-single-bit";
  }
  return "unknown";
}

std::string FaultDetail(GpuFaultKind kind, std::int64_t code) {
  if (kind == GpuFaultKind::kEccDoubleBit) return "double-bit ECC error";
  if (kind == GpuFaultKind::kEccSingleBit) return "single-bit ECC error";
  // From NVIDIA's Xid catalogue: the ones that usually mean a job or a GPU is lost.
  static constexpr std::array<std::pair<std::int64_t, std::string_view>, 14> kKnown = {{
      {13, "graphics engine exception"},
      {31, "GPU memory page fault"},
      {43, "GPU stopped processing"},
      {45, "preemptive cleanup, due to previous errors"},
      {48, "double-bit ECC error"},
      {63, "ECC page retirement or row remapping recorded"},
      {64, "ECC page retirement or row remapping failed"},
      {74, "NVLink error"},
      {79, "GPU has fallen off the bus"},
      {92, "high single-bit ECC error rate"},
      {94, "contained ECC error"},
      {95, "uncontained ECC error"},
      {119, "GSP RPC timeout"},
      {120, "GSP error"},
  }};
  std::string detail = "Xid " + std::to_string(code);
  for (const auto& [known, meaning] : kKnown) {
    if (known == code) return detail + ": " + std::string(meaning);
  }
  return detail;
}

}  // namespace tessera::node
