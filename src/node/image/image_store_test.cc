#include "node/image/image_store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "node/image/command.h"
#include "node/image/loopback_registry.h"

extern char** environ;

namespace tessera::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using std::chrono::milliseconds;

// The password of the htpasswd registry below; its bcrypt hash (cost 4, so
// the registry checks it fast) was made with Python's crypt.crypt.
constexpr char kPassword[] = "s3cret-pw";
constexpr char kHtpasswd[] = "alice:$2b$04$Xs31/LE.Hh7XxWihJgWGh.GHnnfnbzZP9yy4RO1K95Y2PUCvRpQsO\n";

std::string MakeTempDir(const std::string& what) {
  std::string pattern = testing::TempDir() + "tessera-" + what + "-XXXXXX";
  return mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& content) { std::ofstream(path) << content; }

// Runs a tool the test needs; "" on success, else what went wrong.
std::string Tool(std::vector<std::string> argv) {
  const std::string line = [&] {
    std::string joined;
    for (const std::string& arg : argv) joined += arg + " ";
    return joined;
  }();
  Result<CommandResult> ran = RunCommand(CommandSpec{.argv = std::move(argv), .timeout = milliseconds(30000)});
  if (!ran.ok()) return line + ": " + ran.status().message();
  if (ran->exit_code != 0) return line + "exited " + std::to_string(ran->exit_code) + ": " + ran->stderr_tail;
  return {};
}

// The manifest digest a layout's tag names.
std::string TagDigest(const fs::path& layout, const std::string& tag) {
  const nlohmann::json index = nlohmann::json::parse(ReadAll(layout / "index.json"), nullptr, false);
  if (!index.is_object() || !index.contains("manifests")) return {};
  for (const auto& m : index["manifests"]) {
    if (m.value("annotations", nlohmann::json::object()).value("org.opencontainers.image.ref.name", "") == tag) {
      return m.value("digest", "");
    }
  }
  return {};
}

ino_t Inode(const fs::path& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string BlobHex(const std::string& digest) { return digest.substr(7); }

// The tools, and an image built offline from busybox-static, shared by the
// tests: tag "t" runs `sh -c "echo hi"` with FOO=bar in /work; tag "t2" is the
// same layer under another config (so another manifest, another bundle).
class ImageStoreTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* tool : {"skopeo", "umoci"}) {
      if (!Tool({tool, "--version"}).empty()) {
        skip_ = std::string(tool) + " is not installed (Debian package " + tool + ")";
        return;
      }
    }
    if (access("/bin/busybox", X_OK) != 0) {
      skip_ = "/bin/busybox is missing (Debian package busybox-static)";
      return;
    }
    suite_dir_ = MakeTempDir("image-suite");
    layout_ = suite_dir_ + "/layout";
    const std::string bundle = suite_dir_ + "/bundle";
    std::vector<std::string> unpack = {"umoci", "unpack"};
    if (geteuid() != 0) unpack.push_back("--rootless");
    unpack.insert(unpack.end(), {"--image", layout_ + ":t", bundle});
    // repack takes no --rootless: it reads how the bundle was unpacked from its umoci.json.
    const std::vector<std::string> repack = {"umoci", "repack", "--image", layout_ + ":t", bundle};
    for (std::string error : {Tool({"umoci", "init", "--layout", layout_}), Tool({"umoci", "new", "--image", layout_ + ":t"}),
                              Tool(unpack)}) {
      ASSERT_EQ(error, "");
    }
    fs::create_directories(bundle + "/rootfs/bin");
    fs::copy_file("/bin/busybox", bundle + "/rootfs/bin/busybox");
    fs::create_symlink("busybox", bundle + "/rootfs/bin/sh");
    ASSERT_EQ(Tool(repack), "");
    ASSERT_EQ(Tool({"umoci", "config", "--image", layout_ + ":t", "--config.cmd", "/bin/sh", "--config.cmd", "-c",
                    "--config.cmd", "echo hi", "--config.env", "FOO=bar", "--config.workingdir", "/work"}),
              "");
    ASSERT_EQ(Tool({"umoci", "config", "--image", layout_ + ":t", "--tag", "t2", "--config.cmd", "/bin/true"}), "");
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    if (!suite_dir_.empty()) fs::remove_all(suite_dir_, ignored);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    dir_ = MakeTempDir("image-store");
    ASSERT_FALSE(dir_.empty());
    // skopeo behind a wrapper that logs each run's arguments.
    skopeo_log_ = dir_ + "/skopeo.log";
    WriteFile(dir_ + "/skopeo", "#!/bin/sh\necho \"$*\" >> " + skopeo_log_ + "\nexec skopeo \"$@\"\n");
    fs::permissions(dir_ + "/skopeo", fs::perms::owner_all);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  ImageStoreOptions Options() const {
    ImageStoreOptions options;
    options.skopeo = dir_ + "/skopeo";
    options.pull_timeout = milliseconds(20000);
    options.unpack_timeout = milliseconds(20000);
    options.pull_attempts = 2;
    options.retry_first_delay = milliseconds(20);
    return options;
  }
  ImageStore& Open(ImageStoreOptions options) {
    store_.reset();
    Result<std::unique_ptr<ImageStore>> opened = ImageStore::Open(dir_ + "/images", std::move(options));
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
    return *store_;
  }
  ImageStore& Open() { return Open(Options()); }

  int SkopeoRuns() const {
    std::istringstream lines(ReadAll(skopeo_log_));
    int runs = 0;
    for (std::string line; std::getline(lines, line);) runs += line.rfind("copy ", 0) == 0;
    return runs;
  }

  static ImageReference Ref(const std::string& text) {
    Result<ImageReference> ref = model::ParseImageReference(text);
    EXPECT_TRUE(ref.ok()) << ref.status().message();
    return ref.ok() ? *ref : ImageReference{};
  }
  static ImageReference Local(const std::string& tag) { return Ref("oci:" + layout_ + ":" + tag); }

  Image Ensure(const ImageReference& ref, PullPolicy policy = PullPolicy::kIfNotPresent) {
    Result<Image> image = store_->Ensure(ref, policy);
    EXPECT_TRUE(image.ok()) << image.status().message();
    return image.ok() ? std::move(*image) : Image{};
  }

  static inline std::string skip_, suite_dir_, layout_;
  std::string dir_, skopeo_log_;
  std::unique_ptr<ImageStore> store_;
};

TEST_F(ImageStoreTest, EnsureUnpacksAnOciImageIntoABundleWithItsConfig) {
  ImageStore& store = Open();
  std::vector<PullProgress> phases;
  Result<Image> image = store.Ensure(Local("t"), PullPolicy::kIfNotPresent, std::nullopt,
                                     [&](const PullProgress& p) { phases.push_back(p); });
  ASSERT_TRUE(image.ok()) << image.status().message();

  EXPECT_EQ(image->reference, "oci:" + layout_ + ":t");
  EXPECT_EQ(image->digest, TagDigest(layout_, "t"));
  EXPECT_EQ(image->bundle, dir_ + "/images/bundles/" + BlobHex(image->digest));
  const fs::path rootfs = image->bundle + "/rootfs";
  EXPECT_EQ(fs::file_size(rootfs / "bin/busybox"), fs::file_size("/bin/busybox"));
  EXPECT_EQ(fs::read_symlink(rootfs / "bin/sh"), "busybox");
  EXPECT_FALSE(fs::exists(image->bundle + "/config.json"));  // the rootfs alone: the agent writes the runtime config
  EXPECT_GE(image->size_bytes, static_cast<std::int64_t>(fs::file_size("/bin/busybox")));
  // The unpacked binary is intact: it runs.
  Result<CommandResult> ran = RunCommand(CommandSpec{.argv = {(rootfs / "bin/busybox").string(), "echo", "ok"}});
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(ran->stdout_tail, "ok\n");

  EXPECT_THAT(image->config.cmd, ::testing::ElementsAre("/bin/sh", "-c", "echo hi"));
  EXPECT_THAT(image->config.env, ::testing::Contains("FOO=bar"));
  EXPECT_EQ(image->config.working_dir, "/work");
  EXPECT_TRUE(image->config.entrypoint.empty());

  ASSERT_GE(phases.size(), 3u);
  EXPECT_EQ(phases.front().phase, PullProgress::Phase::kPulling);
  const auto unpacking = std::find_if(phases.begin(), phases.end(),
                                      [](const PullProgress& p) { return p.phase == PullProgress::Phase::kUnpacking; });
  ASSERT_NE(unpacking, phases.end());
  EXPECT_EQ(unpacking->layers, 1);
  EXPECT_GT(unpacking->bytes, 0);
  // skopeo's "Copying blob" line for the one layer was counted before the unpack.
  EXPECT_EQ(std::prev(unpacking)->blobs_started, 1);
  EXPECT_EQ(phases.back().phase, PullProgress::Phase::kReady);
  EXPECT_EQ(phases.back().bytes, image->size_bytes);

  const std::vector<CachedImage> cached = store.List();
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_THAT(cached[0].references, ::testing::ElementsAre(image->reference));
  EXPECT_EQ(cached[0].digest, image->digest);
  EXPECT_EQ(cached[0].size_bytes, image->size_bytes);
  EXPECT_EQ(cached[0].in_use, 1);
  EXPECT_GT(cached[0].last_used_ms, 0);
  *image = Image{};
  EXPECT_EQ(store.List()[0].in_use, 0);
}

TEST_F(ImageStoreTest, APresentImageIsReusedWithoutSkopeoAlsoAfterARestart) {
  Open();
  Image first = Ensure(Local("t"));
  const ino_t inode = Inode(first.bundle + "/rootfs");
  Image second = Ensure(Local("t"));
  EXPECT_EQ(SkopeoRuns(), 1);
  EXPECT_EQ(second.bundle, first.bundle);
  EXPECT_EQ(Inode(second.bundle + "/rootfs"), inode);
  EXPECT_EQ(second.config.cmd, first.config.cmd);
  EXPECT_EQ(store_->List()[0].in_use, 2);
  const std::string digest = first.digest;
  const std::int64_t size = first.size_bytes;
  first = Image{};  // leases end before their store
  second = Image{};

  ImageStore& restarted = Open();
  const Image third = Ensure(Local("t"));
  EXPECT_EQ(SkopeoRuns(), 1);
  EXPECT_EQ(third.digest, digest);
  EXPECT_EQ(Inode(third.bundle + "/rootfs"), inode);
  EXPECT_THAT(third.config.cmd, ::testing::ElementsAre("/bin/sh", "-c", "echo hi"));
  EXPECT_EQ(third.size_bytes, size);
  EXPECT_EQ(restarted.List().size(), 1u);
}

TEST_F(ImageStoreTest, ConcurrentEnsuresOfOneImagePullItOnce) {
  ImageStore& store = Open();
  constexpr int kThreads = 4;
  std::latch start(kThreads);
  std::vector<std::optional<Result<Image>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i].emplace(store.Ensure(Local("t"), PullPolicy::kIfNotPresent));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(SkopeoRuns(), 1);
  for (const std::optional<Result<Image>>& result : results) {
    ASSERT_TRUE(result.has_value() && result->ok()) << (result ? result->status().message() : "not run");
    EXPECT_EQ((*result)->digest, (*results[0])->digest);
    EXPECT_EQ((*result)->bundle, (*results[0])->bundle);
  }
  ASSERT_EQ(store.List().size(), 1u);
  EXPECT_EQ(store.List()[0].in_use, kThreads);
  results.clear();
  EXPECT_EQ(store.List()[0].in_use, 0);
}

TEST_F(ImageStoreTest, NeverGivesNotFoundForAnAbsentImageWithoutPulling) {
  ImageStore& store = Open();
  Result<Image> absent = store.Ensure(Local("t"), PullPolicy::kNever);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(absent.status().message(), "image oci:" + layout_ + ":t is not on this node, and its pull policy is Never");
  EXPECT_EQ(SkopeoRuns(), 0);
  Ensure(Local("t"));
  EXPECT_TRUE(store.Ensure(Local("t"), PullPolicy::kNever).ok());
  EXPECT_EQ(SkopeoRuns(), 1);
}

TEST_F(ImageStoreTest, AlwaysCopiesAgainButUnpacksOnlyANewDigest) {
  // A layout of this test's own, so that its tag can move.
  const std::string layout = dir_ + "/source";
  fs::copy(layout_, layout, fs::copy_options::recursive);
  const ImageReference ref = Ref("oci:" + layout + ":t");
  ImageStore& store = Open();
  Image old_image = Ensure(ref, PullPolicy::kAlways);
  const ino_t inode = Inode(old_image.bundle + "/rootfs");
  Image same = Ensure(ref, PullPolicy::kAlways);
  EXPECT_EQ(SkopeoRuns(), 2);
  EXPECT_EQ(same.digest, old_image.digest);
  EXPECT_EQ(Inode(same.bundle + "/rootfs"), inode);  // not unpacked again
  same = Image{};

  ASSERT_EQ(Tool({"umoci", "config", "--image", layout + ":t", "--config.cmd", "/bin/date"}), "");
  const Image updated = Ensure(ref, PullPolicy::kAlways);
  EXPECT_EQ(SkopeoRuns(), 3);
  EXPECT_EQ(updated.digest, TagDigest(layout, "t"));
  EXPECT_NE(updated.digest, old_image.digest);
  EXPECT_THAT(updated.config.cmd, ::testing::ElementsAre("/bin/date"));
  EXPECT_TRUE(fs::exists(old_image.bundle + "/rootfs/bin/busybox"));  // still leased by old_image

  // The old bundle stays listed, named by no reference, until collected.
  std::vector<CachedImage> cached = store.List();
  ASSERT_EQ(cached.size(), 2u);
  const auto old_entry = std::find_if(cached.begin(), cached.end(),
                                      [&](const CachedImage& c) { return c.digest == old_image.digest; });
  ASSERT_NE(old_entry, cached.end());
  EXPECT_TRUE(old_entry->references.empty());
  EXPECT_EQ(old_entry->in_use, 1);
  // IfNotPresent now gives the new digest.
  EXPECT_EQ(Ensure(ref).digest, updated.digest);
}

TEST_F(ImageStoreTest, CollectRemovesUnusedImagesButKeepsLeasedOnes) {
  ImageStoreOptions options = Options();
  options.size_limit_bytes = 1;
  ImageStore& store = Open(options);
  Image kept = Ensure(Local("t"));
  const std::string unused_digest = Ensure(Local("t2")).digest;  // released at once
  const std::string unused_bundle = dir_ + "/images/bundles/" + BlobHex(unused_digest);
  ASSERT_TRUE(fs::exists(unused_bundle));
  const fs::path blobs = dir_ + "/images/layout/blobs/sha256";
  ASSERT_TRUE(fs::exists(blobs / BlobHex(unused_digest)));

  Result<CollectStats> stats = store.Collect();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_THAT(stats->removed, ::testing::ElementsAre(unused_digest));
  EXPECT_LT(stats->bytes_after, stats->bytes_before);
  EXPECT_FALSE(fs::exists(unused_bundle));
  EXPECT_TRUE(fs::exists(kept.bundle + "/rootfs/bin/busybox"));
  EXPECT_FALSE(fs::exists(blobs / BlobHex(unused_digest)));  // umoci gc dropped its manifest
  EXPECT_TRUE(fs::exists(blobs / BlobHex(kept.digest)));
  ASSERT_EQ(store.List().size(), 1u);
  EXPECT_EQ(store.List()[0].digest, kept.digest);
  EXPECT_EQ(store.Ensure(Local("t2"), PullPolicy::kNever).status().code(), StatusCode::kNotFound);

  const std::string kept_bundle = kept.bundle;
  kept = Image{};
  stats = store.Collect();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->removed.size(), 1u);
  EXPECT_FALSE(fs::exists(kept_bundle));
  EXPECT_TRUE(store.List().empty());
  EXPECT_TRUE(fs::is_empty(blobs));
  EXPECT_EQ(stats->bytes_after, 0);
}

TEST_F(ImageStoreTest, CollectGoesLeastRecentlyUsedFirstAndRemembersUseAcrossRestarts) {
  ManualWallClock clock(1'000'000);
  ImageStoreOptions options = Options();
  options.clock = &clock;
  Open(options);
  static_cast<void>(Ensure(Local("t")));
  clock.Advance(milliseconds(1000));
  const std::string t2 = Ensure(Local("t2")).digest;
  clock.Advance(milliseconds(1000));
  static_cast<void>(Ensure(Local("t")));  // now the more recently used
  Result<CollectStats> unlimited = store_->Collect();
  ASSERT_TRUE(unlimited.ok()) << unlimited.status().message();
  EXPECT_TRUE(unlimited->removed.empty());

  // One byte too many: only the least recently used goes.
  options.size_limit_bytes = unlimited->bytes_after - 1;
  ImageStore& restarted = Open(options);
  Result<CollectStats> stats = restarted.Collect();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_THAT(stats->removed, ::testing::ElementsAre(t2));
  EXPECT_LE(stats->bytes_after, options.size_limit_bytes);
  ASSERT_EQ(restarted.List().size(), 1u);
  EXPECT_EQ(restarted.List()[0].last_used_ms, 1'002'000);
}

TEST_F(ImageStoreTest, APinToAnotherDigestIsRefused) {
  ImageStore& store = Open();
  const std::string actual = TagDigest(layout_, "t");
  const std::string wrong = "sha256:" + std::string(64, 'a');
  Result<Image> refused = store.Ensure(Ref("oci:" + layout_ + ":t@" + wrong), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), "image oci:" + layout_ + ":t@" + wrong + ": the OCI layout's tag \"t\" is manifest " +
                                            actual + ", not the pinned " + wrong + "; refusing it");
  EXPECT_EQ(SkopeoRuns(), 1);  // not retried
  EXPECT_TRUE(store.List().empty());

  const Image pinned = Ensure(Ref("oci:" + layout_ + ":t@" + actual));
  EXPECT_EQ(pinned.digest, actual);
}

TEST_F(ImageStoreTest, AbsentOciImagesAreNotFoundAndNotRetried) {
  ImageStore& store = Open();
  Result<Image> no_tag = store.Ensure(Local("nosuch"), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(no_tag.ok());
  EXPECT_EQ(no_tag.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(no_tag.status().message(),
              HasSubstr("image oci:" + layout_ + ":nosuch not found: the OCI layout at " + layout_ + " has no tag \"nosuch\""));
  Result<Image> no_layout = store.Ensure(Ref("oci:" + dir_ + "/nowhere:t"), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(no_layout.ok());
  EXPECT_EQ(no_layout.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(no_layout.status().message(), HasSubstr("there is no OCI layout at " + dir_ + "/nowhere"));
  EXPECT_EQ(SkopeoRuns(), 2);
}

TEST_F(ImageStoreTest, MissingToolsAreNamed) {
  ImageStoreOptions options = Options();
  options.skopeo = "/nonexistent/skopeo";
  Result<Image> image = Open(options).Ensure(Local("t"), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(image.status().message(), "cannot pull oci:" + layout_ +
                                          ":t: cannot start /nonexistent/skopeo: No such file or directory "
                                          "(is skopeo installed? its path: \"/nonexistent/skopeo\")");
}

TEST_F(ImageStoreTest, OpenRemovesWhatACrashLeft) {
  Open();
  const std::string bundle = Ensure(Local("t")).bundle;
  store_.reset();
  const fs::path bundles = dir_ + "/images/bundles";
  fs::create_directories(bundles / ".tmp-0123-unpacking/rootfs");
  fs::create_directories(bundles / std::string(64, 'b') / "rootfs");  // unpacked, never recorded
  WriteFile(dir_ + "/images/tmp/auth-abc123", "{}");
  ImageStore& store = Open();
  EXPECT_FALSE(fs::exists(bundles / ".tmp-0123-unpacking"));
  EXPECT_FALSE(fs::exists(bundles / std::string(64, 'b')));
  EXPECT_FALSE(fs::exists(dir_ + "/images/tmp/auth-abc123"));
  EXPECT_TRUE(fs::exists(bundle + "/rootfs/bin/busybox"));
  EXPECT_EQ(store.List().size(), 1u);
}

TEST_F(ImageStoreTest, ADamagedStateFileIsNamed) {
  fs::create_directories(dir_ + "/images");
  WriteFile(dir_ + "/images/images.json", "{not json");
  Result<std::unique_ptr<ImageStore>> store = ImageStore::Open(dir_ + "/images", Options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("image cache state " + dir_ + "/images/images.json is damaged"));
  EXPECT_THAT(store.status().message(), HasSubstr("remove it"));

  EXPECT_EQ(ImageStore::Open("relative/images", Options()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ImageStore::Open("/srv/a:b", Options()).status().message(), HasSubstr("may not hold ':'"));
}

using Registry = LoopbackRegistry;

class RegistryImageStoreTest : public ImageStoreTest {
 protected:
  void SetUp() override {
    ImageStoreTest::SetUp();
    if (IsSkipped()) return;
    if (access(Registry::kBinary, X_OK) != 0) GTEST_SKIP() << Registry::kBinary << " is missing (Debian package docker-registry)";
  }
  // A registry holding the test image as test/busybox:1.
  std::unique_ptr<Registry> StartWithImage(bool with_auth) {
    const std::string dir = dir_ + (with_auth ? "/registry-auth" : "/registry");
    fs::create_directories(dir);
    Result<std::unique_ptr<Registry>> started = Registry::Start(dir, with_auth ? kHtpasswd : "");
    EXPECT_TRUE(started.ok()) << started.status().message();
    if (!started.ok()) return nullptr;
    std::unique_ptr<Registry> registry = std::move(*started);
    std::vector<std::string> push = {"skopeo", "copy", "--dest-tls-verify=false"};
    if (with_auth) push.insert(push.end(), {"--dest-creds", std::string("alice:") + kPassword});
    push.insert(push.end(), {"oci:" + layout_ + ":t", "docker://" + registry->host() + "/test/busybox:1"});
    EXPECT_EQ(Tool(push), "");
    return registry;
  }
  ImageStoreOptions InsecureTo(const Registry& registry) const {
    ImageStoreOptions options = Options();
    options.insecure_registries = {registry.host()};
    return options;
  }
};

TEST_F(RegistryImageStoreTest, PullsFromARealRegistryAndNamesWhatIsMissing) {
  std::unique_ptr<Registry> registry = StartWithImage(false);
  ASSERT_NE(registry, nullptr);
  ImageStore& store = Open(InsecureTo(*registry));
  const std::string name = registry->host() + "/test/busybox";
  Image image = Ensure(Ref(name + ":1"));
  // An OCI manifest pushed from a layout comes back byte for byte.
  EXPECT_EQ(image.digest, TagDigest(layout_, "t"));
  EXPECT_TRUE(fs::exists(image.bundle + "/rootfs/bin/busybox"));
  EXPECT_THAT(image.config.cmd, ::testing::ElementsAre("/bin/sh", "-c", "echo hi"));
  EXPECT_THAT(ReadAll(skopeo_log_), HasSubstr("--src-tls-verify=false"));

  // Pinned to what the registry has: the same bundle.
  EXPECT_EQ(Ensure(Ref(name + "@" + image.digest)).bundle, image.bundle);

  Result<Image> no_tag = store.Ensure(Ref(name + ":2"), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(no_tag.ok());
  EXPECT_EQ(no_tag.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(no_tag.status().message(),
              HasSubstr("image " + name + ":2 not found: registry " + registry->host() +
                        " has no tag \"2\" in repository \"test/busybox\" (or no such repository) (skopeo: "));
  EXPECT_THAT(no_tag.status().message(), HasSubstr("manifest unknown"));

  const std::string absent = "sha256:" + std::string(64, 'e');
  Result<Image> no_digest = store.Ensure(Ref(name + "@" + absent), PullPolicy::kIfNotPresent);
  ASSERT_FALSE(no_digest.ok());
  EXPECT_EQ(no_digest.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(no_digest.status().message(), HasSubstr("has no manifest " + absent));
  EXPECT_EQ(SkopeoRuns(), 4);  // nothing above was retried

  // Without the insecure listing, skopeo insists on HTTPS.
  image = Image{};  // its lease ends before its store
  Result<Image> https = Open().Ensure(Ref(name + ":1"), PullPolicy::kAlways);
  ASSERT_FALSE(https.ok());
  EXPECT_EQ(https.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(https.status().message(), HasSubstr("speaks plain HTTP; list it among the node's insecure registries"));
}

TEST_F(RegistryImageStoreTest, AStoppedRegistryIsUnreachableAfterTheRetries) {
  std::unique_ptr<Registry> registry = StartWithImage(false);
  ASSERT_NE(registry, nullptr);
  ImageStoreOptions options = InsecureTo(*registry);
  options.pull_attempts = 3;
  ImageStore& store = Open(options);
  const std::string name = registry->host() + "/test/busybox:1";
  Ensure(Ref(name));
  registry->Stop();

  std::vector<PullProgress::Phase> phases;
  Result<Image> again = store.Ensure(Ref(name), PullPolicy::kAlways, std::nullopt,
                                     [&](const PullProgress& p) { phases.push_back(p.phase); });
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("pulling " + name + ": registry " + registry->host() + " is unreachable"));
  EXPECT_THAT(again.status().message(), HasSubstr("connection refused"));
  EXPECT_THAT(again.status().message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_EQ(SkopeoRuns(), 1 + 3);
  EXPECT_EQ(std::count(phases.begin(), phases.end(), PullProgress::Phase::kRetrying), 2);
  // The cached image is still there for IfNotPresent.
  EXPECT_TRUE(store.Ensure(Ref(name), PullPolicy::kIfNotPresent).ok());
}

TEST_F(RegistryImageStoreTest, CredentialsReachTheRegistryButNoCommandLineOrMessage) {
  std::unique_ptr<Registry> registry = StartWithImage(true);
  ASSERT_NE(registry, nullptr);
  ImageStore& store = Open(InsecureTo(*registry));
  const ImageReference ref = Ref(registry->host() + "/test/busybox:1");

  Result<Image> anonymous = store.Ensure(ref, PullPolicy::kIfNotPresent);
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(anonymous.status().message(), HasSubstr("registry " + registry->host() + " wants credentials"));

  Result<Image> wrong = store.Ensure(ref, PullPolicy::kIfNotPresent, Credentials{"alice", "not-the-password"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(wrong.status().message(), HasSubstr("refused the credentials given for user \"alice\""));
  EXPECT_THAT(wrong.status().message(), Not(HasSubstr("not-the-password")));

  Result<Image> image = store.Ensure(ref, PullPolicy::kIfNotPresent, Credentials{"alice", kPassword});
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_TRUE(fs::exists(image->bundle + "/rootfs/bin/busybox"));
  EXPECT_THAT(ReadAll(skopeo_log_), Not(HasSubstr(kPassword)));
  EXPECT_THAT(ReadAll(skopeo_log_), Not(HasSubstr("not-the-password")));
  EXPECT_TRUE(fs::is_empty(dir_ + "/images/tmp"));  // the credentials file is gone
}

}  // namespace
}  // namespace tessera::node
