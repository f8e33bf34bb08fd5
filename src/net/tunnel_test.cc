#include "net/tunnel.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "net/client_tunnel.h"
#include "net/http_server.h"

namespace tessera::net {
namespace {

// A server that pairs the first two clients to ask for an upgrade, as the
// session broker pairs a user with an agent.
class TunnelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("POST", "/meet", [this](const ExchangePtr& ex) {
      std::lock_guard lock(mu_);
      waiting_.push_back(ex);
      if (waiting_.size() < 2) return;
      for (const ExchangePtr& side : waiting_) {
        HttpResponse switched;
        switched.status = 101;
        switched.headers.emplace_back("Upgrade", kSessionProtocol);
        switched.upgrade = [this](std::shared_ptr<Tunnel> tunnel) {
          std::lock_guard inner(mu_);
          if (!first_) {
            first_ = std::move(tunnel);
            return;
          }
          Splice(std::exchange(first_, nullptr), std::move(tunnel));
        };
        side->Reply(std::move(switched));
      }
      waiting_.clear();
    });
    router_.Add("POST", "/refuse", [](const ExchangePtr& ex) { ex->Reply(ErrorResponse(403, "not yours")); });
    server_ = std::make_unique<HttpServer>(HttpServerOptions{}, router_);
    ASSERT_TRUE(server_->Start().ok());
    endpoint_ = {"127.0.0.1", server_->port(), false};
  }

  std::unique_ptr<ClientTunnel> Open(const std::string& target, HttpResponse* refusal) {
    Result<std::unique_ptr<ClientTunnel>> tunnel = ClientTunnel::Open(endpoint_, nullptr, "POST", target, "{}", {}, std::chrono::seconds(5), refusal);
    return tunnel.ok() ? std::move(*tunnel) : nullptr;
  }

  std::string ReadExactly(ClientTunnel& tunnel, std::size_t size) {
    std::string got;
    char buffer[4096];
    while (got.size() < size) {
      const std::size_t n = tunnel.ReadSome(buffer, std::min(sizeof buffer, size - got.size()));
      if (n == 0) break;
      got.append(buffer, n);
    }
    return got;
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  Endpoint endpoint_;
  std::mutex mu_;
  std::vector<ExchangePtr> waiting_;
  std::shared_ptr<Tunnel> first_;
};

TEST_F(TunnelTest, TwoUpgradedConnectionsCarryBytesBothWaysUntilOneEnds) {
  HttpResponse refusal;
  std::unique_ptr<ClientTunnel> a;
  std::thread opener([&] { a = Open("/meet", &refusal); });
  std::unique_ptr<ClientTunnel> b = Open("/meet", &refusal);
  opener.join();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Write("ping"));
  EXPECT_EQ(ReadExactly(*b, 4), "ping");
  // More than one pump buffer, while the other way is in use too.
  const std::string large(200 << 10, 'x');
  std::thread writer([&] { EXPECT_TRUE(b->Write(large)); });
  ASSERT_TRUE(a->Write("pong"));
  EXPECT_EQ(ReadExactly(*a, large.size()), large);
  writer.join();
  EXPECT_EQ(ReadExactly(*b, 4), "pong");
  a->Close();
  char byte;
  EXPECT_EQ(b->ReadSome(&byte, 1), 0u) << "one side's end ends the other";
}

TEST_F(TunnelTest, ARefusalComesBackWithItsStatusAndBody) {
  HttpResponse refusal;
  EXPECT_EQ(Open("/refuse", &refusal), nullptr);
  EXPECT_EQ(refusal.status, 403);
  EXPECT_NE(refusal.body.find("not yours"), std::string::npos) << refusal.body;
}

}  // namespace
}  // namespace tessera::net
