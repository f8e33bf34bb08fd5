// The server under clients that hold it: deadlines, the connection reserve,
// load shedding, and the client's side of it (Retry-After, early answers).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include <boost/asio.hpp>

#include "net/http_client.h"
#include "net/http_server.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A raw connection, to send exactly what a test says and see when the server
// closes it. Blocking calls only: all of them share one I/O context.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port) : socket_(Io()) { socket_.connect({asio::ip::make_address("127.0.0.1"), port}); }
  void Send(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // What the server sends until it closes the connection, or "" past `within`.
  std::string ReadUntilClosed(std::chrono::milliseconds within, bool* closed) {
    std::string got;
    *closed = false;
    const auto deadline = std::chrono::steady_clock::now() + within;
    socket_.non_blocking(true);
    while (std::chrono::steady_clock::now() < deadline) {
      char buffer[4096];
      boost::system::error_code ec;
      const std::size_t n = socket_.read_some(asio::buffer(buffer), ec);
      if (ec == asio::error::would_block) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      if (ec) {
        *closed = true;
        break;
      }
      got.append(buffer, n);
    }
    return got;
  }

 private:
  static asio::io_context& Io() {
    static asio::io_context io;
    return io;
  }
  tcp::socket socket_;
};

class HttpLimitsTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options) {
    router_.Add("GET", "/v1/ping", [](const ExchangePtr& ex) { ex->Reply(HttpResponse{200, "text/plain", "pong", {}, {}}); });
    router_.Add("POST", "/v1/items", [](const ExchangePtr& ex) { ex->Reply(HttpResponse{201, "text/plain", "ok", {}, {}}); });
    // Holds its request until the test lets go.
    router_.Add("GET", "/v1/hold", [this](const ExchangePtr& ex) {
      std::lock_guard lock(mu_);
      held_.push_back(ex);
    });
    // A caller who says so is an administrator (the server asks its tokens).
    options.identify = [](const HttpRequest& r) { return r.Header("x-role") == "admin" ? PeerClass::kAdmin : PeerClass::kClient; };
    server_ = std::make_unique<HttpServer>(std::move(options), router_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    std::lock_guard lock(mu_);
    for (const ExchangePtr& ex : held_) ex->Reply(HttpResponse{});
    held_.clear();
  }
  std::size_t Held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  // A server that takes one unprivileged request at a time, and a thread
  // whose request holds it (until TearDown answers it).
  std::thread HoldTheOnlySlot() {
    HttpServerOptions options;
    options.load.max_in_flight = 1;
    Start(options);
    std::thread holder([this] { EXPECT_TRUE(Client(false)->Send("GET", "/v1/hold").ok()); });
    for (int i = 0; i < 250 && Held() == 0; ++i) std::this_thread::sleep_for(20ms);
    EXPECT_EQ(Held(), 1u) << "the first request is being served";
    return holder;
  }
  std::unique_ptr<HttpClient> Client(bool admin) {
    auto client = std::make_unique<HttpClient>(Endpoint{"127.0.0.1", server_->port()});
    if (admin) client->SetHeader("X-Role", "admin");
    return client;
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::vector<ExchangePtr> held_;
};

TEST_F(HttpLimitsTest, HeadersThatNeverEndAreCutOffAtTheirDeadline) {
  HttpServerOptions options;
  options.timeouts.headers = 1s;
  Start(options);
  RawConnection slow(server_->port());
  slow.Send("GET /v1/ping HTTP/1.1\r\nHost: x\r\n");
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  // A byte now and then does not buy time: the deadline runs from the start.
  for (int i = 0; i < 3 && !closed; ++i) {
    slow.ReadUntilClosed(400ms, &closed);
    if (!closed) slow.Send("X");
  }
  if (!closed) slow.ReadUntilClosed(3s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(server_->Stats().timeouts[static_cast<std::size_t>(TimeoutPhase::kHeaders)], 1u);
  EXPECT_EQ(server_->Stats().connections.open[static_cast<std::size_t>(PeerClass::kUnidentified)], 0u) << "the connection is let go";
}

TEST_F(HttpLimitsTest, AKeepAliveConnectionMayIdleLongerThanAHeaderMayTake) {
  HttpServerOptions options;
  options.timeouts.headers = 1s;
  options.timeouts.idle = 5s;
  Start(options);
  const std::unique_ptr<HttpClient> client = Client(false);
  ASSERT_EQ(client->Send("GET", "/v1/ping")->status, 200);
  std::this_thread::sleep_for(1500ms);
  ASSERT_EQ(client->Send("GET", "/v1/ping")->status, 200);
  EXPECT_EQ(server_->Stats().timeouts[static_cast<std::size_t>(TimeoutPhase::kHeaders)], 0u);
}

TEST_F(HttpLimitsTest, AConnectionThatNeverFinishedARequestMakesRoomForANewcomer) {
  HttpServerOptions options;
  options.connections = {.max_connections = 10, .reserved = 4, .max_per_address = 1, .probation_per_address = 2};
  Start(options);
  RawConnection slow(server_->port());  // the address's one unprivileged connection, never used
  std::this_thread::sleep_for(100ms);
  auto served = Client(false)->Send("GET", "/v1/ping");
  ASSERT_TRUE(served.ok()) << served.status().message();
  EXPECT_EQ(served->status, 200);
  bool closed = false;
  slow.ReadUntilClosed(2s, &closed);
  EXPECT_TRUE(closed) << "the slow connection was evicted";
  EXPECT_EQ(server_->Stats().connections.refused[static_cast<std::size_t>(Refusal::kEvicted)], 1u);
}

TEST_F(HttpLimitsTest, PastTheLimitsOnlyAPrivilegedCallerGetsIn) {
  HttpServerOptions options;
  options.connections = {.max_connections = 10, .reserved = 4, .max_per_address = 1, .probation_per_address = 2};
  Start(options);
  RawConnection idle(server_->port());  // the address's one unprivileged connection: a client, kept alive
  idle.Send("GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  ASSERT_NE(idle.ReadUntilClosed(300ms, &closed).find("pong"), std::string::npos);
  auto refused = Client(false)->Send("GET", "/v1/ping", {}, "application/json", 500ms);
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->body.find("as many connections from 127.0.0.1 as it allows (1)"), std::string::npos) << refused->body;
  auto admitted = Client(true)->Send("GET", "/v1/ping");
  ASSERT_TRUE(admitted.ok());
  EXPECT_EQ(admitted->status, 200);
  const HttpServerStats stats = server_->Stats();
  EXPECT_EQ(stats.connections.refused[static_cast<std::size_t>(Refusal::kNotPrivileged)], 1u);
  EXPECT_EQ(stats.connections.refused[static_cast<std::size_t>(Refusal::kEvicted)], 0u);
}

TEST_F(HttpLimitsTest, UnprivilegedRequestsPastTheLimitAreShedAtOnceAndAdministratorsAreNot) {
  std::thread holder = HoldTheOnlySlot();
  const std::unique_ptr<HttpClient> client = Client(false);
  auto shed = client->Send("POST", "/v1/items", "body", "text/plain", 500ms);  // too short a call to wait for a retry
  ASSERT_TRUE(shed.ok()) << shed.status().message();
  EXPECT_EQ(shed->status, 503);
  bool retry_after = false;
  for (const auto& [name, value] : shed->headers) retry_after |= name == "retry-after" && value == "1";
  EXPECT_TRUE(retry_after);
  EXPECT_EQ(Client(true)->Send("POST", "/v1/items", "body")->status, 201);
  EXPECT_EQ(server_->Stats().load.shed[static_cast<std::size_t>(Shed::kInFlight)], 1u);
  TearDown();
  holder.join();
  EXPECT_EQ(client->Send("POST", "/v1/items", "body")->status, 201) << "answered once the first one was";
}

TEST_F(HttpLimitsTest, TheClientComesBackAfterRetryAfter) {
  std::thread holder = HoldTheOnlySlot();
  std::thread release([this] {
    std::this_thread::sleep_for(500ms);
    TearDown();
  });
  const auto start = std::chrono::steady_clock::now();
  auto answered = Client(false)->Send("POST", "/v1/items", "body");
  ASSERT_TRUE(answered.ok()) << answered.status().message();
  EXPECT_EQ(answered->status, 201);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s) << "it waited as Retry-After said";
  release.join();
  holder.join();
}

// Out of descriptors, the server takes the waiting connection with the one
// it keeps spare and answers it, instead of leaving it in the backlog (and
// spinning on accept). The test's connection and the server share this
// process's descriptors: the connection's socket is made first, then every
// descriptor left is taken, then it connects.
TEST_F(HttpLimitsTest, OutOfDescriptorsTheServerStillAnswers) {
  Start(HttpServerOptions{});
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  int highest = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) highest = std::max(highest, std::stoi(entry.path().filename()));
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(highest) + 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  asio::io_context io;
  tcp::socket client(io);
  client.open(tcp::v4());
  // Without an answer the read ends after this long, and the test fails rather than hangs.
  const timeval patience{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) fillers.push_back(fd);
  boost::system::error_code ec;
  client.connect({asio::ip::make_address("127.0.0.1"), server_->port()}, ec);
  ASSERT_FALSE(ec) << ec.message();
  std::string answer;
  char buffer[1024];
  // recv itself: Asio would wait on past the socket's timeout.
  for (ssize_t n; (n = ::recv(client.native_handle(), buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<std::size_t>(n));
  for (const int fd : fillers) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_NE(answer.find("HTTP/1.1 503"), std::string::npos) << answer;
  EXPECT_NE(answer.find("as many connections as it allows"), std::string::npos) << answer;
  EXPECT_GE(server_->Stats().connections.refused[static_cast<std::size_t>(Refusal::kDescriptors)], 1u);
  auto after = Client(false)->Send("GET", "/v1/ping");
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->status, 200) << "served again once descriptors are free";
}

TEST_F(HttpLimitsTest, AnAnswerGivenBeforeTheBodyIsSentIsWhatTheCallerSees) {
  HttpServerOptions options;
  options.body_limit = 1024;
  Start(options);
  auto r = Client(false)->Send("POST", "/v1/items", std::string(64 << 20, 'x'));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("limit of 1024 bytes"), std::string::npos);
}

}  // namespace
}  // namespace tessera::net
