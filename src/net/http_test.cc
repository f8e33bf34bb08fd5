#include <gtest/gtest.h>

#include <thread>

#include "net/http_client.h"
#include "net/http_server.h"

namespace tessera::net {
namespace {

class HttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/v1/items/{id}", [](const ExchangePtr& ex) {
      HttpResponse r;
      r.body = ex->request().params.at("id") + "|" + ex->request().Query("q");
      ex->Reply(r);
    });
    router_.Add("GET", "/v1/trees/{path*}", [](const ExchangePtr& ex) {
      HttpResponse r;
      r.body = ex->request().params.at("path");
      ex->Reply(r);
    });
    router_.Add("POST", "/v1/items", [](const ExchangePtr& ex) {
      HttpResponse r;
      r.status = 201;
      r.body = std::to_string(ex->request().body.size());
      ex->Reply(r);
    });
    // Answers from another thread, later: how long polls reply.
    router_.Add("GET", "/v1/later", [](const ExchangePtr& ex) {
      std::thread([ex] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        HttpResponse r;
        r.body = "late";
        ex->Reply(r);
      }).detach();
    });
    HttpServerOptions options;
    options.body_limit = 1024;
    server_ = std::make_unique<HttpServer>(options, router_);
    ASSERT_TRUE(server_->Start().ok());
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpTest, RoutesCapturesAndQuery) {
  HttpClient client({"127.0.0.1", server_->port()});
  auto r = client.Send("GET", "/v1/items/abc%20d?q=x+y");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abc d|x y");
  // The same keep-alive connection serves the next call.
  auto again = client.Send("POST", "/v1/items", "hello");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 201);
  EXPECT_EQ(again->body, "5");
}

TEST_F(HttpTest, RestCaptureTakesTheRemainingSegments) {
  HttpClient client({"127.0.0.1", server_->port()});
  auto r = client.Send("GET", "/v1/trees/research/nlp/alice");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body, "research/nlp/alice");
  auto none = client.Send("GET", "/v1/trees");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->status, 404);
}

TEST_F(HttpTest, UnknownPathAndWrongMethod) {
  HttpClient client({"127.0.0.1", server_->port()});
  auto missing = client.Send("GET", "/v1/nothing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("no such API path: /v1/nothing"), std::string::npos);
  auto wrong = client.Send("DELETE", "/v1/items");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 405);
  EXPECT_NE(wrong->body.find("allowed: POST"), std::string::npos);
}

TEST_F(HttpTest, OversizedBodyIs413) {
  HttpClient client({"127.0.0.1", server_->port()});
  auto r = client.Send("POST", "/v1/items", std::string(5000, 'x'));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("limit of 1024 bytes"), std::string::npos);
  // The client reconnects for the next call.
  auto next = client.Send("GET", "/v1/items/1");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->status, 200);
}

TEST_F(HttpTest, DeferredReplyFromAnotherThread) {
  HttpClient client({"127.0.0.1", server_->port()});
  auto r = client.Send("GET", "/v1/later");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body, "late");
}

TEST(HttpClientTest, RefusedConnectionNamesTheServer) {
  HttpServerOptions options;
  Router router;
  std::uint16_t port;
  {
    HttpServer server(options, router);
    ASSERT_TRUE(server.Start().ok());
    port = server.port();
  }
  HttpClient client({"127.0.0.1", port});
  auto r = client.Send("GET", "/", {}, "application/json", std::chrono::milliseconds(500));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot reach the Tessera server at 127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(EndpointTest, Parses) {
  auto e = ParseEndpoint("http://127.0.0.1:7070/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 7070);
  EXPECT_FALSE(ParseEndpoint("localhost").ok());
  EXPECT_FALSE(ParseEndpoint("h:99999").ok());
}

}  // namespace
}  // namespace tessera::net
