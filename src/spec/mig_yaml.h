// `mig: {GPU: [profile, ...]}`: which GPUs of a node are in MIG mode and the
// profiles of their devices (model/mig.h), as a cluster file's node and the
// agent's fake GPU file write it:
//
//   mig: {0: [1g.10gb, 1g.10gb, 2g.20gb, 3g.40gb], 3: [7g.80gb]}
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

// The profiles GPU by GPU, `gpu_count` entries (empty: not in MIG mode). A
// GPU index out of range, a GPU listed with no device, or a profile that is
// not one is an error at its place in the file.
Result<std::vector<std::vector<std::string>>> ParseMigLayout(const YamlValue& value, int gpu_count);

}  // namespace tessera::spec
