// tessera bench flood: a submission flood against a running server, the
// load an overload must not topple (docs/security.md, "Connection limits").
// Every connection submits a one-GPU job as soon as its last one is
// answered, with the tokens given in turn, for a set time; then it reports
// what was offered and how the server answered, and writes the ids of the
// jobs it accepted, so that a test can check that none was lost.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::bench {

struct FloodOptions {
  std::string server;                    // https://host:port or http://
  std::string ca_file;                   // for https: whom to trust (default: the system's CAs)
  std::vector<std::string> token_files;  // one token each; none: no Authorization
  int connections = 64;                  // in all, sharing the tokens
  double seconds = 10;
  std::string accepted_file;  // where the accepted jobs' ids go, one a line ("": nowhere)
};

struct FloodResult {
  double seconds = 0;
  std::int64_t sent = 0;
  std::map<int, std::int64_t> answers;  // status -> count; 0: no answer (connection failed)
  double answered_per_s = 0;
  double accepted_p99_ms = 0;  // latency of the submissions that were accepted
  std::string error;
};

FloodResult RunFlood(const FloodOptions& options);
std::string ToJson(const FloodResult& result);

}  // namespace tessera::bench
