// The container fields of a task (model/task_container.h; docs/job-spec.md,
// "Containers"), beside the task's command:
//
//   tasks:
//     - name: trainer
//       image: registry.example.com:5000/ml/llama:2.1   # or oci:/srv/images/llama:2.1
//       imagePullPolicy: IfNotPresent                   # Always, Never
//       mounts:
//         - {hostPath: /datasets/c4, mountPath: /data}                   # read-only
//         - {hostPath: /scratch, mountPath: /scratch, readOnly: false}
//       shmSize: 16Gi
//       user: "1000:1000"
//
// Errors name the field: "spec.tasks[0].image: ...". Every field but image
// needs an image: without one the task is a host process, and a mount or a
// user would silently mean nothing.
#pragma once

#include "base/status.h"
#include "model/task_container.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

// The task fields ParseTaskContainer reads, for the task's list of allowed keys.
inline constexpr std::string_view kTaskContainerFields[] = {"image", "imagePullPolicy", "mounts", "shmSize", "user"};

// Reads the fields above, when written, into `out`.
Status ParseTaskContainer(const YamlMap& task, model::TaskContainer* out);

}  // namespace tessera::spec
