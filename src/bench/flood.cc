#include "bench/flood.h"

#include <chrono>
#include <fstream>
#include <memory>

#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "bench/server_process.h"
#include "net/async_http_client.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

const std::string kJob = R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "flood"},
  "spec": {"tasks": [{"name": "w", "resources": {"gpus": 1}, "command": ["true"]}]}})";

struct Tally {
  Clock::time_point end;
  std::int64_t sent = 0;
  std::map<int, std::int64_t> answers;
  std::vector<double> accepted_ms;
  std::vector<std::int64_t> accepted_ids;
};

// One connection's loop: submit, and again once answered, until the end.
class Flooder : public std::enable_shared_from_this<Flooder> {
 public:
  Flooder(boost::asio::io_context& io, const net::Endpoint& server, net::TlsContext tls, const std::string& token, Tally& tally)
      : connection_(io, server, std::move(tls)), tally_(tally) {
    if (!token.empty()) connection_.SetHeader("Authorization", "Bearer " + token);
  }
  void Next() {
    if (Clock::now() >= tally_.end) return;
    ++tally_.sent;
    const Clock::time_point sent = Clock::now();
    connection_.Send("POST", "/v1/jobs", kJob, [self = shared_from_this(), sent](int status, std::string body) {
      ++self->tally_.answers[status];
      if (status == 201) {
        self->tally_.accepted_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
        const json answer = json::parse(body, nullptr, false);
        if (answer.is_object() && answer.contains("jobs")) {
          for (const json& job : answer["jobs"]) self->tally_.accepted_ids.push_back(job.value("id", std::int64_t{-1}));
        }
      }
      self->Next();
    });
  }

 private:
  net::AsyncHttpConnection connection_;
  Tally& tally_;
};

}  // namespace

namespace {

FloodResult Failed(std::string why) {
  FloodResult result;
  result.error = std::move(why);
  return result;
}

}  // namespace

FloodResult RunFlood(const FloodOptions& options) {
  FloodResult result;
  const Result<net::Endpoint> endpoint = net::ParseEndpoint(options.server);
  if (!endpoint.ok()) return Failed(endpoint.status().message());
  net::TlsContext tls;
  if (endpoint->tls) {
    net::TlsFiles trust;
    trust.ca_file = options.ca_file;
    Result<net::TlsContext> made = net::MakeClientTls(trust);
    if (!made.ok()) return Failed(made.status().message());
    tls = *made;
  }
  std::vector<std::string> tokens;
  for (const std::string& file : options.token_files) {
    std::ifstream in(file);
    std::string token;
    if (!std::getline(in, token) || token.empty()) return Failed("no token in " + file);
    tokens.push_back(token);
  }
  if (tokens.empty()) tokens.emplace_back();
  boost::asio::io_context io(1);
  Tally tally;
  const Clock::time_point start = Clock::now();
  tally.end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.seconds));
  for (int i = 0; i < options.connections; ++i) {
    std::make_shared<Flooder>(io, *endpoint, tls, tokens[static_cast<std::size_t>(i) % tokens.size()], tally)->Next();
  }
  io.run();  // until every connection's last answer is in
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.sent = tally.sent;
  result.answers = tally.answers;
  result.answered_per_s = static_cast<double>(tally.sent) / result.seconds;
  result.accepted_p99_ms = Percentile(tally.accepted_ms, 0.99);
  if (!options.accepted_file.empty()) {
    std::ofstream out(options.accepted_file);
    for (const std::int64_t id : tally.accepted_ids) out << id << '\n';
    if (!out) result.error = "cannot write " + options.accepted_file;
  }
  return result;
}

std::string ToJson(const FloodResult& result) {
  json answers = json::object();
  for (const auto& [status, count] : result.answers) answers[std::to_string(status)] = count;
  return json{{"seconds", result.seconds},
              {"sent", result.sent},
              {"answered_per_s", result.answered_per_s},
              {"answers", answers},
              {"accepted_p99_ms", result.accepted_p99_ms},
              {"error", result.error}}
      .dump();
}

}  // namespace tessera::bench
