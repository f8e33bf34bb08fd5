#include "spec/cluster_yaml.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "base/quantity.h"
#include "spec/mig_yaml.h"
#include "spec/yaml_util.h"

namespace tessera::spec {
namespace {

constexpr std::string_view kShapeExample = "3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine";
constexpr std::int32_t kMaxCount = 10'000'000;

// --- shared by the shape text and the YAML generate block ---------------------

// An NVLink domain spanning nodes is a rack: it must not straddle two leaves.
// Without an explicit leaf size, each domain is its own leaf.
std::optional<std::string> SettleNvlinkDomains(model::ClusterShape& shape, bool nodes_per_leaf_given) {
  if (shape.nvlink_domain_nodes <= 0) return std::nullopt;
  if (!nodes_per_leaf_given) {
    shape.nodes_per_leaf = shape.nvlink_domain_nodes;
  } else if (shape.nodes_per_leaf % shape.nvlink_domain_nodes != 0) {
    return "an NVLink domain must sit inside one leaf, so nodes per leaf (" + std::to_string(shape.nodes_per_leaf) +
           ") must be a multiple of nodes per NVLink domain (" + std::to_string(shape.nvlink_domain_nodes) + ")";
  }
  return std::nullopt;
}

// --- the shape text -------------------------------------------------------------

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::vector<std::string> Words(std::string_view clause) {
  std::istringstream in{std::string(clause)};
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::optional<std::int32_t> Count(const std::string& word, std::int32_t min) {
  std::int32_t n = 0;
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), n);
  if (ec != std::errc() || ptr != word.data() + word.size() || n < min || n > kMaxCount) return std::nullopt;
  return n;
}

// Does the clause read like `pattern`? "#" matches a count, "$" any word; the
// other words match case-insensitively, with an optional plural 's'.
bool Matches(const std::vector<std::string>& words, std::initializer_list<std::string_view> pattern) {
  if (words.size() != pattern.size()) return false;
  std::size_t i = 0;
  for (std::string_view want : pattern) {
    const std::string word = Lower(words[i++]);
    if (want == "#" || want == "$") continue;
    if (word != want && word != std::string(want) + "s" && !(want == "leaf" && word == "leaves")) return false;
  }
  return true;
}

Status ShapeError(std::string_view text, const std::string& reason) {
  return InvalidArgument("cluster shape '" + std::string(text) + "': " + reason + " (write e.g. '" +
                         std::string(kShapeExample) + "')");
}

}  // namespace

Result<model::ClusterShape> ParseClusterShape(std::string_view text) {
  model::ClusterShape shape;
  std::vector<std::string> clauses;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    clauses.emplace_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  const std::vector<std::string> first = Words(clauses[0]);
  if (!Matches(first, {"#", "node", "x", "#", "gpu"}) && !Matches(first, {"#", "node", "×", "#", "gpu"})) {
    return ShapeError(text, "it must start with '<N> nodes x <G> GPUs'");
  }
  const std::optional<std::int32_t> nodes = Count(first[0], 1);
  const std::optional<std::int32_t> gpus = Count(first[3], 0);
  if (!nodes) return ShapeError(text, "'" + first[0] + "' is not a node count of at least 1");
  if (!gpus || *gpus > model::kMaxGpusPerNode) {
    return ShapeError(text, "'" + first[3] + "' is not a GPU count between 0 and " +
                                std::to_string(model::kMaxGpusPerNode));
  }
  shape.nodes = *nodes;
  shape.gpus_per_node = *gpus;

  std::map<std::string, bool> seen;  // which clause kinds were given
  for (std::size_t c = 1; c < clauses.size(); ++c) {
    const std::vector<std::string> w = Words(clauses[c]);
    std::string kind;
    std::optional<std::int32_t> count;
    if (Matches(w, {"#", "node", "per", "leaf"})) {
      kind = "nodes per leaf";
      if ((count = Count(w[0], 1))) shape.nodes_per_leaf = *count;
    } else if (Matches(w, {"#", "leaf", "per", "spine"})) {
      kind = "leaves per spine";
      if ((count = Count(w[0], 1))) shape.leaves_per_spine = *count;
    } else if (Matches(w, {"#", "node", "per", "nvlink", "domain"}) || Matches(w, {"#", "node", "per", "nvlink-domain"})) {
      kind = "nodes per NVLink domain";
      if ((count = Count(w[0], 1))) shape.nvlink_domain_nodes = *count;
    } else if (Matches(w, {"#", "cpu", "per", "node"})) {
      kind = "CPUs per node";
      const Result<std::int64_t> cpus = ParseMilli(w[0]);
      if (cpus.ok() && *cpus > 0) {
        shape.cpu_milli = *cpus;
        count = 1;
      }
    } else if (Matches(w, {"#", "numa", "socket"}) || Matches(w, {"#", "numa", "socket", "per", "node"})) {
      kind = "NUMA sockets";
      if ((count = Count(w[0], 1))) shape.numa_sockets = *count;
    } else if (Matches(w, {"gpu", "model", "$"})) {
      kind = "GPU model";
      shape.gpu_model = w[2];
      count = 1;
    } else if (Matches(w, {"$", "per", "gpu"})) {
      kind = "memory per GPU";
      const Result<std::int64_t> bytes = ParseBytes(w[0]);
      if (bytes.ok() && *bytes > 0) {
        shape.gpu_memory = *bytes;
        count = 1;
      }
    } else if (Matches(w, {"$", "memory", "per", "node"}) || Matches(w, {"$", "ram", "per", "node"})) {
      kind = "memory per node";
      const Result<std::int64_t> bytes = ParseBytes(w[0]);
      if (bytes.ok() && *bytes > 0) {
        shape.memory = *bytes;
        count = 1;
      }
    } else {
      std::string clause;
      for (const std::string& word : w) clause += (clause.empty() ? "" : " ") + word;
      return ShapeError(text, "cannot read '" + clause +
                                  "'; after '<N> nodes x <G> GPUs' come clauses like '32 nodes per leaf', "
                                  "'16 leaves per spine', '18 nodes per NVLink domain', 'GPU model A100', "
                                  "'80Gi per GPU', '128 CPUs per node', '1Ti memory per node', '2 NUMA sockets'");
    }
    if (!count) return ShapeError(text, "'" + w[0] + "' is not a valid amount in '" + kind + "'");
    if (seen[kind]) return ShapeError(text, "'" + kind + "' is given twice");
    seen[kind] = true;
  }
  if (std::optional<std::string> problem = SettleNvlinkDomains(shape, seen["nodes per leaf"])) {
    return ShapeError(text, *problem);
  }
  return shape;
}

namespace {

// --- the YAML document ------------------------------------------------------------

// A quantity that must be above zero (cpus, memory, gpuMemory).
Status ReadPositive(const YamlMap& map, std::string_view key, std::int64_t* out, bool bytes) {
  TESSERA_RETURN_IF_ERROR(bytes ? map.ReadBytes(key, out) : map.ReadMilli(key, out));
  if (*out <= 0 && map.Has(key)) return map.Get(key)->Error("must be positive");
  return Status::Ok();
}

// gpuSharing: a list of modes ([vgpu, mps, timeslice]) or the word exclusive.
Status ReadSharing(const YamlMap& map, model::GpuSharingSet* out) {
  if (!map.Has("gpuSharing")) return Status::Ok();
  std::vector<std::string> names;
  if (map.Get("gpuSharing")->node().IsScalar()) {
    names.emplace_back();
    TESSERA_RETURN_IF_ERROR(map.ReadString("gpuSharing", &names.back()));
  } else {
    TESSERA_RETURN_IF_ERROR(map.ReadStringList("gpuSharing", &names));
  }
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ",") + n;
  Result<model::GpuSharingSet> set = model::ParseGpuSharingList(joined);
  if (!set.ok()) return map.Get("gpuSharing")->Error(set.status().message() + ", or exclusive");
  *out = *set;
  return Status::Ok();
}

Result<model::ClusterShape> ParseGenerate(const YamlValue& value) {
  Result<YamlMap> gen = YamlMap::Read(value,
                                      {"nodes", "gpusPerNode", "gpuModel", "gpuMemory", "cpus", "memory",
                                       "nodesPerLeaf", "leavesPerSpine", "numaSockets", "nvlinkDomainNodes", "gpuSharing"},
                                      {"nodes"});
  if (!gen.ok()) return gen.status();
  model::ClusterShape shape;
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("nodes", &shape.nodes, 1, kMaxCount));
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("gpusPerNode", &shape.gpus_per_node, 0, model::kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(gen->ReadString("gpuModel", &shape.gpu_model));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*gen, "gpuMemory", &shape.gpu_memory, true));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*gen, "cpus", &shape.cpu_milli, false));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*gen, "memory", &shape.memory, true));
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("nodesPerLeaf", &shape.nodes_per_leaf, 1, kMaxCount));
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("leavesPerSpine", &shape.leaves_per_spine, 1, kMaxCount));
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("numaSockets", &shape.numa_sockets, 1, model::kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(gen->ReadInt("nvlinkDomainNodes", &shape.nvlink_domain_nodes, 0, kMaxCount));
  TESSERA_RETURN_IF_ERROR(ReadSharing(*gen, &shape.sharing));
  if (std::optional<std::string> problem = SettleNvlinkDomains(shape, gen->Has("nodesPerLeaf"))) {
    return gen->Get("nodesPerLeaf")->Error(*problem);
  }
  return shape;
}

Result<model::NodeSpec> ParseNode(const YamlValue& value) {
  Result<YamlMap> map = YamlMap::Read(value,
                                      {"name", "gpus", "gpuModel", "gpuMemory", "cpus", "memory", "leaf", "spine",
                                       "numaSockets", "nvlinkDomains", "nvlinkGroup", "gpuSharing", "mig"},
                                      {"name", "gpus", "cpus", "memory"});
  if (!map.ok()) return map.status();
  model::NodeSpec node;
  TESSERA_RETURN_IF_ERROR(map->ReadString("name", &node.name));
  TESSERA_RETURN_IF_ERROR(map->ReadInt("gpus", &node.gpus, 0, model::kMaxGpusPerNode));
  if (node.gpus > 0) TESSERA_RETURN_IF_ERROR(map->Need({"gpuModel", "gpuMemory"}));
  TESSERA_RETURN_IF_ERROR(map->ReadString("gpuModel", &node.gpu_model));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*map, "gpuMemory", &node.gpu_memory, true));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*map, "cpus", &node.cpu_milli, false));
  TESSERA_RETURN_IF_ERROR(ReadPositive(*map, "memory", &node.memory, true));
  TESSERA_RETURN_IF_ERROR(map->ReadString("leaf", &node.leaf));
  TESSERA_RETURN_IF_ERROR(map->ReadString("spine", &node.spine));
  TESSERA_RETURN_IF_ERROR(map->ReadInt("numaSockets", &node.numa_sockets, 1, model::kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(map->ReadInt("nvlinkDomains", &node.nvlink_domains, 1, model::kMaxGpusPerNode));
  TESSERA_RETURN_IF_ERROR(map->ReadString("nvlinkGroup", &node.nvlink_group));
  TESSERA_RETURN_IF_ERROR(ReadSharing(*map, &node.sharing));
  if (const std::optional<YamlValue> mig = map->Find("mig")) {
    Result<std::vector<std::vector<std::string>>> layout = ParseMigLayout(*mig, node.gpus);
    if (!layout.ok()) return layout.status();
    node.gpu_mig = std::move(*layout);
  }
  if (!node.nvlink_group.empty() && node.nvlink_domains != 1) {
    return map->Get("nvlinkDomains")
        ->Error("a node in a multi-node NVLink domain (nvlinkGroup) has no NVLink domains of its own");
  }
  return node;
}

Result<std::vector<model::NodeSpec>> ParseCluster(std::string_view text, std::string_view source) {
  Result<YamlMap> spec = LoadSingleDocumentSpec(text, source, "Cluster", {"generate", "nodes"});
  if (!spec.ok()) return spec.status();
  if (!spec->Has("generate") && !spec->Has("nodes")) {
    return spec->value().Error("a Cluster lists its nodes (nodes), generates them (generate), or both");
  }

  std::vector<model::NodeSpec> nodes;
  // Where each node name and each leaf's spine came from, for clashes.
  std::map<std::string, std::string> node_origin;
  std::map<std::string, std::pair<std::string, std::string>> leaf_spine;  // leaf -> (spine, origin)
  const auto record = [&](const model::NodeSpec& node, const YamlValue& at) -> Status {
    const std::string origin = FormatWhere(source, at.mark());
    if (auto [it, inserted] = node_origin.emplace(node.name, origin); !inserted) {
      return at.Error("node '" + node.name + "' is defined twice (first at " + it->second + ")");
    }
    if (auto [it, inserted] = leaf_spine.try_emplace(node.leaf, node.spine, origin);
        !inserted && it->second.first != node.spine) {
      return at.Error("leaf '" + node.leaf + "' is under spine '" + it->second.first + "' at " + it->second.second +
                      " but under spine '" + node.spine + "' here; a leaf switch has one spine");
    }
    return Status::Ok();
  };

  if (const std::optional<YamlValue> generate = spec->Find("generate")) {
    Result<model::ClusterShape> shape = ParseGenerate(*generate);
    if (!shape.ok()) return shape.status();
    for (model::NodeSpec& node : model::GenerateNodes(*shape)) {
      TESSERA_RETURN_IF_ERROR(record(node, *generate));
      nodes.push_back(std::move(node));
    }
  }
  if (const std::optional<YamlValue> list = spec->Find("nodes")) {
    Result<std::vector<YamlValue>> items = list->Items();
    if (!items.ok()) return items.status();
    for (const YamlValue& item : *items) {
      Result<model::NodeSpec> node = ParseNode(item);
      if (!node.ok()) return node.status();
      TESSERA_RETURN_IF_ERROR(record(*node, item));
      nodes.push_back(std::move(*node));
    }
  }
  if (nodes.empty()) return spec->value().Error("the cluster has no nodes");
  return nodes;
}

bool LooksLikePath(const std::string& arg) {
  const std::filesystem::path path(arg);
  return arg.find('/') != std::string::npos || path.extension() == ".yaml" || path.extension() == ".yml";
}

}  // namespace

Result<std::vector<model::NodeSpec>> ParseClusterYaml(std::string_view text, std::string_view source) {
  return CatchYaml(source, [&] { return ParseCluster(text, source); });
}

Result<model::Cluster> LoadCluster(const std::string& file_or_shape) {
  std::error_code error;
  if (std::filesystem::is_regular_file(file_or_shape, error)) {
    std::ifstream in(file_or_shape, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return InvalidArgument(file_or_shape + ": cannot read the file");
    Result<std::vector<model::NodeSpec>> nodes = ParseClusterYaml(text.str(), file_or_shape);
    if (!nodes.ok()) return nodes.status();
    Result<model::Cluster> cluster = model::Cluster::Build(*nodes);
    if (!cluster.ok()) return Status(cluster.status().code(), file_or_shape + ": " + cluster.status().message());
    return cluster;
  }
  Result<model::ClusterShape> shape = ParseClusterShape(file_or_shape);
  if (!shape.ok()) {
    if (LooksLikePath(file_or_shape)) return NotFound("cluster file '" + file_or_shape + "' does not exist");
    return shape.status();
  }
  return model::Cluster::Build(model::GenerateNodes(*shape));
}

}  // namespace tessera::spec
