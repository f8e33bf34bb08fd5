// The agent's container tasks (docs/containers.md): each task's image pulled
// off the agent's loop, its bundle prepared, and what is left removed once it
// has ended.
//
// A task with an image starts in two steps. TakeImage starts a pull on a
// thread of its own and answers "not yet" (with how far it got, for the
// task's "preparing" report) until the image is on the node; the agent keeps
// reconciling meanwhile, so a slow registry never delays another task, a
// report or a stop. Pulls of one image by several tasks are done once (the
// image store shares them); after each pull, unused images beyond the size
// limit are collected, least recently used first. Then Prepare builds the task's bundle and returns
// the `runc run` command the agent launches as the task -- under
// tessera-supervise, in the task's cgroup, with its logs -- so a container
// task is driven, adopted after an agent restart and reaped like a host
// process (node/container/runc_runtime.h).
//
// On disk, under `root` (the agent's <data dir>/containers):
//   images/              the image store (node/image/image_store.h)
//   bundles/<job>.<attempt>.<task>/   each task's bundle: config.json, its
//                        writable layer and the overlay root mounted over the image
//   runc/                runc's state of the containers
// A container is named by its task's key ("tessera-12-1-0"), so an agent
// that adopts a task knows its container without any record of it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/agent_protocol.h"
#include "base/status.h"
#include "node/container/cdi.h"
#include "node/container/runc_runtime.h"
#include "node/image/image_store.h"

namespace tessera::node {

struct ContainerTasksOptions {
  std::string root;  // absolute
  ImageStoreOptions images;
  std::string runc = "runc";
};

// What the task itself asks for, before the image's defaults fill the gaps.
struct ContainerProcess {
  std::vector<std::string> command;         // empty: the image's entrypoint and cmd
  std::map<std::string, std::string> env;   // over the image's environment
  std::string working_dir;                  // empty: the image's, else /
  std::string hostname;
  std::string cgroups_path;                 // Cgroups::RuntimePath; empty: runc's own choice
  std::string network_namespace;            // its run's (job_network.h); empty: the host's network
  // Node paths the task's environment names (its checkpoint directory, its
  // progress files, a shared GPU's ledgers or MPS pipes), bound at the same
  // path and writable; and those bound read-only (the vGPU shim).
  std::vector<std::string> node_paths;
  std::vector<std::string> node_files;
  // The CDI edits of the task's GPUs (node/container/cdi.h): device nodes,
  // driver mounts, environment (under the task's own), hooks.
  ContainerEdits gpus;
};

// runc's name for the container of task `key`.
std::string ContainerId(const api::TaskKey& key);

class ContainerTasks {
 public:
  static Result<std::unique_ptr<ContainerTasks>> Open(ContainerTasksOptions options);
  // Does not wait for the pulls still running: a stopping agent must not sit
  // out a slow registry. Each holds the store, and ends on its own.
  ~ContainerTasks();
  ContainerTasks(const ContainerTasks&) = delete;
  ContainerTasks& operator=(const ContainerTasks&) = delete;

  // The image of task `key`, leased: nullopt while its pull runs (the first
  // call starts it), with `progress` saying how far; then the pull's outcome,
  // once. A failure names the image and the reason (node/image/image_store.h).
  std::optional<Result<Image>> TakeImage(const api::TaskKey& key, const api::ContainerAssignment& container,
                                         std::string* progress);
  // The task left the node while its image was pulled: the pull goes on for
  // the cache, its result is dropped.
  void Abandon(const api::TaskKey& key);
  // The image of a task adopted from an earlier agent, leased again so that
  // collection leaves it alone; only from the cache.
  Result<Image> LeaseCached(const api::ContainerAssignment& container);

  // Task `key`'s bundle over `image`, and the command that runs it.
  Result<std::vector<std::string>> Prepare(const api::TaskKey& key, const api::ContainerAssignment& container,
                                           const Image& image, const ContainerProcess& process) const;
  // The command that runs `command` inside task `key`'s running container,
  // as its process runs there (user, environment, directory): `tessera exec`.
  std::vector<std::string> ExecInside(const api::TaskKey& key, bool tty, const std::vector<std::string>& command) const {
    return runtime_.Exec(ContainerId(key), tty, command);
  }
  // What the container of an ended task left: runc's state, the mounted
  // root, the bundle. Nothing to do (and no process run) for a host task.
  void Remove(const api::TaskKey& key) const;

  std::vector<CachedImage> Cached() const { return store_->List(); }
  std::string Describe() const;

 private:
  struct Pull {
    std::mutex mu;
    std::string progress;
    std::optional<Result<Image>> result;  // set once, when the pull ends
  };
  struct Worker {
    std::shared_ptr<Pull> pull;
    std::thread thread;
  };
  ContainerTasks(ContainerTasksOptions options, std::unique_ptr<ImageStore> store);
  std::string BundleDir(const api::TaskKey& key) const;
  void JoinFinished();

  const ContainerTasksOptions options_;
  std::shared_ptr<ImageStore> store_;  // shared with the pulls' threads
  RuncRuntime runtime_;
  std::map<api::TaskKey, std::shared_ptr<Pull>> pulls_;  // by task, until taken or abandoned
  std::vector<Worker> workers_;
};

}  // namespace tessera::node
