// What every client command shares: where the server is (--server, or
// $TESSERA_SERVER, default http://127.0.0.1:7070) and which CA vouches for
// it (--ca-file, $TESSERA_CA_FILE), who the caller is (the
// token in $TESSERA_TOKEN or the --token-file; $USER without access control),
// calls that turn an error answer into one clear line on stderr and the
// documented exit code, and the formatting of times and GPU counts.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cli/commands.h"
#include "net/client_tunnel.h"
#include "net/http_client.h"

namespace tessera::cli {

struct ClientOptions {
  std::string server;
  std::string token_file;
  net::TlsFiles tls;  // for an https server: whom to trust, and a client certificate if the server asks for one
  std::string output = "table";  // table | json
};

// Adds --server, the TLS and token files, and -o/--output to a command.
void AddClientFlags(CLI::App* cmd, ClientOptions* options);

class ApiClient {
 public:
  explicit ApiClient(const ClientOptions& options);
  // The answer's JSON body when its status is 2xx; otherwise prints
  // "tessera: <message>" and throws CLI::RuntimeError with the exit code.
  // `source` names the body in messages: the server calls it "body", the
  // user knows it as the file they gave; empty drops the position.
  nlohmann::json Call(const std::string& method, const std::string& target, const std::string& body = {},
                      const std::string& content_type = "application/json", const std::string& source = {});
  // The raw answer, errors included (logs, where headers matter).
  net::HttpResponse Raw(const std::string& method, const std::string& target);
  net::HttpClient& http() { return *client_; }
  // A session's tunnel (net/client_tunnel.h), with this client's credentials,
  // to the server its last call reached (the leader). An error answer comes
  // back as `*http_status` and the API's message; no answer, as status 0.
  Result<std::unique_ptr<net::ClientTunnel>> OpenTunnel(const std::string& target, const std::string& body, int* http_status);

 private:
  std::unique_ptr<net::HttpClient> client_;
  net::TlsContext tls_;
  std::vector<std::pair<std::string, std::string>> headers_;  // sent with every request
};

// A command that lists what GET `target` answers, with `print` for people
// and -o json for scripts; its subcommands (added by the caller) act on one item.
CLI::App* AddListCommand(CLI::App& app, const std::string& name, const std::string& description, const std::string& target,
                         void (*print)(const nlohmann::json& answer));

[[noreturn]] void Fail(int exit_code, const std::string& message);
// The value, or the error as Fail prints it, with `exit_code`.
template <typename T>
T OrFail(Result<T> result, int exit_code = kExitBadInput) {
  if (!result.ok()) Fail(exit_code, result.status().message());
  return std::move(result).value();
}
// A file's text, or standard input's for "-"; a file that cannot be read
// fails the command with exit code 2 ("cannot read <what> '<path>'").
std::string ReadInputOrFail(const std::string& path, const std::string& what = "");
// The documented exit code for an error answer's HTTP status.
int ExitCodeOf(int http_status);
// The API token: $TESSERA_TOKEN, else the first line of --token-file
// ($TESSERA_TOKEN_FILE, default ~/.config/tessera/token when it exists); "" for none.
std::string ReadToken(const ClientOptions& options);
// "3m12s", "2h05m" from milliseconds; "-" for zero.
std::string FormatAge(std::int64_t ms);
// The age of a Unix-milliseconds time stamp from the API, as FormatAge.
std::string AgeOf(std::int64_t unix_ms);
std::string FormatGpus(double gpus);
void PrintJson(const nlohmann::json& value);

}  // namespace tessera::cli
