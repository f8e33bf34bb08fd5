// A non-blocking HTTP/1.1 client connection on a caller's io_context, for
// programs that hold thousands of connections on one thread: the
// control-plane benchmark's virtual agents and submitters, and the flood. Requests on one
// connection go out one at a time, in order; the connection is opened on
// first use and reopened after the server closes it.
//
// Single-threaded use only: every call and callback on the io_context's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/http_client.h"

namespace boost::asio {
class io_context;
}

namespace tessera::net {

class AsyncHttpConnection {
 public:
  // status 0 means no answer (connect, write or read failed); body says why.
  using Callback = std::function<void(int status, std::string body)>;
  // `tls` is needed for an https endpoint.
  AsyncHttpConnection(boost::asio::io_context& io, Endpoint endpoint, TlsContext tls = nullptr);
  ~AsyncHttpConnection();
  AsyncHttpConnection(const AsyncHttpConnection&) = delete;
  AsyncHttpConnection& operator=(const AsyncHttpConnection&) = delete;

  void Send(std::string method, std::string target, std::string body, Callback done);
  // Sent with every request from now on (Authorization).
  void SetHeader(std::string name, std::string value);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tessera::net
