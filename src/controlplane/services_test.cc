// The control plane's services called directly, as the routes call them: a
// caller and parsed values in, a Result out, with no HTTP in between. Each
// refusal comes back as the StatusCode the routes map to one HTTP status.
#include <gtest/gtest.h>


#include "controlplane/control_plane.h"
#include "controlplane/testing/await.h"
#include "spec/job_yaml.h"
#include "store/sqlite_store.h"

namespace tessera::controlplane {
namespace {

using nlohmann::json;

constexpr char kJob[] = R"(apiVersion: tessera/v1
kind: Job
metadata: {name: train, queue: team-a}
spec:
  tasks: [{name: worker, replicas: 1, resources: {gpus: 1}, command: [python3, train.py]}]
)";

using testing::Await;

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::SqliteStore::Open(":memory:");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto scheduler = sched::Scheduler::Create({});
    ASSERT_TRUE(scheduler.ok());
    ControlPlaneOptions options;
    options.access.enabled = true;
    options.access.rate_per_token = 0;
    options.access.max_pending_per_user = 2;
    options.event_window = 8;
    options.initial_queues = {{"team-a", 0, model::kUnlimited, 1.0}, {"team-b", 0, model::kUnlimited, 1.0}};
    plane_ = std::make_unique<ControlPlane>(options, *store_, std::move(*scheduler));
    ASSERT_TRUE(plane_->Recover().ok());
    // alice may submit to team-a; bob is in no queue.
    QueueChange team_a{{"team-a", 0, model::kUnlimited, 1.0, model::kUnlimited}, {{}, {"alice"}}};
    ASSERT_TRUE(Await<bool>([&](Done<bool> done) { plane_->PutQueue(admin_, team_a, std::move(done)); }).ok());
  }
  void TearDown() override { plane_->Stop(); }

  Result<std::vector<AcceptedJob>> Submit(const auth::Caller& caller, const std::string& text) {
    Result<std::vector<spec::YamlValue>> documents = spec::LoadJobDocuments(text, "body");
    if (!documents.ok()) return documents.status();
    Submission submission{text, std::move(*documents), "/home/" + caller.user};
    return Await<std::vector<AcceptedJob>>(
        [&](Done<std::vector<AcceptedJob>> done) { plane_->SubmitJobs(caller, std::move(submission), std::move(done)); });
  }

  std::unique_ptr<store::StateStore> store_;
  std::unique_ptr<ControlPlane> plane_;
  const auth::Caller admin_{"root", auth::Role::kClusterAdmin, "t0", true};
  const auth::Caller alice_{"alice", auth::Role::kUser, "t1", true};
  const auth::Caller bob_{"bob", auth::Role::kUser, "t2", true};
  const auth::Caller viewer_{"carol", auth::Role::kViewer, "t3", true};
};

TEST_F(ServicesTest, JobsAreSubmittedSeenAndCancelledOnlyByThoseAllowed) {
  const Result<std::vector<AcceptedJob>> refused = Submit(bob_, kJob);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message(), "bob is not a member of queue team-a (its admins add members: docs/security.md)");

  const Result<std::vector<AcceptedJob>> accepted = Submit(alice_, kJob);
  ASSERT_TRUE(accepted.ok()) << accepted.status().message();
  ASSERT_EQ(accepted->size(), 1u);
  const std::int64_t id = accepted->front().id;
  EXPECT_EQ(accepted->front().name, "train");

  const Result<json> own = plane_->GetJob(alice_, {id, {}});
  ASSERT_TRUE(own.ok());
  EXPECT_EQ((*own)["user"], "alice");
  EXPECT_EQ((*own)["submitDir"], "/home/alice");
  EXPECT_TRUE(plane_->GetJob(viewer_, {id, {}}).ok());
  EXPECT_EQ(plane_->GetJob(bob_, {id, {}}).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(plane_->GetJob(alice_, {id + 100, {}}).status().code(), StatusCode::kNotFound);
  // A list is filtered, not refused.
  EXPECT_EQ((*plane_->ListJobs(bob_, {}))["jobs"].size(), 0u);
  EXPECT_EQ((*plane_->ListJobs(viewer_, {}))["jobs"].size(), 1u);

  const auto cancel = [&](const auth::Caller& caller) {
    return Await<json>([&](Done<json> done) { plane_->CancelJob(caller, {id, {}}, std::move(done)); });
  };
  EXPECT_EQ(cancel(bob_).status().code(), StatusCode::kPermissionDenied);
  const Result<json> cancelled = cancel(alice_);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ((*cancelled)["state"], "cancelled");
  EXPECT_EQ(cancel(alice_).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ServicesTest, ALimitSaysWhenToTryAgain) {
  ASSERT_TRUE(Submit(alice_, kJob).ok());
  ASSERT_TRUE(Submit(alice_, kJob).ok());
  const Result<std::vector<AcceptedJob>> third = Submit(alice_, kJob);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(third.status().retry_after_s(), 10);
  EXPECT_EQ(third.status().message(), "alice has 2 jobs waiting; at most 2 may wait per user");
}

TEST_F(ServicesTest, AJobThatNamesAnUnknownQueueIsInfeasible) {
  std::string text = kJob;
  text.replace(text.find("team-a"), 6, "team-z");
  const Result<std::vector<AcceptedJob>> refused = Submit(admin_, text);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInfeasible);
}

TEST_F(ServicesTest, CredentialsNameTheCallerOrAreRefused) {
  const Result<std::string> token = plane_->IssueToken("alice", auth::Role::kUser, "test");
  ASSERT_TRUE(token.ok());
  const Result<auth::Caller> caller = plane_->Authenticate("Bearer " + *token, "");
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->user, "alice");
  EXPECT_TRUE(caller->Is(auth::Role::kUser));
  EXPECT_TRUE(caller->authenticated);
  // The header that names a user counts only with access control off.
  EXPECT_EQ(plane_->Authenticate("Bearer " + *token, "root")->user, "alice");

  const Result<auth::Caller> none = plane_->Authenticate("", "root");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->authenticated);
  EXPECT_EQ(plane_->Authenticate("Basic abc", "").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(plane_->Authenticate("Bearer tsr_nonsense", "").status().message(),
            "the bearer token is malformed: expected tsr_<16 hex>_<64 hex>");
  std::string forged = *token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(plane_->Authenticate("Bearer " + forged, "").status().message(), "unknown token");

  // A user makes viewer tokens for itself, never admin ones, nor any for others.
  const auto create = [&](TokenRequest request) {
    return Await<json>([&](Done<json> done) { plane_->CreateToken(*caller, std::move(request), std::move(done)); });
  };
  EXPECT_TRUE(create({"", auth::Role::kViewer, "mine", 0}).ok());
  EXPECT_EQ(create({"", auth::Role::kClusterAdmin, "", 0}).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(create({"bob", auth::Role::kViewer, "", 0}).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(ServicesTest, AWatchFromBeforeTheEventWindowHasExpired) {
  // Each update is an event: twelve push the first out of a window of eight.
  for (int i = 0; i < 12; ++i) {
    QueueChange change{{"team-b", 0, model::kUnlimited, 1.0 + i, model::kUnlimited}, {}};
    ASSERT_TRUE(Await<bool>([&](Done<bool> done) { plane_->PutQueue(admin_, change, std::move(done)); }).ok());
  }
  EventQuery query;
  query.since = 1;
  const Result<json> watched = Await<json>([&](Done<json> done) { plane_->WatchEvents(admin_, query, std::move(done)); });
  ASSERT_FALSE(watched.ok());
  EXPECT_EQ(watched.status().code(), StatusCode::kExpired);
  // From the latest revision, with no wait, an empty answer at once.
  query.since = (*plane_->ListJobs(admin_, {}))["revision"].get<std::int64_t>();
  const Result<json> latest = Await<json>([&](Done<json> done) { plane_->WatchEvents(admin_, query, std::move(done)); });
  ASSERT_TRUE(latest.ok());
  EXPECT_TRUE((*latest)["events"].empty());
}

}  // namespace
}  // namespace tessera::controlplane
