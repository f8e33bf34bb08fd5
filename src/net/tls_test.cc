// TLS and mutual TLS between the real server and clients, with certificates
// from the cluster CA (auth/certificates.h) written to a scratch directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "auth/certificates.h"
#include "net/async_http_client.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/tls.h"

namespace tessera::net {
namespace {

namespace fs = std::filesystem;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() / ("tessera-tls-test-" + std::to_string(::getpid()))).string());
    ASSERT_TRUE(auth::EnsureServerCertificates(Path("ca"), {"localhost", "127.0.0.1"}).ok());
    ASSERT_TRUE(auth::IssueCertificate(Path("ca"), {"n1", {}}, Path("n1.crt"), Path("n1.key")).ok());
    // Another CA's certificate for the same node name: a forgery to this server.
    ASSERT_TRUE(auth::EnsureCertificateAuthority(Path("other-ca"), "another CA").ok());
    ASSERT_TRUE(auth::IssueCertificate(Path("other-ca"), {"n1", {}}, Path("forged.crt"), Path("forged.key")).ok());
    // A server certificate that names another address only.
    ASSERT_TRUE(auth::IssueCertificate(Path("ca"), {"elsewhere", {"10.9.9.9"}}, Path("elsewhere.crt"), Path("elsewhere.key")).ok());
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Path(const std::string& name) { return (fs::path(*dir_) / name).string(); }

  void Start(TlsFiles files, bool require_client_cert) {
    router_.Add("GET", "/who", [](const ExchangePtr& ex) {
      HttpResponse r;
      r.body = "client=" + ex->request().client_certificate;
      ex->Reply(r);
    });
    HttpServerOptions options;
    Result<TlsContext> tls = MakeServerTls(files, require_client_cert);
    ASSERT_TRUE(tls.ok()) << tls.status().message();
    options.tls = *tls;
    server_ = std::make_unique<HttpServer>(options, router_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void StartMutual(bool require_client_cert = false) {
    Start({Path("ca/ca.crt"), Path("ca/server.crt"), Path("ca/server.key")}, require_client_cert);
  }
  Endpoint Https() const { return {"127.0.0.1", server_->port(), true}; }
  static TlsContext Client(const std::string& cert = {}, const std::string& key = {}) {
    Result<TlsContext> tls = MakeClientTls({Path("ca/ca.crt"), cert, key});
    EXPECT_TRUE(tls.ok()) << tls.status().message();
    return tls.ok() ? *tls : nullptr;
  }

  static std::string* dir_;
  Router router_;
  std::unique_ptr<HttpServer> server_;
};
std::string* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, AClientTrustingTheCaIsServedAndNamesNoCertificate) {
  StartMutual();
  HttpClient client(Https(), Client());
  for (int i = 0; i < 2; ++i) {  // the second call reuses the connection
    Result<HttpResponse> r = client.Send("GET", "/who");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->body, "client=");
  }
}

TEST_F(TlsTest, AClientCertificateFromTheCaNamesItsHolder) {
  StartMutual();
  HttpClient client(Https(), Client(Path("n1.crt"), Path("n1.key")));
  Result<HttpResponse> r = client.Send("GET", "/who");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->body, "client=n1");
}

TEST_F(TlsTest, AForgedClientCertificateIsRefusedAtTheHandshake) {
  StartMutual();
  Result<TlsContext> forged = MakeClientTls({Path("ca/ca.crt"), Path("forged.crt"), Path("forged.key")});
  ASSERT_TRUE(forged.ok());
  HttpClient client(Https(), *forged);
  Result<HttpResponse> r = client.Send("GET", "/who", {}, "application/json", std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("TLS handshake failed"), std::string::npos) << r.status().message();
}

TEST_F(TlsTest, RequiredClientCertificatesRefuseAClientWithout) {
  StartMutual(/*require_client_cert=*/true);
  HttpClient without(Https(), Client());
  Result<HttpResponse> r = without.Send("GET", "/who", {}, "application/json", std::chrono::seconds(5));
  EXPECT_FALSE(r.ok());
  HttpClient with(Https(), Client(Path("n1.crt"), Path("n1.key")));
  r = with.Send("GET", "/who");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->body, "client=n1");
}

TEST_F(TlsTest, AServerNotVouchedForIsRefused) {
  StartMutual();
  // The system's CAs did not sign the cluster CA.
  HttpClient untrusting(Https());
  Result<HttpResponse> r = untrusting.Send("GET", "/who");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("certificate verify failed"), std::string::npos) << r.status().message();
}

TEST_F(TlsTest, ACertificateForAnotherAddressIsRefused) {
  Start({"", Path("elsewhere.crt"), Path("elsewhere.key")}, false);
  HttpClient client(Https(), Client());
  Result<HttpResponse> r = client.Send("GET", "/who");
  ASSERT_FALSE(r.ok()) << "a certificate for 10.9.9.9 served at 127.0.0.1";
  EXPECT_NE(r.status().message().find("TLS handshake failed"), std::string::npos) << r.status().message();
}

TEST_F(TlsTest, PlainHttpToATlsPortIsToldToUseHttps) {
  StartMutual();
  HttpClient plain(Endpoint{"127.0.0.1", server_->port(), false});
  Result<HttpResponse> r = plain.Send("GET", "/who");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("speaks TLS: use https://"), std::string::npos) << r->body;
}

TEST_F(TlsTest, TheAsynchronousClientSpeaksTlsToo) {
  StartMutual();
  boost::asio::io_context io;
  AsyncHttpConnection connection(io, Https(), Client(Path("n1.crt"), Path("n1.key")));
  std::vector<std::string> answers;
  for (int i = 0; i < 2; ++i) connection.Send("GET", "/who", {}, [&](int status, std::string body) { answers.push_back(std::to_string(status) + " " + body); });
  io.run_for(std::chrono::seconds(10));
  EXPECT_EQ(answers, (std::vector<std::string>{"200 client=n1", "200 client=n1"}));
}

TEST(TlsFilesTest, ErrorsNameTheFile) {
  Result<TlsContext> missing = MakeServerTls({"", "/nonexistent/server.crt", "/nonexistent/server.key"}, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/server.crt"), std::string::npos) << missing.status().message();
  EXPECT_FALSE(MakeServerTls({"", "", ""}, false).ok());
  EXPECT_FALSE(MakeClientTls({"/nonexistent/ca.crt", "", ""}).ok());
}

TEST(TlsFilesTest, AKeyOfAnotherCertificateIsRefused) {
  const std::string dir = (fs::temp_directory_path() / ("tessera-tls-keys-" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(auth::EnsureServerCertificates(dir, {"127.0.0.1"}).ok());
  ASSERT_TRUE(auth::IssueCertificate(dir, {"x", {}}, dir + "/x.crt", dir + "/x.key").ok());
  Result<TlsContext> mismatched = MakeServerTls({"", dir + "/server.crt", dir + "/x.key"}, false);
  fs::remove_all(dir);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("x.key: key values mismatch"), std::string::npos) << mismatched.status().message();
}

TEST(TlsFilesTest, KeysAreReadableByTheirOwnerOnly) {
  const std::string dir = (fs::temp_directory_path() / ("tessera-tls-modes-" + std::to_string(::getpid()))).string();
  ASSERT_TRUE(auth::EnsureServerCertificates(dir, {"127.0.0.1"}).ok());
  const auto mode = [](const std::string& p) { return fs::status(p).permissions() & fs::perms::all; };
  EXPECT_EQ(mode(dir + "/ca.key"), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(mode(dir + "/server.key"), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(mode(dir + "/ca.crt") & fs::perms::others_read, fs::perms::others_read);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::net
