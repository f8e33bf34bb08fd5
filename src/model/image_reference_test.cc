#include "model/image_reference.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::model {
namespace {

using ::testing::HasSubstr;

const std::string kHex = "1c7dc84922f0ef5f9dac3236bdeeca136508cdc488021cc80f94c199afeadfc0";

ImageReference Parsed(const std::string& text) {
  Result<ImageReference> ref = ParseImageReference(text);
  EXPECT_TRUE(ref.ok()) << text << ": " << ref.status().message();
  return ref.ok() ? *ref : ImageReference{};
}

std::string ErrorOf(const std::string& text) {
  Result<ImageReference> ref = ParseImageReference(text);
  EXPECT_FALSE(ref.ok()) << text << " parsed as " << (ref.ok() ? ref->Canonical() : "");
  EXPECT_EQ(ref.status().code(), StatusCode::kInvalidArgument) << text;
  return ref.status().message();
}

TEST(ImageReferenceTest, BareNamesAreDockerHubLibraryImagesTaggedLatest) {
  const ImageReference ref = Parsed("busybox");
  EXPECT_EQ(ref.kind, ImageReference::Kind::kRegistry);
  EXPECT_EQ(ref.registry, "docker.io");
  EXPECT_EQ(ref.repository, "library/busybox");
  EXPECT_EQ(ref.tag, "latest");
  EXPECT_FALSE(ref.pinned());
  EXPECT_EQ(ref.Canonical(), "docker.io/library/busybox:latest");
  EXPECT_EQ(ref.SkopeoSource(), "docker://docker.io/library/busybox:latest");

  EXPECT_EQ(Parsed("library/busybox:1.36").Canonical(), "docker.io/library/busybox:1.36");
  EXPECT_EQ(Parsed("acme/tools/cli").Canonical(), "docker.io/acme/tools/cli:latest");
  EXPECT_EQ(Parsed("docker.io/busybox").Canonical(), "docker.io/library/busybox:latest");
  EXPECT_EQ(Parsed("index.docker.io/library/busybox").Canonical(), "docker.io/library/busybox:latest");
}

TEST(ImageReferenceTest, FirstComponentIsAHostOnlyWithADotAColonOrLocalhost) {
  EXPECT_EQ(Parsed("registry.example.com/team/app:v2").registry, "registry.example.com");
  EXPECT_EQ(Parsed("127.0.0.1:5000/test/busybox:1").registry, "127.0.0.1:5000");
  EXPECT_EQ(Parsed("localhost/app").registry, "localhost");
  EXPECT_EQ(Parsed("localhost/app").repository, "app");
  EXPECT_EQ(Parsed("registry:5000/app").registry, "registry:5000");
  // No '.', ':' or "localhost": a Docker Hub user, not a host.
  const ImageReference user = Parsed("myhost/app");
  EXPECT_EQ(user.registry, "docker.io");
  EXPECT_EQ(user.repository, "myhost/app");
  // A registry host may hold uppercase; only the repository must be lowercase.
  EXPECT_EQ(Parsed("Registry.Example.com/app").registry, "Registry.Example.com");
}

TEST(ImageReferenceTest, PortAndTagAreToldApartByTheLastSlash) {
  const ImageReference ref = Parsed("localhost:5000/app");
  EXPECT_EQ(ref.registry, "localhost:5000");
  EXPECT_EQ(ref.repository, "app");
  EXPECT_EQ(ref.tag, "latest");
  EXPECT_EQ(Parsed("localhost:5000/app:dev").tag, "dev");
}

TEST(ImageReferenceTest, DigestPinsAndTheTagIsKeptOnlyWhenWritten) {
  const ImageReference pinned = Parsed("127.0.0.1:5000/test/busybox@sha256:" + kHex);
  EXPECT_TRUE(pinned.pinned());
  EXPECT_EQ(pinned.digest, "sha256:" + kHex);
  EXPECT_EQ(pinned.tag, "");
  EXPECT_EQ(pinned.Canonical(), "127.0.0.1:5000/test/busybox@sha256:" + kHex);
  EXPECT_EQ(pinned.SkopeoSource(), "docker://127.0.0.1:5000/test/busybox@sha256:" + kHex);

  const ImageReference both = Parsed("busybox:1.36@sha256:" + kHex);
  EXPECT_EQ(both.tag, "1.36");
  EXPECT_EQ(both.Canonical(), "docker.io/library/busybox:1.36@sha256:" + kHex);
  // skopeo refuses a tag and a digest together; the digest decides.
  EXPECT_EQ(both.SkopeoSource(), "docker://docker.io/library/busybox@sha256:" + kHex);
}

TEST(ImageReferenceTest, OciLayoutsOnTheNode) {
  const ImageReference ref = Parsed("oci:/srv/images//layout/:v1");
  EXPECT_EQ(ref.kind, ImageReference::Kind::kOciLayout);
  EXPECT_EQ(ref.path, "/srv/images/layout");
  EXPECT_EQ(ref.tag, "v1");
  EXPECT_EQ(ref.Canonical(), "oci:/srv/images/layout:v1");
  EXPECT_EQ(ref.SkopeoSource(), "oci:/srv/images/layout:v1");

  EXPECT_EQ(Parsed("oci:/srv/layout").tag, "latest");
  const ImageReference pinned = Parsed("oci:/srv/layout:v1@sha256:" + kHex);
  EXPECT_TRUE(pinned.pinned());
  EXPECT_EQ(pinned.Canonical(), "oci:/srv/layout:v1@sha256:" + kHex);
  // skopeo selects by tag in a layout; the store checks the pin after the copy.
  EXPECT_EQ(pinned.SkopeoSource(), "oci:/srv/layout:v1");
}

TEST(ImageReferenceTest, CanonicalParsesBackToItself) {
  const std::vector<std::string> texts = {"busybox", "acme/app:1.0", "127.0.0.1:5000/a/b/c:x_y", "oci:/a/b:t",
                                         "ghcr.io/org/img@sha256:" + kHex, "oci:/l:t@sha256:" + kHex};
  for (const std::string& text : texts) {
    const std::string canonical = Parsed(text).Canonical();
    EXPECT_EQ(Parsed(canonical).Canonical(), canonical) << text;
  }
}

TEST(ImageReferenceTest, MalformedReferencesSayWhatIsWrong) {
  EXPECT_EQ(ErrorOf(""), "image reference is empty");
  EXPECT_THAT(ErrorOf("busy box"), HasSubstr("contains whitespace"));
  EXPECT_THAT(ErrorOf("busybox:"), HasSubstr("empty tag after ':'"));
  EXPECT_THAT(ErrorOf("busybox@"), HasSubstr("empty digest after '@'"));
  EXPECT_THAT(ErrorOf("busybox@sha256:abc123"), HasSubstr("has 6 hex digits after sha256:, a sha256 digest has 64"));
  std::string upper = kHex;
  upper[0] = 'C';
  EXPECT_THAT(ErrorOf("busybox@sha256:" + upper), HasSubstr("must be lowercase hex"));
  std::string not_hex = kHex;
  not_hex[5] = 'g';
  EXPECT_THAT(ErrorOf("busybox@sha256:" + not_hex), HasSubstr("(found \"g\")"));
  EXPECT_THAT(ErrorOf("busybox@sha512:" + kHex), HasSubstr("only sha256 digests are supported"));
  EXPECT_THAT(ErrorOf("BusyBox"), HasSubstr("repository \"library/BusyBox\" must be lowercase"));
  EXPECT_THAT(ErrorOf("registry.example.com/Team/app"), HasSubstr("must be lowercase"));
  EXPECT_THAT(ErrorOf("registry.example.com/a//b"), HasSubstr("empty path component"));
  EXPECT_THAT(ErrorOf("registry.example.com/"), HasSubstr("empty path component"));
  EXPECT_THAT(ErrorOf("registry.example.com/-app"), HasSubstr("repository component \"-app\""));
  EXPECT_THAT(ErrorOf("busybox:-x"), HasSubstr("must start with a letter, a digit or '_'"));
  EXPECT_THAT(ErrorOf("busybox:a+b"), HasSubstr("may hold only letters, digits"));
  EXPECT_THAT(ErrorOf("busybox:" + std::string(129, 'a')), HasSubstr("tag is 129 characters long"));
  EXPECT_THAT(ErrorOf("bad_host.com:99999/app"), HasSubstr("is not a host name or IPv4 address"));
  EXPECT_THAT(ErrorOf("docker://busybox"), HasSubstr("without a scheme"));
  EXPECT_THAT(ErrorOf("registry.example.com/" + std::string(250, 'a')), HasSubstr("longer than 255 characters"));
  EXPECT_THAT(ErrorOf("oci:layout:t"), HasSubstr("layout path \"layout\" must be absolute"));
  EXPECT_THAT(ErrorOf("oci:"), HasSubstr("no layout path after \"oci:\""));
  EXPECT_THAT(ErrorOf("oci:/srv/layout:"), HasSubstr("empty tag after ':'"));
  EXPECT_THAT(ErrorOf("oci:/srv/layout:t@sha256:00"), HasSubstr("has 2 hex digits"));
}

}  // namespace
}  // namespace tessera::model
