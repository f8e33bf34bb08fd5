// The node's OCI images: pulled with skopeo, unpacked with umoci into
// runtime bundles that tasks run from, kept in a cache collected by size.
//
// On disk, under the store's root (the agent's `<data dir>/images`):
//   layout/          one OCI image layout shared by every image. Each
//                    reference is copied into it under its own tag (a key
//                    derived from its canonical spelling), so a layer is
//                    stored once by digest whatever the number of images
//                    using it, and `skopeo copy` skips the blobs already there.
//   bundles/<hex>/   one bundle per manifest digest: its rootfs/ (`umoci raw
//                    unpack`). Unpacked into bundles/.tmp-* and renamed,
//                    so a crash never leaves a partial bundle under a name
//                    that looks complete; leftovers are removed at Open.
//   images.json      what is cached: each bundle's references, size, image
//                    config and last use (so LRU order survives restarts).
//                    Rewritten (atomically) after each change, best effort:
//                    a lost write costs at worst a pull or a stale LRU order.
//
// Locking. skopeo rewrites layout/index.json whole, without a lock, and
// `umoci gc` deletes every blob no tag reaches, so two skopeo copies into
// the layout would lose each other's tags and a gc beside a copy would delete
// its blobs. Every operation on the layout (copy, unpack, untag, gc) is
// therefore serialized on one mutex: the node pulls one image at a time.
// Concurrent Ensure calls for the same reference share one pull: the first
// pulls, the others wait for its result. Assumes one ImageStore per root
// (the agent's), and that the store outlives every Image it returned.
//
// Pinned references. For a registry, skopeo itself checks that the manifest
// it fetched has the pinned digest (and fails with "Manifest does not match
// provided manifest digest"). The manifest stored in the layout may still
// differ: skopeo converts Docker v2 manifests to OCI and picks this
// platform's manifest out of a multi-platform index, so the bundle's digest
// is the stored manifest's, not necessarily the pin. skopeo selects images in
// an OCI layout by tag only, so for an oci: reference the store compares the
// stored manifest with the pin itself (oci: to oci: copies the manifest as is).
//
// Failures are Statuses that name the image and say what happened:
//   kNotFound            no such image or tag on the registry, or not on the
//                        node under PullPolicy::kNever
//   kUnauthenticated     the registry wants credentials, or refused these
//   kPermissionDenied    the registry denied access (also what Docker Hub
//                        answers for a repository that does not exist)
//   kFailedPrecondition  registry unreachable or too slow (after the retries),
//                        a plain-HTTP registry not listed as insecure, a
//                        digest mismatch, skopeo or umoci missing
//   kResourceExhausted   disk full, or the registry's pull rate limit
//   kInternal            anything else a tool reported (its last line appended)
// Only the transient ones (unreachable, timed out, 5xx) are retried, with
// exponential backoff. Credentials reach skopeo through an authentication
// file readable by the agent alone, never on its command line (which every
// user on the node can read) nor in a message.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "model/image_reference.h"
#include "model/task_container.h"

namespace tessera::node {

using model::ImageReference;
using model::PullPolicy;

struct ImageStoreOptions {
  // Collect() removes unused images until bundles and layout together take
  // at most this many bytes; 0: no limit.
  std::int64_t size_limit_bytes = 0;
  std::chrono::milliseconds pull_timeout = std::chrono::minutes(30);    // each skopeo copy
  std::chrono::milliseconds unpack_timeout = std::chrono::minutes(30);  // each umoci run
  int pull_attempts = 3;  // tries of a pull that fails transiently, the first included
  std::chrono::milliseconds retry_first_delay = std::chrono::seconds(1);  // doubled each retry, with jitter
  // Registries ("host[:port]", as in the reference) pulled without TLS
  // verification: plain HTTP or a certificate the node does not trust (a
  // registry on loopback, a lab registry).
  std::vector<std::string> insecure_registries;
  std::string skopeo = "skopeo";  // the tools, searched on PATH when they hold no '/'
  std::string umoci = "umoci";
  const WallClock* clock = nullptr;  // last-use times; null: the system clock
};


// For registries that want a login. Never logged, never in a message.
struct Credentials {
  std::string username;  // may not hold ':'
  std::string password;
};

struct PullProgress {
  enum class Phase {
    kWaiting,    // another caller is pulling this image; its result will be shared
    kPulling,    // skopeo is copying: blobs_started so far
    kRetrying,   // the attempt failed transiently; detail says why, attempt is the next one
    kUnpacking,  // layers and bytes: the manifest's layer count and compressed size
    kReady,      // bytes: the bundle's size
  };
  Phase phase = Phase::kPulling;
  int attempt = 1;
  int blobs_started = 0;  // "Copying blob" lines skopeo has printed (it gives no total)
  int layers = 0;
  std::int64_t bytes = 0;
  std::string detail{};
};
using ProgressCallback = std::function<void(const PullProgress&)>;

// What the image asks of the container that runs it (the OCI image config's
// "config" object; absent fields are empty).
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "NAME=value"
  std::string working_dir;
  std::string user;  // "uid[:gid]" or a name, as written in the image
};

class ImageStore;

// Keeps a bundle from being collected while a task runs from it. Move-only;
// released when destroyed (the release counts as the bundle's last use).
class ImageLease {
 public:
  ImageLease() = default;
  ImageLease(ImageLease&& other) noexcept;
  ImageLease& operator=(ImageLease&& other) noexcept;
  ~ImageLease();
  ImageLease(const ImageLease&) = delete;
  ImageLease& operator=(const ImageLease&) = delete;

 private:
  friend class ImageStore;
  ImageLease(ImageStore* store, std::string digest) : store_(store), digest_(std::move(digest)) {}
  void Release();

  ImageStore* store_ = nullptr;
  std::string digest_;
};

// An image ready on the node, held by its lease for as long as this lives.
struct Image {
  std::string reference;  // canonical
  std::string digest;     // of the manifest unpacked: "sha256:<hex>"
  std::string bundle;     // the bundle directory; the root filesystem is bundle + "/rootfs"
  ImageConfig config;
  std::int64_t size_bytes = 0;  // of the bundle
  ImageLease lease;
};

struct CachedImage {
  // Canonical references that resolve to it now; empty for a bundle an
  // Always pull superseded, kept while a task still uses it.
  std::vector<std::string> references;
  std::string digest;
  std::int64_t size_bytes = 0;  // of the bundle
  std::int64_t last_used_ms = 0;  // wall time, ms since the Unix epoch
  int in_use = 0;                 // leases held
};

struct CollectStats {
  std::vector<std::string> removed;  // digests of the bundles removed, least recently used first
  std::int64_t bytes_before = 0;     // bundles and layout together
  std::int64_t bytes_after = 0;
};

class ImageStore {
 public:
  // Creates `root` (absolute, without ':') if missing, reads images.json and
  // removes what a crash left: partial bundles, bundles nothing names.
  static Result<std::unique_ptr<ImageStore>> Open(std::string root, ImageStoreOptions options);
  ImageStore(const ImageStore&) = delete;
  ImageStore& operator=(const ImageStore&) = delete;

  // The image `ref`, on the node and leased. `progress` is called on this
  // thread, with the phases above, sometimes while the store's locks are
  // held: it must not call back into the store.
  Result<Image> Ensure(const ImageReference& ref, PullPolicy policy,
                       const std::optional<Credentials>& credentials = std::nullopt,
                       const ProgressCallback& progress = {});

  // Removes unused bundles, least recently used first, and their tags, until
  // the size limit holds (or nothing unused is left); then drops the layout's
  // blobs that no tag reaches (`umoci gc`).
  Result<CollectStats> Collect();

  // Every cached bundle, least recently used first.
  std::vector<CachedImage> List() const;

 private:
  struct Bundle {
    std::set<std::string> references;  // canonical
    std::int64_t size_bytes = 0;
    std::int64_t last_used_ms = 0;
    ImageConfig config;
    int leases = 0;
  };
  struct Pulled {  // one pull's outcome, shared with the callers waiting for it
    std::string digest;
    ImageConfig config;
    std::int64_t size_bytes = 0;
  };
  struct InFlight {
    bool done = false;
    Result<Pulled> result = Status(StatusCode::kInternal, "pull still in flight");
    int waiters = 0;
  };
  friend class ImageLease;

  struct Attempt {  // one try of a pull; retry: the failure is transient
    Result<Pulled> result;
    bool retry = false;
  };
  ImageStore(std::string root, ImageStoreOptions options);
  Status Load();
  void Save() const;  // images.json; under mu_
  std::int64_t NowMs() const;
  std::string BundleDir(const std::string& digest) const;
  Image MakeImage(const std::string& reference, const std::string& digest);  // lease already counted; under mu_
  void Release(const std::string& digest);

  // The pull with its retries, its result shared with the callers waiting on `flight`.
  Result<Image> PullAndShare(const ImageReference& ref, const std::shared_ptr<InFlight>& flight,
                             const std::optional<Credentials>& credentials, const ProgressCallback& progress);
  // Under layout_mu_: skopeo copy, the digest check, and an unpack when the digest is new.
  Attempt PullOnce(const ImageReference& ref, const std::optional<Credentials>& credentials,
                   const ProgressCallback& progress, int attempt);
  Result<Pulled> Unpack(const std::string& canonical, const std::string& key, const std::string& digest,
                        const ProgressCallback& progress, int attempt);
  // Under mu_: records the pull; then wakes the callers waiting for it, their leases counted.
  void Commit(const std::string& canonical, const Pulled& pulled);
  void Finish(const std::string& canonical, const std::shared_ptr<InFlight>& flight, Result<Pulled> result);
  Status RunUmoci(const std::string& what, std::vector<std::string> args);

  const std::string root_;
  const ImageStoreOptions options_;
  std::mutex layout_mu_;  // taken before mu_ when both are held
  mutable std::mutex mu_;
  std::condition_variable pulled_;
  std::map<std::string, Bundle> bundles_;                     // by digest
  std::map<std::string, std::string> digest_of_;              // canonical reference -> digest
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;  // by canonical reference
};

}  // namespace tessera::node
