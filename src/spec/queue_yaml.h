// Queue tree definitions in YAML (one document, kind QueueTree):
//   apiVersion: tessera/v1
//   kind: QueueTree
//   spec:
//     queues:
//       - {name: research,       guaranteed: 64, limit: 128, weight: 2}
//       - {name: research/nlp,   guaranteed: 32}
//       - {name: production,     guaranteed: 64}
// guaranteed and limit count GPUs ("0.5" allowed); limit defaults to unlimited,
// weight to 1.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/queue.h"

namespace tessera::spec {

Result<std::vector<model::QueueSpec>> ParseQueueYaml(std::string_view text, std::string_view source);

}  // namespace tessera::spec
