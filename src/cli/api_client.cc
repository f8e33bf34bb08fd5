#include "cli/api_client.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"

namespace tessera::cli {

void AddClientFlags(CLI::App* cmd, ClientOptions* options) {
  const char* env = std::getenv("TESSERA_SERVER");
  options->server = env != nullptr && *env != '\0' ? env : "http://127.0.0.1:7070";
  cmd->add_option("--server", options->server, "The Tessera server, or every replica of it, comma-separated (env TESSERA_SERVER)")
      ->capture_default_str();
  const char* token_file = std::getenv("TESSERA_TOKEN_FILE");
  options->token_file = token_file != nullptr ? token_file : "";
  cmd->add_option("--token-file", options->token_file,
                  "A file whose first line is the API token (env TESSERA_TOKEN_FILE; $TESSERA_TOKEN wins; default ~/.config/tessera/token)");
  const auto from_env = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::string(value) : std::string();
  };
  options->tls = {from_env("TESSERA_CA_FILE"), from_env("TESSERA_CERT_FILE"), from_env("TESSERA_KEY_FILE")};
  cmd->add_option("--ca-file", options->tls.ca_file,
                  "For an https server: the CA that signed its certificate (env TESSERA_CA_FILE; default: the system's CAs)");
  cmd->add_option("--cert-file", options->tls.cert_file, "A client certificate, for a server that requires one (env TESSERA_CERT_FILE)");
  cmd->add_option("--key-file", options->tls.key_file, "The private key of --cert-file (env TESSERA_KEY_FILE)");
  cmd->add_option("-o,--output", options->output, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
}

std::string ReadToken(const ClientOptions& options) {
  if (const char* token = std::getenv("TESSERA_TOKEN"); token != nullptr && *token != '\0') return token;
  std::string file = options.token_file;
  if (file.empty()) {
    const char* home = std::getenv("HOME");
    if (home == nullptr) return {};
    file = std::string(home) + "/.config/tessera/token";
    if (!std::filesystem::exists(file)) return {};
  }
  std::ifstream in(file);
  std::string token;
  if (!in || !std::getline(in, token)) Fail(kExitBadInput, "--token-file: cannot read a token from " + file);
  return token;
}

CLI::App* AddListCommand(CLI::App& app, const std::string& name, const std::string& description, const std::string& target,
                         void (*print)(const nlohmann::json& answer)) {
  auto options = std::make_shared<ClientOptions>();
  CLI::App* cmd = app.add_subcommand(name, description);
  AddClientFlags(cmd, options.get());
  cmd->callback([options, cmd, target, print] {
    if (!cmd->get_subcommands().empty()) return;
    ApiClient api(*options);
    const nlohmann::json answer = api.Call("GET", target);
    if (options->output == "json") return PrintJson(answer);
    print(answer);
  });
  return cmd;
}

int ExitCodeOf(int http_status) {
  if (http_status == 404) return kExitNotFound;
  if (http_status == 401 || http_status == 403 || http_status == 429) return kExitDenied;
  if (http_status >= 400 && http_status < 500) return kExitBadInput;
  return kExitFailure;
}

void Fail(int exit_code, const std::string& message) {
  std::fprintf(stderr, "tessera: %s\n", message.c_str());
  throw CLI::RuntimeError(exit_code);
}

std::string ReadInputOrFail(const std::string& path, const std::string& what) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path);
  if (!in) Fail(kExitBadInput, "cannot read " + (what.empty() ? "" : what + " ") + "'" + path + "'");
  text << in.rdbuf();
  return text.str();
}

ApiClient::ApiClient(const ClientOptions& options) {
  Result<std::vector<net::Endpoint>> endpoints = net::ParseEndpoints(options.server);
  if (!endpoints.ok()) Fail(kExitBadInput, "--server: " + endpoints.status().message());
  net::TlsContext tls;
  if (!options.tls.ca_file.empty() || !options.tls.cert_file.empty()) {
    Result<net::TlsContext> made = net::MakeClientTls(options.tls);
    if (!made.ok()) Fail(kExitBadInput, made.status().message());
    tls = *made;
  }
  tls_ = tls;
  client_ = std::make_unique<net::HttpClient>(std::move(*endpoints), std::move(tls));
  const char* user = std::getenv("USER");
  const passwd* account = getpwuid(getuid());
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (!ec) headers_.emplace_back("X-Tessera-Workdir", cwd);
  headers_.emplace_back("X-Tessera-User", user != nullptr && *user != '\0' ? user : account != nullptr ? account->pw_name : "anonymous");
  if (std::string token = ReadToken(options); !token.empty()) headers_.emplace_back("Authorization", "Bearer " + token);
  for (const auto& [name, value] : headers_) client_->SetHeader(name, value);
}

Result<std::unique_ptr<net::ClientTunnel>> ApiClient::OpenTunnel(const std::string& target, const std::string& body, int* http_status) {
  net::HttpResponse refusal;
  Result<std::unique_ptr<net::ClientTunnel>> tunnel =
      net::ClientTunnel::Open(client_->endpoint(), tls_, "POST", target, body, headers_, std::chrono::seconds(30), &refusal);
  *http_status = refusal.status == 200 ? 0 : refusal.status;
  if (tunnel.ok() || refusal.status == 200) return tunnel;
  const nlohmann::json parsed = nlohmann::json::parse(refusal.body, nullptr, false);
  return Status(tunnel.status().code(),
                !parsed.is_discarded() && parsed.contains("error") ? parsed["error"].get<std::string>() : tunnel.status().message());
}

namespace {

[[noreturn]] void FailUnreachable(const Status& status) {
  const std::string& message = status.message();
  Fail(kExitUnreachable, message + (message.find("TLS handshake") != std::string::npos
                                        ? " (does --ca-file or $TESSERA_CA_FILE name the CA that signed the server's certificate?)"
                                        : " (is `tessera server` or `tessera up` running?)"));
}

}  // namespace

net::HttpResponse ApiClient::Raw(const std::string& method, const std::string& target) {
  Result<net::HttpResponse> r = client_->Send(method, target);
  if (!r.ok()) FailUnreachable(r.status());
  return *r;
}

nlohmann::json ApiClient::Call(const std::string& method, const std::string& target, const std::string& body,
                               const std::string& content_type, const std::string& source) {
  Result<net::HttpResponse> r = client_->Send(method, target, body, content_type);
  if (!r.ok()) FailUnreachable(r.status());
  nlohmann::json parsed = nlohmann::json::parse(r->body, nullptr, false);
  if (r->status >= 200 && r->status < 300) return parsed.is_discarded() ? nlohmann::json::object() : parsed;
  std::string message = !parsed.is_discarded() && parsed.contains("error") ? parsed["error"].get<std::string>() : r->body;
  if (message.starts_with("body:")) {
    // "body:3:7: reason": name the file, or drop a position the user never saw.
    std::size_t reason = message.find(": ");
    message = source.empty() || reason == std::string::npos ? message.substr(reason == std::string::npos ? 0 : reason + 2)
                                                            : source + message.substr(4);
  }
  Fail(ExitCodeOf(r->status), message);
}

std::string FormatAge(std::int64_t ms) {
  if (ms <= 0) return "-";
  const std::int64_t s = ms / 1000;
  char buffer[32];
  if (s < 60) {
    std::snprintf(buffer, sizeof buffer, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s % 3600 / 60));
  } else {
    std::snprintf(buffer, sizeof buffer, "%lldd%02lldh", static_cast<long long>(s / 86400), static_cast<long long>(s % 86400 / 3600));
  }
  return buffer;
}

std::string AgeOf(std::int64_t unix_ms) {
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return FormatAge(now - unix_ms);
}

std::string FormatGpus(double gpus) {
  char buffer[32];
  if (gpus == static_cast<double>(static_cast<std::int64_t>(gpus))) {
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(gpus));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g", gpus);
  }
  return buffer;
}

void PrintJson(const nlohmann::json& value) { std::cout << value.dump(2) << std::endl; }

}  // namespace tessera::cli
