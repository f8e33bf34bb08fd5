#include "spec/queue_yaml.h"

#include <string>
#include <utility>

#include "base/quantity.h"
#include "spec/yaml_util.h"

namespace tessera::spec {
namespace {

// "research/nlp": DNS labels joined by '/'.
bool IsQueuePath(std::string_view path) {
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    if (!IsDnsLabel(path.substr(start, slash == std::string_view::npos ? slash : slash - start))) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

// The queue a QueueTree::Build message is about ("queue 'research': ..."), if any.
std::string QueueNamedIn(const std::string& message) {
  static constexpr std::string_view kPrefix = "queue '";
  if (message.rfind(kPrefix, 0) != 0) return "";
  const std::size_t end = message.find('\'', kPrefix.size());
  return end == std::string::npos ? "" : message.substr(kPrefix.size(), end - kPrefix.size());
}

Result<std::vector<model::QueueSpec>> Parse(std::string_view text, std::string_view source) {
  Result<YamlMap> spec = LoadSingleDocumentSpec(text, source, "QueueTree", {"queues"}, {"queues"});
  if (!spec.ok()) return spec.status();
  const YamlValue queues_value = *spec->Get("queues");
  Result<std::vector<YamlValue>> items = queues_value.Items();
  if (!items.ok()) return items.status();
  if (items->empty()) return queues_value.Error("a QueueTree needs at least one queue");

  std::vector<model::QueueSpec> specs;
  std::vector<YamlValue> name_values;  // parallel to specs, to place later errors
  for (const YamlValue& item : *items) {
    Result<YamlMap> queue = YamlMap::Read(item, {"name", "guaranteed", "limit", "weight", "userLimit", "requireImage", "allowRootContainers"},
                                          {"name"});
    if (!queue.ok()) return queue.status();
    const YamlValue name_value = *queue->Get("name");
    model::QueueSpec q;
    TESSERA_RETURN_IF_ERROR(queue->ReadString("name", &q.path));
    if (!IsQueuePath(q.path)) {
      return name_value.Error("'" + q.path +
                              "' is not a valid queue name: write names joined by '/' (e.g. research/nlp), each of "
                              "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit");
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].path == q.path) {
        return name_value.Error("queue '" + q.path + "' is defined twice (first at " +
                                FormatWhere(source, name_values[i].mark()) + ")");
      }
    }
    TESSERA_RETURN_IF_ERROR(queue->ReadMilli("guaranteed", &q.guaranteed_milli));
    TESSERA_RETURN_IF_ERROR(queue->ReadMilli("limit", &q.limit_milli));
    if (q.limit_milli < q.guaranteed_milli) {
      return queue->Get("limit")->Error("the limit (" + FormatMilli(q.limit_milli) +
                                        " GPUs) is below the guarantee (" + FormatMilli(q.guaranteed_milli) +
                                        " GPUs)");
    }
    TESSERA_RETURN_IF_ERROR(queue->ReadNumber("weight", &q.weight));
    if (q.weight <= 0) return queue->Get("weight")->Error("must be positive");
    TESSERA_RETURN_IF_ERROR(queue->ReadMilli("userLimit", &q.user_limit_milli));
    if (q.user_limit_milli <= 0) return queue->Get("userLimit")->Error("must be above zero");
    TESSERA_RETURN_IF_ERROR(queue->ReadBool("requireImage", &q.require_image));
    TESSERA_RETURN_IF_ERROR(queue->ReadBool("allowRootContainers", &q.allow_root_containers));
    specs.push_back(std::move(q));
    name_values.push_back(name_value);
  }

  // What only the whole tree can tell (children guaranteed more than their
  // parent): placed at the queue the model names, else at the list.
  Result<model::QueueTree> tree = model::QueueTree::Build(specs);
  if (!tree.ok()) {
    const std::string named = QueueNamedIn(tree.status().message());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].path == named) {
        return YamlValue(items->at(i).node(), source, items->at(i).path(), name_values[i].mark())
            .Error(tree.status().message());
      }
    }
    return queues_value.Error(tree.status().message());
  }
  return specs;
}

}  // namespace

Result<std::vector<model::QueueSpec>> ParseQueueYaml(std::string_view text, std::string_view source) {
  return CatchYaml(source, [&] { return Parse(text, source); });
}

}  // namespace tessera::spec
