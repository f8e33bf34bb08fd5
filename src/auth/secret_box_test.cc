#include "auth/secret_box.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::auth {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

SecretBox Box(unsigned char fill) {
  std::array<unsigned char, SecretBox::kKeyBytes> key{};
  key.fill(fill);
  return SecretBox(key);
}

TEST(SecretBox, OpensWhatItSealedInTheSameContextOnly) {
  const SecretBox box = Box(1);
  const std::string sealed = box.Seal("s3cret-pw", "team-a|registry:5000");
  EXPECT_THAT(sealed, Not(HasSubstr("s3cret")));
  EXPECT_TRUE(sealed.starts_with("v1:"));
  Result<std::string> opened = box.Open(sealed, "team-a|registry:5000");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(*opened, "s3cret-pw");
  // Sealing twice gives two texts (a fresh nonce each time).
  EXPECT_NE(box.Seal("s3cret-pw", "c"), box.Seal("s3cret-pw", "c"));
  EXPECT_EQ(*box.Open(box.Seal("", "c"), "c"), "");

  EXPECT_THAT(box.Open(sealed, "team-b|registry:5000").status().message(), HasSubstr("does not open"));
  EXPECT_THAT(Box(2).Open(sealed, "team-a|registry:5000").status().message(), HasSubstr("another key file"));
}

TEST(SecretBox, RefusesAlteredAndMalformedTexts) {
  const SecretBox box = Box(7);
  std::string sealed = box.Seal("password", "k");
  // One bit of the ciphertext flipped: the tag no longer matches.
  sealed[3 + 2 * 12] = sealed[3 + 2 * 12] == '0' ? '1' : '0';
  EXPECT_FALSE(box.Open(sealed, "k").ok());
  for (const char* text : {"", "password", "v1:", "v1:zz", "v1:0123", "v2:00"}) {
    const Result<std::string> opened = box.Open(text, "k");
    EXPECT_FALSE(opened.ok()) << text;
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

class SecretKeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "tessera-secret-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SecretKeyFile, IsCreatedOnceWithMode0600AndReadAgain) {
  const std::string path = dir_ + "/secret.key";
  Result<SecretBox> first = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(first.ok()) << first.status().message();
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(fs::file_size(path), 65u);
  const std::string sealed = first->Seal("pw", "ctx");
  Result<SecretBox> again = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again->Open(sealed, "ctx"), "pw");
}

TEST_F(SecretKeyFile, RefusesAKeyOthersCanReadOrThatIsNoKey) {
  const std::string path = dir_ + "/secret.key";
  ASSERT_TRUE(SecretBox::OpenOrCreate(path).ok());
  fs::permissions(path, fs::perms::group_read, fs::perm_options::add);
  EXPECT_THAT(SecretBox::OpenOrCreate(path).status().message(), HasSubstr("mode 640"));
  fs::permissions(path, fs::perms::group_read, fs::perm_options::remove);
  std::ofstream(path) << "not a key\n";
  EXPECT_THAT(SecretBox::OpenOrCreate(path).status().message(), HasSubstr("is not 64 hex digits"));
  EXPECT_THAT(SecretBox::OpenOrCreate(dir_ + "/missing/secret.key").status().message(), HasSubstr("cannot create the secret key"));
}

}  // namespace
}  // namespace tessera::auth
