// A connection the HTTP server handed over after answering 101 Switching
// Protocols: from then on it carries raw bytes both ways and no more HTTP.
// The server pairs two of them -- a user's `tessera exec` and the connection
// the agent of the task's node opened for it -- with Splice, so that an
// interactive session travels inside the API's own (TLS) connections and
// the agent needs no listening port (server/session_broker.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace tessera::net {

class Tunnel {
 public:
  // ok is false at the end of the stream or on an error.
  using Done = std::function<void(bool ok, std::size_t bytes)>;
  virtual ~Tunnel() = default;
  // Reads at most `size` bytes into `data`; bytes the client sent right
  // after its request come first.
  virtual void ReadSome(char* data, std::size_t size, Done done) = 0;
  // Writes all `size` bytes of `data`, which stay valid until `done`.
  virtual void Write(const char* data, std::size_t size, Done done) = 0;
  // Any thread: ends the connection; pending reads and writes fail.
  virtual void Close() = 0;
};

// Copies bytes both ways between `a` and `b` until either side ends or
// fails; then closes both. Each direction waits for its write before it
// reads again, so a slow reader slows its writer instead of filling memory.
void Splice(std::shared_ptr<Tunnel> a, std::shared_ptr<Tunnel> b);

}  // namespace tessera::net
