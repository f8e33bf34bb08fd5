// Queues' registry logins through the services, on a real SQLite file and a
// real key file: who may set them, that no answer and no stored byte holds a
// password, and what a restart does with the key kept, lost or changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "controlplane/control_plane.h"
#include "controlplane/testing/await.h"
#include "store/sqlite_store.h"

namespace tessera::controlplane {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPassword[] = "hunter2-s3cret";

using testing::Await;

class RegistryCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tessera-logins-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_TRUE(Open(dir_ + "/secret.key").ok());
    QueueChange team_a{{"team-a", 0, model::kUnlimited, 1.0, model::kUnlimited}, {{"alice"}, {}}};
    ASSERT_TRUE(Await<bool>([&](Done<bool> done) { plane_->PutQueue(admin_, team_a, std::move(done)); }).ok());
  }
  void TearDown() override {
    Close();
    fs::remove_all(dir_);
  }

  // A control plane on the directory's state.db, recovered, with `key` as its secret key file.
  Status Open(const std::string& key, bool quarantine = false) {
    Close();
    auto store = store::SqliteStore::Open(dir_ + "/state.db");
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    ControlPlaneOptions options;
    options.access.enabled = true;
    options.access.rate_per_token = 0;
    options.initial_queues = {{"team-a", 0, model::kUnlimited, 1.0}, {"team-a/nlp", 0, model::kUnlimited, 1.0}, {"team-b", 0, model::kUnlimited, 1.0}};
    options.secret_key_file = key;
    options.quarantine_damaged = quarantine;
    Result<sched::Scheduler> scheduler = sched::Scheduler::Create({});
    if (!scheduler.ok()) return scheduler.status();
    plane_ = std::make_unique<ControlPlane>(options, *store_, std::move(*scheduler));
    return plane_->Recover();
  }
  void Close() {
    if (plane_) plane_->Stop();
    plane_.reset();
    store_.reset();
  }

  Result<bool> Put(const auth::Caller& caller, RegistryLogin login) {
    return Await<bool>([&](Done<bool> done) { plane_->PutRegistryCredential(caller, login, std::move(done)); });
  }
  std::string StoredBytes() {
    std::ifstream in(dir_ + "/state.db", std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }

  std::string dir_;
  std::unique_ptr<store::StateStore> store_;
  std::unique_ptr<ControlPlane> plane_;
  const auth::Caller admin_{"root", auth::Role::kClusterAdmin, "t0", true};
  const auth::Caller alice_{"alice", auth::Role::kUser, "t1", true};
  const auth::Caller bob_{"bob", auth::Role::kUser, "t2", true};
};

TEST_F(RegistryCredentialsTest, OnlyAQueueAdminSetsThemAndBadOnesAreRefused) {
  EXPECT_EQ(Put(bob_, {"team-a", "registry.example.com:5000", "robot", kPassword}).status().code(), StatusCode::kPermissionDenied);
  Result<bool> created = Put(alice_, {"team-a", "registry.example.com:5000", "robot", kPassword});
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_TRUE(*created);
  Result<bool> again = Put(alice_, {"team-a", "registry.example.com:5000", "robot2", kPassword});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);  // updated, not created
  // alice administers team-a and what is below it, not team-b.
  EXPECT_TRUE(Put(alice_, {"team-a/nlp", "ghcr.io", "robot", kPassword}).ok());
  EXPECT_EQ(Put(alice_, {"team-b", "ghcr.io", "robot", kPassword}).status().code(), StatusCode::kPermissionDenied);

  EXPECT_EQ(Put(admin_, {"team-z", "ghcr.io", "robot", kPassword}).status().code(), StatusCode::kNotFound);
  const Result<bool> not_a_host = Put(admin_, {"team-a", "Busybox", "robot", kPassword});
  EXPECT_EQ(not_a_host.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(not_a_host.status().message(), HasSubstr("registry: 'Busybox' is not a registry host"));
  EXPECT_THAT(Put(admin_, {"team-a", "ghcr.io", "ro:bot", kPassword}).status().message(), HasSubstr("username: must be given, without ':'"));
  EXPECT_THAT(Put(admin_, {"team-a", "ghcr.io", "robot", ""}).status().message(), HasSubstr("password: must be given"));

  const json listed = plane_->ListRegistryCredentials(alice_);
  ASSERT_EQ(listed["registryCredentials"].size(), 2u);
  // By queue, then registry.
  EXPECT_EQ(listed["registryCredentials"][0]["username"], "robot2");
  EXPECT_EQ(listed["registryCredentials"][1]["queue"], "team-a/nlp");
  EXPECT_EQ(plane_->ListRegistryCredentials(bob_)["registryCredentials"].size(), 0u);
  EXPECT_THAT(listed.dump(), Not(HasSubstr(kPassword)));
  EXPECT_THAT(plane_->ListAudit({}).dump() + plane_->ClusterSummary().dump(), Not(HasSubstr(kPassword)));

  EXPECT_EQ(Await<bool>([&](Done<bool> done) {
              plane_->DeleteRegistryCredential(bob_, "team-a", "ghcr.io", [done](Status s) { done(s.ok() ? Result<bool>(true) : Result<bool>(s)); });
            }).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(RegistryCredentialsTest, ThePasswordIsSealedAtRestAndOpensAfterARestart) {
  ASSERT_TRUE(Put(alice_, {"team-a", "registry.example.com:5000", "robot", kPassword}).ok());
  ASSERT_TRUE(fs::exists(dir_ + "/secret.key"));
  EXPECT_EQ(fs::status(dir_ + "/secret.key").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  Close();
  const std::string stored = StoredBytes();
  EXPECT_THAT(stored, HasSubstr("sealedPassword"));
  EXPECT_THAT(stored, Not(HasSubstr(kPassword)));

  ASSERT_TRUE(Open(dir_ + "/secret.key").ok());
  const json listed = plane_->ListRegistryCredentials(admin_);
  ASSERT_EQ(listed["registryCredentials"].size(), 1u);
  EXPECT_EQ(listed["registryCredentials"][0]["queue"], "team-a");
  EXPECT_EQ(listed["registryCredentials"][0]["updatedBy"], "alice");
}

TEST_F(RegistryCredentialsTest, ALostOrOtherKeyStopsTheStartUnlessTheLoginsAreSetAside) {
  ASSERT_TRUE(Put(alice_, {"team-a", "registry.example.com:5000", "robot", kPassword}).ok());
  const Status lost = Open(dir_ + "/missing.key");
  EXPECT_THAT(lost.message(), HasSubstr("registry-credentials/[\"team-a\",\"registry.example.com:5000\"]: sealedPassword: no secret key at " +
                                        dir_ + "/missing.key"));
  EXPECT_FALSE(fs::exists(dir_ + "/missing.key"));  // recovery makes no key for a store that has secrets

  std::ofstream(dir_ + "/other.key") << std::string(64, '9') << "\n";
  fs::permissions(dir_ + "/other.key", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  const Status other = Open(dir_ + "/other.key");
  EXPECT_THAT(other.message(), HasSubstr("sealedPassword: the sealed secret does not open"));
  EXPECT_THAT(other.message(), HasSubstr("is the server's secret key the one this store was written with?"));

  ASSERT_TRUE(Open(dir_ + "/other.key", /*quarantine=*/true).ok());
  EXPECT_EQ(plane_->ListRegistryCredentials(admin_)["registryCredentials"].size(), 0u);
  Result<std::vector<store::Entry>> quarantined = store_->List(store::Collection::kQuarantine);
  ASSERT_TRUE(quarantined.ok());
  ASSERT_EQ(quarantined->size(), 1u);
  EXPECT_THAT(quarantined->front().key, HasSubstr("registry-credentials/"));
}

TEST_F(RegistryCredentialsTest, DeletingTheQueueDeletesItsLogins) {
  ASSERT_TRUE(Put(admin_, {"team-b", "ghcr.io", "robot", kPassword}).ok());
  ASSERT_TRUE(Put(admin_, {"team-a", "ghcr.io", "robot", kPassword}).ok());
  ASSERT_TRUE(Await<bool>([&](Done<bool> done) {
                plane_->DeleteQueue(admin_, "team-b", [done](Status s) { done(s.ok() ? Result<bool>(true) : Result<bool>(s)); });
              }).ok());
  const json listed = plane_->ListRegistryCredentials(admin_);
  ASSERT_EQ(listed["registryCredentials"].size(), 1u);
  EXPECT_EQ(listed["registryCredentials"][0]["queue"], "team-a");
  Result<std::vector<store::Entry>> stored = store_->List(store::Collection::kRegistryCredentials);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), 1u);
}

}  // namespace
}  // namespace tessera::controlplane
