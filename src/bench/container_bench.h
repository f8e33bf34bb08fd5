// tessera bench containers: how fast a node starts container tasks, beside
// host-process tasks and podman on the same machine in the same run.
//
// Builds an image offline (busybox-static plus `image_mb` of incompressible
// data, so that a pull moves real bytes), pushes it to a real docker-registry
// on loopback, then measures:
//   * pull_mb_per_s: the agent's cold pull (ContainerTasks::TakeImage:
//     skopeo copy into the node's layout, then umoci unpack) of the image's
//     compressed bytes; skopeo_copy_mb_per_s: `skopeo copy` of the same
//     image from the same registry into an empty layout, skopeo alone;
//   * container_start_*: `tasks` starts of the cached image, one after
//     another, each from the agent's receipt of the task (TakeImage) through
//     the bundle, runc under tessera-supervise, to the task's first line of
//     output in its log; bare_start_*: the same task as a host process under
//     the supervisor; podman_start_*: `podman run --rm --network=host` of the
//     same image (pulled into podman's storage first), to its first line.
// Needs root (overlay mounts, runc), skopeo, umoci, runc, docker-registry;
// podman is optional (its numbers are then absent, with the reason).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::bench {

struct ContainerBenchOptions {
  int tasks = 64;
  int image_mb = 64;
  std::string podman = "podman";  // empty: skip the peer
};

struct ContainerBenchResult {
  int tasks = 0;
  double image_mb = 0;  // compressed, as pulled
  double pull_mb_per_s = 0, skopeo_copy_mb_per_s = 0;
  double container_start_p50_ms = 0, container_start_p99_ms = 0;
  double bare_start_p50_ms = 0, bare_start_p99_ms = 0;
  double podman_start_p50_ms = 0, podman_start_p99_ms = 0;
  std::string podman_error;  // why podman was not measured
  std::string error;         // set when the run could not finish
};

ContainerBenchResult RunContainerBench(const ContainerBenchOptions& options);
std::string ToJson(const ContainerBenchResult& result);
std::string ToText(const ContainerBenchResult& result);

}  // namespace tessera::bench
