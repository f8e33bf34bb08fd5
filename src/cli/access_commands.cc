// The access commands: `tessera tokens` (list, create, revoke),
// `tessera audit` (the audit log of mutating calls) and `tessera certs`
// (certificates from the cluster's CA). docs/security.md.
#include <filesystem>
#include <iostream>
#include <memory>

#include "auth/certificates.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/table.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

std::string Time(std::int64_t ms) { return ms == 0 ? "-" : AgeOf(ms) + " ago"; }

void PrintTokens(const json& answer) {
  Table table({"ID", "USER", "ROLE", "CREATED", "EXPIRES", "STATE", "DESCRIPTION"});
  for (const json& t : answer["tokens"]) {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::int64_t expires = t["expiresTime"].get<std::int64_t>();
    const std::string state = t["revokedTime"].get<std::int64_t>() != 0 ? "revoked" : expires != 0 && expires <= now ? "expired" : "valid";
    table.Add({t["id"], t["user"], t["role"], Time(t["createdTime"].get<std::int64_t>()),
               expires == 0 ? "never" : expires > now ? "in " + FormatAge(expires - now) : Time(expires), state, t["description"]});
  }
  table.Print();
}

struct TokenArgs {
  ClientOptions client;
  std::string user, role = "user", description, expires, id;
};

struct CertArgs {
  std::string ca_dir = "tessera-data/tls";
  std::string name;
  std::vector<std::string> hosts;
  std::string out;
  int days = 825;
};

// Issues a certificate from the CA in --ca-dir (made there first if absent),
// offline: the CA key never leaves the machine that holds it.
void IssueCertificate(const CertArgs& args) {
  if (const Status made = auth::EnsureCertificateAuthority(args.ca_dir, "Tessera cluster CA"); !made.ok()) Fail(kExitFailure, made.message());
  const std::string prefix = args.out.empty() ? args.name : args.out;
  const Status issued = auth::IssueCertificate(args.ca_dir, {args.name, args.hosts, args.days}, prefix + ".crt", prefix + ".key");
  if (!issued.ok()) Fail(kExitFailure, issued.message());
  std::cout << "wrote " << prefix << ".crt and " << prefix << ".key (readable by you only) for " << args.name << ", signed by "
            << auth::CaFilesIn(args.ca_dir).cert << "\n";
}

}  // namespace

void AddAccessCommands(CLI::App& app) {
  {
    CLI::App* tokens = AddListCommand(app, "tokens", "List API tokens; create or revoke one", "/v1/tokens", PrintTokens);
    auto create = std::make_shared<TokenArgs>();
    CLI::App* create_cmd = tokens->add_subcommand("create", "Create a token; its text is printed once");
    AddClientFlags(create_cmd, &create->client);
    create_cmd->add_option("--user", create->user, "Whom it speaks for (default: yourself)");
    create_cmd->add_option("--role", create->role, "cluster-admin, user, viewer or node-join")->capture_default_str();
    create_cmd->add_option("--description", create->description, "What it is for");
    create_cmd->add_option("--expires", create->expires, "A lifetime such as 30d or 12h (default: none)");
    create_cmd->callback([create] {
      ApiClient api(create->client);
      json body = {{"role", create->role}};
      if (!create->user.empty()) body["user"] = create->user;
      if (!create->description.empty()) body["description"] = create->description;
      if (!create->expires.empty()) body["expiresIn"] = create->expires;
      const json t = api.Call("POST", "/v1/tokens", body.dump());
      if (create->client.output == "json") return PrintJson(t);
      std::cerr << "token " << t["id"].get<std::string>() << " for " << t["user"].get<std::string>() << " ("
                << t["role"].get<std::string>() << "); keep it secret, it is not shown again:\n";
      std::cout << t["token"].get<std::string>() << "\n";
    });
    auto revoke = std::make_shared<TokenArgs>();
    CLI::App* revoke_cmd = tokens->add_subcommand("revoke", "Revoke a token: it answers 401 from now on");
    AddClientFlags(revoke_cmd, &revoke->client);
    revoke_cmd->add_option("id", revoke->id, "The token's id (tessera tokens)")->required();
    revoke_cmd->callback([revoke] {
      ApiClient api(revoke->client);
      api.Call("DELETE", "/v1/tokens/" + revoke->id);
      std::cout << "token " << revoke->id << " revoked\n";
    });
  }
  {
    CLI::App* certs = app.add_subcommand("certs", "Certificates from the cluster's own CA (mutual TLS; docs/security.md)");
    certs->require_subcommand(1);
    auto args = std::make_shared<CertArgs>();
    CLI::App* issue = certs->add_subcommand("issue", "Issue a certificate: a node's (--name NODE) or a server's (--host ...)");
    issue->add_option("--ca-dir", args->ca_dir, "Where ca.crt and ca.key are (a server's DATA_DIR/tls); a CA is made there if none")
        ->capture_default_str();
    issue->add_option("--name", args->name, "The common name: a node's name, for its agent")->required();
    issue->add_option("--host", args->hosts, "A DNS name or IP address the holder serves at (repeat; makes a server certificate)");
    issue->add_option("--out", args->out, "Write OUT.crt and OUT.key (default: NAME)");
    issue->add_option("--days", args->days, "Validity")->capture_default_str()->check(CLI::Range(1, 3650));
    issue->callback([args] { IssueCertificate(*args); });
  }
  {
    auto args = std::make_shared<ClientOptions>();
    auto user = std::make_shared<std::string>();
    auto limit = std::make_shared<int>(50);
    CLI::App* cmd = app.add_subcommand("audit", "The audit log: every mutating call, who made it and its answer (cluster-admin)");
    AddClientFlags(cmd, args.get());
    cmd->add_option("--user", *user, "Only this user's calls");
    cmd->add_option("--limit", *limit, "The latest this many")->capture_default_str();
    cmd->callback([args, user, limit] {
      ApiClient api(*args);
      json answer = api.Call("GET", "/v1/audit?limit=1000000" + (user->empty() ? std::string() : "&user=" + net::PercentEncode(*user)));
      json& records = answer["records"];
      if (records.size() > static_cast<std::size_t>(*limit)) records.erase(records.begin(), records.end() - *limit);
      if (args->output == "json") return PrintJson(answer);
      Table table({"TIME", "USER", "ROLE", "CALL", "STATUS", "FROM"});
      for (const json& r : records) {
        table.Add({Time(r["time"].get<std::int64_t>()), r["user"], r["role"], r["method"].get<std::string>() + " " + r["target"].get<std::string>(),
                   std::to_string(r["status"].get<int>()), r["remote"]});
      }
      table.Print();
    });
  }
}

}  // namespace tessera::cli
