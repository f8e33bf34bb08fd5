// libFuzzer: the job-spec parser (YAML or JSON, one or many documents)
// against a small cluster and queue tree, as POST /v1/jobs runs it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spec/cluster_yaml.h"
#include "spec/job_yaml.h"
#include "spec/queue_yaml.h"

namespace {

struct World {
  tessera::model::Cluster cluster;
  tessera::model::QueueTree queues;
};

const World& TheWorld() {
  static const World world{
      *tessera::model::Cluster::Build(tessera::model::GenerateNodes(*tessera::spec::ParseClusterShape("4 nodes x 8 GPUs"))),
      *tessera::model::QueueTree::Build(*tessera::spec::ParseQueueYaml(
          "apiVersion: tessera/v1\nkind: QueueTree\nspec:\n  queues:\n    - {name: research, guaranteed: 16}\n"
          "    - {name: research/nlp, guaranteed: 8}\n    - {name: prod, guaranteed: 16}\n",
          "queues"))};
  return world;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const World& world = TheWorld();
  (void)tessera::spec::ParseJobYaml(text, "fuzz", world.cluster, world.queues);
  // The server's way: a JSON object through the SAX reader (spec/json_document.h).
  if (auto documents = tessera::spec::LoadJobDocuments(text, "fuzz"); documents.ok()) {
    (void)tessera::spec::ParseJobDocuments(*documents, "fuzz", world.cluster, world.queues);
  }
  return 0;
}
