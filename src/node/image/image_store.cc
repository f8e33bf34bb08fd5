#include "node/image/image_store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/backoff.h"
#include "node/image/command.h"

namespace tessera::node {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view kRefNameAnnotation = "org.opencontainers.image.ref.name";
constexpr std::string_view kTempPrefix = ".tmp-";
constexpr std::string_view kStateFile = "images.json";

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool IsDigest(std::string_view digest) {
  if (digest.size() != 71 || digest.substr(0, 7) != "sha256:") return false;
  return std::all_of(digest.begin() + 7, digest.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The layout tag of a reference: readable (its alphanumeric runs joined by
// '-') and unique (a stable 64-bit FNV-1a of the canonical spelling). Within
// both skopeo's tag alphabet [A-Za-z0-9._-] and the OCI ref.name grammar
// umoci enforces (single separators between alphanumerics).
std::string TagKey(const std::string& canonical) {
  std::string readable;
  bool separate = false;
  for (const char c : canonical) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      separate = true;
      continue;
    }
    if (separate && !readable.empty()) readable += '-';
    separate = false;
    readable += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  readable.resize(std::min<std::size_t>(readable.size(), 80));
  while (!readable.empty() && readable.back() == '-') readable.pop_back();
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : canonical) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return readable + "-" + hex;
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t chunk = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

std::int64_t TreeBytes(const fs::path& dir) {
  std::int64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ignored;
    if (it->symlink_status(ignored).type() == fs::file_type::regular) {
      const std::uintmax_t size = it->file_size(ignored);
      if (!ignored) total += static_cast<std::int64_t>(size);
    }
  }
  return total;
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<json> ReadJson(const fs::path& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return Internal(path.string() + " is not a JSON object");
  return parsed;
}

// Written beside, flushed and renamed: a reader sees the old file or the new one.
Status WriteFileAtomically(const fs::path& path, const std::string& content) {
  const std::string temp = path.string() + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot write " + temp + ": " + std::strerror(errno));
  std::string_view rest = content;
  while (!rest.empty()) {
    const ssize_t n = write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return Internal("cannot write " + temp + ": " + std::strerror(error));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced || rename(temp.c_str(), path.c_str()) != 0) {
    return Internal("cannot replace " + path.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

std::vector<std::string> Strings(const json& object, const char* key) {
  std::vector<std::string> out;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const json& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string String(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t Int(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// The tags of layout/index.json and the manifest each names.
std::map<std::string, std::string> LayoutTags(const fs::path& layout) {
  std::map<std::string, std::string> tags;
  Result<json> index = ReadJson(layout / "index.json");
  if (!index.ok()) return tags;
  const auto manifests = index->find("manifests");
  if (manifests == index->end() || !manifests->is_array()) return tags;
  for (const json& entry : *manifests) {
    if (!entry.is_object()) continue;
    const auto annotations = entry.find("annotations");
    if (annotations == entry.end() || !annotations->is_object()) continue;
    const std::string name = String(*annotations, std::string(kRefNameAnnotation).c_str());
    const std::string digest = String(entry, "digest");
    if (!name.empty() && IsDigest(digest)) tags[name] = digest;
  }
  return tags;
}

fs::path BlobPath(const fs::path& layout, const std::string& digest) {
  return layout / "blobs" / "sha256" / digest.substr(7);
}

struct Manifest {
  std::string config;               // digest of the image config blob
  std::vector<std::string> layers;  // digests
  std::int64_t layer_bytes = 0;
};

Result<Manifest> ReadManifest(const fs::path& layout, const std::string& digest) {
  Result<json> blob = ReadJson(BlobPath(layout, digest));
  if (!blob.ok()) return blob.status();
  Manifest manifest;
  const auto config = blob->find("config");
  if (config != blob->end() && config->is_object()) manifest.config = String(*config, "digest");
  if (!IsDigest(manifest.config)) return Internal("manifest " + digest + " names no image config");
  const auto layers = blob->find("layers");
  if (layers != blob->end() && layers->is_array()) {
    for (const json& layer : *layers) {
      if (!layer.is_object() || !IsDigest(String(layer, "digest"))) continue;
      manifest.layers.push_back(String(layer, "digest"));
      manifest.layer_bytes += Int(layer, "size");
    }
  }
  return manifest;
}

Result<ImageConfig> ReadImageConfig(const fs::path& layout, const std::string& config_digest) {
  Result<json> blob = ReadJson(BlobPath(layout, config_digest));
  if (!blob.ok()) return blob.status();
  ImageConfig config;
  const auto inner = blob->find("config");
  if (inner == blob->end() || !inner->is_object()) return config;
  config.entrypoint = Strings(*inner, "Entrypoint");
  config.cmd = Strings(*inner, "Cmd");
  config.env = Strings(*inner, "Env");
  config.working_dir = String(*inner, "WorkingDir");
  config.user = String(*inner, "User");
  return config;
}

json ConfigToJson(const ImageConfig& config) {
  return json{{"entrypoint", config.entrypoint}, {"cmd", config.cmd}, {"env", config.env},
              {"workingDir", config.working_dir}, {"user", config.user}};
}

ImageConfig ConfigFromJson(const json& object) {
  ImageConfig config;
  if (!object.is_object()) return config;
  config.entrypoint = Strings(object, "entrypoint");
  config.cmd = Strings(object, "cmd");
  config.env = Strings(object, "env");
  config.working_dir = String(object, "workingDir");
  config.user = String(object, "user");
  return config;
}

// Why skopeo failed, from what it printed; retry says whether trying again
// may help.
struct Failure {
  Status status;
  bool retry = false;
};

Failure ClassifySkopeo(const ImageReference& ref, const std::string& output, const std::optional<Credentials>& creds) {
  const std::string image = ref.Canonical();
  const std::string lower = Lower(output);
  const std::string said = " (skopeo: " + ToolMessage(output, creds ? creds->password : std::string()) + ")";
  const bool oci = ref.kind == ImageReference::Kind::kOciLayout;
  const std::string host = oci ? std::string() : ref.registry;

  if (Contains(lower, "no space left on device")) {
    return {ResourceExhausted(
        "pulling " + image + ": the node's disk is full; free space or lower the image cache's size limit" + said, 0)};
  }
  if (oci && Contains(lower, "no descriptor found for reference")) {
    return {NotFound("image " + image + " not found: the OCI layout at " + ref.path + " has no tag " + Quoted(ref.tag) +
                     said)};
  }
  if (oci && Contains(lower, "no such file or directory")) {
    return {NotFound("image " + image + " not found: there is no OCI layout at " + ref.path + said)};
  }
  if (Contains(lower, "manifest unknown") || Contains(lower, "name unknown")) {
    const std::string what = ref.pinned() ? "no manifest " + ref.digest : "no tag " + Quoted(ref.tag);
    return {NotFound("image " + image + " not found: registry " + host + " has " + what + " in repository " +
                     Quoted(ref.repository) + " (or no such repository)" + said)};
  }
  if (Contains(lower, "does not match provided manifest digest")) {
    return {FailedPrecondition("image " + image + ": registry " + host + " served a manifest whose digest is not " +
                               ref.digest + "; refusing it" + said)};
  }
  if (Contains(lower, "toomanyrequests") || Contains(lower, "too many requests")) {
    return {ResourceExhausted("pulling " + image + ": registry " + host +
                                  " refuses more pulls for now (rate limit); use credentials with a higher limit or a mirror" + said,
                              0)};
  }
  if (Contains(lower, "unauthorized") || Contains(lower, "authentication required")) {
    return {Unauthenticated(creds ? "pulling " + image + ": registry " + host + " refused the credentials given for user " +
                                        Quoted(creds->username) + said
                                  : "pulling " + image + ": registry " + host +
                                        " wants credentials for it (or it is not there); log the job's queue in to it: tessera queues login QUEUE " +
                                        host + said)};
  }
  if (Contains(lower, "denied")) {
    return {PermissionDenied("pulling " + image + ": registry " + host +
                             " denied access: the repository may not exist, or these credentials may not pull it" + said)};
  }
  if (Contains(lower, "server gave http response to https client")) {
    return {FailedPrecondition("pulling " + image + ": registry " + host +
                               " speaks plain HTTP; list it among the node's insecure registries to pull from it" + said)};
  }
  if (Contains(lower, "x509:") || Contains(lower, "certificate")) {
    return {FailedPrecondition("pulling " + image + ": registry " + host +
                               "'s TLS certificate is not trusted by this node; install its CA or list it among the "
                               "insecure registries" + said)};
  }
  for (const char* transient :
       {"connection refused", "no such host", "i/o timeout", "network is unreachable", "no route to host",
        "connection reset", "tls handshake timeout", "temporary failure in name resolution", "server misbehaving",
        "timeout", "deadline exceeded", "unexpected eof"}) {
    if (Contains(lower, transient)) {
      return {FailedPrecondition("pulling " + image + ": registry " + host + " is unreachable" + said), true};
    }
  }
  for (const char* server_error : {"500 internal server error", "502 bad gateway", "503 service unavailable",
                                   "504 gateway timeout", "received unexpected http status: 5"}) {
    if (Contains(lower, server_error)) {
      return {FailedPrecondition("pulling " + image + ": registry " + host + " failed to serve it" + said), true};
    }
  }
  return {Internal("pulling " + image + " failed" + said)};
}

// A file the agent alone can read, holding the pull's credentials for
// skopeo's --src-authfile; removed when this goes.
class AuthFile {
 public:
  AuthFile() = default;
  AuthFile(const AuthFile&) = delete;
  AuthFile& operator=(const AuthFile&) = delete;
  ~AuthFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  Status Write(const fs::path& dir, const std::string& registry, const Credentials& creds) {
    std::string pattern = (dir / "auth-XXXXXX").string();
    const int fd = mkostemp(pattern.data(), O_CLOEXEC);  // 0600
    if (fd < 0) return Internal("cannot create a credentials file in " + dir.string() + ": " + std::strerror(errno));
    path_ = pattern;
    const json auth = {{"auths", {{registry, {{"auth", Base64(creds.username + ":" + creds.password)}}}}}};
    const std::string content = auth.dump();
    std::string_view rest = content;
    while (!rest.empty()) {
      const ssize_t n = write(fd, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    close(fd);
    if (!rest.empty()) return Internal("cannot write a credentials file in " + dir.string());
    return Status::Ok();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Seconds(std::chrono::milliseconds d) {
  std::ostringstream text;
  text << static_cast<double>(d.count()) / 1000.0 << " s";
  return text.str();
}

}  // namespace

ImageLease::ImageLease(ImageLease&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)), digest_(std::move(other.digest_)) {}

ImageLease& ImageLease::operator=(ImageLease&& other) noexcept {
  if (this != &other) {
    Release();
    store_ = std::exchange(other.store_, nullptr);
    digest_ = std::move(other.digest_);
  }
  return *this;
}

ImageLease::~ImageLease() { Release(); }

void ImageLease::Release() {
  if (store_ != nullptr) store_->Release(digest_);
  store_ = nullptr;
}

ImageStore::ImageStore(std::string root, ImageStoreOptions options)
    : root_(std::move(root)), options_(std::move(options)) {}

Result<std::unique_ptr<ImageStore>> ImageStore::Open(std::string root, ImageStoreOptions options) {
  if (root.empty() || root.front() != '/') {
    return InvalidArgument("image store root " + Quoted(root) + " must be an absolute path");
  }
  if (root.find(':') != std::string::npos) {
    return InvalidArgument("image store root " + Quoted(root) +
                           " may not hold ':' (skopeo and umoci read \"PATH:tag\" and split at it)");
  }
  if (options.pull_attempts < 1) return InvalidArgument("image store: pull_attempts must be at least 1");
  root = fs::path(root).lexically_normal().string();
  if (root.size() > 1 && root.back() == '/') root.pop_back();
  std::unique_ptr<ImageStore> store(new ImageStore(std::move(root), std::move(options)));
  TESSERA_RETURN_IF_ERROR(store->Load());
  return store;
}

Status ImageStore::Load() {
  const fs::path root(root_);
  std::error_code ec;
  for (const char* dir : {"bundles", "tmp"}) {
    fs::create_directories(root / dir, ec);
    if (ec) return FailedPrecondition("cannot create image store directory " + (root / dir).string() + ": " + ec.message());
  }
  // What a crash left: credentials files, half-unpacked or half-removed
  // bundles, skopeo's temporary blobs ("oci-put-blob*" in the layout).
  for (const fs::path& dir : {root / "tmp", root / "bundles", root / "layout"}) {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (dir == root / "tmp" || name.rfind(kTempPrefix, 0) == 0 || name.rfind("oci-put-blob", 0) == 0) {
        std::error_code ignored;
        fs::remove_all(it->path(), ignored);
      }
    }
  }

  const fs::path state_path = root / kStateFile;
  if (fs::exists(state_path, ec)) {
    Result<json> state = ReadJson(state_path);
    const json* bundles = nullptr;
    if (state.ok()) {
      const auto it = state->find("bundles");
      if (it != state->end() && it->is_array()) bundles = &*it;
    }
    if (bundles == nullptr) {
      return FailedPrecondition("image cache state " + state_path.string() + " is damaged (" +
                                (state.ok() ? std::string("no \"bundles\" array") : state.status().message()) +
                                "); remove it, and the images cached on this node will be pulled again");
    }
    for (const json& entry : *bundles) {
      if (!entry.is_object()) continue;
      const std::string digest = String(entry, "digest");
      if (!IsDigest(digest) || !fs::is_directory(fs::path(BundleDir(digest)) / "rootfs", ec)) continue;
      Bundle bundle;
      for (const std::string& ref : Strings(entry, "references")) bundle.references.insert(ref);
      bundle.size_bytes = Int(entry, "sizeBytes");
      bundle.last_used_ms = Int(entry, "lastUsedMs");
      const auto config = entry.find("config");
      if (config != entry.end()) bundle.config = ConfigFromJson(*config);
      for (const std::string& ref : bundle.references) digest_of_[ref] = digest;
      bundles_[digest] = std::move(bundle);
    }
  }
  // A bundle the state does not name was unpacked by a pull whose record
  // never reached images.json; without its references nothing can use it.
  for (fs::directory_iterator it(root / "bundles", ec), end; !ec && it != end; it.increment(ec)) {
    if (bundles_.count("sha256:" + it->path().filename().string()) == 0) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  return Status::Ok();
}

// Best effort: a write that fails (disk full) leaves the previous file, and
// Open reconciles that with the bundles on disk -- at worst an image is pulled
// again, or an LRU order is a little stale. Not worth failing a task for.
void ImageStore::Save() const {
  json bundles = json::array();
  for (const auto& [digest, bundle] : bundles_) {
    bundles.push_back({{"digest", digest},
                       {"references", bundle.references},
                       {"sizeBytes", bundle.size_bytes},
                       {"lastUsedMs", bundle.last_used_ms},
                       {"config", ConfigToJson(bundle.config)}});
  }
  const json state = {{"version", 1}, {"bundles", std::move(bundles)}};
  static_cast<void>(WriteFileAtomically(fs::path(root_) / kStateFile, state.dump(1)));
}

std::int64_t ImageStore::NowMs() const {
  static const SystemWallClock kSystem;
  return (options_.clock != nullptr ? *options_.clock : static_cast<const WallClock&>(kSystem)).NowMs();
}

std::string ImageStore::BundleDir(const std::string& digest) const {
  return root_ + "/bundles/" + digest.substr(std::string_view("sha256:").size());
}

Image ImageStore::MakeImage(const std::string& reference, const std::string& digest) {
  const Bundle& bundle = bundles_.at(digest);
  return Image{reference, digest, BundleDir(digest), bundle.config, bundle.size_bytes, ImageLease(this, digest)};
}

void ImageStore::Release(const std::string& digest) {
  std::lock_guard lock(mu_);
  // A leased bundle is never collected, so it is still here.
  Bundle& bundle = bundles_.at(digest);
  --bundle.leases;
  bundle.last_used_ms = NowMs();
  Save();
}

Result<Image> ImageStore::Ensure(const ImageReference& ref, PullPolicy policy,
                                 const std::optional<Credentials>& credentials, const ProgressCallback& progress) {
  const std::string canonical = ref.Canonical();
  if (credentials && credentials->username.find(':') != std::string::npos) {
    return InvalidArgument("pulling " + canonical + ": a registry username may not hold ':'");
  }
  std::shared_ptr<InFlight> flight;
  {
    std::unique_lock lock(mu_);
    if (policy != PullPolicy::kAlways) {
      if (const auto it = digest_of_.find(canonical); it != digest_of_.end()) {
        Bundle& bundle = bundles_.at(it->second);
        ++bundle.leases;
        bundle.last_used_ms = NowMs();
        Save();
        return MakeImage(canonical, it->second);
      }
      if (policy == PullPolicy::kNever) {
        return NotFound("image " + canonical + " is not on this node, and its pull policy is Never");
      }
    }
    std::shared_ptr<InFlight>& slot = in_flight_[canonical];
    if (slot != nullptr) {
      flight = slot;
      ++flight->waiters;
      lock.unlock();
      if (progress) progress(PullProgress{.phase = PullProgress::Phase::kWaiting});
      lock.lock();
      pulled_.wait(lock, [&] { return flight->done; });
      // The puller counted this caller's lease with its own (see Finish).
      if (!flight->result.ok()) return flight->result.status();
      return MakeImage(canonical, flight->result->digest);
    }
    slot = flight = std::make_shared<InFlight>();
  }
  return PullAndShare(ref, flight, credentials, progress);
}

Result<Image> ImageStore::PullAndShare(const ImageReference& ref, const std::shared_ptr<InFlight>& flight,
                                       const std::optional<Credentials>& credentials,
                                       const ProgressCallback& progress) {
  const std::string canonical = ref.Canonical();
  Backoff backoff(options_.retry_first_delay, options_.retry_first_delay * 32, std::random_device{}());
  Status failure;
  for (int attempt = 1; attempt <= options_.pull_attempts; ++attempt) {
    std::optional<Image> ready;
    bool retry = false;
    {
      std::lock_guard layout(layout_mu_);
      Attempt outcome = PullOnce(ref, credentials, progress, attempt);
      if (outcome.result.ok()) {
        std::lock_guard lock(mu_);
        Commit(canonical, *outcome.result);
        Finish(canonical, flight, outcome.result);
        ready.emplace(MakeImage(canonical, outcome.result->digest));
      } else {
        failure = outcome.result.status();
        retry = outcome.retry;
      }
    }
    if (ready) {
      if (progress) progress(PullProgress{.phase = PullProgress::Phase::kReady, .attempt = attempt, .bytes = ready->size_bytes});
      return std::move(*ready);
    }
    if (!retry) break;
    if (attempt == options_.pull_attempts) {
      if (attempt > 1) {
        failure = Status(failure.code(), failure.message() + "; gave up after " + std::to_string(attempt) + " attempts");
      }
      break;
    }
    if (progress) {
      progress(PullProgress{.phase = PullProgress::Phase::kRetrying, .attempt = attempt + 1,
                            .detail = failure.message()});
    }
    std::this_thread::sleep_for(backoff.Next());
  }
  std::lock_guard lock(mu_);
  Finish(canonical, flight, failure);
  return failure;
}

void ImageStore::Commit(const std::string& canonical, const Pulled& pulled) {
  if (const auto old = digest_of_.find(canonical); old != digest_of_.end() && old->second != pulled.digest) {
    bundles_.at(old->second).references.erase(canonical);  // superseded: kept while leased, then collected
  }
  Bundle& bundle = bundles_[pulled.digest];
  bundle.references.insert(canonical);
  bundle.size_bytes = pulled.size_bytes;
  bundle.config = pulled.config;
  bundle.last_used_ms = NowMs();
  digest_of_[canonical] = pulled.digest;
  Save();
}

void ImageStore::Finish(const std::string& canonical, const std::shared_ptr<InFlight>& flight,
                        Result<Pulled> result) {
  // Every waiter's lease is counted here, with the puller's, before anyone
  // wakes: a Collect between the wake-up and the waiter's MakeImage would
  // otherwise see the bundle unused.
  if (result.ok()) bundles_.at(result->digest).leases += 1 + flight->waiters;
  flight->result = std::move(result);
  flight->done = true;
  in_flight_.erase(canonical);
  pulled_.notify_all();
}

ImageStore::Attempt ImageStore::PullOnce(const ImageReference& ref, const std::optional<Credentials>& credentials,
                                         const ProgressCallback& progress, int attempt) {
  const std::string canonical = ref.Canonical();
  const std::string key = TagKey(canonical);
  const fs::path layout = fs::path(root_) / "layout";
  const std::string destination = "oci:" + layout.string() + ":" + key;

  std::vector<std::string> argv = {options_.skopeo, "copy", "--remove-signatures"};
  // --remove-signatures: an OCI layout cannot store signatures, and skopeo
  // fails a copy that would drop some; the node's signature policy
  // (containers-policy.json) is still checked on the source.
  if (ref.kind == ImageReference::Kind::kRegistry) {
    const auto& insecure = options_.insecure_registries;
    if (std::find(insecure.begin(), insecure.end(), ref.registry) != insecure.end()) {
      argv.push_back("--src-tls-verify=false");
    }
  }
  AuthFile auth;
  if (credentials && ref.kind == ImageReference::Kind::kRegistry) {
    if (Status written = auth.Write(fs::path(root_) / "tmp", ref.registry, *credentials); !written.ok()) {
      return {written};
    }
    argv.insert(argv.end(), {"--src-authfile", auth.path()});
  }
  argv.insert(argv.end(), {ref.SkopeoSource(), destination});

  PullProgress pulling{.phase = PullProgress::Phase::kPulling, .attempt = attempt};
  if (progress) progress(pulling);
  CommandSpec copy{.argv = std::move(argv), .timeout = options_.pull_timeout};
  if (progress) {
    copy.on_stdout_line = [&](std::string_view line) {
      if (line.rfind("Copying blob ", 0) != 0) return;
      ++pulling.blobs_started;
      progress(pulling);
    };
  }
  Result<CommandResult> copied = RunCommand(copy);
  if (!copied.ok()) {
    return {FailedPrecondition("cannot pull " + canonical + ": " + copied.status().message() +
                               " (is skopeo installed? its path: " + Quoted(options_.skopeo) + ")")};
  }
  if (copied->timed_out) {
    return {FailedPrecondition("pulling " + canonical + " took longer than the pull timeout of " +
                                   Seconds(options_.pull_timeout) + "; the registry may be unreachable or slow"),
            true};
  }
  if (copied->exit_code != 0) {
    Failure failure = ClassifySkopeo(ref, copied->stderr_tail + copied->stdout_tail, credentials);
    return {std::move(failure.status), failure.retry};
  }

  const auto tags = LayoutTags(layout);
  const auto tagged = tags.find(key);
  if (tagged == tags.end()) {
    return {Internal("pulling " + canonical + ": skopeo succeeded but " + (layout / "index.json").string() +
                     " has no manifest tagged " + Quoted(key))};
  }
  const std::string digest = tagged->second;
  // A registry pin was checked by skopeo as it fetched (see the header);
  // an oci: source is selected by tag, so its pin is checked here.
  if (ref.kind == ImageReference::Kind::kOciLayout && ref.pinned() && digest != ref.digest) {
    static_cast<void>(RunUmoci("untagging a refused image", {"rm", "--image", layout.string() + ":" + key}));
    return {FailedPrecondition("image " + canonical + ": the OCI layout's tag " + Quoted(ref.tag) + " is manifest " +
                               digest + ", not the pinned " + ref.digest + "; refusing it")};
  }
  {
    std::lock_guard lock(mu_);
    if (const auto it = bundles_.find(digest); it != bundles_.end()) {
      return {Pulled{digest, it->second.config, it->second.size_bytes}};
    }
  }
  return {Unpack(canonical, key, digest, progress, attempt)};
}

Result<ImageStore::Pulled> ImageStore::Unpack(const std::string& canonical, const std::string& key,
                                              const std::string& digest, const ProgressCallback& progress,
                                              int attempt) {
  const fs::path layout = fs::path(root_) / "layout";
  Result<Manifest> manifest = ReadManifest(layout, digest);
  if (!manifest.ok()) return Internal("image " + canonical + ": " + manifest.status().message());
  Result<ImageConfig> config = ReadImageConfig(layout, manifest->config);
  if (!config.ok()) return Internal("image " + canonical + ": " + config.status().message());
  if (progress) {
    progress(PullProgress{.phase = PullProgress::Phase::kUnpacking, .attempt = attempt,
                          .layers = static_cast<int>(manifest->layers.size()), .bytes = manifest->layer_bytes});
  }

  const fs::path bundle = BundleDir(digest);
  const fs::path temp = fs::path(root_) / "bundles" /
                        (std::string(kTempPrefix) + bundle.filename().string() + "-unpacking");
  std::error_code ec;
  fs::remove_all(temp, ec);
  // `raw unpack`: the rootfs alone. `unpack` also writes a runtime config
  // (the agent writes its own) and an mtree manifest that hashes every file
  // of the rootfs again: a quarter of the unpack's time, for nothing here.
  fs::create_directories(temp, ec);
  std::vector<std::string> args = {"raw", "unpack"};
  // Unprivileged, umoci cannot chown the rootfs to the image's owners
  // ("lchown ...: operation not permitted"); --rootless maps them to the agent's user.
  if (geteuid() != 0) args.push_back("--rootless");
  args.insert(args.end(), {"--image", layout.string() + ":" + key, (temp / "rootfs").string()});
  if (Status unpacked = RunUmoci("unpacking " + canonical, std::move(args)); !unpacked.ok()) {
    fs::remove_all(temp, ec);
    return unpacked;
  }
  fs::remove_all(bundle, ec);  // one whose record never reached images.json (Open removes those too)
  fs::rename(temp, bundle, ec);
  if (ec) {
    fs::remove_all(temp, ec);
    return Internal("image " + canonical + ": cannot move the unpacked bundle to " + bundle.string() + ": " + ec.message());
  }
  return Pulled{digest, std::move(*config), TreeBytes(bundle)};
}

Status ImageStore::RunUmoci(const std::string& what, std::vector<std::string> args) {
  args.insert(args.begin(), options_.umoci);
  Result<CommandResult> ran = RunCommand(CommandSpec{.argv = std::move(args), .timeout = options_.unpack_timeout});
  if (!ran.ok()) {
    return FailedPrecondition(what + ": " + ran.status().message() + " (is umoci installed? its path: " +
                              Quoted(options_.umoci) + ")");
  }
  if (ran->timed_out) return FailedPrecondition(what + ": umoci took longer than " + Seconds(options_.unpack_timeout));
  if (ran->exit_code == 0) return Status::Ok();
  const std::string output = ran->stderr_tail + ran->stdout_tail;
  const std::string said = " (umoci: " + ToolMessage(output, {}) + ")";
  if (Contains(Lower(output), "no space left on device")) {
    return ResourceExhausted(what + ": the node's disk is full; free space or lower the image cache's size limit" + said, 0);
  }
  return Internal(what + " failed" + said);
}

Result<CollectStats> ImageStore::Collect() {
  std::lock_guard layout_lock(layout_mu_);
  const fs::path layout = fs::path(root_) / "layout";
  const fs::path blobs = layout / "blobs";
  const std::map<std::string, std::string> tags = LayoutTags(layout);
  // The blobs each tag reaches, to count what removing a bundle frees (read
  // before mu_: the layout cannot change while layout_mu_ is held).
  std::map<std::string, std::vector<std::string>> reaches;  // tag -> blob digests
  std::map<std::string, std::int64_t> blob_bytes;
  for (const auto& [tag, manifest_digest] : tags) {
    std::vector<std::string>& reached = reaches[tag];
    reached.push_back(manifest_digest);
    if (Result<Manifest> manifest = ReadManifest(layout, manifest_digest); manifest.ok()) {
      reached.push_back(manifest->config);
      reached.insert(reached.end(), manifest->layers.begin(), manifest->layers.end());
    }
    for (const std::string& blob : reached) {
      std::error_code ec;
      const std::uintmax_t size = fs::file_size(BlobPath(layout, blob), ec);
      blob_bytes[blob] = ec ? 0 : static_cast<std::int64_t>(size);
    }
  }
  const std::int64_t layout_bytes = TreeBytes(blobs);
  CollectStats stats;
  std::vector<std::string> untag;
  {
    std::lock_guard lock(mu_);
    std::int64_t bundle_bytes = 0;
    for (const auto& [digest, bundle] : bundles_) bundle_bytes += bundle.size_bytes;
    stats.bytes_before = bundle_bytes + layout_bytes;

    std::set<std::string> kept;
    for (const auto& [digest, bundle] : bundles_) kept.insert(digest);
    // Bundles and the blobs their references' tags reach; a tag no
    // reference names (a crash between copy and record) reaches nothing kept.
    const auto projected = [&] {
      std::int64_t total = 0;
      std::set<std::string> reached;
      for (const std::string& digest : kept) {
        const Bundle& bundle = bundles_.at(digest);
        total += bundle.size_bytes;
        for (const std::string& ref : bundle.references) {
          const auto it = reaches.find(TagKey(ref));
          if (it != reaches.end()) reached.insert(it->second.begin(), it->second.end());
        }
      }
      for (const std::string& blob : reached) total += blob_bytes[blob];
      return total;
    };
    std::vector<std::pair<std::int64_t, std::string>> unused;  // (last use, digest)
    for (const auto& [digest, bundle] : bundles_) {
      if (bundle.leases == 0) unused.emplace_back(bundle.last_used_ms, digest);
    }
    std::sort(unused.begin(), unused.end());
    for (const auto& [last_used, digest] : unused) {
      if (options_.size_limit_bytes <= 0 || projected() <= options_.size_limit_bytes) break;
      kept.erase(digest);
      stats.removed.push_back(digest);
    }

    std::set<std::string> live_tags;
    for (const auto& [ref, digest] : digest_of_) {
      if (kept.count(digest) != 0) live_tags.insert(TagKey(ref));
    }
    for (const auto& [tag, manifest_digest] : tags) {
      if (live_tags.count(tag) == 0) untag.push_back(tag);
    }
    for (const std::string& digest : stats.removed) {
      for (const std::string& ref : bundles_.at(digest).references) digest_of_.erase(ref);
      bundles_.erase(digest);
    }
    if (!stats.removed.empty()) Save();
  }

  for (const std::string& digest : stats.removed) {
    // Renamed first: a crash inside remove_all leaves a .tmp- name, never a
    // partial bundle under its digest.
    const fs::path bundle = BundleDir(digest);
    const fs::path doomed = bundle.parent_path() / (std::string(kTempPrefix) + bundle.filename().string() + "-gone");
    std::error_code ec;
    fs::rename(bundle, doomed, ec);
    fs::remove_all(ec ? bundle : doomed, ec);
  }
  for (const std::string& tag : untag) {
    TESSERA_RETURN_IF_ERROR(RunUmoci("untagging " + tag + " in " + layout.string(),
                                     {"rm", "--image", layout.string() + ":" + tag}));
  }
  std::error_code ec;
  if (fs::exists(layout / "index.json", ec)) {
    TESSERA_RETURN_IF_ERROR(RunUmoci("collecting unused blobs in " + layout.string(), {"gc", "--layout", layout.string()}));
  }
  std::int64_t bundle_bytes = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& [digest, bundle] : bundles_) bundle_bytes += bundle.size_bytes;
  }
  stats.bytes_after = bundle_bytes + TreeBytes(blobs);
  return stats;
}

std::vector<CachedImage> ImageStore::List() const {
  std::lock_guard lock(mu_);
  std::vector<CachedImage> images;
  for (const auto& [digest, bundle] : bundles_) {
    images.push_back(CachedImage{{bundle.references.begin(), bundle.references.end()}, digest, bundle.size_bytes,
                                 bundle.last_used_ms, bundle.leases});
  }
  std::sort(images.begin(), images.end(), [](const CachedImage& a, const CachedImage& b) {
    return std::tie(a.last_used_ms, a.digest) < std::tie(b.last_used_ms, b.digest);
  });
  return images;
}

}  // namespace tessera::node
